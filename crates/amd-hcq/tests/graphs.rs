//! Queue programs on the mock GPU: dispatches recorded into queues, symbolic values
//! bound at submit, bound lists replayed with new values, and graphs over engines and
//! devices — over both transports (KFD and driverless) and both targets (gfx1100,
//! gfx1201), from the same test code.

mod common;

use amd_hcq::{
    ArgProblem, Bindings, Buffer, BufferKind, Device, Graph, HcqError, KernArgs, LaunchLimit, Platform, Program, Sym,
    SymDims, Var,
};
use common::{DIMS3D, GRID3D, PRIVATE_O0, SAXPY, Transport, VADD, platform, rand_u32};

on_every_queue_and_target!(
    a_dispatch_recorded_in_a_queue_runs,
    typed_arguments_are_checked_against_the_metadata,
    two_kernels_in_one_queue_submitted_a_hundred_times_without_waiting,
    grid_and_workgroup_sizes_as_symbols,
    grid_sizes_as_symbols_with_a_fixed_workgroup,
    copies_with_symbolic_source_and_destination,
    waits_and_signals_with_symbolic_values_and_addresses,
    a_graph_replayed_a_thousand_times_with_new_buffers_and_values,
    a_graph_over_two_devices_with_a_peer_copy,
    a_bound_replay_of_a_kernel_that_needs_scratch,
    misuse_of_recorded_lists_is_refused,
    the_timeline_in_the_open,
    graphs_of_copies_only,
    a_graph_replay_count_restarts_past_the_wrap,
    graph_replays_are_profiled_node_by_node,
);

