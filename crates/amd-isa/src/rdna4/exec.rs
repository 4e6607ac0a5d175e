//! Running RDNA4 instructions. What lowers to RDNA3 ([`Inst::to_rdna3`]) runs as
//! RDNA3 runs it; the memory encodings (SMEM, VGLOBAL, VFLAT, VSCRATCH) read their own
//! fields and hand RDNA3's executor the access (the vector memory opcodes mapped by
//! name, the generated `lowering` table); program control that RDNA4 changed (the split `s_wait_*`
//! counters, the split barrier, `s_endpgm`) is here. Anything else stops the dispatch
//! naming the instruction: the RDNA4 interpreter does not run it yet.

use super::decode::{Encoding, Inst};
use super::fields as f4;
use super::lower::ScalarValu;
use super::lowering;
use super::opcodes::{Smem, Sop1, Sop2, Sopc, Sopk, Sopp, Vglobal, Vop3p};
use crate::error::Trap;
use crate::field::Words;
use crate::memory::Memory;
use crate::rdna3::{self, FlatAccess, Flow, Frontend, ScalarLoad, Step, Wave};

/// An RDNA4 instruction with what running it needs.
#[derive(Debug, Clone)]
pub(crate) enum Decoded {
    /// As RDNA3 runs it, and its RDNA4 length in dwords (a VOP2 instruction RDNA3
    /// runs as VOP3 is one dword shorter than its RDNA3 form).
    Lowered(rdna3::Decoded, u8),
    /// An IEEE 754-2019 minimum or maximum (`v_minimum_f32`, …): the RDNA3 minimum or
    /// maximum of the same shape, run with NaN propagating.
    Propagating(rdna3::Decoded, u8),
    /// A scalar operation the VALU has (`v_s_exp_f32`, `s_add_f16`, `s_cmp_lt_f16`,
    /// …): the RDNA3 VALU instruction, run on lane 0 alone (see
    /// [`Inst::scalar_as_valu`]), what to do with its result, and the RDNA4 length.
    ToScalar(rdna3::Decoded, Box<ScalarValu>, u8),
    /// RDNA4's own.
    Own(Inst, Own),
}

/// What the RDNA4 interpreter makes of an instruction that does not lower.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Own {
    /// Changes nothing here: the wait counters (an in-order interpreter has nothing
    /// outstanding), scheduling hints, `s_barrier_signal` (the wave arrives at
    /// `s_barrier_wait`), messages.
    Hint,
    /// `s_endpgm`.
    End,
    /// `s_barrier_wait`: the wave waits for the workgroup's others.
    BarrierWait,
    /// A gfx12 WMMA (f16 or bf16 inputs, f32 results): RDNA3's arithmetic, gfx12's
    /// register layout; its RDNA3 opcode.
    Wmma(u16),
    /// `s_getreg_b32`, `s_setreg_b32` or `s_setreg_imm32_b32`: gfx12's hardware
    /// registers.
    HwReg(Sopk),
    /// `s_barrier_signal`, `s_barrier_signal_isfirst` or `s_get_barrier_state` of the
    /// barrier SSRC0 names.
    Barrier(Sop1),
    /// Refused, for the reason given.
    Refused(&'static str),
    /// An integer WMMA or a SWMMAC (`super::matrix`).
    Matrix(super::matrix::Shape),
    /// `v_wmma_f32_16x16x16_{fp8,bf8}_{fp8,bf8}`: A's and B's 8-bit formats.
    WmmaFp8(crate::float::fp8::Fp8, crate::float::fp8::Fp8),
    /// A block load or store: one dword load or store (its `access`, in GLOBAL's or
    /// SCRATCH's numbering) for each bit `i` of M0, at offset `4 i` and VGPR `i` past
    /// the first.
    Block { access: FlatAccess, scratch: bool },
    /// An 8-bit float conversion or dot product.
    Fp8(crate::fp8_ops::Fp8Inst),
    /// RDNA4's scalar float ALU (f32: arithmetic, minimum and maximum, conversions,
    /// rounding to integers, compares), as the VALU computes them: MODE's rounding and
    /// denormal controls.
    ScalarFloat,
    /// RDNA4's 64-bit scalar arithmetic without a carry (`s_add_nc_u64`,
    /// `s_sub_nc_u64`, `s_mul_u64`): SCC is left as it was.
    Scalar64(Sop2),
    /// A scalar load.
    ScalarLoad(ScalarLoad),
    /// RDNA4's byte and half-dword scalar loads (`s_load_u8`, `s_load_i16`, …): the
    /// address as a dword load's, `bytes` of it zero- or sign-extended.
    ScalarLoadSmall {
        load: ScalarLoad,
        bytes: usize,
        signed: bool,
    },
    /// A scalar load through a buffer resource (`s_buffer_load_*`): whole dwords, or
    /// that many bytes, sign-extended when asked.
    ScalarBufferLoad(ScalarLoad, Option<(usize, bool)>),
    /// A global access.
    Global(FlatAccess),
    /// A flat access (global, LDS or private memory by aperture).
    Flat(FlatAccess),
    /// A scratch access.
    Scratch(FlatAccess),
    /// An LDS read-modify-write RDNA3 does not have: the atomic (GLOBAL numbering or
    /// [`rdna3::extra_atomic`]) and whether the old value returns.
    DsAtomic { atomic: u16, rtn: bool },
    /// `ds_bpermute_fi_b32`: `ds_bpermute_b32` reading inactive lanes too.
    BpermuteFi,
    /// `v_permlane16_var_b32` (`cross`: `v_permlanex16_var_b32`): each lane reads
    /// the lane of its row (the other row) that its SRC1's low 4 bits name, active
    /// or not.
    PermlaneVar { cross: bool },
    /// A buffer access (VBUFFER: RDNA3's MUBUF, or MTBUF for `tbuffer_*`).
    Buffer(rdna3::BufferAccess),
    /// Not run yet.
    Missing,
}

impl Own {
    /// Whether it is a vector operation on each lane alone, which writes no SGPR: a
    /// wave64 runs it as two passes of 32 lanes, as RDNA3's vector instructions
    /// ([`rdna3::run_halves`]). The scalar ones run once, and so do
    /// `ds_bpermute_fi_b32`, which reads across the whole wave, and the matrix
    /// instructions, which work on the whole wave.
    fn vector_only(&self) -> bool {
        matches!(
            self,
            Own::Block { .. }
                | Own::Fp8(_)
                | Own::Global(_)
                | Own::Flat(_)
                | Own::Scratch(_)
                | Own::Buffer(_)
                | Own::DsAtomic { .. }
                | Own::PermlaneVar { .. }
        )
    }
}

