//! The GMC of a mock PCI GPU: the GC hub's and the MM hub's VM context 0 (page-table
//! root, depth and range), their invalidation engine 17 (semaphore, request,
//! acknowledge), their protection-fault registers, a page-table walker over VRAM and a
//! small TLB.
//!
//! What tinygrad 0.10.1's `AM_GMC` does, and what the block answers:
//! - `enable_vm_addressing` writes `{GC,MM}VM_CONTEXT0_PAGE_TABLE_{START,END}_ADDR`
//!   (page numbers), `PAGE_TABLE_BASE_ADDR` (the root's address `| 1`) and
//!   `CONTEXT0_CNTL` (`ENABLE_CONTEXT`, `PAGE_TABLE_DEPTH` = 3 − the root's level).
//! - `flush_tlb` waits for `MMVM_INVALIDATE_ENG17_SEM` bit 0 (a read takes the
//!   semaphore if it is free and answers 1, else 0; writing 0 releases it), writes
//!   `*_INVALIDATE_ENG17_REQ` (the TLB drops the translations of the requested VM
//!   ids at once, and `*_ACK` reads back the requested ids), waits for the ACK and
//!   reads `MMVM_L2_BANK_SELECT_RESERVED_CID2` back (stored, no behaviour).
//!
//! Addresses in the root register and in entries without `AMDGPU_PTE_SYSTEM` are VRAM
//! physical addresses (offsets from the start of VRAM, `MC_VM_FB_OFFSET` being 0 on a
//! discrete GPU, as amdgpu's `amdgpu_gmc_vram_pa` and tinygrad's `palloc` give); with
//! `AMDGPU_PTE_SYSTEM` they are system physical addresses (the pagemap's).
//!
//! The walk ([`Gmc::translate`]): the address relative to `PAGE_TABLE_START_ADDR`
//! indexes 512-entry tables, an entry at level `lv` covering `1 << (9·(3−lv) + 12)`
//! bytes (`AMDGPU_VM_PDB2` to `AMDGPU_VM_PTB`, as amdgpu's `amdgpu_vm_pt_shift`); an
//! entry at the PTB level, or one with `AMDGPU_PDE_PTE` above it (on GC 12
//! `AMDGPU_PDE_PTE_GFX12`, bit 63; bit 54 is part of GC 12's `MTYPE`), is a leaf; a leaf
//! with `FRAG = n` maps the naturally aligned block of `max(cover, 2^n × 4 KiB)`
//! bytes around the address (the TLB keeps the whole block: the other entries of a
//! fragment are not read, as the hardware's fragment rule allows); the leaf needs
//! `READABLE`, `WRITEABLE` or `EXECUTABLE` for the access. At most four levels are
//! walked, every entry read is bounds-checked against VRAM, and whatever the tables
//! hold the walk ends in a [`Target`] or a [`VmFault`].
//!
//! Faults latch in `*VM_L2_PROTECTION_FAULT_STATUS` and `_ADDR_LO32/HI32` (the page
//! number, as tinygrad's `on_interrupt` reads it) while the status is 0; later faults
//! set `MORE_FAULTS`. `PROTECTION_FAULT_CNTL.CLEAR_PROTECTION_FAULT_STATUS_ADDR` or an
//! invalidation with `CLEAR_PROTECTION_FAULT_STATUS_ADDR` clears them. The status
//! fields the mock sets: `PERMISSION_FAULTS` bit 0 for an invalid entry, bits 1/2/3
//! for a denied read/write/execute; `MAPPING_ERROR` for an address outside the range,
//! a disabled context or a missing root; `WALKER_ERROR` = 1 for an entry that cannot
//! be read (outside VRAM, or a table in system memory, which the mock does not walk)
//! or a leaf past the end of VRAM; `RW` for writes; `VMID` and `CID` 0.
//!
//! Every fault also raises its IH vector ([`IvEntry::vm_fault`]); engines of bound
//! rings translate through [`RegisterFile::translate`], so their faults land here.
//!
//! Not modelled yet: contexts 1–15, the other invalidation engines, ranged invalidation,
//! `PDE`'s block-fragment size, `MTYPE`, the system aperture and the AGP aperture.

use std::ops::Range;

