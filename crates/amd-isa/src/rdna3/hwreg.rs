//! The hardware registers `s_getreg_b32`, `s_setreg_b32` and `s_setreg_imm32_b32`
//! reach (gfx11 ids, named as LLVM's `hwreg(...)` spells them), as one compute wave of
//! the interpreter sees them.
//!
//! Field layouts: STATUS as the ROCm debugger (ROCdbgapi `architecture.cpp`, gfx11's
//! `register_type`) lists it; GPR_ALLOC.VGPR_SIZE (bits 19:12, VGPRs / 4 − 1) and
//! LDS_ALLOC.LDS_SIZE (bits 20:12, 256-byte units) as the gfx11 context-save handler
//! reads them (Linux `amdkfd/cwsr_trap_handler_gfx10.asm`, built for gfx11); HW_ID1 and
//! HW_ID2 as AMD's `embers` library decodes them on gfx11 (`amdgpu/hwid.h`);
//! SH_MEM_BASES as gfx9 and later keep the apertures' top 16 bits (private base 15:0,
//! shared base 31:16); SHADER_CYCLES is 20 bits wide (LLVM reads it with
//! `hwreg(HW_REG_SHADER_CYCLES, 0, 20)` on gfx11).
//!
//! gfx12 (RDNA4) renumbered and regrouped them ([`id12`], as LLVM 19 names them): SCC
//! moved from STATUS to STATE_PRIV (bit 9), STATUS gained VALID (16) and WAVE64 (29),
//! LDS_ALLOC counts 512-byte units, TRAPSTS became EXCP_FLAG_PRIV/EXCP_FLAG_USER and
//! TRAP_CTRL, FLAT_SCR became SCRATCH_BASE, and SHADER_CYCLES is 64 bits in two
//! registers. Field layouts from Linux 6.12's `gc_12_0_0_sh_mask.h`; the LDS unit and
//! the VGPR count (VGPR_SIZE + 1) × 4 as the gfx12 context-save handler reads them
//! (`amdkfd/cwsr_trap_handler_gfx12.asm`).

use std::fmt::Write as _;

use super::wave::{PRIVATE_APERTURE, SHARED_APERTURE, Wave};
use crate::error::Trap;

/// A generation's hardware register ids, named as LLVM 19's `hwreg(...)` names them:
/// a module of constants and its `name` of an id.
macro_rules! hw_regs {
    ($(#[$doc:meta])* $module:ident { $($name:ident = $id:literal,)* }) => {
        $(#[$doc])*
        pub(crate) mod $module {
            $(pub(crate) const $name: u16 = $id;)*

            /// LLVM's name of register `id`.
            pub(crate) fn name(id: u16) -> Option<&'static str> {
                match id {
                    $($id => Some(stringify!($name)),)*
                    _ => None,
                }
            }
        }
    };
}

hw_regs! {
    /// Hardware register ids on gfx11.
    id {
        HW_REG_MODE = 1,
        HW_REG_STATUS = 2,
        HW_REG_TRAPSTS = 3,
        HW_REG_GPR_ALLOC = 5,
        HW_REG_LDS_ALLOC = 6,
        HW_REG_IB_STS = 7,
        HW_REG_SH_MEM_BASES = 15,
        HW_REG_PERF_SNAPSHOT_PC_LO = 18,
        HW_REG_PERF_SNAPSHOT_PC_HI = 19,
        HW_REG_FLAT_SCR_LO = 20,
        HW_REG_FLAT_SCR_HI = 21,
        HW_REG_HW_ID1 = 23,
        HW_REG_HW_ID2 = 24,
        HW_REG_PERF_SNAPSHOT_DATA = 27,
        HW_REG_SHADER_CYCLES = 29,
    }
}

hw_regs! {
    /// Hardware register ids on gfx12.
    id12 {
        HW_REG_MODE = 1,
        HW_REG_STATUS = 2,
        HW_REG_STATE_PRIV = 4,
        HW_REG_GPR_ALLOC = 5,
        HW_REG_LDS_ALLOC = 6,
        HW_REG_IB_STS = 7,
        HW_REG_PERF_SNAPSHOT_DATA = 10,
        HW_REG_PERF_SNAPSHOT_PC_LO = 11,
        HW_REG_PERF_SNAPSHOT_PC_HI = 12,
        HW_REG_PERF_SNAPSHOT_DATA1 = 15,
        HW_REG_PERF_SNAPSHOT_DATA2 = 16,
        HW_REG_EXCP_FLAG_PRIV = 17,
        HW_REG_EXCP_FLAG_USER = 18,
        HW_REG_TRAP_CTRL = 19,
        HW_REG_SCRATCH_BASE_LO = 20,
        HW_REG_SCRATCH_BASE_HI = 21,
        HW_REG_HW_ID1 = 23,
        HW_REG_HW_ID2 = 24,
        HW_REG_SHADER_CYCLES_LO = 29,
        HW_REG_SHADER_CYCLES_HI = 30,
    }
}

/// Which generation's hardware registers an instruction reaches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Regs {
    Gfx11,
    Gfx12,
}

