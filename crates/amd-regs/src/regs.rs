//! Register names, offsets and fields, and the PSP/SMU/firmware constants, generated
//! from the Linux 6.12 amdgpu headers by `cargo xtask gen-am-regs` (never typed by
//! hand): [`generated`]. The transport reaches a register by its IP block, instance
//! and [`AmReg`] through `amd_am::ip::Registers`; the mock PCI GPU's register model
//! uses the same table (`amd_mockgpu::pci::regs` re-exports it).

/// A register named in the Linux headers: its dword offset inside its IP's register
/// segment `seg` (the `_BASE_IDX`); the discovery table's base for that segment plus
/// `offset` is its dword address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AmReg {
    /// Name without the `reg` prefix.
    pub name: &'static str,
    /// Dword offset inside the segment.
    pub offset: u32,
    /// Segment (base index).
    pub seg: u8,
}

impl AmReg {
    /// The dword address given the IP's segment bases, or `None` if the segment is
    /// missing or the sum overflows.
    pub fn addr(&self, bases: &[u32]) -> Option<u32> {
        bases.get(usize::from(self.seg))?.checked_add(self.offset)
    }
}

/// A field of a firmware-interface struct: byte offset, element size, element count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CField {
    /// Byte offset in the struct.
    pub offset: usize,
    /// Bytes per element.
    pub size: usize,
    /// Elements (1 for a scalar).
    pub count: usize,
}

/// A table of registers for one version of an IP block's headers.
pub trait Versioned {
    /// The IP version (major, minor, revision) the table describes.
    fn version(&self) -> [u8; 3];
}

/// The table for an IP at `version` among `tables`: the newest one of the same major
/// version that is not newer (tinygrad's and Linux's rule: 12.0.1 takes 12.0.0's
/// headers), or `None`.
pub fn pick<T: Versioned>(tables: &'static [T], version: [u8; 3]) -> Option<&'static T> {
    tables
        .iter()
        .filter(|t| t.version()[0] == version[0] && t.version() <= version)
        .max_by_key(|t| t.version())
}

/// Register names, offsets, fields and PSP/SMU constants generated from the Linux
/// 6.12 amdgpu headers by `cargo xtask gen-am-regs`: per IP block a module with the
/// field masks every version shares and a `Table` per version of the registers (and
/// of the masks that differ).
#[allow(missing_docs, non_upper_case_globals, non_snake_case)]
#[rustfmt::skip]
pub mod generated {
    include!("regs_generated.rs");
}

/// Page-table entry fields that `amdgpu_vm.h` gives as function-like macros (so the
/// generator, which reads constants, does not): the address, the fragment and the
/// memory type. The entry bits themselves are [`generated::vm`]'s.
pub mod pte {
    /// The address bits of a page-directory or page-table entry: a 48-bit physical
    /// address, 4 KiB aligned (`0x0000FFFFFFFFF000`).
    pub const ADDR_MASK: u64 = 0x0000_FFFF_FFFF_F000;
    /// Where `AMDGPU_PTE_FRAG(x)`, `(x & 0x1f) << 7`, puts the fragment: a leaf maps
    /// `4 KiB << fragment` of contiguous memory.
    pub const FRAG_SHIFT: u32 = 7;
    /// The fragment field's width mask (before the shift).
    pub const FRAG_MASK: u64 = 0x1f;

    /// `AMDGPU_PTE_FRAG(frag)`.
    pub const fn frag(frag: u64) -> u64 {
        (frag & FRAG_MASK) << FRAG_SHIFT
    }

    /// The fragment an entry gives.
    pub const fn frag_of(entry: u64) -> u64 {
        (entry >> FRAG_SHIFT) & FRAG_MASK
    }

    /// `AMDGPU_PTE_MTYPE_NV10(0, mtype)`: `(mtype & 3) << 48` (GC 10 and 11).
    pub const fn mtype_nv10(mtype: u64) -> u64 {
        (mtype & 3) << 48
    }

    /// `AMDGPU_PTE_MTYPE_GFX12(0, mtype)`: `(mtype & 3) << 54`.
    pub const fn mtype_gfx12(mtype: u64) -> u64 {
        (mtype & 3) << 54
    }
}

use generated::{gc, mmhub, mp, nbio, osssys};

/// The base of NBIO's register segment 2 on every GPU with NBIO 4.3 (and earlier Navi
/// parts): fixed, so that [`RCC_CONFIG_MEMSIZE`] can be read before discovery.
pub const NBIO_FIXED_SEG2_BASE: u32 = 0xd20;
/// `RCC_DEV0_EPF0_RCC_CONFIG_MEMSIZE` at its fixed dword address (tinygrad 0.10.1's
/// `mmRCC_CONFIG_MEMSIZE`, 0xde3): VRAM's size in MiB. A driver reads it before it
/// knows any IP base, to find the discovery table at the top of VRAM.
pub const RCC_CONFIG_MEMSIZE: u32 = NBIO_FIXED_SEG2_BASE + nbio::V4_3_0.RCC_DEV0_EPF0_RCC_CONFIG_MEMSIZE.offset;

/// The versions of the IP blocks whose registers the driverless transport and the mock
/// use, as a GPU's discovery table gives them (major, minor, revision).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IpVersions {
    /// Graphics and compute (GC 11.0.0 on a Radeon RX 7900 XTX).
    pub gc: [u8; 3],
    /// The memory hub.
    pub mmhub: [u8; 3],
    /// The interrupt handler.
    pub osssys: [u8; 3],
    /// The NBIO (NBIF) block.
    pub nbio: [u8; 3],
    /// MP0, the PSP's microprocessor.
    pub mp0: [u8; 3],
    /// MP1, the SMU's microprocessor.
    pub mp1: [u8; 3],
}

