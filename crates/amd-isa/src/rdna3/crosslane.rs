//! Cross-lane data movement: DPP16 and DPP8 operand permutes, lane reads and writes,
//! the permlanes and the M0-relative register moves; and VOPD dual issue.

use super::VgprRow;
use super::compare::{vcmp, writes_exec};
use super::decode::{Encoding, Inst};
use super::exec::{Lanes, Mods, R, VOP1_IN_VOP3, VOP2_IN_VOP3, Vop, f, slow_only, valu, write_lanes};
use super::fields as fld;
use super::fma::fma_wave;
use super::matrix::{dot2_f32, mul_dx9};
use super::opcodes::op::{vop2, vop3, vopd};
use super::opcodes::{Vop3sd, Vopd};
use super::rounding::{add32, fma32, mul32, sub32};
use super::wave::{EXEC_LO, M0, MODE_DENORM_F32_IN, MODE_DENORM_F32_OUT, MODE_ROUND_F32, VCC_LO, Wave};
use crate::error::Trap;
use crate::float::minmax;

/// The DPP16 controls (the DPP_CTRL field) gfx11 has, named as LLVM's `DppCtrl`
/// names them. The ranges' low four bits are the count, lane or mask (`row_shl:1` is
/// `ROW_SHL_FIRST`).
pub(crate) mod dpp_ctrl {
    /// `quad_perm:[a,b,c,d]`: two bits per lane of each quad name its source.
    pub(crate) const QUAD_PERM_FIRST: u32 = 0x000;
    pub(crate) const QUAD_PERM_LAST: u32 = 0x0ff;
    /// `row_shl:1` to `row_shl:15`.
    pub(crate) const ROW_SHL_FIRST: u32 = 0x101;
    pub(crate) const ROW_SHL_LAST: u32 = 0x10f;
    /// `row_shr:1` to `row_shr:15`.
    pub(crate) const ROW_SHR_FIRST: u32 = 0x111;
    pub(crate) const ROW_SHR_LAST: u32 = 0x11f;
    /// `row_ror:1` to `row_ror:15`.
    pub(crate) const ROW_ROR_FIRST: u32 = 0x121;
    pub(crate) const ROW_ROR_LAST: u32 = 0x12f;
    /// `row_mirror`: each row reversed.
    pub(crate) const ROW_MIRROR: u32 = 0x140;
    /// `row_half_mirror`: each half row reversed.
    pub(crate) const ROW_HALF_MIRROR: u32 = 0x141;
    /// `row_share:0` to `row_share:15`: one lane of each row to the whole row.
    pub(crate) const ROW_SHARE_FIRST: u32 = 0x150;
    pub(crate) const ROW_SHARE_LAST: u32 = 0x15f;
    /// `row_xmask:0` to `row_xmask:15`: the lane at (lane ^ mask) within the row.
    pub(crate) const ROW_XMASK_FIRST: u32 = 0x160;
    pub(crate) const ROW_XMASK_LAST: u32 = 0x16f;

    /// Whether `ctrl` is one of them.
    pub(crate) fn known(ctrl: u32) -> bool {
        matches!(
            ctrl,
            QUAD_PERM_FIRST..=QUAD_PERM_LAST
                | ROW_SHL_FIRST..=ROW_SHL_LAST
                | ROW_SHR_FIRST..=ROW_SHR_LAST
                | ROW_ROR_FIRST..=ROW_ROR_LAST
                | ROW_MIRROR
                | ROW_HALF_MIRROR
                | ROW_SHARE_FIRST..=ROW_SHARE_LAST
                | ROW_XMASK_FIRST..=ROW_XMASK_LAST
        )
    }
}

