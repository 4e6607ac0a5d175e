//! RDNA4's instructions one at a time, as the ISA's pseudocode defines them; the
//! encodings are `llvm-mc-19 -arch=amdgcn -mcpu=gfx1201 -show-encoding`'s.

use super::testing::{dwords, run, run_mem, run_mem_lds};

const QNAN: u32 = 0x7fc0_0000;
const SNAN: u32 = 0x7f80_0001;

/// `v_minimum_f32`/`v_maximum_f32` (IEEE 754-2019 minimum and maximum): NaN
/// propagates (a signaling one quieted), -0 is below +0; the `*_num` forms beside them
/// keep the number.
#[test]
fn minimum_and_maximum_propagate_nan() {
    let minimum = dwords(&[0x00, 0x00, 0x65, 0xd7, 0x01, 0x05, 0x02, 0x00]); // v_minimum_f32 v0, v1, v2
    let maximum = dwords(&[0x00, 0x00, 0x66, 0xd7, 0x01, 0x05, 0x02, 0x00]); // v_maximum_f32 v0, v1, v2
    let cases: [(u32, u32, u32, u32); 6] = [
        // (v1, v2, minimum, maximum)
        (1.0f32.to_bits(), 2.0f32.to_bits(), 1.0f32.to_bits(), 2.0f32.to_bits()),
        (1.0f32.to_bits(), QNAN, QNAN, QNAN),
        (QNAN | 5, 3.0f32.to_bits(), QNAN | 5, QNAN | 5),
        (SNAN, QNAN | 2, SNAN | 0x40_0000, SNAN | 0x40_0000),
        (QNAN | 2, SNAN, SNAN | 0x40_0000, SNAN | 0x40_0000),
        (0, 0x8000_0000, 0x8000_0000, 0),
    ];
    for (a, b, lo, hi) in cases {
        let set = |w: &mut crate::rdna3::Wave| {
            w.v[1][0] = a;
            w.v[2][0] = b;
        };
        assert_eq!(run(&[&minimum], set).unwrap().v[0][0], lo, "minimum({a:#x}, {b:#x})");
        assert_eq!(run(&[&maximum], set).unwrap().v[0][0], hi, "maximum({a:#x}, {b:#x})");
    }
    // The three-operand, mixed and packed forms and f64 take the same rule:
    // v_minimum3_f32 v0, v1, v2, v3 and v_maximumminimum_f32 v0, v1, v2, v3
    // (maximum(minimum(v1, v2), v3)).
    let min3 = dwords(&[0x00, 0x00, 0x2d, 0xd6, 0x01, 0x05, 0x0e, 0x04]);
    let maxmin = dwords(&[0x00, 0x00, 0x6d, 0xd6, 0x01, 0x05, 0x0e, 0x04]);
    let set = |w: &mut crate::rdna3::Wave| {
        w.v[1][0] = 4.0f32.to_bits();
        w.v[2][0] = QNAN;
        w.v[3][0] = 1.0f32.to_bits();
        w.v[1][1] = 4.0f32.to_bits();
        w.v[2][1] = 2.0f32.to_bits();
        w.v[3][1] = 3.0f32.to_bits();
    };
    let w = run(&[&min3], set).unwrap();
    assert_eq!((w.v[0][0], w.v[0][1]), (QNAN, 2.0f32.to_bits()));
    let w = run(&[&maxmin], set).unwrap();
    assert_eq!((w.v[0][0], w.v[0][1]), (QNAN, 3.0f32.to_bits()));
    // v_pk_minimum_f16 v0, v1, v2: each half alone.
    let pk = dwords(&[0x00, 0x40, 0x1d, 0xcc, 0x01, 0x05, 0x02, 0x18]);
    let w = run(&[&pk], |w| {
        w.v[1][0] = 0x7e00_3c00; // (NaN, 1.0)
        w.v[2][0] = 0x3c00_4000; // (1.0, 2.0)
    })
    .unwrap();
    assert_eq!(w.v[0][0], 0x7e00_3c00);
    // v_minimum_f64 v[0:1], v[2:3], v[4:5] against v_min_num_f64_e32 (the number).
    let min64 = dwords(&[0x00, 0x00, 0x41, 0xd7, 0x02, 0x09, 0x02, 0x00]);
    let num64 = dwords(&[0x02, 0x09, 0x00, 0x1a]);
    let set64 = |w: &mut crate::rdna3::Wave| {
        let (nan, x) = (f64::NAN.to_bits(), 1.5f64.to_bits());
        w.v[2][0] = nan as u32;
        w.v[3][0] = (nan >> 32) as u32;
        w.v[4][0] = x as u32;
        w.v[5][0] = (x >> 32) as u32;
    };
    let get = |w: &crate::rdna3::Wave| u64::from(w.v[0][0]) | u64::from(w.v[1][0]) << 32;
    assert!(f64::from_bits(get(&run(&[&min64], set64).unwrap())).is_nan());
    assert_eq!(f64::from_bits(get(&run(&[&num64], set64).unwrap())), 1.5);
}

/// SOPK's arithmetic with the immediate sign-extended, lowered to RDNA3's.
#[test]
fn sopk_arithmetic() {
    let mulk = dwords(&[0xfe, 0xff, 0x00, 0xb8]); // s_mulk_i32 s0, 0xfffe (-2)
    let w = run(&[&mulk], |w| w.s[0] = 21).unwrap();
    assert_eq!(w.s[0] as i32, -42);
}