/// gfx12's STATUS.VALID and STATUS.WAVE64, and STATE_PRIV.SCC's place.
const STATUS12_VALID: u32 = 1 << 16;
const STATUS12_WAVE64: u32 = 1 << 29;
const STATE_PRIV_SCC_SHIFT: u32 = 9;

/// STATUS bits the interpreter knows: SCC, EXECZ (EXEC is 0), VCCZ (VCC is 0), IN_WG
/// (the workgroup has more than one wave). IN_BARRIER and HALT are 0 for a wave that
/// runs an instruction; the priorities, trap and debug bits are 0 (no trap handler).
const STATUS_SCC: u32 = 1;
const STATUS_EXECZ: u32 = 1 << 9;
const STATUS_VCCZ: u32 = 1 << 10;
const STATUS_IN_WG: u32 = 1 << 11;

/// GPR_ALLOC.VGPR_SIZE: bits 19:12.
const GPR_ALLOC_VGPR_SIZE_SHIFT: u32 = 12;
/// LDS_ALLOC.LDS_SIZE: bits 20:12, 9 bits.
const LDS_ALLOC_LDS_SIZE_SHIFT: u32 = 12;
const LDS_ALLOC_LDS_SIZE_MAX: u32 = 0x1ff;
/// HW_ID1.WAVE_ID: bits 4:0.
const HW_ID1_WAVE_ID_MASK: u32 = 0x1f;

/// The hardware register names of `regs` as LLVM 19 prints them in `hwreg(...)` (the
/// ids [`id`] and [`id12`] number).
pub(crate) fn hwreg_name(id: u32, regs: Regs) -> Option<&'static str> {
    let id = u16::try_from(id).ok()?;
    match regs {
        Regs::Gfx11 => id::name(id),
        Regs::Gfx12 => id12::name(id),
    }
}

/// `hwreg(...)` of a SOPK constant (id 5:0, offset 10:6, size − 1 15:11) as LLVM
/// prints it: the registers it knows by name, a whole-register field (offset 0, 32
/// bits) left out.
pub(crate) fn hwreg_text(out: &mut String, simm: u32, regs: Regs) {
    let (id, offset, size) = (simm & 0x3f, (simm >> 6) & 0x1f, ((simm >> 11) & 0x1f) + 1);
    let _ = match hwreg_name(id, regs) {
        Some(name) if (offset, size) == (0, 32) => write!(out, "hwreg({name})"),
        Some(name) => write!(out, "hwreg({name}, {offset}, {size})"),
        None => write!(out, "hwreg({id}, {offset}, {size})"),
    };
}

/// The bits of `hwreg(id, offset, size)`, as the SOPK constant encodes them (id 5:0,
/// offset 10:6, size − 1 15:11).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Field {
    pub(crate) id: u16,
    offset: u32,
    size: u32,
}

impl Field {
    pub(crate) fn from_simm16(simm: u16) -> Field {
        Field {
            id: simm & 0x3f,
            offset: u32::from((simm >> 6) & 0x1f),
            size: u32::from(simm >> 11) + 1,
        }
    }

    /// The field's bits in place (offset + size may pass bit 31: those bits are lost).
    fn mask(self) -> u32 {
        (((1u64 << self.size) - 1) << self.offset) as u32
    }
}

