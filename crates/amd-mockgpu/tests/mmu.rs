//! The GMC of the mock PCI GPU: page tables built in VRAM through the BAR 0 mapping the
//! way tinygrad 0.10.1's `AMPageTableEntry.set_entry` encodes them, the hubs programmed
//! as `AM_GMC.enable_vm_addressing` does, translations (4 KiB pages, fragments, huge
//! pages, system pages through the pagemap), faults in the fault registers, the TLB
//! and its invalidation handshake in `flush_tlb`'s order, and hostile tables.

mod common;

use std::path::Path;
use std::sync::Arc;

use amd_kfd::sys::{MapFlags, OpenMode, Prot, Sys};
use amd_mockgpu::pci::RegisterFile;
use amd_mockgpu::pci::gmc::{Access, FaultKind, Hub, PTE_FRAG_SHIFT, Target, Translate};
use amd_mockgpu::pci::regs::generated::vm::{
    AMDGPU_PDE_PTE, AMDGPU_PTE_EXECUTABLE, AMDGPU_PTE_READABLE, AMDGPU_PTE_SNOOPED, AMDGPU_PTE_SYSTEM,
    AMDGPU_PTE_VALID, AMDGPU_PTE_WRITEABLE, AMDGPU_VM_PDB0, AMDGPU_VM_PDB1, AMDGPU_VM_PDB2, AMDGPU_VM_PTB,
};
use amd_mockgpu::pci::regs::generated::{gc, mmhub, nbio};
use amd_mockgpu::{MockConfig, MockSys};
use amd_regs::discovery::hw_id;
use common::{DEV, MIB, Regs, map_resource, p};

const GIB: u64 = 1 << 30;
const VRAM: u64 = 512 * MIB;
/// tinygrad's `va_allocator`: 512 GiB from 0x7F00_0000_0000.
const VA_BASE: u64 = 0x7F00_0000_0000;
const VA_END: u64 = VA_BASE + 512 * GIB - 1;
/// Page tables in the boot region (VRAM − 64 MiB), as `palloc(boot=True)` places them.
const ROOT: u64 = VRAM - 64 * MIB;
const PD0: u64 = ROOT + 0x1000;
const PT: u64 = ROOT + 0x2000;
const PD1: u64 = ROOT + 0x3000;
/// tinygrad's REQ for `flush_tlb(vmid=0)`: `PER_VMID_INVALIDATE_REQ` = 1,
/// `INVALIDATE_L2_PTES`, `INVALIDATE_L2_PDE0/1/2`, `INVALIDATE_L1_PTES`
/// (`mmhub_3_0_0_sh_mask.h`: bits 19–23).
const FLUSH_REQ: u32 = 1 | 0x00F8_0000;
/// `MMVM_L2_BANK_SELECT_RESERVED_CID2__RESERVED_CACHE_PRIVATE_INVALIDATION_MASK`.
const CID2_PRIVATE_INVALIDATION: u32 = 0x0200_0000;

/// `set_entry(paddr, table=True)`: a PDE.
fn pde(paddr: u64) -> u64 {
    (paddr & 0x0000_FFFF_FFFF_F000) | AMDGPU_PTE_VALID
}

/// `set_entry(paddr, frag=…)` at level `lv`: readable, writeable, executable; a PDE
/// that is a PTE above the PTB level.
fn pte(paddr: u64, lv: u64, frag: u64, system: bool) -> u64 {
    let mut f = AMDGPU_PTE_VALID
        | AMDGPU_PTE_WRITEABLE
        | AMDGPU_PTE_READABLE
        | AMDGPU_PTE_EXECUTABLE
        | ((frag & 0x1f) << PTE_FRAG_SHIFT);
    if lv != AMDGPU_VM_PTB {
        f |= AMDGPU_PDE_PTE;
    }
    if system {
        f |= AMDGPU_PTE_SYSTEM | AMDGPU_PTE_SNOOPED;
    }
    (paddr & 0x0000_FFFF_FFFF_F000) | f
}

