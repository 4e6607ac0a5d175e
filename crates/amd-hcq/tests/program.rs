//! Code objects, programs and launches, on the mock GPU; launches over both
//! transports (KFD and driverless) from the same code, except where a test reads
//! the KFD mock's queues.

mod common;

use std::sync::Arc;
use std::time::Duration;

use amd_hcq::{
    ArgKind, BufferKind, CodeObject, HcqError, Iface, KernArgs, KernelDescriptor, KernelLimit, LaunchDims, LaunchLimit,
    Platform, Program,
};
use amd_mockgpu::{MockConfig, MockSys, QueueStatus};
use common::{Transport, rand_u32};

const VADD: &[u8] = include_bytes!("../../../tests/kernels/vadd.hsaco");

on_every_queue!(
    launches_vadd_with_the_tinygrad_registers_and_arguments,
    bad_programs_and_launches_are_refused,
    scratch_grows_with_the_tinygrad_formula,
    vadd_runs_on_the_interpreter,
    a_wave64_kernel_runs_in_waves_of_64,
    a_copy_after_a_launch_sees_its_results,
    the_interpreter_counts_the_work_it_does,
    the_descriptor_float_mode_sets_denormal_flushing,
    kernel_arguments_are_reused_only_after_their_launch,
    replayed_launches_take_their_own_arguments_and_checks,
);

on_transport!(gfx1201_kfd, KfdGfx1201, a_gfx1201_wave64_kernel_runs_in_waves_of_64);
on_transport!(gfx1201_pci, PciGfx1201, a_gfx1201_wave64_kernel_runs_in_waves_of_64);

fn platform_on(t: Transport) -> (Arc<MockSys>, Platform) {
    common::platform(t, 1)
}

fn platform() -> (Arc<MockSys>, Platform) {
    let m = Arc::new(MockSys::new(MockConfig::gfx1100s(1)));
    let p = Platform::with_sys(m.clone(), Iface::Mock).unwrap();
    (m, p)
}

#[test]
fn reads_the_vadd_code_object() {
    let co = CodeObject::parse(VADD).unwrap();
    assert_eq!(co.kernel_names(), ["vadd"]);
    assert_eq!(co.target.as_deref(), Some("amdgcn-amd-amdhsa--gfx1100"));
    let k = co.kernel("vadd").unwrap();
    // The golden capture's values: rsrc1 | 1<<20 = 0x40bf0080, rsrc2 = 0x9e.
    assert_eq!(k.descriptor.rsrc1 | 1 << 20, 0x40bf_0080);
    assert_eq!(k.descriptor.rsrc2, 0x9e);
    assert_eq!((k.descriptor.kernarg_size, k.descriptor.group_segment_size), (28, 0));
    let kinds: Vec<_> = k.args.iter().map(|a| (a.offset, a.size, a.kind.clone())).collect();
    assert_eq!(
        kinds,
        [
            (0, 8, ArgKind::Buffer),
            (8, 8, ArgKind::Buffer),
            (16, 8, ArgKind::Buffer),
            (24, 4, ArgKind::Value)
        ]
    );
    let e = co.kernel("vmul").unwrap_err();
    assert!(e.to_string().contains("no kernel \"vmul\" (kernels: vadd)"), "{e}");
    let want = HcqError::NoKernel {
        name: "vmul".into(),
        available: vec!["vadd".into()],
    };
    assert_eq!(e, want);
}

#[test]
fn malformed_code_objects_are_errors() {
    assert!(CodeObject::parse(b"not an elf").is_err());
    assert!(CodeObject::parse(&VADD[..200]).is_err());
    assert!(CodeObject::parse(&[]).is_err());
    // Flipped bytes anywhere: an error or a parse, never a panic.
    for flips in rand_u32(4 * 3000, 0x9e37_79b9).chunks(4) {
        let mut bad = VADD.to_vec();
        for &x in flips {
            let i = x as usize % bad.len();
            bad[i] ^= (x >> 8) as u8 | 1;
        }
        if let Ok(co) = CodeObject::parse(&bad) {
            let _ = co.kernel("vadd");
            let _ = co.kernel_names();
        }
    }
}

/// The vadd code object with the descriptor patched by `f`.
fn patched(f: impl Fn(&mut [u8])) -> Vec<u8> {
    let co = CodeObject::parse(VADD).unwrap();
    let off = co.kernel("vadd").unwrap().descriptor_offset as usize;
    let mut bytes = VADD.to_vec();
    // The descriptor's segment starts at file offset 0 here (its address is its file offset).
    assert_eq!(&bytes[off..off + 64], &co.image[off..off + 64]);
    f(&mut bytes[off..off + 64]);
    bytes
}