/// The whole 32 bits of hardware register `id` of `regs` for `w`; `clock` is the
/// real-time counter (100 MHz) SHADER_CYCLES shows.
fn read(w: &Wave, id: u16, regs: Regs, clock: impl Fn() -> u64) -> Result<u32, Trap> {
    match regs {
        Regs::Gfx11 => read11(w, id, clock),
        Regs::Gfx12 => read12(w, id, clock),
    }
}

/// The wave's STATUS bits gfx11 and gfx12 both have: EXECZ, VCCZ, IN_WG.
fn status_common(w: &Wave) -> u32 {
    let mut s = 0;
    if w.exec_all() == 0 {
        s |= STATUS_EXECZ;
    }
    if w.vcc_all() == 0 {
        s |= STATUS_VCCZ;
    }
    if w.place.waves > 1 {
        s |= STATUS_IN_WG;
    }
    s
}

/// A performance snapshot register: the interpreter takes none.
fn snapshot(id: u16) -> Trap {
    format!("hardware register {id} (a performance snapshot) is not implemented: the interpreter takes none").into()
}

/// VGPRs in units of 4, minus one (GPR_ALLOC.VGPR_SIZE); the interpreter gives every
/// wave of a dispatch the same VGPRs from 0 (VGPR_BASE 0), and SGPRs are not
/// allocated.
fn gpr_alloc(w: &Wave) -> u32 {
    let quads = (w.v.len() as u32).div_ceil(4).max(1);
    (quads - 1) << GPR_ALLOC_VGPR_SIZE_SHIFT
}

/// gfx12's registers ([`id12`]).
fn read12(w: &Wave, id: u16, clock: impl Fn() -> u64) -> Result<u32, Trap> {
    use id12::*;
    Ok(match id {
        HW_REG_MODE => w.mode,
        HW_REG_STATUS => status_common(w) | STATUS12_VALID | if w.wave64 { STATUS12_WAVE64 } else { 0 },
        // SCC; the barrier, priority, halt and debug bits 0 (a running wave between
        // barriers, no trap handler).
        HW_REG_STATE_PRIV => u32::from(w.scc) << STATE_PRIV_SCC_SHIFT,
        HW_REG_GPR_ALLOC => gpr_alloc(w),
        HW_REG_LDS_ALLOC => w.place.lds_bytes.div_ceil(512).min(LDS_ALLOC_LDS_SIZE_MAX) << LDS_ALLOC_LDS_SIZE_SHIFT,
        // Nothing outstanding (memory operations complete as they issue), no exception
        // raised (the interpreter keeps no exception flags), no trap enabled.
        HW_REG_IB_STS | HW_REG_EXCP_FLAG_PRIV | HW_REG_EXCP_FLAG_USER | HW_REG_TRAP_CTRL => 0,
        // Private memory is the interpreter's own (per lane): no scratch base address.
        HW_REG_SCRATCH_BASE_LO | HW_REG_SCRATCH_BASE_HI => 0,
        HW_REG_HW_ID1 => w.place.wave & HW_ID1_WAVE_ID_MASK,
        HW_REG_HW_ID2 => 0,
        HW_REG_SHADER_CYCLES_LO => clock() as u32,
        HW_REG_SHADER_CYCLES_HI => (clock() >> 32) as u32,
        HW_REG_PERF_SNAPSHOT_DATA
        | HW_REG_PERF_SNAPSHOT_PC_LO
        | HW_REG_PERF_SNAPSHOT_PC_HI
        | HW_REG_PERF_SNAPSHOT_DATA1
        | HW_REG_PERF_SNAPSHOT_DATA2 => return Err(snapshot(id)),
        _ => return Err(format!("hardware register {id} is not a gfx12 hardware register").into()),
    })
}

