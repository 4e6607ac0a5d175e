//! Kernels at the edges of IEEE arithmetic, run through the whole runtime on the mock
//! GPU's RDNA3 interpreter and compared bit for bit with references computed on the
//! host (whose floating-point environment stays the default): correctly rounded
//! division at the range limits, the four rounding modes, and f16/f64 denormal
//! flushing.

mod common;

use std::sync::Arc;

use amd_hcq::{Buffer, Device, Iface, LaunchDims, Platform, Program};
use amd_mockgpu::{MockConfig, MockSys};
use common::{download, rand_u32, stop_reasons, upload};

fn device(target: &str) -> (Arc<MockSys>, Platform, Device) {
    let m = Arc::new(MockSys::new(MockConfig::named(target, 1).expect("a mock profile")));
    let p = Platform::with_sys(m.clone(), Iface::Mock).unwrap();
    let d = p.device(0).unwrap();
    (m, p, d)
}

/// Launches `prg` and, when it fails, says why the mock stopped its queues.
fn launch(m: &MockSys, prg: &Program, bufs: &[&Buffer], scalars: &[u32], n: usize) {
    let dims = LaunchDims {
        global: [n.div_ceil(256) as u32, 1, 1],
        local: [256, 1, 1],
    };
    if let Err(e) = prg.launch_timed(bufs, scalars, dims) {
        panic!("{e:?}; the mock's queues stopped with: {:?}", stop_reasons(m));
    }
}

fn words64(v: &[f64]) -> Vec<u32> {
    v.iter()
        .flat_map(|x| [x.to_bits() as u32, (x.to_bits() >> 32) as u32])
        .collect()
}

fn pairs64(words: &[u32]) -> Vec<u64> {
    words
        .chunks(2)
        .map(|p| u64::from(p[0]) | u64::from(p[1]) << 32)
        .collect()
}

/// `values` and their negations.
fn with_negations<T: Copy + std::ops::Neg<Output = T>>(values: impl IntoIterator<Item = T>) -> Vec<T> {
    values.into_iter().flat_map(|x| [x, -x]).collect()
}

/// Puts every ordered pair of `values` at the start of `a` and `b`.
fn place_pairs<T: Copy>(values: &[T], a: &mut [T], b: &mut [T]) {
    for (k, (x, y)) in values
        .iter()
        .flat_map(|x| values.iter().map(move |y| (*x, *y)))
        .enumerate()
    {
        (a[k], b[k]) = (x, y);
    }
}

