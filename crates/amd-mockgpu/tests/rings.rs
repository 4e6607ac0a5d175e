//! Rings bound through the mock PCI GPU's compute HQD registers and SDMA ring
//! registers, programmed in the order tinygrad 0.10.1's `AM_GFX.setup_ring` and
//! `AM_SDMA.setup_ring` use, and consumed by the mock's PM4 and SDMA engines when
//! the BAR 2 doorbell is written: a committed kernel dispatched with a signal and an
//! end-of-pipe interrupt, an SDMA copy with a fence and a trap, rings that are
//! disabled, unbound or dequeued, rings whose memory is unmapped (a GMC fault), and
//! registers that cannot describe a ring.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use amd_kfd::sys::Sys;
use amd_mockgpu::pci::RingKey;
use amd_mockgpu::pci::gmc::{Hub, PTE_FRAG_SHIFT};
use amd_mockgpu::pci::ih::IvEntry;
use amd_mockgpu::pci::model::FB_LOCATION_BASE;
use amd_mockgpu::pci::regs::AmReg;
use amd_mockgpu::pci::regs::generated::doorbell::{
    AMDGPU_NAVI10_DOORBELL_MEC_RING0, AMDGPU_NAVI10_DOORBELL_sDMA_ENGINE0,
};
use amd_mockgpu::pci::regs::generated::ih::{
    GFX_11_0_0__SRCID__CP_EOP_INTERRUPT, GFX_11_0_0__SRCID__SDMA_TRAP, GFX_11_0_0__SRCID__UTCL2_FAULT,
    SOC21_IH_CLIENTID_GFX, SOC21_IH_CLIENTID_GRBM_CP, SOC21_IH_CLIENTID_VMC, VMC_1_0__SRCID__VM_FAULT,
};
use amd_mockgpu::pci::regs::generated::vm::{
    AMDGPU_PDE_PTE, AMDGPU_PTE_EXECUTABLE, AMDGPU_PTE_READABLE, AMDGPU_PTE_VALID, AMDGPU_PTE_WRITEABLE, AMDGPU_VM_PDB0,
};
use amd_mockgpu::pci::regs::generated::{gc, mmhub, osssys};
use amd_mockgpu::{ExecMode, MockConfig, MockSys, QueueStatus};
use amd_packets::GfxTarget;
use amd_packets::pm4::ReleaseMem;
use amd_packets::pm4::recipes::Signal;
use amd_packets::sdma::{CopyLinear, Fence, Trap};
use amd_packets::testing::linear_dispatch;
use amd_regs::discovery::hw_id;
use common::{MIB, Regs, map_resource};

const T: GfxTarget = GfxTarget::Gfx11;
/// tinygrad's `va_allocator` base.
const VA: u64 = 0x7F00_0000_0000;
/// The page-table root (a PDB0 table of 2 MiB pages) in VRAM.
const ROOT: u64 = 16 * MIB;
/// Where the mapped window of VA lands in VRAM, and its size (64 × 2 MiB).
const DATA: u64 = 32 * MIB;
const MAPPED: u64 = 128 * MIB;
/// The IH ring and its write-back slot, in VRAM.
const IH_RING: u64 = 8 * MIB;
const IH_WB: u64 = 9 * MIB;
const IH_LOG2: u32 = 12;
/// The memory controller's address of VRAM offset 0.
const MC: u64 = (FB_LOCATION_BASE as u64) << 24;

/// Layout of the mapped window (offsets from `VA`).
const C_RING: u64 = 0;
const S_RING: u64 = 0x10000;
const C_GART: u64 = 0x20000;
const S_GART: u64 = 0x20100;
const EOP: u64 = 0x30000;
const SIG: u64 = 0x40000;
const KERNARG: u64 = 0x50000;
const IMAGE: u64 = 4 * MIB;
const BUF: u64 = 16 * MIB;

fn field(v: u32, mask: u32) -> u32 {
    (v << mask.trailing_zeros()) & mask
}

struct Gpu {
    m: MockSys,
    r: Regs,
    bar0: usize,
    bell: usize,
}

/// A ring as the host fills it: monotonic put pointer in dwords.
struct Ring {
    va: u64,
    dwords: u64,
    put: u64,
    doorbell: u32,
    sdma: bool,
}

impl Gpu {
    fn new(mode: ExecMode) -> Gpu {
        let m = MockSys::new(MockConfig {
            mode,
            ..MockConfig::pci(1)
        });
        let r = Regs::map(&m);
        let bar0 = map_resource(&m, "resource0", 256 * MIB);
        let bell = map_resource(&m, "resource2", 2 * MIB);
        let g = Gpu { m, r, bar0, bell };
        // `set_entry` for 64 2 MiB pages at the PDB0 level, readable, writeable,
        // executable, fragment 9 (2 MiB).
        for i in 0..MAPPED / (2 * MIB) {
            let pa = DATA + i * 2 * MIB;
            let e = pa
                | AMDGPU_PTE_VALID
                | AMDGPU_PTE_READABLE
                | AMDGPU_PTE_WRITEABLE
                | AMDGPU_PTE_EXECUTABLE
                | AMDGPU_PDE_PTE
                | (9 << PTE_FRAG_SHIFT);
            g.vram_write(ROOT + i * 8, &e.to_le_bytes());
        }
        g.enable_vm(Hub::Gc);
        g.enable_vm(Hub::Mm);
        g.program_ih();
        g
    }

