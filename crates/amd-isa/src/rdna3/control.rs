//! Program control: branches, the end of the program, barriers, SOPP's mode
//! settings, traps, halts and hints (SOPP), and calls and jumps through registers
//! (`s_call_b64`, `s_getpc_b64`, `s_setpc_b64`, `s_swappc_b64`), matched by the ISA's
//! names (`opcodes`).

use super::decode::{Encoding, Inst};
use super::exec::{Flow, R};
use super::fields as fld;
use super::opcodes::{Sop1, Sopp};
use super::salu::missing;
use super::wave::{MODE_DENORM, MODE_ROUND, Wave};

/// Program control: branches, the end, barriers, modes and hints. (Inlined into
/// `step`, as it was before its mode arms changed: a call here costs a dispatch-heavy
/// kernel about 1 % of its instructions.)
#[inline]
pub(crate) fn sopp(w: &mut Wave, i: &Inst) -> R<Flow> {
    use Sopp::*;
    if let Some(c) = Control::of(i) {
        return Ok(c.run(w));
    }
    let imm = fld::sopp::SIMM16.signed(&i.words()) as i16;
    match Sopp::from_op(i.op) {
        Some(op) if is_hint(op) => Ok(Flow::Next),
        // Bits 1:0 f32, 3:2 f16/f64: MODE's round field (`rounding` says what runs in
        // a directed mode).
        Some(S_ROUND_MODE) => {
            w.mode = (w.mode & !MODE_ROUND) | (imm as u32 & 0xf);
            Ok(Flow::Next)
        }
        // Bits 1:0 f32, 3:2 f16/f64: MODE's denormal field.
        Some(S_DENORM_MODE) => {
            w.mode = (w.mode & !MODE_DENORM) | (imm as u32 & 0xf) << 4;
            Ok(Flow::Next)
        }
        // MSG_DEALLOC_VGPRS and friends: nothing to do.
        Some(S_SENDMSG) => Ok(Flow::Next),
        Some(S_BARRIER) => Ok(Flow::Barrier),
        _ => sopp_rest(i),
    }
}

/// A branch or the program's end (SOPP), decoded once: what the scheduler's loop runs
/// without going through [`sopp`] (which runs the same, for the lane-by-lane path).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Control {
    /// A jump by this many dwords (from the next instruction) where the condition
    /// holds.
    Branch(Cond, i16),
    /// `s_endpgm`.
    End,
}

/// What a SOPP branch tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Cond {
    /// `s_branch`.
    Always,
    Scc0,
    Scc1,
    Vccz,
    Vccnz,
    Execz,
    Execnz,
}

impl Control {
    /// Instruction `i` as a branch or the end, if it is one.
    pub(crate) fn of(i: &Inst) -> Option<Control> {
        use Sopp::*;
        if i.enc != Encoding::Sopp {
            return None;
        }
        let imm = fld::sopp::SIMM16.signed(&i.words()) as i16;
        let branch = |c| Some(Control::Branch(c, imm));
        match Sopp::from_op(i.op)? {
            S_BRANCH => branch(Cond::Always),
            S_CBRANCH_SCC0 => branch(Cond::Scc0),
            S_CBRANCH_SCC1 => branch(Cond::Scc1),
            S_CBRANCH_VCCZ => branch(Cond::Vccz),
            S_CBRANCH_VCCNZ => branch(Cond::Vccnz),
            S_CBRANCH_EXECZ => branch(Cond::Execz),
            S_CBRANCH_EXECNZ => branch(Cond::Execnz),
            S_ENDPGM => Some(Control::End),
            _ => None,
        }
    }

    /// Where the wave goes.
    #[inline(always)]
    pub(crate) fn run(self, w: &Wave) -> Flow {
        let (cond, imm) = match self {
            Control::End => return Flow::End,
            Control::Branch(c, imm) => (c, imm),
        };
        let taken = match cond {
            Cond::Always => true,
            Cond::Scc0 => !w.scc,
            Cond::Scc1 => w.scc,
            Cond::Vccz => w.vcc_all() == 0,
            Cond::Vccnz => w.vcc_all() != 0,
            Cond::Execz => w.exec_all() == 0,
            Cond::Execnz => w.exec_all() != 0,
        };
        if taken { Flow::Jump(imm) } else { Flow::Next }
    }
}

