//! Which GPU family a stream is for.

use crate::PacketError;

/// The GPU family whose packet layouts and register offsets apply.
///
/// Built from KFD's `gfx_target_version` (major·10000 + minor·100 + stepping).
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GfxTarget {
    /// gfx10.3 (RDNA2: gfx1030…gfx1036), SDMA 5.2.
    Gfx103,
    /// gfx11 (RDNA3/3.5: gfx1100…gfx1151), SDMA 6.
    Gfx11,
}

impl GfxTarget {
    /// Every supported target, for tests and tables.
    pub const ALL: [GfxTarget; 2] = [GfxTarget::Gfx103, GfxTarget::Gfx11];

    /// The target for a KFD `gfx_target_version` such as `110000` (gfx1100).
    pub const fn from_version(version: u32) -> Result<Self, PacketError> {
        match version / 100 {
            1003 => Ok(GfxTarget::Gfx103),
            1100..=1105 => Ok(GfxTarget::Gfx11),
            _ => Err(PacketError::UnsupportedTarget { version }),
        }
    }

    /// A short name for messages: `gfx10.3` or `gfx11`.
    pub const fn name(self) -> &'static str {
        match self {
            GfxTarget::Gfx103 => "gfx10.3",
            GfxTarget::Gfx11 => "gfx11",
        }
    }

    /// Width in bits of the SDMA COPY_LINEAR and CONSTANT_FILL byte-count fields
    /// (`navi10_sdma_pkt_open.h`: 22; `sdma_v6_0_0_pkt_open.h`: 30).
    pub const fn sdma_count_bits(self) -> u32 {
        match self {
            GfxTarget::Gfx103 => 22,
            GfxTarget::Gfx11 => 30,
        }
    }
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
        assert!(GfxTarget::from_version(90402).is_err());
        assert!(GfxTarget::from_version(120000).is_err());
        assert!(GfxTarget::from_version(0).is_err());
    }
}