/// No register table covers an IP block's version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NoTable {
    /// The IP block, as amdgpu names it.
    pub ip: &'static str,
    /// The version the discovery table gave.
    pub version: [u8; 3],
}

impl std::fmt::Display for NoTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let [a, b, c] = self.version;
        write!(f, "no register table for {} {a}.{b}.{c}", self.ip)
    }
}

impl std::error::Error for NoTable {}

/// One GPU's register tables: for each IP block the table of its version, so that a
/// register is reached as `regs.gc.SCRATCH_REG7` whichever generation the GPU is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AsicRegs {
    /// GC's registers.
    pub gc: &'static gc::Table,
    /// The memory hub's.
    pub mmhub: &'static mmhub::Table,
    /// The interrupt handler's.
    pub osssys: &'static osssys::Table,
    /// NBIO's (NBIF's).
    pub nbio: &'static nbio::Table,
    /// MP0's (the PSP's mailbox).
    pub mp0: &'static mp::Table,
    /// MP1's (the SMU's mailbox).
    pub mp1: &'static mp::Table,
}

impl AsicRegs {
    /// The tables of a Navi 31 (Radeon RX 7900 XTX, gfx1100): GC 11.0.0, MMHUB 3.0.0,
    /// OSSSYS 6.0.0, NBIO 4.3.0, MP 13.0.0.
    pub const NAVI31: AsicRegs = AsicRegs {
        gc: &gc::V11_0_0,
        mmhub: &mmhub::V3_0_0,
        osssys: &osssys::V6_0_0,
        nbio: &nbio::V4_3_0,
        mp0: &mp::V13_0_0,
        mp1: &mp::V13_0_0,
    };