/// Correctly rounded division, f32 and f64, at the range limits: `fdiv_exact` is built
/// with `-cl-fp32-correctly-rounded-divide-sqrt`, so both divide with LLVM's
/// `v_div_scale` → `v_rcp` → `v_fma` refinements → `v_div_fmas` → `v_div_fixup`
/// sequence (its listing shows it; the plain `fdiv` kernel's f32 `/` is a 2.5-ulp
/// `v_rcp` product). Every quotient must be the host's, bit for bit, NaNs included:
/// every pair of edge values (zeros, the least and largest denormals, the least
/// normal, the largest finite values, powers of two far apart — exponent gaps past 96 /
/// 768 —, infinities, NaN, both signs), so quotients that overflow, underflow to
/// denormals or zero, and tiny numerators, then random bit patterns of every exponent.
#[test]
fn correctly_rounded_division_at_the_range_limits() {
    let edges32: Vec<f32> = with_negations([
        0.0,
        1.0,
        3.0,
        0.1,
        1e-45,
        1e-40,
        f32::from_bits(0x007f_ffff),
        f32::MIN_POSITIVE,
        f32::MAX,
        2f32.powi(127),
        2f32.powi(-100),
        2f32.powi(100),
        1.5 * 2f32.powi(-120),
        7.0e-30,
        f32::INFINITY,
        f32::NAN,
    ]);
    let edges64: Vec<f64> = with_negations([
        0.0,
        1.0,
        3.0,
        0.1,
        5e-324,
        1e-310,
        f64::from_bits(0x000f_ffff_ffff_ffff),
        f64::MIN_POSITIVE,
        f64::MAX,
        2f64.powi(1023),
        2f64.powi(-1000),
        2f64.powi(1000),
        1.5 * 2f64.powi(-1020),
        7.0e-300,
        f64::INFINITY,
        f64::NAN,
    ]);
    let pairs = edges32.len() * edges32.len();
    let n = pairs + 2000;
    let r = rand_u32(8 * n, 77);
    let mut a: Vec<f32> = (0..n).map(|i| f32::from_bits(r[i])).collect();
    let mut b: Vec<f32> = (0..n).map(|i| f32::from_bits(r[n + i])).collect();
    let mut da: Vec<f64> = (0..n)
        .map(|i| f64::from_bits(u64::from(r[2 * n + i]) | u64::from(r[3 * n + i]) << 32))
        .collect();
    let mut db: Vec<f64> = (0..n)
        .map(|i| f64::from_bits(u64::from(r[4 * n + i]) | u64::from(r[5 * n + i]) << 32))
        .collect();
    place_pairs(&edges32, &mut a, &mut b);
    place_pairs(&edges64, &mut da, &mut db);
    // Random operands of nearby exponents too (quotients near 1, rounding near ties).
    for i in pairs..pairs + 500 {
        b[i] = f32::from_bits(a[i].to_bits() ^ (r[6 * n + i] & 0x807f_ffff));
        db[i] = f64::from_bits(
            da[i].to_bits() ^ (u64::from(r[6 * n + i]) << 32 | u64::from(r[7 * n + i])) & 0x800f_ffff_ffff_ffff,
        );
    }
    for (target, elf) in kernel!("fdiv_exact") {
        let (m, _p, dev) = device(target);
        let prg = Program::load(&dev, elf, "fdiv_exact").unwrap();
        let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        let (ba, bb) = (upload(&dev, &bits(&a)), upload(&dev, &bits(&b)));
        let (bda, bdb) = (upload(&dev, &words64(&da)), upload(&dev, &words64(&db)));
        let (out, dout) = (upload(&dev, &vec![0; n]), upload(&dev, &vec![0; 2 * n]));
        launch(&m, &prg, &[&ba, &bb, &out, &bda, &bdb, &dout], &[n as u32], n);
        let got = download(&dev, &out, n);
        let dgot = pairs64(&download(&dev, &dout, 2 * n));
        for i in 0..n {
            assert_quotient(i, a[i], b[i], f32::from_bits(got[i]));
            assert_quotient(i, da[i], db[i], f64::from_bits(dgot[i]));
        }
    }
}

/// `got` is the host's `x / y` to the bit, NaNs included (item `i`).
fn assert_quotient<T: Float + std::ops::Div<Output = T> + std::fmt::LowerExp>(i: usize, x: T, y: T, got: T) {
    let want = x / y;
    assert_eq!(
        got.bits(),
        want.bits(),
        "item {i}: {} {x:e} / {y:e} = {want:e}, got {got:e} ({:#x}, want {:#x})",
        std::any::type_name::<T>(),
        got.bits(),
        want.bits()
    );
}

/// A rounding direction by its FLT_ROUNDS value, as `__builtin_set_flt_rounds` takes it.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Dir {
    Zero = 0,
    Nearest = 1,
    Up = 2,
    Down = 3,
}

/// Steps `r` (an f32 or f64 as `T`) one ulp up or down.
trait Float: Copy + PartialEq + PartialOrd + std::fmt::Debug {
    const MAX: Self;
    const ZERO: Self;
    fn next_up(self) -> Self;
    fn next_down(self) -> Self;
    fn neg(self) -> Self;
    fn finite(self) -> bool;
    fn bits(self) -> u64;
}

/// [`Float`] for a primitive float type whose negative zero has the bits `$neg_zero`.
macro_rules! impl_float {
    ($t:ident, $neg_zero:literal) => {
        impl Float for $t {
            const MAX: $t = $t::MAX;
            const ZERO: $t = 0.0;
            fn next_up(self) -> $t {
                // (`next_up` of the float types is newer than the workspace's MSRV.)
                match self.to_bits() {
                    $neg_zero | 0 => $t::from_bits(1),
                    b if self > 0.0 => $t::from_bits(b + 1),
                    b => $t::from_bits(b - 1),
                }
            }
            fn next_down(self) -> $t {
                -Float::next_up(-self)
            }
            fn neg(self) -> $t {
                -self
            }
            fn finite(self) -> bool {
                self.is_finite()
            }
            fn bits(self) -> u64 {
                u64::from(self.to_bits())
            }
        }
    };
}

