//! `cargo xtask oracle [--gen rdna3|rdna4] [--ops PATTERN] [--enc LABEL] [--rounds N]
//! [--seed S]`: the interpreter against an independent executable reading of the ISA.
//!
//! `--gen rdna4` runs RDNA4's opcodes (`amd_isa::rdna4::execute`) against tinygrad's
//! emulator reading RDNA4's pseudocode: the ALU encodings (SOP1, SOP2, SOPK, SOPC, VOP1,
//! VOP2, VOPC, VOP3, VOP3SD, VOP3P, VOPD) and DS, whose layouts RDNA4 keeps — with the
//! VOP3, VOP3SD and VOP3P modifiers (and omod) and the DPP16 sources of the RDNA3
//! instruction a form runs as, where it runs as one of its encoding, none on RDNA4's
//! own — and RDNA4's own
//! memory encodings VGLOBAL, VFLAT, VSCRATCH and SMEM as GLOBAL, FLAT, SCRATCH and SMEM
//! run below (atomics returning: TH_ATOMIC_RETURN); not VBUFFER, which tinygrad's
//! emulator does not decode. Its MODE is 0xf0 (gfx12 has no IEEE or DX10_CLAMP bit).
//! RDNA3's is the default:
//!
//! Every implemented opcode of the ALU encodings (SOP1, SOP2, SOPK, SOPC, VOP1, VOP2,
//! VOPC, VOP3, VOP3SD, VOP3P; VOPD's in the X and the Y half; VOP1/VOP2/VOPC with a
//! DPP16 source, `--enc DPP16`; DS, with the first 4 KiB of LDS carried both ways;
//! GLOBAL, FLAT and SMEM, on a 4 KiB window of memory; SCRATCH, on each lane's private
//! memory, the window's 128-byte slice per lane) is run on random and edge-case
//! operands (zeros, denormals, infinities, NaNs, the extremes of every integer width,
//! several EXEC patterns; VOP3, VOP3SD and VOP3P also with the modifiers
//! `amd_isa::rdna3::modifiers` says each form takes, and with omod, `VOP3.OMOD`)
//! through the interpreter (`amd_isa::rdna3::execute`, or
//! `execute_with_memory` for the memory window) and through tinygrad's RDNA3 emulator
//! (its current tree's `test/mockgpu/amd/emu.py`, which compiles each instruction's
//! pseudocode from AMD's ISA manual), and every register, LDS or memory word where
//! they differ is reported, by opcode, with the operands. `--enc` keeps the cases
//! whose encoding label (`VOPD.X`, `VOP2.DPP16`, `GLOBAL`, …) contains it.
//!
//! Needs python3, clang-19 (the emulator compiles with `clang`) and tinygrad's tree:
//! `TINYGRAD_DIR=/path/to/tinygrad` (a clone of github.com/tinygrad/tinygrad). It runs
//! offline and never in the test command. Disagreements are written, reduced to one
//! lane's values broadcast, to `target/oracle/disagreements.txt` in the format of
//! `crates/amd-isa/tests/oracle/*.txt`, where the cases worth keeping become
//! ordinary tests (`crates/amd-isa/tests/oracle.rs`).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use amd_isa::rdna3::{Entry, Modifiers, Status, WaveState, execute_with_memory, modifiers, takes_dpp};

use crate::{Result, workspace_root};

/// VGPRs a case carries: v0–v15 scratch, sources at v16, v24, v32 (8 each, for WMMA),
/// the destination at v40.
const VGPRS: usize = 48;
const SRC: [u32; 3] = [16, 24, 32];
const VDST: u32 = 40;
/// Scalar sources s10, s12 (and s14 for a carry or mask), destinations s20 and s22.
const SSRC: [u32; 3] = [10, 12, 14];
const SDST: u32 = 20;
const SDST2: u32 = 22;
const M0: usize = 125;
const VCC: usize = 106;
const EXEC: usize = 126;
/// id, dword count, four dwords, MODE, SCC, the global window's address (2 words), and
/// which registers hold addresses into it (0 none, 1 v16:v17, 2 s10:s11).
const HEADER: usize = 11;
/// The LDS a case carries both ways: its first 4 KiB (DS cases address the first 2);
/// then the global window's 4 KiB, kept in the oracle's states as the next 4 KiB of
/// LDS (no case reaches that far into LDS).
const LDS_WORDS: usize = 2048;
/// Bytes of the window global and flat cases address.
const GLOBAL_BYTES: usize = 4096;
const RECORD: usize = HEADER + 128 + VGPRS * 32 + LDS_WORDS;

/// Scalar instructions whose result is not a function of registers (program
/// counter, hardware registers, messages, waits, traps).
const SKIP: &[&str] = &[
    "s_getpc_b64",
    "s_setpc_b64",
    "s_swappc_b64",
    "s_rfe_b64",
    "s_call_b64",
    "s_getreg_b32",
    "s_setreg_b32",
    "s_setreg_imm32_b32",
    "s_sendmsg_rtn_b32",
    "s_sendmsg_rtn_b64",
    "s_version",
    "s_waitcnt_vscnt",
    "s_waitcnt_vmcnt",
    "s_waitcnt_expcnt",
    "s_waitcnt_lgkmcnt",
    "s_subvector_loop_begin",
    "s_subvector_loop_end",
];

/// One case: an instruction and the registers before it.
struct Case {
    name: String,
    encoding: &'static str,
    words: Vec<u32>,
    state: WaveState,
    /// Which registers hold addresses into the global window (see [`HEADER`]).
    reloc: u32,
}

/// The outcome of a case on one side.
type Outcome = std::result::Result<WaveState, String>;

/// The name of RDNA3's opcode `op` of a VOP1, VOP2 or VOPC encoding.
fn rdna3_name(encoding: &str, op: u16) -> Option<&'static str> {
    use amd_isa::rdna3::opcodes::{Vop1, Vop2, Vopc};
    match encoding {
        "VOP1" => Vop1::from_op(op).map(Vop1::name),
        "VOP2" => Vop2::from_op(op).map(Vop2::name),
        "VOPC" => Vopc::from_op(op).map(Vopc::name),
        _ => None,
    }
}

/// The RDNA3 opcode an RDNA4 VOP1, VOP2, VOPC, VOP3, VOP3SD or VOP3P opcode runs as,
/// where it runs as one of the same encoding.
fn rdna3_op(encoding: &str, op: u16) -> Option<u16> {
    use amd_isa::rdna3::Encoding;
    let want = match encoding {
        "VOP3" | "VOP3SD" => Encoding::Vop3,
        "VOP3P" => Encoding::Vop3p,
        "VOP1" => Encoding::Vop1,
        "VOP2" => Encoding::Vop2,
        "VOPC" => Encoding::Vopc,
        _ => return None,
    };
    let (_, _, words) = amd_isa::rdna4::probes()
        .into_iter()
        .find(|&(e, _, ref w)| e == encoding && amd_isa::rdna4::Inst::decode(w).is_ok_and(|i| i.op == op))?;
    let r = amd_isa::rdna4::Inst::decode(&words).ok()?.to_rdna3()?;
    (r.enc == want).then_some(r.op)
}

/// The instruction set under test.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Gen {
    Rdna3,
    Rdna4,
}

