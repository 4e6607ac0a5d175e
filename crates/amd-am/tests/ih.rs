//! The IH against the mock's interrupt ring: programmed as tinygrad 0.10.1's
//! `AM_IH.init` does; VM faults of both hubs and SDMA traps read back and decoded;
//! the read pointer moved; an overflow cleared; a hostile write pointer refused.

use std::sync::Arc;

use amd_am::AmError;
use amd_am::Mmio;
use amd_am::gmc::{Gmc, Hub, PAGE};
use amd_am::ih::{IV_BYTES, Ih, RING_SIZE};
use amd_am::ip::{AmDevice, Ip, field};
use amd_am::pci::{PciBus, PciOptions};
use amd_am::regs::AmReg;
use amd_am::regs::generated::osssys;
use amd_kfd::sys::Sys;
use amd_mockgpu::pci::gmc::{Access, Hub as MockHub};
use amd_mockgpu::pci::ih::IvEntry as MockIv;
use amd_mockgpu::{MockConfig, MockSys};

fn device() -> (Arc<MockSys>, AmDevice) {
    let m = Arc::new(MockSys::new(MockConfig::pci(1)));
    let mut bus = PciBus::scan(m.clone() as Arc<dyn Sys>, &PciOptions::default()).unwrap();
    let dev = AmDevice::new(bus.open(0).unwrap()).unwrap();
    (m, dev)
}

fn reg(m: &MockSys, dev: &AmDevice, r: AmReg) -> u32 {
    let a = dev.regs().resolve(Ip::Osssys, 0, r).unwrap().addr;
    m.pci_registers(0).unwrap().read32(a)
}

/// Runs `test` on a device whose IH ring 0 is initialised, with write-back.
fn with_ih(test: impl FnOnce(&MockSys, &AmDevice, &mut Gmc<'_>, &mut Ih<'_>)) {
    let (m, dev) = device();
    let mut gmc = Gmc::new(&dev).unwrap();
    let mut ih = Ih::new(&dev, &mut gmc, true).unwrap();
    ih.init().unwrap();
    test(&m, &dev, &mut gmc, &mut ih);
}

#[test]
fn faults_and_traps_come_back_decoded() {
    with_ih(|m, dev, gmc, ih| {
        let cntl = reg(m, dev, osssys::V6_0_0.IH_RB_CNTL);
        assert_eq!(4u32 << field(cntl, osssys::IH_RB_CNTL__RB_SIZE_MASK), RING_SIZE as u32);
        assert_eq!(field(cntl, osssys::IH_RB_CNTL__RB_ENABLE_MASK), 1);
        assert_eq!(field(cntl, osssys::IH_RB_CNTL__ENABLE_INTR_MASK), 1);
        assert_eq!(
            field(
                reg(m, dev, osssys::V6_0_0.IH_RB_CNTL_RING1),
                osssys::IH_RB_CNTL__RB_ENABLE_MASK
            ),
            1
        );
        gmc.init_hub(Hub::Mm).unwrap();
        gmc.init_hub(Hub::Gc).unwrap();
        gmc.booting = false;
        assert!(ih.handle().unwrap().entries.is_empty());

        let map = gmc.valloc(PAGE, false, false).unwrap();
        gmc.vfree(&map).unwrap();
        let va = map.va + 0x40;
        assert!(m.pci_translate(0, MockHub::Gc, va, Access::Write).unwrap().is_err());
        gmc.clear_fault(Hub::Gc).unwrap();
        assert!(m.pci_translate(0, MockHub::Mm, va, Access::Read).unwrap().is_err());
        m.pci_registers(0)
            .unwrap()
            .raise_interrupt(MockIv::sdma_trap(3, 0, 0, 0x1234));

        let got = ih.handle().unwrap();
        assert!(!got.overflowed);
        assert_eq!(got.entries.len(), 3, "{:?}", got.entries);
        let f0 = got.entries[0].vm_fault().unwrap();
        assert_eq!((f0.hub, f0.va, f0.write), (Hub::Gc, map.va, true));
        let f1 = got.entries[1].vm_fault().unwrap();
        assert_eq!((f1.hub, f1.va, f1.write), (Hub::Mm, map.va, false));
        assert!(got.entries[2].is_sdma_trap() && got.entries[2].vm_fault().is_none());
        assert_eq!((got.entries[2].ring_id, got.entries[2].src_data[0]), (3, 0x1234));
        assert_eq!(u64::from(reg(m, dev, osssys::V6_0_0.IH_RB_RPTR)), 3 * IV_BYTES);
        assert!(ih.handle().unwrap().entries.is_empty(), "read once");
    });
}

#[test]
fn an_overflow_is_reported_and_cleared() {
    with_ih(|m, dev, _gmc, ih| {
        let file = m.pci_registers(0).unwrap();
        let slots = RING_SIZE / IV_BYTES;
        for i in 0..slots {
            file.raise_interrupt(MockIv::sdma_trap(0, 0, 0, i as u32));
        }
        let wp = reg(m, dev, osssys::V6_0_0.IH_RB_WPTR);
        assert_eq!(field(wp, osssys::IH_RB_WPTR__RB_OVERFLOW_MASK), 1);
        let got = ih.handle().unwrap();
        assert!(got.overflowed);
        assert_eq!(got.entries.len() as u64, slots - 1, "one slot stays empty");
        assert!(got.entries.iter().enumerate().all(|(i, e)| e.src_data[0] == i as u32));
        assert_eq!(
            field(
                reg(m, dev, osssys::V6_0_0.IH_RB_WPTR),
                osssys::IH_RB_WPTR__RB_OVERFLOW_MASK
            ),
            0
        );
        // After the wrap the ring takes vectors again.
        file.raise_interrupt(MockIv::sdma_trap(0, 0, 0, 77));
        let got = ih.handle().unwrap();
        assert_eq!(got.entries.len(), 1);
        assert_eq!(got.entries[0].src_data[0], 77);
    });
}

#[test]
fn a_hostile_write_pointer_is_refused() {
    with_ih(|m, _dev, _gmc, ih| {
        let wb = ih.ring(0).unwrap().1;
        for bad in [RING_SIZE as u32 + IV_BYTES as u32, 0x12, u32::MAX] {
            assert!(m.pci_write_vram(0, wb, &bad.to_le_bytes()));
            let e = ih.handle().unwrap_err();
            assert!(
                matches!(
                    e,
                    AmError::Device {
                        what: "IH ring 0 write pointer",
                        ..
                    }
                ),
                "{e}"
            );
        }
    });
}