    fn gc(&self, r: AmReg, v: u32) {
        self.r.wr(hw_id::GC, r, v)
    }

    fn vram_write(&self, off: u64, data: &[u8]) {
        assert!(off + data.len() as u64 <= 256 * MIB);
        // SAFETY: inside the live 256 MiB BAR 0 mapping (checked above); plain bytes.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), (self.bar0 + off as usize) as *mut u8, data.len()) };
    }
    fn vram_read(&self, off: u64, out: &mut [u8]) {
        assert!(off + out.len() as u64 <= 256 * MIB);
        // SAFETY: as in `vram_write`.
        unsafe { std::ptr::copy_nonoverlapping((self.bar0 + off as usize) as *const u8, out.as_mut_ptr(), out.len()) };
    }
    /// The VRAM offset of mapped GPU address `va`.
    fn at(va: u64) -> u64 {
        assert!(va >= VA && va - VA < MAPPED, "{va:#x} is outside the mapped window");
        DATA + (va - VA)
    }
    fn write(&self, va: u64, data: &[u8]) {
        self.vram_write(Self::at(va), data)
    }
    fn u32_at(&self, va: u64) -> u32 {
        let mut b = [0; 4];
        self.vram_read(Self::at(va), &mut b);
        u32::from_le_bytes(b)
    }
    fn u64_at(&self, va: u64) -> u64 {
        let mut b = [0; 8];
        self.vram_read(Self::at(va), &mut b);
        u64::from_le_bytes(b)
    }

    /// `enable_vm_addressing` over `[VA, VA + 1 GiB)` with the PDB0 root (depth 1).
    fn enable_vm(&self, hub: Hub) {
        let cntl = 1 | ((3 - AMDGPU_VM_PDB0 as u32) << 1);
        self.r.enable_vm(hub, ROOT, VA, VA + (1 << 30) - 1, cntl);
    }

    /// `AM_IH` ring 0 with write-back.
    fn program_ih(&self) {
        let w = |r, v| self.r.wr(hw_id::OSSSYS, r, v);
        let ring = MC + IH_RING;
        w(osssys::V6_0_0.IH_RB_BASE, (ring >> 8) as u32);
        w(osssys::V6_0_0.IH_RB_BASE_HI, (ring >> 40) as u32);
        let cntl = field(4, osssys::IH_RB_CNTL__MC_SPACE_MASK)
            | field(IH_LOG2, osssys::IH_RB_CNTL__RB_SIZE_MASK)
            | osssys::IH_RB_CNTL__WPTR_WRITEBACK_ENABLE_MASK;
        w(osssys::V6_0_0.IH_RB_WPTR_ADDR_LO, (MC + IH_WB) as u32);
        w(osssys::V6_0_0.IH_RB_WPTR_ADDR_HI, ((MC + IH_WB) >> 32) as u32);
        w(osssys::V6_0_0.IH_RB_WPTR, 0);
        w(osssys::V6_0_0.IH_RB_RPTR, 0);
        w(
            osssys::V6_0_0.IH_RB_CNTL,
            cntl | osssys::IH_RB_CNTL__RB_ENABLE_MASK | osssys::IH_RB_CNTL__ENABLE_INTR_MASK,
        );
    }

    /// Every vector in the IH ring so far.
    fn vectors(&self) -> Vec<IvEntry> {
        let wptr = self.r.rd(hw_id::OSSSYS, osssys::V6_0_0.IH_RB_WPTR) & osssys::IH_RB_WPTR__OFFSET_MASK;
        (0..u64::from(wptr) / 32)
            .map(|i| {
                let mut b = [0u8; 32];
                self.vram_read(IH_RING + i * 32, &mut b);
                let mut dw = [0u32; 8];
                for (d, c) in dw.iter_mut().zip(b.chunks_exact(4)) {
                    *d = u32::from_le_bytes(c.try_into().unwrap());
                }
                IvEntry::decode(&dw).0
            })
            .collect()
    }

