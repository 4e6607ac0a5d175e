//! One instruction on a wave state given whole: the interpreter's semantics without a
//! dispatch, for differential testing against another reading of the ISA
//! (`cargo xtask oracle`) and for tests that pin one instruction's result.

use super::decode::Inst;
use super::exec::step;
use super::wave::Wave;
use crate::error::ExecError;
use crate::memory::{Memory, SliceMemory};

/// Bytes of LDS a [`WaveState`] carries (a workgroup's most on gfx11).
pub const LDS_BYTES: usize = 64 * 1024;

/// A wave32 wave's registers, as one instruction reads and writes them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WaveState {
    /// The 128 scalar slots: s0–s105, `vcc_lo`/`vcc_hi` (106, 107), `m0` (125),
    /// `exec_lo`/`exec_hi` (126, 127).
    pub sgpr: [u32; 128],
    /// SCC.
    pub scc: bool,
    /// VGPRs, each 32 lanes (at most 256).
    pub vgpr: Vec<[u32; 32]>,
    /// The MODE register (bits 3:0 rounding, 7:4 denormal controls, 8 DX10_CLAMP, 9
    /// IEEE; `0x2f0`, the default: round to nearest even, every denormal kept, IEEE
    /// mode on as compute kernels run).
    pub mode: u32,
    /// The workgroup's LDS, [`LDS_BYTES`] long.
    pub lds: Vec<u8>,
    /// Each lane's private (scratch) memory from address 0: 32 byte vectors, or none
    /// (empty: every lane's starts zeroed). Scratch accesses past a lane's bytes grow
    /// it with zeros (up to 64 KiB).
    pub private: Vec<Vec<u8>>,
}

impl WaveState {
    /// Zeroed registers (`vgprs` of them, at most 256), every lane on, MODE `0x2f0`.
    pub fn new(vgprs: usize) -> Self {
        let mut sgpr = [0; 128];
        sgpr[super::wave::EXEC_LO] = u32::MAX;
        WaveState {
            sgpr,
            scc: false,
            vgpr: vec![[0; 32]; vgprs.clamp(1, 256)],
            mode: 0x2f0,
            lds: vec![0; LDS_BYTES],
            private: Vec::new(),
        }
    }
}

/// Runs the instruction in `words` (its dwords, literal or DPP dword included) on
/// `state`. No memory is mapped: a global, flat or scalar memory access is an error
/// (see [`execute_with_memory`]),
/// as is an instruction the interpreter does not implement. On error `state` may be
/// partly written.
pub fn execute(words: &[u32], state: &mut WaveState) -> Result<(), ExecError> {
    execute_on(words, state, &SliceMemory::new())
}

/// [`execute`] with `memory` mapped for global and flat accesses at its own address
/// (as the mock GPU maps host memory): an access inside
/// `memory.as_ptr()..+memory.len()` reads and writes it, one outside faults.
pub fn execute_with_memory(words: &[u32], state: &mut WaveState, memory: &mut [u8]) -> Result<(), ExecError> {
    let base = memory.as_ptr() as u64;
    let mut m = SliceMemory::new();
    m.map(base, memory);
    execute_on(words, state, &m)
}

/// [`execute`] with `mem` as the GPU's memory.
pub fn execute_on(words: &[u32], state: &mut WaveState, mem: &dyn Memory) -> Result<(), ExecError> {
    let inst = Inst::decode(words).map_err(|e| decode_error(words, e))?;
    on_wave(state, |w, lds| {
        step(w, &inst, mem, lds)
            .map(|_| ())
            .map_err(|t| super::exec_error(t, 0, inst.to_string()))
    })
}

/// A decoder's refusal of `words` as the error [`execute`] returns.
pub(crate) fn decode_error(words: &[u32], e: impl std::fmt::Display) -> ExecError {
    ExecError::Decode {
        pc: 0,
        words: words[..words.len().min(2)].to_vec(),
        reason: e.to_string(),
    }
}