/// gfx11's registers ([`id`]).
fn read11(w: &Wave, id: u16, clock: impl Fn() -> u64) -> Result<u32, Trap> {
    use id::*;
    Ok(match id {
        HW_REG_MODE => w.mode,
        HW_REG_STATUS => status_common(w) | if w.scc { STATUS_SCC } else { 0 },
        // No exception is ever raised, and memory operations complete as they issue
        // (IB_STS holds the outstanding counters).
        HW_REG_TRAPSTS | HW_REG_IB_STS => 0,
        HW_REG_GPR_ALLOC => gpr_alloc(w),
        HW_REG_LDS_ALLOC => w.place.lds_bytes.div_ceil(256).min(LDS_ALLOC_LDS_SIZE_MAX) << LDS_ALLOC_LDS_SIZE_SHIFT,
        HW_REG_SH_MEM_BASES => ((SHARED_APERTURE >> 48) << 16 | PRIVATE_APERTURE >> 48) as u32,
        // Private memory is the interpreter's own (per lane), not an address in
        // memory: no flat scratch base.
        HW_REG_FLAT_SCR_LO | HW_REG_FLAT_SCR_HI => 0,
        // The wave's number within its workgroup; SIMD, WGP, SA and SE 0 (one unit runs
        // every workgroup).
        HW_REG_HW_ID1 => w.place.wave & HW_ID1_WAVE_ID_MASK,
        // Queue, pipe, micro-engine, workgroup slot and VMID: 0.
        HW_REG_HW_ID2 => 0,
        HW_REG_SHADER_CYCLES => (clock() & 0xf_ffff) as u32,
        HW_REG_PERF_SNAPSHOT_PC_LO | HW_REG_PERF_SNAPSHOT_PC_HI | HW_REG_PERF_SNAPSHOT_DATA => {
            return Err(snapshot(id));
        }
        _ => return Err(format!("hardware register {id} is not a gfx11 hardware register").into()),
    })
}

/// `s_getreg_b32`: the field's bits, shifted down.
pub(crate) fn getreg(w: &Wave, f: Field, regs: Regs, clock: impl Fn() -> u64) -> Result<u32, Trap> {
    Ok((read(w, f.id, regs, clock)? & f.mask()) >> f.offset)
}

/// `s_setreg_b32` / `s_setreg_imm32_b32` of `v` into the field of `regs`' register.
///
/// MODE takes the bits. The registers a user-mode wave cannot write ignore the write,
/// as the hardware does: gfx11's STATUS (its writable bits need the privileged mode of
/// a trap handler; EXECZ and VCCZ follow EXEC and VCC only), GPR_ALLOC, LDS_ALLOC,
/// IB_STS, FLAT_SCR_LO/HI, HW_ID1/2, SH_MEM_BASES and SHADER_CYCLES; gfx12's STATUS,
/// STATE_PRIV, GPR_ALLOC, LDS_ALLOC, IB_STS, EXCP_FLAG_PRIV, SCRATCH_BASE, HW_ID1/2 and
/// SHADER_CYCLES. The exception registers (gfx11's TRAPSTS, gfx12's EXCP_FLAG_USER and
/// TRAP_CTRL) may be written with zeros (clearing flags no exception set, enabling no
/// trap); setting one of their bits, which raises an exception or arms a trap, is
/// refused.
pub(crate) fn setreg(w: &mut Wave, f: Field, v: u32, what: &str, regs: Regs) -> Result<(), Trap> {
    let bits = (v << f.offset) & f.mask();
    let ignored = match (regs, f.id) {
        (_, 1) => {
            // MODE is register 1 on both.
            w.mode = (w.mode & !f.mask()) | bits;
            return Ok(());
        }
        (Regs::Gfx11, id) => {
            use id::*;
            match id {
                HW_REG_TRAPSTS => Some(false),
                HW_REG_STATUS | HW_REG_GPR_ALLOC | HW_REG_LDS_ALLOC | HW_REG_IB_STS | HW_REG_FLAT_SCR_LO
                | HW_REG_FLAT_SCR_HI | HW_REG_HW_ID1 | HW_REG_HW_ID2 | HW_REG_SH_MEM_BASES | HW_REG_SHADER_CYCLES => {
                    Some(true)
                }
                _ => None,
            }
        }
        (Regs::Gfx12, id) => {
            use id12::*;
            match id {
                HW_REG_EXCP_FLAG_USER | HW_REG_TRAP_CTRL => Some(false),
                HW_REG_STATUS
                | HW_REG_STATE_PRIV
                | HW_REG_GPR_ALLOC
                | HW_REG_LDS_ALLOC
                | HW_REG_IB_STS
                | HW_REG_EXCP_FLAG_PRIV
                | HW_REG_SCRATCH_BASE_LO
                | HW_REG_SCRATCH_BASE_HI
                | HW_REG_HW_ID1
                | HW_REG_HW_ID2
                | HW_REG_SHADER_CYCLES_LO
                | HW_REG_SHADER_CYCLES_HI => Some(true),
                _ => None,
            }
        }
    };
    match ignored {
        Some(true) => Ok(()),
        // An exception register: zeros change nothing.
        Some(false) if bits == 0 => Ok(()),
        Some(false) => Err(format!(
            "{what} of {} bits {bits:#x}: raising exceptions or arming traps is not implemented (no trap handler runs)",
            hwreg_name(u32::from(f.id), regs).unwrap_or("an exception register")
        )
        .into()),
        None => {
            // The same refusal a read gives (unknown id, performance snapshots).
            read(w, f.id, regs, || 0)?;
            Err(format!("{what} of hardware register {} is not implemented", f.id).into())
        }
    }
}

