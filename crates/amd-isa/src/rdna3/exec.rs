//! Instruction dispatch by encoding, and the vector ALU (VOP1, VOP2, VOPC, VOP3,
//! VOP3P, VOPD, DPP). Opcodes are matched by the ISA's names (`op::vop3::V_ADD_F32_E64`,
//! VOP1 and VOP2 in VOP3 numbering, see [`VOP2_IN_VOP3`]; the few VOP2 opcodes without
//! a VOP3 form by their VOP2 names in that numbering, [`vop2_only`]).
//!
//! The other families live in files of their own: `salu` (scalar ALU and scalar
//! memory), `control` (program control), `compare` (VOPC), `crosslane` (DPP, lane reads
//! and writes, permlanes, M0-relative moves, VOPD), `packed` (f16, 16-bit and VOP3P),
//! `divide` (division and square-root helpers), `matrix` (WMMA, dots), `lds`, `memory`
//! (FLAT/GLOBAL/SCRATCH and atomics), `buffer` (MUBUF/MTBUF), `fast` (the commonest
//! VALU operations a whole wave at a time, their operands resolved when decoded), and
//! `valu` for the rest of the vector ALU. What stays here: 32/64-bit integer, f32 and
//! f64 arithmetic and conversions, and decoding VALU instructions' operands ([`Valu`],
//! [`Decoded`]).

use super::compare::vcmp;
use super::crosslane::{dpp, indexed_move, vopd};
use super::decode::{Encoding, Inst};
use super::divide::{self, frexp64, valu_div};
use super::fast::Fast;
use super::fields as fld;
use super::matrix::{dot2_f32, mul_dx9};
use super::opcodes::op::{vop2, vop3, vop3sd};
use super::opcodes::{Ds, Vop3sd};
use super::packed::{valu_f16, valu16, vop3p};
use super::rounding::{Unary, add32, add64, fma32 as fma32_in, fma64, mul32, mul64, sub32, to32};
use super::wave::{Bits, MODE_ROUND, VCC_LO, Wave, sparse};
use crate::float::exact::{self, Round};
use crate::float::half;
use crate::float::minmax;
use crate::memory::Memory;

/// What an instruction asks of the scheduler.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flow {
    Next,
    Jump(i16),
    /// To an absolute address (`s_setpc_b64`, `s_swappc_b64`).
    Goto(u64),
    Barrier,
    End,
    /// An operation on the workgroup's barrier, whose state the scheduler keeps
    /// ([`GroupBarrier`]): RDNA4's split barrier.
    Group(GroupOp),
}

/// RDNA4's operations on the workgroup barrier (barrier -1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum GroupOp {
    /// `s_barrier_signal -1`: one more wave has signaled.
    Signal,
    /// `s_barrier_signal_isfirst -1`: the same, SCC saying whether it is the first
    /// since the barrier last completed.
    SignalIsFirst,
    /// `s_get_barrier_state sdst, -1`: the barrier's state into SGPR `sdst`.
    State(u8),
}

/// The workgroup barrier's state, as the scheduler of one workgroup keeps it: the
/// waves that have signaled since it last completed. (The interpreter's waves wait at
/// `s_barrier_wait` until every live wave waits there, which for a program that
/// signals before it waits is when every wave has signaled.)
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct GroupBarrier {
    signals: u32,
}

impl GroupBarrier {
    /// Carries out `op` for wave `w`. Outside a workgroup of several waves (a
    /// one-wave workgroup: STATUS.IN_WG clear) a signal does nothing and is never the
    /// first, as the pseudocode's `InWorkgroup()` says.
    pub(crate) fn apply(&mut self, op: GroupOp, w: &mut Wave) -> R<()> {
        let in_wg = w.place.waves > 1;
        match op {
            GroupOp::Signal | GroupOp::SignalIsFirst => {
                if op == GroupOp::SignalIsFirst {
                    w.scc = in_wg && self.signals == 0;
                }
                if in_wg {
                    self.signals += 1;
                }
            }
            // { 9'0, signalCnt[6:0], 5'0, memberCnt[6:0], 3'0, valid }: the workgroup's
            // waves are its members.
            GroupOp::State(d) => w.swrite(
                usize::from(d),
                (self.signals & 0x7f) << 16 | (w.place.waves & 0x7f) << 4 | 1,
            )?,
        }
        Ok(())
    }

    /// Every wave passed the barrier: counting starts again.
    pub(crate) fn complete(&mut self) {
        self.signals = 0;
    }
}

pub(crate) type R<T> = Result<T, Trap>;

use crate::error::Trap;

// VOP3's opcode space holds every VOPC, VOP2 and VOP1 opcode in a block of its own,
// the `_e64` form of an `_e32` opcode at the block's start plus its number (RDNA3 ISA,
// "VOP3"): VOPC at 0x000..=0x0ff, VOP2 at 0x100..=0x13f, VOP1 at 0x180..=0x1ff. The
// vector ALU runs the three in this numbering (`valu` takes VOP3 opcodes).

/// The last opcode of VOP3's VOPC block (which starts at 0).
pub(crate) const VOPC_IN_VOP3_LAST: u16 = 0x0ff;
/// Where VOP3's VOP2 block starts: VOP2 opcode `n` is VOP3 opcode `VOP2_IN_VOP3 + n`.
pub(crate) const VOP2_IN_VOP3: u16 = 0x100;
/// The last opcode of VOP3's VOP2 block (VOP2 opcodes are 6 bits).
pub(crate) const VOP2_IN_VOP3_LAST: u16 = 0x13f;
/// Where VOP3's VOP1 block starts: VOP1 opcode `n` is VOP3 opcode `VOP1_IN_VOP3 + n`.
pub(crate) const VOP1_IN_VOP3: u16 = 0x180;
/// The last opcode of VOP3's VOP1 block.
pub(crate) const VOP1_IN_VOP3_LAST: u16 = 0x1ff;

/// The VOP2 opcodes without a VOP3 form, where VOP3 numbering puts them (no VOP3
/// opcode has these numbers): the f16 dot product into an f32 accumulator and the
/// multiply-adds with a literal constant. Named as their VOP2 forms.
pub(crate) mod vop2_only {
    use super::VOP2_IN_VOP3;
    use crate::rdna3::opcodes::op::vop2;

    /// `v_dot2acc_f32_f16`: D += S0.lo * S1.lo + S0.hi * S1.hi (halves).
    pub(crate) const V_DOT2ACC_F32_F16_E32: u16 = VOP2_IN_VOP3 + vop2::V_DOT2ACC_F32_F16_E32;
    /// `v_fmamk_f32`: S0 * K + S1.
    pub(crate) const V_FMAMK_F32_E32: u16 = VOP2_IN_VOP3 + vop2::V_FMAMK_F32_E32;
    /// `v_fmaak_f32`: S0 * S1 + K.
    pub(crate) const V_FMAAK_F32_E32: u16 = VOP2_IN_VOP3 + vop2::V_FMAAK_F32_E32;
    /// `v_fmamk_f16`: S0 * K + S1.
    pub(crate) const V_FMAMK_F16_E32: u16 = VOP2_IN_VOP3 + vop2::V_FMAMK_F16_E32;
    /// `v_fmaak_f16`: S0 * S1 + K.
    pub(crate) const V_FMAAK_F16_E32: u16 = VOP2_IN_VOP3 + vop2::V_FMAAK_F16_E32;
}

pub(crate) fn f(x: u32) -> f32 {
    f32::from_bits(x)
}

/// `a × b + c` rounded once, as `f32::mul_add`, without its library call (which the
/// compiler emits when the build does not assume an FMA unit): the product is exact in
/// f64, the sum is rounded to odd there (TwoSum gives its error), and rounding that to
/// f32 is then correct (53 bits ≥ 24 + 2). Infinities and NaNs take `mul_add`.
#[inline(always)]
pub(crate) fn fma32(a: f32, b: f32, c: f32) -> f32 {
    let (p, c64) = (f64::from(a) * f64::from(b), f64::from(c));
    let s = p + c64;
    if !s.is_finite() {
        return a.mul_add(b, c);
    }
    let v = s - p;
    let err = (p - (s - v)) + (c64 - v);
    // Inexact and even: the odd neighbour on the side of the exact sum (one ulp up in
    // magnitude when the error has the sum's sign, else down). Without branches: the
    // parity is data, not a pattern a predictor learns.
    let bits = s.to_bits();
    let adjust = u64::from(err != 0.0) & !bits & 1;
    let away = u64::from((err > 0.0) == (s > 0.0));
    let odd = bits
        .wrapping_add((adjust << 1) & away.wrapping_neg())
        .wrapping_sub(adjust);
    f64::from_bits(odd) as f32
}

pub(crate) fn unsupported(i: &Inst) -> Trap {
    Trap::missing(format!("{:?} opcode {:#x} is not implemented", i.enc, i.op))
}

/// Whether a wave64 runs `i` as two passes of 32 lanes: every vector instruction but
/// those that see all 64 lanes at once (`v_readfirstlane_b32`, `v_readlane_b32`,
/// `v_writelane_b32`, `ds_permute_b32`, `ds_bpermute_b32`, `ds_append`,
/// `ds_consume`); scalar ones run once.
#[inline]
pub(crate) fn per_half(i: &Inst) -> bool {
    match i.enc {
        Encoding::Sopp | Encoding::Sop1 | Encoding::Sop2 | Encoding::Sopk | Encoding::Sopc | Encoding::Smem => false,
        Encoding::Ds => !matches!(
            Ds::from_op(i.op),
            Some(Ds::DS_PERMUTE_B32 | Ds::DS_BPERMUTE_B32 | Ds::DS_APPEND | Ds::DS_CONSUME)
        ),
        // WMMA works on the whole wave at once.
        Encoding::Vop3p => {
            use super::opcodes::op::vop3p::{V_WMMA_F32_16X16X16_F16, V_WMMA_I32_16X16X16_IU4};
            !(V_WMMA_F32_16X16X16_F16..=V_WMMA_I32_16X16X16_IU4).contains(&i.op)
        }
        // v_readfirstlane_b32 is VOP1 opcode 2 (VOP3 0x182).
        Encoding::Vop1 => i.op != vop3::V_READFIRSTLANE_B32_E64 - 0x180,
        Encoding::Vop3 => !matches!(
            i.op,
            vop3::V_READFIRSTLANE_B32_E64 | vop3::V_READLANE_B32 | vop3::V_WRITELANE_B32
        ),
        _ => true,
    }
}

/// Whether a vector instruction may write the scalar file: compares (their mask, and
/// EXEC for `v_cmpx`), VOP3SD's and VOP2's carry-outs and condition outputs, the lane
/// reads; the others write VGPRs, memory or LDS only.
#[inline]
pub(crate) fn writes_scalars(i: &Inst) -> bool {
    match i.enc {
        Encoding::Vop1 => i.op == vop3::V_READFIRSTLANE_B32_E64 - 0x180,
        Encoding::Vop2 => matches!(
            i.op,
            vop2::V_ADD_CO_CI_U32_E32 | vop2::V_SUB_CO_CI_U32_E32 | vop2::V_SUBREV_CO_CI_U32_E32
        ),
        Encoding::Vop3 => {
            i.op <= VOPC_IN_VOP3_LAST
                || Vop3sd::from_op(i.op).is_some()
                || matches!(
                    i.op,
                    vop3::V_READFIRSTLANE_B32_E64 | vop3::V_READLANE_B32 | vop3::V_WRITELANE_B32
                )
        }
        Encoding::Vop3p | Encoding::Vopd | Encoding::Ds | Encoding::Flat | Encoding::Mubuf | Encoding::Mtbuf => false,
        _ => true,
    }
}

/// Runs `i` on `w`.
pub(crate) fn step(w: &mut Wave, i: &Inst, mem: &dyn Memory, lds: &mut [u8]) -> R<Flow> {
    match i.enc {
        Encoding::Sopp => super::control::sopp(w, i),
        Encoding::Sop1 => super::salu::sop1(w, i),
        Encoding::Sop2 => super::salu::sop2(w, i).map(|_| Flow::Next),
        Encoding::Sopk => super::salu::sopk(w, i),
        Encoding::Sopc => super::salu::sopc(w, i).map(|_| Flow::Next),
        Encoding::Smem => super::salu::smem(w, i, mem).map(|_| Flow::Next),
        Encoding::Mubuf | Encoding::Mtbuf => {
            super::buffer::exec(w, i, mem, lds, i.enc == Encoding::Mtbuf).map(|_| Flow::Next)
        }
        Encoding::Vop1 | Encoding::Vop2 | Encoding::Vopc | Encoding::Vop3 if i.dpp.is_some() => {
            dpp(w, i).map(|_| Flow::Next)
        }
        Encoding::Vopc => compare_step(w, i),
        Encoding::Vop1 | Encoding::Vop2 | Encoding::Vop3 => match Valu::of(i) {
            Some(v) => v.run(w, i).map(|_| Flow::Next),
            // VOP3's VOPC block.
            None => compare_step(w, i),
        },
        Encoding::Flat => super::memory::flat(w, i, mem, lds).map(|_| Flow::Next),
        Encoding::Ds => super::lds::ds(w, i, lds).map(|_| Flow::Next),
        Encoding::Vopd => vopd(w, i).map(|_| Flow::Next),
        Encoding::Vop3p => vop3p(w, i).map(|_| Flow::Next),
    }
}

/// A compare's operands (VOPC, and VOP3's VOPC block): the mask's destination, the
/// sources and the modifiers, checked (an error names modifiers the ISA refuses);
/// `None` for anything else (DPP forms included). [`Decoded`] keeps them; [`step`]
/// reads them as it runs.
fn compare_operands(i: &Inst) -> Option<R<(usize, [u16; 2], Mods)>> {
    if i.dpp.is_some() {
        return None;
    }
    let iw = i.words();
    match i.enc {
        Encoding::Vopc => Some(Ok((
            VCC_LO,
            [fld::vopc::SRC0.operand(&iw), fld::vopc::VSRC1.operand(&iw)],
            Mods::NONE,
        ))),
        Encoding::Vop3 if i.op <= VOPC_IN_VOP3_LAST => {
            let m = vop3_mods(i);
            if m != Mods::NONE
                && let Err(e) = super::modifiers::check_vop3(i.op, m)
            {
                return Some(Err(e));
            }
            let srcs = [fld::vop3::SRC0.operand(&iw), fld::vop3::SRC1.operand(&iw)];
            Some(Ok((fld::vop3::VDST.index(&iw), srcs, m)))
        }
        _ => None,
    }
}

/// Runs compare `i` (its operands read now).
fn compare_step(w: &mut Wave, i: &Inst) -> R<Flow> {
    let (sdst, srcs, m) = compare_operands(i).ok_or_else(|| unsupported(i))??;
    vcmp(w, i, i.op, sdst, srcs, m).map(|_| Flow::Next)
}

/// VOP3's input and output modifiers (VOP3SD has a scalar destination where VOP3 has
/// abs and op_sel).
pub(crate) fn vop3_mods(i: &Inst) -> Mods {
    let iw = i.words();
    let (abs, opsel) = if Vop3sd::from_op(i.op).is_some() {
        (0, 0)
    } else {
        (fld::vop3::ABS.get(&iw) as u8, fld::vop3::OPSEL.get(&iw) as u8)
    };
    Mods {
        abs,
        neg: fld::vop3::NEG.get(&iw) as u8,
        opsel,
        clamp: fld::vop3::CLMP.is_set(&iw),
        omod: fld::vop3::OMOD.get(&iw) as u8,
    }
}

/// A vector ALU operation's opcode (in the VOP3 numbering: VOP2 ops from
/// [`VOP2_IN_VOP3`], VOP1 from [`VOP1_IN_VOP3`]), registers and modifiers, as decoding
/// found them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Vop {
    pub(crate) op: u16,
    pub(crate) dst: usize,
    /// The scalar destination of VOP3SD (and VOP2's implicit VCC).
    pub(crate) sdst: Option<usize>,
    pub(crate) srcs: [u16; 3],
    pub(crate) m: Mods,
}

/// A VOP1, VOP2 or VOP3 instruction (not a compare, not DPP) as [`valu`] takes it, and
/// its whole-wave form when it has one. Decoded once per instruction of a dispatch's
/// code.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Valu {
    vop: Vop,
    fast: Option<Fast>,
}

impl Valu {
    /// `i`'s operands, when it is a VALU instruction other than a compare or DPP.
    pub(crate) fn of(i: &Inst) -> Option<Valu> {
        let iw = i.words();
        let (op, dst, sdst, srcs, m) = match i.enc {
            _ if i.dpp.is_some() => return None,
            Encoding::Vop1 => {
                let (dst, src) = (fld::vop1::VDST.index(&iw), fld::vop1::SRC0.operand(&iw));
                (VOP1_IN_VOP3 + i.op, dst, None, [src, 0, 0], Mods::NONE)
            }
            Encoding::Vop2 => {
                let (dst, s0, s1) = (
                    fld::vop2::VDST.index(&iw),
                    fld::vop2::SRC0.operand(&iw),
                    fld::vop2::VSRC1.operand(&iw),
                );
                // VOP2 carry ops read and write VCC implicitly; fmac reads its destination.
                let s2 = if i.op == vop2::V_FMAC_F32_E32 {
                    256 + dst as u16
                } else {
                    VCC_LO as u16
                };
                (VOP2_IN_VOP3 + i.op, dst, Some(VCC_LO), [s0, s1, s2], Mods::NONE)
            }
            Encoding::Vop3 if i.op > VOPC_IN_VOP3_LAST => {
                let srcs = [
                    fld::vop3::SRC0.operand(&iw),
                    fld::vop3::SRC1.operand(&iw),
                    fld::vop3::SRC2.operand(&iw),
                ];
                // VOP3SD (carries, div_scale, 64-bit multiply-adds): a scalar
                // destination where VOP3 has abs and op_sel.
                let sdst = Vop3sd::from_op(i.op).map(|_| fld::vop3sd::SDST.index(&iw));
                (i.op, fld::vop3::VDST.index(&iw), sdst, srcs, vop3_mods(i))
            }
            _ => return None,
        };
        let vop = Vop { op, dst, sdst, srcs, m };
        Some(Valu {
            vop,
            fast: Fast::new(i, vop),
        })
    }

