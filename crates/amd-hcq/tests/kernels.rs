//! The test kernel suite (`tests/kernels`), run through the whole runtime on the mock
//! GPU and checked against Rust references on random inputs: each kernel's gfx1100
//! builds on a gfx1100 mock (the RDNA3 interpreter), its gfx1201 builds on a gfx1201
//! mock (the RDNA4 interpreter), its gfx942 builds on a gfx942 mock (the CDNA3
//! interpreter, through gfx9's PM4), each at -O2 and -O0.

mod common;

use std::cell::RefCell;
use std::sync::Arc;

use amd_hcq::{Buffer, BufferKind, Device, Iface, LaunchDims, Platform, Program};
use amd_mockgpu::{MockConfig, MockSys};
use common::{download, rand_u32, stop_reasons, upload};

thread_local! {
    /// The mock of the test running on this thread, for failure reports.
    static MOCK: RefCell<Option<Arc<MockSys>>> = const { RefCell::new(None) };
}

/// `unwrap` that, on an error, also reports why the mock stopped its queues (an
/// instruction the interpreter lacks, a fault), which `DeviceHang` only sums up.
trait Explained<T> {
    fn explained(self) -> T;
}

impl<T> Explained<T> for amd_hcq::Result<T> {
    fn explained(self) -> T {
        self.unwrap_or_else(|e| {
            let stops: Vec<String> = MOCK.with(|m| m.borrow().iter().flat_map(|m| stop_reasons(m)).collect());
            panic!("{e:?}; the mock's queues stopped with: {stops:?}")
        })
    }
}

fn device(target: &str) -> (Platform, Device) {
    let m = Arc::new(MockSys::new(MockConfig::named(target, 1).expect("a mock profile")));
    MOCK.with(|cell| *cell.borrow_mut() = Some(m.clone()));
    let p = Platform::with_sys(m, Iface::Mock).unwrap();
    let d = p.device(0).unwrap();
    (p, d)
}

/// Runs `test` on a fresh mock device of each build's target with kernel `name` of
/// that build loaded.
fn for_each_build(builds: &[(&str, &[u8])], name: &str, test: impl Fn(&Device, &Program)) {
    for &(target, elf) in builds {
        let (_p, dev) = device(target);
        let prg = Program::load(&dev, elf, name).unwrap();
        test(&dev, &prg);
    }
}

fn groups(n: usize) -> LaunchDims {
    LaunchDims {
        global: [n.div_ceil(256) as u32, 1, 1],
        local: [256, 1, 1],
    }
}

#[test]
fn saxpy() {
    for_each_build(&kernel!("saxpy"), "saxpy", |dev, prg| {
        let n = 3000;
        let x: Vec<f32> = rand_u32(n, 1).iter().map(|&v| (v % 1000) as f32 / 7.0).collect();
        let y: Vec<f32> = rand_u32(n, 2).iter().map(|&v| (v % 500) as f32 - 250.0).collect();
        let (bx, by) = (
            upload(dev, &x.iter().map(|v| v.to_bits()).collect::<Vec<_>>()),
            upload(dev, &y.iter().map(|v| v.to_bits()).collect::<Vec<_>>()),
        );
        let a = 2.5f32;
        prg.launch_timed(&[&bx, &by], &[a.to_bits(), n as u32], groups(n))
            .explained();
        let out = download(dev, &by, n);
        for i in 0..n {
            assert_eq!(f32::from_bits(out[i]), a.mul_add(x[i], y[i]), "element {i}");
        }
    });
}

#[test]
fn integer_mix() {
    for_each_build(&kernel!("intmix"), "intmix", |dev, prg| {
        let n = 1000;
        let (a, b) = (rand_u32(n, 3), rand_u32(n, 4));
        let (ba, bb) = (upload(dev, &a), upload(dev, &b));
        let out = dev.alloc(n * 32, BufferKind::Device).unwrap();
        prg.launch_timed(&[&ba, &bb, &out], &[n as u32], groups(n)).explained();
        let got = download(dev, &out, n * 8);
        for i in 0..n {
            let (x, y) = (a[i], b[i] | 1);
            let (sx, sy) = (x as i32, (y | 0x100) as i32);
            let want = [
                x / y,
                x % y,
                sx.wrapping_div(sy) as u32,
                sx.wrapping_rem(sy) as u32,
                (x << (y & 31)) ^ (x >> (y & 7)) ^ ((sx >> 3) as u32),
                ((x as u64 * y as u64) >> 32) as u32,
                ((x >> 5) & 0x3ff) + y.count_ones(),
                x.max(y).wrapping_sub(sx.min(sy) as u32),
            ];
            assert_eq!(got[i * 8..i * 8 + 8], want, "element {i}: x={x:#x} y={y:#x}");
        }
    });
}

#[test]
fn divergent_branches_and_loops() {
    for_each_build(&kernel!("divergent"), "divergent", |dev, prg| {
        let n = 777;
        let a: Vec<u32> = rand_u32(n, 5).iter().map(|v| v % 100_000).collect();
        let ba = upload(dev, &a);
        let out = dev.alloc(n * 4, BufferKind::Device).unwrap();
        prg.launch_timed(&[&ba, &out], &[n as u32], groups(n)).explained();
        let got = download(dev, &out, n);
        for i in 0..n {
            let x = a[i];
            let mut r = if x & 1 != 0 {
                x.wrapping_mul(3).wrapping_add(1)
            } else {
                x / 2
            };
            let mut steps = 0u32;
            while r != 1 && steps < 200 {
                r = if r & 1 != 0 {
                    r.wrapping_mul(3).wrapping_add(1)
                } else {
                    r >> 1
                };
                steps += 1;
                if r == 4242 {
                    break;
                }
            }
            assert_eq!(got[i], steps * 1000 + (r & 0xff), "element {i} (x = {x})");
        }
    });
}

#[test]
fn grid_in_three_dimensions() {
    for_each_build(&kernel!("grid3d"), "grid3d", |dev, prg| {
        let (nx, ny, nz) = (21usize, 10usize, 5usize);
        let out = upload(dev, &vec![u32::MAX; nx * ny * nz + 64]);
        let dims = LaunchDims {
            global: [nx.div_ceil(8) as u32, ny.div_ceil(4) as u32, nz.div_ceil(2) as u32],
            local: [8, 4, 2],
        };
        prg.launch_timed(&[&out], &[nx as u32, ny as u32, nz as u32], dims)
            .explained();
        let got = download(dev, &out, nx * ny * nz + 64);
        for z in 0..nz {
            for y in 0..ny {
                for x in 0..nx {
                    assert_eq!(
                        got[(z * ny + y) * nx + x],
                        (x | y << 10 | z << 20) as u32,
                        "({x}, {y}, {z})"
                    );
                }
            }
        }
        assert!(
            got[nx * ny * nz..].iter().all(|&v| v == u32::MAX),
            "partial groups stayed in bounds"
        );
    });
}

/// Runs a reduction kernel of `name` (each group of `lanes` lanes sums `per_group`
/// floats into one) over `n` small integers, and checks every group's sum.
fn group_sums(name: &str, builds: &[(&str, &[u8])], n: usize, per_group: usize, lanes: u32, seed: u32) {
    for_each_build(builds, name, |dev, prg| {
        let a: Vec<f32> = rand_u32(n, seed).iter().map(|&v| (v % 64) as f32).collect();
        let ba = upload(dev, &a.iter().map(|v| v.to_bits()).collect::<Vec<_>>());
        let g = n.div_ceil(per_group);
        let sums = dev.alloc(g * 4, BufferKind::Device).unwrap();
        let dims = LaunchDims {
            global: [g as u32, 1, 1],
            local: [lanes, 1, 1],
        };
        prg.launch_timed(&[&ba, &sums], &[n as u32], dims).explained();
        let got = download(dev, &sums, g);
        for (k, s) in got.iter().enumerate() {
            // Small integers: the float sum is exact in any order.
            let want: f32 = a[k * per_group..((k + 1) * per_group).min(n)].iter().sum();
            assert_eq!(f32::from_bits(*s), want, "{name}: group {k}");
        }
    });
}

#[test]
fn lds_tree_reduction_with_barriers() {
    group_sums("reduce_lds", &kernel!("reduce_lds"), 256 * 7 + 100, 256, 256, 6);
}

