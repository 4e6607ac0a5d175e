//! What the interpreter covers of the RDNA3 ISA, opcode by opcode: every opcode of
//! [`SPEC`] (the ISA's own list, per encoding) is run once on a fresh wave and
//! classified as implemented, refused on purpose (with the reason), or missing.
//!
//! The probe is the interpreter itself, not a list kept beside it: an opcode counts as
//! implemented when executing it gets past the opcode (it may then fault on the
//! probe's memory addresses, which is the memory model at work, not a gap).

use super::decode::Inst;
use super::exec::step;
use super::opcodes::SPEC;
use super::opcodes::op::vopd;
use super::wave::{EXEC_LO, Wave};
use crate::error::TrapKind;
use crate::memory::{Memory, SliceMemory};

/// How the interpreter treats one opcode.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Status {
    /// It runs.
    Implemented,
    /// Refused on purpose, for this reason (graphics-only, not a gfx1100 instruction).
    Refused(&'static str),
    /// Not implemented yet: what the interpreter says when it meets it.
    Missing(String),
}

/// One opcode of the ISA and how the interpreter treats it.
#[derive(Clone, Debug)]
pub struct Entry {
    /// The encoding, as the ISA names it (`VOP3`, `GLOBAL`).
    pub encoding: &'static str,
    /// The opcode within the encoding.
    pub op: u16,
    /// The instruction's name as the ISA and LLVM spell it (`v_add_f32`).
    pub name: &'static str,
    /// Implemented, refused or missing.
    pub status: Status,
}

/// Why an opcode is refused on purpose, if it is.
pub(crate) fn refusal(encoding: &str, name: &str) -> Option<&'static str> {
    match encoding {
        "MIMG" => return Some("graphics: image and sampler instructions (no image resources in compute)"),
        "EXP" => return Some("graphics: exports to render targets and positions"),
        "VINTERP" | "LDSDIR" => return Some("graphics: pixel-shader parameter interpolation"),
        _ => {}
    }
    if name.starts_with("ds_gws_") {
        return Some("global wave sync (GWS) is a driver-reserved resource KFD compute queues do not get");
    }
    if name == "ds_bvh_stack_rtn_b32" {
        return Some("ray tracing: the BVH traversal stack goes with image_bvh_intersect_ray");
    }
    if matches!(name, "ds_ordered_count" | "ds_add_gs_reg_rtn" | "ds_sub_gs_reg_rtn") {
        return Some("GDS and ordered counters are graphics/driver resources KFD compute queues do not get");
    }
    if matches!(name, "s_subvector_loop_begin" | "s_subvector_loop_end") {
        return Some("wave64 subvector looping; the interpreter runs wave32 waves");
    }
    if name == "s_endpgm_saved" {
        return Some("ends a wave after a context save, which only a trap handler does");
    }
    if encoding == "FLAT" && name.starts_with("global_") {
        return Some("a GLOBAL-only instruction: its FLAT-segment encoding is not an instruction");
    }
    if name.contains("_load_lds_") && !name.starts_with("buffer_") {
        return Some(
            "GLOBAL and SCRATCH LDS DMA loads (memory straight to LDS): the ISA manual gives no pseudocode for \
             their LDS addressing (only the buffer forms are modelled)",
        );
    }
    if name == "s_rfe_b64" {
        return Some("returns from a trap handler; the interpreter runs no trap handler");
    }
    if name == "s_endpgm_ordered_ps_done" {
        return Some("graphics: ends a pixel shader in ordered mode");
    }
    // The scalar float ALU (s_add_f32, s_cmp_lt_f16, s_cvt_f32_i32, …) came with
    // RDNA 3.5 (gfx115x); gfx1100 and LLVM 19's gfx1100 decoder have none of it.
    let salu_float = matches!(encoding, "SOP1" | "SOP2" | "SOPC") && ["_f32", "_f16"].iter().any(|t| name.contains(t));
    if salu_float {
        return Some("RDNA 3.5 scalar float ALU, not a gfx1100 instruction");
    }
    None
}