#[cfg(test)]
mod tests {
    //! Encodings from `llvm-mc-19 -arch=amdgcn -mcpu=gfx1100 -show-encoding`.
    use super::*;
    use crate::rdna3::testing::{run, run_all, xorshift32};
    use crate::rdna3::wave::{EXEC_LO, VCC_LO};
    use crate::rdna3::wave::{MODE_DENORM, Place};

    /// `s_getreg_b32 s2, hwreg(id)` (the whole register).
    fn getreg_all(id: u32) -> [u32; 1] {
        [0xb882_f800 | id]
    }

    #[test]
    fn status_follows_scc_exec_vcc_and_the_workgroup() {
        let status = |setup: fn(&mut Wave)| run(&getreg_all(2), setup).unwrap().s[2];
        // EXEC all on, VCC 0, SCC clear, one wave.
        assert_eq!(status(|_| {}), STATUS_VCCZ);
        assert_eq!(
            status(|w| {
                w.scc = true;
                w.s[VCC_LO] = 1;
                w.place.waves = 4;
            }),
            STATUS_SCC | STATUS_IN_WG
        );
        // s_getreg_b32 s2, hwreg(HW_REG_STATUS, 9, 2): EXECZ and VCCZ alone.
        let w = run(&[0xb882_0a42], |w| w.s[EXEC_LO] = 0).unwrap();
        assert_eq!(w.s[2], 0b11);
        // The read leaves SCC alone.
        assert!(run(&getreg_all(2), |w| w.scc = true).unwrap().scc);
    }

    #[test]
    fn allocations_and_ids_come_from_the_dispatch() {
        let mut next = xorshift32(0x5eed);
        for _ in 0..20 {
            // A dispatch's VGPRs are 8 to 256 in steps of 8; LDS in 512-byte blocks.
            let vgprs = 8 * (next() % 32 + 1) as usize;
            let lds = 512 * (next() % 129);
            let wave = next() % 32;
            let setup = |w: &mut Wave| {
                w.v.resize(vgprs, crate::rdna3::VgprRow::default());
                w.place = Place {
                    wave,
                    waves: 32,
                    lds_bytes: lds,
                    acc_base: 0,
                };
            };
            // s_getreg_b32 s2, hwreg(HW_REG_GPR_ALLOC, 12, 8): VGPRs / 4 - 1.
            let w = run(&[0xb882_3b05], setup).unwrap();
            assert_eq!((w.s[2] as usize + 1) * 4, vgprs);
            // s_getreg_b32 s2, hwreg(HW_REG_LDS_ALLOC, 12, 9): 256-byte units.
            let w = run(&[0xb882_4306], setup).unwrap();
            assert_eq!(w.s[2] * 256, lds);
            // s_getreg_b32 s2, hwreg(HW_REG_HW_ID1, 0, 5): the wave in its workgroup.
            let w = run(&[0xb882_2017], setup).unwrap();
            assert_eq!(w.s[2], wave);
        }
        assert_eq!(run(&getreg_all(24), |_| {}).unwrap().s[2], 0, "HW_ID2");
    }

