//! The RDNA4 decoder takes every instruction of every committed gfx1201 test kernel
//! as `llvm-objdump-19 --mcpu=gfx1201` does: the same length, and the opcode LLVM
//! names (the committed listings in `tests/kernels/gfx1201/llvm-objdump/`, kept
//! current by `cargo xtask listings`); and each prints ([`Inst::text`]) as LLVM
//! prints it for gfx1201.

use amd_isa::rdna4::Inst;

/// LLVM's mnemonic against the ISA's name of the decoded opcode: LLVM marks DPP forms
/// `_dpp`, and marks the 32- and 64-bit forms `_e32` and `_e64` only where both exist
/// (`v_fmamk_f32` has no other; the ISA's VOP3SD table leaves `_e64` off
/// `v_add_co_ci_u32`, whose VOP2 form LLVM tells apart).
fn same_opcode(llvm: &str, ours: &str) -> bool {
    let llvm = llvm.strip_suffix("_dpp").unwrap_or(llvm);
    fn bare(n: &str) -> Option<&str> {
        n.strip_suffix("_e32").or_else(|| n.strip_suffix("_e64"))
    }
    // One side may lack the suffix; `_e32` against `_e64` is another opcode.
    llvm == ours || bare(ours) == Some(llvm) || bare(llvm) == Some(ours)
}

#[test]
fn every_committed_gfx1201_instruction_decodes_and_prints_as_llvm_does() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/kernels/gfx1201/llvm-objdump");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("listing folder")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "txt"))
        .collect();
    files.sort();
    assert!(files.len() >= 40, "{} listings", files.len());
    let (mut total, mut wrong, mut lowered, mut unprinted) = (0, Vec::new(), 0, Vec::new());
    for path in &files {
        let text = std::fs::read_to_string(path).expect("listing");
        for line in text.lines() {
            let (hex, asm) = line.split_once('\t').expect("dwords, tab, text");
            let words: Vec<u32> = hex
                .split(' ')
                .map(|w| u32::from_str_radix(w, 16).expect("hex dword"))
                .collect();
            let at = format!("{}: {hex} ({asm})", path.display());
            let inst = Inst::decode(&words).unwrap_or_else(|e| panic!("{at}: {e}"));
            assert_eq!(inst.size as usize, words.len(), "{at}: size");
            // Shorter input than the instruction is an error, not a guess.
            assert!(Inst::decode(&words[..words.len() - 1]).is_err(), "{at}: truncated");
            let mnemonic = asm.split_whitespace().next().expect("a mnemonic");
            match inst.name() {
                Some(name) if same_opcode(mnemonic, name) => {}
                other => wrong.push(format!("{at}: ours {other:?}")),
            }
            lowered += usize::from(inst.to_rdna3().is_some());
            let text = inst.text();
            if text.ends_with("operands not printed)") {
                unprinted.push(mnemonic.to_string());
            } else if text != asm {
                wrong.push(format!("{at}: prints {text}"));
            }
            total += 1;
        }
    }
    assert!(total > 10_000, "{total} instructions");
    eprintln!("{lowered} of {total} instructions lower to RDNA3");
    unprinted.sort();
    unprinted.dedup();
    assert!(unprinted.is_empty(), "not printed: {unprinted:?}");
    assert!(lowered * 2 > total, "{lowered} of {total} lower");
    assert!(
        wrong.is_empty(),
        "{} of {total} differ:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

/// One encoding of every RDNA4 opcode the coverage report probes (most of them in no
/// test kernel) prints as `llvm-mc-19 -disassemble --mcpu=gfx1201` prints it
/// (`tests/data/rdna4_probes.txt`, written by `cargo xtask listings`), but those
/// `tests/data/rdna4_probes_unlike_llvm.txt` names: the forms the disassembler does
/// not print as LLVM does yet. A form fixed leaves that list; one that breaks fails.
#[test]
fn every_probed_opcode_prints_as_llvm_does_or_is_listed() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let probes = std::fs::read_to_string(dir.join("rdna4_probes.txt")).expect("probe listing");
    let listed = std::fs::read_to_string(dir.join("rdna4_probes_unlike_llvm.txt")).expect("known list");
    let known: std::collections::BTreeSet<&str> = listed
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .collect();
    let (mut checked, mut unlike) = (0, std::collections::BTreeSet::new());
    let mut out_of_date = Vec::new();
    for line in probes.lines() {
        let mut parts = line.split('\t');
        let (hex, id, llvm) = (
            parts.next().expect("dwords"),
            parts.next().expect("encoding and name"),
            parts.next().expect("LLVM's text"),
        );
        if llvm == "-" {
            continue;
        }
        let words: Vec<u32> = hex
            .split(' ')
            .map(|w| u32::from_str_radix(w, 16).expect("hex dword"))
            .collect();
        let inst = Inst::decode(&words).unwrap_or_else(|e| panic!("{id}: {e}"));
        checked += 1;
        if inst.text() != llvm {
            unlike.insert(id);
            if !known.contains(id) {
                out_of_date.push(format!("{id}: prints {:?}, LLVM {llvm:?}", inst.text()));
            }
        } else if known.contains(id) {
            out_of_date.push(format!("{id}: now prints as LLVM does; take it off the list"));
        }
    }
    assert!(checked > 900, "{checked} probes LLVM prints");
    assert!(out_of_date.is_empty(), "{}", out_of_date.join("\n"));
    assert_eq!(unlike.len(), known.len(), "the list names forms the probes do not have");
}

