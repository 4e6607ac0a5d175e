//! The PSP (MP0 13.0.0; MP0 14.0.2/3 with tinygrad 0.14's differences: [`Psp::init`])
//! bring-up, in tinygrad 0.10.1's order (`AM_PSP.init`): the
//! bootloader loads the sOS components, the kernel-mode ring is created, the TOC
//! gives the TMR size, the SMU firmware is loaded, the TMR is set up, every other
//! firmware image is loaded with `LOAD_IP_FW`, and the RLC autoload starts.
//!
//! Buffers live in the boot region of VRAM (64 MiB below the top, 32 MiB long, as
//! tinygrad's boot allocator), written through BAR 0 and followed by an HDP flush.
//! Register waits poll every millisecond for at most [`WAIT_REG_TIMEOUT`] (tinygrad's
//! `wait_reg`: 10,000 tries, 1 ms apart). Where tinygrad waits without a bound (the
//! sOS coming up, a ring fence), the same bound applies, and the error names the step.
//! A bootloader that answers ready with a status in the low bits, or a ring command
//! whose response has a non-zero status, is an [`AmError::Psp`] naming the step.

use std::time::{Duration, Instant};

use crate::error::{AmError, Result};
use crate::firmware::{AmFirmware, FwImage};
use crate::ip::{AmDevice, Ip, Reg};
use crate::regs::generated::psp;
use amd_regs::psp_if::{self, psp_gfx_cmd_resp, psp_gfx_rb_frame};
use zerocopy::IntoBytes;

/// The bound on every wait of the bring-up.
pub const WAIT_REG_TIMEOUT: Duration = Duration::from_secs(10);
/// The kernel-mode ring's size (tinygrad's `ring_size`).
pub const RING_SIZE: u32 = 0x10000;
/// The largest TMR the transport sets aside (tinygrad's `max_tmr_size`).
pub const MAX_TMR_SIZE: u64 = 0x130_0000;
/// The bootloader's ready bit in `C2PMSG_35` and the sOS's in `C2PMSG_64`.
pub use amd_regs::psp_if::READY;
/// Bytes of a ring frame (`struct psp_gfx_rb_frame`).
pub const FRAME_SIZE: u32 = size_of::<psp_gfx_rb_frame>() as u32;
/// `psp_gfx_cmd_resp.resp.status` and `.resp.tmr_size`.
const RESP_STATUS: u64 = psp_if::RESP_STATUS as u64;
const RESP_TMR_SIZE: u64 = psp_if::RESP_TMR_SIZE as u64;

/// A command buffer ([`psp::PSP_CMD_BUFFER_SIZE`] bytes, `struct psp_gfx_cmd_resp`
/// at its start): command `cmd_id` with the union dwords `args`, the response zeroed.
pub fn command(cmd_id: u32, args: &[u32]) -> Vec<u8> {
    let mut cmd = vec![0u8; psp::PSP_CMD_BUFFER_SIZE as usize];
    let c = psp_gfx_cmd_resp::command(cmd_id, args);
    cmd[..size_of::<psp_gfx_cmd_resp>()].copy_from_slice(c.as_bytes());
    cmd
}

/// A ring frame (`struct psp_gfx_rb_frame`) for the command buffer at MC address
/// `cmd`, asking the sOS to write `fence_value` to the fence at MC address `fence`.
pub fn ring_frame(cmd: u64, fence: u64, fence_value: u32) -> [u8; FRAME_SIZE as usize] {
    let frame = psp_gfx_rb_frame {
        cmd_buf_addr_lo: cmd as u32,
        cmd_buf_addr_hi: (cmd >> 32) as u32,
        fence_addr_lo: fence as u32,
        fence_addr_hi: (fence >> 32) as u32,
        fence_value,
        ..psp_gfx_rb_frame::default()
    };
    let mut bytes = [0u8; FRAME_SIZE as usize];
    bytes.copy_from_slice(frame.as_bytes());
    bytes
}

