//! The SMU (MP1 13.0.0) message interface: the driver clears the response register
//! (`C2PMSG_90`), writes the argument (`C2PMSG_82`) and then the message
//! (`C2PMSG_66`); the SMU answers in `C2PMSG_90` (`PPSMC_Result_*`) and may return a
//! value in `C2PMSG_82`.
//!
//! TransferTableSmu2Dram with `TABLE_SMU_METRICS` writes a `SmuMetricsExternal_t`
//! (layout generated from `smu13_driver_if_v13_0_0.h`) at the driver table's address
//! (SetDriverDramAddrHigh/Low, a memory-controller address in VRAM): the current
//! clocks (each clock's soft maximum, else its top DPM level), the GFX and memory
//! clock averages, the temperatures and socket power of [`Smu::sensors`], and a
//! metrics counter that grows by one per transfer. Other tables, or a driver table
//! outside VRAM, answer `PPSMC_Result_Failed`.
//!
//! The debug mailbox (message `C2PMSG_75`, argument `_53`, response `_54`) takes
//! `DEBUGSMC_MSG_Mode1Reset` (2), as tinygrad 0.14 sends it on MP1 13.0.0 and 14.x;
//! SMU 14 (MP1 14.x, gfx1201: its registers at the places `mp_14_0_2_offset.h` gives)
//! has no `PPSMC_MSG_Mode1Reset` on the normal mailbox and answers it
//! `PPSMC_Result_UnknownCmd`. Its metrics table keeps SMU 13's layout: a limit of the
//! mock, which the driverless transport reads the same way.

use std::ops::Range;

use super::block::Vram;
use super::block::generated::{mp, smu, smu_if, smu_metrics, smu_metrics_external};
use super::block::{AmReg, CField, Effect, RegisterBlock, Values};

/// What GetSmuVersion answers (PMFW 78.72.0).
pub const SMU_VERSION: u32 = 0x004e_4800;
/// `DEBUGSMC_MSG_Mode1Reset`: the debug mailbox's mode1 reset.
pub const DEBUGSMC_MSG_MODE1_RESET: u32 = smu::DEBUGSMC_MSG_Mode1Reset;
/// Marks a [`SmuMessage`] received on the debug mailbox (`msg` is this | the
/// message).
pub const DEBUG_MESSAGE: u32 = 0x8000_0000;
/// DPM levels each clock reports to GetDpmFreqByIndex, in MHz.
pub const DPM_LEVELS_MHZ: [u32; 3] = [500, 1500, 2500];

/// What the metrics table reports besides clocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sensors {
    /// Every `AvgTemperature` entry, in °C.
    pub temperature_c: u16,
    /// `AverageSocketPower`, in W.
    pub socket_power_w: u16,
    /// `AverageGfxActivity`, in percent.
    pub gfx_activity: u16,
}

impl Default for Sensors {
    /// An idle card: 40 °C, 30 W, 0 % busy.
    fn default() -> Self {
        Sensors {
            temperature_c: 40,
            socket_power_w: 30,
            gfx_activity: 0,
        }
    }
}

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
    /// The debug mailbox: message, argument, response.
    debug: [u32; 3],
    /// SMU 14: no `Mode1Reset` on the normal mailbox.
    smu14: bool,
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
    /// What the metrics table reports besides clocks.
    pub sensors: Sensors,
    /// Soft maximum per `PPCLK_*` clock in MHz (SetSoftMaxByFreq; 0: none).
    pub soft_max: [u32; smu_if::PPCLK_COUNT as usize],
    /// Soft minimum per clock in MHz (SetSoftMinByFreq; 0: none).
    pub soft_min: [u32; smu_if::PPCLK_COUNT as usize],
    /// Metrics tables transferred since power-on (`MetricsCounter`).
    pub metrics_transfers: u32,
}