/// The source lane DPP16 control `ctrl` reads for `lane`, if any.
pub(crate) fn dpp_lane(ctrl: u32, lane: usize) -> Option<usize> {
    use dpp_ctrl::*;
    let (row, l) = (lane / 16 * 16, lane % 16);
    let in_row = |k: i32| (0..16).contains(&k).then(|| row + k as usize);
    // The count, lane or mask of the row controls.
    let n = (ctrl & 0xf) as usize;
    match ctrl {
        QUAD_PERM_FIRST..=QUAD_PERM_LAST => Some(lane / 4 * 4 + ((ctrl >> (2 * (lane % 4))) & 3) as usize),
        ROW_SHL_FIRST..=ROW_SHL_LAST => in_row(l as i32 + n as i32),
        ROW_SHR_FIRST..=ROW_SHR_LAST => in_row(l as i32 - n as i32),
        ROW_ROR_FIRST..=ROW_ROR_LAST => Some(row + (l + 16 - n) % 16),
        ROW_MIRROR => Some(row + 15 - l),
        ROW_HALF_MIRROR => Some(lane / 8 * 8 + 7 - lane % 8),
        ROW_SHARE_FIRST..=ROW_SHARE_LAST => Some(row + n),
        ROW_XMASK_FIRST..=ROW_XMASK_LAST => Some(row + (l ^ n)),
        _ => None,
    }
}

/// A VOP1/VOP2 with a DPP16 source: src0 comes from another lane of its row; lanes
/// whose source is invalid read 0 with BOUND_CTRL, else are not written; ROW_MASK and
/// BANK_MASK disable writes.
pub(crate) fn dpp(w: &mut Wave, i: &Inst) -> R<()> {
    i.dpp.ok_or("DPP instruction without its control dword")?;
    let iw = i.dpp_words();
    if let Some(fetch_inactive) = i.dpp8 {
        // DPP8: lane i reads lane (i & !7) + select i of its group of eight; a disabled
        // source lane reads 0 unless fetch-inactive.
        use fld::vop2_dpp8::*;
        let exec = w.exec();
        let src = VSRC0.operand(&iw);
        let select = [
            LANE_SEL_0, LANE_SEL_1, LANE_SEL_2, LANE_SEL_3, LANE_SEL_4, LANE_SEL_5, LANE_SEL_6, LANE_SEL_7,
        ]
        .map(|f| f.get(&iw) as usize);
        let mut vals = [0u32; 32];
        for (lane, v) in vals.iter_mut().enumerate() {
            let s = (lane & !7) + select[lane % 8];
            if fetch_inactive || exec >> s & 1 != 0 {
                *v = w.vread(src, s, None)?;
            }
        }
        return dpp_apply(w, i, vals, exec);
    }
    use fld::vop2_dpp16::*;
    let (src, ctrl, bound_zero) = (VSRC0.operand(&iw), DPP.get(&iw), BC.is_set(&iw));
    let fetch_inactive = FI.is_set(&iw);
    let (row_mask, bank_mask) = (ROW_MASK.get(&iw), BANK_MASK.get(&iw));
    if !dpp_ctrl::known(ctrl) {
        return Err(format!("DPP control {ctrl:#x} is not implemented").into());
    }
    let exec = w.exec();
    let mut vals = [0u32; 32];
    let mut write = 0u32;
    // A wave64's second pass holds rows 2 and 3.
    let first_row = 2 * w.half;
    for (lane, v) in vals.iter_mut().enumerate() {
        if row_mask >> (first_row + lane / 16) & 1 == 0 || bank_mask >> (lane % 16 / 4) & 1 == 0 {
            continue;
        }
        match dpp_lane(ctrl, lane).filter(|&s| fetch_inactive || exec >> s & 1 != 0) {
            Some(s) => *v = w.vread(src, s, None)?,
            None if bound_zero => *v = 0,
            None => continue,
        }
        write |= 1 << lane;
    }
    dpp_apply(w, i, vals, exec & write)
}

