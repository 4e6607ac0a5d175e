//! The disassembler prints every instruction of every committed test kernel exactly
//! as `llvm-objdump-19` does (the committed listings in `tests/kernels/llvm-objdump/`,
//! kept current by `cargo xtask listings`); an opcode it does not know prints as its
//! encoding.

use amd_isa::rdna3::Inst;

fn listings() -> Vec<(String, String)> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/kernels/llvm-objdump");
    let mut v: Vec<_> = std::fs::read_dir(&dir)
        .expect("listing folder")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "txt"))
        .map(|p| (p.display().to_string(), std::fs::read_to_string(&p).expect("listing")))
        .collect();
    v.sort();
    v
}

#[test]
fn every_committed_instruction_reads_as_llvm_prints_it() {
    let files = listings();
    assert!(files.len() >= 40, "{} listings", files.len());
    let (mut total, mut wrong) = (0, Vec::new());
    for (path, text) in &files {
        for line in text.lines() {
            let (hex, want) = line.split_once('\t').expect("dwords, tab, text");
            let words: Vec<u32> = hex
                .split(' ')
                .map(|w| u32::from_str_radix(w, 16).expect("hex dword"))
                .collect();
            let inst = Inst::decode(&words).unwrap_or_else(|e| panic!("{path}: {hex}: {e}"));
            assert_eq!(inst.size as usize, words.len(), "{path}: {hex}: size");
            total += 1;
            let got = inst.llvm().to_string();
            if got != want {
                wrong.push(format!("{hex}\n  llvm: {want}\n  ours: {got}"));
            }
        }
    }
    assert!(total > 10_000, "{total} instructions");
    wrong.sort();
    wrong.dedup();
    assert!(
        wrong.is_empty(),
        "{} of {total} instructions differ, e.g.:\n{}",
        wrong.len(),
        wrong.iter().take(40).cloned().collect::<Vec<_>>().join("\n")
    );
}

#[test]
fn unknown_opcodes_print_their_encoding() {
    // VOP3 opcode 0x3ff: no such instruction.
    let i = Inst::decode(&[0xd7ff_0001, 0x0002_0702]).unwrap();
    assert_eq!(i.mnemonic(), None);
    assert_eq!(i.to_string(), "Vop3 op 0x3ff [d7ff0001 00020702]");
    let i = Inst::decode(&[0x7e02_02e9, 0x0539_7702]).unwrap();
    assert_eq!(
        i.to_string(),
        "v_mov_b32_dpp v1, v2 dpp8:[7,6,5,4,3,2,1,0] [7e0202e9 05397702]"
    );
}