impl_float!(f32, 0x8000_0000);
impl_float!(f64, 0x8000_0000_0000_0000);

/// The result in direction `dir` of an operation on finite operands, from the host's
/// correctly rounded nearest result `r` and `side`, the sign of (exact − r) (computed
/// exactly from error-free transformations): one ulp away from `r` on the exact
/// value's side when the direction asks for it; an overflow to ±infinity becomes the
/// largest finite value where the direction points back. NaN results and infinite
/// operands (a NaN `side`) give `r`.
fn directed<T: Float>(r: T, side: f64, dir: Dir) -> T {
    // NaN, or an infinite operand (which leaves `side` NaN): the same in every mode.
    #[allow(clippy::eq_op)]
    let nan = |v: T| v != v;
    if nan(r) || (!r.finite() && side.is_nan()) {
        return r;
    }
    if !r.finite() {
        let positive = r > T::ZERO;
        return match (dir, positive) {
            (Dir::Zero, true) | (Dir::Down, true) => T::MAX,
            (Dir::Zero, false) | (Dir::Up, false) => T::MAX.neg(),
            _ => r,
        };
    }
    match dir {
        Dir::Nearest => r,
        Dir::Up if side > 0.0 => r.next_up(),
        Dir::Down if side < 0.0 => r.next_down(),
        Dir::Zero if side < 0.0 && r > T::ZERO => r.next_down(),
        Dir::Zero if side > 0.0 && r < T::ZERO => r.next_up(),
        _ => r,
    }
}

/// `x + y` and its exact error (TwoSum).
fn two_sum(x: f64, y: f64) -> (f64, f64) {
    let s = x + y;
    let v = s - x;
    (s, (x - (s - v)) + (y - v))
}