/// tinygrad's shape of a reduction: partial sums in registers, one barrier, the first
/// lane adding them; five whole groups of 1,024 elements and a ragged sixth.
#[test]
fn group_reduction_through_one_barrier() {
    group_sums("reduce_group", &kernel!("reduce_group"), 1024 * 5 + 300, 1024, 64, 16);
}

#[test]
fn global_atomics_under_contention() {
    for_each_build(&kernel!("atomics"), "atomics", |dev, prg| {
        let n = 2000;
        let a = rand_u32(n, 7);
        let ba = upload(dev, &a);
        let init = [0u32, u32::MAX, 0, u32::MAX, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
        let acc = upload(dev, &init);
        prg.launch_timed(&[&ba, &acc], &[n as u32], groups(n)).explained();
        let got = download(dev, &acc, init.len());
        let mut want = init;
        for &x in &a {
            want[0] = want[0].wrapping_add(x);
            want[1] = want[1].min(x);
            want[2] = want[2].max(x);
            want[3] &= x | 0xff00_ff00;
            want[4] |= x & 0x0f0f_0f0f;
            want[5] ^= x;
            want[6 + (x & 7) as usize] += 1;
        }
        assert_eq!(got, want);
    });
}

/// Raw buffer (MUBUF) loads and stores through resources the kernel makes: a load past
/// the resource's NUM_RECORDS reads 0, a store past it writes nothing, the SGPR offset
/// moves the address but not the range check; dwords, 16-byte vectors, bytes and
/// half-words. gfx942's run on CDNA3's gfx9 resource layout.
#[test]
fn raw_buffer_loads_and_stores_with_their_range_check() {
    for_each_build(&kernel!("buffers"), "buffers", |dev, prg| {
        let n = 1000usize;
        let lanes = 1024usize;
        let input: Vec<u32> = rand_u32(n, 31);
        let bytes: Vec<u8> = input.iter().flat_map(|w| w.to_le_bytes()).collect();
        let canary = 0x5a5a_5a5a;
        let (bi, out) = (upload(dev, &input), upload(dev, &vec![canary; 4 * n]));
        prg.launch_timed(&[&bi, &out], &[n as u32], groups(lanes)).explained();
        let got = download(dev, &out, 4 * n);
        // What a raw load of `size` bytes at byte `at` (the range-checked offset) reads.
        let load = |at: usize, size: usize| -> u64 {
            if at + size > 4 * n {
                return 0;
            }
            let mut b = [0u8; 8];
            b[..size].copy_from_slice(&bytes[at..at + size]);
            u64::from_le_bytes(b)
        };
        let mut want = vec![canary; 4 * n];
        for i in 0..lanes {
            let a = load(i * 4, 4) as u32;
            let b = load((i + n / 2) * 4, 4) as u32;
            let voff = (i & !3) * 4 % (4 * n - 16);
            // Checked at `voff`, read 16 bytes further.
            let c: u32 = (0..4).map(|k| load(voff + 16 + 4 * k, 4) as u32).fold(0, |x, y| x ^ y);
            let (d, e) = (load(i, 1) as u32, load(2 * i, 2) as u32);
            let mut store = |dword: usize, v: u32, mask: u32| {
                if dword < 3 * n {
                    want[dword] = want[dword] & !mask | v & mask;
                }
            };
            store(i, a.wrapping_add(b.wrapping_mul(3)), u32::MAX);
            store(n + i, c, u32::MAX);
            store(2 * n + i, e, 0xffff);
            store(2 * n + i, d << 16, 0xff_0000);
        }
        let wrong: Vec<usize> = (0..4 * n).filter(|&k| got[k] != want[k]).collect();
        assert!(
            wrong.is_empty(),
            "dwords {:?}…: {:x?} vs {:x?}",
            &wrong[..wrong.len().min(4)],
            wrong.iter().take(4).map(|&k| got[k]).collect::<Vec<_>>(),
            wrong.iter().take(4).map(|&k| want[k]).collect::<Vec<_>>()
        );
    });
}

/// One atomic add a wave, as LLVM's atomic optimizer (DPP strategy) builds it: the
/// counter ends at the sum, the values the adds return chain up (in the order the adds
/// happened, each the one before plus that lane's value), and in the -O2 builds, where
/// the wave scans with DPP (gfx9's `row_bcast` and `wave_shr` on gfx942), each wave's
/// lanes return their exclusive prefix sums past the wave's first.
#[test]
fn one_atomic_a_wave_through_a_dpp_scan() {
    let builds = kernel!("scan_atomic");
    for (k, &(target, elf)) in builds.iter().enumerate() {
        let (_p, dev) = device(target);
        let prg = Program::load(&dev, elf, "scan_atomic").unwrap();
        let n = 256 * 3 + 77;
        let a: Vec<u32> = rand_u32(n, 23).iter().map(|v| v % 1000 + 1).collect();
        let (ba, acc, old) = (upload(&dev, &a), upload(&dev, &[5u32]), upload(&dev, &vec![0; n]));
        prg.launch_timed(&[&ba, &acc, &old], &[n as u32], groups(n)).explained();
        let (total, old) = (download(&dev, &acc, 1)[0], download(&dev, &old, n));
        assert_eq!(total, 5 + a.iter().sum::<u32>(), "{target} build {k}: the sum");
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by_key(|&i| old[i]);
        assert_eq!(old[order[0]], 5, "{target} build {k}: the first add");
        for pair in order.windows(2) {
            assert_eq!(
                old[pair[1]],
                old[pair[0]] + a[pair[0]],
                "{target} build {k}: lane {}",
                pair[1]
            );
        }
        if k % 2 == 0 {
            let wave = if target == "gfx942" { 64 } else { 32 };
            for (i, &got) in old.iter().enumerate() {
                let first = i / wave * wave;
                let want = old[first] + a[first..i].iter().sum::<u32>();
                assert_eq!(got, want, "{target} -O2: lane {i}'s prefix in its wave");
            }
        }
    }
}

/// gfx9's f64 atomics on gfx942 (HIP's `atomicAdd` on a double): 8 sums of exact
/// values end exact, the old values each add returns chain from 0 to the sum (each
/// the one before plus that lane's value), the non-returning form sums alike, the
/// minimum and maximum of each 64 lanes are their smallest and largest value; in LDS
/// (`ds_add_rtn_f64`) each workgroup's 4 sums and their chains alike.
#[test]
fn f64_atomics_add_and_take_minima_and_maxima() {
    let builds = [
        include_bytes!("../../../tests/kernels/gfx942/atomics_f64.hsaco").as_slice(),
        include_bytes!("../../../tests/kernels/gfx942/atomics_f64_O0.hsaco").as_slice(),
    ];
    for (k, elf) in builds.into_iter().enumerate() {
        let (_p, dev) = device("gfx942");
        let prg = Program::load(&dev, elf, "atomics_f64").unwrap();
        let n = 256 * 2 + 77;
        // Multiples of 1/4 below 2^20: every partial sum is exact, in any order.
        let x: Vec<f64> = rand_u32(n, 41).iter().map(|v| f64::from(v % 4000 + 1) / 4.0).collect();
        let words = |v: &[f64]| -> Vec<u32> {
            v.iter()
                .flat_map(|d| [d.to_bits() as u32, (d.to_bits() >> 32) as u32])
                .collect()
        };
        let groups64 = n.div_ceil(64);
        let bx = upload(&dev, &words(&x));
        let sums = upload(&dev, &words(&[0.0; 8]));
        let mins = upload(&dev, &words(&vec![f64::INFINITY; groups64]));
        let maxs = upload(&dev, &words(&vec![f64::NEG_INFINITY; groups64]));
        let sums2 = upload(&dev, &words(&[0.0; 8]));
        let olds = upload(&dev, &words(&vec![-1.0; n]));
        let wgs = n.div_ceil(256);
        let lsums = upload(&dev, &words(&vec![-1.0; 4 * wgs]));
        let lolds = upload(&dev, &words(&vec![-1.0; 256 * wgs]));
        prg.launch_timed(
            &[&bx, &sums, &mins, &maxs, &sums2, &olds, &lsums, &lolds],
            &[n as u32],
            groups(n),
        )
        .explained();
        let read = |b, len| -> Vec<f64> {
            download(&dev, b, 2 * len)
                .chunks(2)
                .map(|p| f64::from_bits(u64::from(p[0]) | u64::from(p[1]) << 32))
                .collect()
        };
        let (sums, sums2, mins, maxs, olds) = (
            read(&sums, 8),
            read(&sums2, 8),
            read(&mins, groups64),
            read(&maxs, groups64),
            read(&olds, n),
        );
        for s in 0..8 {
            let lanes: Vec<usize> = (s..n).step_by(8).collect();
            let want: f64 = lanes.iter().map(|&i| x[i]).sum();
            assert_eq!((sums[s], sums2[s]), (want, want), "build {k}: sum {s}");
            // The old values chain from 0 to the sum.
            let mut order = lanes.clone();
            order.sort_by(|&a, &b| olds[a].total_cmp(&olds[b]));
            assert_eq!(olds[order[0]], 0.0, "build {k}: sum {s}'s first add");
            for pair in order.windows(2) {
                assert_eq!(olds[pair[1]], olds[pair[0]] + x[pair[0]], "build {k}: lane {}", pair[1]);
            }
        }
        // The LDS sums: lanes past n add 0.
        let (lsums, lolds) = (read(&lsums, 4 * wgs), read(&lolds, 256 * wgs));
        let value = |i: usize| if i < n { x[i] } else { 0.0 };
        for g in 0..wgs {
            for s in 0..4 {
                let lanes: Vec<usize> = (256 * g + s..256 * g + 256).step_by(4).collect();
                let want: f64 = lanes.iter().map(|&i| value(i)).sum();
                assert_eq!(lsums[4 * g + s], want, "build {k}: workgroup {g}'s LDS sum {s}");
                let mut order = lanes.clone();
                // Lanes adding 0 leave the sum as it was: among equal old values, they
                // come first.
                order.sort_by(|&a, &b| lolds[a].total_cmp(&lolds[b]).then(value(a).total_cmp(&value(b))));
                let mut at = 0.0;
                for &i in &order {
                    assert_eq!(lolds[i], at, "build {k}: LDS lane {i}");
                    at += value(i);
                }
            }
        }
        for g in 0..groups64 {
            let vals = &x[64 * g..(64 * g + 64).min(n)];
            let (lo, hi) = vals
                .iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &v| (l.min(v), h.max(v)));
            assert_eq!((mins[g], maxs[g]), (lo, hi), "build {k}: group {g}");
        }
    }
}