fn launches_vadd_with_the_tinygrad_registers_and_arguments(t: Transport) {
    let (m, p) = platform_on(t);
    let dev = p.device(0).unwrap();
    let prg = Program::load(&dev, VADD, "vadd").unwrap();
    assert_eq!(prg.rsrc(), (0x40bf_0080, 0x9e));
    assert_eq!(
        dev.tmpring_size().unwrap(),
        0x10200,
        "the golden capture's TMPRING_SIZE"
    );
    let (a, b, c) = (
        dev.alloc(2048, BufferKind::Device).unwrap(),
        dev.alloc(2048, BufferKind::Device).unwrap(),
        dev.alloc(2048, BufferKind::Device).unwrap(),
    );
    for buf in [&a, &b] {
        dev.fill(buf, 0, 2048, 0).unwrap();
    }
    let dims = LaunchDims {
        global: [4, 2, 1],
        local: [64, 1, 1],
    };
    let args = prg.kernargs(&[&a, &b, &c], &[512], dims).unwrap();
    let mut want = Vec::new();
    for buf in [&a, &b, &c] {
        want.extend(buf.va().to_le_bytes());
    }
    want.extend(512u32.to_le_bytes());
    assert_eq!(args, want, "buffers then the value, as the golden kernarg bytes");
    let took = prg.launch_timed(&[&a, &b, &c], &[512], dims).unwrap();
    assert!(took > std::time::Duration::ZERO);
    let ds = m.dispatches();
    assert_eq!(ds.len(), 1);
    let d = &ds[0];
    assert_eq!(d.regs.code_addr, prg.code_addr());
    // An AQL queue's dispatch has the firmware's registers: the descriptor's RSRC1
    // (without the PRIV bit tinygrad sets on gfx11), the grid in work-items.
    let rsrc1 = if t == Transport::KfdAql {
        0x40bf_0080 & !(1 << 20)
    } else {
        0x40bf_0080
    };
    assert_eq!(d.regs.rsrc, [rsrc1, 0x9e, 0]);
    assert_eq!(
        (d.regs.groups(), d.regs.block, d.regs.tmpring_size),
        ([4, 2, 1], [64, 1, 1], 0x10200)
    );
    let kernarg_ptr = d.regs.user_data[0] as u64 | (d.regs.user_data[1] as u64) << 32;
    assert_eq!(kernarg_ptr % 64, 0);

    // Two programs, 100 times each, in order.
    let prg2 = Program::load(&dev, VADD, "vadd").unwrap();
    for i in 0..100u32 {
        prg.launch(&[&a, &b, &c], &[i], dims).unwrap();
        prg2.launch(
            &[&c, &b, &a],
            &[i],
            LaunchDims {
                global: [1, 1, 1],
                local: [32, 1, 1],
            },
        )
        .unwrap();
    }
    dev.synchronize().unwrap();
    let ds = m.dispatches();
    assert_eq!(ds.len(), 201);
    for (i, pair) in ds[1..].chunks(2).enumerate() {
        assert_eq!(
            (pair[0].regs.groups(), pair[1].regs.groups()),
            ([4, 2, 1], [1, 1, 1]),
            "launch pair {i} in order"
        );
        assert_eq!(
            (pair[0].regs.code_addr, pair[1].regs.code_addr),
            (prg.code_addr(), prg2.code_addr())
        );
    }
}