/// Ordering and scheduling hints, which change nothing here: the interpreter runs each
/// instruction to completion.
fn is_hint(op: Sopp) -> bool {
    use Sopp::*;
    matches!(
        op,
        S_NOP | S_SET_INST_PREFETCH_DISTANCE | S_CLAUSE | S_DELAY_ALU | S_WAITCNT_DEPCTR | S_WAITCNT | S_CODE_END
    )
}

/// Whether SOPP opcode `op` is an ordering or scheduling hint (nothing to run).
pub(crate) fn hint(op: u16) -> bool {
    Sopp::from_op(op).is_some_and(is_hint)
}

/// SOPP hints, no-ops, traps and halts.
fn sopp_rest(i: &Inst) -> R<Flow> {
    use Sopp::*;
    let op = Sopp::from_op(i.op).ok_or_else(|| missing(i, "no such opcode"))?;
    match op {
        // Priority, sleep, performance levels, trace data, instruction-cache
        // invalidation and wake-ups: hints and timing with no effect on results here
        // (code is never modified while a dispatch runs).
        S_SLEEP | S_SETPRIO | S_INCPERFLEVEL | S_DECPERFLEVEL | S_TTRACEDATA | S_TTRACEDATA_IMM | S_ICACHE_INV
        | S_WAKEUP | S_WAIT_IDLE | S_SETKILL => Ok(Flow::Next),
        // Debugger branches: no debugger is attached.
        S_CBRANCH_CDBGSYS | S_CBRANCH_CDBGUSER | S_CBRANCH_CDBGSYS_OR_USER | S_CBRANCH_CDBGSYS_AND_USER => {
            Ok(Flow::Next)
        }
        S_TRAP => Err(format!(
            "s_trap {}: the kernel raised a trap (the interpreter runs no trap handler)",
            fld::sopp::SIMM16.get(&i.words()) & 0xff
        )
        .into()),
        S_SETHALT if fld::sopp::SIMM16.get(&i.words()) & 1 == 1 => Err("s_sethalt 1: the wave halted itself".into()),
        S_SENDMSGHALT => Err("s_sendmsghalt: the wave sent a message and halted itself".into()),
        // Events are exports becoming ready: none in a compute wave.
        S_WAIT_EVENT => Ok(Flow::Next),
        S_SETHALT => Ok(Flow::Next),
        other => Err(missing(i, other.name())),
    }
}

/// `s_call_b64 sdst, simm16`: the return address (the next instruction) to `sdst`,
/// then a branch by `simm16` dwords.
pub(crate) fn call(w: &mut Wave, i: &Inst) -> R<Flow> {
    let iw = i.words();
    w.swrite64(fld::sopk::SDST.index(&iw), w.pc + 4)?;
    Ok(Flow::Jump(fld::sopk::SIMM16.signed(&iw) as i16))
}