impl Gen {
    fn name(self) -> &'static str {
        match self {
            Gen::Rdna3 => "rdna3",
            Gen::Rdna4 => "rdna4",
        }
    }

    fn coverage(self) -> Vec<Entry> {
        match self {
            Gen::Rdna3 => amd_isa::rdna3::coverage(),
            Gen::Rdna4 => amd_isa::rdna4::coverage(),
        }
    }

    /// The interpreter's side of one case without memory.
    fn execute(self, words: &[u32], st: &mut WaveState) -> std::result::Result<(), amd_isa::ExecError> {
        match self {
            Gen::Rdna3 => amd_isa::rdna3::execute(words, st),
            Gen::Rdna4 => amd_isa::rdna4::execute(words, st),
        }
    }

    /// The interpreter's side of one case with `window` mapped at its own address.
    fn execute_with_memory(
        self,
        words: &[u32],
        st: &mut WaveState,
        window: &mut [u8],
    ) -> std::result::Result<(), amd_isa::ExecError> {
        match self {
            Gen::Rdna3 => execute_with_memory(words, st, window),
            Gen::Rdna4 => {
                let base = window.as_ptr() as u64;
                let mut mem = amd_isa::SliceMemory::new();
                mem.map(base, window);
                amd_isa::rdna4::execute_on(words, st, &mem)
            }
        }
    }

    /// The modifiers a form takes (RDNA3's, from what LLVM assembles). An RDNA4 VOP1,
    /// VOP2, VOPC (their DPP16 neg and abs), VOP3, VOP3SD or VOP3P form that runs as an
    /// RDNA3 instruction of its encoding takes what that one takes (the fields lie
    /// alike); RDNA4's own take none here.
    fn modifiers(self, encoding: &str, op: u16) -> Modifiers {
        match self {
            Gen::Rdna3 => modifiers(encoding, op),
            Gen::Rdna4 => rdna3_op(encoding, op).map_or_else(Modifiers::default, |op| modifiers(encoding, op)),
        }
    }

    /// Whether the generator writes cases of this encoding.
    fn generates(self, encoding: &str) -> bool {
        match self {
            Gen::Rdna3 => true,
            // tinygrad's emulator decodes no buffer instructions.
            Gen::Rdna4 => encoding != "VBUFFER",
        }
    }
}

pub fn run(args: &[String]) -> Result<()> {
    let mut pattern = String::new();
    let mut rounds = 6usize;
    let mut seed = 0x5eed_u64;
    let mut only_enc = String::new();
    let mut gen_ = Gen::Rdna3;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{a} needs a value"));
        match a.as_str() {
            "--ops" => pattern = value()?.clone(),
            "--rounds" => rounds = value()?.parse()?,
            "--seed" => seed = value()?.parse()?,
            "--enc" => only_enc = value()?.clone(),
            "--gen" => {
                gen_ = match value()?.as_str() {
                    "rdna3" => Gen::Rdna3,
                    "rdna4" => Gen::Rdna4,
                    other => return Err(format!("--gen {other}: rdna3 or rdna4").into()),
                }
            }
            _ => {
                return Err(
                    "usage: cargo xtask oracle [--gen rdna3|rdna4] [--ops PATTERN] [--enc LABEL] [--rounds N] [--seed S]"
                        .into(),
                );
            }
        }
    }
    let tinygrad = std::env::var_os("TINYGRAD_DIR")
        .map(PathBuf::from)
        .ok_or("TINYGRAD_DIR must name a checkout of tinygrad's tree (github.com/tinygrad/tinygrad)")?;
    let dir = workspace_root().join("target/oracle").join(gen_.name());
    std::fs::create_dir_all(&dir)?;

    let mut rng = Rng(seed | 1);
    let mut cases = Vec::new();
    // The global window: its address goes into the cases' registers; the emulator's
    // side moves those registers to a window of its own.
    let mut window = vec![0u8; GLOBAL_BYTES];
    let window_va = window.as_ptr() as u64;
    for e in gen_.coverage() {
        if e.status != Status::Implemented
            || SKIP.contains(&e.name)
            || !e.name.contains(pattern.as_str())
            || !gen_.generates(e.encoding)
        {
            continue;
        }
        let allowed = gen_.modifiers(e.encoding, e.op);
        for variant in 0..3 {
            let Some(words) = encode(gen_, e.encoding, e.op, e.name, variant, allowed, &mut rng) else {
                continue;
            };
            // VOPD's second variant is the Y half, VOP3's third its output modifier
            // (labels of their own).
            let encoding = match e.encoding {
                "VOPD" if words.first().is_some_and(|w| w >> 22 & 0xf == DUAL_MOV) => "VOPD.Y",
                "VOPD" => "VOPD.X",
                "VOP3" if variant == 2 => "VOP3.OMOD",
                "VOP3SD" if variant == 2 => "VOP3SD.OMOD",
                other => other,
            };
            for round in 0..rounds {
                // The VOP3, VOP3SD and VOP3P modifiers are drawn afresh each round.
                let words = match (variant, e.encoding) {
                    (1 | 2, "VOP3" | "VOP3SD" | "VOP3P") if round > 0 => {
                        encode(gen_, e.encoding, e.op, e.name, variant, allowed, &mut rng)
                            .unwrap_or_else(|| words.clone())
                    }
                    _ => words.clone(),
                };
                let mut state = initial(e.name, round, &mut rng);
                if gen_ == Gen::Rdna4 {
                    state.mode = 0xf0;
                }
                let mut reloc = 0;
                match e.encoding {
                    "DS" => ds_addresses(&mut state, e.name, &mut rng),
                    "GLOBAL" | "FLAT" | "VGLOBAL" | "VFLAT" => {
                        reloc = global_addresses(&mut state, variant, window_va, &mut rng)
                    }
                    // The window's address in s10:s11.
                    "SMEM" => reloc = global_addresses(&mut state, 1, window_va, &mut rng),
                    "SCRATCH" | "VSCRATCH" => reloc = scratch_addresses(&mut state, &mut rng),
                    _ => {}
                }
                cases.push(Case {
                    name: e.name.to_string(),
                    encoding,
                    words,
                    state,
                    reloc,
                });
            }
        }
        // A DPP16 source in place of src0, with a fresh control each round.
        // (RDNA4's: those that run as the RDNA3 instruction of their encoding, which
        // says whether it takes DPP and which modifiers.)
        let dpp = match gen_ {
            Gen::Rdna3 => takes_dpp(e.name),
            Gen::Rdna4 => rdna3_op(e.encoding, e.op)
                .and_then(|op| rdna3_name(e.encoding, op))
                .is_some_and(takes_dpp),
        };
        if matches!(e.encoding, "VOP1" | "VOP2" | "VOPC") && dpp {
            for round in 0..rounds {
                let Some(words) = encode_dpp16(e.encoding, e.op, allowed, &mut rng) else {
                    continue;
                };
                let state = initial(e.name, round, &mut rng);
                cases.push(Case {
                    reloc: 0,
                    name: e.name.to_string(),
                    encoding: DPP_LABEL[["VOP1", "VOP2", "VOPC"]
                        .iter()
                        .position(|x| *x == e.encoding)
                        .unwrap_or(0)],
                    words,
                    state,
                });
            }
        }
    }
    cases.retain(|c| c.encoding.contains(only_enc.as_str()));
    println!("oracle: {} cases", cases.len());
    let ours: Vec<Outcome> = cases
        .iter()
        .map(|c| {
            let mut st = c.state.clone();
            if c.reloc == 0 {
                return gen_.execute(&c.words, &mut st).map(|()| st).map_err(|e| e.to_string());
            }
            let held = 4 * LDS_WORDS - GLOBAL_BYTES..4 * LDS_WORDS;
            if c.reloc == SCRATCH_RELOC {
                // The window is the lanes' private memory, SCRATCH_STRIDE bytes each.
                st.private = st.lds[held.clone()]
                    .chunks(SCRATCH_STRIDE)
                    .map(<[u8]>::to_vec)
                    .collect();
                let r = gen_.execute(&c.words, &mut st);
                for (lane, p) in st.private.iter().enumerate() {
                    let at = held.start + lane * SCRATCH_STRIDE;
                    let n = p.len().min(SCRATCH_STRIDE);
                    st.lds[at..at + n].copy_from_slice(&p[..n]);
                }
                st.private.clear();
                return r.map(|()| st).map_err(|e| e.to_string());
            }
            window.copy_from_slice(&st.lds[held.clone()]);
            let r = gen_.execute_with_memory(&c.words, &mut st, &mut window);
            st.lds[held].copy_from_slice(&window);
            r.map(|()| st).map_err(|e| e.to_string())
        })
        .collect();
    let theirs = reference(&cases, window_va, gen_, &tinygrad, &dir)?;
    let report = compare(&cases, &ours, &theirs);
    let disagreements = reduce(&cases, &ours, &theirs, gen_, &tinygrad, &dir)?;
    std::fs::write(dir.join("report.txt"), &report)?;
    std::fs::write(dir.join("disagreements.txt"), &disagreements)?;
    print!("{report}");
    println!(
        "oracle: report in {}, reduced cases in {}",
        dir.join("report.txt").display(),
        dir.join("disagreements.txt").display()
    );
    Ok(())
}

