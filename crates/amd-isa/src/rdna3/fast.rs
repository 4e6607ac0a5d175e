//! The commonest vector ALU operations without modifiers, a whole wave at a time, with
//! their operands resolved when the instruction is decoded: which VGPR, which SGPR, or
//! the constant (inline or literal) every lane reads. They give the lane-by-lane
//! path's results (`exec::valu_lanes`, which handles everything else and reports the
//! errors); [`Fast::run`] declines, leaving the instruction to that path, whenever a
//! register is out of range or MODE asks for what the host's arithmetic does not do.

use super::decode::{Inst, LITERAL};
use super::exec::{LANE_BIT, Mods, R, Vop, blend, f, fma32, slow_only, vop2_only, write_lanes};
use super::fma::fma_wave;
use super::opcodes::op::{vop3, vop3sd};
use super::wave::{Bits, MODE_DENORM_F32_IN, MODE_DENORM_F32_OUT, MODE_ROUND_F32, NULL, VCC_LO, Wave, sparse};

/// A source operand as decoding resolved it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Src {
    /// A VGPR: each lane its own value.
    Vgpr(u8),
    /// An SGPR (or VCC, EXEC, M0: a slot below 128), read when the instruction runs.
    Sgpr(u8),
    /// The same value for every lane: an inline constant or the literal.
    Const(u32),
}

impl Src {
    /// Operand `n` (9-bit space) as the lane-by-lane path reads it (`Wave::vread`),
    /// when it is a register or a constant that never changes while the program runs;
    /// `None` for the rest (SCC, and operands that are errors), which that path takes.
    pub(crate) fn of(n: u16, lit: Option<u32>) -> Option<Src> {
        Some(match n {
            256..=511 => Src::Vgpr((n - 256) as u8),
            // `null` reads 0.
            124 => Src::Const(0),
            0..=127 => Src::Sgpr(n as u8),
            128..=192 => Src::Const(u32::from(n - 128)),
            193..=208 => Src::Const((-i32::from(n - 192)) as u32),
            240 => Src::Const(0.5f32.to_bits()),
            241 => Src::Const((-0.5f32).to_bits()),
            242 => Src::Const(1.0f32.to_bits()),
            243 => Src::Const((-1.0f32).to_bits()),
            244 => Src::Const(2.0f32.to_bits()),
            245 => Src::Const((-2.0f32).to_bits()),
            246 => Src::Const(4.0f32.to_bits()),
            247 => Src::Const((-4.0f32).to_bits()),
            248 => Src::Const(0x3e22_f983), // 1/(2π)
            LITERAL => Src::Const(lit?),
            _ => return None,
        })
    }

    /// The VGPR this operand reads, if it is one.
    pub(crate) fn vgpr(self) -> Option<usize> {
        match self {
            Src::Vgpr(r) => Some(usize::from(r)),
            _ => None,
        }
    }

    /// The lanes of a lane-mask operand the running pass sees (a wave64's half of an
    /// SGPR pair; a constant sign-extended to 64 bits).
    #[inline(always)]
    fn mask(self, w: &Wave) -> u32 {
        match self {
            Src::Sgpr(n) => w.s.get(usize::from(n) + w.half).copied().unwrap_or(0),
            Src::Const(k) if w.half == 1 => ((k as i32) >> 31) as u32,
            c => c.scalar(w),
        }
    }

    /// The value every lane reads, when the operand is not a VGPR.
    #[inline(always)]
    pub(crate) fn scalar(self, w: &Wave) -> u32 {
        match self {
            Src::Sgpr(n) => w.s[usize::from(n)],
            Src::Const(k) => k,
            // A VGPR has no single value; callers only ask scalars.
            Src::Vgpr(_) => 0,
        }
    }
}

/// A source's 32 values as `&[u32; 32]`: the VGPR read in place, or `$tmp` (an array
/// the caller declares and leaves uninitialised) filled with the scalar only when the
/// operand is one, so no temporary is zeroed per instruction.
macro_rules! src_in_place {
    ($src:expr, $w:expr, $tmp:ident) => {
        match $src {
            Src::Vgpr(r) => &$w.v[usize::from(r)],
            s => {
                $tmp = [s.scalar($w); 32];
                &$tmp
            }
        }
    };
}

/// `f(lane)` for every lane, as a plain loop (where `std::array::from_fn` stayed a
/// call).
#[inline(always)]
fn each(f: impl Fn(usize) -> u32) -> [u32; 32] {
    let mut r = [0u32; 32];
    for (l, o) in r.iter_mut().enumerate() {
        *o = f(l);
    }
    r
}

