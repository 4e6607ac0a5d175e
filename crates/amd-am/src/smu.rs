//! The SMU (MP1 13.0.0) as tinygrad 0.10.1's `AM_SMU` drives it: messages through
//! `MP1_SMN_C2PMSG_66` (message), `_82` (argument, and the answer where there is
//! one) and `_90` (response), each preceded and followed by a wait for the response
//! `PPSMC_Result_OK` of at most [`MSG_TIMEOUT`] (100 ms for the liveness probe);
//! the driver table in the boot region (`SetDriverDramAddrHigh/Low`), the metrics
//! table read back from it after `TransferTableSmu2Dram`, and the clocks set to one
//! DPM level (the last at boot, the first at fini).
//!
//! A response other than `PPSMC_Result_OK` ends the wait at once (tinygrad waits out
//! its timeout) and is an [`AmError::Smu`] naming the message and the response.

use std::time::{Duration, Instant};

use crate::error::{AmError, Result};
use crate::gmc::Gmc;
use crate::ip::{AmDevice, Ip, Reg};
use crate::regs::CField;
use crate::regs::generated::{smu, smu_if, smu_metrics, smu_metrics_external};

/// The bound on a message's wait (tinygrad's 10,000 ms).
pub const MSG_TIMEOUT: Duration = Duration::from_secs(10);
/// The bound on `is_smu_alive`'s probe (tinygrad's 100 ms).
pub const ALIVE_TIMEOUT: Duration = Duration::from_millis(100);
/// The driver table's size (tinygrad's `palloc(0x4000)`).
pub const DRIVER_TABLE_SIZE: u64 = 0x4000;
/// The pause after a mode1 reset (tinygrad's 500 ms).
pub const MODE1_RESET_DELAY: Duration = Duration::from_millis(500);
/// SMU 14's mode1 reset on the debug mailbox (`DEBUGSMC_MSG_Mode1Reset`, a define of
/// Linux's `smu_v14_0_2_ppt.c`).
pub const DEBUGSMC_MSG_MODE1_RESET: u32 = smu::DEBUGSMC_MSG_Mode1Reset;
/// The clocks tinygrad sets, in its order.
pub const CLOCKS: [(u32, &str); 4] = [
    (smu_if::PPCLK_GFXCLK, "PPCLK_GFXCLK"),
    (smu_if::PPCLK_UCLK, "PPCLK_UCLK"),
    (smu_if::PPCLK_FCLK, "PPCLK_FCLK"),
    (smu_if::PPCLK_SOCCLK, "PPCLK_SOCCLK"),
];
/// The most DPM levels a clock may report (`NUM_GFXCLK_DPM_LEVELS` is 16; anything
/// larger is a broken answer).
pub const MAX_DPM_LEVELS: u32 = 16;

/// The name of a message this module sends.
pub fn msg_name(msg: u32) -> &'static str {
    match msg {
        smu::PPSMC_MSG_SetDriverDramAddrHigh => "PPSMC_MSG_SetDriverDramAddrHigh",
        smu::PPSMC_MSG_SetDriverDramAddrLow => "PPSMC_MSG_SetDriverDramAddrLow",
        smu::PPSMC_MSG_EnableAllSmuFeatures => "PPSMC_MSG_EnableAllSmuFeatures",
        smu::PPSMC_MSG_GetSmuVersion => "PPSMC_MSG_GetSmuVersion",
        smu::PPSMC_MSG_Mode1Reset => "PPSMC_MSG_Mode1Reset",
        smu::PPSMC_MSG_TransferTableSmu2Dram => "PPSMC_MSG_TransferTableSmu2Dram",
        smu::PPSMC_MSG_GetDpmFreqByIndex => "PPSMC_MSG_GetDpmFreqByIndex",
        smu::PPSMC_MSG_SetSoftMinByFreq => "PPSMC_MSG_SetSoftMinByFreq",
        smu::PPSMC_MSG_SetSoftMaxByFreq => "PPSMC_MSG_SetSoftMaxByFreq",
        _ => "PPSMC_MSG (other)",
    }
}

/// Which DPM level [`Smu::set_clocks`] picks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DpmLevel {
    /// The lowest (tinygrad's `level=0`, at fini).
    Lowest,
    /// The highest (tinygrad's `level=-1`, at boot).
    Highest,
}

/// A metrics table (`SmuMetricsExternal_t`) as read from the driver table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SmuMetrics {
    bytes: Vec<u8>,
}