/// A DS case's addresses and LDS: each lane its own slot, in a random order, so no two
/// lanes' accesses overlap (which lane wins then is not specified) — 32 bytes of the
/// first KiB, or in the stride-64 forms 8 bytes of the first 256, their second access
/// 256 to 768 bytes further —, and the first 4 KiB of LDS random.
fn ds_addresses(st: &mut WaveState, name: &str, rng: &mut Rng) {
    let mut slots: Vec<u32> = (0..32).collect();
    for i in (1..32).rev() {
        slots.swap(i, rng.next() as usize % (i + 1));
    }
    let size = if name.contains("stride64") { 8 } else { 32 };
    for (lane, slot) in slots.into_iter().enumerate() {
        st.vgpr[SRC[0] as usize][lane] = size * slot;
    }
    for b in st.lds[..4 * LDS_WORDS].iter_mut() {
        *b = rng.next() as u8;
    }
}

/// A global or flat case's addresses and memory: each lane its own 32-byte slot of the
/// window's first KiB (in a random order, so no two lanes' accesses overlap), as a
/// 64-bit address in v16:v17 (variant 0) or an offset in v16 from the window's address
/// in s10:s11; the window's bytes random. Returns the case's `reloc`.
fn global_addresses(st: &mut WaveState, variant: u32, window: u64, rng: &mut Rng) -> u32 {
    let mut slots: Vec<u64> = (0..32).collect();
    for i in (1..32).rev() {
        slots.swap(i, rng.next() as usize % (i + 1));
    }
    for (lane, slot) in slots.into_iter().enumerate() {
        let a = if variant == 0 { window + 32 * slot } else { 32 * slot };
        st.vgpr[SRC[0] as usize][lane] = a as u32;
        st.vgpr[SRC[0] as usize + 1][lane] = (a >> 32) as u32;
    }
    if variant == 1 {
        st.sgpr[SSRC[0] as usize] = window as u32;
        st.sgpr[SSRC[0] as usize + 1] = (window >> 32) as u32;
    }
    let held = 4 * LDS_WORDS - GLOBAL_BYTES..4 * LDS_WORDS;
    for b in st.lds[held].iter_mut() {
        *b = rng.next() as u8;
    }
    if variant == 0 { 1 } else { 2 }
}

/// The `reloc` of a scratch case: the window is the 32 lanes' private memory.
const SCRATCH_RELOC: u32 = 3;
/// Private bytes per lane in a scratch case (the window's 4 KiB over 32 lanes).
const SCRATCH_STRIDE: usize = GLOBAL_BYTES / 32;

/// A scratch case's addresses and memory: each lane's private memory (its slice of the
/// window, random bytes) addressed by a random dword-aligned offset below 64 in v16
/// (SVE) and, for the SGPR form, a base below 16 in s10. Returns [`SCRATCH_RELOC`].
fn scratch_addresses(st: &mut WaveState, rng: &mut Rng) -> u32 {
    for lane in 0..32 {
        st.vgpr[SRC[0] as usize][lane] = rng.next() as u32 % 16 * 4;
    }
    st.sgpr[SSRC[0] as usize] = rng.next() as u32 % 4 * 4;
    let held = 4 * LDS_WORDS - GLOBAL_BYTES..4 * LDS_WORDS;
    for b in st.lds[held].iter_mut() {
        *b = rng.next() as u8;
    }
    SCRATCH_RELOC
}

/// VOPD's move, the other half of a case that tests one operation.
const DUAL_MOV: u32 = 8;
/// VOPD opcodes below this are valid in the X half (4 bits); the Y half has 5.
const OPX_END: u32 = 16;
/// The labels of DPP16 cases, by encoding.
const DPP_LABEL: [&str; 3] = ["VOP1.DPP16", "VOP2.DPP16", "VOPC.DPP16"];

/// A VOP1/VOP2/VOPC instruction reading src0 through a DPP16 dword: a random control
/// among those tinygrad's emulator models (quad_perm, row_shl, row_shr, row_ror,
/// row_mirror, row_half_mirror), every row and bank on, BOUND_CTRL and FI set, and
/// random neg/abs bits on the sources where the form takes them
/// (`amd_isa::rdna3::modifiers`, from what LLVM assembles).
fn encode_dpp16(encoding: &str, op: u16, allowed: Modifiers, rng: &mut Rng) -> Option<Vec<u32>> {
    let op = u32::from(op);
    let r = rng.next();
    let ctrl = match r % 6 {
        0 => (r >> 8) as u32 & 0xff,
        1 => 0x101 + (r >> 8) as u32 % 15,
        2 => 0x111 + (r >> 8) as u32 % 15,
        3 => 0x121 + (r >> 8) as u32 % 15,
        4 => 0x140,
        _ => 0x141,
    };
    let r = rng.next() as u32;
    // Every row and bank on, out-of-row sources read as 0 (BOUND_CTRL) and inactive
    // lanes fetched (FI): where the ISA disables a lane's write instead, tinygrad's
    // emulator computes it from another value. The DPP dword's neg0, abs0, neg1, abs1.
    let (neg, abs) = (u32::from(allowed.neg), u32::from(allowed.abs));
    let mods = r >> 14 & ((neg & 1) | (abs & 1) << 1 | (neg >> 1 & 1) << 2 | (abs >> 1 & 1) << 3);
    let dpp = SRC[0] | ctrl << 8 | 1 << 18 | 1 << 19 | mods << 20 | 0xf << 24 | 0xf << 28;
    let w0 = match encoding {
        "VOP1" => 0x7e00_0000 | VDST << 17 | op << 9 | 250,
        "VOP2" => op << 25 | VDST << 17 | SRC[1] << 9 | 250,
        "VOPC" => 0x7c00_0000 | op << 17 | SRC[1] << 9 | 250,
        _ => return None,
    };
    Some(vec![w0, dpp])
}