/// gfx942's loads from memory straight into LDS (`tests/kernels/lds_dma.cl`):
/// `global_load_lds_dword` puts each lane's dword at M0 plus 4 × its lane, an
/// instruction offset moves the global and LDS addresses alike and lanes a branch
/// skips keep their LDS dwords, `buffer_load_dword … lds` reads through a raw buffer
/// with its offset, `global_load_lds_sshort` sign-extends a short into each lane's
/// dword; other lanes read them back.
#[test]
fn loads_straight_into_lds() {
    let (_p, dev) = device("gfx942");
    let elf = include_bytes!("../../../tests/kernels/gfx942/lds_dma.hsaco");
    let prg = Program::load(&dev, elf, "lds_dma").unwrap();
    let wgs = 3;
    let n = 256 * wgs;
    // Past the last workgroup: the offset loads' and the buffer's reach.
    let src = rand_u32(n + 8, 51);
    let halves: Vec<u16> = rand_u32(n, 52)
        .iter()
        .map(|&v| v as u16 | (v & 0x8000) as u16)
        .collect();
    let words: Vec<u32> = halves
        .chunks(2)
        .map(|p| u32::from(p[0]) | u32::from(p[1]) << 16)
        .collect();
    let bsrc = upload(&dev, &src);
    let bhalves = upload(&dev, &words);
    let out = upload(&dev, &vec![0u32; 4 * n]);
    prg.launch_timed(&[&bsrc, &bhalves, &out], &[], groups(n)).explained();
    let got = download(&dev, &out, 4 * n);
    for i in 0..n {
        let (wave_start, lane) = (i - i % 64, i % 64);
        let other = |d: usize| wave_start + (lane + d) % 64;
        let skipped = lane % 5 == 0;
        let want = [
            src[other(1)],
            if skipped { 0xdead_0000 + lane as u32 } else { src[i + 4] },
            src[other(63) + 2],
            halves[other(2)] as i16 as i32 as u32,
        ];
        assert_eq!(got[4 * i..4 * i + 4], want, "lane {i}");
    }
}

#[test]
fn lds_atomics_and_compare_swap_loops() {
    for_each_build(&kernel!("lds_atomics"), "lds_atomics", |dev, prg| {
        // Three full workgroups and a partial one.
        let n: usize = 3 * 256 + 77;
        let wgs = n.div_ceil(256);
        let a = rand_u32(n, 21);
        let ba = upload(dev, &a);
        let out = upload(dev, &vec![0u32; 16 + 16 * wgs]);
        let fsum = upload(dev, &vec![0u32; 1 + wgs]);
        prg.launch_timed(&[&ba, &out, &fsum], &[n as u32], groups(n))
            .explained();
        let got = download(dev, &out, 16 + 16 * wgs);
        let fgot: Vec<f32> = download(dev, &fsum, 1 + wgs).into_iter().map(f32::from_bits).collect();
        assert_eq!(got[10], n as u32, "global compare-swap increments");
        let mut ftotal = 0.0f32;
        for wg in 0..wgs {
            let items = &a[wg * 256..((wg + 1) * 256).min(n)];
            let s = &got[16 + wg * 16..16 + wg * 16 + 9];
            let fold = |init: u32, op: fn(u32, u32) -> u32| items.iter().fold(init, |acc, &x| op(acc, x));
            assert_eq!(s[0], fold(0, u32::wrapping_add), "add, workgroup {wg}");
            assert_eq!(s[1], fold(u32::MAX, u32::min), "min, workgroup {wg}");
            assert_eq!(s[2], fold(0, u32::max), "max, workgroup {wg}");
            assert_eq!(
                s[3],
                fold(u32::MAX, |acc, x| acc & (x | 0xf0f0_f0f0)),
                "and, workgroup {wg}"
            );
            assert_eq!(s[4], fold(0, |acc, x| acc | (x & 0x00ff_00ff)), "or, workgroup {wg}");
            assert_eq!(s[5], fold(0, |acc, x| acc ^ x), "xor, workgroup {wg}");
            // The last exchange leaves some item's id + 1; exactly one item saw the initial 0.
            let ids = (wg * 256 + 1) as u32..=(wg * 256 + items.len()) as u32;
            assert!(ids.contains(&s[6]), "exchange left {:#x}, workgroup {wg}", s[6]);
            assert_eq!(s[7], 1, "items that saw 0, workgroup {wg}");
            assert_eq!(s[8], 3 * items.len() as u32, "compare-swap loop, workgroup {wg}");
            // Small integers: every order of f32 additions gives the exact sum.
            let fsum_wg: f32 = items.iter().map(|&x| (x & 0xff) as f32).sum();
            assert_eq!(fgot[1 + wg], fsum_wg, "LDS f32 add, workgroup {wg}");
            ftotal += fsum_wg;
        }
        assert_eq!(fgot[0], ftotal, "global f32 add");
    });
}

#[test]
fn sixty_four_bit_and_wrapping_atomics() {
    for_each_build(&kernel!("atomics"), "atomics64", |dev, prg| {
        let n = 1000;
        let a = rand_u32(n, 20);
        let init: [u64; 5] = [0, i64::MAX as u64, 0, 0, 0];
        let words: Vec<u32> = init.iter().flat_map(|v| [*v as u32, (v >> 32) as u32]).collect();
        let (ba, acc, wrap) = (upload(dev, &a), upload(dev, &words), upload(dev, &[0, 0]));
        prg.launch_timed(&[&ba, &acc, &wrap], &[n as u32], groups(n))
            .explained();
        let got = download(dev, &acc, 10);
        let got: Vec<u64> = got.chunks(2).map(|p| p[0] as u64 | (p[1] as u64) << 32).collect();
        let xs: Vec<u64> = a
            .iter()
            .enumerate()
            .map(|(i, &v)| (v as u64) << 20 | i as u64)
            .collect();
        let sum = xs.iter().fold(0u64, |s, &x| s.wrapping_add(x));
        assert_eq!(got[0], sum, "add");
        assert_eq!(
            got[1] as i64,
            xs.iter().map(|&x| x as i64 - (1 << 40)).min().unwrap(),
            "signed min"
        );
        assert_eq!(got[2], *xs.iter().max().unwrap(), "max");
        assert_eq!(got[3], xs.iter().fold(0, |s, &x| s ^ x), "xor");
        assert_eq!(got[4], sum, "compare-swap loop");
        let n = n as u32;
        assert_eq!(
            download(dev, &wrap, 2),
            [n % 100, (100 - n % 100) % 100],
            "inc/dec wrap at 99"
        );
    });
}