/// gfx12's hardware registers (`s_getreg_b32`, `s_setreg_b32`, `s_setreg_imm32_b32`):
/// its own ids and layouts (SCC in STATE_PRIV, STATUS.VALID and WAVE64, LDS in
/// 512-byte units, a 64-bit SHADER_CYCLES), printed with LLVM 19's gfx12 names.
#[test]
fn hardware_registers() {
    let get = |b: &[u8], setup: fn(&mut crate::rdna3::Wave)| run(&[&dwords(b)], setup).unwrap();
    // s_getreg_b32 s2, hwreg(HW_REG_STATE_PRIV): SCC at bit 9.
    let state_priv = [0x04, 0xf8, 0x82, 0xb8];
    assert_eq!(get(&state_priv, |w| w.scc = true).s[2], 1 << 9);
    assert_eq!(get(&state_priv, |w| w.scc = false).s[2], 0);
    // s_getreg_b32 s2, hwreg(HW_REG_STATUS): VALID; VCCZ (VCC 0); IN_WG; WAVE64.
    let status = [0x02, 0xf8, 0x82, 0xb8];
    assert_eq!(get(&status, |_| {}).s[2], 1 << 16 | 1 << 10);
    let w = get(&status, |w| {
        w.s[crate::rdna3::VCC_LO] = 1;
        w.place.waves = 2;
    });
    assert_eq!(w.s[2], 1 << 16 | 1 << 11);
    // s_getreg_b32 s2, hwreg(HW_REG_LDS_ALLOC, 12, 9): 512-byte units.
    let w = get(&[0x06, 0x43, 0x82, 0xb8], |w| w.place.lds_bytes = 1536);
    assert_eq!(w.s[2], 3);
    // s_getreg_b32 s2, hwreg(HW_REG_HW_ID1, 0, 5): the wave in its workgroup.
    assert_eq!(get(&[0x17, 0x20, 0x82, 0xb8], |w| w.place.wave = 5).s[2], 5);
    // SHADER_CYCLES_LO then _HI: one 64-bit counter, read in two halves.
    let lo = dwords(&[0x1d, 0xf8, 0x82, 0xb8]);
    let hi = dwords(&[0x1e, 0xf8, 0x83, 0xb8]);
    let w = run(&[&hi, &lo, &hi], |_| {}).unwrap();
    assert_eq!(w.s[3], 0, "a 100 MHz count passes 2^32 after 43 s");
    // s_setreg_b32 hwreg(HW_REG_MODE, 0, 4), s3: MODE's rounding.
    let w = run(&[&dwords(&[0x01, 0x18, 0x03, 0xb9])], |w| {
        w.mode = 0xf0;
        w.s[3] = 0x5;
    })
    .unwrap();
    assert_eq!(w.mode, 0xf5);
    // s_setreg_b32 hwreg(HW_REG_STATE_PRIV, 9, 1), s3: a privileged register, ignored.
    let w = run(&[&dwords(&[0x44, 0x02, 0x03, 0xb9])], |w| w.s[3] = 1).unwrap();
    assert!(!w.scc);
    // Zeros into TRAP_CTRL change nothing; a flag set in EXCP_FLAG_USER is refused.
    let trap_ctrl = dwords(&[0x13, 0xf8, 0x80, 0xb9, 0x00, 0x00, 0x00, 0x00]);
    assert!(run(&[&trap_ctrl], |_| {}).is_ok());
    let flag = dwords(&[0x12, 0xf8, 0x80, 0xb9, 0x01, 0x00, 0x00, 0x00]);
    let e = match run(&[&flag], |_| {}) {
        Err(e) => format!("{e:?}"),
        Ok(_) => panic!("a raised exception flag ran"),
    };
    assert!(e.contains("EXCP_FLAG_USER"), "{e}");
    // LLVM 19's text of each.
    for (b, text) in [
        (&state_priv[..], "s_getreg_b32 s2, hwreg(HW_REG_STATE_PRIV)"),
        (
            &[0x06, 0x43, 0x82, 0xb8],
            "s_getreg_b32 s2, hwreg(HW_REG_LDS_ALLOC, 12, 9)",
        ),
        (
            &[0x1e, 0xf8, 0x83, 0xb8],
            "s_getreg_b32 s3, hwreg(HW_REG_SHADER_CYCLES_HI)",
        ),
        (
            &[0xd3, 0x08, 0x82, 0xb8],
            "s_getreg_b32 s2, hwreg(HW_REG_TRAP_CTRL, 3, 2)",
        ),
        (
            &[0x44, 0x02, 0x03, 0xb9],
            "s_setreg_b32 hwreg(HW_REG_STATE_PRIV, 9, 1), s3",
        ),
        (
            &[0x12, 0xf8, 0x80, 0xb9, 0x01, 0x00, 0x00, 0x00],
            "s_setreg_imm32_b32 hwreg(HW_REG_EXCP_FLAG_USER), 1",
        ),
    ] {
        let i = super::Inst::decode(&dwords(b)).unwrap();
        assert_eq!(i.text(), text);
    }
}

/// `s_buffer_load_*` read through the buffer resource at SBASE, with its range check:
/// whole dwords past the buffer's end, and sub-dword loads past it, read as 0.
#[test]
fn scalar_buffer_loads() {
    // s_buffer_load_b32 s0, s[4:7], 0x4; s_buffer_load_u16 s1, s[4:7], 0x2;
    // s_buffer_load_b32 s2, s[4:7], 0x8 (past the 8-byte buffer).
    let b32 = dwords(&[0x02, 0x00, 0x02, 0xf4, 0x04, 0x00, 0x00, 0xf8]);
    let u16 = dwords(&[0x42, 0x60, 0x03, 0xf4, 0x02, 0x00, 0x00, 0xf8]);
    let past = dwords(&[0x82, 0x00, 0x02, 0xf4, 0x08, 0x00, 0x00, 0xf8]);
    let mut data = [0u8; 16];
    data[..8].copy_from_slice(&[0x11, 0x22, 0xf3, 0x44, 0x55, 0x66, 0x77, 0x88]);
    data[8..12].copy_from_slice(&[1, 2, 3, 4]);
    let w = run_mem(&[&b32, &u16, &past], &mut data, |w, base| {
        w.s[4] = base as u32;
        w.s[5] = (base >> 32) as u32 & 0xffff;
        w.s[6] = 8;
        w.s[2] = 0xdead;
    })
    .unwrap();
    assert_eq!(w.s[0], 0x8877_6655);
    assert_eq!(w.s[1], 0x44f3);
    assert_eq!(w.s[2], 0);
}