    /// `AM_GFX.setup_ring` for me 1, pipe 0, queue 0: the MQD image's registers
    /// `CP_MQD_BASE_ADDR ..= CP_HQD_PQ_WPTR_HI` in order, then `CP_HQD_ACTIVE`.
    fn setup_compute(&self, ring: u64, bytes: u64, doorbell: Option<u32>) -> Ring {
        let dwords = bytes / 4;
        let mut vals = std::collections::BTreeMap::new();
        let mut set = |r: AmReg, v: u32| {
            vals.insert(self.r.addr(hw_id::GC, r), v);
        };
        set(gc::V11_0_0.CP_MQD_BASE_ADDR, (VA + 0x60000) as u32);
        set(gc::V11_0_0.CP_MQD_BASE_ADDR_HI, ((VA + 0x60000) >> 32) as u32);
        set(gc::V11_0_0.CP_HQD_PQ_BASE, (ring >> 8) as u32);
        set(gc::V11_0_0.CP_HQD_PQ_BASE_HI, (ring >> 40) as u32);
        set(gc::V11_0_0.CP_HQD_PQ_RPTR_REPORT_ADDR, (VA + C_GART) as u32);
        set(gc::V11_0_0.CP_HQD_PQ_RPTR_REPORT_ADDR_HI, ((VA + C_GART) >> 32) as u32);
        set(gc::V11_0_0.CP_HQD_PQ_WPTR_POLL_ADDR, (VA + C_GART + 0x10) as u32);
        set(
            gc::V11_0_0.CP_HQD_PQ_WPTR_POLL_ADDR_HI,
            ((VA + C_GART + 0x10) >> 32) as u32,
        );
        let db = doorbell.map_or(0, |d| {
            field(d * 2, gc::CP_HQD_PQ_DOORBELL_CONTROL__DOORBELL_OFFSET_MASK)
                | gc::CP_HQD_PQ_DOORBELL_CONTROL__DOORBELL_EN_MASK
        });
        set(gc::V11_0_0.CP_HQD_PQ_DOORBELL_CONTROL, db);
        // queue_size = (ring_size // 4).bit_length() - 2, rptr_block_size 5, unord_dispatch.
        set(gc::V11_0_0.CP_HQD_PQ_CONTROL, (dwords.ilog2() - 1) | 5 << 8 | 1 << 28);
        set(gc::V11_0_0.CP_HQD_EOP_BASE_ADDR, ((VA + EOP) >> 8) as u32);
        set(gc::V11_0_0.CP_HQD_EOP_BASE_ADDR_HI, ((VA + EOP) >> 40) as u32);
        set(
            gc::V11_0_0.CP_HQD_EOP_CONTROL,
            field((4096u32 / 4).ilog2() - 1, gc::CP_HQD_EOP_CONTROL__EOP_SIZE_MASK),
        );
        self.gc(gc::V11_0_0.GRBM_GFX_CNTL, field(1, gc::GRBM_GFX_CNTL__MEID_MASK));
        let first = self.r.addr(hw_id::GC, gc::V11_0_0.CP_MQD_BASE_ADDR);
        let last = self.r.addr(hw_id::GC, gc::V11_0_0.CP_HQD_PQ_WPTR_HI);
        for a in first..=last {
            self.r.mmio.write32(a, vals.get(&a).copied().unwrap_or(0));
        }
        self.gc(gc::V11_0_0.CP_HQD_ACTIVE, 1);
        self.gc(gc::V11_0_0.GRBM_GFX_CNTL, 0);
        Ring {
            va: ring,
            dwords,
            put: 0,
            doorbell: doorbell.unwrap_or(AMDGPU_NAVI10_DOORBELL_MEC_RING0),
            sdma: false,
        }
    }

    /// `AM_SDMA.setup_ring` for SDMA0 queue 0 (`enable`: `RB_CNTL.RB_ENABLE`).
    fn setup_sdma(&self, ring: u64, bytes: u64, enable: bool) -> Ring {
        let pair = |lo: AmReg, hi: AmReg, v: u64| {
            self.gc(lo, v as u32);
            self.gc(hi, (v >> 32) as u32);
        };
        let d = AMDGPU_NAVI10_DOORBELL_sDMA_ENGINE0;
        self.gc(gc::V11_0_0.SDMA0_QUEUE0_MINOR_PTR_UPDATE, 1);
        pair(gc::V11_0_0.SDMA0_QUEUE0_RB_RPTR, gc::V11_0_0.SDMA0_QUEUE0_RB_RPTR_HI, 0);
        pair(gc::V11_0_0.SDMA0_QUEUE0_RB_WPTR, gc::V11_0_0.SDMA0_QUEUE0_RB_WPTR_HI, 0);
        pair(
            gc::V11_0_0.SDMA0_QUEUE0_RB_BASE,
            gc::V11_0_0.SDMA0_QUEUE0_RB_BASE_HI,
            ring >> 8,
        );
        pair(
            gc::V11_0_0.SDMA0_QUEUE0_RB_RPTR_ADDR_LO,
            gc::V11_0_0.SDMA0_QUEUE0_RB_RPTR_ADDR_HI,
            VA + S_GART,
        );
        pair(
            gc::V11_0_0.SDMA0_QUEUE0_RB_WPTR_POLL_ADDR_LO,
            gc::V11_0_0.SDMA0_QUEUE0_RB_WPTR_POLL_ADDR_HI,
            VA + S_GART + 0x10,
        );
        self.gc(
            gc::V11_0_0.SDMA0_QUEUE0_DOORBELL_OFFSET,
            field(d * 2, gc::SDMA0_QUEUE0_DOORBELL_OFFSET__OFFSET_MASK),
        );
        self.gc(
            gc::V11_0_0.SDMA0_QUEUE0_DOORBELL,
            gc::SDMA0_QUEUE0_DOORBELL__ENABLE_MASK,
        );
        self.gc(gc::V11_0_0.SDMA0_QUEUE0_MINOR_PTR_UPDATE, 0);
        let dwords = bytes / 4;
        let cntl = field(dwords.ilog2(), gc::SDMA0_QUEUE0_RB_CNTL__RB_SIZE_MASK)
            | gc::SDMA0_QUEUE0_RB_CNTL__RPTR_WRITEBACK_ENABLE_MASK
            | if enable {
                gc::SDMA0_QUEUE0_RB_CNTL__RB_ENABLE_MASK
            } else {
                0
            };
        self.gc(gc::V11_0_0.SDMA0_QUEUE0_RB_CNTL, cntl);
        Ring {
            va: ring,
            dwords,
            put: 0,
            doorbell: d,
            sdma: true,
        }
    }