#[test]
fn double_precision() {
    for_each_build(&kernel!("f64math"), "f64math", |dev, prg| {
        let n = 600;
        let a: Vec<f64> = rand_u32(n, 8)
            .iter()
            .map(|&v| (v % 100_000) as f64 / 37.0 - 1000.0)
            .collect();
        let b: Vec<f64> = rand_u32(n, 9).iter().map(|&v| (v % 3000) as f64 / 11.0).collect();
        let words = |v: &[f64]| {
            v.iter()
                .flat_map(|x| [x.to_bits() as u32, (x.to_bits() >> 32) as u32])
                .collect::<Vec<u32>>()
        };
        let (ba, bb) = (upload(dev, &words(&a)), upload(dev, &words(&b)));
        let out = dev.alloc(n * 32, BufferKind::Device).unwrap();
        prg.launch_timed(&[&ba, &bb, &out], &[n as u32], groups(n)).explained();
        let got = download(dev, &out, n * 8);
        let at = |k: usize| f64::from_bits(got[2 * k] as u64 | (got[2 * k + 1] as u64) << 32);
        for i in 0..n {
            let (x, y) = (a[i], b[i]);
            assert_eq!(at(i * 4), x + y, "add {i}");
            // OpenCL contracts x * y - y into one fused multiply-add.
            assert_eq!(at(i * 4 + 1), x.mul_add(y, -y), "mul-sub {i}");
            assert_eq!(at(i * 4 + 2), x.mul_add(y, 1.0), "fma {i}");
            assert_eq!(at(i * 4 + 3), (x as i32) as f64 + i as f64 * 0.5, "conversions {i}");
        }
    });
}

#[test]
fn transcendentals_within_their_precision() {
    for_each_build(&kernel!("transcend"), "transcend", |dev, prg| {
        let n = 500;
        let a: Vec<f32> = rand_u32(n, 10)
            .iter()
            .map(|&v| 0.01 + (v % 10_000) as f32 / 1000.0)
            .collect();
        let ba = upload(dev, &a.iter().map(|v| v.to_bits()).collect::<Vec<_>>());
        let out = dev.alloc(n * 28, BufferKind::Device).unwrap();
        prg.launch_timed(&[&ba, &out], &[n as u32], groups(n)).explained();
        let got = download(dev, &out, n * 7);
        for i in 0..n {
            let x = a[i];
            // The hardware's instructions are accurate to about 1 ulp; sin/cos take
            // revolutions (x · 2π radians).
            let tau = std::f32::consts::TAU;
            let want = [
                x.exp2(),
                x.log2(),
                1.0 / x,
                1.0 / x.sqrt(),
                x.sqrt(),
                (x * tau).sin(),
                (x * tau).cos(),
            ];
            for (k, w) in want.iter().enumerate() {
                let g = f32::from_bits(got[i * 7 + k]);
                let tol = w.abs().max(1.0) * 4e-6;
                assert!((g - w).abs() <= tol, "x={x} op {k}: {g} vs {w}");
            }
        }
    });
}

#[test]
fn wave_reduction_with_dpp() {
    for_each_build(&kernel!(rdna "wavereduce"), "wavereduce", |dev, prg| {
        let n = 256 * 3 + 40;
        let a: Vec<u32> = rand_u32(n, 11).iter().map(|v| v % 1000).collect();
        let ba = upload(dev, &a);
        let waves = n.div_ceil(256) * 8;
        let sums = dev.alloc(waves * 4, BufferKind::Device).unwrap();
        prg.launch_timed(&[&ba, &sums], &[n as u32], groups(n)).explained();
        let got = download(dev, &sums, waves);
        for (k, s) in got.iter().enumerate() {
            let want: u32 = a.iter().skip(k * 32).take(32).sum();
            assert_eq!(*s, want, "wave {k}");
        }
    });
}

#[test]
fn wave_maximum_with_dpp8_and_permlanes() {
    for_each_build(&kernel!(rdna "wavereduce"), "wavemax", |dev, prg| {
        // A partial last wave: its missing lanes count as 0.
        let n = 256 * 2 + 45;
        let a: Vec<u32> = rand_u32(n, 16).iter().map(|v| v % 100_000).collect();
        let (ba, out) = (upload(dev, &a), upload(dev, &vec![0; n]));
        prg.launch_timed(&[&ba, &out], &[n as u32], groups(n)).explained();
        let got = download(dev, &out, n);
        for (i, g) in got.iter().enumerate() {
            let wave = &a[i / 32 * 32..(i / 32 * 32 + 32).min(n)];
            assert_eq!(*g, *wave.iter().max().unwrap(), "lane {i}");
        }
    });
}

/// Runs matmul kernel `name` (C = A · B, 16 × 16 workgroups) on small integers and
/// checks every element.
fn check_matmul(name: &str, builds: &[(&str, &[u8])], seed: u32) {
    for_each_build(builds, name, |dev, prg| {
        let n = 48usize;
        let [a, b, want] = small_integer_matmul(n, seed);
        let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        let got = run_matmul(dev, prg, n, [&bits(&a), &bits(&b)], n * n, [16, 16, 1]);
        for r in 0..n {
            for col in 0..n {
                assert_eq!(
                    f32::from_bits(got[r * n + col]),
                    want[r * n + col],
                    "{name}: C[{r}][{col}]"
                );
            }
        }
    });
}

#[test]
fn tiled_matmul_through_lds() {
    check_matmul("matmul", &kernel!("matmul"), 12);
}

/// The product with no local tile: each lane reads its row and column from global memory.
#[test]
fn matmul_straight_from_global_memory() {
    check_matmul("matmul_direct", &kernel!("matmul_direct"), 13);
}

#[test]
fn private_array_in_scratch() {
    for_each_build(&kernel!("private"), "private_array", |dev, prg| {
        assert!(
            prg.info().descriptor.private_segment_size >= 160,
            "the table lives in scratch"
        );
        let n = 700;
        let idx = rand_u32(n, 14);
        let bi = upload(dev, &idx);
        let out = dev.alloc(n * 4, BufferKind::Device).unwrap();
        prg.launch_timed(&[&bi, &out], &[n as u32], groups(n)).explained();
        assert_eq!(download(dev, &out, n), common::private_array_expected(&idx));
    });
}

#[test]
fn tiled_f16_matmul_with_packed_math() {
    for_each_build(&kernel!("matmul_f16"), "matmul_f16", |dev, prg| {
        let n = 32usize;
        // Halves of small integers: every product and partial sum (|x| <= 32 * 3 * 2) is exact.
        let [a, b, want] = small_integer_matmul(n, 14);
        let halves = |v: &[f32]| -> Vec<u32> {
            let h: Vec<u16> = v.iter().map(|&x| f32_to_half_exact(x)).collect();
            h.chunks(2).map(|p| p[0] as u32 | (p[1] as u32) << 16).collect()
        };
        let got = run_matmul(dev, prg, n, [&halves(&a), &halves(&b)], n * n / 2, [8, 16, 1]);
        for r in 0..n {
            for col in 0..n {
                let k = r * n + col;
                let h = (got[k / 2] >> (16 * (k % 2))) as u16;
                assert_eq!(h, f32_to_half_exact(want[k]), "C[{r}][{col}]");
            }
        }
    });
}

/// Runs a tiled matmul kernel on the `n` × `n` matrices A and B (`ab`, as words), in
/// workgroups of `local` that each compute a 16 × 16 tile; C's `c_words` words.
fn run_matmul(dev: &Device, prg: &Program, n: usize, ab: [&[u32]; 2], c_words: usize, local: [u32; 3]) -> Vec<u32> {
    let (ba, bb) = (upload(dev, ab[0]), upload(dev, ab[1]));
    let c = dev.alloc(c_words * 4, BufferKind::Device).unwrap();
    let dims = LaunchDims {
        global: [(n / 16) as u32, (n / 16) as u32, 1],
        local,
    };
    prg.launch_timed(&[&ba, &bb, &c], &[n as u32], dims).explained();
    download(dev, &c, c_words)
}