/// The pure lane operations, one lane's result from its S0, S1 and S2: `$then` with
/// `$g` bound to the running operation's function of `(a, b, c)`, else `$else` with
/// the operation bound to `$other`. The one table both the whole-wave path (over every
/// lane, where each arm's loop vectorizes) and the sparse path (over the live lanes)
/// read.
macro_rules! lane_op {
    ($op:expr, $g:ident => $then:expr, $other:ident => $else:expr) => {{
        use FastOp::*;
        macro_rules! arm {
            ($f:expr) => {{
                let $g = $f;
                $then
            }};
        }
        match $op {
            AddNcU32 => arm!(|a: u32, b: u32, _: u32| a.wrapping_add(b)),
            SubNcU32 => arm!(|a: u32, b: u32, _: u32| a.wrapping_sub(b)),
            SubrevNcU32 => arm!(|a: u32, b: u32, _: u32| b.wrapping_sub(a)),
            And => arm!(|a: u32, b: u32, _: u32| a & b),
            Or => arm!(|a: u32, b: u32, _: u32| a | b),
            Xor => arm!(|a: u32, b: u32, _: u32| a ^ b),
            LshlrevB32 => arm!(|a: u32, b: u32, _: u32| b << (a & 31)),
            LshrrevB32 => arm!(|a: u32, b: u32, _: u32| b >> (a & 31)),
            AshrrevI32 => arm!(|a: u32, b: u32, _: u32| ((b as i32) >> (a & 31)) as u32),
            MinU32 => arm!(|a: u32, b: u32, _: u32| a.min(b)),
            MaxU32 => arm!(|a: u32, b: u32, _: u32| a.max(b)),
            MinI32 => arm!(|a: u32, b: u32, _: u32| (a as i32).min(b as i32) as u32),
            MaxI32 => arm!(|a: u32, b: u32, _: u32| (a as i32).max(b as i32) as u32),
            MulLoU32 => arm!(|a: u32, b: u32, _: u32| a.wrapping_mul(b)),
            MulU32U24 => arm!(|a: u32, b: u32, _: u32| (a & 0xff_ffff).wrapping_mul(b & 0xff_ffff)),
            AddF32 => arm!(|a: u32, b: u32, _: u32| (f(a) + f(b)).to_bits()),
            SubF32 => arm!(|a: u32, b: u32, _: u32| (f(a) - f(b)).to_bits()),
            SubrevF32 => arm!(|a: u32, b: u32, _: u32| (f(b) - f(a)).to_bits()),
            MulF32 => arm!(|a: u32, b: u32, _: u32| (f(a) * f(b)).to_bits()),
            LshlAddU32 => arm!(|a: u32, b: u32, c: u32| (a << (b & 31)).wrapping_add(c)),
            Add3U32 => arm!(|a: u32, b: u32, c: u32| a.wrapping_add(b).wrapping_add(c)),
            LshlOrB32 => arm!(|a: u32, b: u32, c: u32| (a << (b & 31)) | c),
            BfeU32 => arm!(|a: u32, b: u32, c: u32| {
                let (off, width) = (b & 31, c & 31);
                ((u64::from(a >> off)) & ((1u64 << width) - 1)) as u32
            }),
            $other => $else,
        }
    }};
}

/// The operations [`Fast`] runs (VOP3 numbering of the ISA's names in the comments).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FastOp {
    /// `v_mov_b32`
    Mov,
    /// `v_add_nc_u32`
    AddNcU32,
    /// `v_sub_nc_u32`
    SubNcU32,
    /// `v_subrev_nc_u32`
    SubrevNcU32,
    /// `v_and_b32`
    And,
    /// `v_or_b32`
    Or,
    /// `v_xor_b32`
    Xor,
    /// `v_lshlrev_b32`
    LshlrevB32,
    /// `v_lshrrev_b32`
    LshrrevB32,
    /// `v_ashrrev_i32`
    AshrrevI32,
    /// `v_min_u32`
    MinU32,
    /// `v_max_u32`
    MaxU32,
    /// `v_min_i32`
    MinI32,
    /// `v_max_i32`
    MaxI32,
    /// `v_mul_lo_u32`
    MulLoU32,
    /// `v_mul_u32_u24`
    MulU32U24,
    /// `v_add_f32`
    AddF32,
    /// `v_sub_f32`
    SubF32,
    /// `v_subrev_f32`
    SubrevF32,
    /// `v_mul_f32`
    MulF32,
    /// `v_lshl_add_u32`
    LshlAddU32,
    /// `v_add3_u32`
    Add3U32,
    /// `v_lshl_or_b32`
    LshlOrB32,
    /// `v_bfe_u32`
    BfeU32,
    /// `v_cndmask_b32`: S2 (VCC for the VOP2 form) selects S1 over S0.
    CndmaskB32,
    /// `v_fma_f32`
    FmaF32,
    /// `v_fmac_f32`: the destination is the addend.
    FmacF32,
    /// `v_fmamk_f32`: S0 × K + S1.
    FmamkF32(u32),
    /// `v_fmaak_f32`: S0 × S1 + K.
    FmaakF32(u32),
    /// `v_lshlrev_b64`: S1 a VGPR pair.
    LshlrevB64,
    /// `v_add_co_u32`: carry out to the scalar destination.
    AddCoU32,
    /// `v_add_co_ci_u32`: carry in from S2, out to the scalar destination.
    AddCoCiU32,
}