impl Smu {
    pub(crate) fn new(t: &mp::Table, addr: impl Fn(AmReg) -> Option<u32>) -> Option<Self> {
        Some(Smu {
            msg: addr(t.MP1_SMN_C2PMSG_66)?,
            arg: addr(t.MP1_SMN_C2PMSG_82)?,
            resp: addr(t.MP1_SMN_C2PMSG_90)?,
            debug: [
                addr(t.MP1_SMN_C2PMSG_75)?,
                addr(t.MP1_SMN_C2PMSG_53)?,
                addr(t.MP1_SMN_C2PMSG_54)?,
            ],
            smu14: t.version[0] >= 14,
            messages: Vec::new(),
            driver_table: 0,
            tools_table: 0,
            features_enabled: false,
            unresponsive: false,
            sensors: Sensors::default(),
            soft_max: [0; smu_if::PPCLK_COUNT as usize],
            soft_min: [0; smu_if::PPCLK_COUNT as usize],
            metrics_transfers: 0,
        })
    }

    pub(crate) fn range(&self) -> Range<u32> {
        let all = [
            self.msg,
            self.arg,
            self.resp,
            self.debug[0],
            self.debug[1],
            self.debug[2],
        ];
        let lo = all.iter().copied().min().unwrap_or(self.msg);
        let hi = all.iter().copied().max().unwrap_or(self.msg).saturating_add(1);
        lo..hi
    }

    fn answer(&mut self, msg: u32, arg: u32) -> (u32, Option<u32>, Effect) {
        match msg {
            smu::PPSMC_MSG_TestMessage => (smu::PPSMC_Result_OK, Some(arg.wrapping_add(1)), Effect::None),
            smu::PPSMC_MSG_GetSmuVersion => (smu::PPSMC_Result_OK, Some(SMU_VERSION), Effect::None),
            smu::PPSMC_MSG_SetDriverDramAddrHigh
            | smu::PPSMC_MSG_SetDriverDramAddrLow
            | smu::PPSMC_MSG_SetToolsDramAddrHigh
            | smu::PPSMC_MSG_SetToolsDramAddrLow => {
                let driver = matches!(
                    msg,
                    smu::PPSMC_MSG_SetDriverDramAddrHigh | smu::PPSMC_MSG_SetDriverDramAddrLow
                );
                let table = if driver {
                    &mut self.driver_table
                } else {
                    &mut self.tools_table
                };
                // The message sets one half of the table's address.
                *table = if matches!(
                    msg,
                    smu::PPSMC_MSG_SetDriverDramAddrHigh | smu::PPSMC_MSG_SetToolsDramAddrHigh
                ) {
                    (*table & 0xffff_ffff) | u64::from(arg) << 32
                } else {
                    (*table & !0xffff_ffff) | u64::from(arg)
                };
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
            smu::PPSMC_MSG_SetSoftMinByFreq | smu::PPSMC_MSG_SetSoftMaxByFreq => {
                let (clk, mhz) = ((arg >> 16) as usize, arg & 0xffff);
                let limits = if msg == smu::PPSMC_MSG_SetSoftMinByFreq {
                    &mut self.soft_min
                } else {
                    &mut self.soft_max
                };
                match limits.get_mut(clk) {
                    Some(l) => {
                        *l = mhz;
                        (smu::PPSMC_Result_OK, None, Effect::None)
                    }
                    None => (smu::PPSMC_Result_Failed, None, Effect::None),
                }
            }
            smu::PPSMC_MSG_PowerUpVcn
            | smu::PPSMC_MSG_PowerDownVcn
            | smu::PPSMC_MSG_PowerUpJpeg
            | smu::PPSMC_MSG_PowerDownJpeg
            | smu::PPSMC_MSG_PowerUpUmsch
            | smu::PPSMC_MSG_PowerDownUmsch => (smu::PPSMC_Result_OK, None, Effect::None),
            smu::PPSMC_MSG_Mode1Reset if !self.smu14 => (smu::PPSMC_Result_OK, None, Effect::Mode1Reset),
            _ => (smu::PPSMC_Result_UnknownCmd, None, Effect::None),
        }
    }
}

impl Smu {
    /// The clock `clk` runs at: its soft maximum, else the top DPM level, raised to
    /// its soft minimum.
    fn clock_mhz(&self, clk: usize) -> u32 {
        let top = DPM_LEVELS_MHZ[DPM_LEVELS_MHZ.len() - 1];
        let max = self.soft_max.get(clk).copied().filter(|&m| m != 0).unwrap_or(top);
        max.max(self.soft_min.get(clk).copied().unwrap_or(0))
    }