/// Two random `n` × `n` matrices of small integers (seeds `seed` and `seed + 1`) and
/// their product, exact whatever the summation order (in f16 too, for `n` ≤ 32:
/// |x| ≤ 32 × 3 × 2).
fn small_integer_matmul(n: usize, seed: u32) -> [Vec<f32>; 3] {
    let a: Vec<f32> = rand_u32(n * n, seed).iter().map(|&v| (v % 7) as f32 - 3.0).collect();
    let b: Vec<f32> = rand_u32(n * n, seed + 1)
        .iter()
        .map(|&v| (v % 5) as f32 - 2.0)
        .collect();
    let c = (0..n * n)
        .map(|i| (0..n).map(|k| a[i / n * n + k] * b[k * n + i % n]).sum())
        .collect();
    [a, b, c]
}

/// Half bits of a small integer `x` (|x| < 2048), exactly.
fn f32_to_half_exact(x: f32) -> u16 {
    assert!(x.fract() == 0.0 && x.abs() < 2048.0);
    if x == 0.0 {
        return 0;
    }
    let (sign, m) = (if x < 0.0 { 0x8000 } else { 0 }, x.abs() as u32);
    let e = 31 - m.leading_zeros();
    sign | ((e + 15) as u16) << 10 | ((m << (10 - e)) & 0x3ff) as u16
}

#[test]
fn generic_pointers_to_global_local_and_private_memory() {
    for_each_build(&kernel!("flat_ptrs"), "flat_ptrs", |dev, prg| {
        let n = 256 + 100;
        let g0 = rand_u32(n, 17);
        let (g, out) = (upload(dev, &g0), upload(dev, &vec![0; n]));
        let dims = LaunchDims {
            global: [2, 1, 1],
            local: [256, 1, 1],
        };
        prg.launch_timed(&[&g, &out], &[n as u32], dims).explained();
        let (g1, got) = (download(dev, &g, n), download(dev, &out, n));
        for i in 0..n {
            let lid = (i % 256) as u32;
            let i32_ = i as u32;
            assert_eq!(g1[i], g0[i].wrapping_add(5), "global through a flat pointer, item {i}");
            let want = lid + 7 + 28 * i32_ + 8 * (i32_ & 3);
            assert_eq!(got[i], want, "LDS and private through flat pointers, item {i}");
        }
    });
}

#[test]
fn scalar_half_precision_arithmetic_and_conversions() {
    for_each_build(&kernel!("f16scalar"), "f16scalar", |dev, prg| {
        let n = 300;
        // Inputs that round to half: quarters in [-64, 64).
        let a: Vec<f32> = rand_u32(n, 18).iter().map(|&v| (v % 512) as f32 / 4.0 - 64.0).collect();
        let b: Vec<f32> = rand_u32(n, 19).iter().map(|&v| (v % 512) as f32 / 4.0 - 64.0).collect();
        let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        let (ba, bb) = (upload(dev, &bits(&a)), upload(dev, &bits(&b)));
        let out = upload(dev, &vec![0; 4 * n]);
        prg.launch_timed(&[&ba, &bb, &out], &[n as u32], groups(n)).explained();
        let got: Vec<f32> = download(dev, &out, 4 * n).into_iter().map(f32::from_bits).collect();
        // Every value here is a multiple of 1/16 below 2^14 in magnitude, so each half
        // result is exact except where rounding to 11 bits applies; the reference rounds
        // each step to half the same way (nearest even).
        let h = |x: f64| round_half(x);
        for i in 0..n {
            let (x, y) = (a[i] as f64, b[i] as f64);
            let (s, d, p) = (h(x + y), h(x - y), h(x * y));
            let want = [s, h(d * p), x.max(y), h(x.mul_add(y, s))];
            for k in 0..4 {
                assert_eq!(got[4 * i + k] as f64, want[k], "item {i} result {k} (x {x}, y {y})");
            }
        }
    });
}

/// `x` rounded to the nearest half-precision value (ties to even), overflowing to
/// infinity.
fn round_half(x: f64) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return x;
    }
    let e = ((((x.abs().to_bits() >> 52) & 0x7ff) as i32) - 1023).max(-14);
    let ulp = ((e - 10) as f64).exp2();
    let r = (x / ulp).round_ties_even() * ulp;
    if r.abs() >= 65520.0 {
        f64::INFINITY.copysign(x)
    } else {
        r
    }
}

#[test]
fn atomics_through_generic_pointers() {
    for_each_build(&kernel!("flat_ptrs"), "flat_atomics", |dev, prg| {
        let groups = 3;
        let (g, out) = (upload(dev, &[0]), upload(dev, &vec![0; groups]));
        let mine = upload(dev, &vec![0; 256 * groups]);
        let dims = LaunchDims {
            global: [groups as u32, 1, 1],
            local: [256, 1, 1],
        };
        prg.launch_timed(&[&g, &out, &mine], &[], dims).explained();
        let want: Vec<u32> = (0..256 * groups as u32).map(|i| i % 256 + 1000).collect();
        assert_eq!(download(dev, &mine, 256 * groups), want, "private counters");
        assert_eq!(download(dev, &g, 1), [256 * groups as u32], "global counter");
        assert_eq!(
            download(dev, &out, groups),
            vec![(0..256).sum::<u32>(); groups],
            "LDS sums"
        );
    });
}

#[test]
fn ieee_division_square_root_and_classes() {
    for_each_build(&kernel!("fdiv"), "fdiv", |dev, prg| {
        let n = 300;
        let r = rand_u32(2 * n, 22);
        // Moderate magnitudes (no scaling needed), then special values.
        let mut a: Vec<f32> = (0..n).map(|i| (r[i] % 20001) as f32 / 7.0 - 1400.0).collect();
        let mut b: Vec<f32> = (0..n).map(|i| (r[n + i] % 30001) as f32 / 13.0 - 1100.5).collect();
        let specials = [
            (0.0, 0.0),
            (1.0, 0.0),
            (-1.0, 0.0),
            (f32::INFINITY, 2.0),
            (f32::INFINITY, f32::INFINITY),
            (f32::NAN, 1.0),
            (3.0, f32::INFINITY),
            (-0.0, 5.0),
            (-4.0, 2.0),
        ];
        for (k, (x, y)) in specials.iter().enumerate() {
            (a[k], b[k]) = (*x, *y);
        }
        let da: Vec<f64> = (0..n)
            .flat_map(|i| [a[i] as f64 * 1.000_001, b[i] as f64 + 0.25])
            .collect();
        let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        let dwords: Vec<u32> = da
            .iter()
            .flat_map(|x| [x.to_bits() as u32, (x.to_bits() >> 32) as u32])
            .collect();
        let (ba, bb, bd) = (upload(dev, &bits(&a)), upload(dev, &bits(&b)), upload(dev, &dwords));
        let (out, dout) = (upload(dev, &vec![0; 4 * n]), upload(dev, &vec![0; 4 * n]));
        prg.launch_timed(&[&ba, &bb, &out, &bd, &dout], &[n as u32], groups(n))
            .explained();
        let got: Vec<f32> = download(dev, &out, 4 * n).into_iter().map(f32::from_bits).collect();
        let dgot: Vec<f64> = download(dev, &dout, 4 * n)
            .chunks(2)
            .map(|p| f64::from_bits(p[0] as u64 | (p[1] as u64) << 32))
            .collect();
        // OpenCL allows single-precision division 2.5 ulp and sqrt 3 ulp (LLVM's -O2 code
        // divides with v_rcp); special values must come out exactly.
        let same = |g: f32, w: f32, tol: u32| {
            g.to_bits() == w.to_bits()
                || (g.is_nan() && w.is_nan())
                || (g.is_finite()
                    && w.is_finite()
                    && w != 0.0
                    && (g.to_bits() as i64 - w.to_bits() as i64).unsigned_abs() <= tol as u64)
        };
        let ulps = |g: f64, w: f64| {
            if g.is_nan() && w.is_nan() || g == w {
                0
            } else {
                (g.to_bits() as i64 - w.to_bits() as i64).unsigned_abs()
            }
        };
        for i in 0..n {
            let (x, y) = (a[i], b[i]);
            let q = x / y;
            let class = if q.is_nan() {
                1.0
            } else if q.is_infinite() {
                2.0
            } else {
                0.0
            };
            let want = [q, x.sqrt(), class, x.abs() / 3.0];
            for (k, tol) in [2, 3, 0, 2].into_iter().enumerate() {
                let g = got[4 * i + k];
                assert!(
                    same(g, want[k], tol),
                    "item {i} result {k}: {g} for {} ({x} / {y})",
                    want[k]
                );
            }
            let (p, d) = (da[2 * i], da[2 * i + 1]);
            assert!(
                ulps(dgot[2 * i], p / d) <= 1,
                "item {i}: {} / {} = {}, got {}",
                p,
                d,
                p / d,
                dgot[2 * i]
            );
            assert!(
                ulps(dgot[2 * i + 1], p.sqrt()) <= 1,
                "item {i}: sqrt {p} = {}, got {}",
                p.sqrt(),
                dgot[2 * i + 1]
            );
        }
    });
}