    /// Runs the instruction (`i`, which it was decoded from) on `w`.
    #[inline]
    pub(crate) fn run(&self, w: &mut Wave, i: &Inst) -> R<()> {
        if let Some(f) = &self.fast {
            if f.run(w)? {
                return Ok(());
            }
        }
        valu_lanes(w, i, self.vop)
    }
}

/// An instruction with what running it needs decoded once (a dispatch decodes each
/// instruction of its code the first time a wave reaches it).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Decoded {
    pub(crate) inst: Inst,
    kind: Kind,
}

/// What [`Decoded`] knows of an instruction.
#[derive(Debug, Clone, Copy)]
enum Kind {
    /// An ordering or scheduling hint, which changes nothing here (`s_waitcnt`,
    /// `s_delay_alu`, `s_clause`, `s_nop`, ...).
    Hint,
    /// The vector ALU.
    Valu(Valu),
    /// LDS (DS), the opcode named.
    Lds(Ds),
    /// A vector compare (VOPC, or its VOP3 form): the mask's destination, the sources
    /// and the modifiers (checked when decoded).
    Vcmp {
        sdst: usize,
        srcs: [u16; 2],
        m: Mods,
        fast: Option<super::compare::FastCompare>,
    },
    /// SOP2, the opcode and operands decoded.
    Sop2(super::salu::Sop2Args),
    /// A 32-bit integer `s_cmp_*`.
    Scmp(super::salu::ScalarCompare),
    /// A GLOBAL load, store or atomic, its fields decoded.
    Global(super::memory::FlatAccess),
    /// An SMEM `s_load_b*`, its fields decoded.
    ScalarLoad(super::salu::ScalarLoad),
    /// A SOPP branch or `s_endpgm`.
    Control(super::control::Control),
    /// SOP1, the opcode and operands decoded.
    Sop1(super::salu::Sop1Args),
    /// A VOPD pair, its halves decoded.
    Vopd(super::crosslane::VopdArgs),
    /// The rest, which [`step`] decodes as it runs.
    Other,
}

impl Decoded {
    pub(crate) fn new(inst: Inst) -> Decoded {
        let kind = if inst.enc == Encoding::Sopp && super::control::hint(inst.op) {
            Kind::Hint
        } else if let Some(v) = Valu::of(&inst) {
            Kind::Valu(v)
        } else if let Some(op) = Ds::from_op(inst.op).filter(|_| inst.enc == Encoding::Ds) {
            Kind::Lds(op)
        } else if let Some(Ok((sdst, srcs, m))) = compare_operands(&inst) {
            Kind::Vcmp {
                sdst,
                srcs,
                m,
                fast: super::compare::FastCompare::of(&inst, sdst, srcs, m),
            }
        } else if let Some(a) = super::salu::Sop2Args::of(&inst) {
            Kind::Sop2(a)
        } else if let Some(c) = super::salu::ScalarCompare::of(&inst) {
            Kind::Scmp(c)
        } else if let Some(a) = super::memory::global_access(&inst) {
            Kind::Global(a)
        } else if let Some(l) = super::salu::scalar_load_of(&inst) {
            Kind::ScalarLoad(l)
        } else if let Some(c) = super::control::Control::of(&inst) {
            Kind::Control(c)
        } else if let Some(a) = super::salu::Sop1Args::of(&inst) {
            Kind::Sop1(a)
        } else if let Some(a) = super::crosslane::VopdArgs::of(&inst) {
            Kind::Vopd(a)
        } else {
            Kind::Other
        };
        Decoded { inst, kind }
    }

    /// Whether the instruction is an ordering or scheduling hint: running it changes
    /// nothing but the PC.
    #[inline]
    pub(crate) fn is_hint(&self) -> bool {
        matches!(self.kind, Kind::Hint)
    }

    /// Runs the instruction on `w` out of line: for another generation's rarer forms
    /// around a lowered instruction, so that [`Decoded::run`] is inlined only into
    /// the schedulers' loops (the compiler inlines the vector ALU there).
    #[inline(never)]
    pub(crate) fn run_out_of_line(&self, w: &mut Wave, mem: &dyn Memory, lds: &mut [u8]) -> R<Flow> {
        self.run(w, mem, lds)
    }

    /// Runs the instruction on `w`, as [`step`] does. (Inlined into the scheduler's
    /// loop: a call per instruction costs the commonest kernels several percent.)
    #[inline(always)]
    pub(crate) fn run(&self, w: &mut Wave, mem: &dyn Memory, lds: &mut [u8]) -> R<Flow> {
        match &self.kind {
            Kind::Hint => Ok(Flow::Next),
            Kind::Valu(v) => v.run(w, &self.inst).map(|_| Flow::Next),
            Kind::Lds(op) => super::lds::ds_op(w, &self.inst, *op, lds).map(|_| Flow::Next),
            Kind::Vcmp { sdst, srcs, m, fast } => {
                if let Some(f) = fast
                    && f.run(w)?
                {
                    return Ok(Flow::Next);
                }
                vcmp(w, &self.inst, self.inst.op, *sdst, *srcs, *m).map(|_| Flow::Next)
            }
            Kind::Sop2(a) => super::salu::sop2_run(w, &self.inst, *a).map(|_| Flow::Next),
            Kind::Scmp(c) => c.run(w, self.inst.literal).map(|_| Flow::Next),
            Kind::Global(a) => super::memory::global(w, a, mem).map(|_| Flow::Next),
            Kind::ScalarLoad(l) => super::salu::scalar_load(w, l, mem).map(|_| Flow::Next),
            Kind::Control(c) => Ok(c.run(w)),
            Kind::Sop1(a) => super::salu::sop1_run(w, &self.inst, *a),
            Kind::Vopd(a) => super::crosslane::vopd_run(w, &self.inst, *a).map(|_| Flow::Next),
            Kind::Other => step(w, &self.inst, mem, lds),
        }
    }
}

/// A 64-bit float operand: VGPR or SGPR pairs, f64 inline constants, or a literal as
/// the high half.
pub(crate) fn f64_src(w: &Wave, n: u16, lane: usize, lit: Option<u32>, m: Mods, k: usize) -> R<f64> {
    let bits = match n {
        240..=247 => [0.5f64, -0.5, 1.0, -1.0, 2.0, -2.0, 4.0, -4.0][(n - 240) as usize].to_bits(),
        248 => (1.0 / std::f64::consts::TAU).to_bits(),
        255 => (lit.ok_or("literal operand without a literal")? as u64) << 32,
        _ => w.vread64(n, lane, lit)?,
    };
    let mut x = f64::from_bits(bits);
    if m.abs >> k & 1 != 0 {
        x = x.abs();
    }
    if m.neg >> k & 1 != 0 {
        x = -x;
    }
    // f64 arithmetic, compares and conversions read denormals as MODE says.
    Ok(w.f64_in(x))
}

/// VOP3 input modifiers (bit i for source i).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Mods {
    pub(crate) abs: u8,
    pub(crate) neg: u8,
    /// VOP3 op_sel: bits 0..=2 pick the high half of a 16-bit source, bit 3 the destination half.
    pub(crate) opsel: u8,
    /// VOP3 clamp: float results to [0, 1], integer adds and subtracts saturate.
    pub(crate) clamp: bool,
    /// VOP3 output modifier: float results times 2, 4 or 0.5.
    pub(crate) omod: u8,
}

impl Mods {
    pub(crate) const NONE: Mods = Mods {
        abs: 0,
        neg: 0,
        opsel: 0,
        clamp: false,
        omod: 0,
    };

    /// The 16-bit half of `x` op_sel picks for source `k`.
    pub(crate) fn half(&self, k: usize, x: u32) -> u16 {
        if self.opsel >> k & 1 != 0 {
            (x >> 16) as u16
        } else {
            x as u16
        }
    }

    /// The 16-bit half of `x` op_sel picks for source `k`, with abs and neg applied to
    /// its sign bit (no flushing: for `v_cndmask_b16`, which moves bits).
    pub(crate) fn half_signed(&self, k: usize, x: u32) -> u16 {
        let mut h = self.half(k, x);
        if self.abs >> k & 1 != 0 {
            h &= 0x7fff;
        }
        if self.neg >> k & 1 != 0 {
            h ^= 0x8000;
        }
        h
    }

    /// `x` with abs and neg of source `k` applied to its sign bit (bit 31).
    pub(crate) fn float(&self, k: usize, x: u32) -> u32 {
        let mut v = x;
        if self.abs >> k & 1 != 0 {
            v &= 0x7fff_ffff;
        }
        if self.neg >> k & 1 != 0 {
            v ^= 0x8000_0000;
        }
        v
    }
}

/// `x` as a half, rounded toward zero (overflow to the largest finite half).
pub(crate) fn half_rtz(x: f32) -> u16 {
    if x.is_nan() || x.is_infinite() {
        return half::from_f64(x as f64);
    }
    let h = half::from_f64(x as f64);
    // Nearest-even went away from zero: step back one ulp toward zero.
    if (half::to_f32(h) as f64).abs() > (x as f64).abs() {
        h - 1
    } else {
        h
    }
}

/// An f32 transcendental or root: `host`, the host's nearest-even result, unless
/// MODE's f32 field directs otherwise ([`super::rounding::unary`]).
fn trans32(op: Unary, x: f32, mode: Round, host: f32) -> u32 {
    if mode == Round::NearestEven {
        return host.to_bits();
    }
    super::rounding::unary(op, x.into(), exact::F32, mode).map_or(host.to_bits(), |b| b as u32)
}

/// [`trans32`] for f64 results (MODE's f16/f64 field).
pub(crate) fn trans64(op: Unary, x: f64, mode: Round, host: f64) -> u64 {
    if mode == Round::NearestEven {
        return host.to_bits();
    }
    super::rounding::unary(op, x, exact::F64, mode).unwrap_or(host.to_bits())
}

/// The angle of `v_sin`/`v_cos`, whose input counts turns: the whole turns are dropped
/// first (exactly), so an integer input is angle 0 at any magnitude.
pub(crate) fn revolutions(x: f64) -> f64 {
    if x == 0.0 {
        // ±0 keeps its sign (sin(-0) is -0).
        return x;
    }
    (x - x.trunc()) * std::f64::consts::TAU
}

/// An f32 result's bits after VOP3's output modifier and clamp (NaN clamps to 0).
pub(crate) fn output_mods(bits: u32, m: Mods) -> u32 {
    let mut x = f(bits);
    x *= match m.omod {
        1 => 2.0,
        2 => 4.0,
        3 => 0.5,
        _ => 1.0,
    };
    if m.clamp {
        x = if x.is_nan() { 0.0 } else { x.clamp(0.0, 1.0) };
    }
    x.to_bits()
}

/// An f64 result's bits after VOP3's output modifier and clamp (NaN clamps to 0).
pub(crate) fn output_mods64(bits: u64, m: Mods) -> u64 {
    if m.omod == 0 && !m.clamp {
        return bits;
    }
    let mut x = f64::from_bits(bits);
    x *= [1.0, 2.0, 4.0, 0.5][usize::from(m.omod & 3)];
    if m.clamp {
        x = if x.is_nan() { 0.0 } else { x.clamp(0.0, 1.0) };
    }
    x.to_bits()
}

/// A wide unsigned result in 32 bits: saturated (clamp) or wrapped.
pub(crate) fn sat_u32(x: u64, clamp: bool) -> u32 {
    if clamp {
        x.min(u64::from(u32::MAX)) as u32
    } else {
        x as u32
    }
}

/// A wide signed result in 32 bits: saturated (clamp) or wrapped.
pub(crate) fn sat_i32(x: i64, clamp: bool) -> u32 {
    if clamp {
        x.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as u32
    } else {
        x as u32
    }
}

/// The saturating (clamped) form of a 32-bit integer add or subtract.
pub(crate) fn saturate(op: u16, a: u32, b: u32) -> u32 {
    let (sa, sb) = (a as i32, b as i32);
    match op {
        vop3::V_ADD_NC_U32_E64 | vop3sd::V_ADD_CO_U32 => a.saturating_add(b),
        vop3::V_SUB_NC_U32_E64 | vop3sd::V_SUB_CO_U32 => a.saturating_sub(b),
        vop3::V_SUBREV_NC_U32_E64 | vop3sd::V_SUBREV_CO_U32 => b.saturating_sub(a),
        vop3::V_ADD_NC_I32 => sa.saturating_add(sb) as u32,
        _ => sa.saturating_sub(sb) as u32,
    }
}

/// Whether VOP3-numbered `op` produces an f32 (subject to MODE's output denormals).
pub(crate) fn f32_result(op: u16) -> bool {
    matches!(
        op,
        // VOP2
        vop2_only::V_DOT2ACC_F32_F16_E32
            | vop3::V_ADD_F32_E64
            | vop3::V_SUB_F32_E64
            | vop3::V_SUBREV_F32_E64
            | vop3::V_MUL_DX9_ZERO_F32_E64
            | vop3::V_MUL_F32_E64
            | vop3::V_MIN_F32_E64
            | vop3::V_MAX_F32_E64
            | vop3::V_FMAC_F32_E64
            | vop2_only::V_FMAMK_F32_E32
            | vop2_only::V_FMAAK_F32_E32
            // VOP3 only
            | vop3::V_FMA_F32
            | vop3::V_MIN3_F32
            | vop3::V_MAX3_F32
            | vop3::V_MED3_F32
            | vop3::V_MAXMIN_F32
            | vop3::V_MINMAX_F32
            // VOP1
            | vop3::V_CVT_F32_I32_E64
            | vop3::V_CVT_F32_U32_E64
            | vop3::V_CVT_F32_F64_E64
            | vop3::V_CVT_F32_UBYTE0_E64
            ..=vop3::V_CVT_F32_UBYTE3_E64
                | vop3::V_FRACT_F32_E64
                | vop3::V_TRUNC_F32_E64
                | vop3::V_CEIL_F32_E64
                | vop3::V_RNDNE_F32_E64
                | vop3::V_FLOOR_F32_E64
                | vop3::V_EXP_F32_E64
                | vop3::V_LOG_F32_E64
                | vop3::V_RCP_F32_E64
                | vop3::V_RCP_IFLAG_F32_E64
                | vop3::V_RSQ_F32_E64
                | vop3::V_SQRT_F32_E64
                | vop3::V_SIN_F32_E64
                | vop3::V_COS_F32_E64
                | vop3::V_FREXP_MANT_F32_E64
    )
}