/// Runs a DPP instruction's operation with src0 taken from `vals` (a scratch register),
/// on the lanes of `lanes`.
pub(crate) fn dpp_apply(w: &mut Wave, i: &Inst, vals: [u32; 32], lanes: u32) -> R<()> {
    let exec = w.exec();
    // DPP16's src0/src1 neg and abs bits (DPP8 has none).
    let iw = i.dpp_words();
    let mods = if i.enc == Encoding::Vop3 {
        // VOP3's own modifiers (its DPP dword leaves neg and abs to them).
        let m = super::exec::vop3_mods(i);
        if m != Mods::NONE {
            super::modifiers::check_vop3(i.op, m)?;
        }
        m
    } else if i.dpp8.is_some() {
        Mods::NONE
    } else {
        use fld::vop2_dpp16::*;
        Mods {
            neg: (SRC0_NEG.get(&iw) | SRC1_NEG.get(&iw) << 1) as u8,
            abs: (SRC0_ABS.get(&iw) | SRC1_ABS.get(&iw) << 1) as u8,
            ..Mods::NONE
        }
    };
    if mods != Mods::NONE && i.enc != Encoding::Vop3 {
        super::modifiers::check_dpp16(i, mods)?;
    }
    w.v.push(VgprRow(vals));
    let tmp = 256 + (w.v.len() - 1) as u16;
    w.s[EXEC_LO + w.half] = lanes;
    let r = match i.enc {
        Encoding::Vop1 => valu(
            w,
            i,
            Vop {
                op: VOP1_IN_VOP3 + i.op,
                dst: fld::vop1::VDST.index(&iw),
                sdst: None,
                srcs: [tmp, 0, 0],
                m: mods,
            },
        ),
        // VOPC: lanes the DPP disabled compare as inactive ones do (their bit is 0).
        Encoding::Vopc => vcmp(w, i, i.op, VCC_LO, [tmp, fld::vopc::VSRC1.operand(&iw)], mods),
        // VOP3: its sources 1 and 2 and its destinations from its own two dwords; its
        // compares (VOPC's block) write the mask VDST names.
        Encoding::Vop3 => {
            let w3 = i.words();
            let (s1, s2) = (fld::vop3::SRC1.operand(&w3), fld::vop3::SRC2.operand(&w3));
            if i.op <= super::exec::VOPC_IN_VOP3_LAST {
                vcmp(w, i, i.op, fld::vop3::VDST.index(&w3), [tmp, s1], mods)
            } else {
                let sdst = Vop3sd::from_op(i.op).map(|_| fld::vop3sd::SDST.index(&w3));
                valu(
                    w,
                    i,
                    Vop {
                        op: i.op,
                        dst: fld::vop3::VDST.index(&w3),
                        sdst,
                        srcs: [tmp, s1, s2],
                        m: mods,
                    },
                )
            }
        }
        _ => {
            let dst = fld::vop2::VDST.index(&iw);
            let s2 = if i.op == vop2::V_FMAC_F32_E32 {
                256 + dst as u16
            } else {
                VCC_LO as u16
            };
            valu(
                w,
                i,
                Vop {
                    op: VOP2_IN_VOP3 + i.op,
                    dst,
                    sdst: Some(VCC_LO),
                    srcs: [tmp, fld::vop2::VSRC1.operand(&iw), s2],
                    m: mods,
                },
            )
        }
    };
    // A DPP v_cmpx has written EXEC; anything else gets its EXEC back.
    if !(i.enc == Encoding::Vopc && writes_exec(i.op)) {
        w.s[EXEC_LO + w.half] = exec;
    }
    w.v.pop();
    r
}