/// `v_s_exp_f32` and its kin: the VALU's transcendental of a scalar, with VOP3's
/// modifiers, into an SGPR; the VGPRs and EXEC as they were.
#[test]
fn scalar_transcendentals() {
    let exp = dwords(&[0x05, 0x00, 0x80, 0xd6, 0x01, 0x00, 0x00, 0x00]); // v_s_exp_f32 s5, s1
    let exp_abs_neg = dwords(&[0x05, 0x81, 0x80, 0xd6, 0x01, 0x00, 0x00, 0x20]); // v_s_exp_f32 s5, -|s1| clamp
    let rcp16 = dwords(&[0x05, 0x00, 0x85, 0xd6, 0x01, 0x00, 0x00, 0x00]); // v_s_rcp_f16 s5, s1
    let sqrt = dwords(&[0x05, 0x00, 0x88, 0xd6, 0xf0, 0x00, 0x00, 0x08]); // v_s_sqrt_f32 s5, 0.5 mul:2
    let set = |x: u32| {
        move |w: &mut crate::rdna3::Wave| {
            w.s[1] = x;
            w.v[0][0] = 0x1234;
            w.s[crate::rdna3::EXEC_LO] = 0x0f0f;
        }
    };
    let w = run(&[&exp], set(3.0f32.to_bits())).unwrap();
    assert_eq!(f32::from_bits(w.s[5]), 8.0);
    assert_eq!((w.v[0][0], w.s[crate::rdna3::EXEC_LO]), (0x1234, 0x0f0f));
    let w = run(&[&exp_abs_neg], set((-1.0f32).to_bits())).unwrap();
    assert_eq!(f32::from_bits(w.s[5]), 0.5);
    let w = run(&[&rcp16], set(0x4000)).unwrap(); // 1 / 2.0 (f16)
    assert_eq!(w.s[5], 0x3800);
    let w = run(&[&sqrt], set(0)).unwrap(); // sqrt(0.5) * 2
    assert_eq!(f32::from_bits(w.s[5]), 0.5f32.sqrt() * 2.0);
}