/// Whether a VOP1, VOP2 or VOPC opcode (by name) may read src0 through DPP, as LLVM
/// encodes it for gfx11: not the 64-bit operations (DPP moves 32-bit lanes), the lane
/// reads and swaps, those with a literal constant, or the no-operations.
pub fn takes_dpp(name: &str) -> bool {
    ![
        "64",
        "readfirstlane",
        "permlane",
        "mk_",
        "ak_",
        "v_nop",
        "v_pipeflush",
        "v_swap",
    ]
    .iter()
    .any(|p| name.contains(p))
}

/// The probe of an opcode: its encoding with distinct registers in every field (and
/// room for a literal or DPP dword after it).
fn probe(encoding: &str, op: u16) -> Option<Vec<u32>> {
    let op = u32::from(op);
    const DUAL_MOV: u32 = vopd::V_DUAL_MOV_B32 as u32;
    // VOPD's OPX field is 4 bits, OPY 5.
    const OPX_END: u32 = 1 << 4;
    let (w0, w1) = match encoding {
        "SOP1" => (0xbe80_0000 | 4 << 16 | op << 8 | 2, None),
        "SOP2" => (0x8000_0000 | op << 23 | 4 << 16 | 6 << 8 | 2, None),
        "SOPK" => (0xb000_0000 | op << 23 | 4 << 16 | 0x10, None),
        "SOPC" => (0xbf00_0000 | op << 16 | 4 << 8 | 2, None),
        "SOPP" => (0xbf80_0000 | op << 16, None),
        "SMEM" => (0xf400_0000 | op << 18 | 4 << 6 | 1, Some(0xf800_0000)),
        "VOP1" => (0x7e00_0000 | 2 << 17 | op << 9 | 260, None),
        "VOP2" => (op << 25 | 2 << 17 | 6 << 9 | 260, None),
        "VOPC" => (0x7c00_0000 | op << 17 | 6 << 9 | 260, None),
        "VOP3" | "VOP3SD" => (0xd400_0000 | op << 16 | 2, Some(260 | 262 << 9 | 264 << 18)),
        "VOP3P" => (
            0xcc00_4000 | op << 16 | 2,
            Some(0x1800_0000 | 260 | 262 << 9 | 264 << 18),
        ),
        // X is the opcode (Y a move) where X has it, else Y is (X a move).
        "VOPD" if op < OPX_END => (
            0xc800_0000 | op << 22 | DUAL_MOV << 17 | 3 << 9 | 258,
            Some(1 << 24 | 2 << 17 | 261),
        ),
        "VOPD" => (
            0xc800_0000 | DUAL_MOV << 22 | op << 17 | 258,
            Some(1 << 24 | 2 << 17 | 6 << 9 | 261),
        ),
        "DS" => (0xd800_0000 | op << 18, Some(2 | 4 << 8 | 6 << 16 | 8 << 24)),
        "FLAT" => (0xdc00_0000 | op << 18, Some(2 | 4 << 8 | 0x7c << 16 | 8 << 24)),
        "SCRATCH" => (
            0xdc01_0000 | op << 18,
            Some(2 | 4 << 8 | 0x7c << 16 | 1 << 23 | 8 << 24),
        ),
        "GLOBAL" => (0xdc02_0000 | op << 18, Some(2 | 4 << 8 | 0x7c << 16 | 8 << 24)),
        "MUBUF" => (0xe000_0000 | op << 18, Some(2 | 4 << 8 | 2 << 16 | 0x80 << 24)),
        "MTBUF" => (
            0xe800_0000 | 22 << 19 | op << 15,
            Some(2 | 4 << 8 | 2 << 16 | 0x80 << 24),
        ),
        _ => return None,
    };
    let mut words = vec![w0];
    words.extend(w1);
    // A literal or DPP dword, where the opcode takes one.
    words.push(0);
    Some(words)
}

/// Every opcode of the ISA with how the interpreter treats it, in [`SPEC`] order.
pub fn coverage() -> Vec<Entry> {
    let mem = SliceMemory::new();
    entries(SPEC, |encoding, op, name| match refusal(encoding, name) {
        Some(why) => Status::Refused(why),
        None => run_probe(encoding, op, &mem),
    })
}