    /// Copies `words` into the ring and rings doorbell slot `doorbell` (64-bit slot
    /// index) with the new write pointer, as `AMDComputeQueue._submit` does.
    fn submit_at(&self, r: &mut Ring, words: &[u32], doorbell: u32) {
        for &w in words {
            if Self::in_window(r.va) {
                self.write(r.va + (r.put % r.dwords) * 4, &w.to_le_bytes());
            }
            r.put += 1;
        }
        let value = if r.sdma { r.put * 4 } else { r.put };
        let gart = if r.sdma { S_GART } else { C_GART };
        self.write(VA + gart + 0x10, &value.to_le_bytes());
        self.ring_doorbell(doorbell, value);
    }

    fn submit(&self, r: &mut Ring, words: &[u32]) {
        let d = r.doorbell;
        self.submit_at(r, words, d)
    }

    fn ring_doorbell(&self, slot: u32, value: u64) {
        assert!((slot as usize) < (2 << 20) / 8);
        let a = self.bell + slot as usize * 8;
        // SAFETY: slot < 0x40000 (checked above) keeps the 8 bytes inside the live
        // 2 MiB doorbell mapping; 8-aligned.
        unsafe { std::ptr::write_volatile(a as *mut u64, value) };
        self.m.doorbell_written(a);
    }

    fn in_window(va: u64) -> bool {
        va >= VA && va - VA < MAPPED
    }

    fn state(&self, key: RingKey) -> Option<amd_mockgpu::QueueState> {
        self.m.pci_ring_state(0, key)
    }
}

const COMPUTE: RingKey = RingKey::Compute {
    me: 1,
    pipe: 0,
    queue: 0,
};
const SDMA: RingKey = RingKey::Sdma { engine: 0, queue: 0 };

fn wait_for(what: &str, mut f: impl FnMut() -> bool) {
    let t = Instant::now();
    while !f() {
        assert!(t.elapsed() < Duration::from_secs(20), "timed out waiting for {what}");
        std::thread::sleep(Duration::from_micros(100));
    }
}

fn words(f: impl FnOnce(&mut Vec<u32>)) -> Vec<u32> {
    let mut v = Vec::new();
    f(&mut v);
    v
}

/// Loads a committed kernel's PT_LOAD segments at `base`; returns its kernel
/// descriptor's code address and `COMPUTE_PGM_RSRC1..3`, and its code properties.
fn load_kernel(g: &Gpu, base: u64, file: &str, name: &str) -> (u64, [u32; 3], u16) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/kernels")
        .join(file);
    let bytes = std::fs::read(&path).unwrap();
    let elf = goblin::elf::Elf::parse(&bytes).unwrap();
    for ph in elf
        .program_headers
        .iter()
        .filter(|p| p.p_type == goblin::elf::program_header::PT_LOAD)
    {
        let off = ph.p_offset as usize;
        g.write(base + ph.p_vaddr, &bytes[off..off + ph.p_filesz as usize]);
    }
    let kd_name = format!("{name}.kd");
    let kd = elf
        .syms
        .iter()
        .find(|s| elf.strtab.get_at(s.st_name) == Some(kd_name.as_str()))
        .unwrap_or_else(|| panic!("{file}: no {kd_name}"));
    let kd_va = base + kd.st_value;
    let entry = g.u64_at(kd_va + 16) as i64;
    let code = kd_va.wrapping_add_signed(entry);
    let rsrc3 = g.u32_at(kd_va + 44);
    let rsrc1 = g.u32_at(kd_va + 48);
    let rsrc2 = g.u32_at(kd_va + 52);
    let props = g.u32_at(kd_va + 56) as u16;
    (code, [rsrc1, rsrc2, rsrc3], props)
}