/// 16-bit integers (arithmetic, shifts, min/max, division), bit tests and counts, and
/// f32 pairs packed into halves (round toward zero) and back, against Rust.
#[test]
fn sixteen_bit_integers_bit_tests_and_half_packing() {
    for_each_build(&kernel!("i16mix"), "i16mix", |dev, prg| {
        let n = 300;
        let r = rand_u32(3 * n, 31);
        let mut a: Vec<i16> = (0..n).map(|i| r[i] as i16).collect();
        let mut b: Vec<i16> = (0..n).map(|i| (r[n + i] >> 7) as i16).collect();
        for (k, (x, y)) in [(i16::MIN, -1), (i16::MAX, 1), (0, 0), (-1, i16::MIN)]
            .into_iter()
            .enumerate()
        {
            (a[k], b[k]) = (x, y);
        }
        let f: Vec<f32> = (0..2 * n)
            .map(|i| match i {
                0 => 65504.0,
                1 => 1e6,
                2 => -0.1,
                3 => 6.0e-8,
                _ => (r[2 * n + i / 2] % 20000) as f32 / 37.0 - 270.0 + (i % 2) as f32 * 0.333,
            })
            .collect();
        let halves = |v: &[i16]| {
            v.chunks(2)
                .map(|c| c[0] as u16 as u32 | (c.get(1).copied().unwrap_or(0) as u16 as u32) << 16)
                .collect::<Vec<u32>>()
        };
        let (ba, bb) = (upload(dev, &halves(&a)), upload(dev, &halves(&b)));
        let bf = upload(dev, &f.iter().map(|x| x.to_bits()).collect::<Vec<_>>());
        let (bs, bu, bbits) = (
            upload(dev, &vec![0; 2 * n]),
            upload(dev, &vec![0; 2 * n]),
            upload(dev, &vec![0; 4 * n]),
        );
        let (bpacked, bback) = (upload(dev, &vec![0; n]), upload(dev, &vec![0; 2 * n]));
        prg.launch_timed(
            &[&ba, &bb, &bs, &bu, &bbits, &bf, &bpacked, &bback],
            &[n as u32],
            groups(n),
        )
        .explained();
        let words = |b: &Buffer, k: usize| download(dev, b, k);
        let h16 = |w: Vec<u32>| {
            w.iter()
                .flat_map(|v| [*v as u16, (*v >> 16) as u16])
                .collect::<Vec<u16>>()
        };
        let (s16, u16s) = (h16(words(&bs, 2 * n)), h16(words(&bu, 2 * n)));
        let (bits, packed) = (words(&bbits, 4 * n), words(&bpacked, n));
        let back: Vec<f32> = words(&bback, 2 * n).into_iter().map(f32::from_bits).collect();
        // Round to nearest even into a half, as bits (binary search over the positive
        // halves, which are ordered like their bit patterns).
        let half_rne = |x: f32| {
            let (sign, m) = (if x.is_sign_negative() { 0x8000u16 } else { 0 }, (x as f64).abs());
            if m >= 65520.0 {
                return sign | 0x7c00;
            }
            let (mut lo, mut hi) = (0u16, 0x7bffu16);
            while lo < hi {
                let mid = (lo + hi).div_ceil(2);
                if half_f(mid) <= m { lo = mid } else { hi = mid - 1 }
            }
            let (d0, d1) = (m - half_f(lo), half_f(lo + 1) - m);
            sign | if d1 < d0 || (d1 == d0 && lo & 1 == 1) {
                lo + 1
            } else {
                lo
            }
        };
        for i in 0..n {
            let (x, y) = (a[i], b[i]);
            let want_s = [x.wrapping_add(y), x.wrapping_mul(y), x >> (y & 7), x.min(y)];
            assert_eq!(&s16[4 * i..4 * i + 4], &want_s.map(|v| v as u16), "item {i}: {x}, {y}");
            let (ux, uy) = (x as u16, y as u16);
            let want_u = [
                ux / (uy | 1),
                ux >> (uy & 15),
                ux.max(uy),
                ux.wrapping_mul(3).wrapping_add(uy),
            ];
            assert_eq!(&u16s[4 * i..4 * i + 4], &want_u, "item {i}: {ux}, {uy}");
            let w = x as i32 as u32;
            let want_bits = [
                if (w >> (uy & 31)) & 1 == 1 { 7 } else { 9 },
                (ux ^ uy).count_ones(),
                (w | 0x8000_0000).trailing_zeros(),
                ((w & (1u32 << (ux & 31))) != 0) as u32,
            ];
            assert_eq!(&bits[4 * i..4 * i + 4], &want_bits, "item {i}: bits of {x}, {y}");
            let (p, q) = (f[2 * i], f[2 * i + 1]);
            let rtz = |x: f32| {
                // Toward zero: the nearest half not larger in magnitude (infinity only for
                // infinities; overflow saturates to the largest half).
                let h = half_rne(x);
                if half_f(h).abs() > (x as f64).abs() { h - 1 } else { h }
            };
            assert_eq!(
                packed[i],
                rtz(p) as u32 | (rtz(q) as u32) << 16,
                "item {i}: pack {p}, {q}"
            );
            let hp = half_f(half_rne(p)) as f32;
            assert_eq!(back[2 * i], hp, "item {i}: {p} through half");
            assert_eq!(back[2 * i + 1], half_f(rtz(q)) as f32 + hp, "item {i}");
        }
    });
}

/// An f16 bit pattern as f64.
fn half_f(h: u16) -> f64 {
    let (s, e, m) = ((h >> 15) as i32, ((h >> 10) & 0x1f) as i32, (h & 0x3ff) as f64);
    let v = match e {
        0 => m * 2f64.powi(-24),
        31 if m == 0.0 => f64::INFINITY,
        31 => f64::NAN,
        _ => (1.0 + m / 1024.0) * 2f64.powi(e - 15),
    };
    if s == 1 { -v } else { v }
}

#[test]
fn sixty_four_bit_integers_and_rounding_builtins() {
    for (level, (target, elf)) in kernel!("mix64").into_iter().enumerate() {
        let (_p, dev) = device(target);
        let prg = Program::load(&dev, elf, "mix64").unwrap();
        let n = 300;
        let r = rand_u32(4 * n, 23);
        let mut a: Vec<u64> = (0..n).map(|i| (r[4 * i] as u64) << 32 | r[4 * i + 1] as u64).collect();
        // Some small dividends and divisors too.
        let b: Vec<u64> = (0..n)
            .map(|i| {
                let v = (r[4 * i + 2] as u64) << 32 | r[4 * i + 3] as u64;
                if i % 3 == 0 { v >> 40 } else { v }
            })
            .collect();
        for v in a.iter_mut().step_by(5) {
            *v >>= 33;
        }
        let words = |v: &[u64]| {
            v.iter()
                .flat_map(|x| [*x as u32, (x >> 32) as u32])
                .collect::<Vec<u32>>()
        };
        let (ba, bb) = (upload(&dev, &words(&a)), upload(&dev, &words(&b)));
        let (out, fout) = (upload(&dev, &vec![0; 16 * n]), upload(&dev, &vec![0; 4 * n]));
        prg.launch_timed(&[&ba, &bb, &out, &fout], &[n as u32], groups(n))
            .explained();
        let got: Vec<u64> = download(&dev, &out, 16 * n)
            .chunks(2)
            .map(|p| p[0] as u64 | (p[1] as u64) << 32)
            .collect();
        let fgot: Vec<f32> = download(&dev, &fout, 4 * n).into_iter().map(f32::from_bits).collect();
        for i in 0..n {
            let (x, y) = (a[i], b[i] | 1);
            let (sx, sy) = (x as i64, (y >> 1) as i64 - (1i64 << 40));
            let d = sy | 1;
            let want = [
                x / y,
                x % y,
                sx.wrapping_div(d) as u64,
                sx.wrapping_rem(d) as u64,
                x.rotate_left((y & 63) as u32),
                (x | 1).leading_zeros() as u64
                    | (y.count_ones() as u64) << 16
                    | ((x | 1 << 63).trailing_zeros() as u64) << 32,
                x.wrapping_mul(y).wrapping_add(x >> 3),
                (if sx < 0 { sx.wrapping_neg() } else { sx }) as u64 ^ sx.min(sy) as u64 ^ x.max(y),
            ];
            assert_eq!(
                &got[8 * i..8 * i + 8],
                &want,
                "level {level}, item {i}: x {x:#x} y {y:#x}"
            );
            let f = sx as f32 * 1e-12;
            let fwant = [
                x as f32,
                f.abs().copysign(sy as f32),
                f.round_ties_even() + f.trunc() * 2.0 + f.ceil() * 4.0 + f.floor() * 8.0,
                f.min(sy as f32) + f.max(0.5),
            ];
            assert_eq!(&fgot[4 * i..4 * i + 4], &fwant, "item {i}: f {f}");
        }
    }
}