fn bad_programs_and_launches_are_refused(t: Transport) {
    let (_m, p) = platform_on(t);
    let dev = p.device(0).unwrap();
    let lds = patched(|kd| kd[0..4].copy_from_slice(&0x20000u32.to_le_bytes()));
    let e = Program::load(&dev, &lds, "vadd").unwrap_err();
    assert_eq!(
        e.to_string(),
        "kernel vadd: Too many resources requested: group_segment_size (asks for 131072 bytes of LDS; GPU 0 has \
         65536)"
    );
    let unsupported = |limit| HcqError::KernelUnsupported {
        kernel: "vadd".into(),
        limit,
    };
    let lds = KernelLimit::Lds {
        bytes: 131072,
        available: 65536,
        device: 0,
    };
    assert_eq!(e, unsupported(lds));
    // More VGPRs than a wave has (granule field 63: 512 registers).
    let vgprs = patched(|kd| kd[48] |= 0x3f);
    let e = Program::load(&dev, &vgprs, "vadd").unwrap_err();
    assert!(
        e.to_string()
            .contains("asks for 512 VGPRs; a wave of GPU 0 (gfx1100) has at most 256"),
        "{e}"
    );
    let vgprs = KernelLimit::Vgprs {
        vgprs: 512,
        max: 256,
        device: 0,
        arch: "gfx1100".into(),
    };
    assert_eq!(e, unsupported(vgprs));
    // Scratch no device has: 2^31 bytes per lane.
    let scratch = patched(|kd| kd[4..8].copy_from_slice(&0x8000_0000u32.to_le_bytes()));
    let e = Program::load(&dev, &scratch, "vadd").unwrap_err();
    assert!(
        e.to_string().contains("scratch of 2147483648 bytes per lane overflows"),
        "{e}"
    );
    let props = dev.props();
    assert!(
        matches!(e, HcqError::ScratchOverflow { per_lane: 0x8000_0000, cu_count, simd_per_cu, .. }
            if cu_count == props.cu_count && simd_per_cu == props.simd_per_cu),
        "{e:?}"
    );
    // User SGPRs the runtime does not set up (the queue pointer).
    let queue_ptr = patched(|kd| kd[56] |= KernelDescriptor::QUEUE_PTR as u8);
    let e = Program::load(&dev, &queue_ptr, "vadd").unwrap_err();
    let vadd = CodeObject::parse(VADD).unwrap().kernel("vadd").unwrap().descriptor;
    let properties = vadd.properties | KernelDescriptor::QUEUE_PTR;
    assert_eq!(e, unsupported(KernelLimit::UserSgprs { properties }));
    // An entry 4 bytes past where it should be.
    let entry = patched(|kd| {
        let off = i64::from_le_bytes(kd[16..24].try_into().unwrap()) + 4;
        kd[16..24].copy_from_slice(&off.to_le_bytes());
    });
    let e = Program::load(&dev, &entry, "vadd").unwrap_err();
    assert!(
        matches!(&e, HcqError::KernelUnsupported { limit: KernelLimit::EntryAlign { entry }, .. } if entry % 256 == 4),
        "{e:?}"
    );

    let prg = Program::load(&dev, VADD, "vadd").unwrap();
    let a = dev.alloc(64, BufferKind::Device).unwrap();
    let dims = LaunchDims {
        global: [1, 1, 1],
        local: [64, 1, 1],
    };
    let e = prg.launch(&[&a, &a], &[1], dims).unwrap_err();
    assert!(
        e.to_string().contains("takes 3 buffers and 1 value words, got 2 and 1"),
        "{e}"
    );
    let words = |given_buffers, given_words| HcqError::ArgumentWords {
        kernel: "vadd".into(),
        buffers: 3,
        words: 1,
        given_buffers,
        given_words,
    };
    assert_eq!(e, words(2, 1));
    assert_eq!(prg.launch(&[&a, &a, &a], &[], dims).unwrap_err(), words(3, 0));
    let too_big = LaunchDims {
        global: [1, 1, 1],
        local: [2048, 1, 1],
    };
    let e = prg.launch(&[&a, &a, &a], &[1], too_big).unwrap_err();
    assert!(
        matches!(
            e,
            HcqError::LaunchDims {
                workgroup: [2048, 1, 1],
                limit: LaunchLimit::WorkgroupSize { work_items: 2048, .. },
                ..
            }
        ),
        "{e:?}"
    );
    let empty = LaunchDims {
        global: [0, 1, 1],
        local: [64, 1, 1],
    };
    assert!(prg.launch(&[&a, &a, &a], &[1], empty).is_err());
}

fn scratch_grows_with_the_tinygrad_formula(t: Transport) {
    let (_m, p) = platform_on(t);
    let dev = p.device(0).unwrap();
    assert_eq!(dev.tmpring_size().unwrap(), 0x10200);
    dev.ensure_scratch(1024).unwrap();
    // 32 waves per CU × 1024 bytes = 32 KiB per wave slot group: 128 × 256-byte units,
    // and the wave size per shader engine: 96 CUs × 32 slots × 32 KiB / (32 KiB × 6).
    assert_eq!(dev.tmpring_size().unwrap(), (128 << 12) | 512);
}

fn vadd_runs_on_the_interpreter(t: Transport) {
    vadd_runs(t, VADD);
}

/// The same kernel built for wave64 (`tests/kernels/wave64/vadd.hsaco`): the runtime
/// launches it with CS_W32_EN clear (the AQL queue by its descriptor), and the
/// interpreter runs it in waves of 64 lanes.
fn a_wave64_kernel_runs_in_waves_of_64(t: Transport) {
    let initiator = vadd_runs_in_waves_of_64(t, include_bytes!("../../../tests/kernels/wave64/vadd.hsaco"));
    assert_eq!(initiator & 1 << 15, 0, "CS_W32_EN clear");
}