#[test]
fn a_kernel_runs_on_a_compute_ring_bound_through_the_hqd() {
    for mode in [ExecMode::Inline, ExecMode::Threaded] {
        let g = Gpu::new(mode);
        let mut c = g.setup_compute(VA + C_RING, 0x10000, Some(AMDGPU_NAVI10_DOORBELL_MEC_RING0));
        let rings = g.m.pci_rings(0);
        assert_eq!(rings.len(), 1, "{mode:?}: one ring bound");
        let b = rings[0].1.binding.clone().unwrap();
        assert_eq!(
            (b.base, b.dwords, b.doorbell, b.rptr_addr),
            (
                VA + C_RING,
                0x4000,
                Some(u64::from(AMDGPU_NAVI10_DOORBELL_MEC_RING0) * 8),
                Some(VA + C_GART)
            )
        );

        let (code, rsrc, props) = load_kernel(&g, VA + IMAGE, "vadd.hsaco", "vadd");
        // kernarg segment pointer only: the user SGPRs are the kernarg address.
        assert_eq!(props & 0b1111110, 0b1000, "vadd asks for the kernarg pointer only");
        let n = 1000u32;
        let (a, bb, cc) = (VA + BUF, VA + BUF + 0x1000, VA + BUF + 0x2000);
        for i in 0..n as u64 {
            g.write(a + i * 4, &(i as f32).to_le_bytes());
            g.write(bb + i * 4, &(2.5 * i as f32).to_le_bytes());
        }
        for i in 0..=n as u64 {
            g.write(cc + i * 4, &(-1.0f32).to_le_bytes());
        }
        let mut args = Vec::new();
        for p in [a, bb, cc] {
            args.extend_from_slice(&p.to_le_bytes());
        }
        args.extend_from_slice(&n.to_le_bytes());
        g.write(VA + KERNARG, &args);
        let ka = VA + KERNARG;
        let user = [ka as u32, (ka >> 32) as u32];
        let mailbox = VA + SIG + 0x100;
        let ctx = 0x77;
        g.submit(
            &mut c,
            &words(|b| {
                linear_dispatch(code, rsrc, &user, n).encode(T, b).unwrap();
                Signal {
                    address: VA + SIG,
                    value: 5,
                    event: Some((mailbox, ctx)),
                }
                .encode(T, b);
            }),
        );
        wait_for("the compute signal", || g.u32_at(VA + SIG) == 5);
        for i in 0..n as u64 {
            let got = f32::from_le_bytes(g.u32_at(cc + i * 4).to_le_bytes());
            assert_eq!(got, 3.5 * i as f32, "{mode:?}: c[{i}]");
        }
        // The kernel stops at n: the element after is untouched.
        assert_eq!(f32::from_le_bytes(g.u32_at(cc + 4000).to_le_bytes()), -1.0);
        wait_for("the read pointer", || g.u64_at(VA + C_GART) == c.put);
        let st = g.state(COMPUTE).unwrap();
        assert_eq!(
            (st.read_ptr, st.status, st.counters.dispatches),
            (c.put, QueueStatus::Running, 1)
        );
        assert_eq!(g.u32_at(mailbox), ctx);
        // The interrupts of the two RELEASE_MEMs (the signal's, context 0, then the
        // event's): CP end-of-pipe vectors for me 1 pipe 0 queue 0, the context in
        // src_data[0].
        wait_for("the EOP vectors", || g.vectors().len() == 2);
        let v = g.vectors();
        for (e, want) in v.iter().zip([0, ctx]) {
            assert_eq!(
                (e.client_id as u32, e.src_id as u32, e.ring_id, e.src_data[0]),
                (
                    SOC21_IH_CLIENTID_GRBM_CP,
                    GFX_11_0_0__SRCID__CP_EOP_INTERRUPT,
                    1 << 2,
                    want
                )
            );
        }
        // The dispatch went through the GC hub's page tables: its TLB holds them.
        let walks =
            g.m.pci_registers(0)
                .unwrap()
                .with_gmc(amd_mockgpu::pci::gmc::Hub::Gc, |h| h.walks);
        assert!(walks.unwrap() > 0);
    }
}