/// RDNA4's instructions.
pub(crate) struct Rdna4;

impl Frontend for Rdna4 {
    type Decoded = Decoded;
    fn decode(words: &[u32]) -> Result<Decoded, rdna3::DecodeError> {
        let i = Inst::decode(words)?;
        if let Some(r) = i.to_rdna3() {
            return Ok(Decoded::Lowered(rdna3::Decoded::new(r), i.size));
        }
        if let Some(r) = i.propagating_min_max() {
            return Ok(Decoded::Propagating(rdna3::Decoded::new(r), i.size));
        }
        if let Some(sv) = i.scalar_as_valu() {
            return Ok(Decoded::ToScalar(rdna3::Decoded::new(sv.inst), Box::new(sv), i.size));
        }
        Ok(Decoded::Own(i, own(&i)))
    }
    const GFX12: bool = true;
}

/// Why the named-barrier instructions are refused.
pub(crate) const NAMED_BARRIERS: &str = "named barriers (ids 1 to 16: s_barrier_init, s_barrier_join, s_barrier_leave, a positive barrier id) are not RDNA4's: its s_barrier_wait reserves their completion bit (AMD's RDNA4 pseudocode), and LLVM gives them to gfx1250 only";
/// Why `s_alloc_vgpr` is refused.
pub(crate) const DYNAMIC_VGPRS: &str = "dynamic VGPR allocation: only for waves launched with dynamic VGPRs (STATUS.DVGPR_EN), which compute dispatches through KFD do not enable; LLVM 19 does not assemble it for gfx1200/gfx1201";

/// Why the transposing loads are refused.
pub(crate) const TRANSPOSING_LOADS: &str = "a transposing matrix load: AMD's machine-readable RDNA4 ISA gives it no pseudocode and AMD's matrix instruction calculator no layout, so which lane receives which element is not documented to implement against";

/// What running `i` takes, for an instruction that does not lower.
fn own(i: &Inst) -> Own {
    let w = &i.words;
    if let Some(x) = super::fp8::decode(i) {
        return x.map_or_else(Own::Refused, Own::Fp8);
    }
    match i.enc {
        Encoding::Sopp => match Sopp::from_op(i.op) {
            Some(op) if op.name().starts_with("s_wait") => Own::Hint,
            Some(Sopp::S_DELAY_ALU | Sopp::S_CLAUSE | Sopp::S_NOP | Sopp::S_SENDMSG) => Own::Hint,
            Some(Sopp::S_ENDPGM) => Own::End,
            Some(Sopp::S_BARRIER_WAIT) => Own::BarrierWait,
            Some(Sopp::S_BARRIER_LEAVE) => Own::Refused(NAMED_BARRIERS),
            _ => Own::Missing,
        },
        Encoding::Sop2 => match Sop2::from_op(i.op) {
            Some(op @ (Sop2::S_ADD_NC_U64 | Sop2::S_SUB_NC_U64 | Sop2::S_MUL_U64)) => Own::Scalar64(op),
            Some(op) if scalar_float::sop2(op) => Own::ScalarFloat,
            _ => Own::Missing,
        },
        Encoding::Sop1 if Sop1::from_op(i.op).is_some_and(scalar_float::sop1) => Own::ScalarFloat,
        Encoding::Sopc if Sopc::from_op(i.op).is_some_and(scalar_float::sopc) => Own::ScalarFloat,
        Encoding::Vop3p => match Vop3p::from_op(i.op) {
            Some(Vop3p::V_WMMA_F32_16X16X16_F16) => Own::Wmma(rdna3::opcodes::op::vop3p::V_WMMA_F32_16X16X16_F16),
            Some(Vop3p::V_WMMA_F32_16X16X16_BF16) => Own::Wmma(rdna3::opcodes::op::vop3p::V_WMMA_F32_16X16X16_BF16),
            Some(Vop3p::V_WMMA_F16_16X16X16_F16) => Own::Wmma(rdna3::opcodes::op::vop3p::V_WMMA_F16_16X16X16_F16),
            Some(Vop3p::V_WMMA_BF16_16X16X16_BF16) => Own::Wmma(rdna3::opcodes::op::vop3p::V_WMMA_BF16_16X16X16_BF16),
            Some(
                op @ (Vop3p::V_WMMA_F32_16X16X16_FP8_FP8
                | Vop3p::V_WMMA_F32_16X16X16_FP8_BF8
                | Vop3p::V_WMMA_F32_16X16X16_BF8_FP8
                | Vop3p::V_WMMA_F32_16X16X16_BF8_BF8),
            ) => {
                use crate::float::fp8::Fp8::{E4m3, E5m2};
                let kind = |bf8: bool| if bf8 { E5m2 } else { E4m3 };
                let name = op.name();
                Own::WmmaFp8(
                    kind(name.ends_with("bf8_fp8") || name.ends_with("bf8_bf8")),
                    kind(name.ends_with("_bf8")),
                )
            }
            // The integer WMMA and every SWMMAC (`super::matrix`).
            Some(op) => super::matrix::Shape::of(op).map_or(Own::Missing, Own::Matrix),
            None => Own::Missing,
        },
        Encoding::Sopk => match Sopk::from_op(i.op) {
            Some(op @ (Sopk::S_GETREG_B32 | Sopk::S_SETREG_B32 | Sopk::S_SETREG_IMM32_B32)) => Own::HwReg(op),
            _ => Own::Missing,
        },
        Encoding::Sop1 => match Sop1::from_op(i.op) {
            Some(op @ (Sop1::S_BARRIER_SIGNAL | Sop1::S_BARRIER_SIGNAL_ISFIRST | Sop1::S_GET_BARRIER_STATE)) => {
                Own::Barrier(op)
            }
            Some(Sop1::S_BARRIER_INIT | Sop1::S_BARRIER_JOIN) => Own::Refused(NAMED_BARRIERS),
            Some(Sop1::S_ALLOC_VGPR) => Own::Refused(DYNAMIC_VGPRS),
            // A sleep changes nothing in an in-order interpreter.
            Some(Sop1::S_SLEEP_VAR) => Own::Hint,
            _ => Own::Missing,
        },
        Encoding::Smem => smem(i),
        Encoding::Vglobal | Encoding::Vscratch if block(i).is_some() => {
            let (store, scratch) = block(i).unwrap_or_default();
            let op = if store { GLOBAL_STORE_B32 } else { GLOBAL_LOAD_B32 };
            Own::Block {
                access: access(op, w),
                scratch,
            }
        }
        Encoding::Vglobal
            if matches!(
                Vglobal::from_op(i.op),
                Some(Vglobal::GLOBAL_LOAD_TR_B64 | Vglobal::GLOBAL_LOAD_TR_B128)
            ) =>
        {
            Own::Refused(TRANSPOSING_LOADS)
        }
        // No caches to invalidate or write back.
        Encoding::Vglobal
            if matches!(
                Vglobal::from_op(i.op),
                Some(Vglobal::GLOBAL_INV | Vglobal::GLOBAL_WB | Vglobal::GLOBAL_WBINV)
            ) =>
        {
            Own::Hint
        }
        Encoding::Vglobal => lowering::vglobal(i.op)
            .or_else(|| new_atomic(i.name()?))
            .map_or(Own::Missing, |op| Own::Global(access(op, w))),
        Encoding::Vflat => lowering::vflat(i.op)
            .or_else(|| new_atomic(i.name()?))
            .map_or(Own::Missing, |op| Own::Flat(access(op, w))),
        Encoding::Ds => ds(i),
        Encoding::Vop3 if i.op == super::opcodes::op::vop3::V_PERMLANE16_VAR_B32 => Own::PermlaneVar { cross: false },
        Encoding::Vop3 if i.op == super::opcodes::op::vop3::V_PERMLANEX16_VAR_B32 => Own::PermlaneVar { cross: true },
        Encoding::Vscratch => lowering::vscratch(i.op).map_or(Own::Missing, |op| Own::Scratch(access(op, w))),
        Encoding::Vbuffer => {
            use f4::vbuffer::*;
            let (op, mtbuf) = match (lowering::vbuffer(i.op), lowering::vbuffer_typed(i.op)) {
                (Some(op), _) => (op, false),
                (None, Some(op)) => (op, true),
                (None, None) => match i.name().and_then(new_atomic) {
                    Some(op) => (op, false),
                    None => return Own::Missing,
                },
            };
            Own::Buffer(rdna3::BufferAccess {
                op,
                mtbuf,
                format: FORMAT.get(w),
                offset: u64::from(IOFFSET.get(w)),
                // An atomic's TH bit 0 returns the old value.
                returns: TH.get(w) & 1 != 0,
                vaddr: VADDR.operand(w),
                vdata: VDATA.index(w),
                // RSRC names the descriptor's first SGPR itself (RDNA3: in fours).
                srsrc: RSRC.get(w) as u16,
                soffset: SOFFSET.operand(w),
                offen: OFFEN.is_set(w),
                idxen: IDXEN.is_set(w),
                tfe: TFE.is_set(w),
                gfx9: false,
            })
        }
        _ => Own::Missing,
    }
}