    /// The tables for the IP versions `v` (each the newest of its major version not
    /// newer than the block), or the first block no table covers.
    pub fn for_versions(v: &IpVersions) -> Result<AsicRegs, NoTable> {
        fn one<T: Versioned>(tables: &'static [T], ip: &'static str, version: [u8; 3]) -> Result<&'static T, NoTable> {
            pick(tables, version).ok_or(NoTable { ip, version })
        }
        Ok(AsicRegs {
            gc: one(gc::VERSIONS, "GC", v.gc)?,
            mmhub: one(mmhub::VERSIONS, "MMHUB", v.mmhub)?,
            osssys: one(osssys::VERSIONS, "OSSSYS", v.osssys)?,
            nbio: one(nbio::VERSIONS, "NBIO", v.nbio)?,
            mp0: one(mp::VERSIONS, "MP0", v.mp0)?,
            mp1: one(mp::VERSIONS, "MP1", v.mp1)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_addresses_are_tinygrads() {
        // tinygrad 0.10.1's `mmRCC_CONFIG_MEMSIZE`.
        assert_eq!(RCC_CONFIG_MEMSIZE, 0xde3);
        // An entry of tinygrad's 2 MiB leaves: fragment 9 at bits 7..=11.
        assert_eq!(pte::frag(9), 9 << 7);
        assert_eq!(pte::frag_of(0x20_0000 | pte::frag(9) | 1), 9);
        assert_eq!(pte::frag(0x20), 0, "the field is 5 bits wide");
        assert_eq!((pte::mtype_nv10(3), pte::mtype_gfx12(3)), (3 << 48, 3 << 54));
    }

    const NAVI48: IpVersions = IpVersions {
        gc: [12, 0, 1],
        mmhub: [4, 1, 0],
        osssys: [7, 0, 0],
        nbio: [6, 3, 1],
        mp0: [14, 0, 3],
        mp1: [14, 0, 3],
    };

    #[test]
    fn picks_the_newest_table_of_the_same_major_version() {
        let navi31 = IpVersions {
            gc: [11, 0, 0],
            mmhub: [3, 0, 0],
            osssys: [6, 0, 0],
            nbio: [4, 3, 0],
            mp0: [13, 0, 0],
            mp1: [13, 0, 0],
        };
        assert_eq!(AsicRegs::for_versions(&navi31), Ok(AsicRegs::NAVI31));
        let r = AsicRegs::for_versions(&NAVI48).unwrap();
        assert_eq!(
            (r.gc.version, r.mp0.version, r.mmhub.version),
            ([12, 0, 0], [14, 0, 2], [4, 1, 0])
        );
        // GC 11.0.3 (gfx1102) takes 11.0.0's table; GC 10.3.0 has none.
        assert_eq!(pick(gc::VERSIONS, [11, 0, 3]).map(|t| t.version), Some([11, 0, 0]));
        let old = IpVersions {
            gc: [10, 3, 0],
            ..NAVI48
        };
        let e = AsicRegs::for_versions(&old).unwrap_err();
        assert_eq!(e.to_string(), "no register table for GC 10.3.0");
        // Older than every table of its major version.
        assert_eq!(pick(mp::VERSIONS, [14, 0, 0]), None);
    }

    /// gfx12 offsets from the Linux 6.12 headers (`gc_12_0_0_offset.h`,
    /// `mmhub_4_1_0_offset.h`, `osssys_7_0_0_offset.h`, `mp_14_0_2_offset.h`), beside the
    /// gfx11 ones they replace: the tables follow the renames and moves.
    #[test]
    fn gfx12_tables_hold_the_moved_registers() {
        let (g11, g12) = (&gc::V11_0_0, &gc::V12_0_0);
        assert_eq!(
            (g11.GCVM_CONTEXT0_CNTL.offset, g12.GCVM_CONTEXT0_CNTL.offset),
            (0x1688, 0x1624)
        );
        assert_eq!(
            g12.GCVM_L2_PROTECTION_FAULT_STATUS.name,
            "GCVM_L2_PROTECTION_FAULT_STATUS_LO32"
        );
        assert_eq!(g12.GCVM_L2_PROTECTION_FAULT_STATUS.offset, 0x15d0);
        assert_eq!(
            (
                g12.SDMA0_F32_CNTL.name,
                g12.SDMA0_F32_CNTL.offset,
                g12.SDMA0_F32_CNTL.seg
            ),
            ("SDMA0_MCU_CNTL", 0x588e, 1)
        );
        assert_eq!(g12.SDMA0_SEM_WAIT_FAIL_TIMER_CNTL, None);
        assert!(g11.SDMA0_SEM_WAIT_FAIL_TIMER_CNTL.is_some());
        assert_eq!(
            (
                g11.GCMC_VM_MX_L1_TLB_CNTL__MTYPE_MASK,
                g12.GCMC_VM_MX_L1_TLB_CNTL__MTYPE_MASK
            ),
            (0x3800, 0x1800)
        );
        assert_eq!(g12.SCRATCH_REG7, g11.SCRATCH_REG7);
        assert_eq!(
            (
                mmhub::V4_1_0.MMVM_CONTEXT0_CNTL.offset,
                mmhub::V3_0_0.MMVM_CONTEXT0_CNTL.offset
            ),
            (0x564, 0x740)
        );
        assert_eq!(
            (osssys::V7_0_0.IH_RB_BASE.offset, osssys::V7_0_0.IH_RB_RPTR.offset),
            (0x83, 0x81)
        );
        assert_eq!(mp::V14_0_2.MP0_SMN_C2PMSG_35.name, "MPASP_SMN_C2PMSG_35");
        assert_eq!(
            (mp::V14_0_2.MP1_SMN_C2PMSG_66.offset, mp::V14_0_2.MP1_SMN_C2PMSG_66.seg),
            (0x82, 1)
        );
    }
}