/// The instruction's dwords with operands in the case registers; variant 1 adds
/// random VOP3/VOP3SD/VOP3P modifiers where the form takes any (neg, abs, op_sel,
/// clamp; in VOP3P neg_lo, neg_hi, op_sel, op_sel_hi, clamp), variant 2 a random
/// output modifier with them where the form takes omod (VOP3, VOP3SD); `run` draws
/// them again for each round. Which
/// modifiers a form takes is `amd_isa::rdna3::modifiers`: what LLVM assembles,
/// op_sel on the operands the ISA makes 16 bits wide, omod on float results.
fn encode(
    gen_: Gen,
    encoding: &str,
    op: u16,
    name: &str,
    variant: u32,
    allowed: Modifiers,
    rng: &mut Rng,
) -> Option<Vec<u32>> {
    let op = u32::from(op);
    let v = |r: u32| 256 + r;
    let carry_in = name.contains("_co_ci") || name.contains("cndmask");
    let src2 = if carry_in { SSRC[2] } else { v(SRC[2]) };
    let any = allowed.neg | allowed.abs | allowed.op_sel | allowed.op_sel_hi != 0 || allowed.clamp;
    let modified = match (variant, encoding) {
        (0, _) => true,
        (1, "SOPK" | "VOPD" | "GLOBAL" | "FLAT" | "SCRATCH" | "VGLOBAL" | "VFLAT" | "VSCRATCH") => true,
        (1, "VOP3" | "VOP3SD" | "VOP3P") => any,
        (2, "VOP3" | "VOP3SD") => allowed.omod,
        _ => false,
    };
    if !modified {
        return None;
    }
    let words = match encoding {
        "SOP1" => vec![0xbe80_0000 | SDST << 16 | op << 8 | SSRC[0]],
        "SOP2" => {
            let mut w = vec![0x8000_0000 | op << 23 | SDST << 16 | SSRC[1] << 8 | SSRC[0]];
            // The scalar multiply-adds with a constant (RDNA4's) take a literal.
            if name.contains("mk_") || name.contains("ak_") {
                w.push(0x3fc0_0000);
            }
            w
        }
        "SOPK" => {
            let simm = if variant == 0 {
                0x8001
            } else {
                rng.next() as u32 & 0xffff
            };
            // s_setreg/getreg are skipped; the rest read or write sdst.
            vec![0xb000_0000 | op << 23 | SDST << 16 | simm]
        }
        "SOPC" => vec![0xbf00_0000 | op << 16 | SSRC[1] << 8 | SSRC[0]],
        "VOP1" => vec![0x7e00_0000 | VDST << 17 | op << 9 | v(SRC[0])],
        "VOP2" => {
            let mut w = vec![op << 25 | VDST << 17 | SRC[1] << 9 | v(SRC[0])];
            // The multiply-adds with a constant take a literal.
            if name.contains("mk_") || name.contains("ak_") {
                w.push(if name.contains("f16") { 0x3e00 } else { 0x3fc0_0000 });
            }
            w
        }
        "VOPC" => vec![0x7c00_0000 | op << 17 | SRC[1] << 9 | v(SRC[0])],
        // LDS: the address in v16 (see `ds_addresses`), data in v24 and v32, the result
        // to v40; offsets of 0 to 3 (times 4, 8 or 256 in the two-address forms, as
        // bytes in the others).
        "DS" => {
            let r = rng.next() as u32;
            let (off0, off1) = if name.contains("2addr") {
                (r & 3, r >> 2 & 3)
            } else {
                ((r & 3) * 4, 0)
            };
            vec![
                0xd800_0000 | op << 18 | off1 << 8 | off0,
                SRC[0] | SRC[1] << 8 | SRC[2] << 16 | VDST << 24,
            ]
        }
        // Global and flat memory: variant 0 a 64-bit address in v16:v17, variant 1 an
        // SGPR base in s10:s11 and a 32-bit offset in v16 (global only); data from v24,
        // v32 (a compare-swap's comparand), the result to v40 (GLC on for atomics);
        // an offset of 0 to 12.
        "GLOBAL" | "FLAT" => {
            if variant == 1 && encoding == "FLAT" {
                return None;
            }
            let seg = if encoding == "GLOBAL" { 2 << 16 } else { 0 };
            let saddr = if variant == 1 { SSRC[0] } else { 0x7c };
            let offset = (rng.next() as u32 & 3) * 4;
            let glc = if name.contains("atomic") { 1 << 14 } else { 0 };
            vec![
                0xdc00_0000 | seg | op << 18 | glc | offset,
                SRC[0] | SRC[1] << 8 | saddr << 16 | VDST << 24,
            ]
        }
        // Scratch: variant 0 the offset in v16 (SVE), variant 1 a base in s10 plus v16;
        // data from v24, the result to v40; an offset of 0 to 12.
        "SCRATCH" => {
            let saddr = if variant == 1 { SSRC[0] } else { 0x7c };
            let offset = (rng.next() as u32 & 3) * 4;
            vec![
                0xdc00_0000 | 1 << 16 | op << 18 | offset,
                SRC[0] | SRC[1] << 8 | saddr << 16 | 1 << 23 | VDST << 24,
            ]
        }
        // Scalar loads from s10:s11 plus an offset of 0 to 12 into s20 onwards (the
        // buffer loads, which take a resource, are left out); RDNA4's SMEM has its
        // opcode at bits 20:13 and a 24-bit offset.
        "SMEM" => {
            if name.starts_with("s_buffer") {
                return None;
            }
            let offset = (rng.next() as u32 & 3) * 4;
            let op_at = if gen_ == Gen::Rdna4 { 13 } else { 18 };
            vec![
                0xf400_0000 | op << op_at | SDST << 6 | (SSRC[0] / 2),
                0x7c << 25 | offset,
            ]
        }
        // RDNA4's global and flat memory, as GLOBAL and FLAT above: VDST 39:32, the
        // data VGPR 62:55, TH 54:52 (1, TH_ATOMIC_RETURN, for atomics), the address
        // VGPR 71:64, the offset 95:72; SADDR 6:0 (124: none).
        "VGLOBAL" | "VFLAT" => {
            if variant == 1 && encoding == "VFLAT" {
                return None;
            }
            let head = if encoding == "VGLOBAL" {
                0xee00_0000
            } else {
                0xec00_0000
            };
            let saddr = if variant == 1 { SSRC[0] } else { 0x7c };
            let offset = (rng.next() as u32 & 3) * 4;
            let th = if name.contains("atomic") { 1 << 20 } else { 0 };
            vec![head | op << 14 | saddr, VDST | SRC[1] << 23 | th, SRC[0] | offset << 8]
        }
        // RDNA4's scratch: as SCRATCH above, the address VGPR always used (SVE, bit 49).
        "VSCRATCH" => {
            let saddr = if variant == 1 { SSRC[0] } else { 0x7c };
            let offset = (rng.next() as u32 & 3) * 4;
            vec![
                0xed00_0000 | op << 14 | saddr,
                VDST | SRC[1] << 23 | 1 << 17,
                SRC[0] | offset << 8,
            ]
        }
        // Dual issue: the operation in its half (X in variant 0 where X has it, else
        // Y), the other half a move of src2's registers; X writes v40, Y v41.
        "VOPD" => {
            let literal = name.contains("mk_") || name.contains("ak_");
            let (x, y) = if variant == 0 && op < OPX_END {
                (
                    0xc800_0000 | op << 22 | DUAL_MOV << 17 | SRC[1] << 9 | v(SRC[0]),
                    VDST << 24 | (VDST + 1) >> 1 << 17 | v(SRC[2]),
                )
            } else if variant == 1 && op >= OPX_END {
                return None;
            } else {
                (
                    0xc800_0000 | DUAL_MOV << 22 | op << 17 | v(SRC[2]),
                    VDST << 24 | (VDST + 1) >> 1 << 17 | SRC[1] << 9 | v(SRC[0]),
                )
            };
            let mut w = vec![x, y];
            if literal {
                w.push(0x3fc0_0000);
            }
            w
        }
        "VOP3" | "VOP3SD" => {
            let sd = encoding == "VOP3SD";
            let vopc = encoding == "VOP3" && op < 256;
            // v_cmpx writes EXEC, and LLVM puts EXEC_LO in the destination field.
            let dst = match name {
                _ if name.starts_with("v_cmpx") => 126,
                _ if vopc || name == "v_readlane_b32" => SDST2,
                _ => VDST,
            };
            let mut w0 = 0xd400_0000 | op << 16 | dst;
            let mut w1 = match name {
                // The lane-access instructions take scalar lane selects.
                "v_readlane_b32" => v(SRC[0]) | SSRC[1] << 9,
                "v_writelane_b32" => SSRC[0] | SSRC[1] << 9,
                "v_permlane16_b32" | "v_permlanex16_b32" => v(SRC[0]) | SSRC[0] << 9 | SSRC[1] << 18,
                // RDNA4's scalar transcendentals take SGPRs (their result is one too).
                _ if name.starts_with("v_s_") => SSRC[0] | SSRC[1] << 9,
                _ => v(SRC[0]) | v(SRC[1]) << 9 | src2 << 18,
            };
            if sd {
                w0 |= SDST2 << 8;
            }
            if variant >= 1 {
                let r = rng.next() as u32;
                w1 |= (r & u32::from(allowed.neg)) << 29;
                // (VOP3SD: no abs or op_sel, its scalar destination is there.)
                w0 |= (r >> 3 & u32::from(allowed.abs)) << 8;
                w0 |= (r >> 6 & u32::from(allowed.clamp)) << 15;
                w0 |= (r >> 9 & u32::from(allowed.op_sel)) << 11;
                if variant == 2 {
                    // mul:2, mul:4 or div:2 (see `reference` for the emulator's side).
                    w1 |= (1 + (r >> 13) % 3) << 27;
                }
            }
            vec![w0, w1]
        }
        "VOP3P" => {
            let (mut w0, mut w1) = (
                0xcc00_4000 | op << 16 | VDST,
                0x1800_0000 | v(SRC[0]) | v(SRC[1]) << 9 | v(SRC[2]) << 18,
            );
            if variant == 1 {
                let r = rng.next() as u32;
                // neg_hi (dword 0 bits 10:8), op_sel (13:11), op_sel_hi[2] (14), clamp;
                // op_sel_hi[1:0] (dword 1 bits 28:27), neg_lo (31:29).
                let (neg_lo, neg_hi) = (u32::from(allowed.neg), u32::from(allowed.abs));
                let (sel, sel_hi) = (u32::from(allowed.op_sel), u32::from(allowed.op_sel_hi));
                let hi = r >> 6 & sel_hi;
                w0 = 0xcc00_0000
                    | op << 16
                    | VDST
                    | (r & neg_hi) << 8
                    | (r >> 3 & sel) << 11
                    | (hi >> 2 & 1) << 14
                    | (r >> 9 & u32::from(allowed.clamp)) << 15;
                w1 = v(SRC[0]) | v(SRC[1]) << 9 | v(SRC[2]) << 18 | (hi & 3) << 27 | (r >> 10 & neg_lo) << 29;
            }
            vec![w0, w1]
        }
        _ => return None,
    };
    Some(words)
}