/// RDNA3's dword load and store (GLOBAL and SCRATCH number them alike).
const GLOBAL_LOAD_B32: u16 = rdna3::opcodes::op::global::GLOBAL_LOAD_B32;
const GLOBAL_STORE_B32: u16 = rdna3::opcodes::op::global::GLOBAL_STORE_B32;
const _: () = assert!(
    GLOBAL_LOAD_B32 == rdna3::opcodes::op::scratch::SCRATCH_LOAD_B32
        && GLOBAL_STORE_B32 == rdna3::opcodes::op::scratch::SCRATCH_STORE_B32
);

/// A block load or store (`global_load_block`, `scratch_store_block`, …): whether it
/// stores, whether it is SCRATCH's.
fn block(i: &Inst) -> Option<(bool, bool)> {
    use super::opcodes::{Vglobal as G, Vscratch as S};
    Some(match i.enc {
        Encoding::Vglobal => match G::from_op(i.op)? {
            G::GLOBAL_LOAD_BLOCK => (false, false),
            G::GLOBAL_STORE_BLOCK => (true, false),
            _ => return None,
        },
        _ => match S::from_op(i.op)? {
            S::SCRATCH_LOAD_BLOCK => (false, true),
            S::SCRATCH_STORE_BLOCK => (true, true),
            _ => return None,
        },
    })
}

/// RDNA4's memory atomics without an RDNA3 namesake (`global_atomic_cond_sub_u32`,
/// `flat_atomic_min_num_f32`, `buffer_atomic_pk_add_f16`, …), in the numbering
/// RDNA3's memory paths take: `*_sub_clamp_u32` is RDNA3's `*_csub_u32` renamed (the
/// same pseudocode), the others RDNA4's own ([`rdna3::extra_atomic`]).
fn new_atomic(name: &str) -> Option<u16> {
    use rdna3::extra_atomic::*;
    Some(match name.split_once("_atomic_")?.1 {
        "sub_clamp_u32" => rdna3::opcodes::op::global::GLOBAL_ATOMIC_CSUB_U32,
        "cond_sub_u32" => COND_SUB_U32,
        "min_num_f32" => MIN_NUM_F32,
        "max_num_f32" => MAX_NUM_F32,
        "pk_add_f16" => PK_ADD_F16,
        "pk_add_bf16" => PK_ADD_BF16,
        _ => return None,
    })
}

/// RDNA4's LDS opcodes without an RDNA3 namesake: read-modify-writes (the `*_num`
/// minimum and maximum, `ds_cond_sub`, `ds_sub_clamp` = RDNA3's `ds_csub`-like clamp,
/// the packed adds, each with a `_rtn` form) and `ds_bpermute_fi_b32`.
fn ds(i: &Inst) -> Own {
    use super::opcodes::Ds::{self, *};
    use rdna3::extra_atomic::*;
    let Some(op) = Ds::from_op(i.op) else {
        return Own::Missing;
    };
    let (atomic, rtn) = match op {
        DS_MIN_NUM_F32 => (MIN_NUM_F32, false),
        DS_MAX_NUM_F32 => (MAX_NUM_F32, false),
        DS_MIN_NUM_RTN_F32 => (MIN_NUM_F32, true),
        DS_MAX_NUM_RTN_F32 => (MAX_NUM_F32, true),
        DS_MIN_NUM_F64 => (MIN_NUM_F64, false),
        DS_MAX_NUM_F64 => (MAX_NUM_F64, false),
        DS_MIN_NUM_RTN_F64 => (MIN_NUM_F64, true),
        DS_MAX_NUM_RTN_F64 => (MAX_NUM_F64, true),
        DS_COND_SUB_U32 => (COND_SUB_U32, false),
        DS_COND_SUB_RTN_U32 => (COND_SUB_U32, true),
        DS_SUB_CLAMP_U32 => (rdna3::opcodes::op::global::GLOBAL_ATOMIC_CSUB_U32, false),
        DS_SUB_CLAMP_RTN_U32 => (rdna3::opcodes::op::global::GLOBAL_ATOMIC_CSUB_U32, true),
        DS_PK_ADD_F16 => (PK_ADD_F16, false),
        DS_PK_ADD_RTN_F16 => (PK_ADD_F16, true),
        DS_PK_ADD_BF16 => (PK_ADD_BF16, false),
        DS_PK_ADD_RTN_BF16 => (PK_ADD_BF16, true),
        DS_BPERMUTE_FI_B32 => return Own::BpermuteFi,
        _ => return Own::Missing,
    };
    Own::DsAtomic { atomic, rtn }
}