/// VBUFFER's address forms, returning atomics and typed accesses print as
/// `llvm-mc-19 --mcpu=gfx1201` prints them (encodings from `-show-encoding`).
#[test]
fn buffer_forms_print_as_llvm_does() {
    #[rustfmt::skip]
    let cases: &[(&[u8], &str)] = &[
        (&[0x02, 0x00, 0x05, 0xc4, 0x00, 0x08, 0x80, 0x40, 0x01, 0x00, 0x00, 0x00], "buffer_load_b32 v0, v1, s[4:7], s2 offen"),
        (&[0x7c, 0x00, 0x05, 0xc4, 0x00, 0x08, 0x80, 0x80, 0x01, 0x00, 0x00, 0x00], "buffer_load_b32 v0, v1, s[4:7], null idxen"),
        (&[0x02, 0x40, 0x05, 0xc4, 0x00, 0x08, 0x80, 0xc0, 0x01, 0x00, 0x00, 0x00], "buffer_load_b64 v[0:1], v[1:2], s[4:7], s2 idxen offen"),
        (&[0x7c, 0x40, 0x0d, 0xc4, 0x00, 0x08, 0x90, 0x40, 0x01, 0x00, 0x00, 0x00], "buffer_atomic_add_u32 v0, v1, s[4:7], null offen th:TH_ATOMIC_RETURN"),
        (&[0x03, 0x00, 0x0d, 0xc4, 0x00, 0x10, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00], "buffer_atomic_cmpswap_b32 v[0:1], off, s[8:11], s3"),
        (&[0x00, 0x00, 0x20, 0xc4, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00], "tbuffer_load_format_x v0, off, s[0:3], s0 format:[BUF_FMT_INVALID]"),
        (&[0x00, 0x80, 0x03, 0xc4, 0x00, 0x00, 0x80, 0x40, 0x02, 0x00, 0x00, 0x00], "buffer_store_d16_format_xyz v[0:1], v2, s[0:3], s0 offen"),
    ];
    for &(bytes, text) in cases {
        let words: Vec<u32> = bytes
            .chunks(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        assert_eq!(Inst::decode(&words).expect(text).text(), text);
    }
}

/// `s_call_b64`'s offset prints in decimal, `s_round_mode`'s constant in hex, as
/// `llvm-mc-19 --mcpu=gfx1201` prints them.
#[test]
fn gfx12_constants_print_as_llvm_does() {
    for (word, text) in [
        (0xba02_fffd, "s_call_b64 s[2:3], -3"),
        (0xba00_0004, "s_call_b64 s[0:1], 4"),
        (0xbf91_0005, "s_round_mode 0x5"),
    ] {
        assert_eq!(Inst::decode(&[word]).expect(text).text(), text);
    }
}

/// The forms whose operands gfx12's LLVM names or places itself, each as
/// `llvm-mc-19 -arch=amdgcn -mcpu=gfx1201 -disassemble` printed these encodings:
/// `s_wait_alu`'s dependency counters (every field where all are at their default,
/// hex where bits outside them are set), `s_version`'s names and flags,
/// `s_sendmsg_rtn_*`'s messages, the SMEM probes and prefetches, and the true16
/// halves of `v_mov_b16_e32`.
#[test]
fn gfx12_named_operands_print_as_llvm_does() {
    #[rustfmt::skip]
    let cases: &[(&[u32], &str)] = &[
        (&[0xbf88_0000], "s_wait_alu depctr_hold_cnt(0) depctr_sa_sdst(0) depctr_va_vdst(0) depctr_va_sdst(0) depctr_va_ssrc(0) depctr_va_vcc(0) depctr_vm_vsrc(0)"),
        (&[0xbf88_fffe], "s_wait_alu 0xfffe"),
        (&[0xbf88_001f], "s_wait_alu depctr_hold_cnt(0) depctr_va_vdst(0) depctr_va_sdst(0) depctr_va_ssrc(0)"),
        (&[0xbf88_ff9f], "s_wait_alu depctr_hold_cnt(1) depctr_sa_sdst(1) depctr_va_vdst(15) depctr_va_sdst(7) depctr_va_ssrc(1) depctr_va_vcc(1) depctr_vm_vsrc(7)"),
        (&[0xb080_0009], "s_version UC_VERSION_GFX12"),
        (&[0xb080_0001], "s_version 1"),
        (&[0xb080_2001], "s_version 1|UC_VERSION_W64_BIT"),
        (&[0xb080_6000], "s_version (UC_VERSION_GFX7|UC_VERSION_W64_BIT)|UC_VERSION_W32_BIT"),
        (&[0xb080_e009], "s_version ((UC_VERSION_GFX12|UC_VERSION_W64_BIT)|UC_VERSION_W32_BIT)|UC_VERSION_MDP_BIT"),
        (&[0xb080_0100], "s_version 0x100"),
        (&[0xbe80_4c83], "s_sendmsg_rtn_b32 s0, sendmsg(MSG_RTN_GET_REALTIME)"),
        (&[0xbe80_4c87], "s_sendmsg_rtn_b32 s0, sendmsg(MSG_RTN_GET_SE_AID_ID)"),
        (&[0xbe80_4c88], "s_sendmsg_rtn_b32 s0, sendmsg(136, 0, 0)"),
        (&[0xbe80_4d01], "s_sendmsg_rtn_b64 s[0:1], sendmsg(MSG_INTERRUPT)"),
        (&[0xf404_4002, 0xf800_0010], "s_atc_probe 0, s[4:5], 0x10"),
        (&[0xf404_4082, 0x0c00_0010], "s_atc_probe 2, s[4:5], s6 offset:0x10"),
        (&[0xf404_4002, 0xf8ff_fff0], "s_atc_probe 0, s[4:5], -0x10"),
        (&[0xf404_8004, 0xf800_0020], "s_prefetch_inst s[8:9], 0x20, null, 0"),
        (&[0xf404_8004, 0x08ff_fff0], "s_prefetch_inst s[8:9], -0x10, s4, 0"),
        (&[0xf404_a000, 0xf800_0044], "s_prefetch_inst_pc_rel 0x44, null, 0"),
        (&[0xf404_c064, 0xfa00_0020], "s_prefetch_data s[72:73], 0x20, m0, 1"),
        (&[0xf404_e008, 0x0a00_0020], "s_buffer_prefetch_data s[16:19], 0x20, s5, 0"),
        (&[0xf405_0000, 0x7c00_0020], "s_prefetch_data_pc_rel 0x20, s62, 0"),
        (&[0x7f02_3982], "v_mov_b16_e32 v1.h, v2.h"),
        (&[0x7e00_3802], "v_mov_b16_e32 v0.l, s2"),
        (&[0x7e00_38f2], "v_mov_b16_e32 v0.l, 0x3c00"),
        (&[0x7e00_38ff, 0x0000_1234], "v_mov_b16_e32 v0.l, 0x1234"),
        (&[0x7e00_38ff, 0x0000_0010], "v_mov_b16_e32 v0.l, 16"),
        (&[0x7e00_38c1], "v_mov_b16_e32 v0.l, -1"),
    ];
    for &(words, text) in cases {
        assert_eq!(Inst::decode(words).expect(text).text(), text);
    }
}