/// Runs `run` on a one-wave workgroup's wave loaded from `state`, then stores the
/// wave back into `state` (whatever `run` returns).
pub(crate) fn on_wave(
    state: &mut WaveState,
    run: impl FnOnce(&mut Wave, &mut [u8]) -> Result<(), ExecError>,
) -> Result<(), ExecError> {
    let mut w = Wave::new(state.vgpr.len(), 0);
    w.s = state.sgpr;
    w.scc = state.scc;
    w.v.iter_mut().zip(&state.vgpr).for_each(|(r, s)| r.0 = *s);
    w.mode = state.mode;
    if state.lds.len() != LDS_BYTES {
        state.lds.resize(LDS_BYTES, 0);
    }
    // A one-wave workgroup owning the LDS given (what LDS_ALLOC and HW_ID1 report).
    w.place = super::wave::Place {
        wave: 0,
        waves: 1,
        lds_bytes: LDS_BYTES as u32,
        acc_base: 0,
    };
    if state.private.len() == 32 {
        w.private = std::mem::take(&mut state.private);
        w.private_used = true;
    }
    let r = run(&mut w, &mut state.lds);
    if w.private.iter().any(|p| !p.is_empty()) {
        state.private = std::mem::take(&mut w.private);
    }
    state.sgpr = w.s;
    state.scc = w.scc;
    state.vgpr.iter_mut().zip(&w.v).for_each(|(s, r)| *s = r.0);
    state.mode = w.mode;
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Scratch accesses reach each lane's private memory given in the state, and what
    /// they store comes back in it.
    #[test]
    fn private_memory_goes_in_and_comes_back() {
        let mut st = WaveState::new(48);
        st.private = (0..32).map(|l| vec![l as u8; 16]).collect();
        for lane in 0..32 {
            st.vgpr[16][lane] = 4 * (lane as u32 % 3);
            st.vgpr[24][lane] = 0xa000 + lane as u32;
        }
        // scratch_load_b32 v40, v16, off: lane l's bytes are all l.
        execute(&[0xdc51_0000, 0x28fc_0010], &mut st).unwrap();
        assert_eq!(st.vgpr[40][7], 0x0707_0707);
        // scratch_store_b32 v16, v24, off offset:4
        execute(&[0xdc69_0004, 0x00fc_1810], &mut st).unwrap();
        assert_eq!(st.private[5][4 + 8..4 + 12], 0xa005u32.to_le_bytes());
        assert_eq!(st.private[5][..4], [5; 4], "the rest kept");
        // Without private memory given, each lane's starts zeroed.
        let mut fresh = WaveState::new(48);
        execute(&[0xdc51_0000, 0x28fc_0010], &mut fresh).unwrap();
        assert_eq!(fresh.vgpr[40][3], 0);
    }

    /// Global loads and stores reach the memory given, at its address; an address
    /// outside it faults.
    #[test]
    fn global_accesses_reach_the_memory_given() {
        let mut mem = vec![0u8; 256];
        for (i, b) in mem.iter_mut().enumerate() {
            *b = i as u8;
        }
        let base = mem.as_ptr() as u64;
        let mut st = WaveState::new(48);
        for lane in 0..32 {
            let a = base + 4 * lane as u64;
            st.vgpr[16][lane] = a as u32;
            st.vgpr[17][lane] = (a >> 32) as u32;
            st.vgpr[24][lane] = 0x1000 + lane as u32;
        }
        // global_load_b32 v40, v[16:17], off
        let load = [0xdc52_0000, 0x287c_0010];
        execute_with_memory(&load, &mut st, &mut mem).unwrap();
        assert_eq!(st.vgpr[40][3], u32::from_le_bytes([12, 13, 14, 15]));
        // global_store_b32 v[16:17], v24, off offset:128
        let store = [0xdc6a_0080, 0x007c_1810];
        execute_with_memory(&store, &mut st, &mut mem).unwrap();
        assert_eq!(&mem[128 + 8..128 + 12], &0x1002u32.to_le_bytes());
        // Past the end (offset 128 + 31 × 4 + 4 > 256 for the last lanes): a fault.
        let past = [0xdc6a_00a0, 0x007c_1810];
        assert!(execute_with_memory(&past, &mut st, &mut mem).is_err());
        assert!(execute(&load, &mut st).is_err(), "no memory: a fault");
    }

    /// With one lane on (a one-lane workgroup, a loop's last lane), a dword load and
    /// store move that lane's dword alone, at that lane's address: the other lanes'
    /// registers and bytes stay. A load into a VGPR past the wave's is refused.
    #[test]
    fn one_lane_global_accesses_move_that_lane_only() {
        // global_load_b32 v40, v[16:17], off; global_store_b32 v[16:17], v24, off offset:128
        let load = [0xdc52_0000, 0x287c_0010];
        let store = [0xdc6a_0080, 0x007c_1810];
        for lane in [0usize, 5, 31] {
            let mut mem: Vec<u8> = (0..=255).collect();
            let base = mem.as_ptr() as u64;
            let mut st = WaveState::new(48);
            st.sgpr[126] = 1 << lane;
            for l in 0..32 {
                let a = base + 4 * l as u64;
                st.vgpr[16][l] = a as u32;
                st.vgpr[17][l] = (a >> 32) as u32;
                st.vgpr[24][l] = 0x1000 + l as u32;
                st.vgpr[40][l] = 0xdead_0000 + l as u32;
            }
            execute_with_memory(&load, &mut st, &mut mem).unwrap();
            for l in 0..32 {
                let b = 4 * l as u8;
                let want = if l == lane {
                    u32::from_le_bytes([b, b + 1, b + 2, b + 3])
                } else {
                    0xdead_0000 + l as u32
                };
                assert_eq!(st.vgpr[40][l], want, "lane {l} with lane {lane} on");
            }
            let before = mem.clone();
            execute_with_memory(&store, &mut st, &mut mem).unwrap();
            let at = 128 + 4 * lane;
            for (i, (&b, &was)) in mem.iter().zip(&before).enumerate() {
                let want = if (at..at + 4).contains(&i) {
                    (0x1000 + lane as u32).to_le_bytes()[i - at]
                } else {
                    was
                };
                assert_eq!(b, want, "byte {i} with lane {lane} on");
            }
        }
        // global_load_b32 v50, v[16:17], off: the wave has 48 VGPRs.
        let mut mem = vec![0u8; 256];
        let mut st = WaveState::new(48);
        st.sgpr[126] = 1;
        let a = mem.as_ptr() as u64;
        (st.vgpr[16][0], st.vgpr[17][0]) = (a as u32, (a >> 32) as u32);
        assert!(execute_with_memory(&[0xdc52_0000, 0x327c_0010], &mut st, &mut mem).is_err());
    }

    /// Scalar loads put their dwords in order into ordinary SGPRs and VCC; a load
    /// into NULL changes no register.
    #[test]
    fn scalar_loads_fill_their_registers_in_order() {
        let mut mem: Vec<u8> = (0..64).collect();
        let a = mem.as_ptr() as u64;
        let mut st = WaveState::new(8);
        (st.sgpr[0], st.sgpr[1]) = (a as u32, (a >> 32) as u32);
        let dword = |k: u8| u32::from_le_bytes([4 * k, 4 * k + 1, 4 * k + 2, 4 * k + 3]);
        // s_load_b128 s[4:7], s[0:1], 0x10
        execute_with_memory(&[0xf408_0100, 0xf800_0010], &mut st, &mut mem).unwrap();
        assert_eq!(&st.sgpr[4..8], &[dword(4), dword(5), dword(6), dword(7)]);
        // s_load_b64 vcc, s[0:1], 0x8
        execute_with_memory(&[0xf404_1a80, 0xf800_0008], &mut st, &mut mem).unwrap();
        assert_eq!(&st.sgpr[106..108], &[dword(2), dword(3)]);
        // s_load_b32 null, s[0:1], 0x0
        let before = st.sgpr;
        execute_with_memory(&[0xf400_1f00, 0xf800_0000], &mut st, &mut mem).unwrap();
        assert_eq!(st.sgpr, before, "a load into NULL changes no register");
    }

    #[test]
    fn adds_under_exec() {
        let mut st = WaveState::new(48);
        st.sgpr[126] = 0x5555_5555;
        for lane in 0..32 {
            st.vgpr[16][lane] = (1.5f32 + lane as f32).to_bits();
            st.vgpr[24][lane] = 2.0f32.to_bits();
        }
        // v_add_f32_e32 v40, v16, v24
        execute(&[3 << 25 | 40 << 17 | 24 << 9 | 272], &mut st).unwrap();
        assert_eq!(f32::from_bits(st.vgpr[40][0]), 3.5);
        assert_eq!(st.vgpr[40][1], 0);
        assert_eq!(f32::from_bits(st.vgpr[40][2]), 5.5);
    }
}
