//! The CDNA3 decoder reads instructions as `llvm-mc-19 -show-encoding --mcpu=gfx942`
//! encodes them: one or more of every encoding (SDWA and DPP forms, literals, the
//! VOP3B carry-out form, MFMA and AccVGPR moves, the flat family's three segments):
//! the same length, and the opcode LLVM names. Encodings as LLVM printed them.

use amd_isa::cdna3::{DecodeError, Encoding, Ext, Inst};

/// LLVM's mnemonic against the ISA's name of the decoded opcode: LLVM marks the 32-
/// and 64-bit forms `_e32` and `_e64` only where both exist and the SDWA and DPP forms
/// `_sdwa` and `_dpp`; the AccVGPR moves carry `_b32` in LLVM only, and three mix
/// instructions have other names.
fn same_opcode(llvm: &str, ours: &str) -> bool {
    let llvm = ["_sdwa", "_dpp"]
        .iter()
        .find_map(|s| llvm.strip_suffix(s))
        .unwrap_or(llvm);
    let llvm = match llvm {
        "v_accvgpr_read_b32" => "v_accvgpr_read",
        "v_accvgpr_write_b32" => "v_accvgpr_write",
        // LLVM names gfx940's mixed-precision multiply-adds for what they do (fuse);
        // the ISA's tables keep the older names.
        "v_fma_mix_f32" => "v_mad_mix_f32",
        "v_fma_mixlo_f16" => "v_mad_mixlo_f16",
        "v_fma_mixhi_f16" => "v_mad_mixhi_f16",
        other => other,
    };
    fn bare(n: &str) -> Option<&str> {
        n.strip_suffix("_e32").or_else(|| n.strip_suffix("_e64"))
    }
    // One side may lack the suffix; `_e32` against `_e64` is another opcode.
    llvm == ours || bare(ours) == Some(llvm) || bare(llvm) == Some(ours)
}

