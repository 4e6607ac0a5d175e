//! Where the driverless transport keeps VRAM for itself, and the least VRAM it needs.

/// The VRAM at the top tinygrad keeps from the main allocator (the boot region is
/// its first half; the discovery binary and firmware reserve live above).
pub const TOP_RESERVED: u64 = 64 << 20;

/// The least VRAM [`Gmc::new`](crate::gmc::Gmc::new) lays out: the 64 MiB kept at the top (the boot
/// region and the firmware's reserve) and 1 MiB for the main allocator.
pub const MIN_VRAM: u64 = TOP_RESERVED + (1 << 20);
