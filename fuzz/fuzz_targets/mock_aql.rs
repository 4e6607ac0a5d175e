//! Hostile AQL packets in an AQL queue of a mock GPU driven through the real KFD
//! transport (gfx1100, or gfx1201): the input's dwords, in whole 64-byte packets,
//! written to the ring and submitted. The host must not panic, and the queue must end
//! running (all consumed), blocked (a barrier, an unpublished header, a scratch
//! request), stopped with an error, or faulted.
//!
//! Input: a control byte (bit 0: gfx1201), then little-endian dwords, where
//! `0xb0f0xxxx` / `0x0000b0f1` become the low (+ offset xxxx) and high halves of a
//! 64 KiB buffer's address (kernel descriptors, signals, indirect buffers).
#![no_main]

use amd_hcq_fuzz::{Gpu, dwords, relocate};
use amd_kfd::QueueKind;
use amd_mockgpu::GpuProfile;
use libfuzzer_sys::fuzz_target;

const RING_BYTES: usize = 0x1000;

fuzz_target!(|data: &[u8]| {
    let [ctl, data @ ..] = data else { return };
    let gpu = if ctl & 1 != 0 {
        Gpu::of(GpuProfile::gfx1201())
    } else {
        Gpu::gfx1100()
    };
    let mut words = dwords(data);
    relocate(&mut words, gpu.buf.va() as u64);
    words.truncate(words.len() / 16 * 16);
    let mut q = gpu.queue(QueueKind::ComputeAql, RING_BYTES);
    q.write(&words[..words.len().min(RING_BYTES / 4)]);
    q.submit();
    gpu.check_ended(&q, true);
});