fn le(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

fn dword(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// RDNA4's LDS read-modify-writes: the `*_num` minimum (a NaN loses), the packed
/// half add, the conditional subtract (only where it does not go below 0), the f64
/// maximum, each returning the old value where asked; `ds_bpermute_fi_b32` reads
/// inactive lanes too.
#[test]
fn lds_atomics() {
    let min_num = dwords(&[0x00, 0x00, 0xc8, 0xd8, 0x01, 0x02, 0x00, 0x03]); // ds_min_num_rtn_f32 v3, v1, v2
    let pk_add = dwords(&[0x04, 0x00, 0xa8, 0xda, 0x01, 0x02, 0x00, 0x03]); // ds_pk_add_rtn_f16 v3, v1, v2 offset:4
    let cond_sub = dwords(&[0x08, 0x00, 0xa0, 0xda, 0x01, 0x02, 0x00, 0x03]); // ds_cond_sub_rtn_u32 v3, v1, v2 offset:8
    let max64 = dwords(&[0x10, 0x00, 0x4c, 0xd9, 0x01, 0x04, 0x00, 0x00]); // ds_max_num_f64 v1, v[4:5] offset:16
    let base = 0x40usize;
    let mut lds = vec![0u8; 1024];
    lds[base..base + 24].copy_from_slice(&le(&[QNAN, 0x3c00_4000, 5, 0, 0, 0]));
    lds[base + 16..base + 24].copy_from_slice(&1.0f64.to_bits().to_le_bytes());
    let run_one = |prog: &[u32], lds: &mut [u8], set: &dyn Fn(&mut crate::rdna3::Wave)| {
        run_mem_lds(&[prog], &mut [], lds, |w, _| {
            w.s[crate::rdna3::EXEC_LO] = 1;
            w.v[1][0] = base as u32;
            set(w);
        })
        .unwrap()
    };
    // min_num(NaN in memory, 2.0) = 2.0; the old NaN returns.
    let w = run_one(&min_num, &mut lds, &|w| w.v[2][0] = 2.0f32.to_bits());
    assert_eq!((dword(&lds, base), w.v[3][0]), (2.0f32.to_bits(), QNAN));
    // (1.0, 2.0) + (0.5, 1.0) halves = (1.5, 3.0).
    let w = run_one(&pk_add, &mut lds, &|w| w.v[2][0] = 0x3800_3c00);
    assert_eq!((dword(&lds, base + 4), w.v[3][0]), (0x3e00_4200, 0x3c00_4000));
    // 5 - 7 would go below 0: memory stays; then 5 - 3 = 2.
    let w = run_one(&cond_sub, &mut lds, &|w| w.v[2][0] = 7);
    assert_eq!((dword(&lds, base + 8), w.v[3][0]), (5, 5));
    run_one(&cond_sub, &mut lds, &|w| w.v[2][0] = 3);
    assert_eq!(dword(&lds, base + 8), 2);
    // max_num(1.0, 2.5) in f64.
    let x = 2.5f64.to_bits();
    run_one(&max64, &mut lds, &|w| {
        w.v[4][0] = x as u32;
        w.v[5][0] = (x >> 32) as u32;
    });
    assert_eq!(&lds[base + 16..base + 24], &x.to_le_bytes());
    // ds_bpermute_fi_b32 v3, v1, v2 (ds_bpermute_b32's encoding with FI's opcode):
    // lane l reads lane 31 - l of v2, inactive or not.
    let fi = dwords(&[0x00, 0x00, 0xcc, 0xda, 0x01, 0x02, 0x00, 0x03]);
    let mut words = [fi[0], fi[1], 0];
    super::fields::ds::OP.put(&mut words, u32::from(super::opcodes::op::ds::DS_BPERMUTE_FI_B32));
    let w = run_mem_lds(&[&words[..2]], &mut [], &mut lds, |w, _| {
        w.s[crate::rdna3::EXEC_LO] = 0x0000_ffff;
        for l in 0..32 {
            w.v[1][l] = 4 * (31 - l as u32);
            w.v[2][l] = 100 + l as u32;
        }
    })
    .unwrap();
    assert_eq!((w.v[3][0], w.v[3][15], w.v[3][16]), (131, 116, 0));
    // In a wave64, once across all 64 lanes: lane l reads lane 63 - l, from the other
    // half too.
    let w = run_mem_lds(&[&words[..2]], &mut [], &mut lds, |w, _| {
        w.wave64 = true;
        w.v_other.resize(w.v.len(), crate::rdna3::VgprRow::default());
        w.s[crate::rdna3::EXEC_LO] = 0x0000_ffff;
        w.s[crate::rdna3::EXEC_LO + 1] = 0x8000_0001;
        for l in 0..32 {
            w.v[1][l] = 4 * (63 - l as u32);
            w.v_other[1][l] = 4 * (31 - l as u32);
            w.v[2][l] = 100 + l as u32;
            w.v_other[2][l] = 132 + l as u32;
        }
    })
    .unwrap();
    assert_eq!(
        (w.v[3][0], w.v[3][15], w.v[3][16], w.v_other[3][0], w.v_other[3][31]),
        (163, 148, 0, 131, 100)
    );
}

/// RDNA4's memory atomics without an RDNA3 namesake, through VGLOBAL (the same paths
/// serve VFLAT and VBUFFER): conditional subtract, packed bfloat16 add, minimumNumber
/// and the clamped subtract, each returning the old value.
#[test]
fn memory_atomics() {
    let prog = [
        // global_atomic_cond_sub_u32 v3, v1, v2, s[0:1] th:TH_ATOMIC_RETURN
        dwords(&[0x00, 0x00, 0x14, 0xee, 0x03, 0x00, 0x10, 0x01, 0x01, 0x00, 0x00, 0x00]),
        // global_atomic_pk_add_bf16 v4, v1, v5, s[0:1] offset:4 th:TH_ATOMIC_RETURN
        dwords(&[0x00, 0x80, 0x16, 0xee, 0x04, 0x00, 0x90, 0x02, 0x01, 0x04, 0x00, 0x00]),
        // global_atomic_min_num_f32 v3, v1, v2, s[0:1] offset:8 th:TH_ATOMIC_RETURN
        dwords(&[0x00, 0x40, 0x14, 0xee, 0x03, 0x00, 0x10, 0x01, 0x01, 0x08, 0x00, 0x00]),
        // global_atomic_sub_clamp_u32 v3, v1, v2, s[0:1] offset:12 th:TH_ATOMIC_RETURN
        dwords(&[0x00, 0xc0, 0x0d, 0xee, 0x03, 0x00, 0x10, 0x01, 0x01, 0x0c, 0x00, 0x00]),
        // global_inv scope:SCOPE_SYS and s_dcache_inv change nothing here.
        dwords(&[0x7c, 0xc0, 0x0a, 0xee, 0x00, 0x00, 0x0c, 0x00, 0x00, 0x00, 0x00, 0x00]),
        dwords(&[0x00, 0x20, 0x04, 0xf4, 0x00, 0x00, 0x00, 0x00]),
    ];
    let prog: Vec<&[u32]> = prog.iter().map(Vec::as_slice).collect();
    let mut data = le(&[9, 0x3f80_4000, 0xbf80_0000, 2]);
    let snapshot = |w: &crate::rdna3::Wave| (w.v[3][0], w.v[4][0]);
    let mut olds = Vec::new();
    for k in 0..4 {
        let w = run_mem(&prog[k..k + 1], &mut data, |w, base| {
            w.s[crate::rdna3::EXEC_LO] = 1;
            w.s[0] = base as u32;
            w.s[1] = (base >> 32) as u32;
            w.v[1][0] = 0;
            w.v[2][0] = if k == 2 { 0.5f32.to_bits() } else { 4 };
            // (1.0, 2.0) in bfloat16, high half first: 0x3f80_4000; add (1.0, 0.5).
            w.v[5][0] = 0x3f80_3f00;
        })
        .unwrap();
        olds.push(snapshot(&w));
    }
    let w = run_mem(&prog[4..], &mut data, |_, _| {}).unwrap();
    assert_eq!(w.exec(), u32::MAX);
    assert_eq!(dword(&data, 0), 5, "9 - 4");
    assert_eq!(dword(&data, 4), 0x4000_4020, "(1.0 + 1.0, 2.0 + 0.5) in bfloat16");
    assert_eq!(dword(&data, 8), 0xbf80_0000, "min_num(-1.0, 0.5)");
    assert_eq!(dword(&data, 12), 0, "2 - 4 clamped at 0");
    assert_eq!(
        (olds[0].0, olds[1].1, olds[2].0, olds[3].0),
        (9, 0x3f80_4000, 0xbf80_0000, 2)
    );
}

/// The scalar float ALU's f16 forms, compares and minimum/maximum, as the VALU's
/// operations on lane 0: f16 results in the low half (the high half zeroed), compares
/// into SCC, the accumulator of `s_fmac_f16` read from its destination; the VGPRs,
/// EXEC and VCC as they were.
#[test]
fn scalar_float_f16_and_minimum() {
    let prog: [Vec<u32>; 7] = [
        dwords(&[0x01, 0x02, 0x80, 0xa4]),                         // s_add_f16 s0, s1, s2
        dwords(&[0x01, 0x02, 0x03, 0xa7]),                         // s_fmac_f16 s3, s1, s2
        dwords(&[0x01, 0x6a, 0x84, 0xbe]),                         // s_cvt_hi_f32_f16 s4, s1
        dwords(&[0x06, 0x07, 0x85, 0xa7]),                         // s_minimum_f32 s5, s6, s7
        dwords(&[0x06, 0xff, 0x08, 0xa4, 0x00, 0x00, 0x80, 0x3e]), // s_cvt_pk_rtz_f16_f32 s8, s6, 0.25
        dwords(&[0x0a, 0x6b, 0x89, 0xbe]),                         // s_ceil_f16 s9, s10
        dwords(&[0x01, 0x02, 0x51, 0xbf]),                         // s_cmp_lt_f16 s1, s2
    ];
    let prog: Vec<&[u32]> = prog.iter().map(Vec::as_slice).collect();
    let w = run(&prog, |w| {
        w.s[1] = 0x4400_3c00; // (hi 4.0, lo 1.0)
        w.s[2] = 0xffff_4000; // lo 2.0; the high half is not read
        w.s[3] = 0xabcd_3800; // accumulator 0.5
        w.s[6] = 1.5f32.to_bits();
        w.s[7] = QNAN;
        w.s[10] = 0x3e00; // 1.5
        w.s[crate::rdna3::VCC_LO] = 0x55;
        w.v[0][0] = 0x77;
    })
    .unwrap();
    assert_eq!(w.s[0], 0x4200, "1.0 + 2.0");
    assert_eq!(w.s[3], 0x4100, "1.0 * 2.0 + 0.5");
    assert_eq!(f32::from_bits(w.s[4]), 4.0, "the high half");
    assert_eq!(w.s[5], QNAN, "minimum(1.5, NaN) is NaN");
    assert_eq!(w.s[8], 0x3400_3e00, "(0.25, 1.5) packed");
    assert_eq!(w.s[9], 0x4000, "ceil(1.5)");
    assert!(w.scc, "1.0 < 2.0");
    assert_eq!((w.s[crate::rdna3::VCC_LO], w.v[0][0], w.exec()), (0x55, 0x77, u32::MAX));
}

/// `v_permlane16_var_b32` and `v_permlanex16_var_b32`: each lane reads the lane its
/// v2 names (low 4 bits) within its own row, or the other row, inactive or not.
#[test]
fn permlane_var() {
    let same = dwords(&[0x00, 0x00, 0x0f, 0xd7, 0x01, 0x05, 0x02, 0x00]); // v_permlane16_var_b32 v0, v1, v2
    let cross = dwords(&[0x00, 0x00, 0x10, 0xd7, 0x01, 0x05, 0x02, 0x00]); // v_permlanex16_var_b32 v0, v1, v2
    let set = |w: &mut crate::rdna3::Wave| {
        w.s[crate::rdna3::EXEC_LO] = 0x0000_fffe;
        for l in 0..32 {
            w.v[1][l] = 100 + l as u32;
            w.v[2][l] = 0x30 | (15 - (l as u32 % 16));
            w.v[0][l] = 7;
        }
    };
    let w = run(&[&same], set).unwrap();
    assert_eq!((w.v[0][0], w.v[0][1], w.v[0][15], w.v[0][16]), (7, 114, 100, 7));
    let w = run(&[&cross], set).unwrap();
    assert_eq!((w.v[0][1], w.v[0][15]), (130, 116));
}

/// gfx12's WMMA element (lane, element) of an A or B input, row or column `i`,
/// index `k`, as tinygrad's emulator (`test/mockgpu/amd/emu.py`) maps it.
fn ab(i: usize, k: usize) -> (usize, usize) {
    (i + ((k >> 2) & 1) * 16, (k & 3) | ((k >> 1) & 4))
}

/// gfx12 WMMA with f16 results: C and D packed two rows to a register (register
/// `(m % 8) / 2`, the high half for an odd row, lane `n + 16 (m / 8)`), small
/// integers so that every sum is exact in f16.
#[test]
fn wmma_f16_results_pack_two_rows_to_a_register() {
    let wmma = dwords(&[0x08, 0x40, 0x42, 0xcc, 0x00, 0x09, 0x22, 0x1c]); // v_wmma_f16_16x16x16_f16 v[8:11], v[0:3], v[4:7], v[8:11]
    let h = |x: i32| crate::float::half::from_f64(f64::from(x));
    let a = |r: usize, k: usize| (r * 3 + k) as i32 % 5 - 2;
    let b = |k: usize, c: usize| (k + 2 * c) as i32 % 3 - 1;
    let c = |r: usize, n: usize| (r + n) as i32 % 7;
    let put = |w: &mut crate::rdna3::Wave, base: usize, lane: usize, e: usize, v: u16| {
        let reg = &mut w.v[base + e / 2][lane];
        *reg = (*reg & !(0xffff << (16 * (e % 2)))) | u32::from(v) << (16 * (e % 2));
    };
    let w = run(&[&wmma], |w| {
        for i in 0..16 {
            for k in 0..16 {
                let (lane, e) = ab(i, k);
                put(w, 0, lane, e, h(a(i, k)));
                put(w, 4, lane, e, h(b(k, i)));
            }
        }
        for m in 0..16 {
            for n in 0..16 {
                put(w, 8, n + 16 * (m / 8), m % 8, h(c(m, n)));
            }
        }
    })
    .unwrap();
    for m in 0..16 {
        for n in 0..16 {
            let want: i32 = (0..16).map(|k| a(m, k) * b(k, n)).sum::<i32>() + c(m, n);
            let got = (w.v[8 + (m % 8) / 2][n + 16 * (m / 8)] >> (16 * (m % 2))) as u16;
            assert_eq!(got, h(want), "D[{m}][{n}]");
        }
    }
}

/// gfx12's 8-bit integer WMMA: A and B four to a register in the 16-bit inputs'
/// element order, signed as neg_lo says, i32 C and D as the f32 forms lay them.
#[test]
fn wmma_iu8_on_gfx12_registers() {
    let signed = dwords(&[0x08, 0x40, 0x44, 0xcc, 0x00, 0x05, 0x22, 0x7c]); // ... neg_lo:[1,1,0]
    let unsigned = dwords(&[0x08, 0x40, 0x44, 0xcc, 0x00, 0x05, 0x22, 0x1c]);
    let a = |r: usize, k: usize| ((r * 37 + k * 11) % 256) as u8;
    let b = |k: usize, c: usize| ((k * 53 + c * 7 + 3) % 256) as u8;
    let setup = |w: &mut crate::rdna3::Wave| {
        for i in 0..16 {
            for k in 0..16 {
                let (lane, e) = ab(i, k);
                w.v[e / 4][lane] |= u32::from(a(i, k)) << (8 * (e % 4));
                w.v[2 + e / 4][lane] |= u32::from(b(k, i)) << (8 * (e % 4));
            }
        }
        for m in 0..16 {
            for n in 0..16 {
                w.v[8 + m % 8][n + 16 * (m / 8)] = (m * 16 + n) as u32;
            }
        }
    };
    for (prog, sign) in [(&signed, true), (&unsigned, false)] {
        let w = run(&[prog], |w| {
            for r in 0..16 {
                w.v[r].0 = [0; 32];
            }
            setup(w)
        })
        .unwrap();
        let x = |v: u8| if sign { i64::from(v as i8) } else { i64::from(v) };
        for m in 0..16 {
            for n in 0..16 {
                let want: i64 = (0..16).map(|k| x(a(m, k)) * x(b(k, n))).sum::<i64>() + (m * 16 + n) as i64;
                assert_eq!(
                    w.v[8 + m % 8][n + 16 * (m / 8)],
                    want as u32,
                    "signed {sign}: D[{m}][{n}]"
                );
            }
        }
    }
}

/// The 8-bit float conversions (byte and half selects, the kept parts of the
/// destination, stochastic rounding's added bits) and dot products.
#[test]
fn fp8_conversions_and_dot4() {
    use crate::float::fp8::Fp8::{E4m3, E5m2};
    let prog: [Vec<u32>; 6] = [
        dwords(&[0x01, 0x10, 0xec, 0xd5, 0x02, 0x01, 0x00, 0x00]), // v_cvt_f32_fp8_e64 v1, v2 byte_sel:1
        dwords(&[0x02, 0xdb, 0x0a, 0x7e]),                         // v_cvt_f32_bf8_e32 v5, v2
        dwords(&[0x06, 0x08, 0xee, 0xd5, 0x02, 0x01, 0x00, 0x00]), // v_cvt_pk_f32_fp8_e64 v[6:7], v2 op_sel:[1,0]
        dwords(&[0x08, 0x40, 0x69, 0xd7, 0x03, 0x09, 0x02, 0x00]), // v_cvt_pk_fp8_f32 v8, v3, v4 op_sel:[0,0,1]
        dwords(&[0x09, 0x40, 0x6b, 0xd7, 0x03, 0x15, 0x02, 0x00]), // v_cvt_sr_fp8_f32 v9, v3, v10 byte_sel:2
        dwords(&[0x0b, 0x40, 0x24, 0xcc, 0x0c, 0x1b, 0x3a, 0x1c]), // v_dot4_f32_fp8_bf8 v11, v12, v13, v14
    ];
    let prog: Vec<&[u32]> = prog.iter().map(Vec::as_slice).collect();
    let w = run(&prog, |w| {
        w.v[2][0] = 0x4038_c0b8; // bytes: 0xb8 (-1.0 E4M3), 0xc0 (-2.0), 0x38 (1.0), 0x40 (2.0 E4M3; 2.0 E5M2 is 0x40)
        w.v[3][0] = 3.0f32.to_bits();
        w.v[4][0] = (-0.5f32).to_bits();
        w.v[8][0] = 0x0000_abcd;
        w.v[9][0] = 0x1122_3344;
        // The random bits, S1 >> 12 = 0xfff00, added to 3.0's f32 mantissa: just
        // under one E4M3 step there (2^20), so the sum rounds up to the next value.
        w.v[10][0] = 0xfff0_0000;
        w.v[12][0] = u32::from_le_bytes([0x38, 0x40, 0xb8, 0x00]); // (1, 2, -1, 0) E4M3
        w.v[13][0] = u32::from_le_bytes([0x40, 0x3c, 0x3c, 0x7b]); // (2, 1, 1, 57344) E5M2
        w.v[14][0] = 0.25f32.to_bits();
    })
    .unwrap();
    assert_eq!(f32::from_bits(w.v[1][0]), -2.0, "byte 1 as E4M3");
    assert_eq!(f32::from_bits(w.v[5][0]), E5m2.to_f32(0xb8), "byte 0 as E5M2");
    assert_eq!(
        (f32::from_bits(w.v[6][0]), f32::from_bits(w.v[7][0])),
        (1.0, 2.0),
        "the high pair"
    );
    let pair = u32::from(E4m3.encode(3.0)) | u32::from(E4m3.encode(-0.5)) << 8;
    assert_eq!(w.v[8][0], pair << 16 | 0xabcd, "into the high half, the low one kept");
    let sr = u32::from(E4m3.encode(3.25));
    assert_eq!(sr, u32::from(E4m3.encode(f32::from_bits(3.0f32.to_bits() + 0xfff00))));
    assert_eq!(w.v[9][0], 0x1100_3344 | sr << 16, "3.0 rounded up, into byte 2");
    assert_eq!(f32::from_bits(w.v[11][0]), 0.25 + 2.0 + 2.0 - 1.0 + 0.0);
    // The E5M2 forms: v_cvt_pk_bf8_f32 v1, v2, v3 (-3.5 and 1.0: 0xc3 and 0x3c, the
    // high half kept); v_cvt_sr_bf8_f32 v4, v2, v5 (no random bits: -3.5 exactly).
    let pk = dwords(&[0x01, 0x00, 0x6a, 0xd7, 0x02, 0x07, 0x02, 0x00]);
    let sr = dwords(&[0x04, 0x00, 0x6c, 0xd7, 0x02, 0x0b, 0x02, 0x00]);
    let w = run(&[&pk, &sr], |w| {
        w.v[1][0] = 0xabcd_0000;
        w.v[2][0] = (-3.5f32).to_bits();
        w.v[3][0] = 1.0f32.to_bits();
        w.v[4][0] = 0x1122_3300;
    })
    .unwrap();
    assert_eq!((E5m2.encode(-3.5), E5m2.encode(1.0)), (0xc3, 0x3c));
    assert_eq!(w.v[1][0], 0xabcd_3cc3);
    assert_eq!(w.v[4][0], 0x1122_33c3);
}

/// gfx12's WMMA of 8-bit floats: A in E4M3 and B in E5M2 (`_fp8_bf8`), four to a
/// register in the 16-bit inputs' element order, f32 C and D; small values, so the
/// sums are exact.
#[test]
fn wmma_fp8_bf8() {
    use crate::float::fp8::Fp8::{E4m3, E5m2};
    let wmma = dwords(&[0x08, 0x40, 0x47, 0xcc, 0x00, 0x05, 0x22, 0x1c]); // v_wmma_f32_16x16x16_fp8_bf8 v[8:15], v[0:1], v[2:3], v[8:15]
    let a = |r: usize, k: usize| ((r * 5 + k * 3) % 9) as f32 - 4.0;
    let b = |k: usize, c: usize| ((k + c * 7) % 5) as f32 * 0.5 - 1.0;
    let w = run(&[&wmma], |w| {
        for r in 0..16 {
            w.v[r].0 = [0; 32];
        }
        for i in 0..16 {
            for k in 0..16 {
                let (lane, e) = ab(i, k);
                w.v[e / 4][lane] |= u32::from(E4m3.encode(a(i, k))) << (8 * (e % 4));
                w.v[2 + e / 4][lane] |= u32::from(E5m2.encode(b(k, i))) << (8 * (e % 4));
            }
        }
        for m in 0..16 {
            for n in 0..16 {
                w.v[8 + m % 8][n + 16 * (m / 8)] = (m as f32 - n as f32).to_bits();
            }
        }
    })
    .unwrap();
    for m in 0..16 {
        for n in 0..16 {
            let want: f32 = (0..16).map(|k| a(m, k) * b(k, n)).sum::<f32>() + (m as f32 - n as f32);
            assert_eq!(f32::from_bits(w.v[8 + m % 8][n + 16 * (m / 8)]), want, "D[{m}][{n}]");
        }
    }
}

/// `global_load_block`/`global_store_block`: a dword per set bit `i` of M0, at
/// offset `4 i` past the address, into (from) the `i`-th VGPR past the first, holes
/// skipped on both sides.
#[test]
fn block_loads_and_stores() {
    let load = dwords(&[0x00, 0xc0, 0x14, 0xee, 0x08, 0x00, 0x00, 0x00, 0x01, 0x08, 0x00, 0x00]); // global_load_block v[8:39], v1, s[0:1] offset:8
    let store = dwords(&[0x00, 0x00, 0x15, 0xee, 0x00, 0x00, 0x00, 0x04, 0x01, 0x00, 0x00, 0x00]); // global_store_block v1, v[8:39], s[0:1]
    let mut data: Vec<u8> = (0..64u32).flat_map(|k| (k * 0x0101_0101).to_le_bytes()).collect();
    let w = run_mem(&[&load], &mut data, |w, base| {
        w.s[crate::rdna3::EXEC_LO] = 1;
        w.s[0] = base as u32;
        w.s[1] = (base >> 32) as u32;
        w.v[1][0] = 0;
        w.s[crate::rdna3::M0] = 0b1011;
        w.v[10][0] = 0xdead;
    })
    .unwrap();
    // Bits 0, 1 and 3: dwords 2, 3 and 5 (offset 8 = dword 2); v10 (bit 2) kept.
    assert_eq!(
        (w.v[8][0], w.v[9][0], w.v[10][0], w.v[11][0]),
        (0x0202_0202, 0x0303_0303, 0xdead, 0x0505_0505)
    );
    run_mem(&[&store], &mut data, |w, base| {
        w.s[crate::rdna3::EXEC_LO] = 1;
        w.s[0] = base as u32;
        w.s[1] = (base >> 32) as u32;
        w.v[1][0] = 0;
        w.s[crate::rdna3::M0] = 0x8000_0001;
        w.v[8][0] = 0xaaaa_aaaa;
        w.v[9][0] = 0xbbbb_bbbb;
        w.v[39][0] = 0xcccc_cccc;
    })
    .unwrap();
    assert_eq!(
        (dword(&data, 0), dword(&data, 4), dword(&data, 124)),
        (0xaaaa_aaaa, 0x0101_0101, 0xcccc_cccc)
    );
}

/// The split workgroup barrier's state: `s_barrier_signal_isfirst -1` sets SCC for the
/// first of a workgroup's waves to signal, `s_get_barrier_state -1` reads the signals
/// since the barrier last completed and the workgroup's waves; after `s_barrier_wait`
/// the count starts again. A one-wave workgroup is not "in a workgroup": never first.
#[test]
fn workgroup_barrier_state() {
    // Each wave: s_barrier_signal_isfirst -1; s_cselect_b32 s3, 1, 0;
    // s_get_barrier_state s4, -1; s_barrier_wait -1; s_get_barrier_state s5, -1;
    // s_getreg_b32 s6, hwreg(HW_REG_HW_ID1, 0, 5); s_lshl_b32 s7, s6, 4;
    // v_mov_b32 v1, s7; then s3, s4 and s5 stored at s[0:1] + v1 + 0, 4, 8; s_endpgm.
    let prog: &[&[u8]] = &[
        &[0xc1, 0x4f, 0x80, 0xbe],
        &[0x81, 0x80, 0x03, 0x98],
        &[0xc1, 0x50, 0x84, 0xbe],
        &[0xff, 0xff, 0x94, 0xbf],
        &[0xc1, 0x50, 0x85, 0xbe],
        &[0x17, 0x20, 0x86, 0xb8],
        &[0x06, 0x84, 0x07, 0x84],
        &[0x07, 0x02, 0x02, 0x7e],
        &[0x03, 0x02, 0x04, 0x7e],
        &[0x00, 0x80, 0x06, 0xee, 0x00, 0x00, 0x00, 0x01, 0x01, 0x00, 0x00, 0x00],
        &[0x04, 0x02, 0x04, 0x7e],
        &[0x00, 0x80, 0x06, 0xee, 0x00, 0x00, 0x00, 0x01, 0x01, 0x04, 0x00, 0x00],
        &[0x05, 0x02, 0x04, 0x7e],
        &[0x00, 0x80, 0x06, 0xee, 0x00, 0x00, 0x00, 0x01, 0x01, 0x08, 0x00, 0x00],
        &[0x00, 0x00, 0xb0, 0xbf],
    ];
    let run_group = |waves: u32| -> Vec<[u32; 3]> {
        let mut code: Vec<u8> = prog.iter().flat_map(|b| b.iter().copied()).collect();
        code.resize(256, 0);
        let mut data = vec![0u8; 16 * waves as usize];
        let (code_addr, data_addr) = (code.as_ptr() as u64, data.as_ptr() as u64);
        {
            let mut mem = crate::memory::SliceMemory::new();
            mem.map(code_addr, &mut code).map(data_addr, &mut data);
            let mut user_data = [0u32; 16];
            user_data[0] = data_addr as u32;
            user_data[1] = (data_addr >> 32) as u32;
            let d = crate::dispatch::Dispatch {
                code_addr,
                // FLOAT_MODE 0xf0; two user SGPRs.
                rsrc: [0xf0 << 12, 2 << 1, 0],
                user_data,
                block: [32 * waves, 1, 1],
                grid: [1, 1, 1],
                ..Default::default()
            };
            super::Interpreter::default().dispatch(&mem, &d).unwrap();
        }
        data.chunks(16).map(|c| [0, 4, 8].map(|o| dword(c, o))).collect()
    };
    let out = run_group(4);
    // One first; the signal counts 1 to 4 in some order; 4 members, valid; after the
    // wait, no signals.
    assert_eq!(out.iter().filter(|r| r[0] == 1).count(), 1, "{out:x?}");
    let mut counts: Vec<u32> = out.iter().map(|r| r[1] >> 16).collect();
    counts.sort_unstable();
    assert_eq!(counts, [1, 2, 3, 4], "{out:x?}");
    for r in &out {
        assert_eq!(r[1] & 0xffff, 4 << 4 | 1, "{out:x?}");
        assert_eq!(r[2], 4 << 4 | 1, "{out:x?}");
    }
    // One wave: not first, nothing counted.
    assert_eq!(run_group(1), [[0, 1 << 4 | 1, 1 << 4 | 1]]);
    // Barrier 0 is a NOP; named barriers (M0, s_barrier_join) are refused.
    assert!(run(&[&dwords(&[0x80, 0x4e, 0x80, 0xbe])], |_| {}).is_ok());
    for b in [[0x7d, 0x4e, 0x80, 0xbe], [0x81, 0x52, 0x80, 0xbe]] {
        match run(&[&dwords(&b)], |w| w.s[crate::rdna3::M0] = 3) {
            Err(e) => match e.into_kind() {
                crate::error::TrapKind::Refused(why) => assert!(why.contains("named barriers"), "{why}"),
                e => panic!("{e:?}"),
            },
            Ok(_) => panic!("a named barrier ran"),
        }
    }
}
