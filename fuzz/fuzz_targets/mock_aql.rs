//! Hostile AQL packets in an AQL queue of a mock GPU driven through the real KFD
//! transport (gfx1100, or gfx1201): the input's dwords, in whole 64-byte packets,
//! written to the ring and submitted. The host must not panic, and the queue must end
//! running (all consumed), blocked (a barrier, an unpublished header, a scratch
//! request), stopped with an error, or faulted.
//!
//! Input: a control byte (bit 0: gfx1201), then little-endian dwords, where
//! `0xb0f0xxxx` / `0x0000b0f1` become the low (+ offset xxxx) and high halves of a
//! 64 KiB buffer's address (kernel descriptors, signals, indirect buffers). The buffer
//! holds 8 dwords of PM4 NOP at 0x1000 (for an indirect-buffer packet), the committed
//! `vadd` kernel of the GPU's generation (its descriptor at 0x3000, its code at 0x3100)
//! and its arguments at 0x4000 (three 64-element arrays in the buffer), so that
//! packets naming them run real work.
#![no_main]

use std::sync::LazyLock;

use amd_hcq_fuzz::{Gpu, dwords, relocate};
use amd_kfd::QueueKind;
use amd_mockgpu::GpuProfile;
use amd_packets::GfxTarget;
use amd_packets::pm4::Nop;
use libfuzzer_sys::fuzz_target;

const RING_BYTES: usize = 0x1000;

/// Where the PM4 NOPs, the kernel's descriptor, code and arguments are in the buffer.
const PM4: usize = 0x1000;
const DESCRIPTOR: usize = 0x3000;
const CODE: usize = 0x3100;
const KERNARGS: usize = 0x4000;

/// The committed `vadd` kernels' descriptors and code, read once.
static VADD_GFX1100: LazyLock<(Vec<u8>, Vec<u8>)> =
    LazyLock::new(|| vadd(include_bytes!("../../tests/kernels/vadd.hsaco")));
static VADD_GFX1201: LazyLock<(Vec<u8>, Vec<u8>)> =
    LazyLock::new(|| vadd(include_bytes!("../../tests/kernels/gfx1201/vadd.hsaco")));

/// `vadd`'s descriptor (its entry offset pointing at [`CODE`]) and code, placed for
/// [`DESCRIPTOR`] and [`CODE`].
fn vadd(elf: &[u8]) -> (Vec<u8>, Vec<u8>) {
    let co = amd_hcq::CodeObject::parse(elf).expect("a committed code object");
    let k = co.kernel("vadd").expect("its vadd kernel");
    let at = k.descriptor_offset as usize;
    let mut desc = co.image[at..at + 64].to_vec();
    desc[16..24].copy_from_slice(&((CODE - DESCRIPTOR) as i64).to_le_bytes());
    let entry = (k.descriptor_offset as i64 + k.descriptor.entry_offset) as usize;
    let code = co.image[entry..(entry + 0x800).min(co.image.len())].to_vec();
    (desc, code)
}

fuzz_target!(|data: &[u8]| {
    let [ctl, data @ ..] = data else { return };
    let (gpu, target, (desc, code)) = if ctl & 1 != 0 {
        (Gpu::of(GpuProfile::gfx1201()), GfxTarget::Gfx12, &*VADD_GFX1201)
    } else {
        (Gpu::gfx1100(), GfxTarget::Gfx11, &*VADD_GFX1100)
    };
    let mut nops = Vec::new();
    Nop::new(8).expect("a NOP").encode(target, &mut nops);
    let nops: Vec<u8> = nops.iter().flat_map(|w| w.to_le_bytes()).collect();
    gpu.buf.write(PM4, &nops).expect("the NOPs");
    let va = gpu.buf.va() as u64;
    gpu.buf.write(DESCRIPTOR, desc).expect("the descriptor");
    gpu.buf.write(CODE, code).expect("the code");
    let args: Vec<u8> = [va + 0x5000, va + 0x6000, va + 0x7000, 64]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    gpu.buf.write(KERNARGS, &args).expect("the arguments");
    let mut words = dwords(data);
    relocate(&mut words, va, gpu.vram.va() as u64);
    words.truncate(words.len() / 16 * 16);
    let mut q = gpu.queue(QueueKind::ComputeAql, RING_BYTES);
    q.write(&words[..words.len().min(RING_BYTES / 4)]);
    q.submit();
    gpu.check_ended(&q, true);
});
