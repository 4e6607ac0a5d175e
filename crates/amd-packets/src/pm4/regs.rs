//! SH registers (the `COMPUTE_*` block) as SET_SH_REG offsets.
//!
//! The per-family tables in [`gfx94`], [`gfx103`] and [`gfx11`] are generated from the Linux
//! register headers by `cargo xtask gen-regs`; [`ShReg::name`] looks offsets up in
//! them for disassembly.

#[path = "regs_generated.rs"]
mod generated;

pub use generated::{gfx11, gfx94};

/// SH registers of gfx10.3 (RDNA2), as SET_SH_REG offsets: the generated table plus
/// [`gfx103::CP_COHER_START_DELAY`].
pub mod gfx103 {
    pub use super::generated::gfx103::*;
    /// See [`super::GFX103_CP_COHER_START_DELAY`].
    pub const CP_COHER_START_DELAY: super::ShReg = super::GFX103_CP_COHER_START_DELAY;
}

use crate::GfxTarget;

/// A register in the SH window, as the dword offset SET_SH_REG carries
/// (register address − `PACKET3_SET_SH_REG_START`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ShReg(u16);

impl ShReg {
    /// Number of dword registers in the SH window (0x2c00..0x3000).
    pub const WINDOW: u16 = 0x400;

    /// The register at SET_SH_REG offset `offset`.
    pub const fn new(offset: u16) -> Self {
        ShReg(offset)
    }

    /// The SET_SH_REG offset.
    pub const fn offset(self) -> u16 {
        self.0
    }

    /// The register `n` dwords after this one.
    pub const fn add(self, n: u16) -> Self {
        ShReg(self.0.wrapping_add(n))
    }

    /// The register's name on `target`, if the tables know it.
    pub fn name_on(self, target: GfxTarget) -> Option<&'static str> {
        let table = match target {
            GfxTarget::Gfx94 => gfx94::NAMES,
            GfxTarget::Gfx103 => gfx103::NAMES,
            // gfx12's COMPUTE_* offsets are gfx11's.
            GfxTarget::Gfx11 | GfxTarget::Gfx12 => gfx11::NAMES,
        };
        extra(target, self).or_else(|| lookup(table, self.0))
    }

    /// The register's name on any supported target (gfx11 first), for disassembly
    /// without a target at hand.
    pub fn name(self) -> Option<&'static str> {
        GfxTarget::ALL.iter().rev().find_map(|&t| self.name_on(t))
    }
}