/// `_pt_pte_idx`: the entry index of `va` at level `lv`.
fn idx(va: u64, lv: u64) -> u64 {
    (va >> (9 * (3 - lv) + 12)) % 512
}

struct Gpu {
    m: MockSys,
    r: Regs,
    file: Arc<RegisterFile>,
    bar0: usize,
}

impl Gpu {
    fn new() -> Self {
        let m = MockSys::new(MockConfig::pci(1));
        let r = Regs::map(&m);
        // The seed's large-BAR sequence: unbind amdgpu, resize BAR 0 (index 15).
        m.write_file(p(&format!("{DEV}/driver/unbind")), b"0000:03:00.0")
            .unwrap();
        m.write_file(p(&format!("{DEV}/resource0_resize")), b"15\n").unwrap();
        let bar0 = map_resource(&m, "resource0", VRAM);
        let file = m.pci_registers(0).unwrap();
        Gpu { m, r, file, bar0 }
    }
    /// Writes entry `i` of the table at VRAM offset `table` through BAR 0, as
    /// `AMPageTableEntry.entries[i] = …` does.
    fn set(&self, table: u64, i: u64, entry: u64) {
        let off = table + i * 8;
        assert!(off + 8 <= VRAM);
        // SAFETY: `off + 8` lies inside the live 512 MiB BAR 0 mapping (checked above)
        // and is 8-byte aligned.
        unsafe { std::ptr::write_volatile((self.bar0 + off as usize) as *mut u64, entry) };
    }
    /// `enable_vm_addressing(root, ip, vmid=0)` for a root at level `lv`, over
    /// `start..=end`.
    fn enable(&self, hub: Hub, root: u64, lv: u64, start: u64, end: u64) {
        self.r
            .enable_vm(hub, root, start, end, 0x1fffe00 | 1 | (((3 - lv) as u32) << 1));
    }
    fn tr(&self, hub: Hub, va: u64, a: Access) -> Result<Target, FaultKind> {
        self.m.pci_translate(0, hub, va, a).unwrap().map_err(|f| f.kind)
    }
    fn read(&self, va: u64) -> Result<Target, FaultKind> {
        self.tr(Hub::Gc, va, Access::Read)
    }
    /// How far a GC read translation of `va` holds.
    fn extent(&self, va: u64) -> Result<u64, Option<amd_mockgpu::pci::gmc::VmFault>> {
        self.file
            .translate_run_unless(Hub::Gc, va, Access::Read, None)
            .map(|(_, n)| n)
    }
    /// `flush_tlb(ip, vmid=0)` at register level, in tinygrad 0.10.1's order.
    fn flush_tlb(&self, hub: Hub) {
        self.r
            .wr(hw_id::NBIF, nbio::V4_3_0.BIF_BX_PF0_GPU_HDP_FLUSH_REQ, 0xffff_ffff);
        match hub {
            Hub::Mm => {
                let sem = mmhub::V3_0_0.MMVM_INVALIDATE_ENG17_SEM;
                assert!(
                    (0..10).any(|_| self.r.rd(hw_id::MMHUB, sem) & 1 == 1),
                    "semaphore granted"
                );
                self.r
                    .wr(hw_id::MMHUB, mmhub::V3_0_0.MMVM_INVALIDATE_ENG17_REQ, FLUSH_REQ);
                assert_eq!(self.r.rd(hw_id::MMHUB, mmhub::V3_0_0.MMVM_INVALIDATE_ENG17_ACK) & 1, 1);
                self.r.wr(hw_id::MMHUB, sem, 0);
                let cid2 = mmhub::V3_0_0.MMVM_L2_BANK_SELECT_RESERVED_CID2;
                let v = self.r.rd(hw_id::MMHUB, cid2);
                self.r.wr(hw_id::MMHUB, cid2, v | CID2_PRIVATE_INVALIDATION);
                assert_eq!(
                    self.r.rd(hw_id::MMHUB, cid2) & CID2_PRIVATE_INVALIDATION,
                    CID2_PRIVATE_INVALIDATION
                );
            }
            Hub::Gc => {
                self.r.wr(hw_id::GC, gc::V11_0_0.GCVM_INVALIDATE_ENG17_REQ, FLUSH_REQ);
                assert_eq!(self.r.rd(hw_id::GC, gc::V11_0_0.GCVM_INVALIDATE_ENG17_ACK) & 1, 1);
            }
        }
    }
    fn flushes(&self, hub: Hub) -> u64 {
        self.file.with_gmc(hub, |g| g.flushes).unwrap()
    }
    fn fault_regs(&self, hub: Hub) -> (u32, u64) {
        let (hw, s, lo, hi) = match hub {
            Hub::Gc => (
                hw_id::GC,
                gc::V11_0_0.GCVM_L2_PROTECTION_FAULT_STATUS,
                gc::V11_0_0.GCVM_L2_PROTECTION_FAULT_ADDR_LO32,
                gc::V11_0_0.GCVM_L2_PROTECTION_FAULT_ADDR_HI32,
            ),
            Hub::Mm => (
                hw_id::MMHUB,
                mmhub::V3_0_0.MMVM_L2_PROTECTION_FAULT_STATUS,
                mmhub::V3_0_0.MMVM_L2_PROTECTION_FAULT_ADDR_LO32,
                mmhub::V3_0_0.MMVM_L2_PROTECTION_FAULT_ADDR_HI32,
            ),
        };
        // As `on_interrupt` reads it: (LO | HI << 32) << 12.
        let va = (u64::from(self.r.rd(hw, lo)) | (u64::from(self.r.rd(hw, hi)) << 32)) << 12;
        (self.r.rd(hw, s), va)
    }
    /// The seed's 3-level layout: root at PDB1 (depth 2) over the 512 GiB VA range.
    fn seed_tables(&self) {
        for hub in [Hub::Gc, Hub::Mm] {
            self.enable(hub, ROOT, AMDGPU_VM_PDB1, VA_BASE, VA_END);
        }
        self.set(ROOT, idx(VA_BASE, AMDGPU_VM_PDB1), pde(PD0));
        self.set(PD0, idx(VA_BASE, AMDGPU_VM_PDB0), pde(PT));
    }
}