#[rustfmt::skip]
const CASES: &[(&[u8], &str)] = &[
        (&[0x01, 0x00, 0x80, 0xbe], "s_mov_b32 s0, s1"),
        (&[0xff, 0x00, 0x80, 0xbe, 0x78, 0x56, 0x34, 0x12], "s_mov_b32 s0, 0x12345678"),
        (&[0x01, 0xff, 0x00, 0x80, 0x00, 0x10, 0x00, 0x00], "s_add_u32 s0, s1, 0x1000"),
        (&[0x00, 0xff, 0x06, 0xbf, 0x00, 0x10, 0x00, 0x00], "s_cmp_eq_u32 s0, 0x1000"),
        (&[0x10, 0x00, 0x00, 0xb0], "s_movk_i32 s0, 0x10"),
        (&[0x01, 0xf8, 0x00, 0xba, 0x34, 0x12, 0x00, 0x00], "s_setreg_imm32_b32 hwreg(HW_REG_MODE), 0x1234"),
        (&[0x00, 0x00, 0x80, 0xbf], "s_nop 0"),
        (&[0x00, 0x00, 0x81, 0xbf], "s_endpgm"),
        (&[0x70, 0x00, 0x8c, 0xbf], "s_waitcnt vmcnt(0) lgkmcnt(0)"),
        (&[0x01, 0x00, 0x06, 0xc0, 0x10, 0x00, 0x00, 0x00], "s_load_dwordx2 s[0:1], s[2:3], 0x10"),
        (&[0x02, 0x00, 0x22, 0xc0, 0x00, 0x00, 0x00, 0x00], "s_buffer_load_dword s0, s[4:7], 0x0"),
        (&[0x00, 0x1c, 0x80, 0xbe], "s_getpc_b64 s[0:1]"),
        (&[0x04, 0x00, 0x84, 0xbf], "s_cbranch_scc0 4"),
        (&[0x01, 0x03, 0x00, 0x7e], "v_mov_b32_e32 v0, v1"),
        (&[0xff, 0x02, 0x00, 0x7e, 0x78, 0x56, 0x34, 0x12], "v_mov_b32_e32 v0, 0x12345678"),
        (&[0x01, 0x05, 0x00, 0x02], "v_add_f32_e32 v0, v1, v2"),
        (&[0xff, 0x04, 0x00, 0x02, 0x01, 0x00, 0x80, 0x3f], "v_add_f32_e32 v0, 0x3f800001, v2"),
        (&[0xf2, 0x04, 0x00, 0x02], "v_add_f32_e32 v0, 1.0, v2"),
        (&[0x00, 0x03, 0x94, 0x7d], "v_cmp_eq_u32_e32 vcc, v0, v1"),
        (&[0xff, 0x02, 0x88, 0x7c, 0x01, 0x00, 0x80, 0x3f], "v_cmp_gt_f32_e32 vcc, 0x3f800001, v1"),
        (&[0xf9, 0x02, 0x00, 0x7e, 0x01, 0x00, 0x05, 0x00], "v_mov_b32_sdwa v0, v1 dst_sel:BYTE_0 dst_unused:UNUSED_PAD src0_sel:WORD_1"),
        (&[0xf9, 0x04, 0x00, 0x02, 0x01, 0x06, 0x05, 0x06], "v_add_f32_sdwa v0, v1, v2 dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:WORD_1 src1_sel:DWORD"),
        (&[0xf9, 0x02, 0x94, 0x7d, 0x00, 0x00, 0x01, 0x06], "v_cmp_eq_u32_sdwa vcc, v0, v1 src0_sel:BYTE_1 src1_sel:DWORD"),
        (&[0xfa, 0x02, 0x00, 0x7e, 0x01, 0xb1, 0x00, 0xff], "v_mov_b32_dpp v0, v1 quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf"),
        (&[0xfa, 0x04, 0x00, 0x02, 0x01, 0x11, 0x01, 0xff], "v_add_f32_dpp v0, v1, v2 row_shr:1 row_mask:0xf bank_mask:0xf"),
        (&[0x00, 0x00, 0xcb, 0xd1, 0x01, 0x05, 0x0e, 0x04], "v_fma_f32 v0, v1, v2, v3"),
        (&[0x01, 0x05, 0x00, 0x32], "v_add_co_u32_e32 v0, vcc, v1, v2"),
        (&[0x00, 0x00, 0x19, 0xd1, 0x01, 0x05, 0x02, 0x00], "v_add_co_u32_e64 v0, s[0:1], v1, v2"),
        (&[0x00, 0x00, 0x00, 0xd1, 0x01, 0x05, 0x02, 0x00], "v_cndmask_b32_e64 v0, v1, v2, s[0:1]"),
        (&[0x00, 0x00, 0x85, 0xd2, 0x01, 0x05, 0x02, 0x00], "v_mul_lo_u32 v0, v1, v2"),
        (&[0x00, 0x00, 0x08, 0xd2, 0x02, 0x01, 0x11, 0x04], "v_lshl_add_u64 v[0:1], v[2:3], 0, v[4:5]"),
        (&[0x00, 0x00, 0x89, 0xd2, 0x01, 0x05, 0x01, 0x00], "v_readlane_b32 s0, v1, 2"),
        (&[0x00, 0x6a, 0xe0, 0xd1, 0x01, 0x05, 0x06, 0x04], "v_div_scale_f32 v0, vcc, v1, v2, v1"),
        (&[0x00, 0x02, 0xe8, 0xd1, 0x04, 0x0b, 0x1a, 0x04], "v_mad_u64_u32 v[0:1], s[2:3], v4, v5, v[6:7]"),
        (&[0x00, 0x40, 0x8e, 0xd3, 0x01, 0x05, 0x0e, 0x1c], "v_pk_fma_f16 v0, v1, v2, v3"),
        (&[0x00, 0x40, 0xb2, 0xd3, 0x02, 0x09, 0x02, 0x18], "v_pk_add_f32 v[0:1], v[2:3], v[4:5]"),
        (&[0x00, 0x80, 0xcc, 0xd3, 0x00, 0x05, 0x02, 0x04], "v_mfma_f32_32x32x8_f16 a[0:15], v[0:1], v[2:3], a[0:15]"),
        (&[0x00, 0x00, 0xcd, 0xd3, 0x04, 0x0d, 0x02, 0x04], "v_mfma_f32_16x16x16_f16 v[0:3], v[4:5], v[6:7], v[0:3]"),
        (&[0x00, 0x40, 0xd8, 0xd3, 0x00, 0x01, 0x00, 0x18], "v_accvgpr_read_b32 v0, a0"),
        (&[0x00, 0x40, 0xd9, 0xd3, 0x00, 0x01, 0x00, 0x18], "v_accvgpr_write_b32 a0, v0"),
        (&[0x01, 0x05, 0x00, 0x30, 0x00, 0x00, 0x80, 0x3f], "v_fmaak_f32 v0, v1, v2, 0x3f800000"),
        (&[0x00, 0x40, 0xa3, 0xd3, 0x01, 0x05, 0x0e, 0x1c], "v_dot2_f32_f16 v0, v1, v2, v3"),
        (&[0x00, 0x00, 0x6c, 0xd8, 0x01, 0x00, 0x00, 0x00], "ds_read_b32 v0, v1"),
        (&[0x10, 0x00, 0x1a, 0xd8, 0x00, 0x01, 0x00, 0x00], "ds_write_b32 v0, v1 offset:16"),
        (&[0x00, 0x00, 0x00, 0xd8, 0x00, 0x01, 0x00, 0x00], "ds_add_u32 v0, v1"),
        (&[0x00, 0x00, 0x50, 0xdc, 0x00, 0x00, 0x00, 0x00], "flat_load_dword v0, v[0:1]"),
        (&[0x00, 0x00, 0x09, 0xdd, 0x02, 0x04, 0x00, 0x00], "flat_atomic_add v0, v[2:3], v4 sc0"),
        (&[0x00, 0x80, 0x50, 0xdc, 0x00, 0x00, 0x7f, 0x00], "global_load_dword v0, v[0:1], off"),
        (&[0x00, 0x80, 0x70, 0xdc, 0x00, 0x01, 0x00, 0x00], "global_store_dword v0, v1, s[0:1]"),
        (&[0x00, 0x40, 0x50, 0xdc, 0x00, 0x00, 0x00, 0x00], "scratch_load_dword v0, off, s0"),
        (&[0x00, 0x60, 0x70, 0xdc, 0x01, 0x02, 0x7f, 0x00], "scratch_store_dword v1, v2, off"),
        (&[0x00, 0x00, 0x50, 0xe0, 0x00, 0x00, 0x00, 0x80], "buffer_load_dword v0, off, s[0:3], 0"),
        (&[0x00, 0x10, 0x70, 0xe0, 0x01, 0x00, 0x00, 0x80], "buffer_store_dword v0, v1, s[0:3], 0 offen"),
        (&[0x00, 0x00, 0xa0, 0xeb, 0x00, 0x00, 0x00, 0x80], "tbuffer_load_format_x v0, off, s[0:3], 0 format:[BUF_DATA_FORMAT_32,BUF_NUM_FORMAT_FLOAT]"),
        (&[0x01, 0x17, 0x00, 0x7e], "v_cvt_f32_f16_e32 v0, v1"),
        (&[0x00, 0x01, 0x4b, 0xd1, 0x01, 0x01, 0x00, 0x00], "v_cvt_f32_f16_e64 v0, |v1|"),
        (&[0x00, 0x00, 0x8f, 0xd2, 0x82, 0x04, 0x02, 0x00], "v_lshlrev_b64 v[0:1], 2, v[2:3]"),
        (&[0x6a, 0x20, 0x80, 0xbe], "s_and_saveexec_b64 s[0:1], vcc"),
        (&[0x01, 0x02, 0x00, 0x92], "s_mul_i32 s0, s1, s2"),
        (&[0x00, 0x00, 0x8a, 0xbf], "s_barrier"),
];