/// An SMEM instruction: the loads (`s_load_*` from an address, `s_buffer_load_*`
/// through a buffer resource; whole dwords, or a byte or half-dword extended) and the
/// cache controls and prefetches, which change nothing in a mock without caches.
fn smem(i: &Inst) -> Own {
    use Smem::*;
    use f4::smem::*;
    let w = &i.words;
    let Some(op) = Smem::from_op(i.op) else {
        return Own::Missing;
    };
    // The buffer forms are numbered 16 to 27, each the plain load's opcode plus 16.
    let buffer = (S_BUFFER_LOAD_B32 as u16..=S_BUFFER_LOAD_U16 as u16).contains(&i.op);
    let (dwords, small) = match op {
        S_LOAD_B32 | S_BUFFER_LOAD_B32 => (1, None),
        S_LOAD_B64 | S_BUFFER_LOAD_B64 => (2, None),
        S_LOAD_B96 | S_BUFFER_LOAD_B96 => (3, None),
        S_LOAD_B128 | S_BUFFER_LOAD_B128 => (4, None),
        S_LOAD_B256 | S_BUFFER_LOAD_B256 => (8, None),
        S_LOAD_B512 | S_BUFFER_LOAD_B512 => (16, None),
        S_LOAD_U8 | S_BUFFER_LOAD_U8 => (1, Some((1, false))),
        S_LOAD_I8 | S_BUFFER_LOAD_I8 => (1, Some((1, true))),
        S_LOAD_U16 | S_BUFFER_LOAD_U16 => (1, Some((2, false))),
        S_LOAD_I16 | S_BUFFER_LOAD_I16 => (1, Some((2, true))),
        S_DCACHE_INV
        | S_ATC_PROBE
        | S_ATC_PROBE_BUFFER
        | S_PREFETCH_INST
        | S_PREFETCH_INST_PC_REL
        | S_PREFETCH_DATA
        | S_BUFFER_PREFETCH_DATA
        | S_PREFETCH_DATA_PC_REL => return Own::Hint,
    };
    let load = ScalarLoad {
        dwords,
        sdata: SDATA.index(w),
        sbase: SBASE.operand(w),
        offset: i64::from(IOFFSET.signed(w)),
        soffset: SOFFSET.operand(w),
    };
    match (small, buffer) {
        (None, false) => Own::ScalarLoad(load),
        (Some((bytes, signed)), false) => Own::ScalarLoadSmall { load, bytes, signed },
        (small, true) => Own::ScalarBufferLoad(load, small),
    }
}

/// A VGLOBAL, VFLAT or VSCRATCH instruction's access, opcode `op` in RDNA3's numbering:
/// the three encodings place their fields alike (a test checks), so VGLOBAL's names
/// read them. An atomic returns the old value when TH says so (TH_ATOMIC_RETURN, bit
/// 0 of an atomic's TH).
fn access(op: u16, w: &Words) -> FlatAccess {
    use f4::vglobal::*;
    FlatAccess::new(
        op,
        VDST.index(w),
        SADDR.operand(w),
        VSRC.operand(w),
        VADDR.index(w),
        i64::from(IOFFSET.signed(w)),
        TH.get(w) & 1 != 0,
        f4::vscratch::SVE.is_set(w),
    )
}