#[test]
fn hubs_read_their_registers_from_the_generated_headers() {
    let g = Gpu::new();
    let gc_base = g.r.d.ips.iter().find(|i| i.hw_id == hw_id::GC).unwrap().bases[0];
    assert_eq!(g.r.addr(hw_id::GC, gc::V11_0_0.GCVM_CONTEXT0_CNTL), gc_base + 0x1688);
    assert!(g.file.with_gmc(Hub::Gc, |_| ()).is_some());
    assert!(g.file.with_gmc(Hub::Mm, |_| ()).is_some());
    assert_eq!(
        (AMDGPU_VM_PDB2, AMDGPU_VM_PDB1, AMDGPU_VM_PDB0, AMDGPU_VM_PTB),
        (0, 1, 2, 3)
    );
}

#[test]
fn three_level_tables_translate_pages_fragments_and_huge_pages() {
    let g = Gpu::new();
    g.seed_tables();
    // 4 KiB pages at PTB entries 0..4, VRAM pages 0x10_0000 + i·4 KiB.
    for i in 0..4 {
        g.set(PT, i, pte(0x10_0000 + i * 0x1000, AMDGPU_VM_PTB, 0, false));
    }
    for i in 0..4 {
        let va = VA_BASE + i * 0x1000 + 0x123;
        assert_eq!(g.read(va), Ok(Target::Vram(0x10_0000 + i * 0x1000 + 0x123)));
        assert_eq!(
            g.tr(Hub::Mm, va, Access::Write),
            Ok(Target::Vram(0x10_0000 + i * 0x1000 + 0x123))
        );
    }
    // A 2 MiB PDB0 entry that is a PTE (frag 9, as tinygrad 0.10.1 writes it).
    let huge = VA_BASE + 2 * MIB;
    g.set(PD0, idx(huge, AMDGPU_VM_PDB0), pte(0x40_0000, AMDGPU_VM_PDB0, 9, false));
    assert_eq!(g.read(huge + 0x1_2345), Ok(Target::Vram(0x41_2345)));
    assert_eq!(g.read(huge + 2 * MIB - 1), Ok(Target::Vram(0x40_0000 + 2 * MIB - 1)));
    // A translation holds to the end of its fragment or of the run of pages that
    // follow each other in the table (entries 1 to 3 here), and says how far.
    let run = |va: u64| g.extent(va);
    assert_eq!(run(VA_BASE + 0x1000 + 0x123), Ok(0x3000 - 0x123));
    assert_eq!(run(huge + 0x1_2345), Ok(2 * MIB - 0x1_2345));
    assert_eq!(run(huge + 2 * MIB - 1), Ok(1));
    // A 1 GiB PDB1 entry that is a PTE (needs VRAM ≥ 1 GiB for its upper half).
    let giant = VA_BASE + GIB;
    g.set(ROOT, idx(giant, AMDGPU_VM_PDB1), pte(0, AMDGPU_VM_PDB1, 9, false));
    assert_eq!(g.read(giant + 0x1234_5678), Ok(Target::Vram(0x1234_5678)));
    assert_eq!(g.read(giant + VRAM), Err(FaultKind::Walker), "past the end of VRAM");
    // A 64 KiB fragment: 16 PTEs with FRAG = 4.
    let frag = VA_BASE + 0x10_0000;
    for i in 0..16 {
        g.set(
            PT,
            idx(frag, AMDGPU_VM_PTB) + i,
            pte(0x80_0000 + i * 0x1000, AMDGPU_VM_PTB, 4, false),
        );
    }
    assert_eq!(g.read(frag + 0x10), Ok(Target::Vram(0x80_0010)));
    assert_eq!(run(frag + 0x10), Ok(0x1_0000 - 0x10));
    // The TLB holds the whole fragment: the other entries are not read again.
    let walks = g.file.with_gmc(Hub::Gc, |x| x.walks).unwrap();
    g.set(PT, idx(frag, AMDGPU_VM_PTB) + 5, 0);
    assert_eq!(g.read(frag + 5 * 0x1000 + 8), Ok(Target::Vram(0x80_5008)));
    assert_eq!(g.file.with_gmc(Hub::Gc, |x| x.walks).unwrap(), walks);
    g.flush_tlb(Hub::Gc);
    assert_eq!(g.read(frag + 5 * 0x1000 + 8), Err(FaultKind::Invalid { level: 3 }));
}