fn words(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

#[test]
fn every_sample_decodes_as_llvm_encodes_it() {
    let mut wrong = Vec::new();
    for &(bytes, text) in CASES {
        let w = words(bytes);
        let inst = Inst::decode(&w).unwrap_or_else(|e| panic!("{text}: {e}"));
        if usize::from(inst.size) != w.len() {
            wrong.push(format!("{text}: {} dwords, LLVM {}", inst.size, w.len()));
        }
        let mnemonic = text.split_whitespace().next().expect("a mnemonic");
        match inst.name() {
            Some(name) if same_opcode(mnemonic, name) => {}
            other => wrong.push(format!("{text}: ours {other:?} ({:?})", inst.enc)),
        }
        // Shorter input than the instruction is an error, not a guess.
        assert_eq!(
            Inst::decode(&w[..w.len() - 1]).err(),
            Some(DecodeError::Truncated),
            "{text}"
        );
    }
    assert!(
        wrong.is_empty(),
        "{} of {} differ:\n{}",
        wrong.len(),
        CASES.len(),
        wrong.join("\n")
    );
}

#[test]
fn the_extra_dwords_are_told_apart() {
    let find = |prefix: &str| {
        let (bytes, _) = CASES.iter().find(|(_, t)| t.starts_with(prefix)).expect(prefix);
        Inst::decode(&words(bytes)).expect(prefix)
    };
    assert_eq!(find("v_mov_b32_sdwa").ext, Some(Ext::Sdwa));
    assert_eq!(find("v_add_f32_dpp").ext, Some(Ext::Dpp));
    assert_eq!(find("v_mov_b32_e32 v0, 0x12345678").literal, Some(0x1234_5678));
    assert_eq!(find("v_fmaak_f32").literal, Some(0x3f80_0000), "always a literal");
    assert_eq!(find("s_setreg_imm32_b32").literal, Some(0x1234), "always a literal");
    assert_eq!(find("v_add_f32_e32 v0, 0x3f800001").literal, Some(0x3f80_0001));
    assert_eq!(find("v_add_f32_e32 v0, 1.0").literal, None, "an inline constant");
    assert_eq!(find("global_load_dword").enc, Encoding::Global);
    assert_eq!(find("scratch_load_dword").enc, Encoding::Scratch);
    assert_eq!(find("flat_load_dword").enc, Encoding::Flat);
    assert_eq!(find("v_add_co_u32_e64").enc, Encoding::Vop3);
    assert_eq!(find("v_mfma_f32_32x32x8_f16").enc, Encoding::Vop3p);
}

#[test]
fn bad_words_are_errors() {
    // An image instruction (MIMG, 0b111100): not an encoding compute code uses.
    assert_eq!(Inst::decode(&[0xf000_0000, 0]), Err(DecodeError::Unknown(0xf000_0000)));
    // The flat family's fourth SEG value.
    assert_eq!(Inst::decode(&[0xdc00_c000, 0]), Err(DecodeError::Unknown(0xdc00_c000)));
    assert_eq!(Inst::decode(&[]), Err(DecodeError::Truncated));
    // A VOP1 naming a literal it does not carry, and an SDWA dword that is missing.
    assert_eq!(Inst::decode(&[0x7e00_02ff]), Err(DecodeError::Truncated));
    assert_eq!(Inst::decode(&[0x7e00_02f9]), Err(DecodeError::Truncated));
    // Random words never panic.
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    for _ in 0..100_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let w = [x as u32, (x >> 32) as u32, x.rotate_left(17) as u32, 0];
        if let Ok(i) = Inst::decode(&w) {
            assert!((1..=3).contains(&i.size), "{w:x?}");
            let _ = i.name();
            // Nor do the disassembler and the lowering to RDNA3.
            let _ = i.llvm().to_string();
            let _ = i.to_rdna3();
        }
    }
}

