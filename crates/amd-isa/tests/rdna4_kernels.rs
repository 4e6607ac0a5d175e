//! The same OpenCL kernels, built for gfx1100 and for gfx1201 (`tests/kernels/` and
//! `tests/kernels/gfx1201/`), give the same bytes on the RDNA3 and the RDNA4
//! interpreter, at -O2 and at -O0; and their gfx1100 wave64 builds
//! (`tests/kernels/wave64/`) give the bytes of the wave32 ones, as waves of 64 lanes;
//! and their gfx942 builds (`tests/kernels/gfx942/`) give them on the CDNA3
//! interpreter, but for the few it does not run yet.

use amd_isa::{Dispatch, SliceMemory, cdna3, rdna3, rdna4};

/// The interpreter a code object runs on.
#[derive(Clone, Copy, PartialEq)]
enum Gen {
    Rdna3,
    Rdna4,
    Cdna3,
}

/// Reads a little-endian integer of `N` bytes at `at`.
fn le<const N: usize>(b: &[u8], at: usize) -> u64 {
    let mut v = [0u8; 8];
    v[..N].copy_from_slice(&b[at..at + N]);
    u64::from_le_bytes(v)
}

/// A code object's loadable image (its PT_LOAD segments at their addresses from 0)
/// and the address of kernel `name`'s descriptor (`name.kd` in the symbol table).
fn load(elf: &[u8], name: &str) -> (Vec<u8>, usize) {
    assert_eq!(&elf[..4], b"\x7fELF", "an ELF file");
    let (phoff, shoff) = (le::<8>(elf, 0x20) as usize, le::<8>(elf, 0x28) as usize);
    let (phnum, shnum) = (le::<2>(elf, 0x38) as usize, le::<2>(elf, 0x3c) as usize);
    let mut image = Vec::new();
    for k in 0..phnum {
        let ph = phoff + k * 56;
        if le::<4>(elf, ph) != 1 {
            continue; // PT_LOAD only
        }
        let (off, va, filesz, memsz) = (
            le::<8>(elf, ph + 8) as usize,
            le::<8>(elf, ph + 16) as usize,
            le::<8>(elf, ph + 32) as usize,
            le::<8>(elf, ph + 40) as usize,
        );
        if image.len() < va + memsz {
            image.resize(va + memsz, 0);
        }
        image[va..va + filesz].copy_from_slice(&elf[off..off + filesz]);
    }
    // The symbol tables (SHT_SYMTAB 2, SHT_DYNSYM 11) and their string tables.
    let section = |k: usize| shoff + k * 64;
    let want = format!("{name}.kd");
    for k in 0..shnum {
        let sh = section(k);
        if !matches!(le::<4>(elf, sh + 4), 2 | 11) {
            continue;
        }
        let (off, size) = (le::<8>(elf, sh + 24) as usize, le::<8>(elf, sh + 32) as usize);
        let strtab = section(le::<4>(elf, sh + 40) as usize);
        let stroff = le::<8>(elf, strtab + 24) as usize;
        for s in (off..off + size).step_by(24) {
            let at = stroff + le::<4>(elf, s) as usize;
            let end = at + elf[at..].iter().position(|&c| c == 0).expect("a string");
            if elf[at..end] == *want.as_bytes() {
                return (image, le::<8>(elf, s + 8) as usize);
            }
        }
    }
    panic!("no symbol {want}");
}

/// A kernel argument.
#[derive(Clone)]
enum Arg {
    /// A buffer with these contents (its address is the argument).
    Buffer(Vec<u8>),
    /// A 32-bit value.
    U32(u32),
}

const CODE: u64 = 0x1000_0000;
const KERNARG: u64 = 0x2000_0000;
const BUFFERS: u64 = 0x3000_0000;
const PACKET: u64 = 0x2800_0000;