    /// TransferTableSmu2Dram: the table `id` into the driver table.
    fn transfer(&mut self, v: &Values, vram: Option<&Vram>, id: u32) -> u32 {
        let size = smu_metrics_external::SIZE as u64;
        let (Some(vram), true) = (vram, id == smu_if::TABLE_SMU_METRICS) else {
            return smu::PPSMC_Result_Failed;
        };
        let Some(off) = vram.mc_to_offset(v, self.driver_table, size) else {
            return smu::PPSMC_Result_Failed;
        };
        self.metrics_transfers = self.metrics_transfers.wrapping_add(1);
        let mut t = vec![0u8; smu_metrics_external::SIZE];
        let put = |t: &mut [u8], f: CField, i: usize, value: u32| {
            let at = f.offset + i * f.size;
            if i < f.count
                && f.size <= 4
                && let Some(b) = t.get_mut(at..at + f.size)
            {
                b.copy_from_slice(&value.to_le_bytes()[..f.size]);
            }
        };
        for clk in 0..smu_if::PPCLK_COUNT as usize {
            put(&mut t, smu_metrics::CurrClock, clk, self.clock_mhz(clk));
        }
        let gfx = self.clock_mhz(smu_if::PPCLK_GFXCLK as usize);
        let mem = self.clock_mhz(smu_if::PPCLK_UCLK as usize);
        let fclk = self.clock_mhz(smu_if::PPCLK_FCLK as usize);
        for f in [
            smu_metrics::AverageGfxclkFrequencyTarget,
            smu_metrics::AverageGfxclkFrequencyPreDs,
            smu_metrics::AverageGfxclkFrequencyPostDs,
        ] {
            put(&mut t, f, 0, gfx);
        }
        put(&mut t, smu_metrics::AverageMemclkFrequencyPreDs, 0, mem);
        put(&mut t, smu_metrics::AverageMemclkFrequencyPostDs, 0, mem);
        put(&mut t, smu_metrics::AverageFclkFrequencyPreDs, 0, fclk);
        put(&mut t, smu_metrics::AverageFclkFrequencyPostDs, 0, fclk);
        put(&mut t, smu_metrics::MetricsCounter, 0, self.metrics_transfers);
        put(
            &mut t,
            smu_metrics::AverageGfxActivity,
            0,
            u32::from(self.sensors.gfx_activity),
        );
        put(
            &mut t,
            smu_metrics::AverageSocketPower,
            0,
            u32::from(self.sensors.socket_power_w),
        );
        for i in 0..smu_metrics::AvgTemperature.count {
            put(
                &mut t,
                smu_metrics::AvgTemperature,
                i,
                u32::from(self.sensors.temperature_c),
            );
        }
        if vram.write(off, &t) {
            smu::PPSMC_Result_OK
        } else {
            smu::PPSMC_Result_Failed
        }
    }
}

impl RegisterBlock for Smu {
    fn write(&mut self, v: &mut Values, vram: Option<&Vram>, reg: u32, value: u32) -> Effect {
        let [dmsg, darg, dresp] = self.debug;
        if reg == dmsg && !self.unresponsive {
            let (response, effect) = if value == DEBUGSMC_MSG_MODE1_RESET {
                (smu::PPSMC_Result_OK, Effect::Mode1Reset)
            } else {
                (smu::PPSMC_Result_UnknownCmd, Effect::None)
            };
            self.messages.push(SmuMessage {
                msg: DEBUG_MESSAGE | value,
                arg: v.get(darg),
                response,
            });
            v.set(dresp, response);
            return effect;
        }
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
        let (response, out, effect) = if value == smu::PPSMC_MSG_TransferTableSmu2Dram {
            (self.transfer(v, vram, arg), None, Effect::None)
        } else {
            self.answer(value, arg)
        };
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
        // Idle after power-on: the last responses read OK (the debug mailbox's too:
        // the driver waits for it after a mode1 reset).
        v.set(self.resp, smu::PPSMC_Result_OK);
        v.set(self.debug[2], smu::PPSMC_Result_OK);
        self.messages.clear();
        self.driver_table = 0;
        self.tools_table = 0;
        self.features_enabled = false;
        self.soft_max = [0; smu_if::PPCLK_COUNT as usize];
        self.soft_min = [0; smu_if::PPCLK_COUNT as usize];
        self.metrics_transfers = 0;
    }

    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        self
    }
}