impl FastOp {
    /// The operation of VOP3-numbered `op` and how many sources it reads.
    fn of(op: u16, lit: Option<u32>) -> Option<(FastOp, usize)> {
        use FastOp::*;
        let k = lit.unwrap_or(0);
        Some(match op {
            vop3::V_MOV_B32_E64 => (Mov, 1),
            vop3::V_FMA_F32 => (FmaF32, 3),
            vop3::V_LSHL_ADD_U32 => (LshlAddU32, 3),
            vop3::V_ADD3_U32 => (Add3U32, 3),
            vop3::V_LSHL_OR_B32 => (LshlOrB32, 3),
            vop3::V_BFE_U32 => (BfeU32, 3),
            vop3::V_ADD_NC_U32_E64 => (AddNcU32, 2),
            vop3::V_SUB_NC_U32_E64 => (SubNcU32, 2),
            vop3::V_SUBREV_NC_U32_E64 => (SubrevNcU32, 2),
            vop3::V_AND_B32_E64 => (And, 2),
            vop3::V_OR_B32_E64 => (Or, 2),
            vop3::V_XOR_B32_E64 => (Xor, 2),
            vop3::V_LSHLREV_B32_E64 => (LshlrevB32, 2),
            vop3::V_LSHRREV_B32_E64 => (LshrrevB32, 2),
            vop3::V_ASHRREV_I32_E64 => (AshrrevI32, 2),
            vop3::V_MIN_U32_E64 => (MinU32, 2),
            vop3::V_MAX_U32_E64 => (MaxU32, 2),
            vop3::V_MIN_I32_E64 => (MinI32, 2),
            vop3::V_MAX_I32_E64 => (MaxI32, 2),
            vop3::V_MUL_LO_U32 => (MulLoU32, 2),
            vop3::V_MUL_U32_U24_E64 => (MulU32U24, 2),
            vop3::V_ADD_F32_E64 => (AddF32, 2),
            vop3::V_SUB_F32_E64 => (SubF32, 2),
            vop3::V_SUBREV_F32_E64 => (SubrevF32, 2),
            vop3::V_MUL_F32_E64 => (MulF32, 2),
            vop3::V_FMAC_F32_E64 => (FmacF32, 2),
            vop2_only::V_FMAMK_F32_E32 => (FmamkF32(k), 2),
            vop2_only::V_FMAAK_F32_E32 => (FmaakF32(k), 2),
            vop3::V_CNDMASK_B32_E64 => (CndmaskB32, 2),
            vop3::V_LSHLREV_B64 => (LshlrevB64, 2),
            vop3sd::V_ADD_CO_U32 => (AddCoU32, 2),
            vop3sd::V_ADD_CO_CI_U32 => (AddCoCiU32, 2),
            _ => return None,
        })
    }

    /// Whether the operation reads S2 as a value in every lane (`v_cndmask_b32` and
    /// `v_add_co_ci_u32` read it as a lane mask).
    fn reads_s2(self) -> bool {
        use FastOp::*;
        matches!(self, LshlAddU32 | Add3U32 | LshlOrB32 | BfeU32 | FmaF32)
    }

    /// Whether the operation is f32 arithmetic, whose host results are the ISA's only
    /// when MODE keeps denormals and rounds to nearest even.
    fn float(self) -> bool {
        use FastOp::*;
        matches!(
            self,
            AddF32 | SubF32 | SubrevF32 | MulF32 | FmaF32 | FmacF32 | FmamkF32(_) | FmaakF32(_)
        )
    }
}