/// f32 add, sub, mul and fma, the f64 → f32 and i32 → f32 conversions, and f64 add and
/// mul in each rounding mode (`rounding` sets it with `s_setreg` of MODE's round
/// fields, as `__builtin_set_flt_rounds` compiles), bit for bit against the host's
/// nearest result moved one ulp where the exact value says so.
#[test]
fn ieee_operations_in_every_rounding_mode() {
    let n = 2048;
    let r = rand_u32(8 * n, 91);
    let edges = [
        0.0f32,
        -0.0,
        1.0,
        -1.0,
        f32::MAX,
        -f32::MAX,
        f32::MIN_POSITIVE,
        1e-45,
        -1e-45,
        3.0,
        1.0 + f32::EPSILON,
        (-24f32).exp2() + (-40f32).exp2(),
    ];
    let mut a: Vec<f32> = (0..n).map(|i| f32::from_bits(r[i])).collect();
    let mut b: Vec<f32> = (0..n)
        .map(|i| {
            // Half the pairs have nearby exponents (sums that round, cancel or tie).
            if i % 2 == 0 {
                f32::from_bits(r[i] ^ (r[n + i] & 0x80ff_ffff))
            } else {
                f32::from_bits(r[n + i])
            }
        })
        .collect();
    place_pairs(&edges, &mut a, &mut b);
    // f64 operands within 2^±400, so products and their errors stay normal.
    let f64_of = |hi: u32, lo: u32| {
        let e = (hi >> 20) % 800;
        f64::from_bits(u64::from(hi & 0x800f_ffff | (e + 623) << 20) << 32 | u64::from(lo))
    };
    let da: Vec<f64> = (0..n).map(|i| f64_of(r[2 * n + i], r[3 * n + i])).collect();
    let db: Vec<f64> = (0..n).map(|i| f64_of(r[4 * n + i], r[5 * n + i])).collect();
    let ia: Vec<u32> = (0..n).map(|i| r[6 * n + i]).collect();
    for (target, elf) in kernel!("rounding") {
        let (m, _p, dev) = device(target);
        let prg = Program::load(&dev, elf, "rounding").unwrap();
        let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        let (ba, bb, bi) = (upload(&dev, &bits(&a)), upload(&dev, &bits(&b)), upload(&dev, &ia));
        let (bda, bdb) = (upload(&dev, &words64(&da)), upload(&dev, &words64(&db)));
        for dir in [Dir::Zero, Dir::Nearest, Dir::Up, Dir::Down] {
            let (out, dout) = (upload(&dev, &vec![0; 6 * n]), upload(&dev, &vec![0; 4 * n]));
            launch(
                &m,
                &prg,
                &[&ba, &bb, &out, &bda, &bdb, &dout, &bi],
                &[dir as u32, n as u32],
                n,
            );
            let got = download(&dev, &out, 6 * n);
            let dgot = pairs64(&download(&dev, &dout, 4 * n));
            for i in 0..n {
                let (x, y, z) = (a[i], b[i], b[n - 1 - i]);
                let (xd, yd, zd) = (f64::from(x), f64::from(y), f64::from(z));
                // The exact sum's side of the nearest f32: the f64 sum and its error.
                let side32 = |r: f32, (s, e): (f64, f64)| (s - f64::from(r)) + e;
                let sum = |x: f32, y: f32, r: f32| {
                    let (xd, yd) = (f64::from(x), f64::from(y));
                    if xd + yd == 0.0 && !(x == 0.0 && y == 0.0 && x.is_sign_negative() == y.is_sign_negative()) {
                        // An exact zero of opposite signs: -0 toward -infinity, else +0.
                        return if dir == Dir::Down { -0.0 } else { 0.0 };
                    }
                    directed(r, side32(r, two_sum(xd, yd)), dir)
                };
                let p = xd * yd;
                let want: [Option<f32>; 6] = [
                    Some(sum(x, y, x + y)),
                    Some(sum(x, -y, x - y)),
                    Some(directed(x * y, side32(x * y, (p, 0.0)), dir)),
                    // A zero fma result's sign is left out (exact zeros are rare here).
                    (p + zd != 0.0).then(|| directed(x.mul_add(y, z), side32(x.mul_add(y, z), two_sum(p, zd)), dir)),
                    Some(directed(da[i] as f32, da[i] - f64::from(da[i] as f32), dir)),
                    Some(directed(
                        ia[i] as i32 as f32,
                        f64::from(ia[i] as i32) - f64::from(ia[i] as i32 as f32),
                        dir,
                    )),
                ];
                for (k, w) in want.iter().enumerate() {
                    let Some(w) = w else { continue };
                    let g = f32::from_bits(got[6 * i + k]);
                    assert!(
                        g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan()),
                        "{dir:?} item {i} result {k}: {g:e} ({:#010x}), want {w:e} ({:#010x}); x {x:e} y {y:e} z {z:e} p {:e} k {}",
                        g.to_bits(),
                        w.to_bits(),
                        da[i],
                        ia[i] as i32
                    );
                }
                let (p, q) = (da[i], db[i]);
                let (s, e) = two_sum(p, q);
                let prod = p * q;
                let want64 = [directed(s, e, dir), directed(prod, p.mul_add(q, -prod), dir)];
                for (k, w) in want64.iter().enumerate() {
                    assert_eq!(
                        dgot[2 * i + k],
                        w.bits(),
                        "{dir:?} item {i} f64 result {k}: {p:e}, {q:e}, want {w:e}"
                    );
                }
            }
        }
    }
}

/// A half's value (finite halves only here).
fn half_value(h: u16) -> f64 {
    let (sign, exp, mant) = (
        if h & 0x8000 != 0 { -1.0 } else { 1.0 },
        (h >> 10) & 0x1f,
        f64::from(h & 0x3ff),
    );
    if exp == 0 {
        sign * mant * (-24f64).exp2()
    } else {
        sign * (1.0 + mant / 1024.0) * f64::from(i32::from(exp) - 15).exp2()
    }
}

/// `x` (exact in f64) rounded to the nearest half's bits, ties to even; no overflow
/// here.
fn half_bits(x: f64) -> u16 {
    let sign = if x.is_sign_negative() { 0x8000 } else { 0 };
    let a = x.abs();
    if a < (-14f64).exp2() {
        return sign | (a * 2f64.powi(24)).round_ties_even() as u16;
    }
    let e = ((a.to_bits() >> 52) & 0x7ff) as i32 - 1023;
    let q = ((a / f64::from(e).exp2() - 1.0) * 1024.0).round_ties_even() as u16;
    let (e, q) = if q == 1024 { (e + 1, 0) } else { (e, q) };
    sign | ((e + 15) as u16) << 10 | q
}

