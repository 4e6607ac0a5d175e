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

/// Two forms no committed kernel has, as `llvm-mc-19 -mcpu=gfx1100 -disassemble`
/// prints them: `s_waitcnt_depctr` with every counter at its default (all named), and
/// `v_mov_b16_e32`'s true16 halves (bit 7 of an 8-bit VGPR field is `.h`).
#[test]
fn depctr_defaults_and_true16_halves_read_as_llvm_prints_them() {
    for (words, text) in [
        (
            &[0xbf88_ff9fu32][..],
            "s_waitcnt_depctr depctr_hold_cnt(1) depctr_sa_sdst(1) depctr_va_vdst(15) depctr_va_sdst(7) depctr_va_ssrc(1) depctr_va_vcc(1) depctr_vm_vsrc(7)",
        ),
        (&[0xbf88_fffe], "s_waitcnt_depctr 0xfffe"),
        (&[0x7e00_3902], "v_mov_b16_e32 v0.l, v2.l"),
        (&[0x7f02_3982], "v_mov_b16_e32 v1.h, v2.h"),
        (&[0x7e00_386a], "v_mov_b16_e32 v0.l, vcc_lo"),
        (&[0x7e00_38f8], "v_mov_b16_e32 v0.l, 0x3118"),
    ] {
        assert_eq!(Inst::decode(words).expect(text).llvm().to_string(), text);
    }
}

/// VOP3's DPP forms (a third dword of DPP16 or DPP8 controls after VOP3's two), as
/// `llvm-mc-19 -mcpu=gfx1100 -show-encoding` encodes them: a VOP3-only operation, a
/// promoted VOP2 with modifiers, DPP8, a compare and a carry-out form.
#[test]
fn vop3_dpp_forms_read_as_llvm_prints_them() {
    for (words, text) in [
        (
            &[0xd655_0005, 0x040e_04fa, 0xff00_b101][..],
            "v_add3_u32_e64_dpp v5, v1, v2, v3 quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf",
        ),
        (
            &[0xd503_8205, 0x2002_04fa, 0xa509_0301][..],
            "v_add_f32_e64_dpp v5, -v1, |v2| clamp row_shl:3 row_mask:0xa bank_mask:0x5 bound_ctrl:1",
        ),
        (
            &[0xd613_0005, 0x040e_04e9, 0x0539_7701][..],
            "v_fma_f32_e64_dpp v5, v1, v2, v3 dpp8:[7,6,5,4,3,2,1,0]",
        ),
        (
            &[0xd44c_0004, 0x0002_04fa, 0xff01_2201][..],
            "v_cmp_gt_u32_e64_dpp s4, v1, v2 row_ror:2 row_mask:0xf bank_mask:0xf",
        ),
        (
            &[0xd700_0405, 0x0002_04fa, 0xff01_1401][..],
            "v_add_co_u32_e64_dpp v5, s4, v1, v2 row_shr:4 row_mask:0xf bank_mask:0xf",
        ),
        (
            &[0xd581_0005, 0x0000_00fa, 0xff01_4001][..],
            "v_mov_b32_e64_dpp v5, v1 row_mirror row_mask:0xf bank_mask:0xf",
        ),
    ] {
        let i = Inst::decode(words).unwrap();
        assert_eq!(i.size, 3, "{text}");
        assert_eq!(i.llvm().to_string(), text);
    }
}