/// A whole-wave VALU instruction, its operands resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Fast {
    op: FastOp,
    dst: u8,
    /// The carries' destination (`v_add_co_u32`, `v_add_co_ci_u32`).
    sdst: u8,
    /// S0, S1, S2 (a source the operation does not read is `Const(0)`; S2 is
    /// `v_cndmask_b32`'s selector and `v_add_co_ci_u32`'s carry in, both scalars).
    srcs: [Src; 3],
    /// The highest VGPR the instruction reads or writes: every access is in range when
    /// the wave has more.
    top: u8,
}

impl Fast {
    /// The whole-wave form of VOP3-numbered `op` with these operands, when it has one.
    pub(crate) fn new(i: &Inst, v: Vop) -> Option<Fast> {
        let Vop { op, dst, sdst, srcs, m } = v;
        if m != Mods::NONE || dst > 255 {
            return None;
        }
        let lit = i.literal;
        let (fop, arity) = FastOp::of(op, lit)?;
        let mut s = [Src::Const(0); 3];
        for k in 0..arity {
            s[k] = Src::of(srcs[k], lit)?;
        }
        let mut top = dst;
        match fop {
            FastOp::CndmaskB32 | FastOp::AddCoCiU32 => {
                // The selector or carry in: a scalar (a VGPR takes the lane-by-lane
                // path, which reports it).
                s[2] = Src::of(srcs[2], lit).filter(|s| s.vgpr().is_none())?;
            }
            FastOp::LshlrevB64 => {
                // S1 is a VGPR pair (64-bit scalars and constants take the long path).
                top = dst + 1;
                top = top.max(s[1].vgpr()? + 1);
            }
            _ => {}
        }
        let sdst = match fop {
            // VOP3SD's scalar destination is 7 bits; VOP2's is VCC.
            FastOp::AddCoU32 | FastOp::AddCoCiU32 => u8::try_from(sdst.unwrap_or(VCC_LO)).ok().filter(|&n| n < 128)?,
            _ => 0,
        };
        for src in s {
            top = top.max(src.vgpr().unwrap_or(0));
        }
        Some(Fast {
            op: fop,
            dst: dst as u8,
            sdst,
            srcs: s,
            top: u8::try_from(top).ok()?,
        })
    }

    /// Runs the instruction on `w`: `Ok(false)`, with nothing changed, when it must
    /// take the lane-by-lane path instead (a register out of range, MODE flushing
    /// denormals or rounding other than to nearest even for f32 arithmetic).
    #[inline(always)]
    pub(crate) fn run(&self, w: &mut Wave) -> R<bool> {
        if usize::from(self.top) >= w.v.len() || slow_only() {
            return Ok(false);
        }
        // f32 operations read and write denormals as they are only when MODE keeps
        // them, and round as the host does only to nearest-even.
        let f32_denormals = MODE_DENORM_F32_IN | MODE_DENORM_F32_OUT;
        if self.op.float() && w.mode & (f32_denormals | MODE_ROUND_F32) != f32_denormals {
            return Ok(false);
        }
        let exec = w.exec();
        if exec != u32::MAX {
            // One lane on (one-lane workgroups, a loop's last lane), then a few.
            if exec & exec.wrapping_sub(1) == 0 && exec != 0 {
                self.one_lane(w, exec.trailing_zeros() as usize);
                return Ok(true);
            }
            if sparse(exec) {
                self.sparse(w, exec);
                return Ok(true);
            }
        }
        super::wide::run(WholeOp { f: self, w, exec });
        Ok(true)
    }

    /// The operation over whole registers (the lanes `exec` enables written). Inlined
    /// into each of [`super::wide::run`]'s builds.
    #[inline(always)]
    pub(crate) fn whole(&self, w: &mut Wave, exec: u32) {
        use FastOp::*;
        match self.op {
            LshlrevB64 => self.lshlrev_b64(w, exec),
            AddCoU32 | AddCoCiU32 => self.add_co(w, exec),
            _ => self.plain(w, exec),
        }
    }

