//! The register model of a mock PCI GPU: which blocks sit where (from the discovery
//! table's base addresses and the generated register offsets), VRAM as the blocks see
//! it, the NBIO registers with behaviour (indirect access, HDP flush) and the RLC's
//! safe-mode handshake.

use std::fs::File;
use std::sync::Arc;

use amd_regs::discovery::hw_id;

pub use super::block::Vram;
use super::block::generated::gc;
use super::block::{AmReg, Effect, RegisterBlock, Values};
use super::catalogue::FirmwareCatalogue;
use super::discovery::Discovery;
use super::gmc::{Gmc, Hub};
use super::ih::Ih;
use super::psp::Psp;
use super::queues::Queues;
use super::regs::RegisterFile;
use super::smu::Smu;

/// `MMMC_VM_FB_LOCATION_BASE`'s reset value: VRAM appears to the GPU's memory
/// controller at 0x80_0000_0000 (the register holds the address >> 24).
pub const FB_LOCATION_BASE: u32 = 0x8000;

/// NBIO: the HDP flush pair. A write to `GPU_HDP_FLUSH_REQ` completes at once: the
/// requested bits read back set in `GPU_HDP_FLUSH_DONE`.
#[derive(Debug)]
pub struct Nbio {
    req: u32,
    done: u32,
    /// HDP flushes requested since power-on.
    pub hdp_flushes: u64,
}

impl RegisterBlock for Nbio {
    fn write(&mut self, v: &mut Values, _vram: Option<&Vram>, reg: u32, value: u32) -> Effect {
        if reg == self.req {
            self.hdp_flushes = self.hdp_flushes.saturating_add(1);
            v.set(self.done, value);
        }
        Effect::None
    }

    fn reset(&mut self, _v: &mut Values) {
        self.hdp_flushes = 0;
    }

    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        self
    }
}

/// The RLC's safe-mode handshake (`RLC_SAFE_MODE`): a write with `CMD` set is taken
/// at once, so `CMD` reads back 0 (what `gfx_v11_0_set_safe_mode` and tinygrad
/// 0.10.1's `set_clockgating_state` wait for); `MESSAGE` 1 enters safe mode, 0
/// leaves it.
#[derive(Debug)]
pub struct Rlc {
    reg: u32,
    /// Whether the RLC is in safe mode.
    pub safe_mode: bool,
    /// Safe-mode commands taken since power-on (enter and leave).
    pub commands: u64,
}

impl RegisterBlock for Rlc {
    fn write(&mut self, v: &mut Values, _vram: Option<&Vram>, reg: u32, value: u32) -> Effect {
        if reg == self.reg && value & gc::RLC_SAFE_MODE__CMD_MASK != 0 {
            self.safe_mode = value & gc::RLC_SAFE_MODE__MESSAGE_MASK != 0;
            self.commands = self.commands.saturating_add(1);
            v.set(reg, value & !gc::RLC_SAFE_MODE__CMD_MASK);
        }
        Effect::None
    }

    fn reset(&mut self, _v: &mut Values) {
        self.safe_mode = false;
        self.commands = 0;
    }

    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        self
    }
}

fn bases(d: &Discovery, hw: u16) -> Option<&[u32]> {
    d.ips
        .iter()
        .find(|ip| ip.hw_id == hw && ip.instance == 0)
        .map(|ip| ip.bases.as_slice())
}

/// The dword address of `r` in IP `hw`'s segments.
pub fn reg_addr(d: &Discovery, hw: u16, r: AmReg) -> Option<u32> {
    r.addr(bases(d, hw)?)
}

/// Attaches the blocks with behaviour to `regs`, for a device with `d`'s register
/// bases and VRAM `vram`. Blocks whose IP is absent from the table are left out.
pub(crate) fn attach(
    regs: &RegisterFile,
    d: &Discovery,
    vram: Arc<File>,
    vram_size: u64,
    doorbells: Option<Arc<crate::mem::pci::DevMem>>,
    firmware: Arc<FirmwareCatalogue>,
) {
    let Some(t) = d.asic_regs() else {
        // A table of IP versions no register table covers: plain registers only.
        regs.set_vram(Vram::new(vram, vram_size, None));
        return;
    };
    let fb = reg_addr(d, hw_id::MMHUB, t.mmhub.MMMC_VM_FB_LOCATION_BASE);
    if let Some(fb) = fb {
        regs.set_reset_value(fb, FB_LOCATION_BASE);
    }
    regs.set_vram(Vram::new(vram, vram_size, fb));
    if let (Some(i), Some(dat)) = (
        reg_addr(d, hw_id::NBIF, t.nbio.BIF_BX_PF0_RSMU_INDEX),
        reg_addr(d, hw_id::NBIF, t.nbio.BIF_BX_PF0_RSMU_DATA),
    ) {
        regs.set_indirect(i, dat);
    }
    if let (Some(req), Some(done)) = (
        reg_addr(d, hw_id::NBIF, t.nbio.BIF_BX_PF0_GPU_HDP_FLUSH_REQ),
        reg_addr(d, hw_id::NBIF, t.nbio.BIF_BX_PF0_GPU_HDP_FLUSH_DONE),
    ) {
        regs.attach(
            req..req.saturating_add(1),
            Box::new(Nbio {
                req,
                done,
                hdp_flushes: 0,
            }),
        );
    }
    let gc_addr = |r| reg_addr(d, hw_id::GC, r);
    if let Some(reg) = gc_addr(t.gc.RLC_SAFE_MODE) {
        regs.attach(
            reg..reg.saturating_add(1),
            Box::new(Rlc {
                reg,
                safe_mode: false,
                commands: 0,
            }),
        );
    }
    // The PSP takes this GPU's files only, and sets its TMR up at boot on MP0
    // 14.0.2/14.0.3 (as Linux's and tinygrad 0.14's drivers expect).
    let own = d.firmware_files().map(|f| {
        let names = f.all();
        Arc::new(firmware.subset(&names))
    });
    let boot_time_tmr = matches!(d.version(hw_id::MP0), Some([14, 0, 2] | [14, 0, 3]));
    if let Some(p) = Psp::new(
        t.mp0,
        |r| reg_addr(d, hw_id::MP0, r),
        gc_addr(t.gc.RLC_RLCS_BOOTLOAD_STATUS),
        gc_addr(t.gc.CP_STAT),
        own.unwrap_or(firmware),
        boot_time_tmr,
    ) {
        let r = p.range();
        regs.attach(r, Box::new(p));
    }
    if let Some(s) = Smu::new(t.mp1, |r| reg_addr(d, hw_id::MP1, r)) {
        let r = s.range();
        regs.attach(r, Box::new(s));
    }
    if let Some(ih) = Ih::new(t.osssys, |r| reg_addr(d, hw_id::OSSSYS, r)) {
        let r = ih.range();
        regs.attach(r, Box::new(ih));
    }
    for (hub, hw) in [(Hub::Gc, hw_id::GC), (Hub::Mm, hw_id::MMHUB)] {
        if let Some(g) = Gmc::new(hub, &t, |r| reg_addr(d, hw, r)) {
            let r = g.range();
            regs.attach(r, Box::new(g));
        }
    }
    if let Some(q) = Queues::new(t.gc, gc_addr, doorbells) {
        let r = q.ranges();
        regs.attach_ranges(r, Box::new(q));
    }
}