use super::block::Vram;
use super::block::generated::hub;
use super::block::generated::vm::{
    AMDGPU_PDE_PTE, AMDGPU_PDE_PTE_GFX12, AMDGPU_PTE_EXECUTABLE, AMDGPU_PTE_READABLE, AMDGPU_PTE_SYSTEM,
    AMDGPU_PTE_VALID, AMDGPU_PTE_WRITEABLE, AMDGPU_VM_PTB,
};
use super::block::{AmReg, Effect, RegisterBlock, Values};
use super::iv::IvEntry;
use super::regs::RegisterFile;
pub use crate::mem::gpuvm::{Access, FaultKind, Hub, Target, Translate, VmFault};
use amd_regs::regs::AsicRegs;

/// Where an entry's fragment sits (`AMDGPU_PTE_FRAG`), and its address bits.
pub use amd_regs::regs::pte::{ADDR_MASK as ENTRY_ADDR_MASK, FRAG_SHIFT as PTE_FRAG_SHIFT};
/// Translations the TLB holds; the oldest goes first.
pub const TLB_ENTRIES: usize = 64;

/// Bytes of a page a PTE maps without a fragment.
const PAGE_BYTES: u64 = 0x1000;

/// Following 4 KiB PTEs a walk looks at to join them to the one it found (a bound on
/// what a walk for one page costs: 256 KiB runs; a copy over a longer run translates
/// again where each ends).
const RUN_PAGES: u64 = 63;
/// Faults kept for inspection (and the future interrupt ring); later ones are counted
/// only.
pub const FAULT_LOG: usize = 256;

/// One hub's registers (dword addresses) and field masks.
#[derive(Debug, Clone, Copy)]
struct HubRegs {
    cntl: u32,
    base: (u32, u32),
    start: (u32, u32),
    end: (u32, u32),
    sem: u32,
    req: u32,
    ack: u32,
    fault_cntl: u32,
    status: u32,
    addr: (u32, u32),
    enable_mask: u32,
    depth_mask: u32,
    sem_mask: u32,
    vmid_mask: u32,
    req_clear_mask: u32,
    cntl_clear_mask: u32,
    more_faults: u32,
    walker_error: u32,
    permission: u32,
    mapping_error: u32,
    rw: u32,
}

#[derive(Debug, Clone, Copy)]
struct TlbEntry {
    /// First and one past the last virtual address covered.
    va: (u64, u64),
    pa: u64,
    entry: u64,
}

/// One hub's GMC: VM context 0, invalidation engine 17, the fault registers, the walker
/// and the TLB.
#[derive(Debug)]
pub struct Gmc {
    hub: Hub,
    r: HubRegs,
    /// What marks a leaf above the PTB level: `AMDGPU_PDE_PTE` (bit 54) on GC 11,
    /// `AMDGPU_PDE_PTE_GFX12` (bit 63) on GC 12, where bit 54 is part of `MTYPE`.
    leaf_bit: u64,
    sem_held: bool,
    tlb: Vec<TlbEntry>,
    /// Invalidation requests (`INVALIDATE_ENG17_REQ` writes) since power-on.
    pub flushes: u64,
    /// Translations answered from the TLB since power-on.
    pub tlb_hits: u64,
    /// Page-table walks since power-on.
    pub walks: u64,
    /// The first [`FAULT_LOG`] faults since power-on, in order.
    pub faults: Vec<VmFault>,
    /// Faults since power-on, logged or not.
    pub fault_count: u64,
}

fn shift_of(mask: u32) -> u32 {
    mask.trailing_zeros() & 31
}

fn field(value: u32, mask: u32) -> u32 {
    (value & mask) >> shift_of(mask)
}