    /// The operations with one 32-bit result and no other output: every lane
    /// computed (they are pure), then the lanes EXEC enables written.
    #[inline(always)]
    fn plain(&self, w: &mut Wave, exec: u32) {
        let [a, b, c] = self.srcs;
        let dst = usize::from(self.dst);
        let (at, bt, ct): ([u32; 32], [u32; 32], [u32; 32]);
        let (av, bv) = (src_in_place!(a, w, at), src_in_place!(b, w, bt));
        // S2 only where the operation reads it (else a stand-in the lane function
        // ignores).
        let cv = if self.op.reads_s2() {
            src_in_place!(c, w, ct)
        } else {
            av
        };
        let r: [u32; 32] = lane_op!(self.op, g => each(|l| g(av[l], bv[l], cv[l])), op => match op {
            Mov => *av,
            CndmaskB32 => {
                let sel = c.mask(w);
                each(|l| if sel & LANE_BIT[l] != 0 { bv[l] } else { av[l] })
            }
            // The fused multiply-adds, on the host's FMA unit where it has one.
            FmaF32 => fma_wave(av, bv, cv),
            FmacF32 => fma_wave(av, bv, &w.v[dst]),
            FmamkF32(k) => fma_wave(av, &[k; 32], bv),
            FmaakF32(k) => fma_wave(av, bv, &[k; 32]),
            // Not plain operations: `run` takes them elsewhere.
            _ => return,
        });
        write_lanes(w, dst, &r, exec);
    }

    /// Every operation with at most [`super::wave::SPARSE_LANES`] lanes on (one-lane
    /// workgroups, a loop's last lanes): those lanes alone, one at a time, read and
    /// written in place (a lane reads its sources before it writes, and no lane reads
    /// another's).
    fn sparse(&self, w: &mut Wave, exec: u32) {
        let mut carries = 0;
        for l in Bits(exec) {
            carries |= self.lane(w, l);
        }
        if matches!(self.op, FastOp::AddCoU32 | FastOp::AddCoCiU32) {
            self.write_carries(w, carries);
        }
    }

    /// [`Fast::sparse`] with lane `l` alone on (one-lane workgroups): no lane loop.
    #[inline(always)]
    fn one_lane(&self, w: &mut Wave, l: usize) {
        let carry = self.lane(w, l);
        if matches!(self.op, FastOp::AddCoU32 | FastOp::AddCoCiU32) {
            self.write_carries(w, carry);
        }
    }

    /// Lane `l` of the operation, its result written; the carry-out bit at `l` (the
    /// carrying adds; else 0).
    #[inline(always)]
    fn lane(&self, w: &mut Wave, l: usize) -> u32 {
        use FastOp::*;
        let [a, b, c] = self.srcs;
        let dst = usize::from(self.dst);
        let get = |w: &Wave, s: Src| match s {
            Src::Vgpr(r) => w.v[usize::from(r)][l],
            s => s.scalar(w),
        };
        let (x, y) = (get(w, a), get(w, b));
        let mut carry = 0;
        w.v[dst][l] = match self.op {
            LshlrevB64 => {
                let r = b.vgpr().unwrap_or(0);
                let v = (u64::from(w.v[r][l]) | u64::from(w.v[r + 1][l]) << 32) << (x & 63);
                w.v[dst + 1][l] = (v >> 32) as u32;
                v as u32
            }
            op @ (AddCoU32 | AddCoCiU32) => {
                let carry_in = if op == AddCoCiU32 { c.mask(w) >> l & 1 } else { 0 };
                let (s, o1) = x.overflowing_add(y);
                let (s, o2) = s.overflowing_add(carry_in);
                carry = u32::from(o1 | o2) << l;
                s
            }
            op => lane_op!(op, g => g(x, y, get(w, c)), op => match op {
                Mov => x,
                CndmaskB32 => if c.mask(w) & LANE_BIT[l] != 0 { y } else { x },
                FmaF32 => fma32(f(x), f(y), f(get(w, c))).to_bits(),
                FmacF32 => fma32(f(x), f(y), f(w.v[dst][l])).to_bits(),
                FmamkF32(k) => fma32(f(x), f(k), f(y)).to_bits(),
                FmaakF32(k) => fma32(f(x), f(y), f(k)).to_bits(),
                // `run` takes the others above.
                _ => return 0,
            }),
        };
        carry
    }

    /// Writes a carry-out mask to the scalar destination (at the running half), unless
    /// that is NULL.
    #[inline(always)]
    fn write_carries(&self, w: &mut Wave, carries: u32) {
        let sdst = usize::from(self.sdst);
        if sdst != NULL
            && let Some(s) = w.s.get_mut(sdst + w.half)
        {
            *s = carries;
        }
    }

