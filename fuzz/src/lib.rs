//! Helpers shared by the fuzz targets (see `fuzz_targets/`).

/// The little-endian dwords of `data` (a trailing partial dword is dropped).
pub fn dwords(data: &[u8]) -> Vec<u32> {
    data.chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// Decodes the dwords `$words` as a stream of `$module`'s `$packet`s for every target,
/// to the end of the stream: offsets advance and stay inside the stream, every packet
/// and error prints, and a decoded packet re-encodes to dwords that decode to the same
/// packet. The body of the `pm4_decode` and `sdma_decode` targets.
#[macro_export]
macro_rules! check_packet_stream {
    ($words:expr, $module:ident, $packet:ident) => {{
        use std::fmt::Write as _;
        let words: &[u32] = $words;
        let mut text = String::new();
        for t in amd_packets::GfxTarget::ALL {
            let mut next = 0;
            let mut items = 0;
            for r in amd_packets::$module::decode(t, words) {
                items += 1;
                assert!(items <= words.len() + 1, "the stream does not end");
                match r {
                    Ok((at, p)) => {
                        assert!(at == next && at < words.len(), "offset {at}, expected {next}");
                        let _ = write!(text, "{p}");
                        let mut again = Vec::new();
                        let start = p.encode(t, &mut again);
                        assert_eq!(start, 0);
                        match amd_packets::$module::$packet::decode(t, &again) {
                            Ok((q, len)) => {
                                assert_eq!(q, p, "{t:?}: decode(encode(p)) != p");
                                assert_eq!(len, again.len());
                            }
                            Err(e) => panic!("{t:?}: {p} re-encodes to {again:08x?}, which does not decode: {e}"),
                        }
                        // The next packet starts where this one ends.
                        next = at + amd_packets::$module::$packet::decode(t, &words[at..]).map_or(0, |(_, n)| n);
                    }
                    Err(e) => {
                        let _ = write!(text, "{e}");
                    }
                }
            }
            text.clear();
        }
    }};
}

/// Marks a dword `mock_rings` replaces with the low half of its buffer's address plus
/// the marker's low 16 bits (a byte offset into the buffer).
pub const BUF_LO: u32 = 0xb0f0_0000;
/// The dword `mock_rings` replaces with the high half of its buffer's address (a
/// plausible high half of a 48-bit address, so encoders keep it as it is).
pub const BUF_HI: u32 = 0x0000_b0f1;
/// The size of `mock_rings`'s buffer (what a `BUF_LO` offset can reach).
pub const BUF_SIZE: usize = 0x1_0000;

/// The address a seed writes for byte `offset` of `mock_rings`'s buffer: its dwords
/// are the two markers.
pub const fn buf_addr(offset: u16) -> u64 {
    ((BUF_HI as u64) << 32) | (BUF_LO | offset as u32) as u64
}

/// As [`BUF_LO`], for the GPU's VRAM buffer ([`Gpu::vram`]), which the sanitizer
/// watches.
pub const VRAM_LO: u32 = 0xb0f2_0000;
/// As [`BUF_HI`], for the VRAM buffer.
pub const VRAM_HI: u32 = 0x0000_b0f3;

/// Replaces the address markers in `words` by the parts of `buf_va` and `vram_va`.
pub fn relocate(words: &mut [u32], buf_va: u64, vram_va: u64) {
    for w in words {
        if *w == BUF_HI {
            *w = (buf_va >> 32) as u32;
        } else if *w & 0xffff_0000 == BUF_LO {
            *w = (buf_va as u32).wrapping_add(*w & 0xffff);
        } else if *w == VRAM_HI {
            *w = (vram_va >> 32) as u32;
        } else if *w & 0xffff_0000 == VRAM_LO {
            *w = (vram_va as u32).wrapping_add(*w & 0xffff);
        }
    }
}

use std::sync::Arc;

use amd_kfd::topology::Visibility;
use amd_kfd::{Kfd, KfdDevice, KfdMemory, KfdQueue, MemoryKind, QueueKind};
use amd_mockgpu::{ExecMode, GpuProfile, MockConfig, MockSys, QueueStatus, Rdna3Executor};

/// Instructions a dispatched kernel may run before the mock stops it.
pub const MAX_INSTRUCTIONS: u64 = 4096;

/// A mock GPU run inline (deterministic), opened through the real KFD transport, with
/// a small instruction budget for kernels.
pub struct Gpu {
    /// The mock driver.
    pub mock: Arc<MockSys>,
    /// The device (keeps `/dev/kfd` open).
    pub dev: KfdDevice,
    /// A CPU-visible buffer of [`BUF_SIZE`] bytes, mapped to the GPU.
    pub buf: KfdMemory,
    /// A VRAM buffer of [`BUF_SIZE`] bytes the CPU does not touch: the sanitizer
    /// watches which of its bytes the engines wrote.
    pub vram: KfdMemory,
}

impl Gpu {
    /// A gfx1100 mock.
    pub fn gfx1100() -> Gpu {
        Gpu::of(GpuProfile::gfx1100())
    }

    /// A mock of the GPU `profile` describes, its sanitizer on (its guard gaps and
    /// shadows are part of what hostile input meets).
    pub fn of(profile: GpuProfile) -> Gpu {
        let mock = Arc::new(MockSys::new(MockConfig {
            gpus: vec![profile],
            cpu_node: true,
            mode: ExecMode::Inline,
            sanitize: true,
            ..MockConfig::pci(0)
        }));
        let mut exec = Rdna3Executor::default();
        exec.max_instructions = MAX_INSTRUCTIONS;
        mock.set_kernel_executor(Box::new(exec));
        let kfd = Kfd::open_with(mock.clone(), &Visibility::all()).expect("open the mock");
        let dev = kfd.device(0).expect("open the mock's GPU");
        let buf = dev.alloc(BUF_SIZE, MemoryKind::UNCACHED).expect("a buffer");
        let vram = dev.alloc(BUF_SIZE, MemoryKind::DEVICE).expect("a VRAM buffer");
        Gpu { mock, dev, buf, vram }
    }

    /// A queue of `kind` with a ring of `bytes`.
    pub fn queue(&self, kind: QueueKind, bytes: usize) -> Ring {
        Ring {
            q: self.dev.create_queue(kind, bytes).expect("a queue"),
            put: 0,
        }
    }

    /// Checks that queue `ring` ended in a state a hostile stream may leave: running
    /// with everything consumed, blocked, stopped with an error or faulted.
    pub fn check_ended(&self, ring: &Ring, may_block: bool) {
        let st = self.mock.queue_state(ring.q.id()).expect("the queue exists");
        match &st.status {
            QueueStatus::Running => assert_eq!(
                st.read_ptr,
                ring.write_ptr(),
                "a running queue consumed everything ({:?})",
                ring.q.kind()
            ),
            QueueStatus::Blocked => assert!(may_block, "blocked without a wait packet"),
            QueueStatus::Error(e) => assert!(!e.contains("panicked"), "{e}"),
            QueueStatus::Faulted(_) => {}
        }
    }
}

/// A queue and its put position in dwords.
pub struct Ring {
    /// The queue.
    pub q: KfdQueue,
    /// Dwords written so far.
    pub put: u64,
}

impl Ring {
    /// The ring's length in dwords.
    pub fn ring_dwords(&self) -> u64 {
        self.q.ring_size() as u64 / 4
    }

    /// The write pointer as the engine reads it (dwords for PM4, bytes for SDMA,
    /// whole 16-dword packets for AQL).
    pub fn write_ptr(&self) -> u64 {
        match self.q.kind() {
            QueueKind::Compute => self.put,
            QueueKind::Sdma => self.put * 4,
            QueueKind::ComputeAql => self.put / 16,
        }
    }

    /// Writes `words` at the put position (wrapping), without submitting.
    pub fn write(&mut self, words: &[u32]) {
        for &w in words {
            let at = (self.put % self.ring_dwords()) as usize * 4;
            self.q.ring().write(at, &w.to_le_bytes()).expect("ring write");
            self.put += 1;
        }
    }

    /// Publishes the write pointer and rings the doorbell.
    pub fn submit(&self) {
        self.q.submit(self.write_ptr());
    }
}