/// `denormals` is built with f16/f64 denormals flushed and f32 ones kept (its kernel
/// descriptor's FLOAT_MODE is 0x30): f64 add, mul and compare read denormal inputs as
/// signed zeros and write denormal results as signed zeros; the f64 → f32 conversion
/// flushes its f64 input and keeps its f32 result; packed f16 add and mul flush both
/// ways; f32 adds and the f32 → f64 conversion keep f32 denormals.
#[test]
fn f16_and_f64_denormals_flushed_by_the_kernel_descriptor() {
    let tiny = (-1030f64).exp2();
    let least = f64::MIN_POSITIVE;
    let operands = [
        (tiny, least),
        (tiny, tiny),
        (-tiny, 0.0),
        (least, -least / 2.0 * 3.0),
        (1.5, 5e-324),
        (least * 4.0, 0.125),
        (1e-300, 1e-10),
        (-3.0, 2.0),
    ];
    let halves = [
        (0x0001u16, 0x0400u16),
        (0x0001, 0x0001),
        (0x0400, 0x3800),
        (0x3c00, 0x8001),
        (0x0200, 0x4000),
    ];
    let floats = [1e-40f32, -1e-45, 1.0, 1e-38];
    let n = operands.len();
    let fin = |x: f64| if x.is_subnormal() { 0.0f64.copysign(x) } else { x };
    let fin16 = |h: u16| if h & 0x7c00 == 0 { h & 0x8000 } else { h };
    let da: Vec<f64> = operands.iter().flat_map(|&(p, q)| [p, q]).collect();
    let ha: Vec<u16> = (0..n)
        .flat_map(|i| [halves[i % halves.len()].0, halves[i % halves.len()].1])
        .collect();
    let fa: Vec<f32> = (0..n).map(|i| floats[i % floats.len()]).collect();
    for (target, elf) in kernel!("denormals") {
        let (m, _p, dev) = device(target);
        let prg = Program::load(&dev, elf, "denormals").unwrap();
        let hwords: Vec<u32> = ha.chunks(2).map(|c| u32::from(c[0]) | u32::from(c[1]) << 16).collect();
        let (bda, bha) = (upload(&dev, &words64(&da)), upload(&dev, &hwords));
        let bfa = upload(&dev, &fa.iter().map(|x| x.to_bits()).collect::<Vec<_>>());
        let (dout, hout, fout) = (
            upload(&dev, &vec![0; 8 * n]),
            upload(&dev, &vec![0; n]),
            upload(&dev, &vec![0; 2 * n]),
        );
        launch(&m, &prg, &[&bda, &dout, &bha, &hout, &bfa, &fout], &[n as u32], n);
        let dgot = pairs64(&download(&dev, &dout, 8 * n));
        let hgot = download(&dev, &hout, n);
        let fgot = download(&dev, &fout, 2 * n);
        for i in 0..n {
            let (p, q) = (fin(da[2 * i]), fin(da[2 * i + 1]));
            let want = [fin(p + q), fin(p * q), if p < q { 1.0 } else { 0.0 }, f64::from(fa[i])];
            for k in 0..4 {
                assert_eq!(
                    dgot[4 * i + k],
                    want[k].to_bits(),
                    "item {i} f64 result {k}: {p:e}, {q:e}, want {:e}",
                    want[k]
                );
            }
            let (h, g) = (half_value(fin16(ha[2 * i])), half_value(fin16(ha[2 * i + 1])));
            let want16 = [fin16(half_bits(h + g)), fin16(half_bits(h * g))];
            let got16 = [hgot[i] as u16, (hgot[i] >> 16) as u16];
            assert_eq!(
                got16,
                want16,
                "item {i} halves {:#06x} {:#06x}",
                ha[2 * i],
                ha[2 * i + 1]
            );
            let want32 = [(fa[i] + fa[i]).to_bits(), (p as f32).to_bits()];
            assert_eq!([fgot[2 * i], fgot[2 * i + 1]], want32, "item {i} f32 results");
        }
    }
}