#[test]
fn four_level_tables_from_pdb2() {
    let g = Gpu::new();
    g.enable(Hub::Gc, ROOT, AMDGPU_VM_PDB2, VA_BASE, VA_END);
    // Relative to the start of the range: every index of this VA is 0 at PDB2.
    let va = VA_BASE + 3 * GIB + 5 * 2 * MIB + 7 * 0x1000;
    let rel = va - VA_BASE;
    g.set(ROOT, idx(rel, AMDGPU_VM_PDB2), pde(PD1));
    g.set(PD1, idx(rel, AMDGPU_VM_PDB1), pde(PD0));
    g.set(PD0, idx(rel, AMDGPU_VM_PDB0), pde(PT));
    g.set(PT, idx(rel, AMDGPU_VM_PTB), pte(0x20_0000, AMDGPU_VM_PTB, 0, false));
    assert_eq!(g.read(va + 0xabc), Ok(Target::Vram(0x20_0abc)));
    assert_eq!(g.read(va + 0x1000), Err(FaultKind::Invalid { level: 3 }));
    assert_eq!(g.read(va + GIB), Err(FaultKind::Invalid { level: 1 }));
}

#[test]
fn system_pages_resolve_through_the_pagemap() {
    let g = Gpu::new();
    g.seed_tables();
    let len = 2 * 4096;
    // SAFETY: an anonymous mapping at a kernel-chosen address replaces nothing.
    let a = unsafe {
        g.m.mmap(
            0,
            len,
            Prot::ReadWrite,
            MapFlags::SHARED.with(MapFlags::ANONYMOUS),
            None,
            0,
        )
    }
    .unwrap();
    let pm = g.m.open(Path::new("/proc/self/pagemap"), OpenMode::ReadOnly).unwrap();
    let mut e = [0u8; 16];
    g.m.pread(pm, &mut e, (a / 4096 * 8) as u64).unwrap();
    for i in 0..2u64 {
        let ent = u64::from_ne_bytes(e[i as usize * 8..][..8].try_into().unwrap());
        let phys = (ent & ((1 << 55) - 1)) * 4096;
        g.set(PT, 16 + i, pte(phys, AMDGPU_VM_PTB, 0, true));
        let va = VA_BASE + (16 + i) * 0x1000 + 0x44;
        assert_eq!(g.read(va), Ok(Target::Host(a + i as usize * 4096 + 0x44)));
    }
    // A system address the pagemap never gave out stays a physical address.
    g.set(PT, 20, pte(0x1234_5000, AMDGPU_VM_PTB, 0, true));
    assert_eq!(g.read(VA_BASE + 20 * 0x1000 + 1), Ok(Target::System(0x1234_5001)));
    g.m.close(pm).unwrap();
}

