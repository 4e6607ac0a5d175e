//! The whole boot on the mock PCI GPU, in tinygrad 0.10.1's order (`AMDev.__init__`):
//! a cold (full) boot; a compute ring set up by GFX running a committed kernel and a
//! RELEASE_MEM fence; an SDMA ring copying with a fence; a reboot after `fini`
//! (partial), without `fini` (full, with a mode1 reset) and with `AM_RESET=1`;
//! refused PSP commands, a silent SMU and missing firmware as typed errors. The
//! firmware files are synthetic (built in `common`), so no real firmware is needed.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use amd_am::AmError;
use amd_am::Mmio;
use amd_am::device::{BootKind, BootOptions, Booted};
use amd_am::firmware::{FirmwareSource, files};
use amd_am::gfx::ComputeRingDesc;
use amd_am::gmc::{Gmc, MapFlags, Mapping};
use amd_am::ip::{AM_VERSION, AmDevice, Ip};
use amd_am::pci::{PciBus, PciOptions};
use amd_am::regs::AmReg;
use amd_am::regs::generated::doorbell::{AMDGPU_NAVI10_DOORBELL_MEC_RING0, AMDGPU_NAVI10_DOORBELL_sDMA_ENGINE0};
use amd_am::regs::generated::{gc, mmhub, mp, nbio, osssys, psp};
use amd_am::sdma::SdmaRingDesc;
use amd_am::smu::Smu;
use amd_kfd::sys::Sys;
use amd_mockgpu::pci::model::Rlc;
use amd_mockgpu::pci::psp::Psp as MockPsp;
use amd_mockgpu::pci::smu::Smu as MockSmu;
use amd_mockgpu::{ExecMode, MockConfig, MockSys, PciFault, PciProfile};
use amd_packets::GfxTarget;
use amd_packets::pm4::recipes::Signal;
use amd_packets::sdma::{CopyLinear, Fence, Trap};
use amd_packets::testing::linear_dispatch;

mod common;

const T: GfxTarget = GfxTarget::Gfx11;

fn mock() -> Arc<MockSys> {
    Arc::new(MockSys::new(MockConfig {
        mode: ExecMode::Inline,
        ..MockConfig::pci(1)
    }))
}

/// A mock with one gfx1201 (Navi 48) PCI GPU.
fn mock_gfx1201() -> Arc<MockSys> {
    Arc::new(MockSys::new(MockConfig {
        mode: ExecMode::Inline,
        pci: vec![PciProfile::navi48()],
        ..MockConfig::pci(0)
    }))
}

/// Options booting from the firmware the mock serves (both generations' synthetic
/// files).
fn mock_firmware_opts() -> BootOptions {
    opts(Path::new(amd_mockgpu::pci::firmware::DIR))
}

/// Takes the mock's GPU (again: the registers keep what an earlier run left).
fn open(m: &Arc<MockSys>) -> AmDevice {
    let mut bus = PciBus::scan(m.clone() as Arc<dyn Sys>, &PciOptions::default()).unwrap();
    AmDevice::new(bus.open(0).unwrap()).unwrap()
}

/// A firmware directory with every file, unique to `name`.
fn firmware(name: &str) -> PathBuf {
    common::dir_with(&format!("boot-{name}"), &common::all_files())
}

fn opts(dir: &Path) -> BootOptions {
    BootOptions {
        firmware: FirmwareSource::dir(dir),
        reset: false,
        smu_timeout: Duration::from_millis(200),
        gfx_timeout: Duration::from_secs(2),
        ..BootOptions::default()
    }
}

fn addr(dev: &AmDevice, ip: Ip, r: AmReg) -> u32 {
    dev.regs().resolve(ip, 0, r).unwrap().addr
}

fn reg(m: &MockSys, dev: &AmDevice, ip: Ip, r: AmReg) -> u32 {
    m.pci_registers(0).unwrap().read32(addr(dev, ip, r))
}

fn wait_for(what: &str, mut f: impl FnMut() -> bool) {
    let t = Instant::now();
    while !f() {
        assert!(t.elapsed() < Duration::from_secs(10), "timed out waiting for {what}");
        std::thread::sleep(Duration::from_micros(200));
    }
}

/// CPU access to a contiguous VRAM mapping through BAR 0.
struct Mem<'a> {
    dev: &'a AmDevice,
    map: Mapping,
}

impl<'a> Mem<'a> {
    fn new(gmc: &mut Gmc<'a>, size: u64) -> Self {
        let map = gmc.valloc(size, true, false).unwrap();
        Mem { dev: gmc.dev(), map }
    }
    fn va(&self) -> u64 {
        self.map.va
    }
    fn write(&self, off: u64, data: &[u8]) {
        assert!(self.dev.pci().vram().write(self.map.paddrs[0].0 + off, data));
    }
    fn read(&self, off: u64, buf: &mut [u8]) {
        assert!(self.dev.pci().vram().read(self.map.paddrs[0].0 + off, buf));
    }
    fn u32(&self, off: u64) -> u32 {
        let mut b = [0; 4];
        self.read(off, &mut b);
        u32::from_le_bytes(b)
    }
    fn u64(&self, off: u64) -> u64 {
        let mut b = [0; 8];
        self.read(off, &mut b);
        u64::from_le_bytes(b)
    }
}