/// vadd built for gfx1201 in wave64 (`tests/kernels/gfx1201/wave64/vadd.hsaco`) runs
/// in waves of 64 lanes on the RDNA4 interpreter, over both transports.
fn a_gfx1201_wave64_kernel_runs_in_waves_of_64(t: Transport) {
    vadd_runs_in_waves_of_64(t, include_bytes!("../../../tests/kernels/gfx1201/wave64/vadd.hsaco"));
}

/// Runs vadd of wave64 code object `elf` ([`vadd_runs`]), checks that the program and
/// its dispatch are wave64, and returns the dispatch's DISPATCH_INITIATOR.
fn vadd_runs_in_waves_of_64(t: Transport, elf: &[u8]) -> u32 {
    let (m, wave64) = vadd_runs(t, elf);
    assert!(wave64, "Program::wave64");
    let d = m.dispatches().pop().expect("a dispatch");
    assert!(d.regs.wave64, "a wave64 dispatch");
    d.regs.initiator
}

/// Runs vadd of code object `elf` over 5,000 elements and checks them; the mock, and
/// whether the program is wave64.
fn vadd_runs(t: Transport, elf: &[u8]) -> (Arc<MockSys>, bool) {
    let (m, p) = platform_on(t);
    let dev = p.device(0).unwrap();
    let prg = Program::load(&dev, elf, "vadd").unwrap();
    let n = 5000usize; // not a multiple of the workgroup: the tail is masked by `i < n`
    let a: Vec<f32> = (0..n).map(|i| i as f32 * 0.5).collect();
    let b: Vec<f32> = (0..n).map(|i| 1000.0 - i as f32).collect();
    let bytes = |v: &[f32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    let (ba, bb, bc) = (
        dev.alloc(n * 4, BufferKind::Device).unwrap(),
        dev.alloc(n * 4, BufferKind::Device).unwrap(),
        dev.alloc(n * 4 + 1024, BufferKind::Device).unwrap(),
    );
    dev.copy_in(&ba, 0, &bytes(&a)).unwrap();
    dev.copy_in(&bb, 0, &bytes(&b)).unwrap();
    dev.copy_in(&bc, 0, &vec![0xff; n * 4 + 1024]).unwrap();
    let dims = LaunchDims {
        global: [n.div_ceil(256) as u32, 1, 1],
        local: [256, 1, 1],
    };
    prg.launch_timed(&[&ba, &bb, &bc], &[n as u32], dims).unwrap();
    let mut out = vec![0u8; n * 4 + 1024];
    dev.copy_out(&mut out, &bc, 0).unwrap();
    for i in 0..n {
        let got = f32::from_le_bytes([out[4 * i], out[4 * i + 1], out[4 * i + 2], out[4 * i + 3]]);
        assert_eq!(got, a[i] + b[i], "element {i}");
    }
    assert!(out[n * 4..].iter().all(|&x| x == 0xff), "nothing written past n");
    (m, prg.wave64())
}

fn a_copy_after_a_launch_sees_its_results(t: Transport) {
    // Compute writes C; the copy engine reads C right after, without a host sync in
    // between: the timeline (and the barrier before each launch) orders them.
    let (_m, p) = platform_on(t);
    let dev = p.device(0).unwrap();
    let prg = Program::load(&dev, VADD, "vadd").unwrap();
    let n = 1024usize;
    let one: Vec<u8> = (0..n).flat_map(|_| 1.0f32.to_le_bytes()).collect();
    let (a, b, c, d) = (
        dev.alloc(n * 4, BufferKind::Device).unwrap(),
        dev.alloc(n * 4, BufferKind::Device).unwrap(),
        dev.alloc(n * 4, BufferKind::Device).unwrap(),
        dev.alloc(n * 4, BufferKind::Device).unwrap(),
    );
    dev.copy_in(&a, 0, &one).unwrap();
    dev.copy_in(&b, 0, &one).unwrap();
    let dims = LaunchDims {
        global: [4, 1, 1],
        local: [256, 1, 1],
    };
    for _ in 0..3 {
        prg.launch(&[&a, &b, &c], &[n as u32], dims).unwrap();
        dev.copy(&d, 0, &c, 0, n * 4).unwrap();
        // a += 1 each round, through the copy engine, before the next launch reads it.
        prg.launch(&[&a, &b, &a], &[n as u32], dims).unwrap();
    }
    let out = common::download(&dev, &d, n);
    // Rounds: a = 1, 2, 3 before each first launch, so the last C is 3 + 1.
    assert!(out.iter().all(|&w| f32::from_bits(w) == 4.0));
}

#[test]
fn an_instruction_the_interpreter_lacks_stops_the_queue_and_the_wait() {
    let (m, p) = platform();
    let dev = p.device(0).unwrap();
    dev.set_timeout(Duration::from_secs(60));
    // Replace vadd's first instruction with VOP3 opcode 0x3ff, which does not exist.
    let co = CodeObject::parse(VADD).unwrap();
    let kd = co.kernel("vadd").unwrap().descriptor_offset as usize;
    let mut elf = VADD.to_vec();
    let entry = kd as i64 + i64::from_le_bytes(co.image[kd + 16..kd + 24].try_into().unwrap());
    // The entry's address is not its file offset: find its first 16 bytes in the file.
    let head = &co.image[entry as usize..entry as usize + 16];
    let at: Vec<usize> = (0..elf.len() - 16).filter(|&o| &elf[o..o + 16] == head).collect();
    assert_eq!(at.len(), 1);
    elf[at[0]..at[0] + 8].copy_from_slice(&[0x01, 0x00, 0xff, 0xd7, 0x02, 0x07, 0x02, 0x00]);
    let prg = Program::load(&dev, &elf, "vadd").unwrap();
    let buf = dev.alloc(4096, BufferKind::Device).unwrap();
    let dims = LaunchDims {
        global: [1, 1, 1],
        local: [32, 1, 1],
    };
    let started = std::time::Instant::now();
    match prg.launch_timed(&[&buf, &buf, &buf], &[8], dims) {
        // The driver's hardware-exception event ends the wait well before the timeout.
        Err(HcqError::DeviceFault { report, kernel, .. }) => {
            assert!(report.iter().any(|r| r.starts_with("HW fault")), "{report:?}");
            assert_eq!(kernel.as_deref(), Some("vadd"));
        }
        other => panic!("{other:?}"),
    }
    assert!(started.elapsed() < Duration::from_secs(10));
    // The mock's queue state names the instruction.
    let errors: Vec<String> = m
        .queues()
        .iter()
        .filter_map(|q| match m.queue_state(q.id)?.status {
            QueueStatus::Error(e) => Some(e),
            _ => None,
        })
        .collect();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0].contains("0x3ff") && errors[0].contains("d7ff0001"),
        "{}",
        errors[0]
    );
}