#[test]
fn faults_latch_in_the_status_and_address_registers() {
    let g = Gpu::new();
    g.seed_tables();
    g.set(PT, 0, pte(0x10_0000, AMDGPU_VM_PTB, 0, false) & !AMDGPU_PTE_WRITEABLE);
    // Invalid PTE: PERMISSION_FAULTS bit 0 (valid), the page number in ADDR.
    let bad = VA_BASE + 0x3000 + 0x10;
    assert_eq!(g.read(bad), Err(FaultKind::Invalid { level: 3 }));
    let (st, va) = g.fault_regs(Hub::Gc);
    assert_eq!(
        (st, va),
        (
            gc::GCVM_L2_PROTECTION_FAULT_STATUS__PERMISSION_FAULTS_MASK & 0x10,
            VA_BASE + 0x3000
        )
    );
    // A second fault keeps the first and sets MORE_FAULTS.
    assert_eq!(g.read(VA_END + 1), Err(FaultKind::OutOfRange));
    let (st2, va2) = g.fault_regs(Hub::Gc);
    assert_eq!(
        (st2, va2),
        (st | gc::GCVM_L2_PROTECTION_FAULT_STATUS__MORE_FAULTS_MASK, va)
    );
    // CLEAR_PROTECTION_FAULT_STATUS_ADDR in the fault CNTL clears them.
    g.r.wr(hw_id::GC, gc::V11_0_0.GCVM_L2_PROTECTION_FAULT_CNTL, 1);
    assert_eq!(g.fault_regs(Hub::Gc), (0, 0));
    // Out of range: MAPPING_ERROR.
    assert_eq!(g.read(VA_BASE - 0x1000), Err(FaultKind::OutOfRange));
    assert_eq!(
        g.fault_regs(Hub::Gc),
        (
            gc::GCVM_L2_PROTECTION_FAULT_STATUS__MAPPING_ERROR_MASK,
            VA_BASE - 0x1000
        )
    );
    g.r.wr(
        hw_id::GC,
        gc::V11_0_0.GCVM_INVALIDATE_ENG17_REQ,
        1 | gc::GCVM_INVALIDATE_ENG17_REQ__CLEAR_PROTECTION_FAULT_STATUS_ADDR_MASK,
    );
    assert_eq!(g.fault_regs(Hub::Gc), (0, 0));
    // Write to a read-only page on the MM hub: permission bit 2 (write) and RW.
    assert_eq!(g.tr(Hub::Mm, VA_BASE + 8, Access::Read), Ok(Target::Vram(0x10_0008)));
    assert_eq!(g.tr(Hub::Mm, VA_BASE + 8, Access::Write), Err(FaultKind::Permission));
    let (st, va) = g.fault_regs(Hub::Mm);
    assert_eq!(st, 0x40 | mmhub::MMVM_L2_PROTECTION_FAULT_STATUS__RW_MASK);
    assert_eq!(va, VA_BASE);
    assert_eq!(g.fault_regs(Hub::Gc), (0, 0), "the hubs are separate");
    // No root: the valid bit missing from BASE_ADDR.
    g.r.wr(
        hw_id::GC,
        gc::V11_0_0.GCVM_CONTEXT0_PAGE_TABLE_BASE_ADDR_LO32,
        ROOT as u32,
    );
    g.flush_tlb(Hub::Gc);
    assert_eq!(g.read(VA_BASE), Err(FaultKind::NoRoot));
    let faults = g.file.with_gmc(Hub::Gc, |x| x.faults.clone()).unwrap();
    assert_eq!(faults.len(), 4);
    assert_eq!(faults[0].va, bad);
}