/// sOS components in the order the bootloader takes them (`sos_components_load_order`).
pub const SOS_LOAD_ORDER: [(u32, u32, &str); 8] = [
    (
        psp::PSP_FW_TYPE_PSP_KDB,
        psp::PSP_BL__LOAD_KEY_DATABASE,
        "PSP_BL__LOAD_KEY_DATABASE",
    ),
    (
        psp::PSP_FW_TYPE_PSP_KDB,
        psp::PSP_BL__LOAD_TOS_SPL_TABLE,
        "PSP_BL__LOAD_TOS_SPL_TABLE",
    ),
    (
        psp::PSP_FW_TYPE_PSP_SYS_DRV,
        psp::PSP_BL__LOAD_SYSDRV,
        "PSP_BL__LOAD_SYSDRV",
    ),
    (
        psp::PSP_FW_TYPE_PSP_SOC_DRV,
        psp::PSP_BL__LOAD_SOCDRV,
        "PSP_BL__LOAD_SOCDRV",
    ),
    (
        psp::PSP_FW_TYPE_PSP_INTF_DRV,
        psp::PSP_BL__LOAD_INTFDRV,
        "PSP_BL__LOAD_INTFDRV",
    ),
    (
        psp::PSP_FW_TYPE_PSP_DBG_DRV,
        psp::PSP_BL__LOAD_DBGDRV,
        "PSP_BL__LOAD_DBGDRV",
    ),
    (
        psp::PSP_FW_TYPE_PSP_RAS_DRV,
        psp::PSP_BL__LOAD_RASDRV,
        "PSP_BL__LOAD_RASDRV",
    ),
    (
        psp::PSP_FW_TYPE_PSP_SOS,
        psp::PSP_BL__LOAD_SOSDRV,
        "PSP_BL__LOAD_SOSDRV",
    ),
];

/// Whether the PSP of MP0 `version` sets its TMR up at boot, so that the driver
/// sends no `SETUP_TMR` (tinygrad 0.14: `boot_time_tmr` and `autoload_tmr` for MP0
/// 14.0.2 and 14.0.3; Linux 6.12's `psp_tmr_load` skips them alike). Every other
/// version the transport knows gets the TMR from the driver.
pub fn boot_time_tmr(version: [u8; 3]) -> bool {
    matches!(version, [14, 0, 2] | [14, 0, 3])
}

/// Where the PSP's buffers are in VRAM (byte offsets).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PspBuffers {
    /// The 1 MiB staging buffer (`msg1`).
    pub msg1: u64,
    /// The command buffer.
    pub cmd: u64,
    /// The fence.
    pub fence: u64,
    /// The ring.
    pub ring: u64,
    /// The TMR.
    pub tmr: u64,
}

impl PspBuffers {
    /// Places the buffers in the boot region of a GPU with `vram_size` bytes: from
    /// `vram_size - 64 MiB`, each aligned as tinygrad asks, within 32 MiB.
    pub fn place(vram_size: u64) -> Option<Self> {
        let start = vram_size.checked_sub(64 << 20)?;
        let end = start.checked_add(32 << 20)?;
        let mut next = start;
        let mut take = |size: u64, align: u64| {
            let at = next.checked_next_multiple_of(align)?;
            next = at.checked_add(size)?;
            (next <= end).then_some(at)
        };
        Some(PspBuffers {
            msg1: take(u64::from(psp::PSP_1_MEG), u64::from(psp::PSP_1_MEG))?,
            cmd: take(u64::from(psp::PSP_CMD_BUFFER_SIZE), 0x1000)?,
            fence: take(u64::from(psp::PSP_FENCE_BUFFER_SIZE), 0x1000)?,
            ring: take(u64::from(RING_SIZE), 0x1000)?,
            tmr: take(MAX_TMR_SIZE, u64::from(psp::PSP_TMR_ALIGNMENT))?,
        })
    }
}

/// The PSP of an [`AmDevice`].
#[derive(Debug)]
pub struct Psp<'a> {
    dev: &'a AmDevice,
    bufs: PspBuffers,
    mc_base: u64,
    c2p35: Reg,
    c2p36: Reg,
    c2p64: Reg,
    c2p67: Reg,
    c2p69: Reg,
    c2p70: Reg,
    c2p71: Reg,
    c2p81: Reg,
    hdp_flush: Reg,
    /// The TMR size the TOC asked for, once known.
    pub tmr_size: Option<u32>,
}

