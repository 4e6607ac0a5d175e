//! Which GPU family a stream is for.

use crate::PacketError;

/// The GPU family whose packet layouts and register offsets apply.
///
/// Built from KFD's `gfx_target_version` (major·10000 + minor·100 + stepping). The
/// default is gfx11, the target the project began with.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum GfxTarget {
    /// gfx9.4 (CDNA3: gfx940, gfx941, gfx942), SDMA 4.4. gfx9's PM4 (`soc15d.h`):
    /// ACQUIRE_MEM without GCR_CNTL (its cache actions in COHER_CNTL), RELEASE_MEM's
    /// cache actions as `EOP_TC_*` bits; COMPUTE_PGM_RSRC3 at its own offset, no
    /// COMPUTE_STATIC_THREAD_MGMT_SE4..7; wave64 only. SDMA 4 has no GCR_REQ, no
    /// FENCE MTYPE, and 22-bit byte counts.
    Gfx94,
    /// gfx10.3 (RDNA2: gfx1030…gfx1036), SDMA 5.2.
    Gfx103,
    /// gfx11 (RDNA3/3.5: gfx1100…gfx1151), SDMA 6.
    #[default]
    Gfx11,
    /// gfx12 (RDNA4: gfx1200, gfx1201), SDMA 7. Its PM4 packets and COMPUTE_*
    /// registers are gfx11's (`gfx_v12_0.c` includes the same `nvd.h`; the register
    /// offsets agree); SDMA 7 takes SDMA 6's packets.
    Gfx12,
}

impl GfxTarget {
    /// Every supported target, for tests and tables.
    pub const ALL: [GfxTarget; 4] = [GfxTarget::Gfx94, GfxTarget::Gfx103, GfxTarget::Gfx11, GfxTarget::Gfx12];

    /// The target for a KFD `gfx_target_version` such as `110000` (gfx1100).
    pub const fn from_version(version: u32) -> Result<Self, PacketError> {
        match version / 100 {
            // gfx940, gfx941, gfx942 (gfx950 is CDNA4: not supported).
            904 if version % 100 <= 2 => Ok(GfxTarget::Gfx94),
            1003 => Ok(GfxTarget::Gfx103),
            1100..=1105 => Ok(GfxTarget::Gfx11),
            1200 => Ok(GfxTarget::Gfx12),
            _ => Err(PacketError::UnsupportedTarget { version }),
        }
    }

    /// The target for an LLVM processor name such as `gfx1100` or `gfx1030`.
    pub fn from_name(name: &str) -> Result<Self, PacketError> {
        let version = version_from_name(name).ok_or_else(|| PacketError::BadTargetName { name: name.to_string() })?;
        Self::from_version(version)
    }

    /// Whether the target is gfx11 or later (the COMPUTE_* registers gfx10.3 and gfx9
    /// lack, scratch in 256-byte granules per shader engine).
    pub const fn gfx11_or_later(self) -> bool {
        matches!(self, GfxTarget::Gfx11 | GfxTarget::Gfx12)
    }

    /// Whether the target is gfx9 (CDNA): gfx9's PM4 and SDMA 4 encodings, wave64 only.
    pub const fn is_gfx9(self) -> bool {
        matches!(self, GfxTarget::Gfx94)
    }

    /// Whether kernels may run in waves of 32 (gfx10 and later).
    pub const fn has_wave32(self) -> bool {
        !self.is_gfx9()
    }

    /// A short name for messages: `gfx10.3` or `gfx11`.
    pub const fn name(self) -> &'static str {
        match self {
            GfxTarget::Gfx94 => "gfx9.4",
            GfxTarget::Gfx103 => "gfx10.3",
            GfxTarget::Gfx11 => "gfx11",
            GfxTarget::Gfx12 => "gfx12",
        }
    }

    /// Width in bits of the SDMA COPY_LINEAR and CONSTANT_FILL byte-count fields
    /// (`vega10_sdma_pkt_open.h`, which SDMA 4.4 uses, and `navi10_sdma_pkt_open.h`: 22;
    /// `sdma_v6_0_0_pkt_open.h`: 30).
    pub const fn sdma_count_bits(self) -> u32 {
        match self {
            GfxTarget::Gfx94 | GfxTarget::Gfx103 => 22,
            GfxTarget::Gfx11 | GfxTarget::Gfx12 => 30,
        }
    }
}

/// KFD's `gfx_target_version` for an LLVM processor name: `gfx` + major (decimal) +
/// minor and stepping (one hex digit each); `gfx1100` → 110000, `gfx90a` → 90010.
pub fn version_from_name(name: &str) -> Option<u32> {
    let digits = name.strip_prefix("gfx")?;
    if digits.len() < 3 || !digits.is_ascii() {
        return None;
    }
    let (major, rest) = digits.split_at(digits.len() - 2);
    let major: u32 = major.parse().ok()?;
    let minor = char::from(*rest.as_bytes().first()?).to_digit(16)?;
    let stepping = char::from(*rest.as_bytes().get(1)?).to_digit(16)?;
    major.checked_mul(10000)?.checked_add(minor * 100 + stepping)
}

impl std::fmt::Display for GfxTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions() {
        assert_eq!(GfxTarget::from_version(110000), Ok(GfxTarget::Gfx11));
        assert_eq!(GfxTarget::from_version(110501), Ok(GfxTarget::Gfx11));
        assert_eq!(GfxTarget::from_version(100300), Ok(GfxTarget::Gfx103));
        assert_eq!(GfxTarget::from_version(100306), Ok(GfxTarget::Gfx103));
        assert_eq!(GfxTarget::from_version(90402), Ok(GfxTarget::Gfx94));
        assert_eq!(GfxTarget::from_version(90400), Ok(GfxTarget::Gfx94));
        assert!(GfxTarget::from_version(90403).is_err());
        assert!(GfxTarget::from_version(90500).is_err());
        assert!(GfxTarget::from_version(90010).is_err());
        assert_eq!(GfxTarget::from_version(120000), Ok(GfxTarget::Gfx12));
        assert_eq!(GfxTarget::from_version(120001), Ok(GfxTarget::Gfx12));
        assert!(GfxTarget::from_version(120500).is_err());
        assert!(GfxTarget::from_version(0).is_err());
    }

    #[test]
    fn names() {
        assert_eq!(version_from_name("gfx1100"), Some(110000));
        assert_eq!(version_from_name("gfx1030"), Some(100300));
        assert_eq!(version_from_name("gfx90a"), Some(90010));
        assert_eq!(version_from_name("gfx1151"), Some(110501));
        for bad in [
            "",
            "gfx",
            "gfx1",
            "gfx10",
            "gfx1x00",
            "gfx10zz",
            "sm_80",
            "gfx١٠٠",
            "gfx99999999999900",
        ] {
            assert_eq!(version_from_name(bad), None, "{bad}");
        }
        assert_eq!(GfxTarget::from_name("gfx1030"), Ok(GfxTarget::Gfx103));
        assert_eq!(GfxTarget::from_name("gfx942"), Ok(GfxTarget::Gfx94));
        assert!(GfxTarget::from_name("gfx950").is_err());
        assert_eq!(GfxTarget::from_name("gfx1201"), Ok(GfxTarget::Gfx12));
    }
}