impl Step for Decoded {
    #[inline]
    fn size(&self) -> u8 {
        match self {
            Decoded::Lowered(_, size) | Decoded::Propagating(_, size) | Decoded::ToScalar(_, _, size) => *size,
            Decoded::Own(i, _) => i.size,
        }
    }
    #[inline]
    fn is_hint(&self) -> bool {
        match self {
            Decoded::Lowered(d, _) => Step::is_hint(d),
            Decoded::Propagating(..) | Decoded::ToScalar(..) => false,
            // One-dword hints only: the scheduler steps one dword past them.
            Decoded::Own(i, own) => matches!(own, Own::Hint) && i.size == 1,
        }
    }
    fn writes_scalars(&self) -> bool {
        match self {
            Decoded::Lowered(d, _) | Decoded::Propagating(d, _) => Step::writes_scalars(d),
            Decoded::ToScalar(..) => true,
            Decoded::Own(_, own) => !own.vector_only(),
        }
    }
    fn per_half(&self) -> bool {
        match self {
            Decoded::Lowered(d, _) | Decoded::Propagating(d, _) => Step::per_half(d),
            // Lane 0's VALU operation, once.
            Decoded::ToScalar(..) => false,
            Decoded::Own(_, own) => own.vector_only(),
        }
    }
    #[inline]
    fn run(&self, w: &mut Wave, mem: &dyn Memory, lds: &mut [u8]) -> Result<Flow, Trap> {
        let (i, own) = match self {
            // The commonest: inlined into RDNA4's scheduler loop as into RDNA3's (callgrind:
            // RDNA4 4–6 % fewer host instructions, RDNA3's loop unchanged); the rarer
            // forms below call it out of line.
            Decoded::Lowered(d, _) => return d.run(w, mem, lds),
            Decoded::Propagating(d, _) => {
                let rule = w.nan_rule.replace(crate::float::minmax::Nans::Propagate);
                let r = d.run_out_of_line(w, mem, lds);
                w.nan_rule = rule;
                return r;
            }
            Decoded::ToScalar(d, sv, _) => {
                use super::lower::ScalarOut;
                let vcc = rdna3::VCC_LO;
                let (v0, exec, vcc_lo) = (w.v[0][0], w.s[rdna3::EXEC_LO], w.s[vcc]);
                w.v[0][0] = if sv.acc { w.sread(sv.sdst as u16, None)? } else { 0 };
                w.s[rdna3::EXEC_LO] = 1;
                let rule = w.nan_rule;
                if sv.rule.is_some() {
                    w.nan_rule = sv.rule;
                }
                let r = d.run_out_of_line(w, mem, lds);
                let (value, cmp) = (w.v[0][0], w.s[vcc]);
                w.nan_rule = rule;
                (w.v[0][0], w.s[rdna3::EXEC_LO], w.s[vcc]) = (v0, exec, vcc_lo);
                r?;
                return match sv.out {
                    ScalarOut::B32 => w.swrite(sv.sdst, value),
                    ScalarOut::F16 => w.swrite(sv.sdst, value & 0xffff),
                    ScalarOut::Scc => {
                        w.scc = cmp & 1 != 0;
                        Ok(())
                    }
                }
                .map(|_| Flow::Next);
            }
            Decoded::Own(i, own) => (i, own),
        };
        match own {
            Own::Hint => Ok(Flow::Next),
            Own::End => Ok(Flow::End),
            Own::BarrierWait => Ok(Flow::Barrier),
            Own::Wmma(op) => rdna3::wmma(w, *op, wmma_operands(i)).map(|_| Flow::Next),
            Own::Fp8(x) => x.run(w, i.literal).map(|_| Flow::Next),
            &Own::Block { access, scratch } => {
                let m0 = w.s[rdna3::M0];
                for k in (0..32).filter(|k| m0 >> k & 1 == 1) {
                    let a = FlatAccess {
                        vdst: access.vdst + k,
                        data: access.data + k as u16,
                        offset: access.offset + 4 * k as i64,
                        ..access
                    };
                    if scratch {
                        rdna3::scratch(w, &a)?;
                    } else {
                        rdna3::global(w, &a, mem)?;
                    }
                }
                Ok(Flow::Next)
            }
            &Own::WmmaFp8(a, b) => {
                let inputs = rdna3::WmmaInputs::Eight { a, b };
                rdna3::wmma_float(w, inputs, false, wmma_operands(i)).map(|_| Flow::Next)
            }
            &Own::Refused(why) => Err(Trap::refused(why.into())),
            &Own::Barrier(op) => {
                let src = f4::sop1::SSRC0.operand(&i.words);
                // M0 names a named barrier (M0[4:0]); otherwise SSRC0's value.
                let id = if usize::from(src) == rdna3::M0 {
                    (w.s[rdna3::M0] & 0x1f) as i32
                } else {
                    w.sread(src, i.literal)? as i32
                };
                match (op, id) {
                    (Sop1::S_GET_BARRIER_STATE, -1) => {
                        Ok(Flow::Group(rdna3::GroupOp::State(f4::sop1::SDST.0.get(&i.words) as u8)))
                    }
                    (Sop1::S_BARRIER_SIGNAL_ISFIRST, -1) => Ok(Flow::Group(rdna3::GroupOp::SignalIsFirst)),
                    (_, -1) => Ok(Flow::Group(rdna3::GroupOp::Signal)),
                    // Barrier 0 is a NOP; -2, the trap handler's, is privileged and
                    // a NOP for a user wave. Neither is the first signal.
                    (Sop1::S_GET_BARRIER_STATE, _) if id <= 0 => Err(Trap::refused(format!(
                        "s_get_barrier_state of barrier {id}: only the workgroup barrier (-1) has a state here"
                    ))),
                    (_, 0 | -2) => {
                        if op == Sop1::S_BARRIER_SIGNAL_ISFIRST {
                            w.scc = false;
                        }
                        Ok(Flow::Next)
                    }
                    _ => Err(Trap::refused(format!("barrier {id}: {NAMED_BARRIERS}"))),
                }
            }
            &Own::HwReg(op) => {
                use f4::sopk::*;
                let (d, simm) = (SDST.index(&i.words), SIMM16.get(&i.words) as u16);
                let f = rdna3::HwField::from_simm16(simm);
                match op {
                    Sopk::S_GETREG_B32 => {
                        let v = rdna3::getreg(w, f, rdna3::Regs::Gfx12, rdna3::realtime)?;
                        w.swrite(d, v)?;
                    }
                    Sopk::S_SETREG_B32 => rdna3::setreg(w, f, w.s[d.min(127)], op.name(), rdna3::Regs::Gfx12)?,
                    _ => {
                        let v = i.literal.ok_or("s_setreg_imm32_b32 without its literal")?;
                        rdna3::setreg(w, f, v, op.name(), rdna3::Regs::Gfx12)?;
                    }
                }
                Ok(Flow::Next)
            }
            Own::Matrix(shape) => super::matrix::run(w, shape, &i.words, i.literal).map(|_| Flow::Next),
            Own::ScalarFloat => scalar_float::run(w, i).map(|_| Flow::Next),
            Own::Scalar64(op) => {
                use f4::sop2::*;
                let (a, b) = (
                    w.sread64(SSRC0.operand(&i.words), i.literal)?,
                    w.sread64(SSRC1.operand(&i.words), i.literal)?,
                );
                let d = match op {
                    Sop2::S_ADD_NC_U64 => a.wrapping_add(b),
                    Sop2::S_SUB_NC_U64 => a.wrapping_sub(b),
                    _ => a.wrapping_mul(b),
                };
                w.swrite64(SDST.index(&i.words), d).map(|_| Flow::Next)
            }
            Own::ScalarLoad(l) => rdna3::scalar_load(w, l, mem).map(|_| Flow::Next),
            &Own::ScalarLoadSmall { load, bytes, signed } => {
                let base = w.sread64(load.sbase, None)?;
                let so = if load.soffset == 124 {
                    0
                } else {
                    i64::from(w.sread(load.soffset, None)?)
                };
                let addr = (base as i64).wrapping_add(load.offset).wrapping_add(so) as u64;
                let mut b = [0u8; 2];
                mem.read(addr, &mut b[..bytes]).map_err(Trap::load(bytes))?;
                let v = match (bytes, signed) {
                    (1, false) => u32::from(b[0]),
                    (1, true) => b[0] as i8 as i32 as u32,
                    (_, false) => u32::from(u16::from_le_bytes(b)),
                    (_, true) => i16::from_le_bytes(b) as i32 as u32,
                };
                w.swrite(load.sdata, v).map(|_| Flow::Next)
            }
            Own::ScalarBufferLoad(l, small) => rdna3::scalar_buffer_load(w, l, mem, *small).map(|_| Flow::Next),
            Own::Global(a) => rdna3::global(w, a, mem).map(|_| Flow::Next),
            Own::Flat(a) => rdna3::flat_generic(w, a, mem, lds).map(|_| Flow::Next),
            Own::Scratch(a) => rdna3::scratch(w, a).map(|_| Flow::Next),
            Own::Buffer(a) => rdna3::buffer(w, a, mem, lds).map(|_| Flow::Next),
            &Own::DsAtomic { atomic, rtn } => ds_atomic(w, i, atomic, rtn, lds).map(|_| Flow::Next),
            &Own::PermlaneVar { cross } => {
                use f4::vop3::*;
                let iw = &i.words;
                let (src, sel, vdst) = (SRC0.operand(iw), SRC1.operand(iw), VDST.index(iw));
                let mut out = [0u32; 32];
                for (l, o) in out.iter_mut().enumerate() {
                    let row = if cross { (l / 16) ^ 1 } else { l / 16 };
                    let from = row * 16 + (w.vread(sel, l, None)? & 15) as usize;
                    *o = w.vread(src, from, None)?;
                }
                let exec = w.exec();
                for (l, &v) in out.iter().enumerate().filter(|&(l, _)| exec >> l & 1 == 1) {
                    w.vwrite(vdst, l, v)?;
                }
                Ok(Flow::Next)
            }
            // All lanes of the wave at once (64 in a wave64, which runs it once).
            Own::BpermuteFi => {
                use f4::ds::*;
                let iw = &i.words;
                let (addr, data, vdst) = (ADDR.operand(iw), DATA0.operand(iw), VDST.index(iw));
                let offset = OFFSET0.get(iw) | OFFSET1.get(iw) << 8;
                let n = if w.wave64 { 64 } else { 32 };
                let mut out = [0u32; 64];
                for (l, o) in out.iter_mut().enumerate().take(n) {
                    let sel = (w.vread_lane64(addr, l, None)?.wrapping_add(offset) / 4 % n as u32) as usize;
                    *o = w.vread_lane64(data, sel, None)?;
                }
                let exec = w.exec_all();
                for (l, &v) in out.iter().enumerate().take(n).filter(|&(l, _)| exec >> l & 1 == 1) {
                    w.vwrite_lane64(vdst, l, v)?;
                }
                Ok(Flow::Next)
            }
            Own::Missing => Err(Trap::missing(format!(
                "{} is not implemented for RDNA4 yet",
                i.name().unwrap_or("this opcode")
            ))),
        }
    }
    fn text(&self) -> String {
        match self {
            Decoded::Lowered(d, _) | Decoded::Propagating(d, _) | Decoded::ToScalar(d, ..) => d.text(),
            Decoded::Own(i, _) => {
                let words: Vec<String> = i.words[..i.size as usize - usize::from(i.literal.is_some())]
                    .iter()
                    .map(|w| format!("{w:08x}"))
                    .collect();
                format!(
                    "{:?} {} [{}]",
                    i.enc,
                    i.name().unwrap_or("(unknown opcode)"),
                    words.join(" ")
                )
            }
        }
    }
}