/// One encoding of every opcode of the CDNA tables (`amd_isa::cdna3::probes`) decodes
/// to the opcode `llvm-mc-19 -disassemble --mcpu=gfx942` reads in exactly its dwords
/// (`tests/data/cdna3_probes.txt`, written by `cargo xtask listings`); a probe LLVM
/// reads as no gfx942 instruction (`-`: CDNA4's opcodes, and forms whose probe operands
/// LLVM refuses) is counted, not compared.
#[test]
fn every_probe_llvm_reads_decodes_to_its_opcode() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/cdna3_probes.txt");
    let text = std::fs::read_to_string(path).expect("probe listing");
    let probes = amd_isa::cdna3::probes();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines.len(),
        probes.len(),
        "the listing is current (cargo xtask listings)"
    );
    let (mut checked, mut unread, mut wrong) = (0, 0, Vec::new());
    for (line, (encoding, name, words)) in lines.iter().zip(&probes) {
        let mut parts = line.split('\t');
        let (hex, id, llvm) = (parts.next().unwrap(), parts.next().unwrap(), parts.next().unwrap());
        assert_eq!(
            id,
            format!("{encoding} {name}"),
            "the listing is current (cargo xtask listings)"
        );
        let ours: Vec<String> = words.iter().map(|w| format!("{w:08x}")).collect();
        assert_eq!(
            hex,
            ours.join(" "),
            "{id}: the listing is current (cargo xtask listings)"
        );
        if llvm == "-" {
            unread += 1;
            continue;
        }
        let inst = Inst::decode(words).unwrap_or_else(|e| panic!("{id}: {e}"));
        let mnemonic = llvm.split_whitespace().next().expect("a mnemonic");
        match inst.name() {
            Some(n) if same_opcode(mnemonic, n) && usize::from(inst.size) == words.len() => {}
            other => wrong.push(format!("{id}: ours {other:?}, {} dwords; LLVM {llvm}", inst.size)),
        }
        checked += 1;
    }
    eprintln!("{checked} probes read as LLVM reads them, {unread} LLVM reads as no gfx942 instruction");
    assert!(checked > 1_400, "{checked} probes LLVM reads");
    assert!(wrong.is_empty(), "{} differ:\n{}", wrong.len(), wrong.join("\n"));
}