#[test]
fn sdma_copies_and_fences_on_a_ring_bound_through_the_sdma_registers() {
    for mode in [ExecMode::Inline, ExecMode::Threaded] {
        let g = Gpu::new(mode);
        let mut s = g.setup_sdma(VA + S_RING, 0x10000, true);
        // 3 MiB: longer than a slice, so it runs with the driver lock released.
        let len = 3 * MIB;
        let (src, dst) = (VA + BUF, VA + BUF + 4 * MIB);
        let pattern: Vec<u8> = (0..len).map(|i| (i * 7 % 251) as u8).collect();
        g.write(src, &pattern);
        let mut cmds = Vec::new();
        let mut done = 0;
        while done < len {
            let n = (len - done).min(4 * MIB - 0x1000);
            CopyLinear::new(dst + done, src + done, n as u32)
                .unwrap()
                .encode(T, &mut cmds);
            done += n;
        }
        Fence::new(VA + SIG + 8, 9).encode(T, &mut cmds);
        Trap::new(0x55).unwrap().encode(T, &mut cmds);
        g.submit(&mut s, &cmds);
        wait_for("the SDMA fence", || g.u32_at(VA + SIG + 8) == 9);
        let mut got = vec![0u8; len as usize];
        g.vram_read(Gpu::at(dst), &mut got);
        assert!(got == pattern, "{mode:?}: the copy arrived");
        wait_for("the SDMA read pointer", || g.u64_at(VA + S_GART) == s.put * 4);
        let st = g.state(SDMA).unwrap();
        assert_eq!(
            (st.read_ptr, st.status, st.counters.bytes),
            (s.put * 4, QueueStatus::Running, len)
        );
        wait_for("the trap vector", || !g.vectors().is_empty());
        let v = g.vectors();
        assert_eq!(
            (v[0].client_id as u32, v[0].src_id as u32, v[0].src_data[0]),
            (SOC21_IH_CLIENTID_GFX, GFX_11_0_0__SRCID__SDMA_TRAP, 0x55)
        );
    }
}

#[test]
fn disabled_unbound_and_dequeued_rings_do_nothing() {
    let g = Gpu::new(ExecMode::Inline);
    let fence = |b: &mut Vec<u32>, v: u32| {
        Fence::new(VA + SIG, v).encode(T, b);
    };
    // SDMA with RB_ENABLE = 0: no ring, the doorbell moves nothing.
    let mut s = g.setup_sdma(VA + S_RING, 0x1000, false);
    assert!(g.m.pci_rings(0).is_empty());
    g.submit(&mut s, &words(|b| fence(b, 1)));
    assert_eq!(g.u32_at(VA + SIG), 0);
    // Enabled now: the ring starts at the registers' read pointer (0) and the
    // doorbell slot was reloaded from RB_WPTR, so the next doorbell runs both.
    let mut s = g.setup_sdma(VA + S_RING, 0x1000, true);
    g.submit(&mut s, &words(|b| fence(b, 2)));
    assert_eq!(g.u32_at(VA + SIG), 2);

    // A compute HQD without DOORBELL_EN: bound, but nothing moves its write pointer.
    let mut c = g.setup_compute(VA + C_RING, 0x1000, None);
    let sig = |b: &mut Vec<u32>, v: u64| {
        ReleaseMem::signal(VA + SIG + 16, v).encode(T, b);
    };
    g.submit(&mut c, &words(|b| sig(b, 3)));
    assert_eq!(g.u32_at(VA + SIG + 16), 0);
    let st = g.state(COMPUTE).unwrap();
    assert_eq!((st.read_ptr, st.status), (0, QueueStatus::Running));

    // With the doorbell: a write at another slot does nothing, the programmed one runs.
    let mut c = g.setup_compute(VA + C_RING, 0x1000, Some(AMDGPU_NAVI10_DOORBELL_MEC_RING0));
    g.submit_at(&mut c, &words(|b| sig(b, 4)), AMDGPU_NAVI10_DOORBELL_MEC_RING0 + 1);
    assert_eq!(g.u32_at(VA + SIG + 16), 0);
    g.ring_doorbell(AMDGPU_NAVI10_DOORBELL_MEC_RING0, c.put);
    assert_eq!(g.u32_at(VA + SIG + 16), 4);

    // A dequeue request unmaps the HQD: it reads back 0 and later doorbells do nothing.
    g.gc(gc::V11_0_0.GRBM_GFX_CNTL, field(1, gc::GRBM_GFX_CNTL__MEID_MASK));
    g.gc(gc::V11_0_0.CP_HQD_DEQUEUE_REQUEST, 2);
    assert_eq!(g.r.rd(hw_id::GC, gc::V11_0_0.CP_HQD_ACTIVE), 0);
    assert_eq!(g.r.rd(hw_id::GC, gc::V11_0_0.CP_HQD_DEQUEUE_REQUEST), 0);
    g.gc(gc::V11_0_0.GRBM_GFX_CNTL, 0);
    assert_eq!(g.m.pci_rings(0).len(), 1, "only the SDMA ring is left");
    g.submit(&mut c, &words(|b| sig(b, 5)));
    assert_eq!(g.u32_at(VA + SIG + 16), 4);
    // The HQD registers are banked: queue 1's bank is not queue 0's.
    g.gc(
        gc::V11_0_0.GRBM_GFX_CNTL,
        field(1, gc::GRBM_GFX_CNTL__MEID_MASK) | field(1, gc::GRBM_GFX_CNTL__QUEUEID_MASK),
    );
    assert_eq!(g.r.rd(hw_id::GC, gc::V11_0_0.CP_HQD_PQ_BASE), 0);
    g.gc(gc::V11_0_0.GRBM_GFX_CNTL, field(1, gc::GRBM_GFX_CNTL__MEID_MASK));
    assert_eq!(
        g.r.rd(hw_id::GC, gc::V11_0_0.CP_HQD_PQ_BASE),
        ((VA + C_RING) >> 8) as u32
    );
}