/// `s_getpc_b64 sdst` (the next instruction's address to `sdst`), `s_setpc_b64 ssrc`
/// (a jump to `ssrc`) and `s_swappc_b64 sdst, ssrc` (both).
pub(crate) fn pc(w: &mut Wave, op: Sop1, d: usize, s: u16) -> R<Flow> {
    match op {
        Sop1::S_GETPC_B64 => w.swrite64(d, w.pc + 4).map(|_| Flow::Next),
        Sop1::S_SETPC_B64 => Ok(Flow::Goto(w.sread64(s, None)?)),
        Sop1::S_SWAPPC_B64 => {
            let to = w.sread64(s, None)?;
            w.swrite64(d, w.pc + 4)?;
            Ok(Flow::Goto(to))
        }
        other => Err(format!("{} is not a jump through registers", other.name()).into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rdna3::testing::run;

    #[test]
    fn hints_traps_and_halts() {
        // s_sleep 1: nothing to do
        run(&[0xbf83_0001], |_| {}).unwrap();
        // s_trap 2 and s_sethalt 1 stop the wave with what happened.
        assert!(run(&[0xbf90_0002], |_| {}).err().is_some_and(|e| e.contains("trap")));
        assert!(run(&[0xbf82_0001], |_| {}).err().is_some_and(|e| e.contains("halt")));
        // s_sendmsghalt stops the wave; s_wait_event 0 has nothing to wait for.
        assert!(run(&[0xbfb7_0001], |_| {}).err().is_some_and(|e| e.contains("halted")));
        run(&[0xbf8b_0000], |_| {}).unwrap();
    }

    /// Each branch is taken exactly where its condition holds (SCC, VCC and EXEC zero
    /// or not, a wave64's high halves counting), by the amount it says, and
    /// `s_endpgm` ends the wave.
    #[test]
    fn branches_go_where_their_conditions_say() {
        use crate::rdna3::opcodes::op::sopp::*;
        use crate::rdna3::wave::{EXEC_LO, VCC_LO};
        // Whether the branch is taken, from SCC, VCC and EXEC.
        type Holds = fn(bool, u64, u64) -> bool;
        let cases: [(u16, Holds); 7] = [
            (S_BRANCH, |_, _, _| true),
            (S_CBRANCH_SCC0, |scc, _, _| !scc),
            (S_CBRANCH_SCC1, |scc, _, _| scc),
            (S_CBRANCH_VCCZ, |_, vcc, _| vcc == 0),
            (S_CBRANCH_VCCNZ, |_, vcc, _| vcc != 0),
            (S_CBRANCH_EXECZ, |_, _, exec| exec == 0),
            (S_CBRANCH_EXECNZ, |_, _, exec| exec != 0),
        ];
        for (op, holds) in cases {
            // A jump back by 3 dwords.
            let i = Inst::decode(&[0xbf80_0000 | u32::from(op) << 16 | 0xfffd]).unwrap();
            let c = Control::of(&i).expect("a branch");
            for (wave64, scc, vcc, exec) in [
                (false, false, 0, 0),
                (false, true, 1, 1),
                (false, false, 0, 0x8000_0000),
                (true, true, 1 << 40, 0),
                (true, false, 0, 1 << 63),
                (true, true, 0, 0),
            ] {
                let mut w = Wave::new(8, 0x1000);
                w.wave64 = wave64;
                w.scc = scc;
                w.s[VCC_LO] = vcc as u32;
                w.s[VCC_LO + 1] = (vcc >> 32) as u32;
                w.s[EXEC_LO] = exec as u32;
                w.s[EXEC_LO + 1] = (exec >> 32) as u32;
                let want = if holds(scc, vcc, exec) {
                    Flow::Jump(-3)
                } else {
                    Flow::Next
                };
                assert_eq!(
                    c.run(&w),
                    want,
                    "op {op} wave64 {wave64} scc {scc} vcc {vcc:#x} exec {exec:#x}"
                );
                assert_eq!(sopp(&mut w, &i), Ok(want), "op {op}, through step");
            }
        }
        let end = Inst::decode(&[0xbf80_0000 | u32::from(S_ENDPGM) << 16]).unwrap();
        assert_eq!(Control::of(&end), Some(Control::End));
        assert_eq!(Control::End.run(&Wave::new(8, 0)), Flow::End);
        // Anything else is not one.
        assert_eq!(Control::of(&Inst::decode(&[0xbf83_0001]).unwrap()), None);
    }

    #[test]
    fn calls() {
        // s_call_b64 s[2:3], 4: the return address, and a jump of 4 dwords.
        let i = Inst::decode(&[0xba02_0004]).unwrap();
        let mut w = Wave::new(8, 0x1000);
        assert!(matches!(call(&mut w, &i), Ok(Flow::Jump(4))));
        assert_eq!(u64::from(w.s[2]) | u64::from(w.s[3]) << 32, 0x1004);
    }
}