    /// `v_lshlrev_b64`: S1's VGPR pair shifted left by S0.
    #[inline(always)]
    fn lshlrev_b64(&self, w: &mut Wave, exec: u32) {
        let [a, b, _] = self.srcs;
        let (dst, r) = (usize::from(self.dst), b.vgpr().unwrap_or(0));
        let (lo, hi) = (&w.v[r], &w.v[r + 1]);
        // The result's halves. A shift the same for every lane (a constant, an SGPR:
        // the common case) in 32-bit halves, which vectorizes; one per lane in 64 bits.
        let (lo_r, hi_r): ([u32; 32], [u32; 32]) = match a {
            Src::Vgpr(s) => {
                let by = &w.v[usize::from(s)];
                let wide = |l: usize| (u64::from(lo[l]) | u64::from(hi[l]) << 32) << (by[l] & 63);
                (each(|l| wide(l) as u32), each(|l| (wide(l) >> 32) as u32))
            }
            k => match k.scalar(w) & 63 {
                0 => (lo.0, hi.0),
                by @ 1..32 => (each(|l| lo[l] << by), each(|l| hi[l] << by | lo[l] >> (32 - by))),
                by => ([0; 32], each(|l| lo[l] << (by - 32))),
            },
        };
        if exec == u32::MAX {
            w.v[dst].0 = lo_r;
            w.v[dst + 1].0 = hi_r;
        } else {
            let (mut lo_out, mut hi_out) = (w.v[dst], w.v[dst + 1]);
            blend(&mut lo_out, exec, |l| lo_r[l]);
            blend(&mut hi_out, exec, |l| hi_r[l]);
            w.v[dst] = lo_out;
            w.v[dst + 1] = hi_out;
        }
    }

    /// 32-bit adds with carry out (`v_add_co_u32`) and carry in and out
    /// (`v_add_co_ci_u32`), as the lane-by-lane path computes them (the carry mask has
    /// 0 for lanes EXEC leaves out).
    #[inline(always)]
    fn add_co(&self, w: &mut Wave, exec: u32) {
        let [a, b, c] = self.srcs;
        let dst = usize::from(self.dst);
        let carry_in = if self.op == FastOp::AddCoCiU32 { c.mask(w) } else { 0 };
        let (at, bt): ([u32; 32], [u32; 32]);
        let (av, bv) = (src_in_place!(a, w, at), src_in_place!(b, w, bt));
        // Every lane's sum and carry in 32 bits, the carry from the operands' and the
        // sum's top bits, the lane's bit from a table: the loop vectorizes.
        let (mut sums, mut carries) = ([0u32; 32], 0u32);
        for (l, s) in sums.iter_mut().enumerate() {
            let (x, y) = (av[l], bv[l]);
            let sum = x.wrapping_add(y).wrapping_add(u32::from(carry_in & LANE_BIT[l] != 0));
            *s = sum;
            // Out of bit 31: both top bits set, or one of them without the sum's.
            let carry = (x & y) | ((x | y) & !sum);
            carries |= ((carry as i32) >> 31) as u32 & LANE_BIT[l];
        }
        write_lanes(w, dst, &sums, exec);
        self.write_carries(w, carries & exec);
    }
}

/// A [`Fast`] operation over the whole wave, for [`super::wide::run`].
struct WholeOp<'a> {
    f: &'a Fast,
    w: &'a mut Wave,
    exec: u32,
}

impl super::wide::Whole for WholeOp<'_> {
    type Out = ();
    #[inline(always)]
    fn run(self) {
        self.f.whole(self.w, self.exec);
    }
}

#[cfg(test)]
mod tests {
    use crate::rdna3::testing::run;

    /// Registers past the wave's (64 VGPRs here) leave the whole-wave form to the
    /// lane-by-lane path, which reports them: an error, not a panic.
    #[test]
    fn registers_past_the_wave_are_errors() {
        let cases: &[&[u32]] = &[
            &[0x4a05_9104],              // v_add_nc_u32_e32 v2, v4, v200
            &[0xd655_00c8, 0x041a_0b04], // v_add3_u32 v200, v4, v5, v6
            &[0xd73c_003f, 0x0002_0882], // v_lshlrev_b64 v[63:64], 2, v[4:5]
            &[0xd73c_0002, 0x0002_7e82], // v_lshlrev_b64 v[2:3], 2, v[63:64]
            &[0x560a_0364],              // v_fmac_f32_e32 v5, v100, v1
        ];
        for words in cases {
            let e = run(words, |_| {}).err();
            assert!(e.as_ref().is_some_and(|e| e.contains("beyond")), "{words:08x?}: {e:?}");
        }
    }
}
