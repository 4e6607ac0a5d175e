//! The SMU (MP1 13.0.0) message interface of the mock PCI GPU and its mode1 reset,
//! driven through `Sys::mmio` as tinygrad 0.10.1's `AM_SMU` sends messages: clear the
//! response (`C2PMSG_90`), write the argument (`C2PMSG_82`), then the message
//! (`C2PMSG_66`), and poll the response.

use std::path::Path;
use std::sync::Arc;

use amd_kfd::mmio::Mmio;
use amd_kfd::sys::{MapFlags, OpenMode, Prot, Sys};
use amd_mockgpu::pci::model::reg_addr;
use amd_mockgpu::pci::psp::Psp;
use amd_mockgpu::pci::regs::generated::{gc, mp, psp, smu};
use amd_mockgpu::pci::smu::{DPM_LEVELS_MHZ, SMU_VERSION, Smu};
use amd_mockgpu::pci::{Discovery, RegisterFile};
use amd_mockgpu::{MockConfig, MockSys, PciFault};
use amd_regs::discovery::hw_id;

const MIB: usize = 1 << 20;

struct Gpu {
    m: MockSys,
    regs: Arc<dyn Mmio>,
    file: Arc<RegisterFile>,
    msg: u32,
    arg: u32,
    resp: u32,
}

impl Gpu {
    fn new() -> Self {
        let m = MockSys::new(MockConfig::pci(1));
        let fd = m
            .open(
                Path::new("/sys/bus/pci/devices/0000:03:00.0/resource5"),
                OpenMode::ReadWrite,
            )
            .unwrap();
        // SAFETY: a shared mapping at an address the kernel picks replaces nothing.
        let r = unsafe { m.mmap(0, MIB, Prot::ReadWrite, MapFlags::SHARED, Some(fd), 0) }.unwrap();
        // SAFETY: `r` is the live register mapping, never unmapped in these tests.
        let regs = unsafe { amd_am::bar::registers(&m, r, MIB) };
        let file = m.pci_registers(0).unwrap();
        let d = Discovery::navi31();
        let a = |r| reg_addr(&d, hw_id::MP1, r).unwrap();
        Gpu {
            msg: a(mp::V13_0_0.MP1_SMN_C2PMSG_66),
            arg: a(mp::V13_0_0.MP1_SMN_C2PMSG_82),
            resp: a(mp::V13_0_0.MP1_SMN_C2PMSG_90),
            m,
            regs,
            file,
        }
    }

    /// `_send_msg`: (response after at most `polls` reads, argument read back).
    fn send(&self, msg: u32, arg: u32, polls: u32) -> (u32, u32) {
        self.regs.write32(self.resp, 0);
        self.regs.write32(self.arg, arg);
        self.regs.write32(self.msg, msg);
        let mut r = 0;
        for _ in 0..polls {
            r = self.regs.read32(self.resp);
            if r != 0 {
                break;
            }
        }
        (r, self.regs.read32(self.arg))
    }
}

#[test]
fn messages_are_answered() {
    let g = Gpu::new();
    assert_eq!(g.regs.read32(g.resp), smu::PPSMC_Result_OK, "idle after power-on");
    assert_eq!(g.send(smu::PPSMC_MSG_TestMessage, 7, 10), (smu::PPSMC_Result_OK, 8));
    assert_eq!(
        g.send(smu::PPSMC_MSG_GetSmuVersion, 0, 10),
        (smu::PPSMC_Result_OK, SMU_VERSION)
    );
    for (msg, arg) in [
        (smu::PPSMC_MSG_SetDriverDramAddrHigh, 0x80),
        (smu::PPSMC_MSG_SetDriverDramAddrLow, 0x1000_0000),
        (smu::PPSMC_MSG_SetToolsDramAddrLow, 0x2000),
        (smu::PPSMC_MSG_EnableAllSmuFeatures, 0),
        (smu::PPSMC_MSG_PowerUpVcn, 0),
    ] {
        assert_eq!(g.send(msg, arg, 10).0, smu::PPSMC_Result_OK, "message {msg:#x}");
    }
    // set_clocks: the level count, then each level.
    let clk = 0 << 16;
    let (r, n) = g.send(smu::PPSMC_MSG_GetDpmFreqByIndex, clk | 0xff, 10);
    assert_eq!((r, n as usize), (smu::PPSMC_Result_OK, DPM_LEVELS_MHZ.len()));
    for (i, f) in DPM_LEVELS_MHZ.iter().enumerate() {
        assert_eq!(g.send(smu::PPSMC_MSG_GetDpmFreqByIndex, clk | i as u32, 10).1, *f);
    }
    assert_eq!(
        g.send(smu::PPSMC_MSG_GetDpmFreqByIndex, clk | 9, 10).0,
        smu::PPSMC_Result_Failed
    );
    assert_eq!(
        g.send(smu::PPSMC_MSG_SetSoftMaxByFreq, clk | 2500, 10).0,
        smu::PPSMC_Result_OK
    );
    // An unknown message is not supported.
    assert_eq!(g.send(0xdead, 0, 10).0, smu::PPSMC_Result_UnknownCmd);
    let (table, tools, on, n) = g
        .file
        .with_block::<Smu, _>(|s| (s.driver_table, s.tools_table, s.features_enabled, s.messages.len()))
        .unwrap();
    assert_eq!((table, tools, on, n), (0x80_1000_0000, 0x2000, true, 14));
}