impl Gmc {
    /// The block for `hub`, its registers placed by `addr` (`None` if one is
    /// missing).
    pub fn new(hub: Hub, t: &AsicRegs, addr: impl Fn(AmReg) -> Option<u32>) -> Option<Self> {
        let h = match hub {
            Hub::Gc => hub::gc(t.gc),
            Hub::Mm => hub::mmhub(t.mmhub),
        };
        let r = HubRegs {
            cntl: addr(h.VM_CONTEXT0_CNTL)?,
            base: (
                addr(h.VM_CONTEXT0_PAGE_TABLE_BASE_ADDR_LO32)?,
                addr(h.VM_CONTEXT0_PAGE_TABLE_BASE_ADDR_HI32)?,
            ),
            start: (
                addr(h.VM_CONTEXT0_PAGE_TABLE_START_ADDR_LO32)?,
                addr(h.VM_CONTEXT0_PAGE_TABLE_START_ADDR_HI32)?,
            ),
            end: (
                addr(h.VM_CONTEXT0_PAGE_TABLE_END_ADDR_LO32)?,
                addr(h.VM_CONTEXT0_PAGE_TABLE_END_ADDR_HI32)?,
            ),
            sem: addr(h.VM_INVALIDATE_ENG17_SEM)?,
            req: addr(h.VM_INVALIDATE_ENG17_REQ)?,
            ack: addr(h.VM_INVALIDATE_ENG17_ACK)?,
            fault_cntl: addr(h.VM_L2_PROTECTION_FAULT_CNTL)?,
            status: addr(h.VM_L2_PROTECTION_FAULT_STATUS)?,
            addr: (
                addr(h.VM_L2_PROTECTION_FAULT_ADDR_LO32)?,
                addr(h.VM_L2_PROTECTION_FAULT_ADDR_HI32)?,
            ),
            enable_mask: h.VM_CONTEXT0_CNTL__ENABLE_CONTEXT_MASK,
            depth_mask: h.VM_CONTEXT0_CNTL__PAGE_TABLE_DEPTH_MASK,
            sem_mask: h.VM_INVALIDATE_ENG17_SEM__SEMAPHORE_MASK,
            vmid_mask: h.VM_INVALIDATE_ENG17_REQ__PER_VMID_INVALIDATE_REQ_MASK,
            req_clear_mask: h.VM_INVALIDATE_ENG17_REQ__CLEAR_PROTECTION_FAULT_STATUS_ADDR_MASK,
            cntl_clear_mask: h.VM_L2_PROTECTION_FAULT_CNTL__CLEAR_PROTECTION_FAULT_STATUS_ADDR_MASK,
            more_faults: h.VM_L2_PROTECTION_FAULT_STATUS__MORE_FAULTS_MASK,
            walker_error: h.VM_L2_PROTECTION_FAULT_STATUS__WALKER_ERROR_MASK,
            permission: h.VM_L2_PROTECTION_FAULT_STATUS__PERMISSION_FAULTS_MASK,
            mapping_error: h.VM_L2_PROTECTION_FAULT_STATUS__MAPPING_ERROR_MASK,
            rw: h.VM_L2_PROTECTION_FAULT_STATUS__RW_MASK,
        };
        Some(Gmc {
            hub,
            r,
            leaf_bit: if t.gc.version[0] >= 12 {
                AMDGPU_PDE_PTE_GFX12
            } else {
                AMDGPU_PDE_PTE
            },
            sem_held: false,
            tlb: Vec::new(),
            flushes: 0,
            tlb_hits: 0,
            walks: 0,
            faults: Vec::new(),
            fault_count: 0,
        })
    }

    /// The hub.
    pub fn hub(&self) -> Hub {
        self.hub
    }

    /// The dword addresses the block answers for (its lowest to its highest register).
    pub fn range(&self) -> Range<u32> {
        let r = &self.r;
        let all = [
            r.cntl,
            r.base.0,
            r.base.1,
            r.start.0,
            r.start.1,
            r.end.0,
            r.end.1,
            r.sem,
            r.req,
            r.ack,
            r.fault_cntl,
            r.status,
            r.addr.0,
            r.addr.1,
        ];
        let lo = all.iter().copied().min().unwrap_or(0);
        let hi = all.iter().copied().max().unwrap_or(0);
        lo..hi.saturating_add(1)
    }

    /// Translations the TLB holds now.
    pub fn tlb_len(&self) -> usize {
        self.tlb.len()
    }

    fn pair(v: &Values, (lo, hi): (u32, u32)) -> u64 {
        u64::from(v.get(lo)) | (u64::from(v.get(hi)) << 32)
    }

    /// Translates `va` for `access` through this hub's context 0: from the TLB, or by
    /// walking the tables in `vram`. A fault is latched in the fault registers and
    /// logged. [`Target::Host`] is never returned here.
    pub fn translate(
        &mut self,
        v: &mut Values,
        vram: Option<&Vram>,
        va: u64,
        access: Access,
    ) -> Result<Target, VmFault> {
        self.translate_run(v, vram, va, access).map(|(t, _)| t)
    }