impl<'a> Psp<'a> {
    /// The PSP's registers and buffers on `dev`; the memory-controller base of VRAM
    /// from `MMMC_VM_FB_LOCATION_BASE` (tinygrad's `mc_base`).
    pub fn new(dev: &'a AmDevice) -> Result<Self> {
        let (r, t) = (dev.regs(), dev.regs().tables());
        let mp0 = |reg| r.resolve(Ip::Mp0, 0, reg);
        let bufs = PspBuffers::place(dev.vram_size()).ok_or(AmError::VramTooSmall {
            vram_size: dev.vram_size(),
            min: crate::vram_layout::MIN_VRAM,
            what: "the PSP's buffers in the boot region",
        })?;
        let mc_base = u64::from(r.read_reg(Ip::Mmhub, t.mmhub.MMMC_VM_FB_LOCATION_BASE)?) << 24;
        Ok(Psp {
            dev,
            bufs,
            mc_base,
            c2p35: mp0(t.mp0.MP0_SMN_C2PMSG_35)?,
            c2p36: mp0(t.mp0.MP0_SMN_C2PMSG_36)?,
            c2p64: mp0(t.mp0.MP0_SMN_C2PMSG_64)?,
            c2p67: mp0(t.mp0.MP0_SMN_C2PMSG_67)?,
            c2p69: mp0(t.mp0.MP0_SMN_C2PMSG_69)?,
            c2p70: mp0(t.mp0.MP0_SMN_C2PMSG_70)?,
            c2p71: mp0(t.mp0.MP0_SMN_C2PMSG_71)?,
            c2p81: mp0(t.mp0.MP0_SMN_C2PMSG_81)?,
            hdp_flush: r.resolve(Ip::Nbio, 0, t.nbio.BIF_BX_PF0_GPU_HDP_FLUSH_REQ)?,
            tmr_size: None,
        })
    }

    /// Where the buffers are.
    pub fn buffers(&self) -> PspBuffers {
        self.bufs
    }

    /// The memory-controller address of VRAM offset `paddr`.
    pub fn mc(&self, paddr: u64) -> u64 {
        self.mc_base.wrapping_add(paddr)
    }

    /// Whether the sOS runs (`C2PMSG_81` non-zero).
    pub fn is_sos_alive(&self) -> bool {
        self.dev.regs().read(self.c2p81) != 0
    }

    /// The whole bring-up, in tinygrad 0.10.1's order. On MP0 14 (gfx12) as tinygrad
    /// 0.14 does it: the TOS SPL table from the sOS file's own `PSP_FW_TYPE_PSP_SPL`
    /// component, and no TMR set up by the driver ([`boot_time_tmr`]).
    pub fn init(&mut self, fw: &AmFirmware) -> Result<()> {
        let mp0 = self.dev.regs().versions().mp0;
        if !self.is_sos_alive() {
            for (fw_type, comp, name) in SOS_LOAD_ORDER {
                let fw_type = if comp == psp::PSP_BL__LOAD_TOS_SPL_TABLE && mp0[0] >= 14 {
                    psp::PSP_FW_TYPE_PSP_SPL
                } else {
                    fw_type
                };
                if let Some(bytes) = fw.sos.get(&fw_type) {
                    self.bootloader_load(comp, name, bytes)?;
                }
            }
            self.wait("sOS start", "MP0_SMN_C2PMSG_81", |p| p.is_sos_alive().then_some(()))?;
        }
        self.ring_create()?;
        self.tmr_init(fw)?;
        // The SMU's firmware goes before the TMR.
        self.load_ip_fw(&fw.smu)?;
        if !boot_time_tmr(mp0) {
            self.setup_tmr()?;
        }
        for d in &fw.descs {
            self.load_ip_fw(d)?;
        }
        self.submit(psp::GFX_CMD_ID_AUTOLOAD_RLC, &[], "AUTOLOAD_RLC")?;
        Ok(())
    }

