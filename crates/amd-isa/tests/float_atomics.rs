//! The float min/max atomics, as `cargo xtask oracle` found them against the ISA's
//! pseudocode (`MEM = src < tmp ? src : tmp`, and `>` for max): memory keeps its value,
//! a NaN's bits included, unless the data compares below (above) it; a NaN datum
//! changes nothing. Encodings from `llvm-mc-19 -arch=amdgcn -mcpu=gfx1100`.

use amd_isa::rdna3::{WaveState, execute, execute_with_memory};

const SNAN: u32 = 0x7f88_b02a;
const QNAN: u32 = 0x7fc0_0001;

/// (memory before, data, memory after) for min, then for max.
const MIN: &[(f32, f32, f32)] = &[(1.0, 3.0, 1.0), (3.0, 1.0, 1.0), (-0.0, 0.0, -0.0), (0.0, -0.0, 0.0)];
const MAX: &[(f32, f32, f32)] = &[(1.0, 3.0, 3.0), (3.0, 1.0, 3.0), (-0.0, 0.0, -0.0)];

/// Memory words and data for one case per lane: the table's, then NaN in memory or in
/// the data, each way.
fn lanes(table: &[(f32, f32, f32)]) -> Vec<(u32, u32, u32)> {
    let mut v: Vec<(u32, u32, u32)> = table
        .iter()
        .map(|&(m, d, a)| (m.to_bits(), d.to_bits(), a.to_bits()))
        .collect();
    for nan in [SNAN, QNAN] {
        v.push((nan, 3f32.to_bits(), nan));
        v.push((3f32.to_bits(), nan, 3f32.to_bits()));
    }
    v
}

/// A wave of 48 VGPRs with its first `lanes` lanes active.
fn wave(lanes: usize) -> WaveState {
    let mut st = WaveState::new(48);
    st.sgpr[126] = (1u32 << lanes) - 1;
    st
}

/// Each lane's memory word (lane `l`'s at byte `4 * l` of `mem`) is its case's result
/// and, with `rtn`, v40 holds the word it replaced.
fn check_lanes(cases: &[(u32, u32, u32)], mem: &[u8], st: &WaveState, rtn: bool) {
    for (lane, &(m, d, after)) in cases.iter().enumerate() {
        let got = u32::from_le_bytes(mem[4 * lane..4 * lane + 4].try_into().unwrap());
        assert_eq!(got, after, "memory {m:#x}, data {d:#x}");
        if rtn {
            assert_eq!(st.vgpr[40][lane], m, "the old value returns");
        }
    }
}

#[test]
fn lds_float_min_max_keep_memory_unless_the_data_passes_it() {
    // ds_min_f32 v16, v24 / ds_max_rtn_f32 v40, v16, v24
    for (words, table, rtn) in [
        ([0xd848_0000u32, 0x0000_1810], MIN, false),
        ([0xd8cc_0000, 0x2800_1810], MAX, true),
    ] {
        let cases = lanes(table);
        let mut st = wave(cases.len());
        for (lane, &(m, d, _)) in cases.iter().enumerate() {
            st.vgpr[16][lane] = 4 * lane as u32;
            st.vgpr[24][lane] = d;
            st.lds[4 * lane..4 * lane + 4].copy_from_slice(&m.to_le_bytes());
        }
        execute(&words, &mut st).unwrap();
        check_lanes(&cases, &st.lds, &st, rtn);
    }
}

#[test]
fn global_float_min_max_keep_memory_unless_the_data_passes_it() {
    // global_atomic_min_f32 v[16:17], v24, off / global_atomic_max_f32 v40, …, glc
    for (words, table, rtn) in [
        ([0xdd46_0000u32, 0x007c_1810], MIN, false),
        ([0xdd4a_4000, 0x287c_1810], MAX, true),
    ] {
        let cases = lanes(table);
        let mut mem = vec![0u8; 4 * cases.len()];
        let base = mem.as_ptr() as u64;
        let mut st = wave(cases.len());
        for (lane, &(m, d, _)) in cases.iter().enumerate() {
            let a = base + 4 * lane as u64;
            st.vgpr[16][lane] = a as u32;
            st.vgpr[17][lane] = (a >> 32) as u32;
            st.vgpr[24][lane] = d;
            mem[4 * lane..4 * lane + 4].copy_from_slice(&m.to_le_bytes());
        }
        execute_with_memory(&words, &mut st, &mut mem).unwrap();
        check_lanes(&cases, &mem, &st, rtn);
    }
}