/// Runs kernel `name` of code object `elf` over `groups` workgroups of `block`, and
/// returns the buffers as the kernel left them.
fn run(
    elf: &[u8],
    name: &str,
    args: &[Arg],
    groups: [u32; 3],
    block: [u32; 3],
    generation: Gen,
) -> Result<Vec<Vec<u8>>, String> {
    let (mut image, kd) = load(elf, name);
    let desc: Vec<u8> = image[kd..kd + 64].to_vec();
    let entry = (kd as i64 + le::<8>(&desc, 0x10) as i64) as u64;
    let properties = le::<2>(&desc, 0x38);
    let mut buffers: Vec<Vec<u8>> = Vec::new();
    let mut kernarg = vec![0u8; 512];
    let mut at = 0usize;
    for a in args {
        match a {
            Arg::Buffer(b) => {
                at = at.next_multiple_of(8);
                let addr = BUFFERS + (buffers.len() as u64) * 0x100_0000;
                kernarg[at..at + 8].copy_from_slice(&addr.to_le_bytes());
                buffers.push(b.clone());
                at += 8;
            }
            Arg::U32(v) => {
                at = at.next_multiple_of(4);
                kernarg[at..at + 4].copy_from_slice(&v.to_le_bytes());
                at += 4;
            }
        }
    }
    // The dispatch packet (AQL's layout): workgroup and grid sizes.
    let mut packet = vec![0u8; 64];
    for k in 0..3 {
        packet[4 + 2 * k..6 + 2 * k].copy_from_slice(&(block[k] as u16).to_le_bytes());
        packet[12 + 4 * k..16 + 4 * k].copy_from_slice(&(groups[k] * block[k]).to_le_bytes());
    }
    packet[40..48].copy_from_slice(&KERNARG.to_le_bytes());
    // The user SGPRs the descriptor enables, in their order: private segment buffer
    // (4), dispatch pointer, queue pointer, kernarg pointer, dispatch id, flat scratch
    // (2 each).
    let mut user: Vec<u32> = Vec::new();
    for (bit, value) in [
        (0, None),
        (1, Some(PACKET)),
        (2, Some(0)),
        (3, Some(KERNARG)),
        (4, Some(0)),
        (5, Some(0)),
    ] {
        if properties >> bit & 1 == 0 {
            continue;
        }
        match value {
            Some(v) => user.extend([v as u32, (v >> 32) as u32]),
            None => user.extend([0; 4]),
        }
    }
    assert!(properties >> 6 & 1 == 0, "{name}: no private segment size SGPR here");
    let mut user_data = [0u32; 16];
    user_data[..user.len()].copy_from_slice(&user);
    // RSRC2.LDS_SIZE, which the command processor fills in from the group segment
    // size: blocks of 512 bytes.
    let lds_blocks = (le::<4>(&desc, 0) as u32).div_ceil(512);
    let rsrc2 = le::<4>(&desc, 0x34) as u32 | lds_blocks << 15;
    let d = Dispatch {
        code_addr: CODE + entry,
        rsrc: [le::<4>(&desc, 0x30) as u32, rsrc2, le::<4>(&desc, 0x2c) as u32],
        user_data,
        block,
        grid: groups,
        // A descriptor without ENABLE_WAVEFRONT_SIZE32 is for waves of 64 lanes.
        wave64: properties >> 10 & 1 == 0,
        ..Dispatch::default()
    };
    {
        let mut mem = SliceMemory::new();
        mem.map(CODE, &mut image);
        mem.map(KERNARG, &mut kernarg);
        mem.map(PACKET, &mut packet);
        for (k, b) in buffers.iter_mut().enumerate() {
            mem.map(BUFFERS + k as u64 * 0x100_0000, b);
        }
        let r = match generation {
            Gen::Rdna3 => rdna3::Interpreter::default().dispatch(&mem, &d),
            Gen::Rdna4 => rdna4::Interpreter::default().dispatch(&mem, &d),
            Gen::Cdna3 => cdna3::Interpreter::default().dispatch(&mem, &d),
        };
        r.map_err(|e| format!("{name}: {e}"))?;
    }
    Ok(buffers)
}