    /// [`Gmc::translate`], with the bytes from `va` to the end of the page or fragment
    /// its entry maps (the same translation, shifted, holds for all of them).
    pub fn translate_run(
        &mut self,
        v: &mut Values,
        vram: Option<&Vram>,
        va: u64,
        access: Access,
    ) -> Result<(Target, u64), VmFault> {
        self.translate_run_quiet(v, vram, va, access).map_err(|kind| {
            let f = VmFault {
                hub: self.hub,
                va,
                access,
                kind,
            };
            self.record(v, f);
            f
        })
    }

    /// [`Gmc::translate_run`] without latching a failure (the TLB and the walk alike).
    pub fn translate_run_quiet(
        &mut self,
        v: &Values,
        vram: Option<&Vram>,
        va: u64,
        access: Access,
    ) -> Result<(Target, u64), FaultKind> {
        match self.tlb.iter().find(|t| (t.va.0..t.va.1).contains(&va)).copied() {
            Some(t) => {
                self.tlb_hits = self.tlb_hits.saturating_add(1);
                Self::leaf_target(t, va, access, vram).map(|x| (x, t.va.1 - va))
            }
            None => {
                self.walks = self.walks.saturating_add(1);
                self.walk(v, vram, va, access)
            }
        }
    }

    fn leaf_target(t: TlbEntry, va: u64, access: Access, vram: Option<&Vram>) -> Result<Target, FaultKind> {
        let need = match access {
            Access::Read => AMDGPU_PTE_READABLE,
            Access::Write => AMDGPU_PTE_WRITEABLE,
            Access::Exec => AMDGPU_PTE_EXECUTABLE,
        };
        if t.entry & need == 0 {
            return Err(FaultKind::Permission);
        }
        let off = va.checked_sub(t.va.0).ok_or(FaultKind::Walker)?;
        let pa = t.pa.checked_add(off).ok_or(FaultKind::Walker)?;
        if t.entry & AMDGPU_PTE_SYSTEM != 0 {
            return Ok(Target::System(pa));
        }
        match vram {
            Some(m) if pa < m.size() => Ok(Target::Vram(pa)),
            _ => Err(FaultKind::Walker),
        }
    }

