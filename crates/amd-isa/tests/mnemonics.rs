//! The interpreter's decoder names every instruction of the committed test kernels as
//! LLVM's disassembler does (where `llvm-objdump-19` is installed), and decodes every
//! instruction of them at all (everywhere).

use std::process::Command;

use amd_isa::rdna3::Inst;

const OBJDUMP: &str = "llvm-objdump-19";

fn kernels() -> Vec<std::path::PathBuf> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/kernels");
    let mut v: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "hsaco"))
        .collect();
    v.sort();
    assert!(!v.is_empty());
    v
}

/// (text, dwords) per instruction of `path`'s code, as llvm-objdump prints them.
fn objdump(path: &std::path::Path) -> Option<Vec<(String, Vec<u32>)>> {
    let out = Command::new(OBJDUMP)
        .args(["-d", "--mcpu=gfx1100"])
        .arg(path)
        .output()
        .ok()?;
    assert!(out.status.success(), "{OBJDUMP} failed on {}", path.display());
    let text = String::from_utf8(out.stdout).unwrap();
    let mut insts = Vec::new();
    for line in text.lines() {
        // "\tv_add_f32_e32 v1, v2, v3     // 000000001A80: 7E0402E9 DE54C102"
        let Some((asm, raw)) = line.split_once("// ") else {
            continue;
        };
        let Some((_, words)) = raw.split_once(": ") else {
            continue;
        };
        let asm = asm.trim();
        if asm.is_empty() {
            continue;
        }
        let mnemonic = asm.to_string();
        let words: Option<Vec<u32>> = words
            .split_whitespace()
            .map(|w| u32::from_str_radix(w, 16).ok())
            .collect();
        if let Some(words) = words.filter(|w| !w.is_empty()) {
            insts.push((mnemonic, words));
        }
    }
    Some(insts)
}

#[test]
fn mnemonics_match_llvm_on_every_test_kernel() {
    let mut checked = 0;
    for path in kernels() {
        let Some(insts) = objdump(&path) else {
            eprintln!("skipped: {OBJDUMP} is not installed");
            return;
        };
        for (want, words) in insts {
            if want == "s_code_end" {
                continue;
            }
            let i = Inst::decode(&words).unwrap_or_else(|e| panic!("{}: {want} {words:08x?}: {e}", path.display()));
            assert_eq!(i.size as usize, words.len(), "{}: {want} {words:08x?}", path.display());
            assert_eq!(i.llvm().to_string(), want, "{}: {words:08x?}", path.display());
            checked += 1;
        }
    }
    assert!(checked > 1000, "only {checked} instructions compared");
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