fn floats(v: impl IntoIterator<Item = f32>) -> Vec<u8> {
    v.into_iter().flat_map(f32::to_le_bytes).collect()
}

fn words(v: impl IntoIterator<Item = u32>) -> Vec<u8> {
    v.into_iter().flat_map(u32::to_le_bytes).collect()
}

/// A kernel and its launch: name, arguments, workgroups, workgroup size.
type Case = (&'static str, Vec<Arg>, [u32; 3], [u32; 3]);

/// The kernels and their launches.
fn cases() -> Vec<Case> {
    use Arg::*;
    let n = 1000u32;
    let xs = floats((0..n).map(|i| i as f32 * 0.37 - 50.0));
    let ys = floats((0..n).map(|i| (i as f32).sin()));
    let us = words((0..n).map(|i| i.wrapping_mul(2_654_435_761)));
    let vs = words((0..n).map(|i| i.wrapping_mul(40_503) ^ 0x5555));
    let ds: Vec<u8> = (0..n).flat_map(|i| (i as f64 * 1.25 - 300.0).to_le_bytes()).collect();
    let es: Vec<u8> = (0..n).flat_map(|i| (i as f64).cos().to_le_bytes()).collect();
    let out = |n: u32, per: u32| vec![0u8; (n * per) as usize];
    // Halves k/4 - 4.5 (exact: normal halves' bits from the f32's).
    let half = |x: f32| -> u16 {
        let b = x.to_bits();
        if x == 0.0 {
            return (b >> 16) as u16;
        }
        ((b >> 16) & 0x8000 | (((b >> 23) & 0xff) - 112) << 10 | (b >> 13) & 0x3ff) as u16
    };
    let halves: Vec<u8> = (0..n)
        .flat_map(|i| half((i % 37) as f32 * 0.25 - 4.5).to_le_bytes())
        .collect();
    let m = 32u32;
    let a = floats((0..m * m).map(|i| (i % 7) as f32 - 3.0));
    let b = floats((0..m * m).map(|i| (i % 5) as f32 * 0.5));
    vec![
        (
            "vadd",
            vec![
                Buffer(xs.clone()),
                Buffer(ys.clone()),
                Buffer(vec![0; 4 * n as usize]),
                U32(n),
            ],
            [4, 1, 1],
            [256, 1, 1],
        ),
        (
            "saxpy",
            vec![Buffer(xs.clone()), Buffer(ys.clone()), U32(2.5f32.to_bits()), U32(n)],
            [4, 1, 1],
            [256, 1, 1],
        ),
        (
            "intmix",
            vec![
                Buffer(us.clone()),
                Buffer(vs.clone()),
                Buffer(vec![0; 32 * n as usize]),
                U32(n),
            ],
            [4, 1, 1],
            [256, 1, 1],
        ),
        (
            "matmul",
            vec![Buffer(a), Buffer(b), Buffer(vec![0; 4 * (m * m) as usize]), U32(m)],
            [2, 2, 1],
            [16, 16, 1],
        ),
        (
            "reduce_lds",
            vec![Buffer(xs.clone()), Buffer(vec![0; 16]), U32(n)],
            [4, 1, 1],
            [256, 1, 1],
        ),
        (
            "atomics",
            vec![Buffer(us.clone()), Buffer(vec![0; 256]), U32(n)],
            [4, 1, 1],
            [256, 1, 1],
        ),
        (
            "int_dots",
            vec![
                Buffer(us.clone()),
                Buffer(vs.clone()),
                Buffer(words((0..8 * n).map(|i| i.wrapping_mul(2_246_822_519) >> (i % 9)))),
                U32(n),
            ],
            [4, 1, 1],
            [256, 1, 1],
        ),
        (
            "mixed",
            vec![
                Buffer(halves.clone()),
                Buffer(halves.iter().rev().copied().collect()),
                Buffer(floats((0..3 * n).map(|i| (i % 11) as f32 * 0.125))),
                Buffer(out(n, 2)),
                U32(n),
            ],
            [4, 1, 1],
            [256, 1, 1],
        ),
        (
            "buffers",
            vec![Buffer(us.clone()), Buffer(out(n, 16)), U32(n)],
            [4, 1, 1],
            [256, 1, 1],
        ),
        (
            "scan_atomic",
            vec![Buffer(us.clone()), Buffer(out(1, 4)), Buffer(out(n, 4)), U32(n)],
            [4, 1, 1],
            [256, 1, 1],
        ),
        (
            "divergent",
            vec![Buffer(us.clone()), Buffer(out(n, 16)), U32(n)],
            [4, 1, 1],
            [256, 1, 1],
        ),
        (
            "f16scalar",
            vec![Buffer(xs.clone()), Buffer(ys.clone()), Buffer(out(n, 32)), U32(n)],
            [4, 1, 1],
            [256, 1, 1],
        ),
        (
            "f64math",
            vec![Buffer(ds.clone()), Buffer(es), Buffer(out(n, 128)), U32(n)],
            [4, 1, 1],
            [256, 1, 1],
        ),
        (
            "flat_ptrs",
            vec![Buffer(us.clone()), Buffer(out(n, 16)), U32(n)],
            [4, 1, 1],
            [256, 1, 1],
        ),
        (
            "lds_atomics",
            vec![Buffer(us.clone()), Buffer(out(n, 16)), Buffer(vec![0; 64]), U32(n)],
            [4, 1, 1],
            [256, 1, 1],
        ),
        (
            "mix64",
            vec![
                Buffer(ds.clone()),
                Buffer(vs.iter().chain(&us).copied().collect()),
                Buffer(out(n, 128)),
                Buffer(out(n, 64)),
                U32(n),
            ],
            [4, 1, 1],
            [256, 1, 1],
        ),
        (
            "private_array",
            vec![Buffer(words((0..n).map(|i| i % 13))), Buffer(out(n, 16)), U32(n)],
            [4, 1, 1],
            [256, 1, 1],
        ),
        (
            "sat",
            vec![
                Buffer(xs.clone()),
                Buffer(us.clone()),
                Buffer(out(n, 32)),
                Buffer(out(n, 32)),
                U32(n),
            ],
            [4, 1, 1],
            [256, 1, 1],
        ),
        (
            "transcend",
            vec![
                Buffer(floats((0..n).map(|i| i as f32 * 0.01 + 0.001))),
                Buffer(out(n, 64)),
                U32(n),
            ],
            [4, 1, 1],
            [256, 1, 1],
        ),
        (
            "wavereduce",
            vec![Buffer(us.clone()), Buffer(out(n, 4)), U32(n)],
            [4, 1, 1],
            [256, 1, 1],
        ),
        (
            "dpp_rows",
            vec![Buffer(us.clone()), Buffer(out(n, 4)), U32(n)],
            [4, 1, 1],
            [256, 1, 1],
        ),
        (
            "wavemax",
            vec![Buffer(us), Buffer(out(n, 4)), U32(n)],
            [4, 1, 1],
            [256, 1, 1],
        ),
        (
            "grid3d",
            vec![Buffer(out(8 * 8 * 4, 16)), U32(8), U32(8), U32(4)],
            [1, 2, 2],
            [8, 4, 2],
        ),
        ("spin", vec![Buffer(out(256, 4)), U32(20)], [1, 1, 1], [64, 1, 1]),
    ]
}

/// The committed kernels' folder.
fn kernels() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/kernels")
}