impl SmuMetrics {
    /// The raw bytes (`sizeof(SmuMetricsExternal_t)`).
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Element `i` of field `f` of `SmuMetrics_t` (at the start of the external
    /// table), or `None` past the field.
    pub fn get(&self, f: CField, i: usize) -> Option<u64> {
        if i >= f.count {
            return None;
        }
        let at = f.offset.checked_add(i.checked_mul(f.size)?)?;
        let b = self.bytes.get(at..at.checked_add(f.size)?)?;
        Some(b.iter().rev().fold(0u64, |a, &x| a << 8 | u64::from(x)))
    }

    /// `CurrClock[clk]` in MHz.
    pub fn current_clock(&self, clk: u32) -> Option<u64> {
        self.get(smu_metrics::CurrClock, usize::try_from(clk).ok()?)
    }

    /// `AvgTemperature[TEMP_EDGE]` in °C.
    pub fn edge_temperature(&self) -> Option<u64> {
        self.get(smu_metrics::AvgTemperature, smu_if::TEMP_EDGE as usize)
    }

    /// `AverageSocketPower` in W.
    pub fn socket_power(&self) -> Option<u64> {
        self.get(smu_metrics::AverageSocketPower, 0)
    }

    /// `AverageGfxActivity` in percent.
    pub fn gfx_activity(&self) -> Option<u64> {
        self.get(smu_metrics::AverageGfxActivity, 0)
    }

    /// `MetricsCounter`.
    pub fn counter(&self) -> Option<u64> {
        self.get(smu_metrics::MetricsCounter, 0)
    }
}

/// The SMU of an [`AmDevice`].
#[derive(Debug)]
pub struct Smu<'a> {
    dev: &'a AmDevice,
    msg: Reg,
    arg: Reg,
    resp: Reg,
    /// The debug mailbox (`C2PMSG_75` message, `_53` argument, `_54` response),
    /// through which SMU 14 takes its mode1 reset.
    debug: [Reg; 3],
    driver_table: u64,
    driver_table_mc: u64,
    clocks: Option<Vec<(u32, Vec<u32>)>>,
    /// The bound on each wait ([`MSG_TIMEOUT`] unless changed, for tests).
    pub timeout: Duration,
}

impl<'a> Smu<'a> {
    /// The SMU's registers, and its driver table taken from the boot region
    /// (zeroed on a full boot, as tinygrad's `palloc(0x4000, zero=not partial_boot)`).
    pub fn new(dev: &'a AmDevice, gmc: &mut Gmc<'_>, zero: bool) -> Result<Self> {
        let t = dev.regs().tables();
        let mp1 = |r| dev.regs().resolve(Ip::Mp1, 0, r);
        let driver_table = gmc.palloc(DRIVER_TABLE_SIZE, 0x1000, zero, true)?;
        Ok(Smu {
            dev,
            msg: mp1(t.mp1.MP1_SMN_C2PMSG_66)?,
            arg: mp1(t.mp1.MP1_SMN_C2PMSG_82)?,
            resp: mp1(t.mp1.MP1_SMN_C2PMSG_90)?,
            debug: [
                mp1(t.mp1.MP1_SMN_C2PMSG_75)?,
                mp1(t.mp1.MP1_SMN_C2PMSG_53)?,
                mp1(t.mp1.MP1_SMN_C2PMSG_54)?,
            ],
            driver_table,
            driver_table_mc: gmc.mc(driver_table)?,
            clocks: None,
            timeout: MSG_TIMEOUT,
        })
    }

    /// The driver table's VRAM offset.
    pub fn driver_table(&self) -> u64 {
        self.driver_table
    }

    /// `AM_SMU.init`: the driver table's memory-controller address (high, then
    /// low), then `EnableAllSmuFeatures`.
    pub fn init(&self) -> Result<()> {
        self.send(
            smu::PPSMC_MSG_SetDriverDramAddrHigh,
            (self.driver_table_mc >> 32) as u32,
            true,
            self.timeout,
        )?;
        self.send(
            smu::PPSMC_MSG_SetDriverDramAddrLow,
            self.driver_table_mc as u32,
            true,
            self.timeout,
        )?;
        self.send(smu::PPSMC_MSG_EnableAllSmuFeatures, 0, true, self.timeout)?;
        Ok(())
    }

    /// `is_smu_alive`: `GetSmuVersion` with a 100 ms bound (its error ignored),
    /// then whether the response register is non-zero.
    pub fn is_smu_alive(&self) -> bool {
        let _ = self.send(smu::PPSMC_MSG_GetSmuVersion, 0, true, ALIVE_TIMEOUT.min(self.timeout));
        self.dev.regs().read(self.resp) != 0
    }

    /// `mode1_reset`: `Mode1Reset`, then 500 ms. SMU 14 (MP1 14.x) has no such
    /// message: there it is the debug mailbox's message [`DEBUGSMC_MSG_MODE1_RESET`]
    /// (tinygrad 0.14's `_send_msg(2, 0, debug=True)`, Linux's
    /// `smu_v14_0_2_mode1_reset`).
    pub fn mode1_reset(&self) -> Result<()> {
        if self.dev.regs().versions().mp1[0] >= 14 {
            let [msg, arg, resp] = self.debug;
            let r = self.dev.regs();
            r.write(resp, 0);
            r.write(arg, 0);
            r.write(msg, DEBUGSMC_MSG_MODE1_RESET);
            self.wait_ok(resp, "DEBUGSMC_MSG_Mode1Reset", 0, self.timeout)?;
        } else {
            self.send(smu::PPSMC_MSG_Mode1Reset, 0, true, self.timeout)?;
        }
        std::thread::sleep(MODE1_RESET_DELAY);
        Ok(())
    }