/// A ring in VRAM with its read/write pointer page (tinygrad's `gart`: read
/// pointer at 0, write pointer at 0x10), filled as `AMDComputeQueue._submit` does.
struct Ring<'a> {
    ring: Mem<'a>,
    gart: Mem<'a>,
    put: u64,
    doorbell: u32,
    sdma: bool,
}

impl Ring<'_> {
    fn submit(&mut self, words: &[u32]) {
        let dwords = self.ring.map.size / 4;
        for &w in words {
            self.ring.write((self.put % dwords) * 4, &w.to_le_bytes());
            self.put += 1;
        }
        let wptr = if self.sdma { self.put * 4 } else { self.put };
        self.gart.write(0x10, &wptr.to_le_bytes());
        self.ring.dev.pci().ring_doorbell(self.doorbell, wptr).unwrap();
    }
    fn rptr(&self) -> u64 {
        self.gart.u64(0)
    }
}

const RING_SIZE: u64 = 0x10000;

/// `PCIIface.create_queue` of a compute queue: me 1, pipe 0, queue 0, the MEC's
/// first doorbell.
fn compute_ring<'a>(b: &mut Booted<'a>) -> Ring<'a> {
    let ring = Mem::new(&mut b.gmc, RING_SIZE);
    let gart = Mem::new(&mut b.gmc, 0x1000);
    let eop = Mem::new(&mut b.gmc, 0x1000);
    let desc = ComputeRingDesc {
        ring: ring.va(),
        ring_size: RING_SIZE,
        rptr: gart.va(),
        wptr: gart.va() + 0x10,
        eop: eop.va(),
        eop_size: 0x1000,
        doorbell: AMDGPU_NAVI10_DOORBELL_MEC_RING0,
        pipe: 0,
        queue: 0,
    };
    b.gfx.setup_ring(&mut b.gmc, &desc).unwrap();
    Ring {
        ring,
        gart,
        put: 0,
        doorbell: AMDGPU_NAVI10_DOORBELL_MEC_RING0,
        sdma: false,
    }
}

fn sdma_ring<'a>(b: &mut Booted<'a>) -> Ring<'a> {
    let ring = Mem::new(&mut b.gmc, RING_SIZE);
    let gart = Mem::new(&mut b.gmc, 0x1000);
    b.sdma
        .setup_ring(&SdmaRingDesc {
            ring: ring.va(),
            ring_size: RING_SIZE,
            rptr: gart.va(),
            wptr: gart.va() + 0x10,
            doorbell: AMDGPU_NAVI10_DOORBELL_sDMA_ENGINE0,
        })
        .unwrap();
    Ring {
        ring,
        gart,
        put: 0,
        doorbell: AMDGPU_NAVI10_DOORBELL_sDMA_ENGINE0,
        sdma: true,
    }
}

/// A RELEASE_MEM of `value` into a fresh signal page through `ring`; the page.
fn fence<'a>(b: &mut Booted<'a>, ring: &mut Ring<'a>, value: u32) -> Mem<'a> {
    fence_for(T, b, ring, value)
}

/// [`fence`] with `target`'s packets.
fn fence_for<'a>(target: GfxTarget, b: &mut Booted<'a>, ring: &mut Ring<'a>, value: u32) -> Mem<'a> {
    let sig = Mem::new(&mut b.gmc, 0x1000);
    let mut w = Vec::new();
    Signal {
        address: sig.va(),
        value: u64::from(value),
        event: None,
    }
    .encode(target, &mut w);
    ring.submit(&w);
    wait_for("the RELEASE_MEM", || sig.u32(0) == value);
    wait_for("the read pointer", || ring.rptr() == ring.put);
    sig
}

/// Runs `vadd` from the committed code object `kernel` (under `tests/kernels`) on
/// `c` with `target`'s packets and checks its output; false (and says so) if the file
/// is absent.
fn run_vadd<'a>(b: &mut Booted<'a>, c: &mut Ring<'a>, target: GfxTarget, kernel: &str) -> bool {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/kernels")
        .join(kernel);
    let Ok(bytes) = std::fs::read(&path) else {
        println!("skipped the dispatch: {} is absent", path.display());
        return false;
    };
    let elf = goblin::elf::Elf::parse(&bytes).unwrap();
    let image = Mem::new(&mut b.gmc, 0x10000);
    for ph in elf
        .program_headers
        .iter()
        .filter(|p| p.p_type == goblin::elf::program_header::PT_LOAD)
    {
        let off = ph.p_offset as usize;
        image.write(ph.p_vaddr, &bytes[off..off + ph.p_filesz as usize]);
    }
    let kd = elf
        .syms
        .iter()
        .find(|s| elf.strtab.get_at(s.st_name) == Some("vadd.kd"))
        .expect("vadd.kd");
    let kd_off = kd.st_value;
    let code = (image.va() + kd_off).wrapping_add_signed(image.u64(kd_off + 16) as i64);
    let rsrc = [image.u32(kd_off + 48), image.u32(kd_off + 52), image.u32(kd_off + 44)];

    let n = 1000u32;
    let bufs = Mem::new(&mut b.gmc, 0x4000);
    let (a, bb, cc) = (0u64, 0x1000u64, 0x2000u64);
    for i in 0..u64::from(n) {
        bufs.write(a + i * 4, &(i as f32).to_le_bytes());
        bufs.write(bb + i * 4, &(2.5 * i as f32).to_le_bytes());
        bufs.write(cc + i * 4, &(-1.0f32).to_le_bytes());
    }
    let kernarg = Mem::new(&mut b.gmc, 0x1000);
    let mut args = Vec::new();
    for p in [a, bb, cc] {
        args.extend_from_slice(&(bufs.va() + p).to_le_bytes());
    }
    args.extend_from_slice(&n.to_le_bytes());
    kernarg.write(0, &args);
    let user = [kernarg.va() as u32, (kernarg.va() >> 32) as u32];
    let sig = Mem::new(&mut b.gmc, 0x1000);
    let mut w = Vec::new();
    linear_dispatch(code, rsrc, &user, n).encode(target, &mut w).unwrap();
    Signal {
        address: sig.va(),
        value: 7,
        event: None,
    }
    .encode(target, &mut w);
    c.submit(&w);
    wait_for("the dispatch's signal", || sig.u32(0) == 7);
    for i in 0..u64::from(n) {
        let got = f32::from_bits(bufs.u32(cc + i * 4));
        assert_eq!(got, 3.5 * i as f32, "c[{i}]");
    }
    true
}