/// An operation stopped by the unbinding or reset of its ring latches no fault: a
/// dispatch finishing a workgroup after the driver reset the GPU must not leave one in
/// the registers of the GPU set up again.
#[test]
fn a_stopped_operation_latches_no_fault() {
    use std::sync::atomic::AtomicBool;
    let g = Gpu::new();
    g.seed_tables();
    let stopped = AtomicBool::new(true);
    let r = g
        .file
        .translate_unless(Hub::Gc, VA_END + 1, Access::Read, Some(&stopped));
    assert!(matches!(r, Err(None)), "{r:?}");
    assert_eq!(g.fault_regs(Hub::Gc), (0, 0));
    assert_eq!(g.file.with_gmc(Hub::Gc, |x| x.faults.len()), Some(0));
    // Running, the same access faults and latches as any other.
    let running = AtomicBool::new(false);
    let r = g
        .file
        .translate_unless(Hub::Gc, VA_END + 1, Access::Read, Some(&running));
    assert!(matches!(r, Err(Some(f)) if f.kind == FaultKind::OutOfRange), "{r:?}");
    assert_eq!(
        g.fault_regs(Hub::Gc),
        (gc::GCVM_L2_PROTECTION_FAULT_STATUS__MAPPING_ERROR_MASK, VA_END + 1)
    );
    // A stopped operation reaches no memory at all, mapped or not.
    assert_eq!(
        g.file
            .translate_unless(Hub::Gc, VA_BASE + 8, Access::Read, Some(&stopped)),
        Err(None)
    );
}

#[test]
fn tlb_keeps_a_stale_pte_until_the_flush_handshake() {
    let g = Gpu::new();
    g.seed_tables();
    g.set(PT, 0, pte(0x10_0000, AMDGPU_VM_PTB, 0, false));
    for hub in [Hub::Gc, Hub::Mm] {
        assert_eq!(g.tr(hub, VA_BASE, Access::Read), Ok(Target::Vram(0x10_0000)));
    }
    g.set(PT, 0, pte(0x20_0000, AMDGPU_VM_PTB, 0, false));
    for hub in [Hub::Gc, Hub::Mm] {
        assert_eq!(g.tr(hub, VA_BASE, Access::Read), Ok(Target::Vram(0x10_0000)), "stale");
    }
    g.file.take_writes();
    g.flush_tlb(Hub::Mm);
    assert_eq!(g.flushes(Hub::Mm), 1);
    assert_eq!(g.flushes(Hub::Gc), 0);
    assert_eq!(g.tr(Hub::Mm, VA_BASE, Access::Read), Ok(Target::Vram(0x20_0000)));
    assert_eq!(
        g.tr(Hub::Gc, VA_BASE, Access::Read),
        Ok(Target::Vram(0x10_0000)),
        "GC not flushed yet"
    );
    g.flush_tlb(Hub::Gc);
    assert_eq!(g.tr(Hub::Gc, VA_BASE, Access::Read), Ok(Target::Vram(0x20_0000)));
    // The writes the handshake made, in order.
    let w: Vec<u32> = g.file.writes().iter().map(|w| w.reg).collect();
    let mm = |r| g.r.addr(hw_id::MMHUB, r);
    let want_mm = [
        g.r.addr(hw_id::NBIF, nbio::V4_3_0.BIF_BX_PF0_GPU_HDP_FLUSH_REQ),
        mm(mmhub::V3_0_0.MMVM_INVALIDATE_ENG17_REQ),
        mm(mmhub::V3_0_0.MMVM_INVALIDATE_ENG17_SEM),
        mm(mmhub::V3_0_0.MMVM_L2_BANK_SELECT_RESERVED_CID2),
    ];
    assert_eq!(&w[..4], &want_mm);
    // The semaphore: held after a granted read (a second read is refused), free
    // after writing 0.
    let sem = mmhub::V3_0_0.MMVM_INVALIDATE_ENG17_SEM;
    assert_eq!(g.r.rd(hw_id::MMHUB, sem), 1);
    assert_eq!(g.r.rd(hw_id::MMHUB, sem), 0);
    g.r.wr(hw_id::MMHUB, sem, 0);
    assert_eq!(g.r.rd(hw_id::MMHUB, sem), 1);
    // A request for another VM id leaves context 0's translations.
    g.set(PT, 0, pte(0x30_0000, AMDGPU_VM_PTB, 0, false));
    g.r.wr(hw_id::GC, gc::V11_0_0.GCVM_INVALIDATE_ENG17_REQ, 2);
    assert_eq!(g.r.rd(hw_id::GC, gc::V11_0_0.GCVM_INVALIDATE_ENG17_ACK), 2);
    assert_eq!(g.read(VA_BASE), Ok(Target::Vram(0x20_0000)));
}