/// An [`Entry`] for each opcode of a generation's `spec` (its encodings, each with its
/// opcodes and names), in order, with the status `status` gives it.
pub(crate) fn entries(
    spec: &'static [(&'static str, &'static [(u16, &'static str)])],
    mut status: impl FnMut(&'static str, u16, &'static str) -> Status,
) -> Vec<Entry> {
    spec.iter()
        .flat_map(|&(encoding, ops)| ops.iter().map(move |&(op, name)| (encoding, op, name)))
        .map(|(encoding, op, name)| Entry {
            encoding,
            op,
            name,
            status: status(encoding, op, name),
        })
        .collect()
}

/// The coverage as a Markdown report: implemented / refused / missing per encoding,
/// then the refused opcodes with their reasons and the missing ones by name.
pub fn report() -> String {
    coverage_report(
        "RDNA3",
        "`cargo xtask isa-coverage`",
        "`rdna3::opcodes`",
        SPEC,
        &coverage(),
    )
}

/// A generation's coverage report: per encoding of `spec`, how many opcodes are
/// implemented, refused and missing; the refusals with their reasons; the missing
/// opcodes by name.
pub(crate) fn coverage_report(
    generation: &str,
    command: &str,
    list: &str,
    spec: &[(&'static str, &[(u16, &str)])],
    c: &[Entry],
) -> String {
    use std::fmt::Write as _;
    let mut out = format!(
        "# {generation} ISA coverage of the interpreter\n\n\
         Generated by {command} (a test checks it is current): every opcode of the\n\
         {generation} ISA's own list ({list}, from AMD's machine-readable ISA) run once through\n\
         the interpreter.\n\n\
         | encoding | opcodes | implemented | refused | missing |\n| --- | ---: | ---: | ---: | ---: |\n"
    );
    let mut totals = [0usize; 4];
    for &(encoding, ops) in spec {
        let mine: Vec<&Entry> = c.iter().filter(|e| e.encoding == encoding).collect();
        let count = |f: fn(&Status) -> bool| mine.iter().filter(|e| f(&e.status)).count();
        let row = [
            ops.len(),
            count(|s| *s == Status::Implemented),
            count(|s| matches!(s, Status::Refused(_))),
            count(|s| matches!(s, Status::Missing(_))),
        ];
        for (t, r) in totals.iter_mut().zip(row) {
            *t += r;
        }
        let _ = writeln!(
            out,
            "| {encoding} | {} | {} | {} | {} |",
            row[0], row[1], row[2], row[3]
        );
    }
    let _ = writeln!(
        out,
        "| all | {} | {} | {} | {} |\n",
        totals[0], totals[1], totals[2], totals[3]
    );
    out.push_str("## Refused on purpose\n\n");
    let mut reasons: Vec<(&str, Vec<&str>)> = Vec::new();
    for e in c {
        if let Status::Refused(why) = e.status {
            match reasons.iter_mut().find(|(w, _)| *w == why) {
                Some((_, names)) => names.push(e.name),
                None => reasons.push((why, vec![e.name])),
            }
        }
    }
    for (why, names) in reasons {
        let _ = writeln!(out, "- {why} ({}): {}", names.len(), names.join(", "));
    }
    out.push_str("\n## Missing\n\n");
    for &(encoding, _) in spec {
        let names: Vec<&str> = c
            .iter()
            .filter(|e| e.encoding == encoding && matches!(e.status, Status::Missing(_)))
            .map(|e| e.name)
            .collect();
        if !names.is_empty() {
            let _ = writeln!(out, "- {encoding} ({}): {}", names.len(), names.join(", "));
        }
    }
    if !c.iter().any(|e| matches!(e.status, Status::Missing(_))) {
        out.push_str("None: every opcode is implemented or refused with its reason.\n");
    }
    out
}

fn run_probe(encoding: &str, op: u16, mem: &dyn Memory) -> Status {
    let Some(words) = probe(encoding, op) else {
        return Status::Missing(format!("no probe for {encoding}"));
    };
    let inst = match Inst::decode(&words) {
        Ok(i) => i,
        Err(e) => return Status::Missing(format!("the decoder refuses it: {e}")),
    };
    let mut w = Wave::new(64, 0);
    w.s[EXEC_LO] = u32::MAX;
    let mut lds = vec![0u8; 1024];
    // A panic would be a bug of the interpreter, and a finding of this report.
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| step(&mut w, &inst, mem, &mut lds)));
    match r {
        Ok(Ok(_)) => Status::Implemented,
        Ok(Err(t)) => match t.into_kind() {
            TrapKind::Missing(e) => Status::Missing(e),
            _ => Status::Implemented,
        },
        Err(_) => Status::Missing("the interpreter panicked".into()),
    }
}

