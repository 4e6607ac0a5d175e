//! Hostile dwords in the rings of a mock GPU driven through the real KFD transport:
//! one compute and one SDMA queue (gfx1100, gfx1030, gfx1201 or gfx942), each first advanced
//! by some NOPs so the stream can wrap, then filled with the input and submitted. The
//! host must not panic, and each queue must end running (all consumed), blocked,
//! stopped with an error, or faulted.
//!
//! Input: byte 0 — bits 0..2: the GPU (1: gfx1030, 2: gfx1201, 3: gfx942, else gfx1100); bits
//! 2..8: NOP dwords before the stream, / 16.
//! Bytes 1..3: how many of the dwords go to the compute ring (the rest go to the
//! SDMA ring). Then little-endian dwords, where `0xb0f0xxxx` / `0x0000b0f1` become
//! the low (+ offset xxxx) and high halves of a 64 KiB buffer's address, and
//! `0xb0f2xxxx` / `0x0000b0f3` those of a 64 KiB VRAM buffer the mock's sanitizer
//! (on in every mock target) watches.
#![no_main]

use amd_hcq_fuzz::{Gpu, dwords, relocate};
use amd_kfd::QueueKind;
use amd_mockgpu::GpuProfile;
use amd_packets::GfxTarget;
use amd_packets::pm4::Nop;
use amd_packets::sdma::SdmaNop;
use libfuzzer_sys::fuzz_target;

const RING_BYTES: usize = 0x1000;

fuzz_target!(|data: &[u8]| {
    let [ctl, n0, n1, rest @ ..] = data else { return };
    let (profile, target) = match ctl & 3 {
        1 => (GpuProfile::gfx1030(), GfxTarget::Gfx103),
        2 => (GpuProfile::gfx1201(), GfxTarget::Gfx12),
        3 => (GpuProfile::gfx942(), GfxTarget::Gfx94),
        _ => (GpuProfile::gfx1100(), GfxTarget::Gfx11),
    };
    let gpu = Gpu::of(profile);
    let pad = (ctl >> 2) as usize * 16;
    let mut words = dwords(rest);
    relocate(&mut words, gpu.buf.va() as u64, gpu.vram.va() as u64);
    let n_compute = (u16::from_le_bytes([*n0, *n1]) as usize).min(words.len());
    let (compute, sdma) = words.split_at(n_compute);

    let mut c = gpu.queue(QueueKind::Compute, RING_BYTES);
    let mut s = gpu.queue(QueueKind::Sdma, RING_BYTES);
    if pad > 0 {
        let mut nops = Vec::new();
        Nop::new(pad).expect("a NOP").encode(target, &mut nops);
        c.write(&nops);
        c.submit();
        nops.clear();
        SdmaNop::new(pad).expect("an SDMA NOP").encode(target, &mut nops);
        s.write(&nops);
        s.submit();
    }
    let cap = RING_BYTES / 4;
    c.write(&compute[..compute.len().min(cap)]);
    c.submit();
    s.write(&sdma[..sdma.len().min(cap)]);
    s.submit();
    gpu.check_ended(&c, true);
    gpu.check_ended(&s, true);
});