/// 4 KiB pages whose entries follow each other in a table (the same bits, the next
/// frame) are one translation: a walk for the first, TLB hits for the rest; the run
/// ends at an entry that breaks it (another frame, other bits), at the end of VRAM and
/// after 64 pages.
#[test]
fn following_ptes_are_one_translation() {
    let g = Gpu::new();
    g.seed_tables();
    // Entries 0..6 contiguous; 6 jumps; 7 continues 6 but is read-only; the last two
    // pages of VRAM at 510 and 511, then nothing past VRAM.
    for i in 0..6 {
        g.set(PT, i, pte(0x10_0000 + i * 0x1000, AMDGPU_VM_PTB, 0, false));
    }
    g.set(PT, 6, pte(0x30_0000, AMDGPU_VM_PTB, 0, false));
    g.set(PT, 7, pte(0x30_1000, AMDGPU_VM_PTB, 0, false) & !AMDGPU_PTE_WRITEABLE);
    g.set(PT, 510, pte(VRAM - 0x2000, AMDGPU_VM_PTB, 0, false));
    g.set(PT, 511, pte(VRAM - 0x1000, AMDGPU_VM_PTB, 0, false));
    g.set(PT, 508, pte(VRAM - 0x1000, AMDGPU_VM_PTB, 0, false));
    g.set(PT, 509, pte(VRAM, AMDGPU_VM_PTB, 0, false));
    let walks = || g.file.with_gmc(Hub::Gc, |m| m.walks).unwrap();
    let at = |i: u64| VA_BASE + i * 0x1000 + 8;
    let before = walks();
    for i in 0..6 {
        assert_eq!(g.read(at(i)), Ok(Target::Vram(0x10_0000 + i * 0x1000 + 8)));
    }
    assert_eq!(walks() - before, 1, "one walk for the run");
    assert_eq!(g.read(at(6)), Ok(Target::Vram(0x30_0008)));
    assert_eq!(g.read(at(7)), Ok(Target::Vram(0x30_1008)));
    assert_eq!(walks() - before, 3, "6 and 7 each their own");
    assert_eq!(g.tr(Hub::Gc, at(7), Access::Write), Err(FaultKind::Permission));
    let run = |va: u64| g.extent(va);
    assert_eq!(run(at(510)), Ok(0x2000 - 8), "the table's last two entries");
    // A longer run is joined 64 pages (256 KiB) at a time.
    for i in 200..300 {
        g.set(PT, i, pte(0x80_0000 + i * 0x1000, AMDGPU_VM_PTB, 0, false));
    }
    assert_eq!(run(at(200)), Ok(64 * 0x1000 - 8));
    assert_eq!(run(at(264)), Ok(36 * 0x1000 - 8), "the next walk, to the run's end");
    assert_eq!(run(at(508)), Ok(0x1000 - 8), "VRAM's last page, not past it");
    assert_eq!(g.read(at(509)), Err(FaultKind::Walker));
    // A change is seen after the flush, inside the run too.
    g.set(PT, 3, pte(0x50_0000, AMDGPU_VM_PTB, 0, false));
    assert_eq!(g.read(at(3)), Ok(Target::Vram(0x10_3008)), "stale until the flush");
    g.flush_tlb(Hub::Gc);
    assert_eq!(g.read(at(3)), Ok(Target::Vram(0x50_0008)));
    assert_eq!(g.read(at(4)), Ok(Target::Vram(0x10_4008)));
}