/// The registers before a case: sources from the pools of the operation's operand
/// type, the destinations filled with noise (so a write of half a register shows).
fn initial(name: &str, round: usize, rng: &mut Rng) -> WaveState {
    let mut st = WaveState::new(VGPRS);
    let width = operand_width(name);
    for r in SSRC {
        let (lo, hi) = rng.value(width);
        st.sgpr[r as usize] = lo;
        st.sgpr[r as usize + 1] = hi;
    }
    for r in [SDST, SDST2] {
        st.sgpr[r as usize] = rng.next() as u32;
        st.sgpr[r as usize + 1] = rng.next() as u32;
    }
    st.sgpr[VCC] = rng.next() as u32;
    st.sgpr[M0] = rng.next() as u32 & 7;
    st.sgpr[EXEC] = match round {
        0 => u32::MAX,
        1 => 0x5555_5555,
        2 => 1 << (rng.next() % 32),
        3 => 0,
        _ => rng.next() as u32 | 1,
    };
    st.scc = rng.next() & 1 == 1;
    for lane in 0..32 {
        for base in SRC {
            for k in (0..8).step_by(2) {
                let (lo, hi) = rng.value(width);
                st.vgpr[(base + k) as usize][lane] = lo;
                st.vgpr[(base + k + 1) as usize][lane] = hi;
            }
        }
        for r in VDST..VDST + 8 {
            st.vgpr[r as usize][lane] = rng.next() as u32;
        }
    }
    st
}

/// The width of an operation's source operands, from its name's last type.
#[derive(Clone, Copy, PartialEq)]
enum Width {
    B16,
    B32,
    B64,
}

/// The last operand type in an opcode's name (`v_cvt_f32_i32` → `i32`).
fn operand_type(name: &str) -> Option<&str> {
    name.split('_').rev().find(|t| {
        let digits = t.trim_start_matches(|c: char| c.is_ascii_alphabetic());
        t.len() >= 2
            && matches!(&t[..t.len() - digits.len()], "f" | "b" | "i" | "u" | "bf")
            && !digits.is_empty()
            && digits.bytes().all(|b| b.is_ascii_digit())
    })
}

fn operand_width(name: &str) -> Width {
    let last = operand_type(name);
    match last.map(|t| t.trim_start_matches(|c: char| c.is_ascii_alphabetic())) {
        Some("16") | Some("8") => Width::B16,
        Some("64") => Width::B64,
        _ => Width::B32,
    }
}

const F32: &[u32] = &[
    0,
    0x8000_0000,
    0x3f80_0000,
    0xbf80_0000,
    0x3f00_0000,
    0x4000_0000,
    0x4040_0000,
    0xc060_0000,
    0x0001_16c2,
    1,
    0x807f_ffff,
    0x0080_0000,
    0x7f7f_ffff,
    0xff7f_ffff,
    0x7f80_0000,
    0xff80_0000,
    0x7fc0_0000,
    0xffc0_0000,
    0x7f80_0001,
    0x7fbf_ffff,
    0x4049_0fdb,
    0x5015_02f9,
    0xaedb_e6ff,
    0x477f_e000,
    0x4780_0000,
    0x4f00_0000,
    0xcf00_0000,
    0x4f80_0000,
    0x3f7f_ffff,
    0x3f80_0001,
    0x3eaa_aaab,
    0xc2c8_0000,
];
const I32: &[u32] = &[
    0,
    1,
    2,
    0x7fff_ffff,
    0x8000_0000,
    0xffff_ffff,
    0x8000_0001,
    0xffff_fffe,
    31,
    32,
    33,
    63,
    64,
    0xffff,
    0x8000,
    0x7fff,
    0x1_0000,
    0xff,
    0x80,
    0x7f,
    0xffff_8000,
    0xffff_ff80,
    0x1234_5678,
];
const F16: &[u32] = &[
    0, 0x8000, 0x3c00, 0xbc00, 0x3800, 0x4000, 0x0001, 0x8001, 0x03ff, 0x0400, 0x7bff, 0xfbff, 0x7c00, 0xfc00, 0x7e00,
    0xfe00, 0x7c01, 0x7dff, 0x3555, 0xffff, 0x7fff, 0x4248, 0x5640, 0x1, 0x80, 0x7f, 0x8000, 0x10,
];
const F64: &[u64] = &[
    0,
    0x8000_0000_0000_0000,
    0x3ff0_0000_0000_0000,
    0xbff0_0000_0000_0000,
    0x3fe0_0000_0000_0000,
    0x4000_0000_0000_0000,
    0xc00c_0000_0000_0000,
    1,
    0x000f_ffff_ffff_ffff,
    0x0010_0000_0000_0000,
    0x7fef_ffff_ffff_ffff,
    0x7ff0_0000_0000_0000,
    0xfff0_0000_0000_0000,
    0x7ff8_0000_0000_0000,
    0x7ff0_0000_0000_0001,
    0x7e37_e43c_8800_759c,
    0x01a5_6e1f_c2f8_f359,
    0x4340_0000_0000_0000,
    0x43e0_0000_0000_0000,
    0x43f0_0000_0000_0000,
    0xc3e0_0000_0000_0000,
    0x41f0_0000_0000_0000,
    0x4009_21fb_5444_2d18,
    0x7fff_ffff_ffff_ffff,
    0xffff_ffff_ffff_ffff,
    63,
    64,
    0xffff_ffff,
    0x3fd5_5555_5555_5555,
];

/// xorshift64*.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn pick<T: Copy>(&mut self, pool: &[T]) -> T {
        pool[(self.next() % pool.len() as u64) as usize]
    }

    /// Two dwords of operand data: edge values of the width (a quarter random bits).
    fn value(&mut self, width: Width) -> (u32, u32) {
        let r = self.next();
        if r % 4 == 0 {
            return (self.next() as u32, self.next() as u32);
        }
        match width {
            Width::B64 => {
                let x = self.pick(F64);
                (x as u32, (x >> 32) as u32)
            }
            Width::B32 => {
                let pool = if r % 4 == 1 { I32 } else { F32 };
                (self.pick(pool), self.pick(F32))
            }
            Width::B16 => {
                let lo = self.pick(F16) | self.pick(F16) << 16;
                let hi = self.pick(F16) | self.pick(F16) << 16;
                (lo, hi)
            }
        }
    }
}

/// Runs the cases through tinygrad's emulator (`xtask/oracle/tinygrad_emu.py`) as
/// `gen_`'s instructions.
fn reference(cases: &[Case], window: u64, gen_: Gen, tinygrad: &Path, dir: &Path) -> Result<Vec<Outcome>> {
    let input = dir.join("cases.bin");
    let output = dir.join("reference.bin");
    let mut bytes = Vec::with_capacity(cases.len() * RECORD * 4);
    for (id, c) in cases.iter().enumerate() {
        let mut words = [0u32; 4];
        words[..c.words.len()].copy_from_slice(&reference_words(c));
        let mut rec = vec![id as u32, c.words.len() as u32];
        rec.extend(words);
        rec.extend([c.state.mode, u32::from(c.state.scc)]);
        rec.extend([window as u32, (window >> 32) as u32, c.reloc]);
        rec.extend(c.state.sgpr);
        for r in &c.state.vgpr {
            rec.extend(r);
        }
        bytes.extend(rec.iter().flat_map(|w| w.to_le_bytes()));
        bytes.extend(&c.state.lds[..4 * LDS_WORDS]);
    }
    std::fs::write(&input, &bytes)?;
    // The emulator compiles its kernels with `clang`; clang-19 is what Debian installs.
    let shim = dir.join("bin");
    std::fs::create_dir_all(&shim)?;
    let clang = shim.join("clang");
    if !clang.exists() {
        std::os::unix::fs::symlink("/usr/bin/clang-19", &clang)?;
    }
    let path = format!("{}:{}", shim.display(), std::env::var("PATH").unwrap_or_default());
    let script = workspace_root().join("xtask/oracle/tinygrad_emu.py");
    let status = Command::new("python3")
        .arg(&script)
        .arg(&input)
        .arg(&output)
        .env("TINYGRAD_DIR", tinygrad)
        .env("ORACLE_ARCH", gen_.name())
        .env("PATH", path)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .status()?;
    if !status.success() {
        return Err(format!("{} failed: {status}", script.display()).into());
    }
    let mut outcomes = parse_reference(&std::fs::read(&output)?, cases)?;
    for (c, o) in cases.iter().zip(&mut outcomes) {
        if let Ok(st) = o {
            output_modifiers(c, st);
        }
    }
    Ok(outcomes)
}