#[test]
fn an_unanswering_smu_times_out() {
    let g = Gpu::new();
    g.file.with_block::<Smu, _>(|s| s.unresponsive = true).unwrap();
    assert_eq!(
        g.send(smu::PPSMC_MSG_GetSmuVersion, 0, 100).0,
        0,
        "the response stays 0"
    );
    // tinygrad's is_smu_alive reads C2PMSG_90 afterwards: 0, not alive.
    assert_eq!(g.regs.read32(g.resp), 0);
    g.file.with_block::<Smu, _>(|s| s.unresponsive = false).unwrap();
    assert_eq!(g.send(smu::PPSMC_MSG_GetSmuVersion, 0, 1).0, smu::PPSMC_Result_OK);
}

#[test]
fn mode1_reset_restores_power_on_state() {
    let g = Gpu::new();
    let d = Discovery::navi31();
    let scratch = reg_addr(&d, hw_id::GC, gc::V11_0_0.SCRATCH_REG7).unwrap();
    let sos = reg_addr(&d, hw_id::MP0, mp::V13_0_0.MP0_SMN_C2PMSG_81).unwrap();
    let bl = reg_addr(&d, hw_id::MP0, mp::V13_0_0.MP0_SMN_C2PMSG_35).unwrap();
    g.regs.write32(scratch, 0xA000_0002);
    // A bad bootloader command leaves a status behind.
    g.regs.write32(bl, 0x1234);
    assert_eq!(g.regs.read32(bl) & 0xffff, psp::PSP_ERR_UNKNOWN_COMMAND);
    g.send(smu::PPSMC_MSG_EnableAllSmuFeatures, 0, 1);
    assert_eq!(g.send(smu::PPSMC_MSG_Mode1Reset, 0, 10).0, smu::PPSMC_Result_OK);
    assert_eq!(g.file.mode1_resets(), 1);
    assert_eq!(g.regs.read32(scratch), 0, "no partial boot after a reset");
    assert_eq!(g.regs.read32(sos), 0, "the sOS is gone");
    assert_eq!(g.regs.read32(bl), 0x8000_0000, "the bootloader is ready again");
    assert_eq!(g.regs.read32(amd_mockgpu::pci::RCC_CONFIG_MEMSIZE), 512);
    assert!(g.file.with_block::<Psp, _>(|p| p.bootloader.is_empty()).unwrap());
    assert!(!g.file.with_block::<Smu, _>(|s| s.features_enabled).unwrap());
    assert_eq!(g.regs.read32(g.resp), smu::PPSMC_Result_OK, "the SMU is idle again");
}

#[test]
fn an_smu_silenced_through_the_injection_api_answers_nothing_until_cleared() {
    let g = Gpu::new();
    assert!(g.m.pci_inject(0, PciFault::SmuSilent));
    assert!(!g.m.pci_inject(1, PciFault::SmuSilent), "no second GPU");
    for msg in [smu::PPSMC_MSG_TestMessage, smu::PPSMC_MSG_GetSmuVersion] {
        assert_eq!(g.send(msg, 1, 50), (0, 1), "no response, argument untouched");
    }
    let seen = g.file.with_block::<Smu, _>(|s| s.messages.clone()).unwrap();
    assert_eq!(seen.len(), 2, "the messages reached the SMU");
    assert!(seen.iter().all(|m| m.response == 0));
    assert!(g.m.clear_injections(), "the silence was in force");
    assert!(!g.m.clear_injections());
    assert_eq!(g.send(smu::PPSMC_MSG_TestMessage, 1, 1), (smu::PPSMC_Result_OK, 2));
}