fn lookup(table: &[(u16, &'static str)], offset: u16) -> Option<&'static str> {
    table
        .binary_search_by_key(&offset, |e| e.0)
        .ok()
        .and_then(|i| table.get(i))
        .map(|e| e.1)
}

/// `mmCP_COHER_START_DELAY` (gfx10.3) as the SET_SH_REG offset tinygrad 0.10.1
/// writes before each dispatch on gfx10.3: 0x207b + 0x1260 − 0x2c00 = 0x6db. The
/// header files this register in GC segment 1 (base index 1), so the offset lies past
/// the SH window; it is kept because it is what that runtime sends to RDNA2 parts.
pub const GFX103_CP_COHER_START_DELAY: ShReg = ShReg::new(0x207b + 0x1260 - 0x2c00);

fn extra(target: GfxTarget, reg: ShReg) -> Option<&'static str> {
    (target == GfxTarget::Gfx103 && reg == GFX103_CP_COHER_START_DELAY).then_some("CP_COHER_START_DELAY")
}

impl std::fmt::Display for ShReg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.name() {
            Some(n) => f.write_str(n),
            None => write!(f, "SH_REG[{:#05x}]", self.0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_are_sorted_and_offsets_match_the_golden_streams() {
        for table in [gfx94::NAMES, gfx103::NAMES, gfx11::NAMES] {
            assert!(table.windows(2).all(|w| w[0].0 < w[1].0), "table not strictly sorted");
        }
        // Offsets tinygrad 0.10.1 writes (golden/tinygrad-0.10.1-streams.json).
        assert_eq!(gfx11::COMPUTE_PGM_LO.offset(), 0x20c);
        assert_eq!(gfx11::COMPUTE_PGM_RSRC1.offset(), 0x212);
        assert_eq!(gfx11::COMPUTE_PGM_RSRC3.offset(), 0x228);
        assert_eq!(gfx11::COMPUTE_TMPRING_SIZE.offset(), 0x218);
        assert_eq!(gfx11::COMPUTE_DISPATCH_SCRATCH_BASE_LO.offset(), 0x210);
        assert_eq!(gfx11::COMPUTE_RESTART_X.offset(), 0x21b);
        assert_eq!(gfx11::COMPUTE_STATIC_THREAD_MGMT_SE0.offset(), 0x216);
        assert_eq!(gfx11::COMPUTE_STATIC_THREAD_MGMT_SE2.offset(), 0x219);
        assert_eq!(gfx11::COMPUTE_STATIC_THREAD_MGMT_SE4.offset(), 0x22b);
        assert_eq!(gfx11::COMPUTE_USER_DATA_0.offset(), 0x240);
        assert_eq!(gfx11::COMPUTE_START_X.offset(), 0x204);
        assert_eq!(gfx11::COMPUTE_RESOURCE_LIMITS.offset(), 0x215);
        assert_eq!(gfx103::COMPUTE_PGM_LO, gfx11::COMPUTE_PGM_LO);
        // gfx9.4.3 (gc_9_4_3_offset.h, GC segment 0 at 0x2000): RSRC3 moves, the rest
        // tinygrad's dispatch writes stays.
        assert_eq!(gfx94::COMPUTE_PGM_RSRC3.offset(), 0x22d);
        for (a, b) in [
            (gfx94::COMPUTE_PGM_LO, gfx11::COMPUTE_PGM_LO),
            (gfx94::COMPUTE_PGM_RSRC1, gfx11::COMPUTE_PGM_RSRC1),
            (gfx94::COMPUTE_TMPRING_SIZE, gfx11::COMPUTE_TMPRING_SIZE),
            (
                gfx94::COMPUTE_DISPATCH_SCRATCH_BASE_LO,
                gfx11::COMPUTE_DISPATCH_SCRATCH_BASE_LO,
            ),
            (gfx94::COMPUTE_USER_DATA_0, gfx11::COMPUTE_USER_DATA_0),
            (gfx94::COMPUTE_START_X, gfx11::COMPUTE_START_X),
            (gfx94::COMPUTE_NUM_THREAD_X, gfx11::COMPUTE_NUM_THREAD_X),
            (gfx94::COMPUTE_RESTART_X, gfx11::COMPUTE_RESTART_X),
            (gfx94::COMPUTE_RESOURCE_LIMITS, gfx11::COMPUTE_RESOURCE_LIMITS),
        ] {
            assert_eq!(a, b);
        }
    }

    #[test]
    fn names() {
        assert_eq!(gfx11::COMPUTE_PGM_LO.to_string(), "COMPUTE_PGM_LO");
        assert_eq!(gfx11::COMPUTE_USER_DATA_15.name(), Some("COMPUTE_USER_DATA_15"));
        assert_eq!(
            GFX103_CP_COHER_START_DELAY.name_on(GfxTarget::Gfx103),
            Some("CP_COHER_START_DELAY")
        );
        assert_eq!(GFX103_CP_COHER_START_DELAY.name_on(GfxTarget::Gfx11), None);
        // gfx10.3 has no SE4..7 masks: that offset is COMPUTE_RELAUNCH there.
        assert_eq!(
            gfx11::COMPUTE_STATIC_THREAD_MGMT_SE4.name_on(GfxTarget::Gfx103),
            Some("COMPUTE_RELAUNCH")
        );
        assert_eq!(
            gfx11::COMPUTE_STATIC_THREAD_MGMT_SE0.name(),
            Some("COMPUTE_STATIC_THREAD_MGMT_SE0")
        );
        assert_eq!(ShReg::new(0x3ff).to_string(), "SH_REG[0x3ff]");
    }
}