/// The moves that pick a lane or a register by index: `v_readfirstlane_b32`,
/// `v_readlane_b32` and `v_writelane_b32` (a lane chosen by a scalar), the permlanes,
/// and `v_movrel{d,s,sd}_b32` (VGPRs offset by M0), VOP3-numbered. `Ok(false)` when
/// `op` is none of them.
pub(crate) fn indexed_move(w: &mut Wave, op: u16, dst: usize, srcs: [u16; 3], m: Mods, lit: Option<u32>) -> R<bool> {
    let exec = w.exec();
    match op {
        // v_readfirstlane_b32: the first active lane (lane 0 when none) to an SGPR
        // (of all 64 in a wave64: these three run once for the whole wave).
        vop3::V_READFIRSTLANE_B32_E64 => {
            let all = w.exec_all();
            let lane = if all == 0 { 0 } else { all.trailing_zeros() as usize };
            let v = w.vread_lane64(srcs[0], lane, lit)?;
            w.swrite(dst, v)?;
        }
        // v_readlane_b32 / v_writelane_b32: a lane chosen by a scalar.
        vop3::V_READLANE_B32 => {
            let lane = (w.sread(srcs[1], lit)? & w.lane_mask()) as usize;
            let v = w.vread_lane64(srcs[0], lane, lit)?;
            w.swrite(dst, v)?;
        }
        vop3::V_WRITELANE_B32 => {
            let lane = (w.sread(srcs[1], lit)? & w.lane_mask()) as usize;
            let v = w.sread(srcs[0], lit)?;
            w.vwrite_lane64(dst, lane, v)?;
        }
        // v_movreld_b32 / v_movrels_b32 / v_movrelsd_b32: VGPRs indexed by M0 (the
        // destination, the source, or both).
        vop3::V_MOVRELD_B32_E64..=vop3::V_MOVRELSD_B32_E64 => {
            let m0 = w.s[M0] as usize;
            for lane in 0..32 {
                if exec >> lane & 1 == 0 {
                    continue;
                }
                let src = match (op, srcs[0]) {
                    (vop3::V_MOVRELD_B32_E64, s) => s,
                    (_, s) if s >= 256 => (s as usize + m0).min(u16::MAX as usize) as u16,
                    _ => return Err("v_movrels with a scalar source".into()),
                };
                let v = w.vread(src, lane, lit)?;
                let d = if op == vop3::V_MOVRELS_B32_E64 { dst } else { dst + m0 };
                w.vwrite(d, lane, v)?;
            }
        }
        // v_permlane16_b32 / v_permlanex16_b32: within each row of 16 (or from the other
        // row), lane i reads the lane nibble i of {S2, S1} names. op_sel[0] fetches from
        // disabled lanes; otherwise op_sel[1] (bound control) writes 0 for them, or the
        // lane keeps its value.
        vop3::V_PERMLANE16_B32 | vop3::V_PERMLANEX16_B32 => {
            let sel = (w.sread(srcs[2], lit)? as u64) << 32 | w.sread(srcs[1], lit)? as u64;
            let (fetch_inactive, bound_zero) = (m.opsel & 1 != 0, m.opsel & 2 != 0);
            let mut out = [0u32; 32];
            let mut write = 0u32;
            for (lane, o) in out.iter_mut().enumerate() {
                if exec >> lane & 1 == 0 {
                    continue;
                }
                let row = if op == vop3::V_PERMLANEX16_B32 {
                    (lane / 16) ^ 1
                } else {
                    lane / 16
                };
                let s = row * 16 + (sel >> (4 * (lane % 16)) & 0xf) as usize;
                if fetch_inactive || exec >> s & 1 != 0 {
                    *o = w.vread(srcs[0], s, lit)?;
                } else if !bound_zero {
                    continue;
                }
                write |= 1 << lane;
            }
            for (lane, o) in out.iter().enumerate() {
                if write >> lane & 1 != 0 {
                    w.vwrite(dst, lane, *o)?;
                }
            }
        }
        _ => return Ok(false),
    }
    Ok(true)
}

/// VOPD: two VALU ops issued together; both read their sources before either writes.
/// One half of a VOPD pair over every lane into `out` (EXEC picks the lanes written
/// later: each operation is a pure function of its lane's operands), with MODE keeping
/// f32 denormals; `false` for the operations and operands the lane-by-lane path takes.
#[inline(always)]
fn vopd_half(w: &Wave, op: u16, s0: u16, s1: u16, d: usize, lit: Option<u32>, out: &mut [u32; 32]) -> bool {
    let (Some(la), Some(lb), Some(acc)) = (Lanes::of(w, s0, lit), Lanes::of(w, s1, lit), w.v.get(d)) else {
        return false;
    };
    let (mut at, mut bt) = ([0u32; 32], [0u32; 32]);
    let (a, b) = (la.in_place(w, &mut at), lb.in_place(w, &mut bt));
    let k = lit.unwrap_or(0);
    let vcc = w.vcc();
    match op {
        vopd::V_DUAL_FMAC_F32 => *out = fma_wave(a, b, acc),
        vopd::V_DUAL_FMAAK_F32 => *out = fma_wave(a, b, &[k; 32]),
        vopd::V_DUAL_FMAMK_F32 => *out = fma_wave(a, &[k; 32], b),
        vopd::V_DUAL_MUL_F32 => every_lane(out, |l| (f(a[l]) * f(b[l])).to_bits()),
        vopd::V_DUAL_ADD_F32 => every_lane(out, |l| (f(a[l]) + f(b[l])).to_bits()),
        vopd::V_DUAL_SUB_F32 => every_lane(out, |l| (f(a[l]) - f(b[l])).to_bits()),
        vopd::V_DUAL_SUBREV_F32 => every_lane(out, |l| (f(b[l]) - f(a[l])).to_bits()),
        vopd::V_DUAL_MOV_B32 => *out = *a,
        vopd::V_DUAL_CNDMASK_B32 => every_lane(out, |l| if vcc >> l & 1 != 0 { b[l] } else { a[l] }),
        vopd::V_DUAL_ADD_NC_U32 => every_lane(out, |l| a[l].wrapping_add(b[l])),
        vopd::V_DUAL_LSHLREV_B32 => every_lane(out, |l| b[l] << (a[l] & 31)),
        vopd::V_DUAL_AND_B32 => every_lane(out, |l| a[l] & b[l]),
        _ => return false,
    }
    true
}

