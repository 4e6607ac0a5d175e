//! The SMU (MP1 13.0.0) message interface: the driver clears the response register
//! (`C2PMSG_90`), writes the argument (`C2PMSG_82`) and then the message
//! (`C2PMSG_66`); the SMU answers in `C2PMSG_90` (`PPSMC_Result_*`) and may return a
//! value in `C2PMSG_82`.

use std::ops::Range;

use super::model::Vram;
use super::regs::generated::{mp, smu};
use super::regs::{AmReg, Effect, RegisterBlock, Values};

/// What GetSmuVersion answers (PMFW 78.72.0).
pub const SMU_VERSION: u32 = 0x004e_4800;
/// DPM levels each clock reports to GetDpmFreqByIndex, in MHz.
pub const DPM_LEVELS_MHZ: [u32; 3] = [500, 1500, 2500];

/// One message the SMU received.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SmuMessage {
    /// `PPSMC_MSG_*`.
    pub msg: u32,
    /// The argument.
    pub arg: u32,
    /// The response written (0 if it did not answer).
    pub response: u32,
}

/// The SMU's model.
#[derive(Debug)]
pub struct Smu {
    msg: u32,
    arg: u32,
    resp: u32,
    /// Messages in order.
    pub messages: Vec<SmuMessage>,
    /// The driver table's address (SetDriverDramAddrHigh/Low).
    pub driver_table: u64,
    /// The tools table's address (SetToolsDramAddrHigh/Low).
    pub tools_table: u64,
    /// Whether EnableAllSmuFeatures ran.
    pub features_enabled: bool,
    /// Fault injection: the SMU does not answer (the response register stays 0).
    pub unresponsive: bool,
}

impl Smu {
    pub(crate) fn new(addr: impl Fn(AmReg) -> Option<u32>) -> Option<Self> {
        Some(Smu {
            msg: addr(mp::MP1_SMN_C2PMSG_66)?,
            arg: addr(mp::MP1_SMN_C2PMSG_82)?,
            resp: addr(mp::MP1_SMN_C2PMSG_90)?,
            messages: Vec::new(),
            driver_table: 0,
            tools_table: 0,
            features_enabled: false,
            unresponsive: false,
        })
    }

    pub(crate) fn range(&self) -> Range<u32> {
        let lo = self.msg.min(self.arg).min(self.resp);
        let hi = self.msg.max(self.arg).max(self.resp).saturating_add(1);
        lo..hi
    }

    fn answer(&mut self, msg: u32, arg: u32) -> (u32, Option<u32>, Effect) {
        let set_hi = |t: &mut u64| *t = (*t & 0xffff_ffff) | u64::from(arg) << 32;
        let set_lo = |t: &mut u64| *t = (*t & !0xffff_ffff) | u64::from(arg);
        match msg {
            smu::PPSMC_MSG_TestMessage => (smu::PPSMC_Result_OK, Some(arg.wrapping_add(1)), Effect::None),
            smu::PPSMC_MSG_GetSmuVersion => (smu::PPSMC_Result_OK, Some(SMU_VERSION), Effect::None),
            smu::PPSMC_MSG_SetDriverDramAddrHigh => {
                set_hi(&mut self.driver_table);
                (smu::PPSMC_Result_OK, None, Effect::None)
            }
            smu::PPSMC_MSG_SetDriverDramAddrLow => {
                set_lo(&mut self.driver_table);
                (smu::PPSMC_Result_OK, None, Effect::None)
            }
            smu::PPSMC_MSG_SetToolsDramAddrHigh => {
                set_hi(&mut self.tools_table);
                (smu::PPSMC_Result_OK, None, Effect::None)
            }
            smu::PPSMC_MSG_SetToolsDramAddrLow => {
                set_lo(&mut self.tools_table);
                (smu::PPSMC_Result_OK, None, Effect::None)
            }
            smu::PPSMC_MSG_EnableAllSmuFeatures => {
                self.features_enabled = true;
                (smu::PPSMC_Result_OK, None, Effect::None)
            }
            smu::PPSMC_MSG_GetDpmFreqByIndex => {
                let idx = arg & 0xffff;
                let value = if idx == 0xff {
                    DPM_LEVELS_MHZ.len() as u32
                } else {
                    match DPM_LEVELS_MHZ.get(idx as usize) {
                        Some(&f) => f,
                        None => return (smu::PPSMC_Result_Failed, None, Effect::None),
                    }
                };
                (smu::PPSMC_Result_OK, Some(value), Effect::None)
            }
            smu::PPSMC_MSG_SetSoftMinByFreq
            | smu::PPSMC_MSG_SetSoftMaxByFreq
            | smu::PPSMC_MSG_TransferTableSmu2Dram
            | smu::PPSMC_MSG_PowerUpVcn
            | smu::PPSMC_MSG_PowerDownVcn
            | smu::PPSMC_MSG_PowerUpJpeg
            | smu::PPSMC_MSG_PowerDownJpeg
            | smu::PPSMC_MSG_PowerUpUmsch
            | smu::PPSMC_MSG_PowerDownUmsch => (smu::PPSMC_Result_OK, None, Effect::None),
            smu::PPSMC_MSG_Mode1Reset => (smu::PPSMC_Result_OK, None, Effect::Mode1Reset),
            _ => (smu::PPSMC_Result_UnknownCmd, None, Effect::None),
        }
    }
}

impl RegisterBlock for Smu {
    fn write(&mut self, v: &mut Values, _vram: Option<&Vram>, reg: u32, value: u32) -> Effect {
        if reg != self.msg {
            return Effect::None;
        }
        let arg = v.get(self.arg);
        if self.unresponsive {
            self.messages.push(SmuMessage {
                msg: value,
                arg,
                response: 0,
            });
            return Effect::None;
        }
        let (response, out, effect) = self.answer(value, arg);
        self.messages.push(SmuMessage {
            msg: value,
            arg,
            response,
        });
        if let Some(o) = out {
            v.set(self.arg, o);
        }
        v.set(self.resp, response);
        effect
    }

    fn reset(&mut self, v: &mut Values) {
        // Idle after power-on: the last response reads OK.
        v.set(self.resp, smu::PPSMC_Result_OK);
        self.messages.clear();
        self.driver_table = 0;
        self.tools_table = 0;
        self.features_enabled = false;
    }

    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        self
    }
}