    fn write_vram(&self, offset: u64, data: &[u8], what: &'static str) -> Result<()> {
        if self.dev.pci().vram().write(offset, data) {
            Ok(())
        } else {
            Err(self.dev.past_bar(what, offset, data.len() as u64))
        }
    }

    fn read_u32(&self, offset: u64) -> Result<u32> {
        let mut b = [0u8; 4];
        if self.dev.pci().vram().read(offset, &mut b) {
            Ok(u32::from_le_bytes(b))
        } else {
            Err(self.dev.past_bar("a PSP buffer", offset, 4))
        }
    }

    fn flush_hdp(&self) {
        self.dev.regs().write(self.hdp_flush, u32::MAX);
    }

    /// `_prep_msg1`: zero the staging buffer, copy `data`, flush HDP.
    fn prep_msg1(&self, data: &[u8]) -> Result<()> {
        let size = usize::try_from(psp::PSP_1_MEG).unwrap_or(usize::MAX);
        if data.len() > size {
            return Err(AmError::Psp {
                step: format!("stage {:#x} bytes (the staging buffer holds {size:#x})", data.len()),
                status: 0,
            });
        }
        let mut buf = vec![0u8; size];
        buf[..data.len()].copy_from_slice(data);
        self.write_vram(self.bufs.msg1, &buf, "the PSP firmware staging buffer")?;
        self.flush_hdp();
        Ok(())
    }