/// The code object file (-O2, or -O0 with `suffix` `_O0`) that holds kernel `name`:
/// it is named after its source file.
fn code_object(name: &str, suffix: &str) -> String {
    let source = match name {
        "wavemax" => "wavereduce",
        "private_array" => "private",
        other => other,
    };
    format!("{source}{suffix}.hsaco")
}

#[test]
fn gfx1201_kernels_compute_what_their_gfx1100_builds_do() {
    let dir = kernels();
    let mut failed = Vec::new();
    for (name, args, groups, block) in cases() {
        for suffix in ["", "_O0"] {
            let file = code_object(name, suffix);
            let gfx11 = std::fs::read(dir.join(&file)).expect("gfx1100 code object");
            let gfx12 = std::fs::read(dir.join("gfx1201").join(&file)).expect("gfx1201 code object");
            let want = run(&gfx11, name, &args, groups, block, Gen::Rdna3).unwrap();
            // The kernel wrote something (the buffers are the arguments', in order).
            let inputs = args.iter().filter_map(|a| match a {
                Arg::Buffer(b) => Some(b),
                Arg::U32(_) => None,
            });
            assert!(want.iter().zip(inputs).any(|(w, b)| w != b), "{file} wrote nothing");
            match run(&gfx12, name, &args, groups, block, Gen::Rdna4) {
                Ok(got) if got == want => {}
                Ok(_) => failed.push(format!("gfx1201 {file} differs from gfx1100")),
                Err(e) => failed.push(format!("gfx1201 {file}: {e}")),
            }
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

/// The gfx1100 and gfx1201 kernels built for wave64 compute what their wave32 builds
/// do, each on its generation's interpreter (where a result depends on the wave's size,
/// `wavereduce`'s, against what 64 lanes give).
#[test]
fn wave64_kernels_compute_what_their_wave32_builds_do() {
    let dir = kernels();
    let mut failed = Vec::new();
    let mut ran = 0;
    for (folder32, folder64, generation) in [("", "wave64", Gen::Rdna3), ("gfx1201", "gfx1201/wave64", Gen::Rdna4)] {
        for (name, args, groups, block) in cases() {
            for suffix in ["", "_O0"] {
                let file = code_object(name, suffix);
                let Ok(w32) = std::fs::read(dir.join(folder32).join(&file)) else {
                    continue; // not built for this target
                };
                let Ok(w64) = std::fs::read(dir.join(folder64).join(&file)) else {
                    continue; // wave32 only (WMMA)
                };
                let mut want = run(&w32, name, &args, groups, block, generation).unwrap();
                if name == "wavereduce" {
                    // `readlane(x, 15) + readlane(x, 31)` is the sum of lanes 0 to 31 of the
                    // wave: in a wave64, lanes 0 and 32 both store the first half's sum.
                    let sums = &mut want[1];
                    for pair in sums.chunks_mut(8) {
                        let first: [u8; 4] = pair[..4].try_into().unwrap();
                        if pair.len() == 8 {
                            pair[4..].copy_from_slice(&first);
                        }
                    }
                }
                match run(&w64, name, &args, groups, block, generation) {
                    Ok(got) if got == want => ran += 1,
                    Ok(got) => {
                        let diff: Vec<String> = got
                            .iter()
                            .zip(&want)
                            .enumerate()
                            .filter(|(_, (g, w))| g != w)
                            .map(|(k, (g, w))| {
                                let at = g.iter().zip(w.iter()).position(|(a, b)| a != b).unwrap_or(0);
                                format!("buffer {k} from byte {at}")
                            })
                            .collect();
                        failed.push(format!("{folder64} {file} differs from wave32: {}", diff.join(", ")))
                    }
                    Err(e) => failed.push(format!("{folder64} {file}: {e}")),
                }
            }
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
    assert!(ran > 80, "{ran} wave64 builds compared");
}

/// The kernels built for gfx942 (CDNA3, waves of 64 lanes) compute on the CDNA3
/// interpreter what their gfx1100 builds do on RDNA3's, at -O2 and at -O0.
#[test]
fn gfx942_kernels_compute_what_their_gfx1100_builds_do() {
    let dir = kernels();
    let (mut ran, mut failed) = (0, Vec::new());
    for (name, args, groups, block) in cases() {
        for suffix in ["", "_O0"] {
            let file = code_object(name, suffix);
            let Ok(cdna) = std::fs::read(dir.join("gfx942").join(&file)) else {
                continue; // RDNA only (WMMA, DPP8, the lane permutes)
            };
            let gfx11 = std::fs::read(dir.join(&file)).expect("gfx1100 code object");
            let want = run(&gfx11, name, &args, groups, block, Gen::Rdna3).unwrap();
            match run(&cdna, name, &args, groups, block, Gen::Cdna3) {
                Ok(got) if got == want => ran += 1,
                Ok(_) => failed.push(format!("gfx942 {file} differs from gfx1100")),
                Err(e) => failed.push(format!("gfx942 {file}: {e}")),
            }
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
    assert_eq!(ran, 44, "gfx942 builds run");
}

/// An 8-bit float format, from its definition: (mantissa bits, bias, FNUZ).
#[derive(Clone, Copy, Debug)]
struct Eight(u32, i32, bool);

impl Eight {
    /// RDNA4's (OCP's) or CDNA3's (FNUZ) FP8 or BF8.
    fn of(bf8: bool, fnuz: bool) -> Eight {
        match (bf8, fnuz) {
            (false, false) => Eight(3, 7, false),
            (true, false) => Eight(2, 15, false),
            (false, true) => Eight(3, 8, true),
            (true, true) => Eight(2, 16, true),
        }
    }

    /// The value of code `b`: FNUZ's 0x80 is its NaN; OCP's E4M3 has S.1111.111 for
    /// NaN and E5M2 IEEE's infinities and NaNs in its top exponent.
    fn value(self, b: u8) -> f64 {
        let Eight(m_bits, bias, fnuz) = self;
        let (e, m) = (u32::from(b & 0x7f) >> m_bits, u32::from(b) & ((1 << m_bits) - 1));
        let sign = if b & 0x80 != 0 { -1.0 } else { 1.0 };
        if fnuz && b == 0x80 {
            return f64::NAN;
        }
        if !fnuz && m_bits == 3 && e == 15 && m == 7 {
            return f64::NAN;
        }
        if !fnuz && m_bits == 2 && e == 31 {
            return if m == 0 { sign * f64::INFINITY } else { f64::NAN };
        }
        let (e, m) = if e == 0 { (1, m) } else { (e, m + (1 << m_bits)) };
        sign * f64::from(m) * 2f64.powi(e as i32 - bias - m_bits as i32)
    }

    /// `x` to the nearest code by search over every finite code (ties to the even
    /// code), a value past the largest by half its step or more (to the even side)
    /// overflowing: to E5M2's infinity, else to NaN; zero is +0 in FNUZ. `None` for a
    /// NaN (any NaN code is right).
    fn nearest(self, x: f32) -> Option<u8> {
        if x.is_nan() {
            return None;
        }
        let Eight(m_bits, _, fnuz) = self;
        let neg = x.is_sign_negative();
        let overflow = match (fnuz, m_bits) {
            (true, _) => 0x80,
            (false, 2) => 0x7c | if neg { 0x80 } else { 0 },
            (false, _) => {
                if neg {
                    0xff
                } else {
                    0x7f
                }
            }
        };
        if x.is_infinite() {
            return Some(overflow);
        }
        let a = f64::from(x.abs());
        let finite: Vec<u8> = (0..0x80u8).filter(|&b| self.value(b).is_finite()).collect();
        let top = *finite.last().unwrap();
        let step = self.value(top) - self.value(top - 1);
        // The first value past the largest, as though it were a code (odd after an
        // even largest, even after an odd one).
        let past = (self.value(top) + step, top.wrapping_add(1));
        if a >= past.0 {
            return Some(overflow);
        }
        let best = finite
            .iter()
            .map(|&b| (self.value(b), b))
            .chain([past])
            .min_by(|p, q| {
                let (dp, dq) = ((p.0 - a).abs(), (q.0 - a).abs());
                dp.partial_cmp(&dq).unwrap().then((p.1 & 1).cmp(&(q.1 & 1)))
            })
            .unwrap();
        Some(if best.1 == past.1 {
            overflow
        } else if best.1 == 0 && fnuz {
            0
        } else {
            best.1 | if neg { 0x80 } else { 0 }
        })
    }
}

/// The 8-bit float conversions, built for gfx1201 (OCP's formats) and gfx942 (FNUZ),
/// give what the formats' definitions say for every code in every byte and half, and
/// for f32 inputs at and between every format's values, past their largest, infinite
/// and NaN; the stochastic forms as their pseudocode (random bits added to the
/// mantissa) then the nearest code; and gfx942's FP8 matrix multiply-add (A in FP8 or
/// BF8, B in FP8) the exact products' sum rounded to f32.
#[test]
fn eight_bit_floats_in_each_generations_formats() {
    use Arg::*;
    let dir = kernels();
    // Every byte value in every byte of some word: byte j of word i is i + 85 j.
    let codes: Vec<u32> = (0..256u32)
        .map(|i| (0..4).map(|j| ((i + 85 * j) & 0xff) << (8 * j)).sum())
        .collect();
    // Every value of the four formats, the midpoints between neighbours and just off
    // them, and the edges.
    let mut xs: Vec<f32> = vec![
        0.0,
        -0.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        1e-30,
        -1e-30,
        1e30,
    ];
    for f in [(false, false), (true, false), (false, true), (true, true)].map(|(b, z)| Eight::of(b, z)) {
        let vals: Vec<f64> = (0..=255u8).map(|b| f.value(b)).filter(|v| v.is_finite()).collect();
        let mut sorted = vals.clone();
        sorted.sort_by(|a, b| a.partial_cmp(b).unwrap());
        for pair in sorted.windows(2) {
            let mid = (pair[0] + pair[1]) / 2.0;
            xs.extend([mid as f32, (mid * (1.0 + 1e-6)) as f32, (mid * (1.0 - 1e-6)) as f32]);
        }
        xs.extend(vals.iter().map(|&v| v as f32));
        let top = sorted.last().copied().unwrap();
        xs.extend([top * 1.03, top * 1.1, -top * 1.07, top * 4.0].map(|v| v as f32));
    }
    xs.truncate(xs.len() / 512 * 512);
    assert!(xs.len() >= 1024, "{} inputs", xs.len());
    let lanes = xs.len() as u32 / 2;
    let seed = 0x9e37_79b9u32;
    for (target, fnuz, generation) in [("gfx1201", false, Gen::Rdna4), ("gfx942", true, Gen::Cdna3)] {
        let (fp8, bf8) = (Eight::of(false, fnuz), Eight::of(true, fnuz));
        for suffix in ["", "_O0"] {
            let elf = std::fs::read(dir.join(target).join(format!("fp8{suffix}.hsaco"))).expect("code object");
            let what = format!("{target} fp8{suffix}");
            // To f32.
            let out = run(
                &elf,
                "fp8_to_f32",
                &[Buffer(words(codes.iter().copied())), Buffer(vec![0; 256 * 32])],
                [1, 1, 1],
                [256, 1, 1],
                generation,
            )
            .unwrap_or_else(|e| panic!("{what}: {e}"));
            let got = |k: usize| f32::from_le_bytes(out[1][4 * k..4 * k + 4].try_into().unwrap());
            for (i, &v) in codes.iter().enumerate() {
                let byte = |j: u32| (v >> (8 * j)) as u8;
                let want = [
                    fp8.value(byte(0)),
                    fp8.value(byte(1)),
                    bf8.value(byte(2)),
                    bf8.value(byte(3)),
                    fp8.value(byte(0)),
                    fp8.value(byte(1)),
                    bf8.value(byte(2)),
                    bf8.value(byte(3)),
                ];
                for (k, w) in want.iter().enumerate() {
                    let g = f64::from(got(8 * i + k));
                    assert!(
                        g == *w || (g.is_nan() && w.is_nan()),
                        "{what}: word {v:#010x}, result {k}: {g}, not {w}"
                    );
                }
            }
            // From f32.
            let out = run(
                &elf,
                "fp8_from_f32",
                &[
                    Buffer(floats(xs.iter().copied())),
                    Buffer(vec![0; xs.len() * 4]),
                    U32(seed),
                ],
                [lanes / 256, 1, 1],
                [256, 1, 1],
                generation,
            )
            .unwrap_or_else(|e| panic!("{what}: {e}"));
            let word = |k: usize| u32::from_le_bytes(out[1][4 * k..4 * k + 4].try_into().unwrap());
            // The code `f` makes of `x` is `got`: the nearest, or a NaN code for a NaN.
            let check = |f: Eight, x: f32, got: u8, what: &str| match f.nearest(x) {
                Some(want) => assert_eq!(got, want, "{what}: {x:e} ({:#010x}) to {f:?}", x.to_bits()),
                None => assert!(f.value(got).is_nan(), "{what}: NaN to {got:#04x}"),
            };
            // The stochastic forms' input: the random bits added to the mantissa,
            // wrapping within it.
            let dithered = |x: f32, r: u32| {
                let b = x.to_bits();
                f32::from_bits(b & !0x7f_ffff | (b & 0x7f_ffff).wrapping_add(r) & 0x7f_ffff)
            };
            for i in 0..lanes as usize {
                let (a, b) = (xs[2 * i], xs[2 * i + 1]);
                let (w, s) = (word(2 * i), word(2 * i + 1));
                let at = format!("{what} lane {i}");
                check(fp8, a, w as u8, &at);
                check(fp8, b, (w >> 8) as u8, &at);
                check(bf8, b, (w >> 16) as u8, &at);
                check(bf8, a, (w >> 24) as u8, &at);
                let r8 = seed.wrapping_mul(i as u32 + 1) >> 12;
                check(fp8, dithered(a, r8), s as u8, &format!("{at} (stochastic)"));
                let r5 = (seed ^ i as u32) >> 11;
                check(bf8, dithered(b, r5), (s >> 24) as u8, &format!("{at} (stochastic)"));
                assert_eq!(s >> 8 & 0xffff, 0, "{at}: bytes 1 and 2 kept");
            }
        }
    }
    // gfx942's FP8 matrix multiply-add: random finite codes, C of small integers.
    let mut x = 0x1234_5678u32;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        x
    };
    let finite = |b: u8| if b == 0x80 { 0 } else { b };
    let a: Vec<u8> = (0..16 * 32).map(|_| finite(next() as u8)).collect();
    let b: Vec<u8> = (0..32 * 16).map(|_| finite(next() as u8)).collect();
    let c: Vec<f32> = (0..16 * 16).map(|_| (next() % 64) as f32 - 32.0).collect();
    for suffix in ["", "_O0"] {
        let elf = std::fs::read(dir.join("gfx942").join(format!("fp8{suffix}.hsaco"))).expect("code object");
        for bf8_a in [false, true] {
            let out = run(
                &elf,
                "mfma_fp8",
                &[
                    Buffer(a.clone()),
                    Buffer(b.clone()),
                    Buffer(floats(c.iter().copied())),
                    Buffer(vec![0; 16 * 16 * 4]),
                    U32(u32::from(bf8_a)),
                ],
                [1, 1, 1],
                [64, 1, 1],
                Gen::Cdna3,
            )
            .unwrap_or_else(|e| panic!("mfma_fp8{suffix}: {e}"));
            let (fa, fb) = (Eight::of(bf8_a, true), Eight::of(false, true));
            for r in 0..16 {
                for col in 0..16 {
                    let dot: f64 = (0..32)
                        .map(|k| fa.value(a[r * 32 + k]) * fb.value(b[k * 16 + col]))
                        .sum();
                    let want = (dot + f64::from(c[r * 16 + col])) as f32;
                    let k = 4 * (r * 16 + col);
                    let got = f32::from_le_bytes(out[3][k..k + 4].try_into().unwrap());
                    assert_eq!(got, want, "mfma_fp8{suffix} (A in BF8: {bf8_a}): D[{r}][{col}]");
                }
            }
        }
    }
}