fn the_interpreter_counts_the_work_it_does(t: Transport) {
    let (m, p) = platform_on(t);
    let exec = amd_mockgpu::Rdna3Executor::default();
    let counters = exec.counters();
    m.set_kernel_executor(Box::new(exec));
    let dev = p.device(0).unwrap();
    let prg = Program::load(&dev, VADD, "vadd").unwrap();
    let buf = dev.alloc(4096, BufferKind::Device).unwrap();
    dev.fill(&buf, 0, 4096, 0).unwrap();
    // 40 threads: a full wave and a wave with 8 lanes.
    let dims = LaunchDims {
        global: [1, 1, 1],
        local: [40, 1, 1],
    };
    let read = || {
        use std::sync::atomic::Ordering::Relaxed;
        (
            counters.instructions.load(Relaxed),
            counters.lane_instructions.load(Relaxed),
        )
    };
    prg.launch_timed(&[&buf, &buf, &buf], &[40], dims).unwrap();
    let (insts, lanes) = read();
    assert!(insts > 0 && lanes > insts && lanes < 32 * insts, "{insts} {lanes}");
    // Both waves run the same straight-line code: 32 + 8 lanes per instruction pair.
    assert_eq!(insts % 2, 0);
    assert_eq!(lanes, insts / 2 * 40);
    prg.launch_timed(&[&buf, &buf, &buf], &[40], dims).unwrap();
    assert_eq!(read(), (2 * insts, 2 * lanes), "the same launch counts the same again");
}