/// Runs one probe of generation `F` on a fresh wave (all lanes on; NaN rule
/// `nan_rule`) and classifies it: implemented where it gets past the opcode (a memory
/// fault on the probe's addresses is the memory model at work, a refusal of its
/// operands a decision), missing where the decoder refuses it, `not_run` says why it is
/// not run, the interpreter says it is missing, or it panics (a bug, and a finding).
pub(crate) fn classify_probe<F: super::Frontend>(
    words: &[u32],
    mem: &crate::memory::SliceMemory<'_>,
    nan_rule: Option<crate::float::minmax::Nans>,
    not_run: impl Fn(&F::Decoded) -> Option<&'static str>,
) -> Status {
    use super::Step;
    let d = match F::decode(words) {
        Ok(d) => d,
        Err(e) => return Status::Missing(format!("the decoder refuses it: {e}")),
    };
    if let Some(why) = not_run(&d) {
        return Status::Missing(why.to_string());
    }
    let mut w = super::Wave::new(64, 0);
    w.s[super::EXEC_LO] = u32::MAX;
    w.nan_rule = nan_rule;
    let mut lds = vec![0u8; 1024];
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| d.run(&mut w, mem, &mut lds)));
    match r {
        Ok(Ok(_)) => Status::Implemented,
        Ok(Err(t)) => match t.into_kind() {
            crate::error::TrapKind::Missing(e) => Status::Missing(e),
            crate::error::TrapKind::Fault(..)
            | crate::error::TrapKind::LdsOutside(..)
            | crate::error::TrapKind::PrivateOutside(..)
            | crate::error::TrapKind::Refused(_) => Status::Implemented,
        },
        Err(_) => Status::Missing("the interpreter panicked".into()),
    }
}

/// What both generations' coverage tests check alike.
#[cfg(test)]
pub(crate) mod checks {
    use super::{Entry, Status};

    /// Panics unless `coverage/<file>` (in the crate) holds `report`, naming the
    /// `cargo xtask` command that rewrites it.
    pub(crate) fn assert_committed(file: &str, report: &str, command: &str) {
        let path = format!("{}/coverage/{file}", env!("CARGO_MANIFEST_DIR"));
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(committed == report, "{path} is stale: run `cargo xtask {command}`");
    }

