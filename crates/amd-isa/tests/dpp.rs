//! DPP sources that pick each lane's own value change nothing: every implemented VOP1,
//! VOP2 and VOPC opcode that may take one, run on random registers under several EXEC
//! patterns with src0 as a plain VGPR, through DPP16 `quad_perm:[0,1,2,3]` (every row
//! and bank on, out-of-row sources zero, inactive lanes fetched) and through DPP8
//! `[0,1,2,3,4,5,6,7]` (fetch-inactive on and off), leaves the same registers (or the
//! same error).

use amd_isa::rdna3::{Status, WaveState, coverage, execute, takes_dpp};

const SRC0: u32 = 16;
const SRC1: u32 = 24;
const VDST: u32 = 40;

fn xorshift(s: &mut u64) -> u64 {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    *s
}

/// Values that exercise floats and integers alike: zeros, ones, halves, denormals,
/// infinities, NaNs, integer extremes, and random words.
fn value(s: &mut u64) -> u32 {
    const POOL: &[u32] = &[
        0,
        0x8000_0000,
        0x3f80_0000,
        0xbf80_0000,
        0x3c00_3c00,
        0x0001_0001,
        0x0000_0001,
        0x007f_ffff,
        0x7f80_0000,
        0x7fc0_0000,
        0x7fbf_ffff,
        0x7e00_7c00,
        0xffff_ffff,
        0x7fff_ffff,
        0x0000_ffff,
        0x4f00_0000,
    ];
    let r = xorshift(s);
    if r & 1 == 0 {
        POOL[(r >> 8) as usize % POOL.len()]
    } else {
        (r >> 32) as u32
    }
}

fn state(s: &mut u64, exec: u32) -> WaveState {
    let mut st = WaveState::new(48);
    for r in 0..48 {
        for lane in 0..32 {
            st.vgpr[r][lane] = value(s);
        }
    }
    for r in 0..106 {
        st.sgpr[r] = value(s);
    }
    st.sgpr[106] = xorshift(s) as u32;
    st.sgpr[126] = exec;
    st
}

#[test]
fn identity_dpp_sources_change_nothing() {
    let mut seed = 0xd15e_a5e5_u64;
    let mut ops = 0;
    for e in coverage() {
        if e.status != Status::Implemented || !matches!(e.encoding, "VOP1" | "VOP2" | "VOPC") || !takes_dpp(e.name) {
            continue;
        }
        ops += 1;
        let op = u32::from(e.op);
        let word = |src0: u32| match e.encoding {
            "VOP1" => 0x7e00_0000 | VDST << 17 | op << 9 | src0,
            "VOP2" => op << 25 | VDST << 17 | SRC1 << 9 | src0,
            _ => 0x7c00_0000 | op << 17 | SRC1 << 9 | src0,
        };
        // DPP16: vsrc0, quad_perm 0xe4, FI and BOUND_CTRL set, every row and bank.
        let dpp16 = SRC0 | 0xe4 << 8 | 1 << 18 | 1 << 19 | 0xff << 24;
        // DPP8: vsrc0 and lane i reading lane i.
        let dpp8 = SRC0 | (0..8).fold(0, |a, i| a | i << (8 + 3 * i));
        for exec in [u32::MAX, 0x5555_5555, 0x8000_0001, xorshift(&mut seed) as u32] {
            let before = state(&mut seed, exec);
            let run = |words: &[u32]| {
                let mut st = before.clone();
                execute(words, &mut st).map(|()| st)
            };
            let plain = run(&[word(256 + SRC0)]);
            for (form, words) in [
                ("DPP16", [word(250), dpp16]),
                ("DPP8", [word(233), dpp8]),
                ("DPP8 FI", [word(234), dpp8]),
            ] {
                let got = run(&words);
                match (&plain, &got) {
                    (Ok(a), Ok(b)) => {
                        for r in 0..48 {
                            assert_eq!(a.vgpr[r], b.vgpr[r], "{} ({form}) v{r}, exec {exec:#x}", e.name);
                        }
                        assert_eq!(a.sgpr, b.sgpr, "{} ({form}) SGPRs, exec {exec:#x}", e.name);
                        assert_eq!(a.scc, b.scc, "{} ({form}) SCC", e.name);
                    }
                    (Err(_), Err(_)) => {}
                    (a, b) => panic!(
                        "{} ({form}), exec {exec:#x}: plain {:?}, DPP {:?}",
                        e.name,
                        a.as_ref().err(),
                        b.as_ref().err()
                    ),
                }
            }
        }
    }
    assert!(ops > 150, "{ops} opcodes");
}