#[test]
fn a_ring_in_unmapped_memory_faults_through_the_gmc() {
    let g = Gpu::new(ExecMode::Inline);
    // Inside the VM range, past the 64 mapped pages: the PDB0 entry is invalid.
    let hole = VA + 512 * MIB;
    let mut c = g.setup_compute(hole, 0x1000, Some(AMDGPU_NAVI10_DOORBELL_MEC_RING0));
    g.submit(&mut c, &[0; 4]);
    let st = g.state(COMPUTE).unwrap();
    match st.status {
        QueueStatus::Faulted(f) => assert_eq!((f.va, f.write, f.not_present), (hole, false, true)),
        s => panic!("expected a fault, got {s:?}"),
    }
    assert!(st.stop_reason.unwrap().contains(&format!("{hole:#x}")));
    assert_ne!(g.r.rd(hw_id::GC, gc::V11_0_0.GCVM_L2_PROTECTION_FAULT_STATUS), 0);
    assert_eq!(
        g.r.rd(hw_id::GC, gc::V11_0_0.GCVM_L2_PROTECTION_FAULT_ADDR_LO32),
        (hole >> 12) as u32
    );
    let v = g.vectors();
    assert_eq!(
        (v[0].client_id as u32, v[0].src_id as u32, v[0].src_data[0]),
        (
            SOC21_IH_CLIENTID_GFX,
            GFX_11_0_0__SRCID__UTCL2_FAULT,
            (hole >> 12) as u32
        )
    );
    // A stopped queue stays stopped: another doorbell adds no vector.
    g.submit(&mut c, &[0; 4]);
    assert_eq!(g.vectors().len(), 1);

    // SDMA: the MM hub faults, with the VMC's vector.
    let mut s = g.setup_sdma(hole, 0x1000, true);
    g.submit(&mut s, &[0; 4]);
    assert!(matches!(g.state(SDMA).unwrap().status, QueueStatus::Faulted(_)));
    assert_ne!(g.r.rd(hw_id::MMHUB, mmhub::V3_0_0.MMVM_L2_PROTECTION_FAULT_STATUS), 0);
    let v = g.vectors();
    assert_eq!(
        (v[1].client_id as u32, v[1].src_id as u32, v[1].src_data[0]),
        (SOC21_IH_CLIENTID_VMC, VMC_1_0__SRCID__VM_FAULT, (hole >> 12) as u32)
    );
    assert_eq!(g.m.pci_stop_reasons(0).len(), 2);
}

#[test]
fn registers_that_cannot_describe_a_ring_stop_it_with_a_reason() {
    let g = Gpu::new(ExecMode::Inline);
    // QUEUE_SIZE 40: past the largest ring.
    g.setup_compute(VA + C_RING, 0x1000, Some(AMDGPU_NAVI10_DOORBELL_MEC_RING0));
    g.gc(gc::V11_0_0.GRBM_GFX_CNTL, field(1, gc::GRBM_GFX_CNTL__MEID_MASK));
    g.gc(gc::V11_0_0.CP_HQD_PQ_CONTROL, 40);
    g.gc(gc::V11_0_0.GRBM_GFX_CNTL, 0);
    let st = g.state(COMPUTE).unwrap();
    assert!(
        matches!(&st.status, QueueStatus::Error(e) if e.contains("QUEUE_SIZE")),
        "{st:?}"
    );
    // A doorbell offset past BAR 2 (2 MiB): the largest field value.
    g.gc(gc::V11_0_0.GRBM_GFX_CNTL, field(1, gc::GRBM_GFX_CNTL__MEID_MASK));
    g.gc(gc::V11_0_0.CP_HQD_PQ_CONTROL, 9);
    g.gc(
        gc::V11_0_0.CP_HQD_PQ_DOORBELL_CONTROL,
        gc::CP_HQD_PQ_DOORBELL_CONTROL__DOORBELL_OFFSET_MASK | gc::CP_HQD_PQ_DOORBELL_CONTROL__DOORBELL_EN_MASK,
    );
    g.gc(gc::V11_0_0.GRBM_GFX_CNTL, 0);
    let st = g.state(COMPUTE).unwrap();
    assert!(
        matches!(&st.status, QueueStatus::Error(e) if e.contains("doorbell")),
        "{st:?}"
    );
    // A write pointer more than a ring ahead: the engine stops the ring.
    let mut c = g.setup_compute(VA + C_RING, 0x1000, Some(AMDGPU_NAVI10_DOORBELL_MEC_RING0));
    assert_eq!(g.state(COMPUTE).unwrap().status, QueueStatus::Running);
    c.put = 0x1_0000;
    g.ring_doorbell(c.doorbell, c.put);
    let st = g.state(COMPUTE).unwrap();
    assert!(
        matches!(&st.status, QueueStatus::Error(e) if e.contains("write pointer")),
        "{st:?}"
    );
    // SDMA: a base that does not fit once shifted, an unaligned read pointer.
    g.setup_sdma(VA + S_RING, 0x1000, true);
    g.gc(gc::V11_0_0.SDMA0_QUEUE0_RB_BASE_HI, u32::MAX);
    assert!(matches!(g.state(SDMA).unwrap().status, QueueStatus::Error(e) if e.contains("RB_BASE")));
    g.setup_sdma(VA + S_RING, 0x1000, true);
    g.gc(gc::V11_0_0.SDMA0_QUEUE0_RB_RPTR, 2);
    assert!(matches!(g.state(SDMA).unwrap().status, QueueStatus::Error(e) if e.contains("RB_RPTR")));
}