/// A WMMA's (VOP3P) destination, sources and modifiers.
fn wmma_operands(i: &Inst) -> rdna3::WmmaOperands {
    use f4::vop3p::*;
    let iw = &i.words;
    let mods = rdna3::WmmaMods {
        neg_lo: NEG.get(iw),
        neg_hi: NEG_HI.get(iw),
        hi_halves: OPSEL.get(iw) & 4 != 0,
        clamp: CLMP.is_set(iw),
    };
    rdna3::WmmaOperands {
        dst: VDST.index(iw),
        srcs: [SRC0.operand(iw), SRC1.operand(iw), SRC2.operand(iw)],
        mods,
        lit: i.literal,
        layout: rdna3::WmmaLayout::Gfx12,
    }
}

/// An LDS read-modify-write of RDNA4's own ([`Own::DsAtomic`]): its operands, run as
/// [`rdna3::ds_extra_atomic`] runs them.
fn ds_atomic(w: &mut Wave, i: &Inst, atomic: u16, rtn: bool, lds: &mut [u8]) -> Result<(), Trap> {
    use f4::ds::*;
    let iw = &i.words;
    let x = rdna3::DsExtraAtomic {
        atomic,
        rtn,
        addr: ADDR.operand(iw),
        data: DATA0.operand(iw),
        vdst: VDST.index(iw),
        offset: OFFSET0.get(iw) | OFFSET1.get(iw) << 8,
    };
    rdna3::ds_extra_atomic(w, &x, lds)
}

/// RDNA4's scalar float ALU, f32 forms (the f16 ones, `s_minimum`/`s_maximum` and
/// `s_cvt_pk_rtz_f16_f32` are not implemented).
mod scalar_float {
    use super::{Inst, Sop1, Sop2, Sopc, Wave, f4};
    use crate::error::Trap;
    use crate::float::minmax;
    use crate::rdna3::{add32, fma32, mul32, sub32, to32};

    type R<T> = Result<T, Trap>;

    pub(super) fn sop2(op: Sop2) -> bool {
        use Sop2::*;
        matches!(
            op,
            S_ADD_F32 | S_SUB_F32 | S_MUL_F32 | S_FMAC_F32 | S_FMAAK_F32 | S_FMAMK_F32 | S_MIN_NUM_F32 | S_MAX_NUM_F32
        )
    }

    pub(super) fn sop1(op: Sop1) -> bool {
        use Sop1::*;
        matches!(
            op,
            S_CVT_F32_I32
                | S_CVT_F32_U32
                | S_CVT_I32_F32
                | S_CVT_U32_F32
                | S_CEIL_F32
                | S_FLOOR_F32
                | S_TRUNC_F32
                | S_RNDNE_F32
        )
    }

    pub(super) fn sopc(op: Sopc) -> bool {
        compare(op).is_some()
    }