/// Whether a case tests VOP3's output modifier (its label ends `.OMOD`).
fn omod_case(c: &Case) -> bool {
    c.encoding.ends_with(".OMOD")
}

/// The dwords the emulator runs: the case's, except that an output-modifier case runs
/// without omod and clamp (tinygrad's emulator does not implement omod;
/// [`output_modifiers`] applies both to its result).
fn reference_words(c: &Case) -> Vec<u32> {
    let mut w = c.words.clone();
    if omod_case(c) && w.len() >= 2 {
        w[0] &= !(1 << 15);
        w[1] &= !(3 << 27);
    }
    w
}

/// A float result's format, for applying omod and clamp to it.
#[derive(Clone, Copy)]
enum FloatResult {
    /// A half, in the high half of the register where op_sel bit 3 says.
    F16 {
        high: bool,
    },
    /// Two halves (`v_cvt_pk_rtz_f16_f32`).
    F16Pair,
    F32,
    F64,
}

/// The result format of a VOP3 opcode: the first type its name gives.
fn float_result(name: &str, w0: u32) -> Option<FloatResult> {
    if name.starts_with("v_cvt_pk_rtz_f16") {
        return Some(FloatResult::F16Pair);
    }
    let ty = name.split('_').skip(1).find(|t| {
        t.len() >= 2
            && matches!(t.as_bytes()[0], b'f' | b'i' | b'u' | b'b')
            && t[1..].bytes().all(|c| c.is_ascii_digit())
    })?;
    match ty {
        "f16" => Some(FloatResult::F16 {
            high: w0 >> 14 & 1 == 1,
        }),
        "f32" => Some(FloatResult::F32),
        "f64" => Some(FloatResult::F64),
        _ => None,
    }
}

/// omod's factor: times 2, 4 or 0.5.
fn omod_factor(omod: u32) -> f64 {
    [1.0, 2.0, 4.0, 0.5][(omod & 3) as usize]
}

/// Clamp to [0, 1], NaN to 0 (-0 stays -0).
fn clamped(x: f64, clamp: bool) -> f64 {
    match clamp {
        true if x.is_nan() => 0.0,
        true => x.clamp(0.0, 1.0),
        false => x,
    }
}

/// An output-modifier case's omod and clamp applied to the emulator's result
/// (`reference_words` ran it without them), in the lanes EXEC enables: the result
/// times the factor, rounded to its format, then clamped (as the interpreter reads
/// the ISA; whether the hardware rounds before or after clamping has not been
/// compared, and differs only where scaling rounds a tiny negative value to -0).
fn output_modifiers(c: &Case, st: &mut WaveState) {
    let (Some(&w0), Some(&w1)) = (c.words.first(), c.words.get(1)) else {
        return;
    };
    if !omod_case(c) {
        return;
    }
    let Some(format) = float_result(&c.name, w0) else {
        return;
    };
    let (omod, clamp) = (w1 >> 27 & 3, w0 >> 15 & 1 == 1);
    let d = VDST as usize;
    let half = |h: u32| {
        let scaled = f16_from_f64(f16_to_f64(h as u16) * omod_factor(omod));
        u32::from(f16_from_f64(clamped(f16_to_f64(scaled), clamp)))
    };
    for lane in (0..32).filter(|l| c.state.sgpr[EXEC] >> l & 1 == 1) {
        let v = st.vgpr[d][lane];
        match format {
            FloatResult::F32 => {
                // f32 arithmetic on the host: the product rounds as the GPU's does.
                let x = f32::from_bits(v) * omod_factor(omod) as f32;
                st.vgpr[d][lane] = (clamped(f64::from(x), clamp) as f32).to_bits();
            }
            FloatResult::F64 => {
                let x = f64::from_bits(u64::from(st.vgpr[d + 1][lane]) << 32 | u64::from(v));
                let r = clamped(x * omod_factor(omod), clamp).to_bits();
                st.vgpr[d][lane] = r as u32;
                st.vgpr[d + 1][lane] = (r >> 32) as u32;
            }
            FloatResult::F16 { high: false } => st.vgpr[d][lane] = v & 0xffff_0000 | half(v & 0xffff),
            FloatResult::F16 { high: true } => st.vgpr[d][lane] = v & 0xffff | half(v >> 16) << 16,
            FloatResult::F16Pair => st.vgpr[d][lane] = half(v & 0xffff) | half(v >> 16) << 16,
        }
    }
}

/// A half's value.
fn f16_to_f64(h: u16) -> f64 {
    let sign = if h >> 15 == 1 { -1.0 } else { 1.0 };
    let (e, m) = (i32::from(h >> 10 & 0x1f), f64::from(h & 0x3ff));
    match e {
        0 => sign * m * (-24f64).exp2(),
        0x1f if m == 0.0 => sign * f64::INFINITY,
        // A NaN keeps its payload (quieted) through f64 and back.
        0x1f => f64::from_bits(u64::from(h >> 15) << 63 | 0x7ff8 << 48 | u64::from(h & 0x1ff) << 42),
        _ => sign * (1024.0 + m) * f64::from(e - 25).exp2(),
    }
}

/// `x` as a half, rounded to nearest even (overflow to infinity).
fn f16_from_f64(x: f64) -> u16 {
    let sign = u16::from(x.is_sign_negative()) << 15;
    let a = x.abs();
    if a.is_nan() {
        return sign | 0x7e00 | (x.to_bits() >> 42 & 0x1ff) as u16;
    }
    // Halfway between the largest half (65504) and 2^16 rounds to even: infinity.
    if a >= 65520.0 {
        return sign | 0x7c00;
    }
    if a < (-14f64).exp2() {
        // Denormal (or zero): units of 2^-24; 1024 of them is the least normal.
        return sign | (a * 24f64.exp2()).round_ties_even() as u16;
    }
    let e = ((a.to_bits() >> 52) as i32) - 1023;
    let m = (a * f64::from(10 - e).exp2()).round_ties_even() as u32;
    let (e, m) = if m == 2048 { (e + 1, 1024) } else { (e, m) };
    sign | ((e + 15) as u16) << 10 | (m - 1024) as u16
}

fn parse_reference(bytes: &[u8], cases: &[Case]) -> Result<Vec<Outcome>> {
    let words: Vec<u32> = bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    let mut out = Vec::with_capacity(cases.len());
    let mut at = 0usize;
    for (id, c) in cases.iter().enumerate() {
        let need = 3 + 128 + VGPRS * 32 + LDS_WORDS + 1;
        let rec = words.get(at..at + need).ok_or("the emulator's output ends early")?;
        if rec[0] as usize != id {
            return Err(format!("the emulator's output has case {} where {id} belongs", rec[0]).into());
        }
        let msg_len = rec[need - 1] as usize;
        let msg_words = msg_len.div_ceil(4);
        let msg_bytes = bytes
            .get((at + need) * 4..(at + need) * 4 + msg_len)
            .ok_or("the emulator's message ends early")?;
        let mut st = c.state.clone();
        st.scc = rec[2] & 1 == 1;
        st.sgpr.copy_from_slice(&rec[3..131]);
        for (r, regs) in st.vgpr.iter_mut().enumerate() {
            regs.copy_from_slice(&rec[131 + r * 32..131 + (r + 1) * 32]);
        }
        let lds = &rec[131 + VGPRS * 32..131 + VGPRS * 32 + LDS_WORDS];
        for (b, w) in st.lds.chunks_exact_mut(4).zip(lds) {
            b.copy_from_slice(&w.to_le_bytes());
        }
        out.push(if rec[1] == 0 {
            Ok(st)
        } else {
            Err(String::from_utf8_lossy(msg_bytes).into_owned())
        });
        at += need + msg_words;
    }
    Ok(out)
}