    /// Polls `f` until it gives a value or [`WAIT_REG_TIMEOUT`] passes.
    fn wait<T>(&self, step: &'static str, reg: &'static str, f: impl Fn(&Self) -> Option<T>) -> Result<T> {
        let start = Instant::now();
        loop {
            if let Some(v) = f(self) {
                return Ok(v);
            }
            if start.elapsed() >= WAIT_REG_TIMEOUT {
                return Err(AmError::Timeout {
                    step,
                    reg,
                    mask: 0,
                    value: 0,
                    last: 0,
                    timeout_ms: WAIT_REG_TIMEOUT.as_millis() as u64,
                });
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// `wait_reg`: `reg & mask == value` within [`WAIT_REG_TIMEOUT`].
    fn wait_reg(&self, step: &'static str, reg: Reg, mask: u32, value: u32) -> Result<u32> {
        self.dev.regs().wait(step, reg, mask, value, WAIT_REG_TIMEOUT)
    }

    /// Waits for the bootloader: ready, and a status of 0 in the low bits.
    fn wait_bootloader(&self, step: &str) -> Result<()> {
        let v = self.wait_reg("PSP bootloader", self.c2p35, READY, READY)?;
        match v & !READY {
            0 => Ok(()),
            status => Err(AmError::Psp {
                step: format!("bootloader {step}"),
                status,
            }),
        }
    }

    /// `_bootloader_load_component`.
    fn bootloader_load(&self, comp: u32, name: &str, data: &[u8]) -> Result<()> {
        self.wait_bootloader(name)?;
        self.prep_msg1(data)?;
        let regs = self.dev.regs();
        let addr = u32::try_from(self.mc(self.bufs.msg1) >> 20).map_err(|_| AmError::Psp {
            step: format!("bootloader {name}: staging address does not fit C2PMSG_36"),
            status: 0,
        })?;
        regs.write(self.c2p36, addr);
        regs.write(self.c2p35, comp);
        self.wait_bootloader(name)
    }

    /// `_ring_create`.
    fn ring_create(&self) -> Result<()> {
        let regs = self.dev.regs();
        if regs.read(self.c2p71) != 0 {
            regs.write(self.c2p64, psp::GFX_CTRL_CMD_ID_DESTROY_RINGS);
            // "There might be handshake issue with hardware which needs delay."
            std::thread::sleep(Duration::from_millis(20));
        }
        self.wait_reg("PSP ring create (sOS ready)", self.c2p64, READY, READY)?;
        let ring = self.mc(self.bufs.ring);
        regs.write(self.c2p69, ring as u32);
        regs.write(self.c2p70, (ring >> 32) as u32);
        regs.write(self.c2p71, RING_SIZE);
        regs.write(self.c2p64, psp::PSP_RING_TYPE__KM << 16);
        std::thread::sleep(Duration::from_millis(20));
        self.wait_reg("PSP ring create", self.c2p64, 0x8000_FFFF, READY)?;
        Ok(())
    }

    /// `_ring_submit` of a command with union dwords `args`; its response's word at
    /// `RESP_TMR_SIZE`.
    fn submit(&self, cmd_id: u32, args: &[u32], step: &str) -> Result<u32> {
        self.write_vram(self.bufs.cmd, &command(cmd_id, args), "the PSP command buffer")?;
        let regs = self.dev.regs();
        let wptr = regs.read(self.c2p67);
        let at = (u64::from(wptr) * 4) % u64::from(RING_SIZE);
        let (c, f) = (self.mc(self.bufs.cmd), self.mc(self.bufs.fence));
        self.write_vram(self.bufs.ring + at, &ring_frame(c, f, wptr), "a PSP ring frame")?;
        regs.write(self.c2p67, wptr.wrapping_add(FRAME_SIZE / 4));
        let fence = self.bufs.fence;
        self.wait("PSP ring fence", "fence", |p| {
            p.read_u32(fence).ok().filter(|&v| v == wptr).map(|_| ())
        })?;
        std::thread::sleep(Duration::from_millis(5));
        match self.read_u32(self.bufs.cmd + RESP_STATUS)? {
            0 => self.read_u32(self.bufs.cmd + RESP_TMR_SIZE),
            status => Err(AmError::Psp {
                step: step.to_string(),
                status,
            }),
        }
    }

    /// `_tmr_init`: the TOC gives the TMR size.
    fn tmr_init(&mut self, fw: &AmFirmware) -> Result<()> {
        let toc = fw.sos.get(&psp::PSP_FW_TYPE_PSP_TOC).ok_or_else(|| AmError::Psp {
            step: "LOAD_TOC: no TOC in the sOS firmware".into(),
            status: 0,
        })?;
        self.prep_msg1(toc)?;
        let m = self.mc(self.bufs.msg1);
        let size = u32::try_from(toc.len()).unwrap_or(u32::MAX);
        let tmr = self.submit(
            psp::GFX_CMD_ID_LOAD_TOC,
            &[m as u32, (m >> 32) as u32, size],
            "LOAD_TOC",
        )?;
        if u64::from(tmr) > MAX_TMR_SIZE {
            return Err(AmError::Psp {
                step: format!("LOAD_TOC: TMR size {tmr:#x} is more than the {MAX_TMR_SIZE:#x} set aside"),
                status: 0,
            });
        }
        self.tmr_size = Some(tmr);
        Ok(())
    }

    /// `_tmr_load_cmd`.
    fn setup_tmr(&self) -> Result<()> {
        let size = self.tmr_size.unwrap_or(0);
        let (mc, phys) = (self.mc(self.bufs.tmr), self.bufs.tmr);
        // tmr_flags: bitfield.virt_phy_addr (bit 1).
        self.submit(
            psp::GFX_CMD_ID_SETUP_TMR,
            &[
                mc as u32,
                (mc >> 32) as u32,
                size,
                1 << 1,
                phys as u32,
                (phys >> 32) as u32,
            ],
            "SETUP_TMR",
        )?;
        Ok(())
    }

    /// `_load_ip_fw_cmd`.
    fn load_ip_fw(&self, d: &FwImage) -> Result<()> {
        self.prep_msg1(&d.bytes)?;
        let m = self.mc(self.bufs.msg1);
        let size = u32::try_from(d.bytes.len()).unwrap_or(u32::MAX);
        self.submit(
            psp::GFX_CMD_ID_LOAD_IP_FW,
            &[m as u32, (m >> 32) as u32, size, d.fw_type],
            &format!("LOAD_IP_FW {}", d.name),
        )?;
        Ok(())
    }
}