#[cfg(test)]
thread_local! {
    /// Tests compare the fast path with the lane-by-lane one by turning it off.
    pub(crate) static SLOW_ONLY: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

#[cfg(test)]
pub(crate) fn slow_only() -> bool {
    SLOW_ONLY.with(|s| s.get())
}

#[cfg(not(test))]
pub(crate) fn slow_only() -> bool {
    false
}

/// A source operand resolved once per instruction: a VGPR or one value for every lane.
pub(crate) enum Lanes {
    Vgpr(usize),
    Same(u32),
}

impl Lanes {
    pub(crate) fn of(w: &Wave, n: u16, lit: Option<u32>) -> Option<Lanes> {
        if n >= 256 {
            let r = usize::from(n - 256);
            (r < w.v.len()).then_some(Lanes::Vgpr(r))
        } else {
            w.sread(n, lit).ok().map(Lanes::Same)
        }
    }

    /// Every lane's value: the VGPR in place, or a scalar or constant spread over
    /// `tmp`.
    #[inline(always)]
    pub(crate) fn in_place<'a>(&self, w: &'a Wave, tmp: &'a mut [u32; 32]) -> &'a [u32; 32] {
        match *self {
            Lanes::Vgpr(r) => &w.v[r],
            Lanes::Same(k) => {
                *tmp = [k; 32];
                tmp
            }
        }
    }
}

/// `out` with each lane EXEC enables set to `f(lane)`. `f` runs for every lane and the
/// results are blended by EXEC, so the loop has no branches (and vectorizes); it must
/// be a pure function of the lane's operands.
#[inline(always)]
pub(crate) fn blend(out: &mut [u32; 32], exec: u32, f: impl Fn(usize) -> u32) {
    // Every lane (the common case): no select at all.
    if exec == u32::MAX {
        for (lane, o) in out.iter_mut().enumerate() {
            *o = f(lane);
        }
        return;
    }
    // A few lanes (small workgroups, the tail of a divergent branch): just those.
    if sparse(exec) {
        for lane in Bits(exec) {
            out[lane] = f(lane);
        }
        return;
    }
    for (lane, o) in out.iter_mut().enumerate() {
        // All ones where the lane is on: a select without a branch (and, with the bit
        // from a table rather than a shift by the lane, one that vectorizes).
        let on = if exec & LANE_BIT[lane] != 0 { u32::MAX } else { 0 };
        *o = f(lane) & on | *o & !on;
    }
}

/// Stores `r` into VGPR `dst` for the lanes `exec` (the running half's EXEC) enables (all of it with every lane on).
#[inline(always)]
pub(crate) fn write_lanes(w: &mut Wave, dst: usize, r: &[u32; 32], exec: u32) {
    if exec == u32::MAX {
        w.v[dst].0 = *r;
    } else {
        let mut out = w.v[dst];
        blend(&mut out, exec, |l| r[l]);
        w.v[dst] = out;
    }
}

/// Lane `l`'s bit in a mask.
pub(crate) const LANE_BIT: [u32; 32] = {
    let mut bits = [0; 32];
    let mut l = 0;
    while l < 32 {
        bits[l] = 1 << l;
        l += 1;
    }
    bits
};

/// Vector ALU operation `v`.
pub(crate) fn valu(w: &mut Wave, i: &Inst, v: Vop) -> R<()> {
    // The commonest operations first, a whole wave at a time.
    if let Some(f) = Fast::new(i, v) {
        if f.run(w)? {
            return Ok(());
        }
    }
    valu_lanes(w, i, v)
}

/// [`valu`] lane by lane (kept out of line: its frame is large, and the whole-wave
/// operations should not pay for setting it up).
#[inline(never)]
pub(crate) fn valu_lanes(w: &mut Wave, i: &Inst, v: Vop) -> R<()> {
    let Vop { op, dst, sdst, srcs, m } = v;
    // Modifiers the ISA does not allow on this VOP3 instruction are refused (VOP1,
    // VOP2 and VOPD carry none; DPP16's are checked where they are read).
    if m != Mods::NONE && i.enc == Encoding::Vop3 {
        super::modifiers::check_vop3(op, m)?;
    }
    // Lane reads and writes, the permlanes and the M0-relative moves.
    if indexed_move(w, op, dst, srcs, m, i.literal)? {
        return Ok(());
    }
    // A directed rounding mode: only what is computed in it runs.
    if w.mode & MODE_ROUND != 0 {
        if let Some(name) = super::valu::name(op) {
            super::rounding::check(w, super::valu::result_format(op), name)?;
        }
    }
    let (r32, r64) = (w.round32(), w.round16_64());
    let exec = w.exec();
    let lit = i.literal;
    let saturating = matches!(
        op,
        vop3::V_ADD_NC_U32_E64
            ..=vop3::V_SUBREV_NC_U32_E64
                | vop3::V_SUB_NC_I32
                | vop3::V_ADD_NC_I32
                | vop3sd::V_ADD_CO_U32
                | vop3sd::V_SUB_CO_U32
                | vop3sd::V_SUBREV_CO_U32
                | vop3::V_ADD_NC_U16
                | vop3::V_SUB_NC_U16
    );
    // The carry-in forms saturate under clamp in their own arms (the carry counts).
    let carry_in_clamp = m.clamp && matches!(op, vop3sd::V_ADD_CO_CI_U32..=vop3sd::V_SUBREV_CO_CI_U32);
    // Integer multiplies (and multiply-adds) that saturate under clamp in their own arms.
    let wide_int = matches!(
        op,
        vop3::V_MUL_I32_I24_E64
            | vop3::V_MUL_U32_U24_E64
            | vop3::V_MAD_I32_I24
            | vop3::V_MAD_U32_U24
            | vop3sd::V_MAD_U64_U32
            | vop3sd::V_MAD_I64_I32
    );
    let f64_path = matches!(
        op,
        vop3::V_CVT_I32_F64_E64
            | vop3::V_CVT_F64_I32_E64
            | vop3::V_CVT_F32_F64_E64
            | vop3::V_CVT_F64_F32_E64
            | vop3::V_CVT_F64_U32_E64
            | vop3::V_RCP_F64_E64
            | vop3::V_FMA_F64
            | vop3::V_ADD_F64..=vop3::V_MAX_F64
    );
    let f16_path = matches!(op, vop3::V_CVT_F16_F32_E64 | vop3::V_CVT_F32_F16_E64 | vop3::V_ADD_F16_E64..=vop3::V_MAX_F16_E64 | vop3::V_MIN_F16_E64 | vop3::V_FMA_F16 | vop3::V_CVT_F16_U16_E64..=vop3::V_EXP_F16_E64 | vop3::V_FLOOR_F16_E64..=vop3::V_COS_F16_E64);
    // Operations that apply clamp and omod themselves (`valu_div` to its float results;
    // the f64 path's integer result, `v_cvt_i32_f64`, takes neither: `modifiers`
    // decides).
    let modified = (f32_result(op) || f64_path || divide::covers(op))
        && !matches!(op, vop3::V_FREXP_EXP_I32_F64_E64 | vop3::V_CVT_I32_F64_E64);
    if (m.clamp && !(saturating || wide_int || modified || f16_path || carry_in_clamp)) || (m.omod != 0 && !modified) {
        if m.omod == 0 && super::valu::clamps(op) {
            return super::valu::valu(w, i, op, dst, srcs, m);
        }
        return super::modifiers::apply(w, i, v);
    }
    if matches!(op, vop3::V_ADD_NC_U16..=vop3::V_MUL_LO_U16 | vop3::V_MAX_U16..=vop3::V_MIN_I16) {
        return valu16(w, i, op, dst, srcs, m);
    }
    if f16_path {
        return valu_f16(w, i, op, dst, srcs, m);
    }
    if divide::covers(op) {
        return valu_div(w, i, v);
    }
    if f64_path {
        for lane in 0..32 {
            if exec >> lane & 1 == 0 {
                continue;
            }
            let x = |k: usize| f64_src(w, srcs[k], lane, lit, m, k);
            let r: u64 = match op {
                vop3::V_CVT_I32_F64_E64 => {
                    // v_cvt_i32_f64: saturating, NaN to 0.
                    w.vwrite(dst, lane, x(0)? as i32 as u32)?;
                    continue;
                }
                vop3::V_CVT_F32_F64_E64 => {
                    w.vwrite(dst, lane, w.f32_out(output_mods(to32(x(0)?, r32).to_bits(), m)))?;
                    continue;
                }
                vop3::V_CVT_F64_I32_E64 => (w.vread(srcs[0], lane, lit)? as i32 as f64).to_bits(),
                vop3::V_CVT_F64_F32_E64 => (w.f32_in(f(m.float(0, w.vread(srcs[0], lane, lit)?))) as f64).to_bits(),
                vop3::V_CVT_F64_U32_E64 => (w.vread(srcs[0], lane, lit)? as f64).to_bits(),
                vop3::V_RCP_F64_E64 => {
                    let v = x(0)?;
                    trans64(Unary::Rcp, v, r64, 1.0 / v)
                }
                vop3::V_FMA_F64 => fma64(x(0)?, x(1)?, x(2)?, r64).to_bits(),
                vop3::V_ADD_F64 => add64(x(0)?, x(1)?, r64).to_bits(),
                vop3::V_MUL_F64 => mul64(x(0)?, x(1)?, r64).to_bits(),
                vop3::V_MIN_F64 => minmax::min(x(0)?, x(1)?, w.nans()).to_bits(),
                _ => minmax::max(x(0)?, x(1)?, w.nans()).to_bits(),
            };
            let r = w.f64_out(output_mods64(r, m));
            w.vwrite(dst, lane, r as u32)?;
            w.vwrite(dst + 1, lane, (r >> 32) as u32)?;
        }
        return Ok(());
    }
    let mut carry_out = 0u32;
    let carry_in = if matches!(op, vop3sd::V_ADD_CO_CI_U32..=vop3sd::V_SUBREV_CO_CI_U32) {
        w.mask_read(srcs[2], lit)?
    } else {
        0
    };
    for lane in 0..32 {
        if exec >> lane & 1 == 0 {
            continue;
        }
        let a = w.vread(srcs[0], lane, lit)?;
        let b = if matches!(op, VOP1_IN_VOP3..=VOP1_IN_VOP3_LAST) {
            0
        } else {
            w.vread(srcs[1], lane, lit)?
        };
        let fa = w.f32_in(f(m.float(0, a)));
        let fb = w.f32_in(f(m.float(1, b)));
        let r: u32 = match op {
            // VOP1
            vop3::V_MOV_B32_E64 => a,
            vop3::V_CVT_F32_I32_E64 => to32(f64::from(a as i32), r32).to_bits(),
            vop3::V_CVT_F32_U32_E64 => to32(f64::from(a), r32).to_bits(),
            vop3::V_CVT_U32_F32_E64 => fa as u32,
            vop3::V_CVT_I32_F32_E64 => fa as i32 as u32,
            vop3::V_RCP_F32_E64 => trans32(Unary::Rcp, fa, r32, 1.0 / fa),
            vop3::V_NOT_B32_E64 => !a,
            vop3::V_CVT_F32_UBYTE0_E64..=vop3::V_CVT_F32_UBYTE3_E64 => {
                (((a >> (8 * (op - vop3::V_CVT_F32_UBYTE0_E64))) & 0xff) as f32).to_bits()
            }
            vop3::V_CVT_NEAREST_I32_F32_E64 => (fa + 0.5).floor() as i32 as u32,
            vop3::V_CVT_FLOOR_I32_F32_E64 => fa.floor() as i32 as u32,
            // v_fract_f32: x + -floor(x) as the ISA's pseudocode has it (a tiny negative
            // x rounds to 1.0); NaN stays NaN, infinities become NaN.
            vop3::V_FRACT_F32_E64 => sub32(fa, fa.floor(), r32).to_bits(),
            vop3::V_CEIL_F32_E64 => fa.ceil().to_bits(),
            vop3::V_RNDNE_F32_E64 => fa.round_ties_even().to_bits(),
            vop3::V_BFREV_B32_E64 => a.reverse_bits(),
            // v_clz_i32_u32 / v_ctz_i32_b32: -1 when no bit is set.
            vop3::V_CLZ_I32_U32_E64 => {
                if a == 0 {
                    u32::MAX
                } else {
                    a.leading_zeros()
                }
            }
            vop3::V_CTZ_I32_B32_E64 => {
                if a == 0 {
                    u32::MAX
                } else {
                    a.trailing_zeros()
                }
            }
            // v_cls_i32: leading bits equal to the sign bit, itself included; -1 for 0 and -1.
            vop3::V_CLS_I32_E64 => match a {
                0 | u32::MAX => u32::MAX,
                _ if (a as i32) < 0 => a.leading_ones(),
                _ => a.leading_zeros(),
            },
            // f64 holds every f32 exactly, so its frexp serves.
            vop3::V_FREXP_EXP_I32_F32_E64 => frexp64(fa as f64).1 as u32,
            vop3::V_FREXP_MANT_F32_E64 => (frexp64(fa as f64).0 as f32).to_bits(),
            vop3::V_TRUNC_F32_E64 => fa.trunc().to_bits(),
            vop3::V_FLOOR_F32_E64 => fa.floor().to_bits(),
            vop3::V_EXP_F32_E64 => trans32(Unary::Exp, fa, r32, fa.exp2()),
            vop3::V_LOG_F32_E64 => trans32(Unary::Log, fa, r32, fa.log2()),
            vop3::V_RCP_IFLAG_F32_E64 => trans32(Unary::Rcp, fa, r32, 1.0 / fa),
            vop3::V_RSQ_F32_E64 => trans32(Unary::Rsq, fa, r32, (1.0 / f64::from(fa).sqrt()) as f32),
            vop3::V_SQRT_F32_E64 => trans32(Unary::Sqrt, fa, r32, fa.sqrt()),
            vop3::V_SIN_F32_E64 => trans32(Unary::Sin, fa, r32, revolutions(fa.into()).sin() as f32),
            vop3::V_COS_F32_E64 => trans32(Unary::Cos, fa, r32, revolutions(fa.into()).cos() as f32),
            vop3::V_SUBREV_NC_U32_E64 => b.wrapping_sub(a),
            // VOP2 (and their VOP3 forms)
            // v_cndmask_b32: the VOP3 and DPP16 forms take neg and abs on S0 and S1
            // (LLVM assembles them and folds float negations and absolute values into
            // them), applied to the sign bit as the float operands' are, with no
            // flushing: the selected bits are moved as they are.
            vop3::V_CNDMASK_B32_E64 => {
                let sel = if i.enc == Encoding::Vop3 {
                    w.mask_read(srcs[2], lit)?
                } else {
                    w.vcc()
                };
                if sel >> lane & 1 != 0 {
                    m.float(1, b)
                } else {
                    m.float(0, a)
                }
            }
            vop3::V_ADD_F32_E64 => add32(fa, fb, r32).to_bits(),
            vop3::V_SUB_F32_E64 => sub32(fa, fb, r32).to_bits(),
            vop3::V_SUBREV_F32_E64 => sub32(fb, fa, r32).to_bits(),
            vop3::V_MUL_F32_E64 => mul32(fa, fb, r32).to_bits(),
            vop3::V_MUL_I32_I24_E64 => {
                let p = i64::from((a << 8) as i32 >> 8) * i64::from((b << 8) as i32 >> 8);
                sat_i32(p, m.clamp)
            }
            vop3::V_MUL_U32_U24_E64 => sat_u32(u64::from(a & 0xff_ffff) * u64::from(b & 0xff_ffff), m.clamp),
            vop3::V_MIN_F32_E64 => minmax::min(fa, fb, w.nans()).to_bits(),
            vop3::V_MAX_F32_E64 => minmax::max(fa, fb, w.nans()).to_bits(),
            vop3::V_MIN_I32_E64 => (a as i32).min(b as i32) as u32,
            vop3::V_MAX_I32_E64 => (a as i32).max(b as i32) as u32,
            vop3::V_MIN_U32_E64 => a.min(b),
            vop3::V_MAX_U32_E64 => a.max(b),
            vop3::V_LSHLREV_B32_E64 => b << (a & 31),
            vop3::V_LSHRREV_B32_E64 => b >> (a & 31),
            vop3::V_ASHRREV_I32_E64 => ((b as i32) >> (a & 31)) as u32,
            vop3::V_AND_B32_E64 => a & b,
            vop3::V_OR_B32_E64 => a | b,
            vop3::V_XOR_B32_E64 => a ^ b,
            // Clamp saturates the sum at 2^32 - 1 (the carry out is written as without
            // it).
            vop3sd::V_ADD_CO_CI_U32 => {
                let c = (carry_in >> lane & 1) as u64;
                let s = a as u64 + b as u64 + c;
                carry_out |= ((s >> 32) as u32 & 1) << lane;
                sat_u32(s, m.clamp)
            }
            // v_sub_co_ci_u32 / v_subrev_co_ci_u32: borrow in and out; clamp gives 0
            // where they borrow.
            vop3sd::V_SUB_CO_CI_U32 | vop3sd::V_SUBREV_CO_CI_U32 => {
                let (x, y) = if op == vop3sd::V_SUB_CO_CI_U32 { (a, b) } else { (b, a) };
                let c = (carry_in >> lane & 1) as u64;
                let need = y as u64 + c;
                let borrow = need > x as u64;
                carry_out |= (borrow as u32) << lane;
                if borrow && m.clamp {
                    0
                } else {
                    (x as u64).wrapping_sub(need) as u32
                }
            }
            vop3::V_ADD_NC_U32_E64 => a.wrapping_add(b),
            vop3::V_SUB_NC_U32_E64 => a.wrapping_sub(b),
            // v_cvt_pk_rtz_f16_f32: two f32s to halves, rounding toward zero.
            vop3::V_CVT_PK_RTZ_F16_F32_E64 => half_rtz(fa) as u32 | (half_rtz(fb) as u32) << 16,
            // v_mul_dx9_zero_f32: a zero operand gives +0 whatever the other (inf, NaN).
            vop3::V_MUL_DX9_ZERO_F32_E64 => mul_dx9(fa, fb, r32).to_bits(),
            // v_dot2acc_f32_f16: D += S0.lo * S1.lo + S0.hi * S1.hi (halves).
            vop2_only::V_DOT2ACC_F32_F16_E32 => {
                dot2_f32(w, a, b, f(w.vread(256 + dst as u16, lane, lit)?), false).to_bits()
            }
            // v_fmamk_f32: S0 * K + S1; v_fmaak_f32: S0 * S1 + K.
            vop2_only::V_FMAMK_F32_E32 => fma32_in(fa, w.f32_in(f(lit.unwrap_or(0))), fb, r32).to_bits(),
            vop2_only::V_FMAAK_F32_E32 => fma32_in(fa, fb, w.f32_in(f(lit.unwrap_or(0))), r32).to_bits(),
            vop3::V_FMAC_F32_E64 => {
                let acc = w.f32_in(f(w.vread(256 + dst as u16, lane, lit)?));
                fma32_in(fa, fb, acc, r32).to_bits()
            }
            // VOP3-only
            vop3::V_BFE_U32 => {
                let c = w.vread(srcs[2], lane, lit)?;
                let (off, width) = (b & 31, c & 31);
                if width == 0 {
                    0
                } else {
                    (a >> off) & ((1u64 << width) - 1) as u32
                }
            }
            vop3::V_FMA_F32 => {
                let c = w.f32_in(f(m.float(2, w.vread(srcs[2], lane, lit)?)));
                fma32_in(fa, fb, c, r32).to_bits()
            }
            vop3::V_LSHL_ADD_U32 => (a << (b & 31)).wrapping_add(w.vread(srcs[2], lane, lit)?),
            // v_bfe_i32: signed bitfield extract; the shift is arithmetic, so a field
            // reaching past bit 31 reads copies of the sign.
            vop3::V_BFE_I32 => {
                let c = w.vread(srcs[2], lane, lit)?;
                let (off, width) = (b & 31, c & 31);
                if width == 0 {
                    0
                } else {
                    (((((a as i32) >> off) as u32) << (32 - width)) as i32 >> (32 - width)) as u32
                }
            }
            // v_bfi_b32: bits of S1 where S0 is set, of S2 elsewhere.
            vop3::V_BFI_B32 => (a & b) | (!a & w.vread(srcs[2], lane, lit)?),
            // v_alignbit_b32 / v_alignbyte_b32: {S0, S1} shifted right by bits / bytes.
            // S2 is 16 bits wide in the ISA's operand table: op_sel[2] picks its half.
            vop3::V_ALIGNBIT_B32 | vop3::V_ALIGNBYTE_B32 => {
                let c = u32::from(m.half(2, w.vread(srcs[2], lane, lit)?));
                let shift = if op == vop3::V_ALIGNBIT_B32 {
                    c & 31
                } else {
                    8 * (c & 3)
                };
                ((((a as u64) << 32) | b as u64) >> shift) as u32
            }
            vop3::V_MIN3_F32..=vop3::V_MED3_U32 => {
                let c = w.vread(srcs[2], lane, lit)?;
                let fc = w.f32_in(f(m.float(2, c)));
                let ieee = w.nans();
                match op {
                    vop3::V_MIN3_F32 => minmax::min3(fa, fb, fc, ieee).to_bits(),
                    vop3::V_MIN3_I32 => (a as i32).min(b as i32).min(c as i32) as u32,
                    vop3::V_MIN3_U32 => a.min(b).min(c),
                    vop3::V_MAX3_F32 => minmax::max3(fa, fb, fc, ieee).to_bits(),
                    vop3::V_MAX3_I32 => (a as i32).max(b as i32).max(c as i32) as u32,
                    vop3::V_MAX3_U32 => a.max(b).max(c),
                    vop3::V_MED3_F32 => minmax::med3(fa, fb, fc, ieee).to_bits(),
                    vop3::V_MED3_I32 => {
                        let (x, y, z) = (a as i32, b as i32, c as i32);
                        x.max(y).min(x.min(y).max(z)) as u32
                    }
                    _ => a.max(b).min(a.min(b).max(c)),
                }
            }
            // v_maxmin_*: min(max(S0, S1), S2); v_minmax_*: max(min(S0, S1), S2).
            vop3::V_MAXMIN_F32 | vop3::V_MINMAX_F32 | vop3::V_MAXMIN_U32..=vop3::V_MINMAX_I32 => {
                let c = w.vread(srcs[2], lane, lit)?;
                match op {
                    vop3::V_MAXMIN_F32 => minmax::maxmin(fa, fb, w.f32_in(f(m.float(2, c))), w.nans()).to_bits(),
                    vop3::V_MINMAX_F32 => minmax::minmax(fa, fb, w.f32_in(f(m.float(2, c))), w.nans()).to_bits(),
                    vop3::V_MAXMIN_U32 => a.max(b).min(c),
                    vop3::V_MINMAX_U32 => a.min(b).max(c),
                    vop3::V_MAXMIN_I32 => (a as i32).max(b as i32).min(c as i32) as u32,
                    _ => (a as i32).min(b as i32).max(c as i32) as u32,
                }
            }
            // v_xad_u32: (S0 ^ S1) + S2.
            vop3::V_XAD_U32 => (a ^ b).wrapping_add(w.vread(srcs[2], lane, lit)?),
            // v_mad_i32_i24 / v_mad_u32_u24: 24-bit operands, 32-bit add.
            vop3::V_MAD_I32_I24 => {
                let p = i64::from((a << 8) as i32 >> 8) * i64::from((b << 8) as i32 >> 8);
                sat_i32(p + i64::from(w.vread(srcs[2], lane, lit)? as i32), m.clamp)
            }
            vop3::V_MAD_U32_U24 => {
                let p = u64::from(a & 0xff_ffff) * u64::from(b & 0xff_ffff);
                sat_u32(p + u64::from(w.vread(srcs[2], lane, lit)?), m.clamp)
            }
            // v_perm_b32: each result byte picked from {S0, S1} by a selector byte of S2.
            vop3::V_PERM_B32 => {
                let (sel, pair) = (w.vread(srcs[2], lane, lit)?, (a as u64) << 32 | b as u64);
                let byte = |s: u32| -> u32 {
                    match s {
                        0..=7 => (pair >> (8 * s)) as u32 & 0xff,
                        8..=11 => {
                            let bit = [15, 31, 47, 63][(s - 8) as usize];
                            if pair >> bit & 1 != 0 { 0xff } else { 0 }
                        }
                        12 => 0,
                        _ => 0xff,
                    }
                };
                (0..4).fold(0, |acc, k| acc | byte((sel >> (8 * k)) & 0xff) << (8 * k))
            }
            vop3::V_ADD_LSHL_U32 => a.wrapping_add(b) << (w.vread(srcs[2], lane, lit)? & 31),
            vop3::V_ADD3_U32 => a.wrapping_add(b).wrapping_add(w.vread(srcs[2], lane, lit)?),
            vop3::V_LSHL_OR_B32 => (a << (b & 31)) | w.vread(srcs[2], lane, lit)?,
            // `{ D1, D0.64 } = S0 × S1 + S2` in 65 bits (signed or not): D1, bit 64, to
            // SDST's lane bit; clamp saturates D0 to 64 bits.
            vop3sd::V_MAD_I64_I32 => {
                let c = w.vread64(srcs[2], lane, lit)?;
                let r = i128::from(a as i32) * i128::from(b as i32) + i128::from(c as i64);
                carry_out |= ((r as u128 >> 64) as u32 & 1) << lane;
                let r = if m.clamp {
                    r.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as u64
                } else {
                    r as u64
                };
                w.vwrite(dst + 1, lane, (r >> 32) as u32)?;
                r as u32
            }
            vop3sd::V_MAD_U64_U32 => {
                let c = w.vread64(srcs[2], lane, lit)?;
                let r = u128::from(a) * u128::from(b) + u128::from(c);
                carry_out |= ((r >> 64) as u32 & 1) << lane;
                let r = if m.clamp {
                    r.min(u128::from(u64::MAX)) as u64
                } else {
                    r as u64
                };
                w.vwrite(dst + 1, lane, (r >> 32) as u32)?;
                r as u32
            }
            vop3sd::V_ADD_CO_U32..=vop3sd::V_SUBREV_CO_U32 => {
                let (r, c) = match op {
                    vop3sd::V_ADD_CO_U32 => a.overflowing_add(b),
                    vop3sd::V_SUB_CO_U32 => a.overflowing_sub(b),
                    _ => b.overflowing_sub(a),
                };
                carry_out |= (c as u32) << lane;
                r
            }
            vop3::V_BCNT_U32_B32 => a.count_ones().wrapping_add(b),
            // The mask's bits below this lane (lanes 32 to 63 of a wave64 count all 32
            // low bits, and the high half's below them).
            vop3::V_MBCNT_LO_U32_B32 => {
                let below = w.lane_id(lane).min(32);
                (a & ((1u64 << below) - 1) as u32).count_ones().wrapping_add(b)
            }
            vop3::V_MBCNT_HI_U32_B32 => {
                let below = w.lane_id(lane).saturating_sub(32);
                (a & ((1u64 << below) - 1) as u32).count_ones().wrapping_add(b)
            }
            vop3::V_XOR3_B32 => a ^ b ^ w.vread(srcs[2], lane, lit)?,
            vop3::V_AND_OR_B32 => (a & b) | w.vread(srcs[2], lane, lit)?,
            vop3::V_OR3_B32 => a | b | w.vread(srcs[2], lane, lit)?,
            // v_sub_nc_i32 / v_add_nc_i32 (no clamp: wrapping).
            vop3::V_SUB_NC_I32 => a.wrapping_sub(b),
            vop3::V_ADD_NC_I32 => a.wrapping_add(b),
            vop3::V_MUL_HI_I32 => (((a as i32 as i64) * (b as i32 as i64)) >> 32) as u32,
            vop3::V_MUL_LO_U32 => a.wrapping_mul(b),
            vop3::V_MUL_HI_U32 => ((a as u64 * b as u64) >> 32) as u32,
            // v_lshlrev_b64, v_lshrrev_b64, v_ashrrev_i64: shift S1 by S0.
            vop3::V_LSHLREV_B64..=vop3::V_ASHRREV_I64 => {
                let x = w.vread64(srcs[1], lane, lit)?;
                let v = match op {
                    vop3::V_LSHLREV_B64 => x << (a & 63),
                    vop3::V_LSHRREV_B64 => x >> (a & 63),
                    _ => ((x as i64) >> (a & 63)) as u64,
                };
                w.vwrite(dst + 1, lane, (v >> 32) as u32)?;
                v as u32
            }
            // The rest, by name, for the whole wave (no lane has been written yet).
            _ => return super::valu::valu(w, i, op, dst, srcs, m),
        };
        let r = if m.clamp && saturating {
            saturate(op, a, b)
        } else if f32_result(op) {
            w.f32_out(output_mods(r, m))
        } else {
            r
        };
        w.vwrite(dst, lane, r)?;
    }
    if matches!(
        op,
        vop3sd::V_ADD_CO_CI_U32..=vop3sd::V_SUBREV_CO_CI_U32
            | vop3sd::V_ADD_CO_U32..=vop3sd::V_SUBREV_CO_U32
            | vop3sd::V_MAD_U64_U32
            | vop3sd::V_MAD_I64_I32
    ) {
        let d = sdst.unwrap_or(VCC_LO);
        w.mask_write(d, carry_out)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    //! Single instructions against register state; encodings from
    //! `llvm-mc-19 -arch=amdgcn -mcpu=gfx1100 -show-encoding`.
    use super::*;
    use crate::rdna3::compare::{float_class, float_compare};
    use crate::rdna3::divide::{div_fixup, ldexp};
    use crate::rdna3::testing::{lanes, run, run_all, run_decoded};
    use crate::rdna3::wave::EXEC_LO;
    use crate::rdna3::wide::BASELINE_ONLY;

    #[test]
    fn sixteen_bit_ops_wrap_and_keep_the_other_half() {
        // v_add_nc_u16 v1, v2, v3
        let w = run(&[0xd703_0001, 0x0002_0702], |w| {
            lanes(w, 1, |_| 0xabcd_0000);
            lanes(w, 2, |l| 0x1111_fff0 + (l as u32 & 0xf));
            lanes(w, 3, |_| 0x2222_0020);
        })
        .unwrap();
        for lane in 0..32 {
            let lo = 0xfff0u16.wrapping_add(lane as u16 & 0xf).wrapping_add(0x20);
            assert_eq!(w.v[1][lane], 0xabcd_0000 | lo as u32, "lane {lane}");
        }
        // op_sel:[1,0,1]: the high half of src0, written to the high half.
        let w = run(&[0xd703_4801, 0x0002_0702], |w| {
            lanes(w, 1, |_| 0x0000_beef);
            lanes(w, 2, |_| 0x0005_0001);
            lanes(w, 3, |_| 0x0000_0007);
        })
        .unwrap();
        assert_eq!(w.v[1][0], 0x000c_beef);
    }

    #[test]
    fn sixteen_bit_min_max_mul_respect_signedness() {
        let set = |w: &mut Wave| {
            lanes(w, 2, |_| 0xfffe); // -2 as i16
            lanes(w, 3, |_| 0x0003);
        };
        // v_mul_lo_u16, v_max_i16, v_min_u16
        let cases = [(0xd705_0001u32, 0xfffau32), (0xd70a_0001, 3), (0xd70b_0001, 3)];
        for (w0, want) in cases {
            let w = run(&[w0, 0x0002_0702], set).unwrap();
            assert_eq!(w.v[1][5] & 0xffff, want, "{w0:#x}");
        }
    }

    #[test]
    fn signed_add_sub_and_add_lshl() {
        let set = |w: &mut Wave| {
            lanes(w, 2, |l| l as u32);
            lanes(w, 3, |_| 5);
        };
        let w = run(&[0xd725_0001, 0x0002_0702], set).unwrap(); // v_sub_nc_i32
        assert_eq!(w.v[1][2], (-3i32) as u32);
        let w = run(&[0xd726_0001, 0x0002_0702], set).unwrap(); // v_add_nc_i32
        assert_eq!(w.v[1][2], 7);
        let w = run(&[0xd647_0001, 0x0212_0702], set).unwrap(); // v_add_lshl_u32 v1, v2, v3, 4
        assert_eq!(w.v[1][3], (3 + 5) << 4);
    }

    #[test]
    fn or_not1_and_inactive_lanes() {
        // s_or_not1_b32 s1, s2, s3
        let w = run(&[0x9201_0302], |w| {
            w.s[2] = 0x0000_00f0;
            w.s[3] = 0xffff_ff0f;
        })
        .unwrap();
        assert_eq!(w.s[1], 0xf0 | 0xf0);
        assert!(w.scc);
        // Lanes outside EXEC keep their value.
        let w = run(&[0xd726_0001, 0x0002_0702], |w| {
            w.s[EXEC_LO] = 0x0000_ffff;
            lanes(w, 1, |_| 99);
        })
        .unwrap();
        assert_eq!((w.v[1][0], w.v[1][31]), (0, 99));
    }

    #[test]
    fn sub_dword_scratch_loads_and_stores() {
        let store_b8 = [0xdc61_0005, 0x00fc_0102]; // scratch_store_b8 v2, v1, off offset:5
        let load_i8 = [0xdc45_0005, 0x03fc_0002]; // scratch_load_i8 v3, v2, off offset:5
        let load_u8 = [0xdc41_0005, 0x03fc_0002]; // scratch_load_u8 v3, v2, off offset:5
        let store_b16 = [0xdc65_0006, 0x00fc_0102]; // scratch_store_b16 v2, v1, off offset:6
        let load_hi16 = [0xdc8d_0006, 0x04fc_0002]; // scratch_load_d16_hi_b16 v4, v2, off offset:6
        let store_hi16 = [0xdc95_0008, 0x00fc_0102]; // scratch_store_d16_hi_b16 v2, v1, off offset:8
        let load_u16 = [0xdc49_0008, 0x03fc_0002]; // scratch_load_u16 v3, v2, off offset:8
        let setup = |w: &mut Wave| {
            lanes(w, 1, |l| 0x8765_4380 + l as u32);
            lanes(w, 2, |l| 16 * l as u32);
            lanes(w, 4, |_| 0x0000_1234);
        };
        let w = run_all(&[&store_b8, &load_i8], setup).unwrap();
        assert_eq!(w.v[3][1], 0xffff_ff81, "sign-extended byte");
        let w = run_all(&[&store_b8, &load_u8], setup).unwrap();
        assert_eq!(w.v[3][1], 0x81, "zero-extended byte");
        let w = run_all(&[&store_b16, &load_hi16], setup).unwrap();
        assert_eq!(w.v[4][2], 0x4382_1234, "d16 high half kept the low half");
        let w = run_all(&[&store_hi16, &load_u16], setup).unwrap();
        assert_eq!(w.v[3][2], 0x8765, "high half stored");
        // Outside a lane's private memory: an error, not a panic.
        let far = |w: &mut Wave| lanes(w, 2, |_| u32::MAX - 2);
        assert!(run_all(&[&store_b16], far).is_err());
    }

    #[test]
    fn packed_f16_selects_and_negates_each_half() {
        let set = |w: &mut Wave| {
            lanes(w, 2, |_| 0x4000_4200); // (hi 2.0, lo 3.0)
            lanes(w, 3, |_| 0x4500_3800); // (hi 5.0, lo 0.5)
            lanes(w, 4, |_| 0x3c00_4400); // (hi 1.0, lo 4.0)
        };
        // v_pk_fma_f16 v1, v2, v3, v4 op_sel:[1,0,0] op_sel_hi:[0,1,1] neg_lo:[1,0,0] neg_hi:[0,1,0]
        let w = run(&[0xcc0e_4a01, 0x3412_0702], set).unwrap();
        // lo: -(2.0) * 0.5 + 4.0 = 3.0; hi: 3.0 * -(5.0) + 1.0 = -14.0
        assert_eq!(w.v[1][9], 0xcb00_4200);
        // v_pk_fma_f16 v1, v2, 1.0, v4: the inline constant is a half in both halves.
        let w = run(&[0xcc0e_4001, 0x1c11_e502], set).unwrap();
        assert_eq!(w.v[1][0], 0x4200_4700);
    }

    #[test]
    fn perm_picks_bytes_signs_and_constants() {
        // v_perm_b32 v1, v2, v3, v4
        let w = run(&[0xd644_0001, 0x0412_0702], |w| {
            lanes(w, 2, |_| 0x1122_3344);
            lanes(w, 3, |_| 0x5566_7788);
            lanes(w, 4, |_| 0x0c07_000d);
        })
        .unwrap();
        assert_eq!(w.v[1][0], 0x0011_88ff);
    }

    #[test]
    fn lds_sub_dword_and_wide_accesses() {
        let store_b16 = [0xd87c_0000, 0x0000_0201]; // ds_store_b16 v1, v2
        let load_i16 = [0xd8ec_0000, 0x0300_0001]; // ds_load_i16 v3, v1
        let load_u8 = [0xd8e8_0001, 0x0400_0001]; // ds_load_u8 v4, v1 offset:1
        let w = run_all(&[&store_b16, &load_i16, &load_u8], |w| {
            lanes(w, 1, |l| 2 * l as u32);
            lanes(w, 2, |l| 0xabcd_8001 + l as u32);
        })
        .unwrap();
        assert_eq!(w.v[3][4], 0xffff_8005, "sign-extended half");
        assert_eq!(w.v[4][4], 0x80, "zero-extended byte");
        let store_b128 = [0xdb7c_0000, 0x0000_0105]; // ds_store_b128 v5, v[1:4]
        let load_b128 = [0xdbfc_0000, 0x0100_0005]; // ds_load_b128 v[1:4], v5
        let w = run_all(&[&store_b128, &load_b128], |w| {
            for r in 1..5 {
                lanes(w, r, |l| (r * 100 + l) as u32);
            }
            lanes(w, 5, |l| 16 * l as u32);
        })
        .unwrap();
        assert_eq!((1..5).map(|r| w.v[r][7]).collect::<Vec<_>>(), [107, 207, 307, 407]);
    }

    #[test]
    fn permlane_within_and_across_rows() {
        // v_permlane16_b32 v1, v2, s3, s4 with lane i of a row reading lane 15 - i.
        let set = |w: &mut Wave| {
            lanes(w, 2, |l| 100 + l as u32);
            lanes(w, 1, |_| 7);
            w.s[3] = 0x89ab_cdef;
            w.s[4] = 0x0123_4567;
        };
        let w = run(&[0xd65b_0001, 0x0010_0702], set).unwrap();
        let want: Vec<u32> = (0..32).map(|l| 100 + (l / 16 * 16 + 15 - l % 16)).collect();
        assert_eq!(w.v[1].to_vec(), want);
        // v_permlanex16_b32: the same selects, from the other row.
        let w = run(&[0xd65c_0001, 0x0010_0702], set).unwrap();
        let want: Vec<u32> = (0..32).map(|l| 100 + (((l / 16) ^ 1) * 16 + 15 - l % 16)).collect();
        assert_eq!(w.v[1].to_vec(), want);
        // Lane 15 reads the disabled lane 0: it keeps its value, gets 0 with bound
        // control (op_sel:[0,1]), or fetches lane 0 anyway (op_sel:[1,1]).
        let off = |w: &mut Wave| {
            set(w);
            w.s[EXEC_LO] = 0xffff_fffe;
        };
        let w = run(&[0xd65b_0001, 0x0010_0702], off).unwrap();
        assert_eq!((w.v[1][15], w.v[1][14]), (7, 101));
        let w = run(&[0xd65b_1001, 0x0010_0702], off).unwrap();
        assert_eq!(w.v[1][15], 0);
        let w = run(&[0xd65b_1801, 0x0010_0702], off).unwrap();
        assert_eq!(w.v[1][15], 100);
    }

    #[test]
    fn dpp8_permutes_within_groups_of_eight() {
        // v_mov_b32_dpp v1, v2 dpp8:[7,6,5,4,3,2,1,0]
        let w = run(&[0x7e02_02e9, 0x0539_7702], |w| lanes(w, 2, |l| l as u32)).unwrap();
        let want: Vec<u32> = (0..32).map(|l| (l & !7) + 7 - l % 8).collect();
        assert_eq!(w.v[1].to_vec(), want);
        // v_add_f32_dpp v1, v2, v3 dpp8:[1,0,3,2,5,4,7,6]
        let w = run(&[0x0602_06e9, 0xde54_c102], |w| {
            lanes(w, 2, |l| (l as f32).to_bits());
            lanes(w, 3, |_| 0.5f32.to_bits());
        })
        .unwrap();
        assert_eq!(f32::from_bits(w.v[1][4]), 5.5);
        assert_eq!(f32::from_bits(w.v[1][5]), 4.5);
    }

    #[test]
    fn mode_register_flushes_f32_denormals() {
        let add = [0x0602_0702]; // v_add_f32_e32 v1, v2, v3
        let (tiny, least_normal) = ((-127f32).exp2(), (-126f32).exp2());
        let set = |w: &mut Wave| {
            lanes(w, 2, |_| tiny.to_bits());
            lanes(w, 3, |_| least_normal.to_bits());
        };
        let sum = |prog: &[&[u32]]| f32::from_bits(run_all(prog, set).unwrap().v[1][0]);
        // Kept by default (RSRC1's usual FLOAT_MODE 0xf0).
        assert_eq!(sum(&[&add]), tiny + least_normal);
        // s_denorm_mode 0xe: f32 inputs flush (bit 4 clear), outputs kept.
        assert_eq!(sum(&[&[0xbf92_000e], &add]), least_normal);
        // s_setreg_imm32_b32 hwreg(HW_REG_MODE), 0xc0: f32 flushes both ways (f16/f64
        // kept); s_getreg reads it back.
        let w = run_all(&[&[0xb980_f801, 0xc0], &add, &[0xb880_f801]], set).unwrap();
        assert_eq!((f32::from_bits(w.v[1][0]), w.s[0]), (least_normal, 0xc0));
        // MODE 0 flushes every format: f32 inputs here.
        let w = run_all(&[&[0xb980_f801, 0], &add], set).unwrap();
        assert_eq!(f32::from_bits(w.v[1][0]), least_normal);
        // Outputs flush (bit 5 clear): 2^-130 + 2^-130 is a denormal, written as zero.
        let smaller = (-130f32).exp2();
        let twice = |w: &mut Wave| {
            lanes(w, 2, |_| smaller.to_bits());
            lanes(w, 3, |_| smaller.to_bits());
        };
        let w = run_all(&[&[0xbf92_000d], &add], twice).unwrap();
        assert_eq!(w.v[1][0], 0);
        let w = run_all(&[&add], twice).unwrap();
        assert_eq!(f32::from_bits(w.v[1][0]), 2.0 * smaller);
        // A hardware register id gfx11 does not have: an error.
        assert!(run_all(&[&[0xb880_f804]], |_| {}).is_err());
    }

    /// MODE bits 7:6 flush f16 and f64 denormals: inputs of arithmetic, compares and
    /// conversions (bit 6 clear), results (bit 7 clear); `v_cmp_class` reads the bits
    /// as they are; the f16 dot products refuse (their flushing is not specified).
    #[test]
    fn mode_register_flushes_f16_and_f64_denormals() {
        let (keep, flush_in, flush_out): (&[u32], &[u32], &[u32]) = (&[0xbf92_000f], &[0xbf92_000b], &[0xbf92_0007]);
        let pair = |w: &mut Wave, r: usize, x: f64| {
            lanes(w, r, |_| x.to_bits() as u32);
            lanes(w, r + 1, |_| (x.to_bits() >> 32) as u32);
        };
        let f64_of = |w: &Wave, r: usize| f64::from_bits(u64::from(w.v[r][0]) | u64::from(w.v[r + 1][0]) << 32);
        let (tiny, least) = ((-1030f64).exp2(), f64::MIN_POSITIVE);
        // v_add_f64 v[2:3], v[4:5], v[6:7]: a denormal input read as zero.
        let add64: &[u32] = &[0xd727_0002, 0x0002_0d04];
        let with = |mode: &[u32], a: f64, b: f64| {
            let w = run_all(&[mode, add64], |w| {
                pair(w, 4, a);
                pair(w, 6, b);
            })
            .unwrap();
            f64_of(&w, 2)
        };
        assert_eq!(with(keep, tiny, least), tiny + least);
        assert_eq!(with(flush_in, tiny, least), least);
        assert_eq!(with(flush_out, tiny, least), tiny + least, "a normal result stays");
        // A denormal result is written as a signed zero when outputs flush.
        assert_eq!(with(keep, tiny, tiny), 2.0 * tiny);
        assert_eq!(with(flush_out, -tiny, -tiny).to_bits(), (-0.0f64).to_bits());
        assert_eq!(with(flush_in, tiny, tiny), 0.0);
        // v_cmp_eq_f64 vcc, v[4:5], v[6:7]: a denormal equals zero when inputs flush.
        let cmp: &[u32] = &[0x7c44_0d04];
        let vcc = |mode: &[u32]| {
            run_all(&[mode, cmp], |w| {
                pair(w, 4, tiny);
                pair(w, 6, 0.0);
            })
            .unwrap()
            .vcc()
        };
        assert_eq!((vcc(keep), vcc(flush_in)), (0, u32::MAX));
        // v_cmp_class_f64 s0, v[4:5], v8 (0x80: positive denormal) classifies the bits.
        let class = run_all(&[flush_in, &[0xd47f_0000, 0x0002_1104]], |w| {
            pair(w, 4, tiny);
            lanes(w, 8, |_| 0x80);
        })
        .unwrap();
        assert_eq!(class.s[0], u32::MAX);
        // v_trunc_f64 and v_cvt_f32_f64 read flushed inputs too.
        let trunc = run_all(&[flush_in, &[0x7e04_2f04]], |w| pair(w, 4, -tiny)).unwrap();
        assert_eq!(f64_of(&trunc, 2).to_bits(), (-0.0f64).to_bits());
        // Halves: v_add_f16 v1, v2, v3 and v_pk_add_f16 v1, v2, v3.
        let halves = |mode: &[u32], op: &[u32], a: u32, b: u32| {
            run_all(&[mode, op], |w| {
                lanes(w, 2, |_| a);
                lanes(w, 3, |_| b);
            })
            .unwrap()
            .v[1][0]
        };
        let (add16, pk_add): (&[u32], &[u32]) = (&[0x6402_0702], &[0xcc0f_4001, 0x1802_0702]);
        assert_eq!(halves(keep, add16, 0x0001, 0x0400) & 0xffff, 0x0401);
        assert_eq!(halves(flush_in, add16, 0x0001, 0x0400) & 0xffff, 0x0400);
        assert_eq!(halves(flush_out, add16, 0x0001, 0x0001) & 0xffff, 0);
        assert_eq!(halves(keep, add16, 0x0001, 0x0001) & 0xffff, 0x0002);
        assert_eq!(halves(flush_in, pk_add, 0x0400_0001, 0x0001_0400), 0x0400_0400);
        assert_eq!(halves(flush_out, pk_add, 0x8001_0001, 0x8001_0001), 0x8000_0000);
        // v_max_f16 v1, v2, v3: max(least denormal, -0) is +0 once the input flushes.
        let max16: &[u32] = &[0x7202_0702];
        assert_eq!(halves(keep, max16, 0x0001, 0x8000) & 0xffff, 0x0001);
        assert_eq!(halves(flush_in, max16, 0x0001, 0x8000) & 0xffff, 0x0000);
        // Conversions: v_cvt_f16_f32 v1, v2 flushes its half result; v_cvt_f32_f16 v1,
        // v2 its half input.
        let tiny32 = (-20f32).exp2().to_bits();
        assert_eq!(halves(keep, &[0x7e02_1502], tiny32, 0) & 0xffff, 0x0010);
        assert_eq!(halves(flush_out, &[0x7e02_1502], tiny32, 0) & 0xffff, 0);
        assert_eq!(f32::from_bits(halves(keep, &[0x7e02_1702], 1, 0)), (-24f32).exp2());
        assert_eq!(halves(flush_in, &[0x7e02_1702], 1, 0), 0);
        // v_dot2_f32_f16 v1, v2, v3, v4: its halves go through f16_to_f32, which
        // flushes a denormal input under f16 input flushing (v4, the accumulator, is 0).
        let dot: &[u32] = &[0xcc13_4001, 0x1c12_0702];
        assert_eq!(f32::from_bits(halves(keep, dot, 0x0001, 0x3c00)), (-24f32).exp2());
        assert_eq!(halves(flush_in, dot, 0x0001, 0x3c00), 0);
        assert_eq!(f32::from_bits(halves(flush_out, dot, 0x0001, 0x3c00)), (-24f32).exp2());
        // s_setreg_imm32_b32 hwreg(HW_REG_MODE), 0x30: f32 kept, f16/f64 flushed.
        let w = run_all(&[&[0xb980_f801, 0x30], add64], |w| {
            pair(w, 4, tiny);
            pair(w, 6, tiny);
        })
        .unwrap();
        assert_eq!(f64_of(&w, 2), 0.0);
    }

    /// MODE's round fields (bits 1:0 f32, 3:2 f16/f64) from `s_round_mode` and
    /// `s_setreg`: IEEE operations round in their direction, the whole-wave paths step
    /// aside, and what is not computed in a directed mode is refused by name.
    #[test]
    fn mode_register_rounds_in_its_direction() {
        let (near, up, down, zero): (&[u32], &[u32], &[u32], &[u32]) =
            (&[0xbf91_0000], &[0xbf91_0001], &[0xbf91_0002], &[0xbf91_0003]);
        let one_ulp = 1.0 + f32::EPSILON;
        // Just above half an ulp of 1: nearest and up give 1 + ulp, down and zero 1.
        let above_half = (-24f32).exp2() + (-30f32).exp2();
        let f32_op = |mode: &[u32], op: &[u32], a: f32, b: f32, c: f32| {
            let w = run_all(&[mode, op], |w| {
                lanes(w, 2, |_| a.to_bits());
                lanes(w, 3, |_| b.to_bits());
                lanes(w, 4, |_| c.to_bits());
            })
            .unwrap();
            f32::from_bits(w.v[1][0])
        };
        let add: &[u32] = &[0x0602_0702];
        assert_eq!(f32_op(near, add, 1.0, above_half, 0.0), one_ulp);
        assert_eq!(f32_op(up, add, 1.0, above_half, 0.0), one_ulp);
        assert_eq!(f32_op(down, add, 1.0, above_half, 0.0), 1.0);
        assert_eq!(f32_op(zero, add, 1.0, above_half, 0.0), 1.0);
        assert_eq!(f32_op(down, add, -1.0, -above_half, 0.0), -one_ulp);
        assert_eq!(
            f32_op(up, add, 1.0, (-60f32).exp2(), 0.0),
            one_ulp,
            "any excess rounds up"
        );
        // x - x is -0 rounding toward -infinity.
        assert_eq!(f32_op(down, add, 1.5, -1.5, 0.0).to_bits(), (-0.0f32).to_bits());
        // v_mul_f32: overflow gives the largest finite value toward zero.
        let mul: &[u32] = &[0x1002_0702];
        assert_eq!(f32_op(zero, mul, f32::MAX, 2.0, 0.0), f32::MAX);
        assert_eq!(f32_op(up, mul, f32::MAX, 2.0, 0.0), f32::INFINITY);
        assert_eq!(f32_op(up, mul, -f32::MAX, 2.0, 0.0), -f32::MAX);
        // v_fma_f32 v1, v2, v3, v4 rounds once: 1 × 1 + 2^-60 up is 1 + ulp.
        let fma: &[u32] = &[0xd613_0001, 0x0412_0702];
        assert_eq!(f32_op(up, fma, 1.0, 1.0, (-60f32).exp2()), one_ulp);
        assert_eq!(f32_op(near, fma, 1.0, 1.0, (-60f32).exp2()), 1.0);
        // v_cvt_f32_i32 v1, v2: 2^24 + 1 up is 2^24 + 2.
        let w = run_all(&[up, &[0x7e02_0b02]], |w| lanes(w, 2, |_| (1 << 24) + 1)).unwrap();
        assert_eq!(f32::from_bits(w.v[1][0]), 16_777_218.0);
        // VOPD: v_dual_add_f32 v1, v2, v3 :: v_dual_mul_f32 v4, v5, v6, toward zero.
        let w = run_all(&[zero, &[0xc906_0702, 0x0104_0d05]], |w| {
            lanes(w, 2, |_| 1.0f32.to_bits());
            lanes(w, 3, |_| above_half.to_bits());
            lanes(w, 5, |_| f32::MAX.to_bits());
            lanes(w, 6, |_| 2.0f32.to_bits());
        })
        .unwrap();
        assert_eq!((f32::from_bits(w.v[1][0]), f32::from_bits(w.v[4][0])), (1.0, f32::MAX));
        // f16/f64 toward +infinity (s_round_mode 0x4) leaves f32 rounding to nearest.
        let f16_f64_up: &[u32] = &[0xbf91_0004];
        assert_eq!(f32_op(f16_f64_up, add, 1.0, (-30f32).exp2(), 0.0), 1.0);
        let w = run_all(&[f16_f64_up, &[0xd727_0002, 0x0002_0d04]], |w| {
            lanes(w, 4, |_| 0);
            lanes(w, 5, |_| (1.0f64.to_bits() >> 32) as u32);
            lanes(w, 6, |_| (-60f64).exp2().to_bits() as u32);
            lanes(w, 7, |_| ((-60f64).exp2().to_bits() >> 32) as u32);
        })
        .unwrap();
        let sum = f64::from_bits(u64::from(w.v[2][0]) | u64::from(w.v[3][0]) << 32);
        assert_eq!(sum, 1.0 + f64::EPSILON, "v_add_f64 1 + 2^-60 up");
        // v_pk_add_f16 v1, v2, v3 toward -infinity: 1 + 2^-12 (not a half) per half.
        let w = run_all(&[&[0xbf91_0008], &[0xcc0f_4001, 0x1802_0702]], |w| {
            lanes(w, 2, |_| 0x3c00_bc00);
            lanes(w, 3, |_| 0x0c00_8c00);
        })
        .unwrap();
        assert_eq!(
            w.v[1][0], 0x3c00_bc01,
            "1 + 2^-12 down is 1, -1 - 2^-12 down is -(1 + 2^-10)"
        );
        // v_cvt_f16_f32 v1, v2 toward zero: 65536 is past the largest half, 65504 stays.
        let w = run_all(&[&[0xbf91_000c], &[0x7e02_1502]], |w| {
            lanes(w, 2, |_| 65536f32.to_bits())
        })
        .unwrap();
        assert_eq!(w.v[1][0] & 0xffff, 0x7bff);
        // s_setreg_imm32_b32 hwreg(HW_REG_MODE, 0, 4), 2: f32 toward -infinity.
        assert_eq!(f32_op(&[0xb980_1801, 2], add, 1.0, above_half, 0.0), 1.0);
        // v_sqrt_f32 v1, v2 of 2: the f32 nearest √2 (0x3fb504f3) lies below it, so
        // toward zero keeps it and toward +infinity takes the next; f16/f64 up leaves
        // f32 to nearest.
        let sqrt: &[u32] = &[0x7e02_6702];
        assert_eq!(f32_op(zero, sqrt, 2.0, 0.0, 0.0).to_bits(), 0x3fb5_04f3);
        assert_eq!(f32_op(up, sqrt, 2.0, 0.0, 0.0).to_bits(), 0x3fb5_04f4);
        assert_eq!(f32_op(f16_f64_up, sqrt, 2.0, 0.0, 0.0).to_bits(), 0x3fb5_04f3);
        // v_rcp_f32 v1, v2 of 3: nearest 0x3eaaaaab lies above 1/3, down takes 0x3eaaaaaa.
        let rcp: &[u32] = &[0x7e02_5502];
        assert_eq!(f32_op(near, rcp, 3.0, 0.0, 0.0).to_bits(), 0x3eaa_aaab);
        assert_eq!(f32_op(down, rcp, 3.0, 0.0, 0.0).to_bits(), 0x3eaa_aaaa);
        assert_eq!(f32_op(up, rcp, 3.0, 0.0, 0.0).to_bits(), 0x3eaa_aaab);
        assert_eq!(f32_op(up, rcp, 4.0, 0.0, 0.0), 0.25, "exact in every mode");
    }

    #[test]
    fn scalar_compares_signed_and_unsigned() {
        // s2 = -2, s3 = 1: less as i32, greater as u32.
        let set = |w: &mut Wave| {
            w.s[2] = (-2i32) as u32;
            w.s[3] = 1;
        };
        let scc = |words: u32| run(&[words], set).unwrap().scc;
        assert!(scc(0xbf04_0302)); // s_cmp_lt_i32 s2, s3
        assert!(!scc(0xbf0a_0302)); // s_cmp_lt_u32 s2, s3
        assert!(scc(0xb382_ffff)); // s_cmpk_lt_i32 s2, 0xffff (-1): -2 < -1
        assert!(!scc(0xb682_ffff)); // s_cmpk_lt_u32 s2, 0xffff: 0xfffffffe < 0xffff fails
    }

    #[test]
    fn float_compare_predicates_handle_nan() {
        let nan = f64::NAN;
        // LT, LG, O, U, NGE, NEQ with an unordered pair: only the unordered-true ones hold.
        let got: Vec<bool> = [1, 5, 7, 8, 9, 13]
            .iter()
            .map(|&k| float_compare(k, nan, 1.0))
            .collect();
        assert_eq!(got, [false, false, false, true, true, true]);
        let got: Vec<bool> = (0..16).map(|k| float_compare(k, 1.0, 2.0)).collect();
        let want = [
            false, true, false, true, false, true, false, true, false, true, false, true, false, true, false, true,
        ];
        assert_eq!(got, want);
    }

    #[test]
    fn division_helpers() {
        // ldexp rounds once, into the denormals too.
        assert_eq!(ldexp(1.5, -1074), f64::from_bits(2), "1.5 * 2^-1074 ties to even 2");
        assert_eq!(ldexp(3.0, 1023), f64::INFINITY);
        assert_eq!(ldexp(1.0, 1023), 2f64.powi(1023));
        assert_eq!(ldexp(-0.75, -1075), -0.0);
        assert_eq!(ldexp(f64::MIN_POSITIVE / 4.0, 2), f64::MIN_POSITIVE);
        // Classes: NaNs, infinities, normals, denormals, zeros by sign.
        let c32 = |x: f32| float_class(x.to_bits() as u64, 32);
        assert_eq!(c32(f32::from_bits(0x7fa0_0000)), 0);
        assert_eq!(
            [c32(f32::NAN), c32(f32::NEG_INFINITY), c32(-1.0), c32(-1e-40)],
            [1, 2, 3, 4]
        );
        assert_eq!(
            [c32(-0.0), c32(0.0), c32(1e-40), c32(1.0), c32(f32::INFINITY)],
            [5, 6, 7, 8, 9]
        );
        assert_eq!(float_class(0x7c00, 16), 9);
        assert_eq!(float_class(f64::MIN_POSITIVE.to_bits() / 2, 64), 7);
        // Fixup special cases.
        assert!(div_fixup(0.0, 0.0, 0.0, false).is_nan());
        assert_eq!(div_fixup(0.0, -0.0, 1.0, false), f64::NEG_INFINITY);
        assert_eq!(div_fixup(5.0, f64::INFINITY, -2.0, true), -0.0);
        assert_eq!(div_fixup(2.5, -2.0, 5.0, true), -2.5);
    }

    #[test]
    fn leading_bit_counts() {
        // v_clz_i32_u32 v5, v20; v_add_nc_u32 v5, 32, v5: the 64-bit clz idiom.
        let w = run_all(&[&[0x7e0a_7314], &[0x4a0a_0aa0]], |w| lanes(w, 20, |_| 0x2f716b)).unwrap();
        assert_eq!(w.v[5][0], 42);
        // v_cls_i32 v5, v20: the sign bit counts.
        let inputs = [1u32, (-2i32) as u32, 0, u32::MAX, 0x4000_0000];
        let w = run(&[0x7e0a_7714], |w| lanes(w, 20, |l| inputs[l % 5])).unwrap();
        assert_eq!(&w.v[5][..5], &[31, 31, u32::MAX, u32::MAX, 1]);
    }

    #[test]
    fn dx9_multiply_and_half_dot_products() {
        let set = |w: &mut Wave| {
            lanes(w, 2, |l| if l == 0 { 0.0f32.to_bits() } else { 0x4000_3c00 }); // lane 0: 0.0; else halves (2, 1)
            lanes(w, 3, |l| if l == 0 { f32::INFINITY.to_bits() } else { 0x4200_4400 }); // (3, 4)
            lanes(w, 1, |_| 0.5f32.to_bits());
        };
        // v_mul_dx9_zero_f32 v1, v2, v3: 0 * inf = 0.
        let w = run(&[0x0e02_0702], set).unwrap();
        assert_eq!(w.v[1][0], 0);
        // v_dot2acc_f32_f16 v1, v2, v3: 0.5 + 1*4 + 2*3.
        let w = run(&[0x0402_0702], set).unwrap();
        assert_eq!(f32::from_bits(w.v[1][1]), 10.5);
        // The VOPD forms: v_dual_dot2acc_f32_f16 v1, v2, v3 :: v_dual_mov_b32 v4, v5.
        let w = run(&[0xcb10_0702, 0x0104_0105], set).unwrap();
        assert_eq!(f32::from_bits(w.v[1][1]), 10.5);
        let w = run(&[0xc9d0_0702, 0x0104_0105], set).unwrap();
        assert_eq!(w.v[1][0], 0);
    }

    /// `fma32` rounds as `f32::mul_add` does: random operands of every magnitude,
    /// products that land on a rounding tie with a tiny addend, cancellations, signed
    /// zeros, subnormals, overflow, infinities and NaNs.
    #[test]
    fn fma32_rounds_as_mul_add() {
        let mut next = crate::rdna3::testing::xorshift64(0x2545_f491_4f6c_dd1d);
        let check = |a: f32, b: f32, c: f32| {
            let (got, want) = (fma32(a, b, c), a.mul_add(b, c));
            assert!(
                got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()),
                "fma({a:e}, {b:e}, {c:e}) = {got:e}, want {want:e}"
            );
        };
        let specials = [
            0.0f32,
            -0.0,
            1.0,
            -1.0,
            f32::MIN_POSITIVE,
            1e-45,
            -1e-45,
            f32::MAX,
            f32::MIN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            f32::EPSILON,
            1.0 + f32::EPSILON,
        ];
        for &a in &specials {
            for &b in &specials {
                for &c in &specials {
                    check(a, b, c);
                }
            }
        }
        for _ in 0..200_000 {
            let r = next();
            let (a, b, c) = (
                f32::from_bits(r as u32),
                f32::from_bits((r >> 32) as u32),
                f32::from_bits(next() as u32),
            );
            check(a, b, c);
            // Exponents close together, so the sum cancels or rounds at a tie.
            let near = |v: u64| f32::from_bits((v as u32 & 0x807f_ffff) | (120 + (v >> 40) as u32 % 16) << 23);
            let (a, b) = (near(next()), near(next()));
            check(a, b, -(a * b));
            check(a, b, (a * b) * f32::EPSILON * 0.5);
            check(a, b, -(a * b) * f32::EPSILON * 0.25);
            // (1 + k·2^-12)² has a 24th-and-beyond tail: ties and near-ties.
            let t = 1.0 + (next() % 4096) as f32 / 4096.0;
            check(t, t, f32::from_bits(next() as u32 & 0x80ff_ffff));
            check(t, -t, 1e-30);
        }
    }

    /// The whole-wave fast path gives exactly what the lane-by-lane path gives, for
    /// each of its operations, on random, special and denormal operands, with some
    /// lanes off, and with scalar and inline-constant sources.
    #[test]
    fn fast_path_matches_the_lane_by_lane_path() {
        // (encoding, sources): VOP2/VOP1 e32 and VOP3 forms, v4/v5/v6 and scalars.
        let cases: &[&[u32]] = &[
            &[0x0604_0b04],              // v_add_f32_e32 v2, v4, v5
            &[0x0804_0b04],              // v_sub_f32_e32 v2, v4, v5
            &[0x0a04_0b04],              // v_subrev_f32_e32 v2, v4, v5 (not on the fast path)
            &[0x1004_0b04],              // v_mul_f32_e32 v2, v4, v5
            &[0x2004_0b04],              // v_max_f32_e32 v2, v4, v5
            &[0x1e04_0b04],              // v_min_f32_e32 v2, v4, v5
            &[0x4a04_0b04],              // v_add_nc_u32_e32 v2, v4, v5
            &[0x4c04_0b04],              // v_sub_nc_u32_e32 v2, v4, v5
            &[0x3604_0b04],              // v_and_b32_e32 v2, v4, v5
            &[0x3804_0b04],              // v_or_b32_e32 v2, v4, v5
            &[0x3a04_0b04],              // v_xor_b32_e32 v2, v4, v5
            &[0x3004_0b04],              // v_lshlrev_b32_e32 v2, v4, v5
            &[0x3204_0b04],              // v_lshrrev_b32_e32 v2, v4, v5
            &[0x3404_0b04],              // v_ashrrev_i32_e32 v2, v4, v5
            &[0x7e04_0304],              // v_mov_b32_e32 v2, v4
            &[0x7e04_0203],              // v_mov_b32_e32 v2, s3
            &[0x5604_0b04],              // v_fmac_f32_e32 v2, v4, v5
            &[0xd613_0002, 0x041a_0b04], // v_fma_f32 v2, v4, v5, v6
            &[0xd72c_0002, 0x0002_0b04], // v_mul_lo_u32 v2, v4, v5
            &[0xd646_0002, 0x041a_0b04], // v_lshl_add_u32 v2, v4, v5, v6
            &[0xd655_0002, 0x041a_0b04], // v_add3_u32 v2, v4, v5, v6
            &[0xd656_0002, 0x041a_0b04], // v_lshl_or_b32 v2, v4, v5, v6
            &[0x0604_0af2],              // v_add_f32_e32 v2, 1.0, v5
            &[0x4a04_0a03],              // v_add_nc_u32_e32 v2, s3, v5
            &[0xd700_6a02, 0x0002_0b04], // v_add_co_u32 v2, vcc_lo, v4, v5
            &[0x4004_0b04],              // v_add_co_ci_u32_e32 v2, vcc_lo, v4, v5, vcc_lo
            &[0xd700_0602, 0x0002_0a03], // v_add_co_u32 v2, s6, s3, v5
            &[0xd520_0602, 0x001e_0b04], // v_add_co_ci_u32_e64 v2, s6, v4, v5, s7
            &[0x4c04_0b04],              // v_sub_nc_u32_e32 v2, v4, v5
            &[0x4e04_0b04],              // v_subrev_nc_u32_e32 v2, v4, v5
            &[0x0204_0b04],              // v_cndmask_b32_e32 v2, v4, v5, vcc_lo
            &[0xd501_0002, 0x001e_0b04], // v_cndmask_b32_e64 v2, v4, v5, s7
            &[0x2204_0b04],              // v_min_i32_e32 v2, v4, v5
            &[0x2404_0b04],              // v_max_i32_e32 v2, v4, v5
            &[0x2604_0b04],              // v_min_u32_e32 v2, v4, v5
            &[0x2804_0b04],              // v_max_u32_e32 v2, v4, v5
            &[0x1604_0b04],              // v_mul_u32_u24_e32 v2, v4, v5
            &[0xd610_0002, 0x041a_0b04], // v_bfe_u32 v2, v4, v5, v6
            &[0xd610_0002, 0x0229_1504], // v_bfe_u32 v2, v4, 10, 10
            &[0xd73c_0002, 0x0002_0a04], // v_lshlrev_b64 v[2:3], v4, v[5:6]
            &[0xd73c_0002, 0x0002_0882], // v_lshlrev_b64 v[2:3], 2, v[4:5]
            &[0xd73c_0004, 0x0002_0882], // v_lshlrev_b64 v[4:5], 2, v[4:5]
            &[0xd73c_0002, 0x0002_0880], // v_lshlrev_b64 v[2:3], 0, v[4:5]
            &[0xd73c_0002, 0x0002_08a0], // v_lshlrev_b64 v[2:3], 32, v[4:5]
            &[0xd73c_0002, 0x0002_08a8], // v_lshlrev_b64 v[2:3], 40, v[4:5]
            &[0xd73c_0002, 0x0002_08bf], // v_lshlrev_b64 v[2:3], 63, v[4:5]
            &[0xd73c_0002, 0x0002_0807], // v_lshlrev_b64 v[2:3], s7, v[4:5]
            &[0x5804_0b04, 0x4049_0fdb], // v_fmamk_f32 v2, v4, 0x40490fdb, v5
            &[0x5a04_0b04, 0x4049_0fdb], // v_fmaak_f32 v2, v4, v5, 0x40490fdb
            &[0x7c98_0b04],              // v_cmp_gt_u32_e32 vcc_lo, v4, v5
            &[0x7c9a_0a03],              // v_cmp_ne_u32_e32 vcc_lo, s3, v5
            &[0x7c82_0b04],              // v_cmp_lt_i32_e32 vcc_lo, v4, v5
            &[0x7c86_0b04],              // v_cmp_le_i32_e32 vcc_lo, v4, v5
            &[0x7c22_0b04],              // v_cmp_lt_f32_e32 vcc_lo, v4, v5
            &[0x7c30_0b04],              // v_cmp_u_f32_e32 vcc_lo, v4, v5
            &[0x7c32_0b04],              // v_cmp_nge_f32_e32 vcc_lo, v4, v5
            &[0x7d98_0b04],              // v_cmpx_gt_u32_e32 v4, v5
            &[0x7d22_0af2],              // v_cmpx_lt_f32_e32 1.0, v5
            &[0xd44c_0006, 0x0002_0b04], // v_cmp_gt_u32_e64 s6, v4, v5
            &[0xd411_0006, 0x2002_0b04], // v_cmp_lt_f32_e64 s6, -v4, v5 (modifiers: lane by lane)
        ];
        let specials = [
            0u32,
            0x8000_0000,
            0x7f80_0000,
            0xff80_0000,
            0x7fc0_0000,
            1,
            0x807f_ffff,
            0x3f80_0000,
            u32::MAX,
        ];
        let r = (0..3 * 32)
            .map(|k| (k as u32).wrapping_mul(0x9e37_79b9) ^ 0x5bd1_e995)
            .collect::<Vec<_>>();
        // Every f32, i32 and u32 compare (VOPC: v_cmp_* vcc_lo, v4, v5, and the u32 ones
        // against a literal), which run decoded once.
        let compares: Vec<Vec<u32>> = (0x10..=0x1f)
            .chain(0x40..=0x4f)
            .map(|op: u32| vec![0x7c00_0000 | op << 17 | 5 << 9 | 0x104])
            .chain((0x48..=0x4f).map(|op: u32| vec![0x7c00_0000 | op << 17 | 5 << 9 | 0xff, 0x8000_0001]))
            .collect();
        let cases = cases.iter().map(|c| c.to_vec()).chain(compares).collect::<Vec<_>>();
        for (words, exec) in cases
            .iter()
            // Every lane, most, and the sparse masks (two, one — lanes 0, 18 and 31 —,
            // four, none).
            .flat_map(|c| [u32::MAX, 0xfffe_fff7, 0x0100_0010, 1, 1 << 18, 1 << 31, 0x8020_0101, 0].map(|e| (c, e)))
        {
            let set = |w: &mut Wave| {
                lanes(w, 4, |l| if l < 9 { specials[l] } else { r[l] });
                lanes(w, 5, |l| if l < 9 { specials[8 - l] } else { r[32 + l] });
                lanes(w, 6, |l| r[64 + l]);
                lanes(w, 2, |l| 0xdead_0000 | l as u32);
                w.s[3] = 0x4049_0fdb;
                w.s[7] = 0x0f0f_3355;
                w.s[VCC_LO] = 0x5555_aaab;
                w.s[EXEC_LO] = exec;
            };
            SLOW_ONLY.with(|s| s.set(true));
            let slow = run(words, set);
            SLOW_ONLY.with(|s| s.set(false));
            let slow = slow.unwrap();
            // The fast path in each of its builds (AVX2 where the CPU has it, baseline).
            for baseline in [false, true] {
                BASELINE_ONLY.with(|b| b.set(baseline));
                // Through `step`, and decoded once as the interpreter runs it.
                let (fast, decoded) = (run(words, set), run_decoded(words, set));
                BASELINE_ONLY.with(|b| b.set(false));
                for (how, fast) in [("stepped", fast), ("decoded", decoded)] {
                    let fast = fast.unwrap();
                    assert_eq!(fast.v, slow.v, "{words:08x?}, {how}, baseline build {baseline}");
                    assert_eq!(
                        fast.s, slow.s,
                        "{words:08x?}, {how}, baseline build {baseline}: scalars (carries, masks)"
                    );
                }
            }
        }
    }

    /// VOPD pairs a whole wave at a time give what the lane-by-lane path gives: every
    /// X opcode with every Y opcode, VGPR, scalar and constant sources, a literal.
    #[test]
    fn whole_wave_vopd_matches_the_lane_by_lane_path() {
        let r = (0..3 * 32)
            .map(|k| (k as u32).wrapping_mul(0x9e37_79b9) ^ 0x5bd1_e995)
            .collect::<Vec<_>>();
        let exec = std::cell::Cell::new(0u32);
        let set = |w: &mut Wave| {
            lanes(w, 4, |l| {
                if l < 4 {
                    [0, 0x7f80_0000, 1, 0x8000_0000][l]
                } else {
                    r[l]
                }
            });
            lanes(w, 5, |l| r[32 + l]);
            lanes(w, 6, |l| r[64 + l] >> 8);
            lanes(w, 7, |l| l as u32);
            lanes(w, 2, |l| 0xdead_0000 | l as u32);
            lanes(w, 9, |l| 0x3f80_0000 + l as u32);
            w.s[3] = 0x4049_0fdb;
            w.s[VCC_LO] = 0x5555_aaab;
            w.s[EXEC_LO] = exec.get();
        };
        for (opx, mask) in (0..=13u32).flat_map(|op| [(op, u32::MAX), (op, 0xfffe_fff7), (op, 0x0100_0010)]) {
            exec.set(mask);
            for opy in (0..=13u32).chain(16..=18) {
                for (srcx0, srcy0) in [(0x104u32, 0x107u32), (3, 0xf2), (0x106, 0x81)] {
                    // v_dual_<x> v2, srcx0, v5 :: v_dual_<y> v9, srcy0, v6, then a literal.
                    let w0 = 0xc800_0000 | opx << 22 | opy << 17 | 5 << 9 | srcx0;
                    let w1 = 2 << 24 | (9 >> 1) << 17 | 6 << 9 | srcy0;
                    let words = [w0, w1, 0x4049_0fdb];
                    SLOW_ONLY.with(|s| s.set(true));
                    let slow = run(&words, set);
                    SLOW_ONLY.with(|s| s.set(false));
                    // The whole-wave path in each of its builds (AVX2 where the CPU
                    // has it, baseline).
                    for baseline in [false, true] {
                        BASELINE_ONLY.with(|b| b.set(baseline));
                        // Through `step`, and decoded once as the interpreter runs it.
                        let (fast, decoded) = (run(&words, set), run_decoded(&words, set));
                        BASELINE_ONLY.with(|b| b.set(false));
                        for (how, fast) in [("stepped", fast), ("decoded", decoded)] {
                            match (fast, &slow) {
                                (Ok(fast), Ok(slow)) => {
                                    assert_eq!(fast.v, slow.v, "{words:08x?}, {how}, baseline {baseline}")
                                }
                                (Err(_), Err(_)) => {}
                                (a, b) => panic!("{words:08x?}, {how}: {:?} vs {:?}", a.err(), b.as_ref().err()),
                            }
                        }
                    }
                }
            }
        }
    }

    /// Address registers past the wave's VGPRs are an error naming them; the last
    /// VGPR as a 32-bit offset (with SADDR) is fine.
    #[test]
    fn global_addresses_from_the_last_vgprs() {
        // global_load_b32 v1, v[63:64], off in a wave of 64 VGPRs
        let e = run(&[0xdc52_0000, 0x017c_003f], |_| {}).err().unwrap_or_default();
        assert!(e.contains("v64"), "{e}");
        // global_load_b32 v1, v63, s[4:5]: nothing mapped, so a fault at s[4:5] + v63
        let e = run(&[0xdc52_0000, 0x0104_003f], |w| {
            w.s[4] = 0x1000;
            lanes(w, 63, |l| 4 * l as u32);
            w.s[EXEC_LO] = 0b100;
        })
        .err()
        .unwrap_or_default();
        assert!(e.contains("memory fault at 0x1008"), "{e}");
    }

    #[test]
    fn lane_indexed_global_accesses() {
        // global_store_addtid_b32 v2, s[4:5] offset:16 / global_load_addtid_b32 v2,
        // s[4:5] offset:16: nothing is mapped, so the fault names the first lane's
        // address, SADDR + 16 + lane × 4.
        let set = |w: &mut Wave| {
            w.s[4] = 0x1000;
            w.s[5] = 0x7f;
            w.s[EXEC_LO] = 0b1000;
        };
        for words in [[0xdca6_0010u32, 0x0004_0200], [0xdca2_0010, 0x0204_0000]] {
            let e = run(&words, set).err().unwrap_or_default();
            assert!(e.contains("memory fault at 0x7f0000101c"), "{e}");
        }
    }

    /// How close the f32 transcendentals are: the largest error, in units of the
    /// result's last place, against the f64 value of the same function, over random
    /// operands (the hardware's approximations are documented to about 1 ulp).
    fn worst_ulps(op: u32, operand: &dyn Fn(u32) -> f32, reference: &dyn Fn(f64) -> f64) -> f64 {
        let mut next = crate::rdna3::testing::xorshift32(op);
        let mut worst = 0f64;
        for _ in 0..64 {
            let xs: Vec<f32> = (0..32).map(|_| operand(next())).collect();
            let w = run(&[op], |w| lanes(w, 2, |l| xs[l].to_bits())).unwrap();
            for (l, &x) in xs.iter().enumerate() {
                let (got, want) = (f32::from_bits(w.v[1][l]), reference(f64::from(x)));
                let ulp = {
                    let a = (want as f32).abs();
                    f64::from(f32::from_bits(a.to_bits() + 1) - a)
                };
                worst = worst.max((f64::from(got) - want).abs() / ulp);
            }
        }
        worst
    }

    #[test]
    fn transcendentals_are_within_half_an_ulp_or_so() {
        let normal = |b: u32| f32::from_bits(b & 0x807f_ffff | (1 + b % 253) << 23);
        let positive = |b: u32| normal(b).abs();
        let in_range = |lo: f32, hi: f32| move |b: u32| lo + (hi - lo) * (b as f32 / u32::MAX as f32);
        let turns = revolutions;
        let check = |name: &str, op: u32, operand: &dyn Fn(u32) -> f32, reference: &dyn Fn(f64) -> f64, bound: f64| {
            let worst = worst_ulps(op, operand, reference);
            assert!(worst <= bound, "v_{name}_f32: {worst} ulp");
        };
        check("rcp", 0x7e02_5502, &normal, &|x| 1.0 / x, 0.5);
        check("sqrt", 0x7e02_6702, &positive, &f64::sqrt, 0.5);
        check("rsq", 0x7e02_5d02, &positive, &|x| 1.0 / x.sqrt(), 0.501);
        check("exp", 0x7e02_4b02, &in_range(-125.0, 127.0), &f64::exp2, 0.51);
        check("log", 0x7e02_4f02, &positive, &f64::log2, 0.51);
        check("sin", 0x7e02_6b02, &in_range(-256.0, 256.0), &|x| turns(x).sin(), 0.501);
        check("cos", 0x7e02_6d02, &in_range(-256.0, 256.0), &|x| turns(x).cos(), 0.501);
    }

    #[test]
    fn output_modifiers_and_clamps() {
        let set = |w: &mut Wave| {
            lanes(w, 2, |_| 1.25f32.to_bits());
            lanes(w, 3, |_| 0.5f32.to_bits());
        };
        // v_add_f32_e64 v1, v2, v3 mul:2
        let w = run(&[0xd503_0001, 0x0802_0702], set).unwrap();
        assert_eq!(f32::from_bits(w.v[1][0]), 3.5);
        // The same with clamp (bit 15): 3.5 clamps to 1.0.
        let w = run(&[0xd503_8001, 0x0802_0702], set).unwrap();
        assert_eq!(f32::from_bits(w.v[1][0]), 1.0);
        // v_cmp_lt_f32_e64 s1, v2, v3 clamp: the mask as without clamp (1.25 < 0.5 in
        // no lane); an integer compare's clamp and any compare's omod are refused.
        let w = run(&[0xd411_8001, 0x0002_0702], |w| {
            set(w);
            w.s[1] = 0xdead;
        })
        .unwrap();
        assert_eq!(w.s[1], 0);
        let w = run(&[0xd411_8001, 0x0002_0702], |w| {
            lanes(w, 2, |l| (l as f32).to_bits());
            lanes(w, 3, |_| 4f32.to_bits());
        })
        .unwrap();
        assert_eq!(w.s[1], 0xf);
        assert!(run(&[0xd411_0001, 0x0802_0702], set).is_err(), "omod");
        assert!(run(&[0xd441_8001, 0x0002_0702], set).is_err(), "v_cmp_lt_i32 clamp");
    }

    /// `where(c, x, -x)` compiles to a VOP3 `v_cndmask_b32` with neg on a source: the
    /// selected value's sign bit flips (abs clears it), in the VOP3, VOP3 16-bit and
    /// DPP16 forms. Encodings from `llvm-mc-19 -arch=amdgcn -mcpu=gfx1100 -show-encoding`.
    #[test]
    fn cndmask_takes_neg_and_abs() {
        let (x, y) = (0.75f32.to_bits(), (-2.5f32).to_bits());
        let set = |w: &mut Wave| {
            lanes(w, 1, |_| x);
            lanes(w, 2, |_| x);
            lanes(w, 3, |_| y);
            w.s[0] = 0b10;
            w.s[VCC_LO] = 0b10;
        };
        let neg = |v: u32| v ^ 0x8000_0000;
        // v_cndmask_b32_e64 v1, v2, -v2, vcc_lo: x where the mask is clear, -x where set.
        let w = run(&[0xd501_0001, 0x41aa_0502], set).unwrap();
        assert_eq!((w.v[1][0], w.v[1][1]), (x, neg(x)));
        // v_cndmask_b32_e64 v0, -v1, v1, s0
        let w = run(&[0xd501_0000, 0x2002_0301], set).unwrap();
        assert_eq!((w.v[0][0], w.v[0][1]), (neg(x), x));
        // v_cndmask_b32_e64 v1, |v2|, -|v3|, s0: |x| and -|y| (= y, negative already).
        let w = run(&[0xd501_0301, 0x4002_0702], set).unwrap();
        assert_eq!((w.v[1][0], w.v[1][1]), (x, y));
        // The sign bit of a NaN flips too (no quieting, no flushing of denormals).
        let w = run(&[0xd501_0001, 0x41aa_0502], |w| {
            set(w);
            lanes(w, 2, |_| 0x7f80_0001);
        })
        .unwrap();
        assert_eq!(w.v[1][1], 0xff80_0001);
        // v_cndmask_b16 v1, -v2, |v3|, s0 (halves 0x3a00 = 0.75, 0xc100 = -2.5): -0.75
        // and 2.5, the high half of v1 kept.
        let w = run(&[0xd65d_0201, 0x2002_0702], |w| {
            set(w);
            lanes(w, 1, |_| 0x1234_0000);
            lanes(w, 2, |_| 0x3a00);
            lanes(w, 3, |_| 0xc100);
        })
        .unwrap();
        assert_eq!((w.v[1][0], w.v[1][1]), (0x1234_ba00, 0x1234_4100));
        // v_cndmask_b32_dpp v1, -v2, |v3|, vcc_lo quad_perm:[0,1,2,3]
        let w = run(&[0x0202_06fa, 0xff90_e402], set).unwrap();
        assert_eq!((w.v[1][0], w.v[1][1]), (neg(x), y & 0x7fff_ffff));
    }

    #[test]
    fn carry_in_clamp_and_sixteen_bit_shift_operands() {
        // v_add_co_ci_u32_e64 v1, s10, v2, v3, s12 clamp: 2^32 - 1 + 0 + 1 saturates,
        // the carry out as without clamp; v_sub_co_ci_u32 0 - 0 - 1 borrows and gives 0;
        // without clamp both wrap.
        let carry = |d0: u32, a: u32| {
            let w = run(&[d0, 0x0032_0702], |w| {
                lanes(w, 2, |_| a);
                lanes(w, 3, |_| 0);
                w.s[12] = u32::MAX;
            })
            .unwrap();
            (w.v[1][0], w.s[10])
        };
        assert_eq!(carry(0xd520_8a01, u32::MAX), (u32::MAX, u32::MAX));
        assert_eq!(carry(0xd520_0a01, u32::MAX), (0, u32::MAX));
        assert_eq!(carry(0xd521_8a01, 0), (0, u32::MAX));
        assert_eq!(carry(0xd521_0a01, 0), (u32::MAX, u32::MAX));
        // v_subrev_co_ci_u32: 0 - (5 + 1) borrows.
        assert_eq!(carry(0xd522_8a01, 5), (0, u32::MAX));
        // v_alignbit_b32 v1, v2, v3, v4 and v_alignbyte_b32: S2 is 16 bits wide, so
        // op_sel[2] (dword 0 bit 13, no LLVM 19 spelling) takes the shift from its high
        // half (1) rather than the low one (8): {v2, v3} >> 1 bit instead of 8, and
        // >> 1 byte instead of 0 (8 & 3).
        let align = |d0: u32| {
            run(&[d0, 0x0412_0702], |w| {
                lanes(w, 2, |_| 0x1234_5678);
                lanes(w, 3, |_| 0x9abc_def0);
                lanes(w, 4, |_| 0x0001_0008);
            })
            .unwrap()
            .v[1][0]
        };
        assert_eq!(align(0xd616_0001), 0x789a_bcde);
        assert_eq!(align(0xd616_2001), 0x4d5e_6f78);
        assert_eq!(align(0xd617_0001), 0x9abc_def0);
        assert_eq!(align(0xd617_2001), 0x789a_bcde);
        // v_cmp_class_f16_e64 s1, v2, v3: op_sel picks each operand's half (bit 11 S0,
        // bit 12 S1). v2 holds +0 low, +inf high; v3 the +0 class bit (6) low, the
        // +inf one (9) high.
        let class = |d0: u32| {
            run(&[d0, 0x0002_0702], |w| {
                lanes(w, 2, |_| 0x7c00_0000);
                lanes(w, 3, |_| 0x0200_0040);
            })
            .unwrap()
            .s[1]
        };
        assert_eq!(class(0xd47d_0001), u32::MAX);
        assert_eq!(class(0xd47d_0801), 0);
        assert_eq!(class(0xd47d_1801), u32::MAX);
        assert_eq!(class(0xd47d_1001), 0);
    }

    #[test]
    fn half_conversions_and_unary_ops() {
        // v_cvt_pk_rtz_f16_f32 v1, v2, v3: 1 + 2^-11 + 2^-12 rounds toward zero to 1.0;
        // -70000 to the largest finite negative half.
        let w = run(&[0x5e02_0702], |w| {
            lanes(w, 2, |_| (1.0f32 + 3.0 * (-12f32).exp2()).to_bits());
            lanes(w, 3, |_| (-70000.0f32).to_bits());
        })
        .unwrap();
        assert_eq!(w.v[1][0], 0x3c00 | 0xfbff << 16);
        // v_sqrt_f16 v1, v2 on 6.25 (0x4640): 2.5 (0x4100), the high half kept.
        let w = run(&[0x7e02_ab02], |w| {
            lanes(w, 2, |_| 0x4640);
            lanes(w, 1, |_| 0xabcd_0000);
        })
        .unwrap();
        assert_eq!(w.v[1][0], 0xabcd_4100);
        // v_cvt_f16_i16 v1, v2 on -3: 0xc200.
        let w = run(&[0x7e02_a302], |w| lanes(w, 2, |_| 0xfffd)).unwrap();
        assert_eq!(w.v[1][0] & 0xffff, 0xc200);
    }

    #[test]
    fn dpp_modifiers_compares_and_fetch_inactive() {
        let set = |w: &mut Wave| {
            lanes(w, 2, |l| (l as f32).to_bits());
            lanes(w, 3, |_| (-0.5f32).to_bits());
        };
        // v_add_f32_dpp v1, -v2, |v3| quad_perm:[1,0,3,2]: lane 0 gets -1 + 0.5.
        let w = run(&[0x0602_06fa, 0xff90_b102], set).unwrap();
        assert_eq!(f32::from_bits(w.v[1][0]), -0.5);
        assert_eq!(f32::from_bits(w.v[1][1]), 0.5);
        // v_cmp_lt_f32_dpp vcc, v2, v3 quad_perm:[1,0,3,2] against 1.5: the swapped
        // lane's value is compared.
        let w = run(&[0x7c22_06fa, 0xff00_b102], |w| {
            lanes(w, 2, |l| (l as f32).to_bits());
            lanes(w, 3, |_| 1.5f32.to_bits());
        })
        .unwrap();
        assert_eq!(w.s[VCC_LO] & 0xf, 0b0011, "lanes 0, 1 see 1.0 and 0.0");
        // v_mov_b32_dpp v1, v2 row_shr:1 fi:1 with lane 0 inactive: lane 1 still reads it.
        let w = run(&[0x7e02_02fa, 0xff05_1102], |w| {
            lanes(w, 2, |l| 100 + l as u32);
            w.s[EXEC_LO] = !1;
        })
        .unwrap();
        assert_eq!(w.v[1][1], 100);
    }

    /// A wave64's ROW_MASK counts rows 0 to 3 of the whole wave: the second pass's
    /// lanes are rows 2 and 3 (LLVM's wave64 scans add lane 31 to them alone).
    #[test]
    fn dpp_row_mask_in_a_wave64_counts_the_whole_wave() {
        // v_mov_b32_dpp v1, v2 quad_perm:[1,0,3,2] row_mask:0xc
        let words: &[u32] = &[0x7e02_02fa, 0xcf00_b102];
        let w = crate::rdna3::testing::run_as::<super::super::Rdna3>(&[words], &mut [], &mut [0; 64], |w, _| {
            w.wave64 = true;
            w.s[EXEC_LO + 1] = u32::MAX;
            w.v_other.resize(w.v.len(), super::super::VgprRow::default());
            for lane in 0..32 {
                w.v[2][lane] = lane as u32;
                w.v_other[2][lane] = 32 + lane as u32;
                w.v[1][lane] = 7;
                w.v_other[1][lane] = 7;
            }
        })
        .unwrap();
        assert!(w.v[1].iter().all(|&v| v == 7), "rows 0 and 1 unwritten");
        let second: Vec<u32> = w.v_other[1].iter().copied().collect();
        let want: Vec<u32> = (32..64u32).map(|l| l ^ 1).collect();
        assert_eq!(second, want, "rows 2 and 3 swapped in pairs");
    }

    /// A WMMA in a wave64 (f16 results, which keep the other half of D's registers,
    /// and the 8-bit integer form) computes what the same matrices give in a wave32,
    /// C and D laid out for 64 lanes as AMD's calculator gives it: element (i, j) in
    /// register i / 4, lane 16 i % 64 + j (a wave32's: register i / 2, lane
    /// 16 (i % 2) + j); A and B in the same lanes (0–15, repeated).
    #[test]
    fn wmma_in_a_wave64_is_the_wave32_one_laid_out_for_64_lanes() {
        use super::super::testing::run_decoded;
        let mut next = super::super::testing::xorshift32(0x0064_3264);
        // v_wmma_f16_16x16x16_f16 v[26:..], v[2:9], v[10:17], v[18:..] and
        // v_wmma_i32_16x16x16_iu8 v[26:..], v[2:5], v[10:13], v[18:..]
        for words in [[0xcc42_401au32, 0x1c4a_1502], [0xcc44_401a, 0x1c4a_1502]] {
            let ab: Vec<[u32; 16]> = (0..16).map(|_| std::array::from_fn(|_| next() & 0x3bff_3bff)).collect();
            let c: Vec<[u32; 16]> = (0..16).map(|_| std::array::from_fn(|_| next() & 0xffff_3bff)).collect();
            let d: Vec<[u32; 16]> = (0..16).map(|_| std::array::from_fn(|_| next())).collect();
            let w32 = run_decoded(&words, |w| {
                for lane in 0..32 {
                    for (r, row) in ab.iter().enumerate() {
                        w.v[2 + r][lane] = row[lane % 16];
                    }
                }
                for i in 0..16 {
                    for j in 0..16 {
                        w.v[18 + i / 2][16 * (i % 2) + j] = c[i][j];
                        w.v[26 + i / 2][16 * (i % 2) + j] = d[i][j];
                    }
                }
            })
            .unwrap();
            let w64 = run_decoded(&words, |w| {
                w.wave64 = true;
                w.s[EXEC_LO + 1] = u32::MAX;
                w.v_other.resize(w.v.len(), crate::rdna3::VgprRow::default());
                for lane in 0..64 {
                    for (r, row) in ab.iter().enumerate() {
                        w.vwrite_lane64(2 + r, lane, row[lane % 16]).unwrap();
                    }
                }
                for i in 0..16 {
                    for j in 0..16 {
                        w.vwrite_lane64(18 + i / 4, 16 * i % 64 + j, c[i][j]).unwrap();
                        w.vwrite_lane64(26 + i / 4, 16 * i % 64 + j, d[i][j]).unwrap();
                    }
                }
            })
            .unwrap();
            for i in 0..16 {
                for j in 0..16 {
                    let want = w32.v[26 + i / 2][16 * (i % 2) + j];
                    let got = w64
                        .vread_lane64(256 + (26 + i / 4) as u16, 16 * i % 64 + j, None)
                        .unwrap();
                    assert_eq!(got, want, "{words:x?}: D({i}, {j})");
                }
            }
        }
    }

    #[test]
    fn wmma_half_and_bfloat_variants() {
        // A = 2·I, B(k, col) = col + 1 for k = col (else 0): D(row, col) = C + 2(col+1) if
        // row == col. A in v2..v9, B in v10..v17, C in v18..v25, D to v26..v33.
        let set = |w: &mut Wave, one: u16, two: u16, val: fn(usize) -> u16| {
            for lane in 0..32 {
                let idx = lane % 16;
                for reg in 0..8 {
                    let pick = |k: usize, v: u16| if k == idx { v } else { 0 };
                    w.v[2 + reg][lane] = pick(2 * reg, two) as u32 | (pick(2 * reg + 1, two) as u32) << 16;
                    w.v[10 + reg][lane] = pick(2 * reg, val(idx)) as u32 | (pick(2 * reg + 1, val(idx)) as u32) << 16;
                    w.v[18 + reg][lane] = one as u32;
                }
            }
        };
        // v_wmma_f16_16x16x16_f16: halves in, halves out (low halves of D), C = 1.0.
        let w = run(&[0xcc42_401a, 0x1c4a_1502], |w| {
            set(w, 0x3c00, 0x4000, |c| half::from_f64(c as f64 + 1.0))
        })
        .unwrap();
        for row in 0..16 {
            for col in 0..16 {
                let lane = (row % 2) * 16 + col;
                let want = if row == col {
                    1.0 + 2.0 * (col as f64 + 1.0)
                } else {
                    1.0
                };
                let got = half::to_f32(w.v[26 + row / 2][lane] as u16) as f64;
                assert_eq!(got, want, "f16 D({row}, {col})");
            }
        }
        // v_wmma_f32_16x16x16_bf16: bf16 inputs (2.0 = 0x4000, k+1 as bf16), f32 C = 1.0.
        let w = run(&[0xcc41_401a, 0x1c4a_1502], |w| {
            set(w, 0, 0x4000, |c| ((c as f32 + 1.0).to_bits() >> 16) as u16);
            for reg in 18..26 {
                lanes(w, reg, |_| 1.0f32.to_bits());
            }
        })
        .unwrap();
        assert_eq!(f32::from_bits(w.v[26 + 3][16 + 7]), 1.0 + 2.0 * 8.0, "bf16 D(7, 7)");
        assert_eq!(f32::from_bits(w.v[26][1]), 1.0, "bf16 D(0, 1)");
        // WMMA with lanes disabled is refused.
        assert!(run(&[0xcc41_401a, 0x1c4a_1502], |w| w.s[EXEC_LO] = 0xffff).is_err());
        // Modifiers on v_wmma_f16_16x16x16_f16 (the encoding above plus neg_lo in dword 1
        // bits 31:29, neg_hi in dword 0 bits 10:8, op_sel[2] in dword 0 bit 13): D(row,
        // row) is C + a·(row + 1) with a = ±2 and C = ±1 as they say.
        let wmma16 = |d0: u32, d1: u32, c: u16| {
            let w = run(&[0xcc42_401a | d0, 0x1c4a_1502 | d1], |w| {
                set(w, c, 0x4000, |c| half::from_f64(c as f64 + 1.0));
                // The other half of each D register, which the result must leave alone.
                for reg in 26..34 {
                    lanes(w, reg, |_| 0x1234_5678);
                }
            })
            .unwrap();
            let get = |row: usize, col: usize, hi: bool| {
                let v = w.v[26 + row / 2][(row % 2) * 16 + col];
                (half::to_f32(if hi { (v >> 16) as u16 } else { v as u16 }) as f64, v)
            };
            (0..16)
                .map(|row| (get(row, row, d0 & 0x2000 != 0), get(row, (row + 1) % 16, false)))
                .collect::<Vec<_>>()
        };
        let diag = |row: usize, a: f64, c: f64| c + a * (row as f64 + 1.0);
        // neg_lo:[1,0,0]: A's low halves (even k) negated; A(row, row) sits at k = row.
        for (row, ((d, _), _)) in wmma16(0, 0x2000_0000, 0x3c00).into_iter().enumerate() {
            assert_eq!(
                d,
                diag(row, if row % 2 == 0 { -2.0 } else { 2.0 }, 1.0),
                "neg_lo A, row {row}"
            );
        }
        // neg_lo:[1,0,0] neg_hi:[1,0,0]: all of A negated.
        for (row, ((d, _), _)) in wmma16(0x100, 0x2000_0000, 0x3c00).into_iter().enumerate() {
            assert_eq!(d, diag(row, -2.0, 1.0), "neg A, row {row}");
        }
        // neg_hi:[0,1,0]: B's high halves (odd k) negated.
        for (row, ((d, _), _)) in wmma16(0x200, 0, 0x3c00).into_iter().enumerate() {
            assert_eq!(
                d,
                diag(row, if row % 2 == 1 { -2.0 } else { 2.0 }, 1.0),
                "neg_hi B, row {row}"
            );
        }
        // C = -1: neg_hi:[0,0,1] takes |C| (1), with neg_lo:[0,0,1] too -|C| (-1);
        // neg_lo:[0,0,1] alone subtracts C (+1).
        let off = |d0, d1| wmma16(d0, d1, 0xbc00)[0].1.0;
        assert_eq!(
            (off(0, 0), off(0x400, 0), off(0x400, 0x8000_0000), off(0, 0x8000_0000)),
            (-1.0, 1.0, -1.0, 1.0)
        );
        // op_sel:[0,0,1]: C from the high halves (0 here, C's registers being 0x3c00 in
        // the low halves), D to the high halves, the low halves kept.
        let hi = wmma16(0x2000, 0, 0x3c00);
        assert_eq!(hi[3].0.0, diag(3, 2.0, 0.0));
        assert_eq!(hi[3].0.1 & 0xffff, 0x5678, "the low half is kept");
        // op_sel on an f32 result and the other op_sel bits are refused.
        assert!(run(&[0xcc40_601a, 0x1c4a_1502], |_| {}).is_err());
        assert!(run(&[0xcc42_481a, 0x1c4a_1502], |_| {}).is_err());
    }

    #[test]
    fn scalar_bitfields_and_packs() {
        // s_bfe_i64 s[0:1], s[2:3], s4: 12 bits at 40, sign-extended.
        let w = run(&[0x9480_0402], |w| {
            w.s[2] = 0;
            w.s[3] = 0x0000_ff00; // bits 40..=47 set
            w.s[4] = 40 | 12 << 16;
        })
        .unwrap();
        assert_eq!(w.s[0] as u64 | (w.s[1] as u64) << 32, 0xff);
        let w = run(&[0x9480_0402], |w| {
            w.s[3] = 0x0080_0000; // bit 55: the top bit of a 16-bit field at 40
            w.s[4] = 40 | 16 << 16;
        })
        .unwrap();
        assert_eq!(w.s[0] as u64 | (w.s[1] as u64) << 32, 0xffff_ffff_ffff_8000);
        let set = |w: &mut Wave| {
            w.s[1] = (-5i32) as u32;
            w.s[2] = 0x1234_5678;
        };
        assert_eq!(run(&[0x8300_0201], set).unwrap().s[0], 0x1234_567d, "s_absdiff_i32");
        assert_eq!(run(&[0x8780_0201], set).unwrap().s[0], 0x1234_5664, "s_lshl2_add_u32");
        assert_eq!(run(&[0x9980_0201], set).unwrap().s[0], 0x1234_fffb, "s_pack_lh_b32_b16");
    }

    /// VOP3's blocks hold the `_e64` form of every VOPC, VOP2 and VOP1 opcode at the
    /// block's start plus its number, by the ISA's tables; the VOP2 opcodes without a
    /// VOP3 form land where no VOP3 opcode is.
    #[test]
    fn vop3_blocks_hold_the_short_encodings() {
        use crate::rdna3::opcodes::{SPEC, Vop3, Vop3sd};
        let long = |op: u16| {
            Vop3::from_op(op)
                .map(Vop3::name)
                .or_else(|| Vop3sd::from_op(op).map(Vop3sd::name))
        };
        let stem = |n: &'static str| n.strip_suffix("_e32").or_else(|| n.strip_suffix("_e64")).unwrap_or(n);
        let mut short_only = Vec::new();
        for (enc, base, last) in [
            ("VOPC", 0, VOPC_IN_VOP3_LAST),
            ("VOP2", VOP2_IN_VOP3, VOP2_IN_VOP3_LAST),
            ("VOP1", VOP1_IN_VOP3, VOP1_IN_VOP3_LAST),
        ] {
            let ops = SPEC.iter().find(|(e, _)| *e == enc).map_or(&[][..], |(_, ops)| *ops);
            assert!(!ops.is_empty(), "{enc}");
            for &(n, name) in ops {
                let op = base + n;
                assert!(op <= last, "{name} {op:#x} is past the {enc} block");
                match long(op) {
                    Some(l) => assert_eq!(stem(l), stem(name), "VOP3 {op:#x}"),
                    None => short_only.push(name),
                }
            }
        }
        // v_pk_fmac_f16, v_swap_b32 and friends have no VOP3 form either.
        assert_eq!(short_only.len(), 10, "{short_only:?}");
        for op in [
            vop2_only::V_DOT2ACC_F32_F16_E32,
            vop2_only::V_FMAMK_F32_E32,
            vop2_only::V_FMAAK_F32_E32,
            vop2_only::V_FMAMK_F16_E32,
            vop2_only::V_FMAAK_F16_E32,
        ] {
            assert_eq!(long(op), None, "{op:#x}");
        }
    }

    #[test]
    fn unknown_opcodes_are_errors_not_panics() {
        // VOP3 opcode 0x3ff does not exist.
        match run(&[0xd7ff_0001, 0x0002_0702], |_| {}) {
            Err(e) => assert!(e.contains("not implemented"), "{e}"),
            Ok(_) => panic!("opcode 0x3ff executed"),
        }
    }
}

#[cfg(test)]
mod vop3_dpp {
    use crate::rdna3::testing::run;

    /// VOP3 instructions with random fields and a random DPP16 or DPP8 dword run or
    /// stop with an error, never a panic, and print.
    #[test]
    fn random_vop3_dpp_forms_run_or_stop_with_an_error() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for k in 0..5_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let src0 = [0xfa, 0xe9, 0xea][k % 3];
            let w0 = 0xd400_0000 | (x as u32 & 0x03ff_ffff);
            let w1 = ((x >> 32) as u32 & !0x1ff) | src0;
            let words = [w0, w1, x.rotate_left(23) as u32];
            let Ok(i) = crate::rdna3::Inst::decode(&words) else {
                continue;
            };
            let _ = i.llvm().to_string();
            let _ = run(&words, |w| {
                for lane in 0..32 {
                    w.v[1][lane] = lane as u32;
                }
            });
        }
    }

    /// `v_add_f32_e64_dpp v5, -v1, |v2| clamp row_shl:3 row_mask:0xa bank_mask:0x5
    /// bound_ctrl:1`: lane l of rows 1 and 3 (lanes 16–31 here), banks 0 and 2, adds
    /// -v1 of lane l + 3 (0 past the row's end) and |v2|, clamped; other lanes keep v5.
    #[test]
    fn vop3_dpp16_moves_src0_within_rows_under_the_masks() {
        let w = run(&[0xd503_8205, 0x2002_04fa, 0xa509_0301], |w| {
            for lane in 0..32 {
                w.v[1][lane] = (-0.25 * lane as f32).to_bits();
                w.v[2][lane] = (-1.0f32).to_bits();
                w.v[5][lane] = 7;
            }
        })
        .unwrap();
        for lane in 0..32usize {
            let (row, pos) = (lane / 16, lane % 16);
            let written = row == 1 && (pos / 4) % 2 == 0;
            let want = if !written {
                7
            } else {
                let src = if pos + 3 < 16 {
                    -(-0.25 * (lane + 3) as f32)
                } else {
                    0.0
                };
                (src + 1.0).clamp(0.0, 1.0).to_bits()
            };
            assert_eq!(w.v[5][lane], want, "lane {lane}");
        }
    }
}