fn bytes_of(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

fn words_of(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// A host buffer holding `words` (the GPU reads and writes it directly).
fn host(dev: &Device, words: &[u32]) -> Buffer {
    let b = dev.alloc(words.len().max(1) * 4, BufferKind::Host).unwrap();
    b.write(0, &bytes_of(words)).unwrap();
    b
}

fn read(b: &Buffer, n: usize) -> Vec<u32> {
    let mut out = vec![0u8; n * 4];
    b.read(0, &mut out).unwrap();
    words_of(&out)
}

fn floats(words: &[u32]) -> Vec<f32> {
    words.iter().map(|&w| f32::from_bits(w)).collect()
}

fn f32_words(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

fn groups(n: u32) -> SymDims {
    SymDims::new([n.div_ceil(256), 1, 1], [256, 1, 1])
}

fn a_dispatch_recorded_in_a_queue_runs(t: Transport) {
    let (_m, p) = platform(t, 1);
    let dev = p.device(0).unwrap();
    let saxpy = Program::load(&dev, SAXPY.of(t), "saxpy").unwrap();
    let n = 1000u32;
    let x: Vec<f32> = rand_u32(n as usize, 1)
        .iter()
        .map(|&v| (v % 1000) as f32 / 8.0)
        .collect();
    let y: Vec<f32> = rand_u32(n as usize, 2)
        .iter()
        .map(|&v| (v % 300) as f32 - 150.0)
        .collect();
    let (bx, by) = (host(&dev, &f32_words(&x)), host(&dev, &f32_words(&y)));
    let mut q = dev.compute_queue();
    let args = KernArgs::new().buffer(&bx).buffer(&by).f32(2.5).u32(n);
    q.exec(&saxpy, &args, groups(n)).unwrap();
    assert!(q.vars().is_empty());
    let v = q.submit(&dev, &Bindings::new()).unwrap();
    dev.wait_timeline(v).unwrap();
    let got = floats(&read(&by, n as usize));
    for i in 0..n as usize {
        assert_eq!(got[i], 2.5f32.mul_add(x[i], y[i]), "element {i}");
    }
    // Program::enqueue is the same path.
    let v = saxpy.enqueue(&args, groups(n)).unwrap();
    dev.wait_timeline(v).unwrap();
    let again = floats(&read(&by, n as usize));
    assert_eq!(again[7], 2.5f32.mul_add(x[7], got[7]));
}

fn typed_arguments_are_checked_against_the_metadata(t: Transport) {
    let (_m, p) = platform(t, 1);
    let dev = p.device(0).unwrap();
    let saxpy = Program::load(&dev, SAXPY.of(t), "saxpy").unwrap();
    let b = host(&dev, &[0; 256]);
    let mut q = dev.compute_queue();
    let err = |args: KernArgs, q: &mut amd_hcq::ComputeQueue| q.exec(&saxpy, &args, groups(256)).unwrap_err();
    let arg = |index: usize, problem: ArgProblem| HcqError::KernelArgument {
        kernel: "saxpy".into(),
        index,
        name: None,
        problem: Box::new(problem),
    };
    // Argument 2, saxpy's 4-byte float, given `given_bytes` of `given`.
    let wrong_float_size = |given: &str, given_bytes| {
        arg(
            2,
            ArgProblem::Size {
                expected: "float".into(),
                expected_bytes: 4,
                given: given.into(),
                given_bytes,
            },
        )
    };
    let wrong_type = |index, expected: &str, given: &str| {
        arg(
            index,
            ArgProblem::Type {
                expected: expected.into(),
                given: given.into(),
            },
        )
    };
    // An integer where the kernel takes a float: refused, not reinterpreted.
    let e = err(KernArgs::new().buffer(&b).buffer(&b).i32(2).u32(256), &mut q);
    assert_eq!(e, wrong_type(2, "float", "i32"));
    assert!(e.to_string().contains("argument 2: a i32 for a float"), "{e}");
    let e = err(KernArgs::new().buffer(&b).buffer(&b).f32(2.0).f32(1.0), &mut q);
    assert_eq!(e, wrong_type(3, "uint", "f32"));
    let e = err(KernArgs::new().buffer(&b).buffer(&b).f32(2.0).i32(-1), &mut q);
    let range = ArgProblem::Range {
        value: -1,
        ty: "uint".into(),
    };
    assert_eq!(e, arg(3, range));
    assert!(e.to_string().contains("-1 does not fit a uint"), "{e}");
    let e = err(KernArgs::new().buffer(&b).f32(1.0).f32(2.0).u32(1), &mut q);
    assert_eq!(e, wrong_type(1, "buffer", "f32 value"));
    assert!(e.to_string().contains("argument 1: the kernel takes a buffer"), "{e}");
    let e = err(KernArgs::new().buffer(&b).buffer(&b).f32(2.0), &mut q);
    let count = HcqError::ArgumentCount {
        kernel: "saxpy".into(),
        expected: 4,
        given: 3,
    };
    assert_eq!(e, count);
    assert!(e.to_string().contains("takes 4 arguments, got 3"), "{e}");
    let e = err(KernArgs::new().buffer(&b).buffer(&b).f64(2.0).u32(1), &mut q);
    assert_eq!(e, wrong_float_size("f64", 8));
    assert!(e.to_string().contains("a f64 (8 bytes) for a 4-byte float"), "{e}");
    // A buffer where the kernel takes a value; raw bytes of another size.
    let e = err(KernArgs::new().buffer(&b).buffer(&b).buffer(&b).u32(1), &mut q);
    assert_eq!(e, wrong_type(2, "float", "buffer"));
    let e = err(KernArgs::new().buffer(&b).buffer(&b).raw(&[0; 3]).u32(1), &mut q);
    assert_eq!(e, wrong_float_size("raw bytes", 3));
    // Nothing was recorded by the refused calls; raw bytes of the right size pass.
    assert!(q.is_empty());
    q.exec(
        &saxpy,
        &KernArgs::new()
            .buffer(&b)
            .buffer(&b)
            .raw(&2.0f32.to_le_bytes())
            .u32(256),
        groups(256),
    )
    .unwrap();
    // Too many work-items for the kernel (saxpy allows 256), sizes of zero.
    let e = q
        .exec(
            &saxpy,
            &KernArgs::new().buffer(&b).buffer(&b).f32(1.0).u32(1),
            SymDims::new([1, 1, 1], [512, 1, 1]),
        )
        .unwrap_err();
    let want = HcqError::LaunchDims {
        kernel: "saxpy".into(),
        grid: [1, 1, 1],
        workgroup: [512, 1, 1],
        limit: LaunchLimit::WorkgroupSize {
            work_items: 512,
            max: 256,
        },
    };
    assert_eq!(e, want);
    assert!(
        e.to_string()
            .contains("512 work-items per workgroup, the kernel allows at most 256"),
        "{e}"
    );
    let e = q
        .exec(
            &saxpy,
            &KernArgs::new().buffer(&b).buffer(&b).f32(1.0).u32(1),
            SymDims::new([0, 1, 1], [1, 1, 1]),
        )
        .unwrap_err();
    assert!(
        matches!(
            &e,
            HcqError::LaunchDims {
                grid: [0, 1, 1],
                limit: LaunchLimit::ZeroSize,
                ..
            }
        ),
        "{e:?}"
    );
    // A constant 0 among symbolic sizes is refused at once.
    let e = q
        .exec(
            &saxpy,
            &KernArgs::new().buffer(&b).buffer(&b).f32(1.0).u32(1),
            SymDims::new(
                [Sym::from(Var::new("n")), Sym::from(1), Sym::from(1)],
                [Sym::from(1), Sym::from(0), Sym::from(1)],
            ),
        )
        .unwrap_err();
    let want = HcqError::ZeroLaunchSize {
        kernel: "saxpy".into(),
        axis: "workgroup",
        index: 1,
    };
    assert_eq!(e, want);
}

fn two_kernels_in_one_queue_submitted_a_hundred_times_without_waiting(t: Transport) {
    let (_m, p) = platform(t, 1);
    let dev = p.device(0).unwrap();
    let vadd = Program::load(&dev, VADD.of(t), "vadd").unwrap();
    let saxpy = Program::load(&dev, SAXPY.of(t), "saxpy").unwrap();
    let n = 300u32;
    let (a, b, c, out) = (Var::new("a"), Var::new("b"), Var::new("c"), Var::new("out"));
    // c = a + b; out = 3 * c + out.
    let mut q = dev.compute_queue();
    q.exec(
        &vadd,
        &KernArgs::new().buffer_sym(&a).buffer_sym(&b).buffer_sym(&c).u32(n),
        groups(n),
    )
    .unwrap()
    .exec(
        &saxpy,
        &KernArgs::new().buffer_sym(&c).buffer_sym(&out).f32(3.0).u32(n),
        groups(n),
    )
    .unwrap();
    let mut names: Vec<String> = q.vars().iter().map(|v| v.name().to_string()).collect();
    names.sort();
    assert_eq!(names, ["a", "b", "c", "out"]);
    let bound = dev.bind(&q).unwrap();
    let runs = 100;
    let inputs: Vec<(Vec<f32>, Vec<f32>)> = (0..runs)
        .map(|r| {
            let x = rand_u32(n as usize, 3 * r + 1)
                .iter()
                .map(|&v| (v % 64) as f32)
                .collect();
            let y = rand_u32(n as usize, 3 * r + 2)
                .iter()
                .map(|&v| (v % 32) as f32)
                .collect();
            (x, y)
        })
        .collect();
    let bufs: Vec<[Buffer; 4]> = inputs
        .iter()
        .map(|(x, y)| {
            [
                host(&dev, &f32_words(x)),
                host(&dev, &f32_words(y)),
                host(&dev, &vec![0; n as usize]),
                host(&dev, &f32_words(&vec![1.0; n as usize])),
            ]
        })
        .collect();
    // Half the runs directly, half bound; no host wait in between.
    let mut last = 0;
    for (r, bs) in bufs.iter().enumerate() {
        let mut vals = Bindings::new();
        vals.buffer(&a, &bs[0])
            .buffer(&b, &bs[1])
            .buffer(&c, &bs[2])
            .buffer(&out, &bs[3]);
        last = if r % 2 == 0 {
            bound.submit(&vals).unwrap()
        } else {
            q.submit(&dev, &vals).unwrap()
        };
    }
    dev.wait_timeline(last).unwrap();
    for (r, ((x, y), bs)) in inputs.iter().zip(&bufs).enumerate() {
        let got = floats(&read(&bs[3], n as usize));
        for i in 0..n as usize {
            assert_eq!(got[i], 3.0f32.mul_add(x[i] + y[i], 1.0), "run {r}, element {i}");
        }
    }
    // An unbound variable is an error and sends nothing.
    let (_, before) = dev.timeline();
    let mut partial = Bindings::new();
    partial.buffer(&a, &bufs[0][0]);
    let e = bound.submit(&partial).unwrap_err();
    assert_eq!(e, HcqError::Unbound { name: "b".into() });
    assert!(e.to_string().contains("variable b is not bound"), "{e}");
    assert!(q.submit(&dev, &partial).is_err());
    assert_eq!(dev.timeline().1, before);
}

/// Grid and workgroup sizes as symbols, every x, y, z of each in 1..=3: the kernel
/// sees the sizes (hidden arguments and dispatch packet) and covers the grid.
fn grid_and_workgroup_sizes_as_symbols(t: Transport) {
    let (_m, p) = platform(t, 1);
    let dev = p.device(0).unwrap();
    let prg = Program::load(&dev, DIMS3D.of(t), "dims3d").unwrap();
    let g: [Var; 3] = [Var::new("gx"), Var::new("gy"), Var::new("gz")];
    let l: [Var; 3] = [Var::new("lx"), Var::new("ly"), Var::new("lz")];
    let out = Var::new("out");
    let mut q = dev.compute_queue();
    let dims = SymDims::new([&g[0], &g[1], &g[2]], [&l[0], &l[1], &l[2]]);
    q.exec(&prg, &KernArgs::new().buffer_sym(&out), dims).unwrap();
    let bound = dev.bind(&q).unwrap();
    let buf = host(&dev, &[0; 9 * 9 * 9 + 2]);
    let mut runs = 0;
    for gi in 0..27u32 {
        for li in 0..27u32 {
            let gs = [gi % 3 + 1, gi / 3 % 3 + 1, gi / 9 + 1];
            let ls = [li % 3 + 1, li / 3 % 3 + 1, li / 9 + 1];
            let size = [gs[0] * ls[0], gs[1] * ls[1], gs[2] * ls[2]];
            let n = (size[0] * size[1] * size[2]) as usize;
            buf.write(0, &vec![0u8; (n + 2) * 4]).unwrap();
            let mut vals = Bindings::new();
            vals.buffer(&out, &buf);
            for i in 0..3 {
                vals.set(&g[i], gs[i] as u64).set(&l[i], ls[i] as u64);
            }
            let v = if (gi + li) % 2 == 0 {
                bound.submit(&vals).unwrap()
            } else {
                q.submit(&dev, &vals).unwrap()
            };
            dev.wait_timeline(v).unwrap();
            let got = read(&buf, n + 2);
            for z in 0..size[2] {
                for y in 0..size[1] {
                    for x in 0..size[0] {
                        let i = ((z * size[1] + y) * size[0] + x) as usize;
                        assert_eq!(
                            got[i],
                            x | y << 8 | z << 16 | 1 << 24,
                            "grid {gs:?} workgroup {ls:?} at {x},{y},{z}"
                        );
                    }
                }
            }
            assert_eq!(
                got[n],
                ls[0] | ls[1] << 8 | ls[2] << 16,
                "workgroup size seen, grid {gs:?} workgroup {ls:?}"
            );
            assert_eq!(got[n + 1], size[0] | size[1] << 8 | size[2] << 16, "grid size seen");
            runs += 1;
        }
    }
    assert_eq!(runs, 729);
    // Values the fields cannot hold, or the kernel refuses: errors at submit, nothing sent.
    let (_, before) = dev.timeline();
    let mut vals = Bindings::new();
    vals.buffer(&out, &buf);
    for i in 0..3 {
        vals.set(&g[i], 1).set(&l[i], 1);
    }
    vals.set(&l[0], 16).set(&l[1], 16).set(&l[2], 2);
    let limit = |e: HcqError| match e {
        HcqError::LaunchDims {
            grid, workgroup, limit, ..
        } => (grid, workgroup, limit),
        other => panic!("{other:?}"),
    };
    let e = bound.submit(&vals).unwrap_err();
    assert!(
        e.to_string()
            .contains("512 work-items per workgroup, the kernel allows at most 256"),
        "{e}"
    );
    let work_items = LaunchLimit::WorkgroupSize {
        work_items: 512,
        max: 256,
    };
    assert_eq!(limit(e), ([1, 1, 1], [16, 16, 2], work_items));
    vals.set(&l[1], 1).set(&l[2], 1).set(&l[0], 1 << 16);
    let e = bound.submit(&vals).unwrap_err();
    assert!(e.to_string().contains("workgroup size does not fit 16 bits"), "{e}");
    assert_eq!(limit(e), ([1, 1, 1], [1 << 16, 1, 1], LaunchLimit::Workgroup16));
    vals.set(&l[0], 1).set(&g[2], 1 << 32);
    let e = q.submit(&dev, &vals).unwrap_err();
    assert!(e.to_string().contains("grid size does not fit 32 bits"), "{e}");
    assert_eq!(limit(e), ([1, 1, 1 << 32], [1, 1, 1], LaunchLimit::Grid32));
    vals.set(&g[2], 1).set(&g[0], 0);
    assert_eq!(limit(bound.submit(&vals).unwrap_err()).2, LaunchLimit::ZeroSize);
    vals.set(&g[0], 1 << 24).set(&l[0], 256);
    let e = bound.submit(&vals).unwrap_err();
    assert!(e.to_string().contains("grid × workgroup does not fit 32 bits"), "{e}");
    assert_eq!(limit(e), ([1 << 24, 1, 1], [256, 1, 1], LaunchLimit::Total32));
    assert_eq!(dev.timeline().1, before);
}

/// Grid sizes as symbols (one a variable, one an expression, one constant) with a
/// constant workgroup size: each run covers its grid, and a size out of range (0, past
/// 32 bits, or a grid × workgroup past 32 bits) is refused at submit, nothing sent.
fn grid_sizes_as_symbols_with_a_fixed_workgroup(t: Transport) {
    let (_m, p) = platform(t, 1);
    let dev = p.device(0).unwrap();
    let prg = Program::load(&dev, DIMS3D.of(t), "dims3d").unwrap();
    let (gx, gz, out) = (Var::new("gx"), Var::new("gz"), Var::new("out"));
    let ls = [4u32, 2, 1];
    let mut q = dev.compute_queue();
    let dims = SymDims::new([Sym::from(&gx), Sym::from(2u32), Sym::from(&gz) + 1u32], ls);
    q.exec(&prg, &KernArgs::new().buffer_sym(&out), dims).unwrap();
    let bound = dev.bind(&q).unwrap();
    let buf = host(&dev, &[0; 16 * 4 * 4 + 2]);
    for (x, z) in [(1u32, 0u32), (3, 2), (4, 3), (2, 1)] {
        let gs = [x, 2, z + 1];
        let size = [gs[0] * ls[0], gs[1] * ls[1], gs[2] * ls[2]];
        let n = (size[0] * size[1] * size[2]) as usize;
        buf.write(0, &vec![0u8; (n + 2) * 4]).unwrap();
        let mut vals = Bindings::new();
        vals.buffer(&out, &buf).set(&gx, x as u64).set(&gz, z as u64);
        let v = bound.submit(&vals).unwrap();
        dev.wait_timeline(v).unwrap();
        let got = read(&buf, n + 2);
        for (i, w) in got[..n].iter().enumerate() {
            let (px, py, pz) = (
                i as u32 % size[0],
                i as u32 / size[0] % size[1],
                i as u32 / (size[0] * size[1]),
            );
            assert_eq!(*w, px | py << 8 | pz << 16 | 1 << 24, "grid {gs:?} at {px},{py},{pz}");
        }
        assert_eq!(got[n], ls[0] | ls[1] << 8 | ls[2] << 16, "workgroup size seen");
        assert_eq!(got[n + 1], size[0] | size[1] << 8 | size[2] << 16, "grid size seen");
    }
    let (_, before) = dev.timeline();
    let mut vals = Bindings::new();
    vals.buffer(&out, &buf).set(&gz, 0);
    for (x, why) in [
        (0, "every size must be at least 1"),
        (1 << 32, "grid size does not fit 32 bits"),
        (u32::MAX as u64 / 4 + 1, "grid × workgroup does not fit 32 bits"),
    ] {
        vals.set(&gx, x);
        let e = bound.submit(&vals).unwrap_err().to_string();
        assert!(e.contains(why) && e.contains("dims3d"), "grid x {x}: {e}");
        let e = q.submit(&dev, &vals).unwrap_err().to_string();
        assert!(e.contains(why), "grid x {x}, direct submit: {e}");
    }
    vals.set(&gx, 1).set(&gz, u32::MAX as u64);
    let e = bound.submit(&vals).unwrap_err().to_string();
    assert!(e.contains("grid size does not fit 32 bits"), "{e}");
    assert_eq!(dev.timeline().1, before);
}

fn copies_with_symbolic_source_and_destination(t: Transport) {
    let (_m, p) = platform(t, 1);
    let dev = p.device(0).unwrap();
    let (src, dst, len) = (Var::new("src"), Var::new("dst"), Var::new("len"));
    // 64 MiB: sixteen 4 MiB packets, each addressed from the symbols.
    let big = 64usize << 20;
    let mut q = dev.copy_queue();
    q.copy(&dst, &src, big).unwrap();
    assert_eq!(q.dwords().len(), 16 * 7);
    let bound = dev.bind_copy(&q).unwrap();
    let a = dev.alloc(big, BufferKind::Host).unwrap();
    let b = dev.alloc(big, BufferKind::Host).unwrap();
    let c = dev.alloc(big, BufferKind::Host).unwrap();
    let pattern: Vec<u8> = bytes_of(&rand_u32(big / 4, 9));
    a.write(0, &pattern).unwrap();
    // a -> b (bound), then b -> c (direct).
    let v = bound.submit(&Bindings::from([(&src, a.va()), (&dst, b.va())])).unwrap();
    dev.wait_timeline(v).unwrap();
    let v = q
        .submit(&dev, &Bindings::from([(&src, b.va()), (&dst, c.va())]))
        .unwrap();
    dev.wait_timeline(v).unwrap();
    let mut got = vec![0u8; big];
    c.read(0, &mut got).unwrap();
    assert!(got == pattern, "every packet moved its 4 MiB");

    // A symbolic size: one packet of up to 4 MiB.
    let mut q = dev.copy_queue();
    q.copy(Sym::from(&dst) + 8u32, &src, Sym::from(&len) * 4u32).unwrap();
    let bound = dev.bind_copy(&q).unwrap();
    for (k, n) in [5u64, 1000, 1 << 20].into_iter().enumerate() {
        let mut vals = Bindings::new();
        vals.set(&src, a.va() + k as u64 * 64).set(&dst, b.va()).set(&len, n);
        b.write(0, &vec![0u8; (n as usize + 4) * 4]).unwrap();
        dev.wait_timeline(bound.submit(&vals).unwrap()).unwrap();
        let mut got = vec![0u8; n as usize * 4 + 16];
        b.read(0, &mut got).unwrap();
        let from = k * 64;
        assert_eq!(
            &got[8..8 + n as usize * 4],
            &pattern[from..from + n as usize * 4],
            "size {n}"
        );
        assert_eq!(&got[8 + n as usize * 4..], &[0u8; 8], "nothing past the size");
    }
    // Past one packet, or zero: refused at submit.
    let mut vals = Bindings::from([(&src, a.va()), (&dst, b.va()), (&len, (4 << 20) / 4 + 1)]);
    let e = bound.submit(&vals).unwrap_err();
    assert!(
        e.to_string()
            .contains("copy size = 4194308 does not fit its field (1..=4194304)"),
        "{e}"
    );
    assert!(
        matches!(&e, HcqError::FieldRange { what, value: 4194308, min: 1, max: 4194304 } if what.ends_with("copy size")),
        "{e:?}"
    );
    vals.set(&len, 0);
    assert!(bound.submit(&vals).is_err());
}

fn waits_and_signals_with_symbolic_values_and_addresses(t: Transport) {
    let (_m, p) = platform(t, 1);
    let dev = p.device(0).unwrap();
    let (gate, done) = (dev.new_signal(0).unwrap(), dev.new_signal(0).unwrap());
    let (wa, wv, sa, sv) = (
        Var::new("wait_at"),
        Var::new("wait_for"),
        Var::new("signal_at"),
        Var::new("value"),
    );
    let mut cq = dev.compute_queue();
    cq.wait_addr(&wa, &wv).signal_addr(&sa, Sym::from(&sv) * 2u32, None);
    let mut sq = dev.copy_queue();
    sq.wait_addr(&wa, Sym::from(&wv) + 1u32).signal_addr(&sa, &sv, None);
    let (bc, bs) = (dev.bind(&cq).unwrap(), dev.bind_copy(&sq).unwrap());
    for round in 1..=5u64 {
        let mut vals = Bindings::new();
        vals.set(&wa, gate.addr())
            .set(&wv, 10 * round)
            .set(&sa, done.addr())
            .set(&sv, 100 * round);
        // Compute: waits for gate >= 10r, then done = 200r.
        let v = if round % 2 == 0 {
            bc.submit(&vals).unwrap()
        } else {
            cq.submit(&dev, &vals).unwrap()
        };
        std::thread::sleep(std::time::Duration::from_millis(5));
        assert_eq!(done.value(), 100 * (round - 1), "still waiting for the gate");
        gate.set(10 * round).unwrap();
        dev.wait_timeline(v).unwrap();
        assert_eq!(done.value(), 200 * round);
        // Copy: waits for gate >= 10r + 1, then done = 100r.
        let v = if round % 2 == 0 {
            bs.submit(&vals).unwrap()
        } else {
            sq.submit(&dev, &vals).unwrap()
        };
        std::thread::sleep(std::time::Duration::from_millis(5));
        assert_eq!(done.value(), 200 * round);
        gate.set(10 * round + 1).unwrap();
        dev.wait_timeline(v).unwrap();
        assert_eq!(done.value(), 100 * round);
    }
}

/// A graph of 12 launches and 2 copies over both engines, replayed 1000 times back to
/// back with new input and output buffers and a new element count each time.
fn a_graph_replayed_a_thousand_times_with_new_buffers_and_values(t: Transport) {
    let (_m, p) = platform(t, 1);
    let dev = p.device(0).unwrap();
    let vadd = Program::load(&dev, VADD.of(t), "vadd").unwrap();
    let saxpy = Program::load(&dev, SAXPY.of(t), "saxpy").unwrap();
    let n_max = 64u32;
    let bytes = n_max as usize * 4;
    let (input, output, n) = (Var::new("input"), Var::new("output"), Var::new("n"));
    let a = dev.alloc(bytes, BufferKind::Device).unwrap();
    let c = dev.alloc(bytes, BufferKind::Device).unwrap();
    let dims = SymDims::new([1, 1, 1], [256, 1, 1]);
    let mut g = Graph::new();
    let load = g.copy(&dev, a.va(), &input, bytes, &[]).unwrap();
    // c = a + a, then ten times c = c + a (c = 12a), then c = 0.5 a + c.
    let mut last = g
        .exec(
            &vadd,
            &KernArgs::new().buffer(&a).buffer(&a).buffer(&c).sym_u32(&n),
            dims.clone(),
            &[load],
        )
        .unwrap();
    for _ in 0..10 {
        last = g
            .exec(
                &vadd,
                &KernArgs::new().buffer(&c).buffer(&a).buffer(&c).sym_u32(&n),
                dims.clone(),
                &[],
            )
            .unwrap();
    }
    last = g
        .exec(
            &saxpy,
            &KernArgs::new().buffer(&a).buffer(&c).f32(0.5).sym_u32(&n),
            dims,
            &[last],
        )
        .unwrap();
    g.copy(&dev, &output, c.va(), bytes, &[last]).unwrap();
    assert_eq!(g.len(), 14);
    let g = g.bind().unwrap();
    let mut vars: Vec<String> = g.vars().iter().map(|v| v.name().to_string()).collect();
    vars.sort();
    assert_eq!(vars, ["input", "n", "output"]);
    let runs = 1000usize;
    let ins = dev.alloc(runs * bytes, BufferKind::Host).unwrap();
    let outs = dev.alloc(runs * bytes, BufferKind::Host).unwrap();
    let data: Vec<u32> = rand_u32(runs * n_max as usize, 77)
        .iter()
        .map(|&v| (v % 1024) as f32)
        .map(f32::to_bits)
        .collect();
    ins.write(0, &bytes_of(&data)).unwrap();
    outs.write(0, &vec![0xffu8; runs * bytes]).unwrap();
    let counts: Vec<u32> = (0..runs as u32).map(|r| r % n_max + 1).collect();
    let mut vals = Bindings::new();
    let mut end = 0;
    for (r, &count) in counts.iter().enumerate() {
        vals.set(&input, ins.va() + (r * bytes) as u64)
            .set(&output, outs.va() + (r * bytes) as u64)
            .set(&n, count as u64);
        end = g.replay(&vals).unwrap()[0];
    }
    dev.wait_timeline(end).unwrap();
    let got = floats(&read(&outs, runs * n_max as usize));
    let x = floats(&data);
    for (r, &count) in counts.iter().enumerate() {
        for i in 0..count as usize {
            let k = r * n_max as usize + i;
            assert_eq!(got[k], 0.5f32.mul_add(x[k], 12.0 * x[k]), "replay {r}, element {i}");
        }
    }
}

/// A graph's replay count (what its signals between engines carry, compared in 32
/// bits) restarts past `TIMELINE_WRAP` once every replay is done; the replays on both
/// sides of the restart compute what they should.
fn a_graph_replay_count_restarts_past_the_wrap(t: Transport) {
    let (_m, p) = platform(t, 1);
    let dev = p.device(0).unwrap();
    let vadd = Program::load(&dev, VADD.of(t), "vadd").unwrap();
    let n = 64u32;
    let bytes = n as usize * 4;
    let (input, output) = (Var::new("input"), Var::new("output"));
    let a = dev.alloc(bytes, BufferKind::Device).unwrap();
    let c = dev.alloc(bytes, BufferKind::Device).unwrap();
    let mut g = Graph::new();
    // Copy engine, compute engine, copy engine: each waits for the other's signal.
    let load = g.copy(&dev, a.va(), &input, bytes, &[]).unwrap();
    let args = KernArgs::new().buffer(&a).buffer(&a).buffer(&c).u32(n);
    let add = g
        .exec(&vadd, &args, SymDims::new([1, 1, 1], [256, 1, 1]), &[load])
        .unwrap();
    g.copy(&dev, &output, c.va(), bytes, &[add]).unwrap();
    let g = g.bind().unwrap();
    g.set_replay_count_for_test(amd_hcq::TIMELINE_WRAP - 3).unwrap();
    let runs = 7usize;
    let data: Vec<u32> = (0..runs * n as usize).map(|i| ((i % 1000) as f32).to_bits()).collect();
    let ins = host(&dev, &data);
    let outs = host(&dev, &vec![0; runs * n as usize]);
    let mut vals = Bindings::new();
    for r in 0..runs {
        vals.set(&input, ins.va() + (r * bytes) as u64)
            .set(&output, outs.va() + (r * bytes) as u64);
        g.replay(&vals).unwrap();
    }
    g.synchronize().unwrap();
    let got = floats(&read(&outs, runs * n as usize));
    for (k, (&y, x)) in got.iter().zip(floats(&data)).enumerate() {
        assert_eq!(y, 2.0 * x, "replay {}, element {}", k / n as usize, k % n as usize);
    }
}

/// A chain over two GPUs: GPU 0 adds `x` to itself into `s0`, its copy engine moves
/// the sum into GPU 1's `r1`, GPU 1 adds that to itself into host memory `o1` (four
/// times `x`, over `n` floats).
struct PeerChain {
    d0: Device,
    d1: Device,
    v0: Program,
    v1: Program,
    x: Var,
    s0: Buffer,
    r1: Buffer,
    o1: Buffer,
    n: u32,
}

impl PeerChain {
    fn new(t: Transport, p: &Platform, n: u32) -> Self {
        let (d0, d1) = (p.device(0).unwrap(), p.device(1).unwrap());
        let v0 = Program::load(&d0, VADD.of(t), "vadd").unwrap();
        let v1 = Program::load(&d1, VADD.of(t), "vadd").unwrap();
        let bytes = n as usize * 4;
        let s0 = d0.alloc(bytes, BufferKind::Device).unwrap();
        let r1 = d1.alloc(bytes, BufferKind::Device).unwrap();
        let o1 = d1.alloc(bytes, BufferKind::Host).unwrap();
        d0.map_peer(&r1).unwrap();
        PeerChain {
            d0,
            d1,
            v0,
            v1,
            x: Var::new("x"),
            s0,
            r1,
            o1,
            n,
        }
    }

    fn record(&self) -> Graph {
        let (n, bytes) = (self.n, self.n as usize * 4);
        let mut g = Graph::new();
        let args = KernArgs::new()
            .buffer_sym(&self.x)
            .buffer_sym(&self.x)
            .buffer(&self.s0)
            .u32(n);
        let k0 = g.exec(&self.v0, &args, groups(n), &[]).unwrap();
        let cp = g.copy(&self.d0, self.r1.va(), self.s0.va(), bytes, &[k0]).unwrap();
        let args = KernArgs::new()
            .buffer(&self.r1)
            .buffer(&self.r1)
            .buffer(&self.o1)
            .u32(n);
        g.exec(&self.v1, &args, groups(n), &[cp]).unwrap();
        g
    }

    /// Replays `g` with new input for `round` and checks GPU 1's output.
    fn replay_checked(&self, g: &amd_hcq::BoundGraph, round: u32) {
        let n = self.n as usize;
        let data: Vec<f32> = rand_u32(n, round).iter().map(|&v| (v % 100) as f32).collect();
        let xb = host(&self.d0, &f32_words(&data));
        let ends = g.replay(&Bindings::from([(&self.x, xb.va())])).unwrap();
        self.d1.wait_timeline(ends[1]).unwrap();
        self.d0.wait_timeline(ends[0]).unwrap();
        let got = floats(&read(&self.o1, n));
        for i in 0..n {
            assert_eq!(got[i], 4.0 * data[i], "round {round}, element {i}");
        }
    }
}

/// Two GPUs: GPU 0 adds, its copy engine moves the result into GPU 1's memory, GPU 1
/// adds again; replayed with new inputs.
fn a_graph_over_two_devices_with_a_peer_copy(t: Transport) {
    let (_m, p) = platform(t, 2);
    let c = PeerChain::new(t, &p, 500);
    let g = c.record().bind().unwrap();
    assert_eq!(g.devices().len(), 2);
    let lists = g.lists();
    assert_eq!(
        lists.iter().map(|l| (l.0, l.1)).collect::<Vec<_>>(),
        [(0, false), (0, true), (1, false)]
    );
    for round in 0..5u32 {
        c.replay_checked(&g, round + 40);
    }
}

fn a_bound_replay_of_a_kernel_that_needs_scratch(t: Transport) {
    let (_m, p) = platform(t, 1);
    let dev = p.device(0).unwrap();
    let prg = Program::load(&dev, PRIVATE_O0.of(t), "private_array").unwrap();
    assert!(prg.info().descriptor.private_segment_size >= 160);
    let (idx, out, n) = (Var::new("idx"), Var::new("out"), Var::new("n"));
    let mut q = dev.compute_queue();
    let dims = SymDims::new([(Sym::from(&n) + 255u32) / 256u32, 1.into(), 1.into()], [256, 1, 1]);
    q.exec(
        &prg,
        &KernArgs::new().buffer_sym(&idx).buffer_sym(&out).sym_u32(&n),
        dims,
    )
    .unwrap();
    let bound = dev.bind(&q).unwrap();
    for (r, count) in [700usize, 33, 256].into_iter().enumerate() {
        let ix = rand_u32(count, 14 + r as u32);
        let (bi, bo) = (host(&dev, &ix), host(&dev, &vec![0; count]));
        let vals = Bindings::from([(&idx, bi.va()), (&out, bo.va()), (&n, count as u64)]);
        dev.wait_timeline(bound.submit(&vals).unwrap()).unwrap();
        let got = read(&bo, count);
        for i in 0..count {
            let mut tbl: Vec<u32> = (0..40u32).map(|k| k * k + i as u32).collect();
            let j = (ix[i] % 40) as usize;
            tbl[(j * 7) % 40] += j as u32;
            assert_eq!(got[i], tbl[j] + tbl[(j + 3) % 40], "run {r}, element {i}");
        }
    }
}

/// A launch through the word API still goes through the checked path, and a list
/// recorded for one family is refused by another.
fn misuse_of_recorded_lists_is_refused(t: Transport) {
    let (_m, p) = platform(t, 1);
    let dev = p.device(0).unwrap();
    let prg = Program::load(&dev, GRID3D.of(t), "grid3d").unwrap();
    let b = host(&dev, &[0; 64]);
    let mut q = dev.compute_queue();
    q.exec(
        &prg,
        &KernArgs::new().buffer(&b).u32(4).u32(4).u32(4),
        SymDims::new([1, 1, 1], [8, 4, 2]),
    )
    .unwrap();
    // A list with kernel arguments cannot go through the raw, unordered submit.
    let e = dev.submit_compute(&q).unwrap_err();
    let want = HcqError::NotSentAsBuilt {
        call: "Device::submit_compute",
        variable: None,
        launch: true,
    };
    assert_eq!(e, want);
    let mut other = amd_hcq::ComputeQueue::new(amd_packets::GfxTarget::Gfx103);
    let target = |kernel: Option<&str>, action| HcqError::ListTarget {
        kernel: kernel.map(String::from),
        list: amd_packets::GfxTarget::Gfx103,
        action,
        arch: dev.props().arch.clone(),
        target: dev.props().target,
    };
    let e = other
        .exec(
            &prg,
            &KernArgs::new().buffer(&b).u32(4).u32(4).u32(4),
            SymDims::new([1, 1, 1], [8, 4, 2]),
        )
        .unwrap_err();
    assert_eq!(e, target(Some("grid3d"), "launched from"));
    other.wait_addr(0x1000u64, 1);
    let e = other.submit(&dev, &Bindings::new()).unwrap_err();
    assert_eq!(e, target(None, "submitted to"));
    assert_eq!(dev.bind(&other).unwrap_err(), target(None, "bound on"));
}

/// A user's own list ordered against the runtime's work through the timeline handle.
fn the_timeline_in_the_open(t: Transport) {
    let (_m, p) = platform(t, 1);
    let dev = p.device(0).unwrap();
    let vadd = Program::load(&dev, VADD.of(t), "vadd").unwrap();
    let n = 256u32;
    let (a, c) = (host(&dev, &f32_words(&vec![1.5; 256])), host(&dev, &[0; 256]));
    let gate = dev.new_signal(0).unwrap();
    // The runtime's own work waits for a gate the host opens late.
    let mut held = dev.compute_queue();
    held.wait(&gate, 1);
    let v = held.submit(&dev, &Bindings::new()).unwrap();
    let h = dev.timeline_handle().unwrap();
    assert_eq!(h.last.value, v);
    assert!(h.event.is_some());
    // A raw list (not ordered by the runtime) waits for that point, then launches.
    let done = dev.new_signal(0).unwrap();
    let mut mine = dev.compute_queue();
    mine.wait_addr(h.addr, h.last.value).signal(&done, 7);
    dev.submit_compute(&mine).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(10));
    assert_eq!(done.value(), 0, "ordered after the runtime's held work");
    gate.set(1).unwrap();
    done.wait(7).unwrap();
    let v = vadd
        .enqueue(&KernArgs::new().buffer(&a).buffer(&a).buffer(&c).u32(n), groups(n))
        .unwrap();
    assert_eq!(dev.timeline_handle().unwrap().last.value, v);
    dev.wait_timeline(v).unwrap();
    assert_eq!(floats(&read(&c, 1))[0], 3.0);
}

/// Typed copies and the linear launch helper, through the mock re-exported by amd-hcq
/// (the `mock` feature, on in the workspace's test command).
#[cfg(feature = "mock")]
#[test]
fn typed_copies_and_linear_launches() {
    let p = Platform::mock(amd_hcq::mock::MockConfig::gfx1100s(1)).unwrap();
    let dev = p.device(0).unwrap();
    let vadd = Program::load(&dev, VADD.gfx1100, "vadd").unwrap();
    let n = 1000usize;
    let a: Vec<f32> = (0..n).map(|i| i as f32 * 0.5).collect();
    let bufs: Vec<Buffer> = (0..3).map(|_| dev.alloc(n * 4, BufferKind::Device).unwrap()).collect();
    dev.copy_in_slice(&bufs[0], 0, &a).unwrap();
    dev.copy_in_slice(&bufs[1], 0, &a).unwrap();
    let d = amd_hcq::LaunchDims::linear(n as u32, 256);
    assert_eq!((d.global, d.local), ([4, 1, 1], [256, 1, 1]));
    let args = KernArgs::new()
        .buffer(&bufs[0])
        .buffer(&bufs[1])
        .buffer(&bufs[2])
        .u32(n as u32);
    dev.wait_timeline(vadd.enqueue(&args, d).unwrap()).unwrap();
    let out: Vec<f32> = dev.copy_out_vec(&bufs[2], 0, n).unwrap();
    assert_eq!(out, a.iter().map(|x| x * 2.0).collect::<Vec<_>>());
    let h = dev.alloc(64, BufferKind::Host).unwrap();
    h.write_slice(8, &[1u16, 2, 3]).unwrap();
    assert_eq!(h.read_vec::<u16>(8, 3).unwrap(), [1, 2, 3]);
    assert!(h.read_vec::<u64>(60, 1).is_err());
}

/// A graph of copies only (its device's final list is a copy list, which signals the
/// timeline), replayed with new buffers; and a second device with only a copy list.
fn graphs_of_copies_only(t: Transport) {
    let (_m, p) = platform(t, 2);
    let (d0, d1) = (p.device(0).unwrap(), p.device(1).unwrap());
    let (src, dst) = (Var::new("src"), Var::new("dst"));
    let mut g = Graph::new();
    let first = g.copy(&d0, &dst, &src, 4096u32, &[]).unwrap();
    // GPU 0's copy engine writes GPU 1's memory; GPU 1's moves it on.
    let mid = d1.alloc(4096, BufferKind::Host).unwrap();
    d0.map_peer(&mid).unwrap();
    let out = d1.alloc(4096, BufferKind::Host).unwrap();
    let g1 = g.copy(&d1, out.va(), mid.va(), 4096u32, &[first]);
    assert!(g1.is_ok());
    let g = g.bind().unwrap();
    assert_eq!(
        g.lists().iter().map(|l| (l.0, l.1)).collect::<Vec<_>>(),
        [(0, true), (1, true)]
    );
    for round in 0..20u32 {
        let data = rand_u32(1024, round + 7);
        let a = host(&d0, &data);
        let ends = g.replay(&Bindings::from([(&src, a.va()), (&dst, mid.va())])).unwrap();
        d0.wait_timeline(ends[0]).unwrap();
        d1.wait_timeline(ends[1]).unwrap();
        assert_eq!(read(&out, 1024), data, "round {round}");
    }
}

/// A graph bound while its devices profile writes each node's start and end times at
/// every replay (more replays than bound copies, so copies are reused): one record per
/// node and replay, in order on each engine, results unchanged. Bound without
/// profiling, the lists carry no timestamps and nothing is recorded.
fn graph_replays_are_profiled_node_by_node(t: Transport) {
    use amd_hcq::Engine::{Compute, Copy};
    let (_m, p) = platform(t, 2);
    let c = PeerChain::new(t, &p, 300);
    let (d0, d1) = (&c.d0, &c.d1);
    let plain = c.record().bind().unwrap();
    d0.set_profiling(true);
    d1.set_profiling(true);
    let g = c.record().bind().unwrap();
    let (a, b) = (plain.lists(), g.lists());
    // (A copy list is padded to 8 dwords: its 6 more may fit the padding.)
    for (pl, pr) in a.iter().zip(&b) {
        assert!(
            pr.2 > pl.2 || (pr.1 && pr.2 >= pl.2),
            "timestamps add packets: {a:?} {b:?}"
        );
    }
    const REPLAYS: usize = 6;
    for round in 0..REPLAYS as u32 {
        c.replay_checked(&g, round + 90);
    }
    let r0 = d0.take_profile().unwrap();
    let r1 = d1.take_profile().unwrap();
    fn kinds(r: &[amd_hcq::ProfileRecord]) -> Vec<(&str, amd_hcq::Engine)> {
        r.iter().map(|x| (x.name.as_str(), x.engine)).collect()
    }
    assert_eq!(kinds(&r0), [("vadd", Compute), ("copy", Copy)].repeat(REPLAYS));
    assert_eq!(kinds(&r1), [("vadd", Compute)].repeat(REPLAYS));
    for r in r0.iter().chain(&r1) {
        // The clock's epoch is no later than profiling being turned on.
        assert!(0 <= r.start_ns && r.start_ns <= r.end_ns, "{r:?}");
    }
    // On GPU 0, each copy runs after its launch, and each replay after the last.
    for w in r0.windows(2) {
        assert!(w[0].end_ns <= w[1].start_ns, "{w:?}");
    }
    for w in r1.windows(2) {
        assert!(w[0].end_ns <= w[1].start_ns, "{w:?}");
    }
    // Distinct runs: no two records of a device share their times.
    for w in r0.windows(2) {
        assert_ne!((w[0].start_ns, w[0].end_ns), (w[1].start_ns, w[1].end_ns));
    }

    d0.set_profiling(false);
    d1.set_profiling(false);
    plain.replay(&Bindings::from([(&c.x, c.s0.va())])).unwrap();
    plain.synchronize().unwrap();
    assert!(d0.take_profile().unwrap().is_empty() && d1.take_profile().unwrap().is_empty());
}