/// How two results of one register differ.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Kind {
    /// Both are NaNs, with different payloads.
    NanPayload,
    /// Floats one unit in the last place apart.
    OneUlp,
    /// Anything else.
    Value,
}

fn is_nan32(x: u32) -> bool {
    x & 0x7f80_0000 == 0x7f80_0000 && x & 0x007f_ffff != 0
}

fn is_nan16(x: u32) -> bool {
    x & 0x7c00 == 0x7c00 && x & 0x03ff != 0
}

fn classify(name: &str, a: u32, b: u32, a_hi: Option<(u32, u32)>) -> Kind {
    if let Some((ah, bh)) = a_hi {
        let an = f64::from_bits(u64::from(ah) << 32 | u64::from(a));
        let bn = f64::from_bits(u64::from(bh) << 32 | u64::from(b));
        if an.is_nan() && bn.is_nan() {
            return Kind::NanPayload;
        }
    }
    if is_nan32(a) && is_nan32(b) {
        return Kind::NanPayload;
    }
    if (name.contains("f16") || name.contains("_pk_"))
        && [0, 16].iter().all(|s| {
            let (x, y) = (a >> s & 0xffff, b >> s & 0xffff);
            x == y || is_nan16(x) && is_nan16(y)
        })
    {
        return Kind::NanPayload;
    }
    if name.contains("f32") && a.abs_diff(b) == 1 && a >> 31 == b >> 31 {
        return Kind::OneUlp;
    }
    Kind::Value
}

/// The report: per opcode with a disagreement, what kind and an example.
fn compare(cases: &[Case], ours: &[Outcome], theirs: &[Outcome]) -> String {
    #[derive(Default)]
    struct Op {
        cases: usize,
        kinds: BTreeMap<Kind, usize>,
        example: Option<String>,
        ours_refused: Option<String>,
        theirs_refused: Option<String>,
    }
    let mut ops: BTreeMap<(String, &str), Op> = BTreeMap::new();
    let mut agree = 0usize;
    let mut total_ops = std::collections::BTreeSet::new();
    for ((c, o), t) in cases.iter().zip(ours).zip(theirs) {
        total_ops.insert((c.name.clone(), c.encoding));
        let op = ops.entry((c.name.clone(), c.encoding)).or_default();
        op.cases += 1;
        match (o, t) {
            (Ok(o), Ok(t)) => {
                let diffs = differences(c, o, t);
                if diffs.is_empty() {
                    agree += 1;
                    continue;
                }
                for (kind, text) in &diffs {
                    *op.kinds.entry(*kind).or_default() += 1;
                    if *kind == Kind::Value && op.example.is_none() {
                        op.example = Some(format!("{} {}", hex_words(&c.words), text));
                    }
                }
            }
            (Err(e), Ok(_)) => op.ours_refused = Some(e.clone()),
            (Ok(_), Err(e)) => op.theirs_refused = Some(e.lines().next().unwrap_or("").to_string()),
            (Err(_), Err(_)) => agree += 1,
        }
    }
    let mut out = String::new();
    let mut value_ops = 0;
    let mut minor_ops = 0;
    let mut unrunnable = 0;
    for ((name, enc), op) in &ops {
        let values = op.kinds.get(&Kind::Value).copied().unwrap_or(0);
        if op.kinds.is_empty() && op.ours_refused.is_none() && op.theirs_refused.is_none() {
            continue;
        }
        if values > 0 || op.ours_refused.is_some() {
            value_ops += 1;
        } else if op.theirs_refused.is_some() {
            unrunnable += 1;
        } else {
            minor_ops += 1;
        }
        let kinds: Vec<String> = op.kinds.iter().map(|(k, n)| format!("{k:?} {n}")).collect();
        let _ = writeln!(out, "{name} ({enc}): {} cases; {}", op.cases, kinds.join(", "));
        if let Some(e) = &op.example {
            let _ = writeln!(out, "    {e}");
        }
        if let Some(e) = &op.ours_refused {
            let _ = writeln!(out, "    interpreter refuses: {e}");
        }
        if let Some(e) = &op.theirs_refused {
            let _ = writeln!(out, "    emulator cannot run it: {}", &e[..e.len().min(200)]);
        }
    }
    let _ = writeln!(
        out,
        "oracle: {} opcodes, {} cases; {agree} cases agree; {value_ops} opcodes disagree on values (or the interpreter refuses), {minor_ops} only on NaN payloads or 1 ulp, {unrunnable} the emulator cannot run",
        total_ops.len(),
        cases.len()
    );
    out
}

/// Every register where the two results differ: (kind, `"reg[lane]: ours vs theirs, inputs"`).
fn differences(c: &Case, o: &WaveState, t: &WaveState) -> Vec<(Kind, String)> {
    let mut out = Vec::new();
    if o.scc != t.scc {
        out.push((Kind::Value, format!("scc: {} vs {}", o.scc as u8, t.scc as u8)));
    }
    for s in 0..128 {
        if o.sgpr[s] != t.sgpr[s] {
            out.push((
                Kind::Value,
                format!(
                    "s{s}: {:#010x} vs {:#010x}; {}",
                    o.sgpr[s],
                    t.sgpr[s],
                    scalar_inputs(&c.state)
                ),
            ));
        }
    }
    for (k, (a, b)) in o.lds[..4 * LDS_WORDS]
        .chunks_exact(4)
        .zip(t.lds[..4 * LDS_WORDS].chunks_exact(4))
        .enumerate()
    {
        if a != b {
            let word = |x: &[u8]| u32::from_le_bytes([x[0], x[1], x[2], x[3]]);
            let at = 4 * k;
            let place = if at >= 4 * LDS_WORDS - GLOBAL_BYTES {
                format!("global[{:#x}]", at - (4 * LDS_WORDS - GLOBAL_BYTES))
            } else {
                format!("lds[{at:#x}]")
            };
            out.push((Kind::Value, format!("{place}: {:#010x} vs {:#010x}", word(a), word(b))));
        }
    }
    for r in 0..VGPRS {
        for lane in 0..32 {
            let (a, b) = (o.vgpr[r][lane], t.vgpr[r][lane]);
            if a == b {
                continue;
            }
            let pair = if operand_width(&c.name) == Width::B64 || c.name.contains("f64") {
                let hi = r | 1;
                let lo = r & !1;
                (r % 2 == 0 && hi < VGPRS)
                    .then(|| (o.vgpr[hi][lane], t.vgpr[hi][lane]))
                    .or_else(|| (r % 2 == 1).then(|| (o.vgpr[lo][lane], t.vgpr[lo][lane])))
            } else {
                None
            };
            let kind = match pair {
                Some((x, y)) if r % 2 == 1 => classify(&c.name, x, y, Some((a, b))),
                p => classify(&c.name, a, b, p),
            };
            out.push((
                kind,
                format!("v{r}[{lane}]: {a:#010x} vs {b:#010x}; {}", lane_inputs(&c.state, lane)),
            ));
        }
    }
    out
}

fn scalar_inputs(st: &WaveState) -> String {
    format!(
        "s10..15 = {:08x} {:08x} {:08x} {:08x} {:08x} {:08x}, scc {}, vcc {:08x}, exec {:08x}, m0 {}",
        st.sgpr[10],
        st.sgpr[11],
        st.sgpr[12],
        st.sgpr[13],
        st.sgpr[14],
        st.sgpr[15],
        st.scc as u8,
        st.sgpr[VCC],
        st.sgpr[EXEC],
        st.sgpr[M0]
    )
}

fn lane_inputs(st: &WaveState, lane: usize) -> String {
    let v = |r: u32| {
        format!(
            "{:08x}:{:08x}",
            st.vgpr[r as usize + 1][lane],
            st.vgpr[r as usize][lane]
        )
    };
    format!(
        "src {} {} {}, exec {:08x}, vcc {:08x}, s14 {:08x}",
        v(SRC[0]),
        v(SRC[1]),
        v(SRC[2]),
        st.sgpr[EXEC],
        st.sgpr[VCC],
        st.sgpr[14]
    )
}