    /// `read_metrics`: `TransferTableSmu2Dram(TABLE_SMU_METRICS)`, then the
    /// `SmuMetricsExternal_t` read from the driver table through BAR 0.
    pub fn read_metrics(&self) -> Result<SmuMetrics> {
        self.send(
            smu::PPSMC_MSG_TransferTableSmu2Dram,
            smu_if::TABLE_SMU_METRICS,
            true,
            self.timeout,
        )?;
        let mut bytes = vec![0u8; smu_metrics_external::SIZE];
        if !self.dev.pci().vram().read(self.driver_table, &mut bytes) {
            return Err(self
                .dev
                .past_bar("the SMU metrics table", self.driver_table, bytes.len() as u64));
        }
        Ok(SmuMetrics { bytes })
    }

    /// The DPM levels of [`CLOCKS`] in MHz, asked once (`GetDpmFreqByIndex` with
    /// index 0xff for the count, then each index), as tinygrad's `set_clocks`.
    pub fn dpm_levels(&mut self) -> Result<&[(u32, Vec<u32>)]> {
        if self.clocks.is_none() {
            let mut all = Vec::new();
            for (clk, name) in CLOCKS {
                let ask = |i: u32| -> Result<u32> {
                    Ok(self.send(smu::PPSMC_MSG_GetDpmFreqByIndex, clk << 16 | i, true, self.timeout)? & 0x7fff_ffff)
                };
                let count = ask(0xff)?;
                if count == 0 || count > MAX_DPM_LEVELS {
                    return Err(AmError::Device {
                        what: "SMU DPM level count",
                        msg: format!("{name}: {count} levels (expected 1 to {MAX_DPM_LEVELS})"),
                    });
                }
                let levels = (0..count).map(ask).collect::<Result<Vec<_>>>()?;
                if let Some(bad) = levels.iter().find(|&&f| f > 0xffff) {
                    return Err(AmError::Device {
                        what: "SMU DPM level",
                        msg: format!("{name}: {bad} MHz does not fit SetSoftMinByFreq's 16 bits"),
                    });
                }
                all.push((clk, levels));
            }
            self.clocks = Some(all);
        }
        Ok(self.clocks.as_deref().unwrap_or(&[]))
    }

    /// `set_clocks(level)`: for each clock, `SetSoftMinByFreq` then
    /// `SetSoftMaxByFreq` at that level's frequency.
    pub fn set_clocks(&mut self, level: DpmLevel) -> Result<()> {
        let picks: Vec<(u32, u32)> = self
            .dpm_levels()?
            .iter()
            .filter_map(|(clk, v)| {
                let f = match level {
                    DpmLevel::Lowest => v.first(),
                    DpmLevel::Highest => v.last(),
                };
                f.map(|&f| (*clk, f))
            })
            .collect();
        for (clk, f) in picks {
            self.send(smu::PPSMC_MSG_SetSoftMinByFreq, clk << 16 | f, true, self.timeout)?;
            self.send(smu::PPSMC_MSG_SetSoftMaxByFreq, clk << 16 | f, true, self.timeout)?;
        }
        Ok(())
    }

    /// The fini step tinygrad 0.10.1's `AMDev.fini` takes for the SMU: clocks to the
    /// lowest level.
    pub fn fini(&mut self) -> Result<()> {
        self.set_clocks(DpmLevel::Lowest)
    }

    /// `_send_msg`: wait for the last response (if `poll`), then response 0,
    /// argument, message; wait for `PPSMC_Result_OK`; the argument register after.
    pub fn send(&self, msg: u32, param: u32, poll: bool, timeout: Duration) -> Result<u32> {
        if poll {
            self.wait_ok(self.resp, msg_name(msg), param, timeout)?;
        }
        let r = self.dev.regs();
        r.write(self.resp, 0);
        r.write(self.arg, param);
        r.write(self.msg, msg);
        self.wait_ok(self.resp, msg_name(msg), param, timeout)?;
        Ok(r.read(self.arg))
    }

    fn wait_ok(&self, resp: Reg, msg: &'static str, param: u32, timeout: Duration) -> Result<()> {
        let start = Instant::now();
        loop {
            let v = self.dev.regs().read(resp);
            if v == smu::PPSMC_Result_OK {
                return Ok(());
            }
            if v != 0 || start.elapsed() >= timeout {
                return Err(AmError::Smu {
                    msg,
                    param,
                    response: v,
                    waited_ms: u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX),
                });
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}