/// A VOPD pair over whole registers, each half `(op, src0, vsrc1, vdst)`: both computed
/// before either is written (the lanes `exec` enables); `false`, with nothing written,
/// where a half takes the lane-by-lane path. Inlined into each of [`super::wide::run`]'s
/// builds.
#[inline(always)]
fn vopd_whole(w: &mut Wave, halves: [(u16, u16, u16, usize); 2], lit: Option<u32>, exec: u32) -> bool {
    let [(opx, sx0, sx1, dx), (opy, sy0, sy1, dy)] = halves;
    let (mut x, mut y) = ([0u32; 32], [0u32; 32]);
    if !(vopd_half(w, opx, sx0, sx1, dx, lit, &mut x) && vopd_half(w, opy, sy0, sy1, dy, lit, &mut y)) {
        return false;
    }
    write_lanes(w, dx, &x, exec);
    write_lanes(w, dy, &y, exec);
    true
}

/// A VOPD pair for [`super::wide::run`].
struct VopdWhole<'a> {
    w: &'a mut Wave,
    halves: [(u16, u16, u16, usize); 2],
    lit: Option<u32>,
    exec: u32,
}

impl super::wide::Whole for VopdWhole<'_> {
    type Out = bool;
    #[inline(always)]
    fn run(self) -> bool {
        vopd_whole(self.w, self.halves, self.lit, self.exec)
    }
}

/// `out[l] = g(l)` for every lane: a loop without branches, which vectorizes.
#[inline(always)]
fn every_lane(out: &mut [u32; 32], g: impl Fn(usize) -> u32) {
    for (l, o) in out.iter_mut().enumerate() {
        *o = g(l);
    }
}

pub(crate) fn vopd(w: &mut Wave, i: &Inst) -> R<()> {
    match VopdArgs::of(i) {
        Some(a) => vopd_run(w, i, a),
        None => Err(super::exec::unsupported(i)),
    }
}

/// A VOPD pair's halves, decoded once: each half's opcode, SRC0 and VSRC1 (operand
/// numbers) and destination VGPR.
#[derive(Clone, Copy, Debug)]
pub(crate) struct VopdArgs {
    halves: [(u16, u16, u16, usize); 2],
}

impl VopdArgs {
    /// `i`'s halves when it is a VOPD instruction.
    pub(crate) fn of(i: &Inst) -> Option<VopdArgs> {
        use fld::vopd::*;
        if i.enc != super::decode::Encoding::Vopd {
            return None;
        }
        let iw = i.words();
        let vdstx = VDSTX.index(&iw);
        Some(VopdArgs {
            halves: [
                (OPX.get(&iw) as u16, SRCX0.operand(&iw), VSRCX1.operand(&iw), vdstx),
                (
                    OPY.get(&iw) as u16,
                    SRCY0.operand(&iw),
                    VSRCY1.operand(&iw),
                    VDSTY.index(&iw, vdstx),
                ),
            ],
        })
    }
}