#[test]
fn the_metrics_table_lands_at_the_driver_table() {
    use amd_mockgpu::pci::model::FB_LOCATION_BASE;
    use amd_mockgpu::pci::regs::CField;
    use amd_mockgpu::pci::regs::generated::{smu_if, smu_metrics, smu_metrics_external};
    let g = Gpu::new();
    // AM_SMU.init: the driver table's memory-controller address, high then low.
    let table = 0x10_0000u64;
    let mc = (u64::from(FB_LOCATION_BASE) << 24) + table;
    let ok = smu::PPSMC_Result_OK;
    assert_eq!(
        g.send(smu::PPSMC_MSG_SetDriverDramAddrHigh, (mc >> 32) as u32, 10).0,
        ok
    );
    assert_eq!(g.send(smu::PPSMC_MSG_SetDriverDramAddrLow, mc as u32, 10).0, ok);
    let gfx = smu_if::PPCLK_GFXCLK;
    assert_eq!(g.send(smu::PPSMC_MSG_SetSoftMaxByFreq, gfx << 16 | 1500, 10).0, ok);
    assert_eq!(
        g.send(smu::PPSMC_MSG_SetSoftMaxByFreq, smu_if::PPCLK_UCLK << 16 | 500, 10)
            .0,
        ok
    );
    assert_eq!(
        g.send(smu::PPSMC_MSG_SetSoftMaxByFreq, smu_if::PPCLK_COUNT << 16 | 500, 10)
            .0,
        smu::PPSMC_Result_Failed,
        "no such clock"
    );
    g.file.with_block::<Smu, _>(|s| s.sensors.temperature_c = 55).unwrap();
    // read_metrics: TransferTableSmu2Dram(TABLE_SMU_METRICS), then the table.
    let read = || {
        let mut b = vec![0u8; smu_metrics_external::SIZE];
        assert!(g.m.pci_read_vram(0, table, &mut b));
        b
    };
    let get = |b: &[u8], f: CField, i: usize| -> u32 {
        let at = f.offset + i * f.size;
        let mut v = [0u8; 4];
        v[..f.size].copy_from_slice(&b[at..at + f.size]);
        u32::from_le_bytes(v)
    };
    let metrics = smu_if::TABLE_SMU_METRICS;
    assert_eq!(g.send(smu::PPSMC_MSG_TransferTableSmu2Dram, metrics, 10).0, ok);
    let t = read();
    let clk = smu_metrics::CurrClock;
    assert_eq!(get(&t, clk, gfx as usize), 1500);
    assert_eq!(get(&t, clk, smu_if::PPCLK_UCLK as usize), 500);
    assert_eq!(
        get(&t, clk, smu_if::PPCLK_SOCCLK as usize),
        DPM_LEVELS_MHZ[2],
        "no limit: the top level"
    );
    assert_eq!(get(&t, smu_metrics::AverageGfxclkFrequencyPostDs, 0), 1500);
    assert_eq!(get(&t, smu_metrics::AverageMemclkFrequencyPostDs, 0), 500);
    assert_eq!(get(&t, smu_metrics::AvgTemperature, smu_if::TEMP_EDGE as usize), 55);
    assert_eq!(get(&t, smu_metrics::AvgTemperature, smu_if::TEMP_HOTSPOT as usize), 55);
    assert_eq!(get(&t, smu_metrics::MetricsCounter, 0), 1);
    assert_eq!(g.send(smu::PPSMC_MSG_TransferTableSmu2Dram, metrics, 10).0, ok);
    assert_eq!(get(&read(), smu_metrics::MetricsCounter, 0), 2);
    // Another table, or a driver table outside VRAM: refused, memory untouched.
    assert_eq!(
        g.send(smu::PPSMC_MSG_TransferTableSmu2Dram, smu_if::TABLE_PPTABLE, 10)
            .0,
        smu::PPSMC_Result_Failed
    );
    assert_eq!(g.send(smu::PPSMC_MSG_SetDriverDramAddrHigh, 0, 10).0, ok);
    assert_eq!(
        g.send(smu::PPSMC_MSG_TransferTableSmu2Dram, metrics, 10).0,
        smu::PPSMC_Result_Failed
    );
    assert_eq!(get(&read(), smu_metrics::MetricsCounter, 0), 2);
}