/// The index of the first write to `a` in the mock's write log.
fn first_write(log: &[amd_mockgpu::pci::RegWrite], a: u32) -> usize {
    log.iter()
        .position(|w| w.reg == a)
        .unwrap_or_else(|| panic!("no write to {a:#x}"))
}

#[test]
fn cold_boot_in_tinygrads_order() {
    let m = mock();
    let dir = firmware("cold");
    let dev = open(&m);
    m.pci_registers(0).unwrap().take_writes();
    let mut b = dev.boot(&opts(&dir)).unwrap();
    assert_eq!(b.kind, BootKind::Full { mode1_reset: false });
    assert_ne!(b.state.scratch_reg7, AM_VERSION);

    // Each block's first register write, in `AMDev.__init__`'s order.
    let log = m.pci_registers(0).unwrap().writes();
    let order = [
        first_write(
            &log,
            addr(&dev, Ip::Nbio, nbio::V4_3_0.RCC_DEV0_EPF0_RCC_DOORBELL_APER_EN),
        ),
        first_write(&log, addr(&dev, Ip::Mmhub, mmhub::V3_0_0.MMVM_CONTEXT0_CNTL)),
        first_write(&log, addr(&dev, Ip::Osssys, osssys::V6_0_0.IH_RB_CNTL)),
        first_write(&log, addr(&dev, Ip::Mp0, mp::V13_0_0.MP0_SMN_C2PMSG_64)),
        first_write(&log, addr(&dev, Ip::Mp1, mp::V13_0_0.MP1_SMN_C2PMSG_66)),
        first_write(&log, addr(&dev, Ip::Gc, gc::V11_0_0.CP_PFP_PRGRM_CNTR_START)),
        first_write(&log, addr(&dev, Ip::Gc, gc::V11_0_0.GCVM_CONTEXT0_CNTL)),
        first_write(&log, addr(&dev, Ip::Gc, gc::V11_0_0.CP_MEC_DOORBELL_RANGE_UPPER)),
        first_write(
            &log,
            addr(&dev, Ip::Gc, gc::V11_0_0.SDMA0_SEM_WAIT_FAIL_TIMER_CNTL.unwrap()),
        ),
        first_write(&log, addr(&dev, Ip::Gc, gc::V11_0_0.RLC_SAFE_MODE)),
        first_write(&log, addr(&dev, Ip::Gc, gc::V11_0_0.SCRATCH_REG7)),
    ];
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{order:?}");

    // What the boot leaves: the doorbell aperture on, the MEC running with every
    // pipe active, its start address from the firmware, SDMA released, the RLC out
    // of safe mode after two commands, SCRATCH_REG7 the version.
    let r = |ip, x| reg(&m, &dev, ip, x);
    assert_eq!(r(Ip::Nbio, nbio::V4_3_0.RCC_DEV0_EPF0_RCC_DOORBELL_APER_EN), 1);
    let mec = r(Ip::Gc, gc::V11_0_0.CP_MEC_RS64_CNTL);
    assert_eq!(mec & gc::CP_MEC_RS64_CNTL__MEC_HALT_MASK, 0);
    assert_eq!(mec & 0x3c00_0000, 0x3c00_0000, "pipes 0-3 active: {mec:#x}");
    assert_eq!(mec & 0x000f_0000, 0, "no pipe in reset: {mec:#x}");
    let mec_pc = u64::from(r(Ip::Gc, gc::V11_0_0.CP_MEC_RS64_PRGRM_CNTR_START))
        | u64::from(r(Ip::Gc, gc::V11_0_0.CP_MEC_RS64_PRGRM_CNTR_START_HI)) << 32;
    assert_eq!(mec_pc, common::MEC_START >> 2);
    assert_eq!(r(Ip::Gc, gc::V11_0_0.CP_MEC_DOORBELL_RANGE_UPPER), 0x450);
    assert_eq!(r(Ip::Gc, gc::V11_0_0.SDMA0_F32_CNTL) & gc::SDMA0_F32_CNTL__HALT_MASK, 0);
    assert_eq!(r(Ip::Gc, gc::V11_0_0.SCRATCH_REG7), AM_VERSION);
    let regs = m.pci_registers(0).unwrap();
    assert_eq!(
        regs.with_block::<Rlc, _>(|b| (b.safe_mode, b.commands)),
        Some((false, 2))
    );
    let (rlc, cmds) = regs
        .with_block::<MockPsp, _>(|p| (p.rlc_autoloaded, p.commands.len()))
        .unwrap();
    assert!(rlc && cmds > 3);
    assert_eq!(regs.with_block::<MockSmu, _>(|s| s.features_enabled), Some(true));
    assert_eq!(regs.mode1_resets(), 0);
    // A second boot state reads what the next boot would decide: MEC running, so
    // full.
    let st = dev.boot_state().unwrap();
    assert!(!st.partial_boot(false));
    b.fini().unwrap();
    assert!(dev.boot_state().unwrap().partial_boot(false));
    assert!(!dev.boot_state().unwrap().partial_boot(true), "AM_RESET=1");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_kernel_and_a_fence_on_the_compute_ring() {
    let m = mock();
    let dir = firmware("compute");
    let dev = open(&m);
    let mut b = dev.boot(&opts(&dir)).unwrap();
    let mut c = compute_ring(&mut b);
    assert_eq!(b.gfx.queues(), &[(0, 0)]);
    // The HQD the mock bound: the ring, its size, its doorbell.
    let rings = m.pci_rings(0);
    assert_eq!(rings.len(), 1);
    let bound = rings[0].1.binding.clone().unwrap();
    assert_eq!(
        (bound.base, bound.dwords, bound.doorbell),
        (
            c.ring.va(),
            RING_SIZE / 4,
            Some(u64::from(AMDGPU_NAVI10_DOORBELL_MEC_RING0) * 8)
        )
    );

    // A RELEASE_MEM alone.
    let sig = fence(&mut b, &mut c, 0x1234_5678);
    assert_eq!(sig.u32(0), 0x1234_5678);

    // vadd, from the committed code object.
    if !run_vadd(&mut b, &mut c, T, "vadd.hsaco") {
        return;
    }
    // The end-of-pipe interrupts reached the IH ring the boot set up.
    wait_for("the EOP vectors", || {
        b.ih.handle().unwrap().entries.iter().any(|e| e.is_cp_eop())
    });
    b.fini().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_sdma_copy_and_fence() {
    let m = mock();
    let dir = firmware("sdma");
    let dev = open(&m);
    let mut b = dev.boot(&opts(&dir)).unwrap();
    let mut s = sdma_ring(&mut b);
    let len = 0x3000u64;
    let src = Mem::new(&mut b.gmc, len);
    let dst = Mem::new(&mut b.gmc, len);
    let sig = Mem::new(&mut b.gmc, 0x1000);
    let pattern: Vec<u8> = (0..len).map(|i| (i * 7 % 251) as u8).collect();
    src.write(0, &pattern);
    let mut w = Vec::new();
    CopyLinear::new(dst.va(), src.va(), len as u32)
        .unwrap()
        .encode(T, &mut w);
    Fence::new(sig.va(), 9).encode(T, &mut w);
    Trap::new(0).unwrap().encode(T, &mut w);
    s.submit(&w);
    wait_for("the SDMA fence", || sig.u32(0) == 9);
    let mut got = vec![0u8; len as usize];
    dst.read(0, &mut got);
    assert!(got == pattern, "the copy arrived");
    wait_for("the SDMA read pointer", || s.rptr() == s.put * 4);
    wait_for("the SDMA trap", || {
        b.ih.handle().unwrap().entries.iter().any(|e| e.is_sdma_trap())
    });
    // fini: the ring off, the engine halted.
    b.fini().unwrap();
    assert!(b.is_finished());
    assert_eq!(
        reg(&m, &dev, Ip::Gc, gc::V11_0_0.SDMA0_QUEUE0_RB_CNTL) & gc::SDMA0_QUEUE0_RB_CNTL__RB_ENABLE_MASK,
        0
    );
    assert_ne!(
        reg(&m, &dev, Ip::Gc, gc::V11_0_0.SDMA0_F32_CNTL) & gc::SDMA0_F32_CNTL__HALT_MASK,
        0
    );
    assert!(m.pci_rings(0).is_empty(), "no ring bound after fini");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_reboot_after_fini_is_partial() {
    let m = mock();
    let dir = firmware("partial");
    {
        let dev = open(&m);
        let mut b = dev.boot(&opts(&dir)).unwrap();
        let mut c = compute_ring(&mut b);
        fence(&mut b, &mut c, 1);
        b.fini().unwrap();
        let mec = reg(&m, &dev, Ip::Gc, gc::V11_0_0.CP_MEC_RS64_CNTL);
        assert_ne!(mec & gc::CP_MEC_RS64_CNTL__MEC_HALT_MASK, 0, "MEC halted");
        assert_eq!(reg(&m, &dev, Ip::Gc, gc::V11_0_0.GCVM_CONTEXT0_CNTL), 0);
    }
    let regs = m.pci_registers(0).unwrap();
    let psp_cmds = regs.with_block::<MockPsp, _>(|p| p.commands.len()).unwrap();
    let smu_msgs = regs.with_block::<MockSmu, _>(|s| s.messages.len()).unwrap();

    let dev = open(&m);
    let mut b = dev.boot(&opts(&dir)).unwrap();
    assert_eq!(b.kind, BootKind::Partial);
    assert_eq!(b.state.scratch_reg7, AM_VERSION);
    // No PSP command, no mode1 reset; the SMU only set the clocks.
    assert_eq!(regs.with_block::<MockPsp, _>(|p| p.commands.len()).unwrap(), psp_cmds);
    assert_eq!(regs.mode1_resets(), 0);
    let msgs = regs.with_block::<MockSmu, _>(|s| s.messages.clone()).unwrap();
    assert!(
        msgs[smu_msgs..]
            .iter()
            .all(|x| x.msg != amd_am::regs::generated::smu::PPSMC_MSG_Mode1Reset
                && x.msg != amd_am::regs::generated::smu::PPSMC_MSG_EnableAllSmuFeatures)
    );
    // The queues run again, both engines.
    let mut c = compute_ring(&mut b);
    fence(&mut b, &mut c, 2);
    let mut s = sdma_ring(&mut b);
    let sig = Mem::new(&mut b.gmc, 0x1000);
    let mut w = Vec::new();
    Fence::new(sig.va(), 3).encode(T, &mut w);
    s.submit(&w);
    wait_for("the SDMA fence after a partial boot", || sig.u32(0) == 3);
    b.fini().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_reboot_without_fini_is_full_with_a_mode1_reset() {
    let m = mock();
    let dir = firmware("mode1");
    {
        let dev = open(&m);
        let mut b = dev.boot(&opts(&dir)).unwrap();
        let mut c = compute_ring(&mut b);
        fence(&mut b, &mut c, 1);
        // Dropped without fini: the MEC keeps running.
    }
    let dev = open(&m);
    let mut b = dev.boot(&opts(&dir)).unwrap();
    assert_eq!(b.kind, BootKind::Full { mode1_reset: true });
    assert_eq!(b.state.scratch_reg7, AM_VERSION);
    assert!(!b.state.mec_halted);
    let regs = m.pci_registers(0).unwrap();
    assert_eq!(regs.mode1_resets(), 1);
    let mut c = compute_ring(&mut b);
    fence(&mut b, &mut c, 2);
    b.fini().unwrap();
    drop(b);
    drop(dev);

    // AM_RESET=1 forces a full boot of a GPU left by fini.
    let dev = open(&m);
    let o = BootOptions {
        reset: true,
        ..opts(&dir)
    };
    assert!(BootOptions::from_lookup(|k| (k == "AM_RESET").then(|| "1".into())).reset);
    let b = dev.boot(&o).unwrap();
    assert_eq!(b.kind, BootKind::Full { mode1_reset: true });
    assert_eq!(regs.mode1_resets(), 2);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_refused_psp_command_fails_the_boot_and_the_next_boot_starts_over() {
    let m = mock();
    let dir = firmware("psp");
    let dev = open(&m);
    assert!(m.pci_inject(
        0,
        PciFault::PspCommand {
            cmd_id: Some(psp::GFX_CMD_ID_LOAD_IP_FW),
            status: 7,
        }
    ));
    let e = dev.boot(&opts(&dir)).unwrap_err();
    assert_eq!(
        e,
        AmError::Psp {
            step: "LOAD_IP_FW GFX_FW_TYPE_SMU".into(),
            status: 7
        }
    );
    assert_ne!(reg(&m, &dev, Ip::Gc, gc::V11_0_0.SCRATCH_REG7), AM_VERSION);
    drop(dev);
    // The sOS runs and the SMU answers: the next boot resets first.
    let dev = open(&m);
    let b = dev.boot(&opts(&dir)).unwrap();
    assert_eq!(b.kind, BootKind::Full { mode1_reset: true });
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_silent_smu_fails_the_boot_naming_the_message() {
    let m = mock();
    let dir = firmware("smu");
    let dev = open(&m);
    assert!(m.pci_inject(0, PciFault::SmuSilent));
    let e = dev.boot(&opts(&dir)).unwrap_err();
    assert!(
        matches!(
            e,
            AmError::Smu {
                msg: "PPSMC_MSG_SetDriverDramAddrHigh",
                ..
            }
        ),
        "{e}"
    );
    // The time waited: the 200 ms bound, or a little more on a loaded machine.
    let AmError::Smu { waited_ms, .. } = e else {
        unreachable!()
    };
    assert!((200..2000).contains(&waited_ms), "{e}");
    assert!(
        e.to_string().contains(&format!("no response within {waited_ms} ms")),
        "{e}"
    );
    assert_ne!(reg(&m, &dev, Ip::Gc, gc::V11_0_0.SCRATCH_REG7), AM_VERSION);
    assert!(m.clear_injections());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn missing_firmware_fails_before_anything_is_written() {
    let m = mock();
    let mut some = common::all_files();
    some.retain(|(n, _)| *n != files::MEC);
    let dir = common::dir_with("boot-missing", &some);
    let dev = open(&m);
    let regs = m.pci_registers(0).unwrap();
    regs.take_writes();
    let e = dev.boot(&opts(&dir)).unwrap_err();
    assert_eq!(
        e,
        AmError::FirmwareMissing {
            name: files::MEC.to_string(),
            tried: vec![dir.join(files::MEC)],
        }
    );
    assert!(regs.writes().is_empty(), "no register written: {:?}", regs.writes());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_rlc_autoload_that_never_completes_is_a_timeout() {
    let m = mock();
    let dir = firmware("rlc");
    {
        let dev = open(&m);
        dev.boot(&opts(&dir)).unwrap().fini().unwrap();
    }
    // The next (partial) boot finds the RLC not done: GFX waits out its bound.
    let dev = open(&m);
    let regs = m.pci_registers(0).unwrap();
    regs.set(addr(&dev, Ip::Gc, gc::V11_0_0.RLC_RLCS_BOOTLOAD_STATUS), 0);
    let o = BootOptions {
        gfx_timeout: Duration::from_millis(50),
        ..opts(&dir)
    };
    let e = dev.boot(&o).unwrap_err();
    assert!(
        matches!(
            e,
            AmError::Timeout {
                step: "GFX: RLC autoload",
                reg: "RLC_RLCS_BOOTLOAD_STATUS",
                timeout_ms: 50,
                ..
            }
        ),
        "{e}"
    );
    // Nothing the next boot reads changed: it is partial again.
    assert!(dev.boot_state().unwrap().partial_boot(false));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_file_cut_wrongly_fails_the_boot_with_the_psps_status() {
    // The transport reads an SDMA file whose control thread offset is 16 bytes early
    // (a valid header, a wrong cut); the mock's PSP knows the real file.
    let m = mock();
    let mut files = common::all_files();
    let sdma = &mut files.iter_mut().find(|(n, _)| *n == files::SDMA).unwrap().1;
    let ctl = u32::from_le_bytes(sdma[48..52].try_into().unwrap());
    sdma[48..52].copy_from_slice(&(ctl - 16).to_le_bytes());
    let dir = common::dir_with("boot-wrong-cut", &files);
    let dev = open(&m);
    let e = dev.boot(&opts(&dir)).unwrap_err();
    assert_eq!(
        e,
        AmError::Psp {
            step: "LOAD_IP_FW GFX_FW_TYPE_SDMA_UCODE_TH1".into(),
            status: amd_mockgpu::pci::psp::STATUS_BAD_IMAGE,
        }
    );
    let loaded = m
        .pci_registers(0)
        .unwrap()
        .with_block::<MockPsp, _>(|p| p.firmware.iter().map(|f| f.fw_type).collect::<Vec<_>>())
        .unwrap();
    assert_eq!(loaded, [psp::GFX_FW_TYPE_SMU, psp::GFX_FW_TYPE_SDMA_UCODE_TH0]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The mock PSP answered every bootloader load and ring command with status 0 and took
/// `images` firmware images (the SMU's and the others).
fn assert_psp_took_every_load(m: &MockSys, images: usize) {
    let regs = m.pci_registers(0).unwrap();
    let (bl, cmds, loaded) = regs
        .with_block::<MockPsp, _>(|p| (p.bootloader.clone(), p.commands.clone(), p.firmware.len()))
        .unwrap();
    assert!(!bl.is_empty() && bl.iter().all(|l| l.status == 0), "{bl:?}");
    assert!(cmds.iter().all(|c| c.status == 0), "{cmds:?}");
    assert_eq!(loaded, images, "the SMU's image and the others");
}

#[test]
fn a_cold_boot_on_the_installed_firmware() {
    let installed = amd_mockgpu::pci::catalogue::installed_dir();
    let Ok(dir) = installed.inspect_err(|why| println!("skipped: {why}")) else {
        return;
    };
    // The real files are both what the transport reads (from the host directory, or
    // from the mock's firmware directory, which now serves them) and what the mock's
    // PSP checks every load against.
    let m = Arc::new(MockSys::new(
        MockConfig {
            mode: ExecMode::Inline,
            ..MockConfig::pci(1)
        }
        .pci_firmware_dir(&dir),
    ));
    assert_eq!(m.pci_firmware().problems(), &[] as &[String]);
    let sources = [dir.clone(), PathBuf::from(amd_mockgpu::pci::firmware::DIR)];
    for (i, source) in sources.iter().enumerate() {
        let dev = open(&m);
        // The second boot is forced full (AM_RESET=1: a mode1 reset first).
        let o = BootOptions {
            reset: i > 0,
            ..opts(source)
        };
        let mut b = dev.boot(&o).unwrap_or_else(|e| panic!("{}: {e}", source.display()));
        assert_eq!(b.kind, BootKind::Full { mode1_reset: i > 0 });
        assert_psp_took_every_load(&m, 23);
        // The GPU runs: a fence through the compute ring.
        let mut c = compute_ring(&mut b);
        assert_eq!(fence(&mut b, &mut c, 0x600d).u32(0), 0x600d);
        b.fini().unwrap();
    }
}

/// A gfx1201 on its installed firmware (Debian's `firmware-amd-graphics` 20250410 has
/// the files; `AM_FIRMWARE_DIR` may name another directory): the transport's cuts are
/// checked by the mock's PSP against its own cuts of the same files, and a kernel runs.
#[test]
fn a_gfx1201_cold_boot_on_the_installed_firmware() {
    let files = amd_am::firmware::FirmwareFiles::navi48();
    let installed = amd_mockgpu::pci::catalogue::installed_dir_of(&files);
    let Ok(dir) = installed.inspect_err(|why| println!("skipped: {why}")) else {
        return;
    };
    let m = Arc::new(MockSys::new(
        MockConfig {
            mode: ExecMode::Inline,
            pci: vec![PciProfile::navi48()],
            ..MockConfig::pci(0)
        }
        .pci_firmware_dir(&dir),
    ));
    let dev = open(&m);
    let mut b = dev.boot(&opts(&dir)).unwrap();
    assert_eq!(b.kind, BootKind::Full { mode1_reset: false });
    assert_psp_took_every_load(&m, 16);
    let mut c = compute_ring(&mut b);
    assert_eq!(fence_for(GfxTarget::Gfx12, &mut b, &mut c, 0x600d).u32(0), 0x600d);
    assert!(run_vadd(&mut b, &mut c, GfxTarget::Gfx12, "gfx1201/vadd.hsaco"));
    b.fini().unwrap();
}

/// A gfx1201 (GC 12.0.1, MP 14.0.3, SDMA 7.0.1) booted over the same path, with the
/// differences tinygrad 0.14 and Linux 6.12 make for it: its own firmware files
/// (SDMA 3.0 and RLC 2.2 headers, one PFP/ME stack and two MEC stacks), the TOS SPL
/// table from the sOS file's SPL component, no `SETUP_TMR` (the PSP's TMR is set up
/// at boot), two MEC pipes, no `TCP_CNTL` golden bit, the doorbells routed in NBIF,
/// SDMA 7's registers, and GC 12's page-table entries (the mock's walker reads them:
/// every ring below runs through them).
#[test]
fn a_gfx1201_boots_as_tinygrad_0_14_and_linux_boot_it() {
    let m = mock_gfx1201();
    let dev = open(&m);
    assert_eq!(dev.regs().gc_gen(), amd_am::ip::GcGen::Gfx12);
    assert_eq!(dev.regs().tables().gc.version, [12, 0, 0]);
    assert_eq!(dev.firmware_files().unwrap().rlc, "gc_12_0_1_rlc.bin");
    m.pci_registers(0).unwrap().take_writes();
    let mut b = dev.boot(&mock_firmware_opts()).unwrap();
    assert_eq!(b.kind, BootKind::Full { mode1_reset: false });
    let regs = m.pci_registers(0).unwrap();

    // The PSP: the gfx1201 files' images, in load order, and no SETUP_TMR.
    let (loaded, cmds, bootloader) = regs
        .with_block::<MockPsp, _>(|p| (p.firmware.clone(), p.commands.clone(), p.bootloader.clone()))
        .unwrap();
    let want: Vec<(u32, Vec<u8>)> = amd_mockgpu::pci::firmware::IMAGES_GFX1201
        .iter()
        .map(|&(t, tag, n)| (t, common::blob(tag, n)))
        .collect();
    let got: Vec<(u32, Vec<u8>)> = loaded.iter().map(|f| (f.fw_type, f.data.clone())).collect();
    assert_eq!(got, want);
    assert!(cmds.iter().all(|c| c.cmd_id != psp::GFX_CMD_ID_SETUP_TMR), "{cmds:?}");
    assert!(cmds.iter().any(|c| c.cmd_id == psp::GFX_CMD_ID_LOAD_TOC));
    assert_eq!(cmds.last().map(|c| c.cmd_id), Some(psp::GFX_CMD_ID_AUTOLOAD_RLC));
    assert!(cmds.iter().all(|c| c.status == 0), "{cmds:?}");
    let spl = bootloader
        .iter()
        .find(|l| l.command == psp::PSP_BL__LOAD_TOS_SPL_TABLE)
        .expect("the TOS SPL table was loaded");
    assert_eq!(spl.status, 0);

    // GFX: two MEC pipes active, pipes 2-3 untouched; PFP/ME and MEC started from
    // the gfx1201 files; no TCP_CNTL golden bit; the GC and SDMA doorbells routed.
    let g = dev.regs().tables().gc;
    let n = dev.regs().tables().nbio;
    let r = |ip, x| reg(&m, &dev, ip, x);
    let mec = r(Ip::Gc, g.CP_MEC_RS64_CNTL);
    assert_eq!(mec & gc::CP_MEC_RS64_CNTL__MEC_HALT_MASK, 0);
    assert_eq!(mec & 0x3c00_0000, 0x0c00_0000, "pipes 0-1 active: {mec:#x}");
    let mec_pc = u64::from(r(Ip::Gc, g.CP_MEC_RS64_PRGRM_CNTR_START))
        | u64::from(r(Ip::Gc, g.CP_MEC_RS64_PRGRM_CNTR_START_HI)) << 32;
    assert_eq!(mec_pc, common::MEC_START >> 2);
    let log = regs.writes();
    let tcp = addr(&dev, Ip::Gc, g.TCP_CNTL);
    assert!(log.iter().all(|w| w.reg != tcp), "TCP_CNTL written on GC 12");
    assert_eq!(r(Ip::Nbio, n.GDC_S2A0_S2A_DOORBELL_ENTRY_0_CTRL.unwrap()), 0x3000_0007);
    assert_eq!(r(Ip::Nbio, n.GDC_S2A0_S2A_DOORBELL_ENTRY_3_CTRL.unwrap()), 0x3000_000d);
    // Enabled, AWID 0xe, offset 0x200 (sDMA_ENGINE0 × 2), 4 slots, AWADDR 3.
    assert_eq!(r(Ip::Nbio, n.GDC_S2A0_S2A_DOORBELL_ENTRY_2_CTRL.unwrap()), 0x3009_001d);
    // SDMA 7: SDMA0_MCU_CNTL released, no semaphore timer (GC 12 has none).
    assert_eq!(g.SDMA0_F32_CNTL.name, "SDMA0_MCU_CNTL");
    assert_eq!(r(Ip::Gc, g.SDMA0_F32_CNTL) & gc::SDMA0_F32_CNTL__HALT_MASK, 0);
    assert_eq!(r(Ip::Gc, g.SCRATCH_REG7), AM_VERSION);

    // The rings: a fence on the compute ring (pipe 0) and an SDMA copy.
    let t12 = GfxTarget::Gfx12;
    let mut c = compute_ring(&mut b);
    let sig = fence_for(t12, &mut b, &mut c, 0x600d);
    assert_eq!(sig.u32(0), 0x600d);
    // vadd built for gfx1201, on the RDNA4 interpreter.
    assert!(run_vadd(&mut b, &mut c, t12, "gfx1201/vadd.hsaco"));
    let mut s = sdma_ring(&mut b);
    // 2 MiB buffers: mapped by leaves above the PTB level, which GC 12 marks with
    // bit 63 (a GC 11 encoding would send the walker into the page as a table).
    let len = 0x20_0000u64;
    let huge = |gmc: &mut Gmc<'_>| {
        let va = gmc.alloc_vaddr(len, len).unwrap();
        let pa = gmc.palloc(len, len, true, false).unwrap();
        gmc.map_range(va, &[(pa, len)], MapFlags::default()).unwrap()
    };
    let src = Mem {
        dev: &dev,
        map: huge(&mut b.gmc),
    };
    let dst = Mem {
        dev: &dev,
        map: huge(&mut b.gmc),
    };
    let done = Mem::new(&mut b.gmc, 0x1000);
    let pattern: Vec<u8> = (0..len).map(|i| (i * 13 % 241) as u8).collect();
    src.write(0, &pattern);
    let mut w = Vec::new();
    CopyLinear::new(dst.va(), src.va(), len as u32)
        .unwrap()
        .encode(t12, &mut w);
    Fence::new(done.va(), 5).encode(t12, &mut w);
    s.submit(&w);
    wait_for("the gfx1201 SDMA fence", || done.u32(0) == 5);
    let mut got = vec![0u8; len as usize];
    dst.read(0, &mut got);
    assert!(got == pattern, "the copy arrived");

    // fini: SDMA halted through SDMA0_MCU_CNTL, the MEC's two pipes halted.
    b.fini().unwrap();
    assert_ne!(r(Ip::Gc, g.SDMA0_F32_CNTL) & gc::SDMA0_F32_CNTL__HALT_MASK, 0);
    assert!(dev.boot_state().unwrap().partial_boot(false));
}

/// A compute queue's pipe must be one the GC has: GC 12's MEC has two.
#[test]
fn a_gfx1201_compute_queue_on_a_third_pipe_is_refused() {
    let m = mock_gfx1201();
    let dev = open(&m);
    let mut b = dev.boot(&mock_firmware_opts()).unwrap();
    let ring = Mem::new(&mut b.gmc, RING_SIZE);
    let desc = ComputeRingDesc {
        ring: ring.va(),
        ring_size: RING_SIZE,
        rptr: ring.va(),
        wptr: ring.va() + 0x10,
        eop: ring.va(),
        eop_size: 0x1000,
        doorbell: AMDGPU_NAVI10_DOORBELL_MEC_RING0,
        pipe: 2,
        queue: 0,
    };
    let e = b.gfx.setup_ring(&mut b.gmc, &desc).unwrap_err();
    assert_eq!(
        e,
        AmError::RingIndex {
            ring: "compute",
            field: "pipe",
            value: 2,
            max: 1
        }
    );
}

/// A gfx1201 left running (no fini) is reset through SMU 14's debug mailbox
/// (`DEBUGSMC_MSG_Mode1Reset`): SMU 14 has no `PPSMC_MSG_Mode1Reset`.
#[test]
fn a_gfx1201_reboot_without_fini_resets_through_the_debug_mailbox() {
    let m = mock_gfx1201();
    {
        let dev = open(&m);
        let mut b = dev.boot(&mock_firmware_opts()).unwrap();
        let mut c = compute_ring(&mut b);
        fence_for(GfxTarget::Gfx12, &mut b, &mut c, 1);
    }
    let dev = open(&m);
    let mut b = dev.boot(&mock_firmware_opts()).unwrap();
    assert_eq!(b.kind, BootKind::Full { mode1_reset: true });
    let regs = m.pci_registers(0).unwrap();
    assert_eq!(regs.mode1_resets(), 1);
    let msgs = regs.with_block::<MockSmu, _>(|s| s.messages.clone()).unwrap();
    // The reset cleared the log: what is left is this boot's, none a normal Mode1Reset.
    assert!(
        msgs.iter()
            .all(|x| x.msg != amd_am::regs::generated::smu::PPSMC_MSG_Mode1Reset)
    );
    let mut c = compute_ring(&mut b);
    fence_for(GfxTarget::Gfx12, &mut b, &mut c, 2);
    b.fini().unwrap();
    // And the SMU 14 mock refuses the normal mailbox's Mode1Reset.
    let smu = Smu::new(&dev, &mut Gmc::new(&dev).unwrap(), false).unwrap();
    let e = smu
        .send(
            amd_am::regs::generated::smu::PPSMC_MSG_Mode1Reset,
            0,
            true,
            Duration::from_millis(100),
        )
        .unwrap_err();
    assert!(e.to_string().contains("Mode1Reset"), "{e}");
    assert_eq!(regs.mode1_resets(), 1);
}
