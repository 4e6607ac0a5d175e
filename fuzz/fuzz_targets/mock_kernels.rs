//! Hostile code in a dispatched kernel: the input's bytes (after a control byte)
//! become the instructions of a kernel the mock's RDNA3 (gfx1100) or RDNA4 (gfx1201)
//! interpreter runs, from GPU memory, through a DISPATCH_DIRECT on a small grid with
//! a small instruction budget.
//! Every user SGPR pair but the last and the buffer itself hold the address of a
//! 64 KiB buffer, so pointer loads land in mapped memory; the last pair holds a VRAM
//! buffer's, which the mock's sanitizer (on) watches. The queue must end running (the kernel
//! finished), stopped with an error, or faulted; never a host panic.
//!
//! Control byte: bits 0..3 pick RSRC2 among the committed kernels' values; bit 3: 64
//! lanes per workgroup (else 32); bit 4: two workgroups; bit 5: block height 2; bit 6:
//! the other RSRC1; bit 7: a gfx1201 (else gfx1100).
#![no_main]

use amd_hcq_fuzz::{BUF_SIZE, Gpu};
use amd_kfd::{MemoryKind, QueueKind};
use amd_mockgpu::GpuProfile;
use amd_packets::GfxTarget;
use amd_packets::pm4::DispatchInitiator;
use amd_packets::pm4::recipes::Dispatch;
use libfuzzer_sys::fuzz_target;

/// `s_endpgm` (the same in both generations), after the input, so code that falls
/// through ends.
const S_ENDPGM: u32 = 0xbfb0_0000;
/// RSRC2 values of the committed kernels (-O2 and -O0).
const RSRC2: [u32; 8] = [0x9e, 0x139b, 0x139a, 0x99c, 0x9f, 0x109e, 0x9e, 0x139b];

fuzz_target!(|data: &[u8]| {
    let [ctl, code @ ..] = data else { return };
    if code.len() > 0x4000 {
        return;
    }
    let (gpu, t) = if ctl & 0x80 != 0 {
        (Gpu::of(GpuProfile::gfx1201()), GfxTarget::Gfx12)
    } else {
        (Gpu::gfx1100(), GfxTarget::Gfx11)
    };
    let va = gpu.buf.va() as u64;
    // The buffer holds its own address, so every 8-byte load of it is a pointer back
    // into it.
    let fill: Vec<u8> = (0..BUF_SIZE / 8).flat_map(|_| va.to_le_bytes()).collect();
    gpu.buf.write(0, &fill).expect("fill the buffer");
    let mut bytes = code.to_vec();
    bytes.resize(code.len().next_multiple_of(4), 0);
    bytes.extend_from_slice(&S_ENDPGM.to_le_bytes());
    let code_mem = gpu.dev.alloc(bytes.len(), MemoryKind::UNCACHED).expect("code memory");
    code_mem.write(0, &bytes).expect("write the code");
    let scratch = gpu.dev.alloc(BUF_SIZE, MemoryKind::DEVICE).expect("scratch");
    // The last pair is the VRAM buffer's address: memory the sanitizer watches.
    let vram = gpu.vram.va() as u64;
    let user: Vec<u32> = (0..8)
        .flat_map(|i| {
            let a = if i == 7 { vram } else { va };
            [a as u32, (a >> 32) as u32]
        })
        .collect();

    let mut c = gpu.queue(QueueKind::Compute, 0x1000);
    let mut words = Vec::new();
    Dispatch {
        code_addr: code_mem.va() as u64,
        rsrc1: if ctl & 0x40 != 0 { 0x40af_0080 } else { 0x40af_0103 },
        rsrc2: RSRC2[(ctl & 7) as usize],
        rsrc3: 0,
        tmpring_size: 0x10200,
        scratch_base: scratch.va() as u64,
        user_data: &user,
        block: [
            if ctl & 8 != 0 { 64 } else { 32 },
            if ctl & 0x20 != 0 { 2 } else { 1 },
            1,
        ],
        grid: [if ctl & 0x10 != 0 { 2 } else { 1 }, 1, 1],
        initiator: DispatchInitiator::DEFAULT,
    }
    .encode(t, &mut words)
    .expect("a dispatch");
    c.write(&words);
    c.submit();
    gpu.check_ended(&c, false);
});