fn hex_words(words: &[u32]) -> String {
    words.iter().map(|w| format!("{w:08x}")).collect::<Vec<_>>().join(" ")
}

/// The disagreeing cases, reduced: the first disagreeing lane's values broadcast to
/// every lane, run again on both sides, and written as test lines where they still
/// disagree (the expected values are the emulator's).
fn reduce(
    cases: &[Case],
    ours: &[Outcome],
    theirs: &[Outcome],
    gen_: Gen,
    tinygrad: &Path,
    dir: &Path,
) -> Result<String> {
    let mut reduced = Vec::new();
    let mut seen = std::collections::BTreeMap::<(String, &str), usize>::new();
    for ((c, o), t) in cases.iter().zip(ours).zip(theirs) {
        let (Ok(o), Ok(t)) = (o, t) else { continue };
        // Test lines hold registers only, not LDS or memory.
        if matches!(
            c.encoding,
            "DS" | "GLOBAL" | "FLAT" | "SMEM" | "SCRATCH" | "VGLOBAL" | "VFLAT" | "VSCRATCH"
        ) {
            continue;
        }
        let lane = (0..32).find(|&l| (0..VGPRS).any(|r| o.vgpr[r][l] != t.vgpr[r][l]));
        let scalar_only = o.sgpr != t.sgpr || o.scc != t.scc;
        if lane.is_none() && !scalar_only {
            continue;
        }
        if differences(c, o, t).iter().all(|(k, _)| *k != Kind::Value) {
            continue;
        }
        let n = seen.entry((c.name.clone(), c.encoding)).or_default();
        if *n >= 3 {
            continue;
        }
        *n += 1;
        let mut st = c.state.clone();
        if let Some(l) = lane {
            for r in &mut st.vgpr {
                let x = r[l];
                r.fill(x);
            }
        }
        reduced.push(Case {
            name: c.name.clone(),
            encoding: c.encoding,
            words: c.words.clone(),
            state: st,
            reloc: 0,
        });
    }
    if reduced.is_empty() {
        return Ok(String::new());
    }
    let sub = dir.join("reduced");
    std::fs::create_dir_all(&sub)?;
    let theirs = reference(&reduced, 0, gen_, tinygrad, &sub)?;
    let mut out = String::new();
    for (c, t) in reduced.iter().zip(&theirs) {
        let Ok(t) = t else { continue };
        let mut st = c.state.clone();
        let ours = gen_.execute(&c.words, &mut st).map(|()| st);
        if ours.as_ref().is_ok_and(|o| o == t) {
            continue;
        }
        out.push_str(&test_line(c, t));
        out.push('\n');
    }
    Ok(out)
}

/// A case as a line of `crates/amd-isa/tests/oracle/*.txt`:
/// `name encoding | dwords | inputs | expected changes`, registers as `s10=…`,
/// `v16=…` (one value for every lane, or 32 comma-separated), `scc=…`.
fn test_line(c: &Case, after: &WaveState) -> String {
    let mut inputs = Vec::new();
    let st = &c.state;
    inputs.push(format!("scc={}", st.scc as u8));
    for (s, &x) in st.sgpr.iter().enumerate() {
        if x != 0 {
            inputs.push(format!("s{s}={x:x}"));
        }
    }
    for (r, lanes) in st.vgpr.iter().enumerate() {
        if lanes.iter().any(|&x| x != 0) {
            inputs.push(format!("v{r}={}", lanes_text(lanes)));
        }
    }
    let mut changes = Vec::new();
    if after.scc != st.scc {
        changes.push(format!("scc={}", after.scc as u8));
    }
    for s in 0..128 {
        if after.sgpr[s] != st.sgpr[s] {
            changes.push(format!("s{s}={:x}", after.sgpr[s]));
        }
    }
    for r in 0..VGPRS {
        if after.vgpr[r] != st.vgpr[r] {
            changes.push(format!("v{r}={}", lanes_text(&after.vgpr[r])));
        }
    }
    format!(
        "{} {} | {} | {} | {}",
        c.name,
        c.encoding,
        hex_words(&c.words),
        inputs.join(" "),
        changes.join(" ")
    )
}

fn lanes_text(lanes: &[u32; 32]) -> String {
    if lanes.iter().all(|&x| x == lanes[0]) {
        format!("{:x}", lanes[0])
    } else {
        lanes.iter().map(|x| format!("{x:x}")).collect::<Vec<_>>().join(",")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every half survives the trip through f64; values between halves round to
    /// nearest even.
    #[test]
    fn halves_convert_exactly_and_round_to_even() {
        for h in 0..=u16::MAX {
            let back = f16_from_f64(f16_to_f64(h));
            let nan = h & 0x7c00 == 0x7c00 && h & 0x3ff != 0;
            assert_eq!(back, if nan { h | 0x200 } else { h }, "{h:#06x}");
        }
        // 1 + 2^-11 is halfway between 1 and the next half: to even (1.0); 1 + 3·2^-11
        // to 1 + 2^-9 (odd below, even above); 65520 to infinity, 65519 to 65504.
        assert_eq!(f16_from_f64(1.0 + (-11f64).exp2()), 0x3c00);
        assert_eq!(f16_from_f64(1.0 + 3.0 * (-11f64).exp2()), 0x3c02);
        assert_eq!(f16_from_f64(65520.0), 0x7c00);
        assert_eq!(f16_from_f64(65519.0), 0x7bff);
        // Half the least denormal is a tie to even (0); a bit more rounds up.
        assert_eq!(f16_from_f64(-(-25f64).exp2()), 0x8000);
        assert_eq!(f16_from_f64((-25f64).exp2() * 1.5), 0x0001);
    }

    /// Output-modifier cases run on the emulator without omod and clamp, which are
    /// applied to its result: the half op_sel[3] picks, f32, f64, both halves of a pack.
    #[test]
    fn output_modifiers_scale_then_clamp_the_reference() {
        let case = |name: &str, w0: u32, w1: u32| Case {
            name: name.to_string(),
            encoding: "VOP3.OMOD",
            words: vec![w0, w1],
            state: WaveState::new(VGPRS),
            reloc: 0,
        };
        // v_add_f32_e64 v40, v16, v24 mul:4 clamp
        let c = case("v_add_f32_e64", 0xd503_8028, 0x1002_3110);
        assert_eq!(reference_words(&c), [0xd503_0028, 0x0002_3110]);
        let mut st = c.state.clone();
        st.vgpr[40] = [0.125f32.to_bits(); 32];
        output_modifiers(&c, &mut st);
        assert_eq!(st.vgpr[40][0], 0.5f32.to_bits());
        st.vgpr[40] = [f32::NAN.to_bits(); 32];
        output_modifiers(&c, &mut st);
        assert_eq!(st.vgpr[40][0], 0);
        // v_add_f16_e64 div:2 with op_sel[3]: the high half halved, the low one kept.
        let c = case("v_add_f16_e64", 0xd532_4028, 0x1802_3110);
        let mut st = c.state.clone();
        st.vgpr[40] = [0x4000_1234; 32];
        output_modifiers(&c, &mut st);
        assert_eq!(st.vgpr[40][0], 0x3c00_1234);
        // v_add_f64 mul:2: -3 to -6.
        let c = case("v_add_f64", 0xd727_0028, 0x0802_3110);
        let mut st = c.state.clone();
        let x = (-3f64).to_bits();
        st.vgpr[40] = [x as u32; 32];
        st.vgpr[41] = [(x >> 32) as u32; 32];
        output_modifiers(&c, &mut st);
        assert_eq!(
            u64::from(st.vgpr[41][0]) << 32 | u64::from(st.vgpr[40][0]),
            (-6f64).to_bits()
        );
        // Lanes EXEC leaves out are the emulator's as they are.
        let mut c = case("v_cvt_pk_rtz_f16_f32_e64", 0xd52f_0028, 0x0802_3110);
        c.state.sgpr[EXEC] = 1;
        let mut st = c.state.clone();
        st.vgpr[40] = [0x3c00_c000; 32];
        output_modifiers(&c, &mut st);
        assert_eq!((st.vgpr[40][0], st.vgpr[40][1]), (0x4000_c400, 0x3c00_c000));
    }
}