#[test]
fn saturating_arithmetic_and_float_clamps() {
    for_each_build(&kernel!("sat"), "sat", |dev, prg| {
        let n = 300;
        let r = rand_u32(2 * n, 24);
        let a: Vec<f32> = (0..n).map(|i| (r[i] % 2000) as f32 / 250.0 - 4.0).collect();
        // Large and small values, so that sums and differences saturate both ways.
        let b: Vec<u32> = (0..n)
            .map(|i| if i % 2 == 0 { r[n + i] } else { r[n + i] >> 20 })
            .collect();
        let ba = upload(dev, &a.iter().map(|x| x.to_bits()).collect::<Vec<_>>());
        let (bb, fout, out) = (
            upload(dev, &b),
            upload(dev, &vec![0; 2 * n]),
            upload(dev, &vec![0; 4 * n]),
        );
        prg.launch_timed(&[&ba, &bb, &fout, &out], &[n as u32], groups(n))
            .explained();
        let fgot: Vec<f32> = download(dev, &fout, 2 * n).into_iter().map(f32::from_bits).collect();
        let got = download(dev, &out, 4 * n);
        for i in 0..n {
            let x = a[i];
            let fwant = [x.mul_add(0.25, 0.5).clamp(0.0, 1.0), (x - 0.75).clamp(0.0, 1.0)];
            assert_eq!(&fgot[2 * i..2 * i + 2], &fwant, "item {i}: x {x}");
            let (y, z) = (b[i], b[(i + 1) % n]);
            let want = [
                y.saturating_add(z),
                y.saturating_sub(z),
                (y as i32).saturating_add(z as i32) as u32,
                (y as i32).saturating_sub(z as i32) as u32,
            ];
            assert_eq!(&got[4 * i..4 * i + 4], &want, "item {i}: {y:#x} {z:#x}");
        }
    });
}

#[test]
fn wmma_matrix_multiply_accumulate() {
    for_each_build(&kernel!(rdna "wmma"), "wmma", |dev, prg| {
        wmma_multiplies(dev, prg, 32, 25)
    });
}

/// Runs a one-wave WMMA kernel (`wmma`, `wmma64`: A, B in halves, C in floats, C = A ·
/// B + C) of `lanes` lanes on random small integers (every product and sum exact in
/// f16 inputs and f32 results) and checks C.
fn wmma_multiplies(dev: &Device, prg: &Program, lanes: u32, seed: u32) {
    let r = rand_u32(3 * 256, seed);
    let a: Vec<f32> = r[..256].iter().map(|&v| (v % 9) as f32 - 4.0).collect();
    let b: Vec<f32> = r[256..512].iter().map(|&v| (v % 7) as f32 - 3.0).collect();
    let c0: Vec<f32> = r[512..].iter().map(|&v| (v % 100) as f32).collect();
    let halves = |v: &[f32]| -> Vec<u32> {
        let h: Vec<u16> = v.iter().map(|&x| f32_to_half_exact(x)).collect();
        h.chunks(2).map(|p| p[0] as u32 | (p[1] as u32) << 16).collect()
    };
    let (ba, bb) = (upload(dev, &halves(&a)), upload(dev, &halves(&b)));
    let bc = upload(dev, &c0.iter().map(|x| x.to_bits()).collect::<Vec<_>>());
    let dims = LaunchDims {
        global: [1, 1, 1],
        local: [lanes, 1, 1],
    };
    prg.launch_timed(&[&ba, &bb, &bc], &[], dims).explained();
    let got: Vec<f32> = download(dev, &bc, 256).into_iter().map(f32::from_bits).collect();
    for row in 0..16 {
        for col in 0..16 {
            let want = c0[row * 16 + col] + (0..16).map(|k| a[row * 16 + k] * b[k * 16 + col]).sum::<f32>();
            assert_eq!(got[row * 16 + col], want, "C[{row}][{col}]");
        }
    }
}

/// The WMMA benchmark kernel (`cargo xtask bench interp matrix`): four independent
/// chains of WMMAs per one-wave workgroup, here 3 workgroups × 5 iterations on small
/// integers, so that every sum is exact and the Rust reference is bit for bit.
#[test]
fn matrix_benchmark_kernel_chains_four_wmmas() {
    for_each_build(&kernel!(rdna "matrix"), "matrix", |dev, prg| {
        let r = rand_u32(5 * 256, 26);
        let a: Vec<f32> = r[..1024].iter().map(|&v| (v % 5) as f32 - 2.0).collect();
        let b: Vec<f32> = r[1024..].iter().map(|&v| (v % 3) as f32 - 1.0).collect();
        let halves = |v: &[f32]| -> Vec<u32> {
            let h: Vec<u16> = v.iter().map(|&x| f32_to_half_exact(x)).collect();
            h.chunks(2).map(|p| p[0] as u32 | (p[1] as u32) << 16).collect()
        };
        let (groups, iters) = (3usize, 5u32);
        let (ba, bb) = (upload(dev, &halves(&a)), upload(dev, &halves(&b)));
        let bc = upload(dev, &vec![0xdead_beef; 1024 * groups]);
        let dims = LaunchDims {
            global: [groups as u32, 1, 1],
            local: [32, 1, 1],
        };
        prg.launch_timed(&[&ba, &bb, &bc], &[iters], dims).explained();
        let got: Vec<f32> = download(dev, &bc, 1024 * groups)
            .into_iter()
            .map(f32::from_bits)
            .collect();
        for g in 0..groups {
            for m in 0..4 {
                for row in 0..16 {
                    for col in 0..16 {
                        let ab: f32 = (0..16).map(|k| a[m * 256 + row * 16 + k] * b[k * 16 + col]).sum();
                        let want = ab * iters as f32;
                        assert_eq!(
                            got[g * 1024 + m * 256 + row * 16 + col],
                            want,
                            "group {g} chain {m} C[{row}][{col}]"
                        );
                    }
                }
            }
        }
    });
}

#[test]
fn scalar_arguments_of_every_size() {
    for_each_build(&kernel!("args"), "args", |dev, prg| {
        let out = upload(dev, &[0; 10]);
        let (a, d) = (0x0123_4567_89ab_cdefu64, -1.25e300f64);
        let db = d.to_bits();
        let vals = [
            a as u32,
            (a >> 32) as u32,
            db as u32,
            (db >> 32) as u32,
            0xdead_beef,
            0xfff6,
            200,
        ];
        let dims = LaunchDims {
            global: [1, 1, 1],
            local: [32, 1, 1],
        };
        prg.launch_timed(&[&out], &vals, dims).explained();
        let got: Vec<u64> = download(dev, &out, 10)
            .chunks(2)
            .map(|p| p[0] as u64 | (p[1] as u64) << 32)
            .collect();
        assert_eq!(got, [a, (d * 2.0).to_bits(), 0xdead_beef, -10i64 as u64, 200]);
        // A word too wide for its 1-byte argument, and a missing word, are refused.
        let mut bad = vals;
        bad[6] = 300;
        assert!(prg.launch_timed(&[&out], &bad, dims).is_err());
        assert!(prg.launch_timed(&[&out], &vals[..6], dims).is_err());
    });
}