fn the_descriptor_float_mode_sets_denormal_flushing(t: Transport) {
    let (_m, p) = platform_on(t);
    let dev = p.device(0).unwrap();
    // vadd of denormals: kept as compiled (FLOAT_MODE 0xf0), flushed with RSRC1's f32
    // denormal bits (FLOAT_DENORM_MODE_32, bits 16-17) cleared.
    let flushing = patched(|kd| {
        let rsrc1 = u32::from_le_bytes(kd[48..52].try_into().unwrap()) & !(3 << 16);
        kd[48..52].copy_from_slice(&rsrc1.to_le_bytes());
    });
    let n = 64usize;
    let tiny = (-140f32).exp2();
    let bytes: Vec<u8> = (0..n).flat_map(|i| (tiny * (i + 1) as f32).to_le_bytes()).collect();
    let dims = LaunchDims {
        global: [1, 1, 1],
        local: [64, 1, 1],
    };
    for (elf, flush) in [(VADD, false), (&flushing[..], true)] {
        let prg = Program::load(&dev, elf, "vadd").unwrap();
        let (a, c) = (
            dev.alloc(n * 4, BufferKind::Device).unwrap(),
            dev.alloc(n * 4, BufferKind::Device).unwrap(),
        );
        dev.copy_in(&a, 0, &bytes).unwrap();
        prg.launch_timed(&[&a, &a, &c], &[n as u32], dims).unwrap();
        let mut out = vec![0u8; n * 4];
        dev.copy_out(&mut out, &c, 0).unwrap();
        for i in 0..n {
            let got = f32::from_le_bytes(out[4 * i..4 * i + 4].try_into().unwrap());
            let want = if flush { 0.0 } else { 2.0 * tiny * (i + 1) as f32 };
            assert_eq!(got, want, "element {i}, flush {flush}");
        }
    }
}