#[test]
fn hostile_tables_end_in_faults() {
    let g = Gpu::new();
    g.seed_tables();
    // A PDE pointing at its own table: read again as PDB0 and PTB, ending in a leaf
    // with no permissions.
    g.set(ROOT, idx(VA_BASE, AMDGPU_VM_PDB1), pde(ROOT));
    assert_eq!(g.read(VA_BASE), Err(FaultKind::Permission));
    // A PDE past the end of VRAM, and one with the top address bits set.
    g.set(ROOT, idx(VA_BASE, AMDGPU_VM_PDB1), pde(VRAM));
    g.flush_tlb(Hub::Gc);
    assert_eq!(g.read(VA_BASE + 0x1000), Err(FaultKind::Walker));
    g.set(ROOT, idx(VA_BASE, AMDGPU_VM_PDB1), pde(0x0000_FFFF_FFFF_F000));
    assert_eq!(g.read(VA_BASE + 0x2000), Err(FaultKind::Walker));
    // A root past VRAM.
    g.enable(Hub::Mm, 0x0000_FFFF_FFFF_F000, AMDGPU_VM_PDB1, VA_BASE, VA_END);
    assert_eq!(g.tr(Hub::Mm, VA_BASE, Access::Read), Err(FaultKind::Walker));
    // Garbage tables and garbage registers: every translation ends, in a fault or
    // a target inside VRAM.
    let mut next = common::xorshift64(0x9e37_79b9_7f4a_7c15);
    for t in [ROOT, PD0, PT] {
        for i in 0..512 {
            g.set(t, i, next());
        }
    }
    g.enable(Hub::Mm, ROOT, AMDGPU_VM_PDB1, VA_BASE, VA_END);
    for round in 0..2000 {
        if round % 200 == 0 {
            g.r.wr(hw_id::MMHUB, mmhub::V3_0_0.MMVM_CONTEXT0_CNTL, next() as u32);
            g.r.wr(
                hw_id::MMHUB,
                mmhub::V3_0_0.MMVM_CONTEXT0_PAGE_TABLE_END_ADDR_HI32,
                next() as u32,
            );
            g.r.wr(
                hw_id::MMHUB,
                mmhub::V3_0_0.MMVM_CONTEXT0_PAGE_TABLE_START_ADDR_HI32,
                next() as u32 & 0x1f,
            );
            g.flush_tlb(Hub::Mm);
        }
        let va = if round % 2 == 0 {
            VA_BASE + (next() % (512 * GIB))
        } else {
            next()
        };
        let a = [Access::Read, Access::Write, Access::Exec][round % 3];
        for hub in [Hub::Gc, Hub::Mm] {
            if let Ok(Target::Vram(off)) = g.tr(hub, va, a) {
                assert!(off < VRAM);
            }
        }
    }
    let n = g.file.with_gmc(Hub::Mm, |x| (x.fault_count, x.faults.len())).unwrap();
    assert!(n.0 > 0 && n.1 <= amd_mockgpu::pci::gmc::FAULT_LOG);
}
