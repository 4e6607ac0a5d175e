//! The CDNA3 disassembler prints every instruction of every committed gfx942 test
//! kernel exactly as `llvm-objdump-19 --mcpu=gfx942` does (the listings in
//! `tests/kernels/gfx942/llvm-objdump/`), one probe of every opcode as `llvm-mc-19
//! --mcpu=gfx942` reads it (`tests/data/cdna3_probes.txt`), and four of every opcode
//! with random fields (`tests/data/cdna3_variants.txt`); all are kept current by
//! `cargo xtask listings` where LLVM is installed.

use amd_isa::cdna3::Inst;

fn words(hex: &str) -> Vec<u32> {
    hex.split(' ')
        .map(|w| u32::from_str_radix(w, 16).expect("hex dword"))
        .collect()
}

/// Compares the disassembler's text with LLVM's for each `(dwords, text)` line;
/// returns how many were compared and the differences.
fn compare<'a>(lines: impl Iterator<Item = (&'a str, &'a str)>) -> (usize, Vec<String>) {
    let (mut total, mut wrong) = (0, Vec::new());
    for (hex, want) in lines {
        let w = words(hex);
        let inst = Inst::decode(&w).unwrap_or_else(|e| panic!("{hex}: {e}"));
        assert_eq!(inst.size as usize, w.len(), "{hex}: size");
        total += 1;
        let got = inst.llvm().to_string();
        if got != want {
            wrong.push(format!("{hex}\n  llvm: {want}\n  ours: {got}"));
        }
    }
    wrong.sort();
    wrong.dedup();
    (total, wrong)
}

#[test]
fn every_committed_gfx942_instruction_reads_as_llvm_prints_it() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/kernels/gfx942/llvm-objdump");
    let mut texts: Vec<String> = std::fs::read_dir(&dir)
        .expect("listing folder")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "txt"))
        .map(|p| std::fs::read_to_string(&p).expect("listing"))
        .collect();
    texts.sort();
    assert!(texts.len() >= 50, "{} listings", texts.len());
    let lines = texts
        .iter()
        .flat_map(|t| t.lines())
        .map(|l| l.split_once('\t').expect("dwords, tab, text"));
    let (total, wrong) = compare(lines);
    assert!(total > 20_000, "{total} instructions");
    assert!(
        wrong.is_empty(),
        "{} distinct of {total} instructions differ, e.g.:\n{}",
        wrong.len(),
        wrong.iter().take(40).cloned().collect::<Vec<_>>().join("\n")
    );
}

/// The `(dwords, text)` lines of a probe listing LLVM reads.
fn read_probes(text: &str) -> impl Iterator<Item = (&str, &str)> {
    text.lines().filter_map(|l| {
        let mut f = l.split('\t');
        let (hex, _, want) = (f.next()?, f.next()?, f.next()?);
        (want != "-").then_some((hex, want))
    })
}

#[test]
fn every_probe_llvm_reads_reads_as_llvm_prints_it() {
    let (total, wrong) = compare(read_probes(include_str!("data/cdna3_probes.txt")));
    assert!(total > 1_400, "{total} probes");
    assert!(
        wrong.is_empty(),
        "{} of {total} probes differ, e.g.:\n{}",
        wrong.len(),
        wrong.iter().take(60).cloned().collect::<Vec<_>>().join("\n")
    );
}

/// Four encodings of every opcode with random fields (`amd_isa::cdna3::variants`), as
/// LLVM encodes what it reads there: every operand, modifier, offset and cache control
/// the zero-field probes leave out.
#[test]
fn every_random_variant_llvm_reads_reads_as_llvm_prints_it() {
    let (total, wrong) = compare(read_probes(include_str!("data/cdna3_variants.txt")));
    assert!(total > 3_000, "{total} variants");
    assert!(
        wrong.is_empty(),
        "{} of {total} variants differ, e.g.:\n{}",
        wrong.len(),
        wrong.iter().take(60).cloned().collect::<Vec<_>>().join("\n")
    );
}