#[test]
fn a_kernel_touching_unmapped_memory_reports_the_faulting_address() {
    let (m, p) = platform();
    let dev = p.device(0).unwrap();
    let prg = Program::load(&dev, VADD, "vadd").unwrap();
    let n = 256usize;
    let (a, b, c) = (
        dev.alloc(n * 4, BufferKind::Device).unwrap(),
        dev.alloc(n * 4, BufferKind::Device).unwrap(),
        dev.alloc(n * 4, BufferKind::Device).unwrap(),
    );
    for buf in [&a, &b] {
        dev.wait_timeline(dev.fill(buf, 0, n * 4, 0).unwrap()).unwrap();
    }
    // Element 77 of `b` faults, as an unmapped page would.
    let bad = b.va() + 77 * 4;
    m.fault_address(0, bad);
    let dims = LaunchDims {
        global: [1, 1, 1],
        local: [256, 1, 1],
    };
    match prg.launch_timed(&[&a, &b, &c], &[n as u32], dims) {
        Err(HcqError::DeviceFault { report, kernel, .. }) => {
            let want = format!("MMU fault: 0x{bad:X} | NotPresent=1 ReadOnly=0 NoExecute=0 imprecise=0");
            assert!(report[0].starts_with(&want), "{report:?}");
            assert!(report.iter().any(|l| l.contains("global_load")), "{report:?}");
            assert_eq!(kernel.as_deref(), Some("vadd"));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn malformed_code_objects_say_what_is_wrong() {
    let e = CodeObject::parse(&VADD[..1000]).unwrap_err().to_string();
    assert!(
        e.contains(&format!(
            "truncated: the file has 1000 bytes, its headers describe at least {}",
            VADD.len()
        )),
        "{e}"
    );
    let e = CodeObject::parse(&VADD[..10]).unwrap_err().to_string();
    assert!(
        e.contains("truncated: the file has 10 bytes, its headers describe at least 64"),
        "{e}"
    );
    for junk in [&b"not an elf"[..], &[], b"\x7fEL"] {
        let e = CodeObject::parse(junk).unwrap_err();
        assert!(
            matches!(&e, HcqError::CodeObject { msg } if msg.contains("not an ELF file") || msg.contains("truncated")),
            "{e:?}"
        );
    }
}

/// The kernel-argument region is a ring: once it wraps, a block is handed out again
/// only after the launch that read it is done. With the engine held at a signal,
/// launches fill a 1 KiB region; the next ones wait for room until the signal opens,
/// and every launch computes with its own arguments (its own output and length).
fn kernel_arguments_are_reused_only_after_their_launch(t: Transport) {
    use amd_hcq::{KernArgs, SymDims};
    use std::sync::atomic::{AtomicBool, Ordering};
    const LAUNCHES: usize = 100;
    const N: usize = 64;
    let (_m, p) = platform_on(t);
    let dev = p.device(0).unwrap();
    let prg = Program::load(&dev, VADD, "vadd").unwrap();
    assert!(dev.set_kernarg_region_for_test(63).is_err());
    dev.set_kernarg_region_for_test(1024).unwrap();
    let input: Vec<u32> = (0..N as u32).map(|i| (i as f32 + 0.5).to_bits()).collect();
    let a = common::upload(&dev, &input);
    let outs: Vec<_> = (0..LAUNCHES).map(|_| common::upload(&dev, &[0; N])).collect();

    let gate = Arc::new(dev.new_signal(0).unwrap());
    let mut q = dev.compute_queue();
    q.wait(&gate, 1);
    dev.submit_compute(&q).unwrap();
    let opened = Arc::new(AtomicBool::new(false));
    let opener = {
        let (gate, opened) = (gate.clone(), opened.clone());
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            // SeqCst: seen set by any launch that returns after the gate opens.
            opened.store(true, Ordering::SeqCst);
            gate.set(1).unwrap();
        })
    };
    for (i, out) in outs.iter().enumerate() {
        let n = 1 + (i * 7) % N;
        let args = KernArgs::new().buffer(&a).buffer(&a).buffer(out).u32(n as u32);
        prg.enqueue(&args, SymDims::new([1, 1, 1], [256, 1, 1])).unwrap();
        // Blocks are at least 64 bytes: past 16 launches the region must have wrapped
        // onto blocks whose launches could run only once the gate opened.
        if i >= 16 {
            assert!(
                opened.load(Ordering::SeqCst),
                "launch {i} reused a block before its launch ran"
            );
        }
    }
    opener.join().unwrap();
    dev.synchronize().unwrap();
    for (i, out) in outs.iter().enumerate() {
        let n = 1 + (i * 7) % N;
        let got = common::download(&dev, out, N);
        for (k, &w) in got.iter().enumerate() {
            let want = if k < n { (2.0 * (k as f32 + 0.5)).to_bits() } else { 0 };
            assert_eq!(w, want, "launch {i} (n = {n}), element {k}");
        }
    }
    // Arguments larger than the whole region are refused, with both sizes: dims3d's
    // segment is 264 bytes (its hidden arguments).
    dev.set_kernarg_region_for_test(256).unwrap();
    let dims = Program::load(&dev, common::DIMS3D.of(t), "dims3d").unwrap();
    match dims.enqueue(&KernArgs::new().buffer(&outs[0]), SymDims::new([1, 1, 1], [1, 1, 1])) {
        Err(HcqError::KernargsTooLarge { len, region: 256 }) => assert!(len >= 264, "{len}"),
        other => panic!("{other:?}"),
    }
}

/// A launch of the word form is recorded once per program and sizes and then replayed
/// with each launch's own arguments: every launch computes with its own output and
/// length, across more programs and sizes than a device remembers, and a replayed
/// launch is refused exactly as a recorded one is.
fn replayed_launches_take_their_own_arguments_and_checks(t: Transport) {
    const N: usize = 1024;
    let (_m, p) = common::platform(t, 2);
    let (dev, d1) = (p.device(0).unwrap(), p.device(1).unwrap());
    // The same code loaded twice: two programs.
    let progs = [0, 1].map(|_| Program::load(&dev, common::VADD.of(t), "vadd").unwrap());
    let input: Vec<u32> = (0..N as u32).map(|i| (i as f32 + 0.25).to_bits()).collect();
    let a = common::upload(&dev, &input);
    let want = |n: usize, k: usize| if k < n { (2.0 * (k as f32 + 0.25)).to_bits() } else { 0 };
    // 36 (program, sizes) pairs, three rounds: more pairs than a device keeps (32).
    let dims = |k: usize| LaunchDims {
        global: [4 + (k % 3) as u32, 1 + (k / 3) as u32, 1],
        local: [256, 1, 1],
    };
    let mut launches = Vec::new();
    for i in 0..108 {
        let k = i % 36;
        let n = 1 + (i * 97) % N;
        let out = common::upload(&dev, &[0; N]);
        progs[k % 2].launch(&[&a, &a, &out], &[n as u32], dims(k)).unwrap();
        launches.push((out, n));
    }
    // One pair again and again: replayed after its first launch.
    let before = dev.replayed_launches_for_test();
    for i in 0..20 {
        let n = 1 + (i * 131) % N;
        let out = common::upload(&dev, &[0; N]);
        progs[1].launch(&[&a, &a, &out], &[n as u32], dims(5)).unwrap();
        launches.push((out, n));
    }
    assert!(dev.replayed_launches_for_test() - before >= 19);
    dev.synchronize().unwrap();
    for (i, (out, n)) in launches.iter().enumerate() {
        let got = common::download(&dev, out, N);
        for (k, &w) in got.iter().enumerate() {
            assert_eq!(w, want(*n, k), "launch {i} (n = {n}), element {k}");
        }
    }

    // Refusals on the replay path are the recording path's: another GPU's memory...
    let b1 = d1.alloc(4096, BufferKind::Device).unwrap();
    let fresh = Program::load(&dev, common::VADD.of(t), "vadd").unwrap();
    let recorded = fresh.launch(&[&a, &b1, &a], &[8], dims(5)).unwrap_err();
    let replayed = progs[1].launch(&[&a, &b1, &a], &[8], dims(5)).unwrap_err();
    assert_eq!(replayed, recorded);
    assert!(
        matches!(
            replayed,
            HcqError::NotMapped {
                owner: 1,
                device: 0,
                ..
            }
        ),
        "{replayed:?}"
    );
    // ... the wrong number of words...
    let e = progs[1].launch(&[&a, &a, &a], &[], dims(5)).unwrap_err();
    assert!(matches!(e, HcqError::ArgumentWords { given_words: 0, .. }), "{e:?}");
    // ... and words too wide for their 2- and 1-byte arguments (`args`: out, a u64,
    // a double, a u32, a short, a uchar), while each replay places its own values.
    let args = Program::load(&dev, common::ARGS.of(t), "args").unwrap();
    let one = LaunchDims {
        global: [1, 1, 1],
        local: [32, 1, 1],
    };
    let vals = |i: u32| [i, !i, i, 0x4000_0000, 0xdead_0000 | i, 0xfff0 | i, 200 + i];
    for i in 0..4u32 {
        let out = common::upload(&dev, &[0; 10]);
        args.launch(&[&out], &vals(i), one).unwrap();
        dev.synchronize().unwrap();
        let got = common::download(&dev, &out, 10);
        let d = f64::from_bits(0x4000_0000u64 << 32 | u64::from(i)) * 2.0;
        let short = i64::from((0xfff0 | i) as u16 as i16);
        let want = [
            i,
            !i,
            d.to_bits() as u32,
            (d.to_bits() >> 32) as u32,
            0xdead_0000 | i,
            0,
        ];
        assert_eq!(got[..6], want, "launch {i}");
        assert_eq!([got[6], got[7]], [short as u32, (short >> 32) as u32], "launch {i}");
        assert_eq!([got[8], got[9]], [200 + i, 0], "launch {i}");
    }
    let out = common::upload(&dev, &[0; 10]);
    let fresh = Program::load(&dev, common::ARGS.of(t), "args").unwrap();
    for (word, bad) in [(5, 0x1_0000), (6, 256)] {
        let mut v = vals(0);
        v[word] = bad;
        let replayed = args.launch(&[&out], &v, one).unwrap_err();
        assert_eq!(replayed, fresh.launch(&[&out], &v, one).unwrap_err());
        assert!(
            matches!(&replayed, HcqError::KernelArgument { index, .. } if *index == word - 1),
            "{replayed:?}"
        );
    }
    // The replayed recording is intact after the refusals.
    args.launch(&[&out], &vals(7), one).unwrap();
    dev.synchronize().unwrap();
    assert_eq!(common::download(&dev, &out, 10)[8], 207);

    // Typed arguments with constant sizes are replayed alike.
    let before = dev.replayed_launches_for_test();
    let mut typed = Vec::new();
    for i in 0..10 {
        let n = 1 + (i * 211) % N;
        let out = common::upload(&dev, &[0; N]);
        let k = KernArgs::new().buffer(&a).buffer(&a).buffer(&out).u32(n as u32);
        progs[0].enqueue(&k, dims(2)).unwrap();
        typed.push((out, n));
    }
    assert!(dev.replayed_launches_for_test() - before >= 9);
    dev.synchronize().unwrap();
    for (i, (out, n)) in typed.iter().enumerate() {
        let got = common::download(&dev, out, N);
        assert!(
            got.iter().enumerate().all(|(k, &w)| w == want(*n, k)),
            "typed launch {i} (n = {n})"
        );
    }
    // Their refusals are the recording path's too: a wrong type, a wrong size, another
    // GPU's memory, a symbol left unbound.
    let fresh = Program::load(&dev, common::VADD.of(t), "vadd").unwrap();
    let n = amd_hcq::Var::new("n");
    let base = || KernArgs::new().buffer(&a).buffer(&a);
    for bad in [
        base().buffer(&a).f32(1.0),
        base().buffer(&a).u64(5),
        base().buffer(&b1).u32(5),
        base().buffer(&a).sym_u32(&n),
        base().buffer(&a),
    ] {
        let replayed = progs[0].enqueue(&bad, dims(2)).unwrap_err();
        assert_eq!(replayed, fresh.enqueue(&bad, dims(2)).unwrap_err(), "{bad:?}");
    }
    let k = KernArgs::new().buffer(&a).buffer(&a).buffer(&out).u32(3);
    progs[0].enqueue(&k, dims(2)).unwrap();
}