    /// The status the report gives opcode `name` in encoding `enc`.
    pub(crate) fn status(c: &[Entry], enc: &str, name: &str) -> Status {
        let entry = c.iter().find(|e| e.encoding == enc && e.name == name);
        entry.unwrap_or_else(|| panic!("{enc} {name}")).status.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The committed report is what the interpreter does now (`cargo xtask isa-coverage`
    /// rewrites it).
    #[test]
    fn committed_report_is_current() {
        checks::assert_committed("rdna3.md", &report(), "isa-coverage");
    }

    #[test]
    fn classifies_known_opcodes() {
        let c = coverage();
        let find = |enc: &str, name: &str| checks::status(&c, enc, name);
        assert_eq!(find("VOP2", "v_add_f32_e32"), Status::Implemented);
        assert_eq!(find("VOP3", "v_fma_f32"), Status::Implemented);
        assert_eq!(
            find("GLOBAL", "global_load_b32"),
            Status::Implemented,
            "faults on the probe address"
        );
        assert_eq!(find("SOPP", "s_endpgm"), Status::Implemented);
        assert!(matches!(find("MIMG", "image_load"), Status::Refused(_)));
        assert!(matches!(find("DS", "ds_gws_init"), Status::Refused(_)));
        assert!(matches!(find("SOP2", "s_add_f32"), Status::Refused(_)));
        assert_eq!(find("MUBUF", "buffer_load_b32"), Status::Implemented);
        assert_eq!(find("MUBUF", "buffer_load_lds_b32"), Status::Implemented);
        assert!(matches!(find("GLOBAL", "global_load_lds_b32"), Status::Refused(_)));
        let missing: Vec<&str> = c
            .iter()
            .filter(|e| matches!(e.status, Status::Missing(_)))
            .map(|e| e.name)
            .collect();
        assert!(missing.is_empty(), "missing: {missing:?}");
        assert_eq!(c.len(), SPEC.iter().map(|(_, o)| o.len()).sum::<usize>());
    }

    /// The interpreter compares opcodes with the generated names, not numbers: no
    /// `i.op == 0x2b`, `matches!(op, 40 | 41)`, `op < 0x100` or `0x180 + i.op` in its
    /// sources (outside comments).
    #[test]
    fn opcodes_are_compared_by_name() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/src/rdna3");
        let mut found = Vec::new();
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let path = entry.path();
            let file = path
                .file_name()
                .and_then(|f| f.to_str())
                .unwrap_or_default()
                .to_string();
            if matches!(file.as_str(), "opcodes.rs" | "mnemonics.rs") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            // Code only: no comments, no string literals.
            let code: Vec<String> = text
                .lines()
                .map(|l| l.split("//").next().unwrap_or_default().split('"').step_by(2).collect())
                .collect();
            for (n, line) in code.iter().enumerate() {
                // A `matches!(` whose operands rustfmt put on the next lines.
                let line = if line.trim_end().ends_with("matches!(") {
                    code[n..code.len().min(n + 3)].join(" ")
                } else {
                    line.clone()
                };
                if numbered_op(&line) {
                    found.push(format!("{file}:{}: {}", n + 1, line.trim()));
                }
            }
        }
        assert!(found.is_empty(), "opcodes compared with numbers:\n{}", found.join("\n"));
        // The check finds what it is for.
        for bad in [
            "if i.op == 0x2b {",
            "matches!(op, 40 | 41)",
            "if op < 0x100",
            "valu(w, 0x180 + i.op)",
        ] {
            assert!(numbered_op(bad), "{bad}");
        }
        for good in [
            "op == vop2::V_FMAC_F32_E32",
            "op << 23",
            "op as u16 - S_CMP_EQ_I32 as u16",
            "(op, 0)",
            "VOP1_IN_VOP3 + i.op",
        ] {
            assert!(!numbered_op(good), "{good}");
        }
    }

    /// Whether `code` compares, offsets or matches an `op` with a number.
    fn numbered_op(code: &str) -> bool {
        let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
        let number = |s: &str| s.trim_start().starts_with(|c: char| c.is_ascii_digit());
        code.match_indices("op").any(|(at, _)| {
            let (before, after) = (&code[..at], &code[at + 2..]);
            if before.ends_with(word) || after.starts_with(word) {
                return false;
            }
            let before = before.strip_suffix("i.").unwrap_or(before).trim_end();
            let after = after.trim_start();
            let compared = ["==", "!=", "<=", ">=", "+", "-"]
                .iter()
                .chain(if after.starts_with("<<") || after.starts_with(">>") {
                    &[][..]
                } else {
                    &["<", ">"][..]
                })
                .any(|o| after.strip_prefix(o).is_some_and(number));
            let matched = before.ends_with("matches!(") && after.strip_prefix(',').is_some_and(number);
            let offset = before.strip_suffix('+').is_some_and(|b| {
                let b = b.trim_end();
                let token = &b[b.rfind(|c: char| !word(c)).map_or(0, |k| k + 1)..];
                number(token)
            });
            compared || matched || offset
        })
    }
}
