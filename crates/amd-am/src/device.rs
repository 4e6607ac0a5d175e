//! The whole bring-up of an [`AmDevice`] in tinygrad 0.10.1's order (`AMDev.__init__`)
//! and its `fini`.
//!
//! ```text
//! boot_state ── SCRATCH_REG7 == AM_VERSION and MEC halted (and no AM_RESET=1)?
//!   │ yes: partial boot                     │ no: full boot
//!   │                                       │ sOS and SMU alive: SMU mode1 reset
//!   │                                       │ SOC21, GMC (MM hub), IH, PSP, SMU
//!   └──────────────┬────────────────────────┘
//!          boot memory closed
//!          GFX (GC hub, MEC), SDMA
//!          clocks to the highest DPM level, clock gating, SCRATCH_REG7 = AM_VERSION
//! ```
//!
//! The blocks' boot memory (page-table root, IH rings, the SMU's driver table) is
//! taken in tinygrad's order from the deterministic boot allocator, so a partial boot
//! finds them where the full boot left them. `fini` (tinygrad's `AMDev.fini`) leaves
//! SDMA halted, the compute queues dequeued, the MEC halted and the clocks at their
//! lowest: with `SCRATCH_REG7` still set, the next boot is partial. A run that ends
//! without `fini` leaves the MEC running, so the next boot is full, with a mode1
//! reset first.
//!
//! Firmware is read before anything is written: a missing or corrupt file fails the
//! boot with no register and no VRAM touched. On a partial boot the IH read pointer
//! is taken from the device and the MM hub (set up by the boot before) gets its TLB
//! flushes. A boot that fails later leaves `SCRATCH_REG7` as it
//! was: after a failed full boot the next boot is full again (with a mode1 reset once
//! the sOS runs).

use std::time::Duration;

use crate::error::Result;
use crate::firmware::{AmFirmware, FirmwareSource};
use crate::gfx::Gfx;
use crate::gmc::{Gmc, Hub, VaSpace};
use crate::ih::Ih;
use crate::ip::{AM_VERSION, AmDevice, BootState, Ip};
use crate::psp::{Psp, WAIT_REG_TIMEOUT};

use crate::sdma::Sdma;
use crate::smu::{DpmLevel, MSG_TIMEOUT, Smu};
use crate::soc21::Soc21;

/// What [`AmDevice::boot`] needs besides the device.
#[derive(Debug, Clone)]
pub struct BootOptions {
    /// Where the firmware files are.
    pub firmware: FirmwareSource,
    /// Force a full boot (tinygrad's `AM_RESET=1`).
    pub reset: bool,
    /// The bound on each SMU message wait ([`MSG_TIMEOUT`]; tests shorten it).
    pub smu_timeout: Duration,
    /// The bound on each GFX register wait ([`WAIT_REG_TIMEOUT`]).
    pub gfx_timeout: Duration,
    /// The GPU virtual address space (shared by every GPU booted with clones of
    /// these options, as tinygrad 0.10.1's one `va_allocator` is, so that memory can
    /// be mapped into peers at its own address).
    pub va_space: VaSpace,
}

impl Default for BootOptions {
    fn default() -> Self {
        BootOptions {
            firmware: FirmwareSource::system(),
            reset: false,
            smu_timeout: MSG_TIMEOUT,
            gfx_timeout: WAIT_REG_TIMEOUT,
            va_space: VaSpace::new(),
        }
    }
}

impl BootOptions {
    /// From the environment: `AM_FIRMWARE_DIR`, `AM_RESET`.
    pub fn from_env() -> Self {
        Self::from_lookup(|k| std::env::var(k).ok())
    }

    /// From `lookup` (an environment).
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Self {
        BootOptions {
            firmware: FirmwareSource::from_lookup(&lookup),
            reset: lookup("AM_RESET").is_some_and(|v| v.trim() == "1"),
            ..Self::default()
        }
    }
}

/// Which boot ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BootKind {
    /// Every block set up; `mode1_reset`: the GPU was left running and was reset
    /// through the SMU first.
    Full {
        /// Whether a mode1 reset came first.
        mode1_reset: bool,
    },
    /// Only GFX and SDMA set up (the GPU was left by this transport's `fini`).
    Partial,
}

/// A booted GPU: the blocks that stay in use after the boot.
#[derive(Debug)]
pub struct Booted<'a> {
    /// The device.
    pub dev: &'a AmDevice,
    /// What the identification registers said before the boot.
    pub state: BootState,
    /// Which boot ran.
    pub kind: BootKind,
    /// The firmware loaded.
    pub fw: AmFirmware,
    /// Memory and page tables.
    pub gmc: Gmc<'a>,
    /// Interrupts.
    pub ih: Ih<'a>,
    /// Power management.
    pub smu: Smu<'a>,
    /// Compute.
    pub gfx: Gfx<'a>,
    /// Copies.
    pub sdma: Sdma<'a>,
    finished: bool,
}

impl AmDevice {
    /// Boots the GPU in tinygrad 0.10.1's order (see the [module](crate::device)).
    pub fn boot(&self, opts: &BootOptions) -> Result<Booted<'_>> {
        let state = self.boot_state()?;
        let partial = state.partial_boot(opts.reset);
        // The firmware first (tinygrad reads it after creating the memory manager;
        // the boot allocator is deterministic, so the order changes no address), so
        // that a missing file fails before anything, VRAM included, is written.
        let fw = AmFirmware::load_for(
            &**self.pci().sys(),
            &opts.firmware,
            &self.firmware_files()?,
            self.regs().gc_gen(),
        )?;
        let mut gmc = Gmc::with_va_space(self, opts.va_space.clone())?;
        let soc21 = Soc21::new(self);
        let mut ih = Ih::new(self, &mut gmc, !partial)?;
        let mut psp = Psp::new(self)?;
        let mut smu = Smu::new(self, &mut gmc, !partial)?;
        smu.timeout = opts.smu_timeout;
        let mut gfx = Gfx::new(self, &fw);
        gfx.timeout = opts.gfx_timeout;
        let sdma = Sdma::new(self);

        let kind = if partial {
            ih.resume()?;
            gmc.resume_hub(Hub::Mm);
            BootKind::Partial
        } else {
            let mode1_reset = psp.is_sos_alive() && smu.is_smu_alive();
            if mode1_reset {
                smu.mode1_reset()?;
            }
            soc21.init()?;
            gmc.init_hub(Hub::Mm)?;
            ih.init()?;
            psp.init(&fw)?;
            smu.init()?;
            BootKind::Full { mode1_reset }
        };
        gmc.booting = false;
        gfx.init(&mut gmc)?;
        sdma.init()?;
        smu.set_clocks(DpmLevel::Highest)?;
        gfx.set_clockgating_state()?;
        self.regs()
            .write_reg(Ip::Gc, self.regs().tables().gc.SCRATCH_REG7, AM_VERSION)?;
        Ok(Booted {
            dev: self,
            state,
            kind,
            fw,
            gmc,
            ih,
            smu,
            gfx,
            sdma,
            finished: false,
        })
    }
}

impl Booted<'_> {
    /// tinygrad's `AMDev.fini`: SDMA, then GFX, then the clocks to their lowest
    /// level. Once done, a second call does nothing.
    pub fn fini(&mut self) -> Result<()> {
        if self.finished {
            return Ok(());
        }
        self.sdma.fini()?;
        self.gfx.fini()?;
        self.smu.set_clocks(DpmLevel::Lowest)?;
        self.finished = true;
        Ok(())
    }

    /// Whether [`Booted::fini`] ran.
    pub fn is_finished(&self) -> bool {
        self.finished
    }
}
