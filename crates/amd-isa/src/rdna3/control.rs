//! Program control: branches, the end of the program, barriers, SOPP's mode
//! settings, traps, halts and hints (SOPP), and calls and jumps through registers
//! (`s_call_b64`, `s_getpc_b64`, `s_setpc_b64`, `s_swappc_b64`), matched by the ISA's
//! names (`opcodes`).

use super::decode::Inst;
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
    let imm = fld::sopp::SIMM16.signed(&i.words()) as i16;
    let taken = |c: bool| Ok(if c { Flow::Jump(imm) } else { Flow::Next });
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
        Some(S_BRANCH) => Ok(Flow::Jump(imm)),
        Some(S_CBRANCH_SCC0) => taken(!w.scc),
        Some(S_CBRANCH_SCC1) => taken(w.scc),
        Some(S_CBRANCH_VCCZ) => taken(w.vcc_all() == 0),
        Some(S_CBRANCH_VCCNZ) => taken(w.vcc_all() != 0),
        Some(S_CBRANCH_EXECZ) => taken(w.exec_all() == 0),
        Some(S_CBRANCH_EXECNZ) => taken(w.exec_all() != 0),
        Some(S_ENDPGM) => Ok(Flow::End),
        // MSG_DEALLOC_VGPRS and friends: nothing to do.
        Some(S_SENDMSG) => Ok(Flow::Next),
        Some(S_BARRIER) => Ok(Flow::Barrier),
        _ => sopp_rest(i),
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

    #[test]
    fn calls() {
        // s_call_b64 s[2:3], 4: the return address, and a jump of 4 dwords.
        let i = Inst::decode(&[0xba02_0004]).unwrap();
        let mut w = Wave::new(8, 0x1000);
        assert!(matches!(call(&mut w, &i), Ok(Flow::Jump(4))));
        assert_eq!(u64::from(w.s[2]) | u64::from(w.s[3]) << 32, 0x1004);
    }
}