    /// An f32 compare: SCC from the two operands.
    fn compare(op: Sopc) -> Option<fn(f32, f32) -> bool> {
        use Sopc::*;
        use std::cmp::Ordering::{Equal, Greater, Less};
        Some(match op {
            S_CMP_LT_F32 => |a, b| a < b,
            S_CMP_EQ_F32 => |a, b| a == b,
            S_CMP_LE_F32 => |a, b| a <= b,
            S_CMP_GT_F32 => |a, b| a > b,
            // Less or greater: false for a NaN (where `!=` is true).
            S_CMP_LG_F32 => |a, b| matches!(a.partial_cmp(&b), Some(Less | Greater)),
            S_CMP_GE_F32 => |a, b| a >= b,
            S_CMP_O_F32 => |a, b| !a.is_nan() && !b.is_nan(),
            S_CMP_U_F32 => |a, b| a.is_nan() || b.is_nan(),
            // The negated compares are true for a NaN.
            S_CMP_NGE_F32 => |a, b| !matches!(a.partial_cmp(&b), Some(Greater | Equal)),
            S_CMP_NLG_F32 => |a, b| !matches!(a.partial_cmp(&b), Some(Less | Greater)),
            S_CMP_NGT_F32 => |a, b| !matches!(a.partial_cmp(&b), Some(Greater)),
            S_CMP_NLE_F32 => |a, b| !matches!(a.partial_cmp(&b), Some(Less | Equal)),
            S_CMP_NEQ_F32 => |a, b| a != b,
            S_CMP_NLT_F32 => |a, b| !matches!(a.partial_cmp(&b), Some(Less)),
            _ => return None,
        })
    }

    #[cfg(test)]
    #[test]
    fn compares_as_the_isa_says() {
        use Sopc::*;
        let nan = f32::NAN;
        // (op, 1 vs 2, 2 vs 1, 1 vs 1, NaN vs 1)
        let table = [
            (S_CMP_LT_F32, [true, false, false, false]),
            (S_CMP_EQ_F32, [false, false, true, false]),
            (S_CMP_LE_F32, [true, false, true, false]),
            (S_CMP_GT_F32, [false, true, false, false]),
            (S_CMP_LG_F32, [true, true, false, false]),
            (S_CMP_GE_F32, [false, true, true, false]),
            (S_CMP_O_F32, [true, true, true, false]),
            (S_CMP_U_F32, [false, false, false, true]),
            (S_CMP_NGE_F32, [true, false, false, true]),
            (S_CMP_NLG_F32, [false, false, true, true]),
            (S_CMP_NGT_F32, [true, false, true, true]),
            (S_CMP_NLE_F32, [false, true, false, true]),
            (S_CMP_NEQ_F32, [true, true, false, true]),
            (S_CMP_NLT_F32, [false, true, true, true]),
        ];
        for (op, want) in table {
            let c = compare(op).unwrap();
            assert_eq!([c(1.0, 2.0), c(2.0, 1.0), c(1.0, 1.0), c(nan, 1.0)], want, "{op:?}");
        }
        assert!(compare(S_CMP_EQ_U32).is_none());
    }