#[test]
fn random_queue_registers_and_doorbells_never_panic() {
    let g = Gpu::new(ExecMode::Inline);
    // Some valid packets in both rings' memory, so that a ring that binds has
    // something to chew on.
    for i in 0..0x4000u64 {
        g.write(VA + C_RING + i * 4, &(i as u32 ^ 0xc0de_0000).to_le_bytes());
    }
    let first = g.r.addr(hw_id::GC, gc::V11_0_0.CP_MQD_BASE_ADDR);
    let last = g.r.addr(hw_id::GC, gc::V11_0_0.CP_HQD_PQ_WPTR_HI);
    let sdma = [
        gc::V11_0_0.SDMA0_QUEUE0_RB_CNTL,
        gc::V11_0_0.SDMA0_QUEUE0_RB_BASE,
        gc::V11_0_0.SDMA0_QUEUE0_RB_BASE_HI,
        gc::V11_0_0.SDMA0_QUEUE0_RB_RPTR,
        gc::V11_0_0.SDMA0_QUEUE0_RB_WPTR,
        gc::V11_0_0.SDMA0_QUEUE0_DOORBELL,
        gc::V11_0_0.SDMA0_QUEUE0_DOORBELL_OFFSET,
        gc::V11_0_0.SDMA0_QUEUE0_MINOR_PTR_UPDATE,
    ];
    let mut rnd = common::xorshift64(0x9e37_79b9_7f4a_7c15);
    let mut bound = 0;
    for round in 0..2000 {
        let r = rnd();
        match r % 5 {
            0 => g.gc(gc::V11_0_0.GRBM_GFX_CNTL, (rnd() as u32) & 0x7ff),
            1 => {
                let a = first + (rnd() as u32) % (last - first + 1);
                // Mostly small values and the ring's address, sometimes anything.
                let v = match rnd() % 3 {
                    0 => rnd() as u32,
                    1 => (rnd() % 64) as u32,
                    _ => ((VA + C_RING) >> 8) as u32,
                };
                g.r.mmio.write32(a, v);
            }
            2 => {
                let reg = sdma[(rnd() % sdma.len() as u64) as usize];
                g.gc(
                    reg,
                    if rnd() % 2 == 0 {
                        rnd() as u32
                    } else {
                        (rnd() % 32) as u32
                    },
                );
            }
            3 => g.ring_doorbell((rnd() % 0x400) as u32, rnd() % 0x10000),
            _ => {
                let slot =
                    [AMDGPU_NAVI10_DOORBELL_MEC_RING0, AMDGPU_NAVI10_DOORBELL_sDMA_ENGINE0][(rnd() % 2) as usize];
                g.ring_doorbell(slot, rnd() % 0x100);
            }
        }
        if round % 100 == 0 {
            bound += g.m.pci_rings(0).len();
        }
    }
    assert!(bound > 0, "some rings were bound along the way");
    // The device still answers and a fresh, well-formed ring still works.
    g.gc(gc::V11_0_0.GRBM_GFX_CNTL, 0);
    let mut c = g.setup_compute(VA + C_RING, 0x1000, Some(AMDGPU_NAVI10_DOORBELL_MEC_RING0));
    g.submit(
        &mut c,
        &words(|b| {
            ReleaseMem::signal(VA + SIG + 32, 0x5151).encode(T, b);
        }),
    );
    assert_eq!(g.u32_at(VA + SIG + 32), 0x5151);
}
