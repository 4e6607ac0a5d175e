//! `ds_permute_b32` and `ds_bpermute_b32` against the ISA's pseudocode, transcribed
//! here: the lane is `(address + offset) / 4 % 32`; a permute's disabled lanes send
//! nothing and the highest-numbered sender wins; a backward permute reads 0 from a
//! disabled lane; only enabled lanes are written. (tinygrad's emulator gives other
//! lanes, so the oracle cannot check these two.)

use amd_isa::rdna3::{WaveState, execute};

const ADDR: usize = 16;
const DATA: usize = 24;
const VDST: usize = 40;

fn xorshift(s: &mut u64) -> u64 {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    *s
}

#[test]
fn permutes_follow_the_pseudocode() {
    let mut seed = 0x0bad_cafe_u64;
    for case in 0..400 {
        let backward = case % 2 == 1;
        let offset = (xorshift(&mut seed) % 4) as u32 * 4 + if case % 7 == 0 { 0x100 } else { 0 };
        let exec = match case % 4 {
            0 => u32::MAX,
            1 => 0x5555_5555,
            _ => xorshift(&mut seed) as u32,
        };
        let mut st = WaveState::new(48);
        st.sgpr[126] = exec;
        for lane in 0..32 {
            // Small addresses and large ones (the high bits are ignored).
            st.vgpr[ADDR][lane] = xorshift(&mut seed) as u32 & if case % 3 == 0 { 0xffff_fffc } else { 0x7c };
            st.vgpr[DATA][lane] = xorshift(&mut seed) as u32;
            st.vgpr[VDST][lane] = xorshift(&mut seed) as u32;
        }
        let lane_of = |i: usize| (st.vgpr[ADDR][i].wrapping_add(offset) / 4 % 32) as usize;
        let on = |i: usize| exec >> i & 1 == 1;
        let mut tmp = [0u32; 32];
        for i in 0..32 {
            if backward {
                let src = lane_of(i);
                if on(src) {
                    tmp[i] = st.vgpr[DATA][src];
                }
            } else if on(i) {
                tmp[lane_of(i)] = st.vgpr[DATA][i];
            }
        }
        let mut want = st.vgpr[VDST];
        for i in 0..32 {
            if on(i) {
                want[i] = tmp[i];
            }
        }
        // ds_permute_b32 (0xb2) / ds_bpermute_b32 (0xb3) v40, v16, v24 offset:…
        let op: u32 = if backward { 0xb3 } else { 0xb2 };
        let words = [
            0xd800_0000 | op << 18 | offset,
            ADDR as u32 | (DATA as u32) << 8 | (VDST as u32) << 24,
        ];
        let mut after = st.clone();
        execute(&words, &mut after).unwrap();
        assert_eq!(
            after.vgpr[VDST], want,
            "case {case}: backward {backward}, offset {offset:#x}, exec {exec:#x}"
        );
    }
}