/// Runs the VOPD pair `i` whose halves are `a`.
pub(crate) fn vopd_run(w: &mut Wave, i: &Inst, a: VopdArgs) -> R<()> {
    let [(opx, srcx0, vsrcx1, vdstx), (opy, srcy0, vsrcy1, vdsty)] = a.halves;
    let exec = w.exec();
    let lit = i.literal;
    // Both halves a whole wave at a time when they can be: read before either writes.
    // (MODE keeping f32 denormals and rounding f32 to nearest-even, as the host does.)
    let f32_denormals = MODE_DENORM_F32_IN | MODE_DENORM_F32_OUT;
    if w.mode & (f32_denormals | MODE_ROUND_F32) == f32_denormals && !slow_only() {
        let halves = [(opx, srcx0, vsrcx1, vdstx), (opy, srcy0, vsrcy1, vdsty)];
        if super::wide::run(VopdWhole { w, halves, lit, exec }) {
            return Ok(());
        }
    }
    if w.mode & MODE_ROUND_F32 != 0 {
        for op in [opx, opy] {
            if let Some(o) = Vopd::from_op(op) {
                super::rounding::check(w, o.result_format(), o.name())?;
            }
        }
    }
    let r32 = w.round32();
    let mut out = [[0u32; 32]; 2];
    #[allow(clippy::needless_range_loop)] // lanes index several arrays at once
    for lane in 0..32 {
        if exec >> lane & 1 == 0 {
            continue;
        }
        for (k, (op, s0, s1, d)) in [(opx, srcx0, vsrcx1, vdstx), (opy, srcy0, vsrcy1, vdsty)]
            .into_iter()
            .enumerate()
        {
            let a = w.vread(s0, lane, lit)?;
            let b = w.vread(s1, lane, lit)?;
            let acc = w.vread(256 + d as u16, lane, lit)?;
            let fl = |x: u32| w.f32_in(f(x));
            let k_lit = fl(lit.unwrap_or(0));
            let r = match op {
                vopd::V_DUAL_FMAC_F32 => fma32(fl(a), fl(b), fl(acc), r32).to_bits(),
                vopd::V_DUAL_FMAAK_F32 => fma32(fl(a), fl(b), k_lit, r32).to_bits(),
                vopd::V_DUAL_FMAMK_F32 => fma32(fl(a), k_lit, fl(b), r32).to_bits(),
                vopd::V_DUAL_MUL_F32 => mul32(fl(a), fl(b), r32).to_bits(),
                vopd::V_DUAL_ADD_F32 => add32(fl(a), fl(b), r32).to_bits(),
                vopd::V_DUAL_SUB_F32 => sub32(fl(a), fl(b), r32).to_bits(),
                vopd::V_DUAL_SUBREV_F32 => sub32(fl(b), fl(a), r32).to_bits(),
                vopd::V_DUAL_MUL_DX9_ZERO_F32 => mul_dx9(fl(a), fl(b), r32).to_bits(),
                vopd::V_DUAL_MAX_F32 => minmax::max(fl(a), fl(b), w.nans()).to_bits(),
                vopd::V_DUAL_MIN_F32 => minmax::min(fl(a), fl(b), w.nans()).to_bits(),
                vopd::V_DUAL_DOT2ACC_F32_F16 => dot2_f32(w, a, b, fl(acc), false).to_bits(),
                // v_dual_dot2acc_f32_bf16: the same over bfloat16 halves.
                vopd::V_DUAL_DOT2ACC_F32_BF16 => dot2_f32(w, a, b, fl(acc), true).to_bits(),
                _ => {
                    out[k][lane] = match op {
                        vopd::V_DUAL_MOV_B32 => a,
                        vopd::V_DUAL_CNDMASK_B32 => {
                            if w.vcc() >> lane & 1 != 0 {
                                b
                            } else {
                                a
                            }
                        }
                        vopd::V_DUAL_ADD_NC_U32 => a.wrapping_add(b),
                        vopd::V_DUAL_LSHLREV_B32 => b << (a & 31),
                        vopd::V_DUAL_AND_B32 => a & b,
                        _ => return Err(Trap::missing(format!("VOPD operation {op} is not implemented"))),
                    };
                    continue;
                }
            };
            out[k][lane] = w.f32_out(r);
        }
    }
    for (lane, (x, y)) in out[0].iter().zip(&out[1]).enumerate() {
        if exec >> lane & 1 != 0 {
            w.vwrite(vdstx, lane, *x)?;
            w.vwrite(vdsty, lane, *y)?;
        }
    }
    Ok(())
}
