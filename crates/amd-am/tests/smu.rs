//! The SMU against the mock SMU: the boot messages in tinygrad 0.10.1's order, the
//! metrics table through the driver table, clocks at the highest and lowest DPM
//! levels, and a silent SMU as an error naming the message.

use std::sync::Arc;
use std::time::Duration;

use amd_am::AmError;
use amd_am::gmc::Gmc;
use amd_am::ip::AmDevice;
use amd_am::pci::{PciBus, PciOptions};
use amd_am::regs::generated::{smu, smu_if};
use amd_am::smu::{CLOCKS, DpmLevel, Smu};
use amd_kfd::sys::Sys;
use amd_mockgpu::pci::smu::{DPM_LEVELS_MHZ, Smu as MockSmu};
use amd_mockgpu::{MockConfig, MockSys, PciFault};

fn device() -> (Arc<MockSys>, AmDevice) {
    let m = Arc::new(MockSys::new(MockConfig::pci(1)));
    let mut bus = PciBus::scan(m.clone() as Arc<dyn Sys>, &PciOptions::default()).unwrap();
    let dev = AmDevice::new(bus.open(0).unwrap()).unwrap();
    (m, dev)
}

fn mock<T>(m: &MockSys, f: impl FnOnce(&mut MockSmu) -> T) -> T {
    m.pci_registers(0).unwrap().with_block::<MockSmu, _>(f).unwrap()
}

#[test]
fn init_sends_the_driver_table_and_enables_features() {
    let (m, dev) = device();
    let mut gmc = Gmc::new(&dev).unwrap();
    let s = Smu::new(&dev, &mut gmc, true).unwrap();
    assert!(s.is_smu_alive());
    s.init().unwrap();
    let (table, enabled, msgs) = mock(&m, |s| (s.driver_table, s.features_enabled, s.messages.clone()));
    assert_eq!(table, gmc.mc(s.driver_table()).unwrap());
    assert!(enabled);
    let sent: Vec<u32> = msgs.iter().map(|x| x.msg).collect();
    assert_eq!(
        sent,
        [
            smu::PPSMC_MSG_GetSmuVersion,
            smu::PPSMC_MSG_SetDriverDramAddrHigh,
            smu::PPSMC_MSG_SetDriverDramAddrLow,
            smu::PPSMC_MSG_EnableAllSmuFeatures
        ]
    );
    let (boot_base, boot_len) = gmc.allocators().1.range();
    assert!(
        s.driver_table() >= boot_base && s.driver_table() < boot_base + boot_len,
        "in the boot region"
    );
}

#[test]
fn metrics_and_clocks() {
    let (m, dev) = device();
    let mut gmc = Gmc::new(&dev).unwrap();
    let mut s = Smu::new(&dev, &mut gmc, true).unwrap();
    s.init().unwrap();
    mock(&m, |s| s.sensors.temperature_c = 61);
    s.set_clocks(DpmLevel::Highest).unwrap();
    let top = *DPM_LEVELS_MHZ.last().unwrap();
    let (min, max) = mock(&m, |s| (s.soft_min, s.soft_max));
    for (clk, _) in CLOCKS {
        assert_eq!((min[clk as usize], max[clk as usize]), (top, top));
    }
    let levels = s.dpm_levels().unwrap().to_vec();
    assert_eq!(levels.len(), 4);
    assert!(levels.iter().all(|(_, v)| v == &DPM_LEVELS_MHZ));
    let a = s.read_metrics().unwrap();
    assert_eq!(a.current_clock(smu_if::PPCLK_GFXCLK), Some(u64::from(top)));
    assert_eq!(a.edge_temperature(), Some(61));
    let b = s.read_metrics().unwrap();
    assert_eq!(b.counter().unwrap(), a.counter().unwrap() + 1);
    s.fini().unwrap();
    let (min, max) = mock(&m, |s| (s.soft_min, s.soft_max));
    let low = DPM_LEVELS_MHZ[0];
    assert_eq!((min[0], max[0]), (low, low));
    assert_eq!(
        s.read_metrics().unwrap().current_clock(smu_if::PPCLK_UCLK),
        Some(u64::from(low))
    );
}

#[test]
fn a_silent_smu_is_an_error_naming_the_message() {
    let (m, dev) = device();
    let mut gmc = Gmc::new(&dev).unwrap();
    let mut s = Smu::new(&dev, &mut gmc, true).unwrap();
    s.timeout = Duration::from_millis(30);
    assert!(m.pci_inject(0, PciFault::SmuSilent));
    let e = s.init().unwrap_err();
    assert!(
        matches!(
            e,
            AmError::Smu {
                msg: "PPSMC_MSG_SetDriverDramAddrHigh",
                response: 0,
                ..
            }
        ),
        "{e}"
    );
    assert!(e.to_string().contains("no response within"), "{e}");
    assert!(!s.is_smu_alive());
    assert!(m.clear_injections());
}

#[test]
fn a_refused_message_names_the_response() {
    let (_m, dev) = device();
    let mut gmc = Gmc::new(&dev).unwrap();
    let s = Smu::new(&dev, &mut gmc, true).unwrap();
    // GetDpmFreqByIndex of a level the SMU does not have.
    let e = s
        .send(
            smu::PPSMC_MSG_GetDpmFreqByIndex,
            smu_if::PPCLK_GFXCLK << 16 | 7,
            true,
            s.timeout,
        )
        .unwrap_err();
    assert!(
        matches!(
            e,
            AmError::Smu {
                msg: "PPSMC_MSG_GetDpmFreqByIndex",
                response: smu::PPSMC_Result_Failed,
                ..
            }
        ),
        "{e}"
    );
    assert!(e.to_string().contains("PPSMC_Result_Failed"), "{e}");
}