    fn walk(&mut self, v: &Values, vram: Option<&Vram>, va: u64, access: Access) -> Result<(Target, u64), FaultKind> {
        let cntl = v.get(self.r.cntl);
        if cntl & self.r.enable_mask == 0 {
            return Err(FaultKind::ContextDisabled);
        }
        let depth = u64::from(field(cntl, self.r.depth_mask));
        let base = Self::pair(v, self.r.base);
        if base & AMDGPU_PTE_VALID == 0 {
            return Err(FaultKind::NoRoot);
        }
        let start = Self::pair(v, self.r.start)
            .checked_shl(12)
            .filter(|s| s >> 12 == Self::pair(v, self.r.start))
            .ok_or(FaultKind::OutOfRange)?;
        let end = Self::pair(v, self.r.end)
            .checked_mul(0x1000)
            .and_then(|e| e.checked_add(0xfff))
            .ok_or(FaultKind::OutOfRange)?;
        if va < start || va > end {
            return Err(FaultKind::OutOfRange);
        }
        let rel = va - start;
        let vram = vram.ok_or(FaultKind::Walker)?;
        let root_level = AMDGPU_VM_PTB.checked_sub(depth).ok_or(FaultKind::Walker)?;
        let mut table = base & ENTRY_ADDR_MASK;
        // At most four levels (PDB2..=PTB): the loop bound is the walk's bound.
        for level in root_level..=AMDGPU_VM_PTB {
            let shift = 9 * (AMDGPU_VM_PTB - level) + 12;
            let index = rel >> shift;
            if level == root_level && index >= 512 {
                return Err(FaultKind::OutOfRange);
            }
            let at = table.checked_add((index % 512) * 8).ok_or(FaultKind::Walker)?;
            let mut b = [0u8; 8];
            if !vram.read(at, &mut b) {
                return Err(FaultKind::Walker);
            }
            let entry = u64::from_le_bytes(b);
            let level_u8 = u8::try_from(level).unwrap_or(u8::MAX);
            if entry & AMDGPU_PTE_VALID == 0 {
                return Err(FaultKind::Invalid { level: level_u8 });
            }
            if level == AMDGPU_VM_PTB || entry & self.leaf_bit != 0 {
                let frag = amd_regs::regs::pte::frag_of(entry);
                let size_shift = shift.max(12 + frag);
                // Blocks of up to 2^43 bytes: fits in u64.
                let size = 1u64 << size_shift;
                let rel_base = rel & !(size - 1);
                let va_base = start.checked_add(rel_base).ok_or(FaultKind::Walker)?;
                let pa = entry & ENTRY_ADDR_MASK & !(size - 1);
                // The 4 KiB pages that follow in the same table as one entry while
                // they continue this one (valid, the same bits, the next frame): a
                // buffer's run of system pages is one translation, not one per page.
                let mut run = size;
                // VRAM pages only while they lie in VRAM: a page past it is a walker
                // fault of its own.
                let in_vram = |end: u64| entry & AMDGPU_PTE_SYSTEM != 0 || end <= vram.size();
                if level == AMDGPU_VM_PTB && size == PAGE_BYTES {
                    let first = index % 512 + 1;
                    for next in first..(first + RUN_PAGES).min(512) {
                        let mut b = [0u8; 8];
                        let at = table + next * 8;
                        if !vram.read(at, &mut b) {
                            break;
                        }
                        let e = u64::from_le_bytes(b);
                        let same_bits = (e ^ entry) & !ENTRY_ADDR_MASK == 0;
                        if !same_bits || e & ENTRY_ADDR_MASK != pa + run || !in_vram(pa + run + PAGE_BYTES) {
                            break;
                        }
                        run += PAGE_BYTES;
                    }
                }
                let t = TlbEntry {
                    va: (va_base, va_base.saturating_add(run)),
                    pa,
                    entry,
                };
                if self.tlb.len() >= TLB_ENTRIES {
                    self.tlb.remove(0);
                }
                self.tlb.push(t);
                // `va` lies in the entry's block: `va_base <= va < va_base + size`.
                return Self::leaf_target(t, va, access, Some(vram)).map(|x| (x, t.va.1 - va));
            }
            if entry & AMDGPU_PTE_SYSTEM != 0 {
                // A table in system memory: the mock walks VRAM only.
                return Err(FaultKind::Walker);
            }
            table = entry & ENTRY_ADDR_MASK;
        }
        Err(FaultKind::Walker)
    }

    /// Latches `f` in the fault registers (or sets `MORE_FAULTS`), logs it and raises
    /// its interrupt ([`IvEntry::vm_fault`]).
    fn record(&mut self, v: &mut Values, f: VmFault) {
        self.fault_count = self.fault_count.saturating_add(1);
        v.raise(IvEntry::vm_fault(&f));
        if self.faults.len() < FAULT_LOG {
            self.faults.push(f);
        }
        let r = self.r;
        let cur = v.get(r.status);
        if cur != 0 {
            v.set(r.status, cur | r.more_faults);
            return;
        }
        let perm_bit = |bit: u32| (bit << shift_of(r.permission)) & r.permission;
        let mut status = match f.kind {
            FaultKind::ContextDisabled | FaultKind::NoRoot | FaultKind::OutOfRange => r.mapping_error,
            FaultKind::Invalid { .. } => perm_bit(1),
            FaultKind::Permission => perm_bit(match f.access {
                Access::Read => 2,
                Access::Write => 4,
                Access::Exec => 8,
            }),
            FaultKind::Walker => (1 << shift_of(r.walker_error)) & r.walker_error,
        };
        if f.access == Access::Write {
            status |= r.rw;
        }
        v.set(r.status, status);
        let page = f.va >> 12;
        v.set(r.addr.0, page as u32);
        v.set(r.addr.1, ((page >> 32) & 0xf) as u32);
    }

    fn clear_fault(&self, v: &mut Values) {
        v.set(self.r.status, 0);
        v.set(self.r.addr.0, 0);
        v.set(self.r.addr.1, 0);
    }
}