    #[test]
    fn apertures_clock_and_the_zero_registers() {
        // SH_MEM_BASES: each aperture's bits 63:48, private low, shared high.
        let w = run(&getreg_all(15), |_| {}).unwrap();
        assert_eq!(u64::from(w.s[2] & 0xffff) << 48, PRIVATE_APERTURE);
        assert_eq!(u64::from(w.s[2] >> 16) << 48, SHARED_APERTURE);
        // TRAPSTS, IB_STS, FLAT_SCR_LO/HI: 0 (registers preset to garbage).
        for id in [3, 7, 20, 21] {
            assert_eq!(run(&getreg_all(id), |w| w.s[2] = 0xdead).unwrap().s[2], 0, "hwreg {id}");
        }
        // SHADER_CYCLES: 20 bits of the clock; a clock that moves.
        let w = Wave::new(8, 0);
        let cycles = |t| getreg(&w, Field::from_simm16(0xf81d), Regs::Gfx11, move || t).unwrap();
        assert_eq!(cycles(0x1234_5678), 0x4_5678);
        let t0 = run(&getreg_all(29), |_| {}).unwrap().s[2];
        std::thread::sleep(std::time::Duration::from_millis(1));
        let t1 = run(&getreg_all(29), |_| {}).unwrap().s[2];
        assert!(t0 < 1 << 20 && t1 < 1 << 20);
        assert_ne!(t0, t1, "1 ms is 100,000 counts");
    }

    #[test]
    fn writes_mode_or_are_ignored_or_refused() {
        // s_setreg_imm32_b32 hwreg(HW_REG_MODE, 4, 4), 0xa; s_getreg_b32 s2, hwreg(HW_REG_MODE)
        let w = run_all(&[&[0xb980_1901, 0xa], &getreg_all(1)], |_| {}).unwrap();
        assert_eq!(w.s[2], (MODE_DENORM & !0xf0) | 0xa0);
        // s_setreg_b32 hwreg(HW_REG_STATUS), s3 then a read: ignored, SCC kept clear.
        let w = run_all(&[&[0xb903_f802], &getreg_all(2)], |w| w.s[3] = u32::MAX).unwrap();
        assert_eq!((w.s[2], w.scc), (STATUS_VCCZ, false));
        // s_setreg_b32 hwreg(HW_REG_HW_ID1), s3: ignored.
        let w = run_all(&[&[0xb903_f817], &getreg_all(23)], |w| {
            w.s[3] = 7;
            w.place.wave = 2;
        })
        .unwrap();
        assert_eq!(w.s[2], 2);
        // s_setreg_imm32_b32 hwreg(HW_REG_TRAPSTS), 0: nothing set, nothing to do; a
        // set bit would raise an exception.
        run(&[0xb980_f803, 0], |_| {}).unwrap();
        let e = run(&[0xb980_f803, 0x100], |_| {}).err().unwrap_or_default();
        assert!(e.contains("s_setreg_imm32_b32") && e.contains("TRAPSTS"), "{e}");
        // Unknown ids and performance snapshots: errors naming the id.
        let e = run(&getreg_all(4), |_| {}).err().unwrap_or_default();
        assert!(e.contains("hardware register 4"), "{e}");
        let e = run(&[0xb903_f804], |_| {}).err().unwrap_or_default();
        assert!(e.contains("hardware register 4"), "{e}");
        assert!(
            run(&getreg_all(18), |_| {})
                .err()
                .unwrap_or_default()
                .contains("snapshot")
        );
    }

    #[test]
    fn fields_wider_than_the_register_top() {
        // offset 28, size 8: the top 4 bits; the rest of the field is 0.
        let f = Field::from_simm16(28 << 6 | 7 << 11 | 1);
        let mut w = Wave::new(8, 0);
        w.mode = 0xf000_0000;
        assert_eq!(getreg(&w, f, Regs::Gfx11, || 0).unwrap(), 0xf);
        setreg(&mut w, f, 0xa5, "s_setreg_b32", Regs::Gfx11).unwrap();
        assert_eq!(w.mode, 0x5000_0000);
    }
}