    /// Runs the scalar float instruction `i`.
    pub(super) fn run(w: &mut Wave, i: &Inst) -> R<()> {
        let iw = &i.words;
        let lit = i.literal;
        let f = |w: &Wave, n: u16| -> R<f32> { Ok(w.f32_in(f32::from_bits(w.sread(n, lit)?))) };
        let r32 = w.round32();
        match i.enc {
            super::Encoding::Sopc => {
                let op = Sopc::from_op(i.op)
                    .and_then(compare)
                    .ok_or("not a scalar float compare")?;
                let (a, b) = (f(w, f4::sopc::SSRC0.operand(iw))?, f(w, f4::sopc::SSRC1.operand(iw))?);
                w.scc = op(a, b);
                Ok(())
            }
            super::Encoding::Sop1 => {
                use Sop1::*;
                let (d, s) = (f4::sop1::SDST.index(iw), f4::sop1::SSRC0.operand(iw));
                let x = w.sread(s, lit)?;
                let fx = w.f32_in(f32::from_bits(x));
                let r = match Sop1::from_op(i.op).ok_or("not a scalar float opcode")? {
                    S_CVT_F32_I32 => w.f32_out(to32(f64::from(x as i32), r32).to_bits()),
                    S_CVT_F32_U32 => w.f32_out(to32(f64::from(x), r32).to_bits()),
                    // Saturating, NaN to 0 (Rust's float-to-integer casts).
                    S_CVT_I32_F32 => fx as i32 as u32,
                    S_CVT_U32_F32 => fx as u32,
                    S_CEIL_F32 => w.f32_out(fx.ceil().to_bits()),
                    S_FLOOR_F32 => w.f32_out(fx.floor().to_bits()),
                    S_TRUNC_F32 => w.f32_out(fx.trunc().to_bits()),
                    S_RNDNE_F32 => w.f32_out(fx.round_ties_even().to_bits()),
                    _ => return Err("not a scalar float opcode".into()),
                };
                w.swrite(d, r)
            }
            _ => {
                use Sop2::*;
                let d = f4::sop2::SDST.index(iw);
                let (a, b) = (f(w, f4::sop2::SSRC0.operand(iw))?, f(w, f4::sop2::SSRC1.operand(iw))?);
                let k = || -> R<f32> { Ok(w.f32_in(f32::from_bits(lit.ok_or("fmaak/fmamk without its constant")?))) };
                let r = match Sop2::from_op(i.op).ok_or("not a scalar float opcode")? {
                    S_ADD_F32 => add32(a, b, r32),
                    S_SUB_F32 => sub32(a, b, r32),
                    S_MUL_F32 => mul32(a, b, r32),
                    S_FMAC_F32 => fma32(a, b, w.f32_in(f32::from_bits(w.sread(d as u16, None)?)), r32),
                    S_FMAAK_F32 => fma32(a, b, k()?, r32),
                    S_FMAMK_F32 => fma32(a, k()?, b, r32),
                    S_MIN_NUM_F32 => minmax::min(a, b, w.nans()),
                    S_MAX_NUM_F32 => minmax::max(a, b, w.nans()),
                    _ => return Err("not a scalar float opcode".into()),
                };
                w.swrite(d, w.f32_out(r.to_bits()))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::f4::{vflat, vglobal, vscratch};

    /// Runs `code` as one gfx12 workgroup of `lanes` lanes whose first user SGPRs hold
    /// `user_data`, with each buffer mapped at its address.
    fn dispatch(code: &[u32], user_data: &[u32], lanes: u32, buffers: &mut [(u64, &mut [u8])]) {
        let code: Vec<u8> = code.iter().flat_map(|w| w.to_le_bytes()).collect();
        let code_at = 0x1000_0000u64;
        let mut ud = [0u32; 16];
        ud[..user_data.len()].copy_from_slice(user_data);
        let d = crate::Dispatch {
            code_addr: code_at,
            rsrc: [0, (user_data.len() as u32) << 1, 0],
            user_data: ud,
            block: [lanes, 1, 1],
            grid: [1, 1, 1],
            ..crate::Dispatch::default()
        };
        let mut mem = crate::SliceMemory::new();
        mem.map_read_only(code_at, &code);
        for (at, b) in buffers.iter_mut() {
            mem.map(*at, b);
        }
        crate::rdna4::Interpreter::default().dispatch(&mem, &d).unwrap();
    }

    fn dwords(b: &[u8]) -> Vec<u32> {
        b.chunks(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect()
    }

    /// The scalar float ALU as a wave runs it: `llvm-mc-19 -mcpu=gfx1201`'s encodings of
    /// s_add_f32, s_mul_f32, s_cmp_lt_f32/s_cmp_u_f32 (through s_cselect), s_cvt_i32_f32,
    /// s_max_num_f32 with a NaN, s_fmaak_f32 and s_floor_f32 on s2 = -2.5, s3 = 4, s8 =
    /// NaN, each result stored to s[0:1] + 4k.
    #[test]
    fn scalar_float_alu() {
        let code: [u32; 45] = [
            0xa0040302, 0xa2050302, 0xbf410302, 0x98068081, 0xbf480802, 0x98078081, 0xbe896602, 0xa18a0308, 0xa28b0302,
            0x3f800000, 0xbe8c6102, 0x7e000280, 0x7e020204, 0xee068000, 0x00800000, 0x00000000, 0x7e020205, 0xee068000,
            0x00800000, 0x00000400, 0x7e020206, 0xee068000, 0x00800000, 0x00000800, 0x7e020207, 0xee068000, 0x00800000,
            0x00000c00, 0x7e020209, 0xee068000, 0x00800000, 0x00001000, 0x7e02020a, 0xee068000, 0x00800000, 0x00001400,
            0x7e02020b, 0xee068000, 0x00800000, 0x00001800, 0x7e02020c, 0xee068000, 0x00800000, 0x00001c00, 0xbfb00000,
        ];
        let mut out = [0u8; 32];
        let out_at = 0x2000_0000u64;
        let mut user_data = [0u32; 9];
        user_data[..4].copy_from_slice(&[out_at as u32, 0, (-2.5f32).to_bits(), 4.0f32.to_bits()]);
        user_data[8] = f32::NAN.to_bits();
        dispatch(&code, &user_data, 32, &mut [(out_at, &mut out)]);
        let got = dwords(&out);
        let f = |x: f32| x.to_bits();
        assert_eq!(got, [f(1.5), f(-10.0), 1, 1, -2i32 as u32, f(4.0), f(-9.0), f(-3.0)]);
    }

    /// RDNA4's byte and half-dword scalar loads, sign- and zero-extended:
    /// `s_load_i16`/`s_load_u16` at byte 2 and `s_load_u8`/`s_load_i8` at byte 3 of
    /// 0x80_9a_f0_ff... (llvm-mc-19's encodings), stored to s[0:1].
    #[test]
    fn small_scalar_loads_extend() {
        let code: [u32; 27] = [
            0xf4014101, 0xf8000002, 0xf4012141, 0xf8000003, 0xf4016181, 0xf8000002, 0xf40101c1, 0xf8000003, 0xbfc70000,
            0x7e000280, 0x7e020204, 0xee068000, 0x00800000, 0x00000000, 0x7e020205, 0xee068000, 0x00800000, 0x00000400,
            0x7e020206, 0xee068000, 0x00800000, 0x00000800, 0x7e020207, 0xee068000, 0x00800000, 0x00000c00, 0xbfb00000,
        ];
        let mut data = [0x01u8, 0x02, 0xf0, 0x9a];
        let mut out = [0u8; 16];
        let (data_at, out_at) = (0x3000_0000u64, 0x2000_0000u64);
        let user_data = [out_at as u32, 0, data_at as u32, 0];
        dispatch(&code, &user_data, 32, &mut [(data_at, &mut data), (out_at, &mut out)]);
        let got = dwords(&out);
        assert_eq!(got, [0xffff_9af0, 0x9a, 0x9af0, 0xffff_ff9a]);
    }

    /// VBUFFER through RDNA3's buffer executor: `buffer_load_b32` and `buffer_store_b32`
    /// with OFFEN and an offset, and `buffer_atomic_add_u32` returning the old value
    /// (TH_ATOMIC_RETURN), on a descriptor in s[4:7] (llvm-mc-19's encodings).
    #[test]
    fn buffer_accesses() {
        let code: [u32; 15] = [
            0xc405007c, 0x40800801, 0x00000400, 0xbfc00000, 0xc406807c, 0x40800801, 0x00000800, 0xc40d407c, 0x40900802,
            0x00000c00, 0xbfc00000, 0xc406807c, 0x40800802, 0x00001000, 0xbfb00000,
        ];
        let mut data: Vec<u8> = [0u32, 0x11, 0, 0x33, 0].iter().flat_map(|w| w.to_le_bytes()).collect();
        let data_at = 0x3000_0000u64;
        // The V#: base, no stride, 64 bytes, in s[4:7].
        let user_data = [0, 0, 0, 0, data_at as u32, 0, 64, 0];
        dispatch(&code, &user_data, 1, &mut [(data_at, &mut data)]);
        let got = dwords(&data);
        assert_eq!(got, [0, 0x11, 0x11, 0x33, 0x33]);
    }

    /// VGLOBAL, VFLAT and VSCRATCH place the fields [`super::access`] reads alike.
    #[test]
    fn vector_memory_encodings_lie_alike() {
        let fields = |vdst, vaddr, saddr, vsrc, ioffset, th, sve| (vdst, vaddr, saddr, vsrc, ioffset, th, sve);
        let global = fields(
            vglobal::VDST,
            vglobal::VADDR,
            vglobal::SADDR,
            vglobal::VSRC,
            vglobal::IOFFSET,
            vglobal::TH,
            vglobal::SVE,
        );
        assert_eq!(
            global,
            fields(
                vflat::VDST,
                vflat::VADDR,
                vflat::SADDR,
                vflat::VSRC,
                vflat::IOFFSET,
                vflat::TH,
                vflat::SVE
            )
        );
        assert_eq!(
            global,
            fields(
                vscratch::VDST,
                vscratch::VADDR,
                vscratch::SADDR,
                vscratch::VSRC,
                vscratch::IOFFSET,
                vscratch::TH,
                vscratch::SVE
            )
        );
    }
}