impl RegisterBlock for Gmc {
    fn write(&mut self, v: &mut Values, _vram: Option<&Vram>, reg: u32, value: u32) -> Effect {
        let r = self.r;
        if reg == r.sem {
            if value & r.sem_mask == 0 {
                self.sem_held = false;
            }
            v.set(r.sem, u32::from(self.sem_held));
        } else if reg == r.req {
            let vmids = value & r.vmid_mask;
            self.flushes = self.flushes.saturating_add(1);
            // Only context 0 is modelled: its translations go when VM id 0 is asked for.
            if vmids & 1 != 0 {
                self.tlb.clear();
            }
            if value & r.req_clear_mask != 0 {
                self.clear_fault(v);
            }
            v.set(r.ack, vmids);
        } else if reg == r.fault_cntl && value & r.cntl_clear_mask != 0 {
            self.clear_fault(v);
        }
        Effect::None
    }

    fn read(&mut self, v: &mut Values, reg: u32) -> Option<u32> {
        if reg != self.r.sem {
            return None;
        }
        let granted = !self.sem_held;
        self.sem_held = true;
        v.set(reg, 1);
        Some(u32::from(granted) & self.r.sem_mask)
    }

    fn reset(&mut self, _v: &mut Values) {
        self.sem_held = false;
        self.tlb.clear();
        self.flushes = 0;
        self.tlb_hits = 0;
        self.walks = 0;
        self.faults.clear();
        self.fault_count = 0;
    }

    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        self
    }
}

impl RegisterFile {
    /// Translates `va` for `access` through `hub`'s GMC (see [`Gmc::translate`]); a
    /// device without that hub answers a walker fault.
    pub fn translate(&self, hub: Hub, va: u64, access: Access) -> Result<Target, VmFault> {
        self.with_block_state(|g: &Gmc| g.hub == hub, |g, v, vram| g.translate(v, vram, va, access))
            .unwrap_or(Err(VmFault {
                hub,
                va,
                access,
                kind: FaultKind::Walker,
            }))
    }

    /// Runs `f` on `hub`'s GMC block.
    pub fn with_gmc<T>(&self, hub: Hub, f: impl FnOnce(&mut Gmc) -> T) -> Option<T> {
        self.with_block_state(|g: &Gmc| g.hub == hub, |g, _, _| f(g))
    }
}

impl RegisterFile {
    /// `hub`'s translation of `va` under the register file's lock, unless `stop` is set
    /// (read under that lock, which the unbinding or reset that sets it holds too):
    /// then `Err(None)`, with nothing latched. A failure is latched and returned where
    /// `latch` says so, else `Err(None)`.
    fn translate_locked(
        &self,
        hub: Hub,
        va: u64,
        access: Access,
        stop: Option<&std::sync::atomic::AtomicBool>,
        latch: bool,
    ) -> Result<(Target, u64), Option<VmFault>> {
        self.with_block_state(
            |g: &Gmc| g.hub == hub,
            |g, v, vram| {
                // Acquire: pairs with the Release store of the unbinding or reset.
                if stop.is_some_and(|s| s.load(std::sync::atomic::Ordering::Acquire)) {
                    return Err(None);
                }
                if latch {
                    g.translate_run(v, vram, va, access).map_err(Some)
                } else {
                    g.translate_run_quiet(v, vram, va, access).map_err(|_| None)
                }
            },
        )
        .unwrap_or(Err(latch.then_some(VmFault {
            hub,
            va,
            access,
            kind: FaultKind::Walker,
        })))
    }
}

impl Translate for RegisterFile {
    /// [`RegisterFile::translate`], unless `stop` is set: then `Err(None)`, with
    /// nothing latched.
    fn translate_run_unless(
        &self,
        hub: Hub,
        va: u64,
        access: Access,
        stop: Option<&std::sync::atomic::AtomicBool>,
    ) -> Result<(Target, u64), Option<VmFault>> {
        self.translate_locked(hub, va, access, stop, true)
    }

    /// [`RegisterFile::translate`] with nothing latched: a failure is `Err(None)`.
    fn translate_run_ahead(
        &self,
        hub: Hub,
        va: u64,
        access: Access,
        stop: Option<&std::sync::atomic::AtomicBool>,
    ) -> Result<(Target, u64), Option<VmFault>> {
        self.translate_locked(hub, va, access, stop, false)
    }
}