/// HIP's `assert` and `__builtin_trap` (`s_trap 2`): a launch where no lane traps
/// runs; one lane's trap stops the dispatch, and the error names the instruction.
#[test]
fn a_trap_stops_the_dispatch_naming_it() {
    for_each_build(&kernel!("trap"), "trap", |dev, prg| {
        let n = 1000;
        // Never 0xdead (its low nibble is not 0).
        let mut input: Vec<u32> = rand_u32(n, 61).iter().map(|v| v & 0xfff0).collect();
        let out = upload(dev, &vec![0u32; n]);
        prg.launch_timed(&[&upload(dev, &input), &out], &[n as u32], groups(n))
            .explained();
        let want: Vec<u32> = input.iter().map(|v| v + 1).collect();
        assert_eq!(download(dev, &out, n), want);
        input[777] = 0xdead;
        let e = prg
            .launch_timed(&[&upload(dev, &input), &out], &[n as u32], groups(n))
            .expect_err("the trap stops the dispatch");
        let text = format!("{e}");
        assert!(text.contains("s_trap 2") && text.contains("raised a trap"), "{text}");
    });
}

/// gfx9's clocks (HIP's `clock64()` and `wall_clock64()` on gfx942): each reading after
/// a loop is at least the one before it, in every workgroup.
#[test]
fn the_clocks_move_forward() {
    for_each_build(&kernel!(in "gfx942" for "gfx942" "clocks"), "clocks", |dev, prg| {
        let wgs = 4;
        let out = upload(dev, &vec![0u32; 10 * wgs]);
        prg.launch_timed(&[&out], &[20_000], groups(256 * wgs)).explained();
        let got = download(dev, &out, 10 * wgs);
        let at = |k: usize| u64::from(got[2 * k]) | u64::from(got[2 * k + 1]) << 32;
        for g in 0..wgs {
            let [t0, t1, r0, r1] = [0, 1, 2, 3].map(|k| at(5 * g + k));
            assert!(t0 <= t1 && r0 <= r1, "workgroup {g}: {t0} {t1} {r0} {r1}");
            // The loop ran (its result is the workgroup's own).
            let mut acc = g as u32;
            for _ in 0..20_000 {
                acc = acc.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            }
            assert_eq!(at(5 * g + 4) as u32, acc);
        }
        assert!(at(5 * (wgs - 1) + 1) > 0, "the clock counts");
    });
}

/// gfx942's sparse matrix instructions through the whole stack (`smfmac.cl`, -O2 and
/// -O0): each lane's registers laid out as AMD's matrix instruction calculator gives
/// them for `v_smfmac_f32_16x16x32_f16` and `v_smfmac_i32_16x16x64_i8` (A 16 × K with
/// two of every four k stored, a 4-bit index per group, B K × 16, D 16 × 16), D against
/// the dense product of the A the indices describe.
#[test]
fn sparse_matrix_products() {
    let (_p, dev) = device("gfx942");
    let mut rng = rand_u32(1 << 16, 71).into_iter();
    let mut next = move || rng.next().expect("enough random words");
    for (_, elf) in kernel!(in "gfx942" for "gfx942" "smfmac") {
        // (kernel, K, element bits; A's pair: register, lane, bit of row 0's group g;
        // the index's bit; B's register, lane, bit of column 0's k)
        type Place = fn(usize) -> (usize, usize, u32);
        let forms: [(&str, usize, u32, Place, Place, Place); 2] = [
            (
                "smfmac_f16",
                32,
                16,
                |g| (g % 2, 16 * (g / 2), 0),
                |g| (0, 16 * (g / 2), 4 * (g % 2) as u32),
                |k| ((k / 2) % 4, 16 * (k / 8), 16 * (k % 2) as u32),
            ),
            (
                "smfmac_i8",
                64,
                8,
                |g| ((g / 2) % 2, 16 * (g / 4), 16 * (g % 2) as u32),
                |g| (0, 16 * (g / 4), 4 * (g % 4) as u32),
                |k| ((k / 4) % 4, 16 * (k / 16), 8 * (k % 4) as u32),
            ),
        ];
        for (name, k, bits, a_at, i_at, b_at) in forms {
            let prg = Program::load(&dev, elf, name).unwrap();
            let small = |v: u32| (v % 7) as i32 - 3;
            let raw = |x: i32| -> u32 {
                if bits == 16 {
                    u32::from(half_bits(x))
                } else {
                    x as u8 as u32
                }
            };
            let (mut a, mut b, mut idx) = (vec![0u32; 128], vec![0u32; 256], vec![0u32; 64]);
            let mut dense = vec![0i32; 16 * k];
            for i in 0..16 {
                for g in 0..k / 4 {
                    let first = next() % 4;
                    let second = (first + 1 + next() % 3) % 4;
                    let (ir, il, ib) = i_at(g);
                    assert_eq!(ir, 0);
                    idx[il + i] |= (first | second << 2) << ib;
                    let (ar, al, ab) = a_at(g);
                    for (v, pos) in [first, second].into_iter().enumerate() {
                        let x = small(next());
                        dense[i * k + 4 * g + pos as usize] = x;
                        a[2 * (al + i) + ar] |= raw(x) << (ab + bits * v as u32);
                    }
                }
            }
            let mut bv = vec![0i32; k * 16];
            for kk in 0..k {
                for j in 0..16 {
                    let x = small(next());
                    bv[kk * 16 + j] = x;
                    let (br, bl, bb) = b_at(kk);
                    b[4 * (bl + j) + br] |= raw(x) << bb;
                }
            }
            // C and D: element (i, j) in register i % 4 of lane 16 (i / 4) + j.
            let at = |i: usize, j: usize| 4 * (16 * (i / 4) + j) + i % 4;
            let mut c = vec![0u32; 256];
            let mut want = vec![0i32; 256];
            for i in 0..16 {
                for j in 0..16 {
                    let cv = small(next());
                    let dot: i32 = (0..k).map(|kk| dense[i * k + kk] * bv[kk * 16 + j]).sum();
                    c[at(i, j)] = if bits == 16 { (cv as f32).to_bits() } else { cv as u32 };
                    want[at(i, j)] = dot + cv;
                }
            }
            let bufs = [
                upload(&dev, &a),
                upload(&dev, &b),
                upload(&dev, &c),
                upload(&dev, &idx),
                upload(&dev, &vec![0u32; 256]),
            ];
            let dims = LaunchDims {
                global: [1, 1, 1],
                local: [64, 1, 1],
            };
            prg.launch_timed(&bufs.iter().collect::<Vec<_>>(), &[], dims)
                .explained();
            let got = download(&dev, &bufs[4], 256);
            for (n, (&g, &w)) in got.iter().zip(&want).enumerate() {
                let got = if bits == 16 { f32::from_bits(g) as i32 } else { g as i32 };
                assert_eq!(got, w, "{name}: D word {n}");
            }
        }
    }
}

/// `x` (a small integer) as an f16's bits.
fn half_bits(x: i32) -> u16 {
    let f = x as f32;
    if f == 0.0 {
        return 0;
    }
    let bits = f.to_bits();
    let sign = (bits >> 16) as u16 & 0x8000;
    let exp = ((bits >> 23) & 0xff) as i32 - 127 + 15;
    sign | (exp as u16) << 10 | ((bits >> 13) & 0x3ff) as u16
}

/// gfx11's WMMA in a wave64 (`wmma64.cl`, `__builtin_amdgcn_wmma_f32_16x16x16_f16_w64`,
/// -O2 and -O0): C = A · B + C0 with C laid out as AMD's calculator gives it for 64
/// lanes, on small integers (exact in f16 inputs and f32 results).
#[test]
fn wmma_in_a_wave64() {
    let mut builds = kernel!(in "wave64" for "gfx1100" "wmma64").to_vec();
    builds.extend(kernel!(in "gfx1201/wave64" for "gfx1201" "wmma64"));
    for_each_build(&builds, "wmma64", |dev, prg| {
        assert!(prg.wave64());
        wmma_multiplies(dev, prg, 64, 27);
    });
}
