//! The PSP (MP0 13.0.0; MP0 14.0.2/3, whose mailbox is named `MPASP_SMN_C2PMSG_*` at the
//! same places and whose TMR is set up at boot, so it takes firmware without a
//! `SETUP_TMR`) as the boot sees it through its C2PMSG mailbox: the
//! bootloader loading the sOS and its parts (`C2PMSG_35`/`36`), the sOS coming alive
//! (`C2PMSG_81`), the kernel-mode ring's create/destroy handshake (`C2PMSG_64`,
//! `69`/`70`/`71`) and commands submitted in that ring (`C2PMSG_67`, the write
//! pointer), read from VRAM and answered in VRAM as `psp_gfx_if.h` lays them out.
//!
//! Everything read from VRAM is hostile: addresses and sizes are checked against
//! VRAM, the ring is walked at most once around per write-pointer update, and a bad
//! command is answered with a status, never a panic.
//!
//! What is loaded is checked against the [`FirmwareCatalogue`] of the files the mock
//! serves: a LOAD_IP_FW image must be exactly one the catalogue holds for its
//! `GFX_FW_TYPE_*`, a LOAD_TOC table exactly a `PSP_FW_TYPE_PSP_TOC` component, and a
//! bootloader buffer exactly a component of the command's type followed by zeros.
//! The hardware's sOS checks each image's signature; a driver that cuts a file
//! wrongly (a header left on, a size or an offset off, the wrong part) fails that
//! check, and here fails the comparison: [`STATUS_BAD_IMAGE`], or
//! [`STATUS_NO_FIRMWARE`] for a type the catalogue has no file for.

use std::ops::Range;
use std::sync::Arc;

use amd_regs::psp_if::{self, psp_gfx_cmd_resp, psp_gfx_rb_frame};
use zerocopy::FromBytes;

use super::block::Vram;
use super::block::generated::{gc, mp, psp};
use super::block::{AmReg, Effect, RegisterBlock, Values};
use super::catalogue::FirmwareCatalogue;

/// The bootloader is ready for a command (`C2PMSG_35` bit 31); the sOS ring
/// interface is ready (`C2PMSG_64` bit 31).
pub use amd_regs::psp_if::READY;
/// What `C2PMSG_81` reads once the sOS runs (a sOS version).
pub const SOS_VERSION: u32 = 0x0036_0022;
/// The TMR size a LOAD_TOC answers (`resp.tmr_size`).
pub const TMR_SIZE: u32 = 0x0100_0000;
/// Status for a command with bad parameters (a firmware type, size or address the
/// PSP refuses): the low 16 bits of `TEE_ERROR_NOT_SUPPORTED`.
pub const STATUS_BAD_PARAMETER: u32 = psp::TEE_ERROR_NOT_SUPPORTED & psp::GFX_CMD_STATUS_MASK;
/// Status for a command that comes in the wrong order (an IP firmware before the TMR,
/// the sOS before its system driver, RLC autoload before the RLC firmware).
pub const STATUS_NOT_READY: u32 = psp::TEE_ERROR_CANCEL & psp::GFX_CMD_STATUS_MASK;
/// `TEE_ERROR_SECURITY` of the GlobalPlatform TEE API, the family of
/// `psp_gfx_if.h`'s `TEE_ERROR_CANCEL` and `TEE_ERROR_NOT_SUPPORTED` (which are
/// GlobalPlatform's values): an image that fails authentication.
pub const TEE_ERROR_SECURITY: u32 = 0xffff_000f;
/// `TEE_ERROR_ITEM_NOT_FOUND` of the GlobalPlatform TEE API.
pub const TEE_ERROR_ITEM_NOT_FOUND: u32 = 0xffff_0008;
/// Status for an image that is not exactly one the [`FirmwareCatalogue`] holds for
/// its type (wrong bytes, a wrong size, a header left on, another type's part): the
/// low 16 bits of [`TEE_ERROR_SECURITY`], as the sOS answers an image whose signature
/// does not check. Answered by LOAD_IP_FW, LOAD_TOC and the bootloader.
pub const STATUS_BAD_IMAGE: u32 = TEE_ERROR_SECURITY & psp::GFX_CMD_STATUS_MASK;
/// Status for a firmware type the [`FirmwareCatalogue`] has no image of (the mock
/// serves no file holding it): the low 16 bits of [`TEE_ERROR_ITEM_NOT_FOUND`].
pub const STATUS_NO_FIRMWARE: u32 = TEE_ERROR_ITEM_NOT_FOUND & psp::GFX_CMD_STATUS_MASK;

/// `struct psp_gfx_rb_frame`: 64 bytes.
const FRAME_BYTES: u32 = size_of::<psp_gfx_rb_frame>() as u32;
/// `struct psp_gfx_cmd_resp`: 1024 bytes, the response in it.
const CMD_BYTES: usize = size_of::<psp_gfx_cmd_resp>();

/// A component the bootloader loaded (`C2PMSG_35` command).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BootloaderLoad {
    /// The `PSP_BL__*` command.
    pub command: u32,
    /// VRAM offset of the 1 MiB buffer it was read from.
    pub vram_offset: u64,
    /// 0 for success, else the status the bootloader answered.
    pub status: u32,
}

/// A ring command the sOS executed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RingCommand {
    /// `GFX_CMD_ID_*`.
    pub cmd_id: u32,
    /// `LOAD_IP_FW`'s `fw_type` (a `GFX_FW_TYPE_*`), else 0.
    pub fw_type: u32,
    /// The image (LOAD_IP_FW), TOC (LOAD_TOC) or TMR (SETUP_TMR) size in bytes.
    pub size: u32,
    /// The response status written back (0: success).
    pub status: u32,
    /// The fence value written back.
    pub fence: u32,
}

/// A firmware image the PSP received through LOAD_IP_FW.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadedFirmware {
    /// `GFX_FW_TYPE_*`.
    pub fw_type: u32,
    /// The image's bytes.
    pub data: Vec<u8>,
}

#[derive(Debug, Clone, Copy)]
struct Addrs {
    c35: u32,
    c36: u32,
    c64: u32,
    c67: u32,
    c69: u32,
    c70: u32,
    c71: u32,
    c81: u32,
}

#[derive(Debug, Clone, Copy)]
struct Ring {
    /// VRAM offset and size in bytes.
    offset: u64,
    size: u32,
    /// Read pointer in dwords.
    rptr: u32,
}

/// The PSP's model.
#[derive(Debug)]
pub struct Psp {
    a: Addrs,
    range: Range<u32>,
    bootload_status: Option<u32>,
    cp_stat: Option<u32>,
    ring: Option<Ring>,
    tmr: Option<(u64, u32)>,
    /// The PSP sets its TMR up at boot (MP0 14.0.2/14.0.3): loads need no
    /// `SETUP_TMR`.
    boot_time_tmr: bool,
    /// Bootloader commands in order.
    pub bootloader: Vec<BootloaderLoad>,
    /// Ring commands in order.
    pub commands: Vec<RingCommand>,
    /// Firmware images received (LOAD_IP_FW that succeeded), in order.
    pub firmware: Vec<LoadedFirmware>,
    /// Whether RLC autoload ran.
    pub rlc_autoloaded: bool,
    /// Fault injection: the next ring command with this id (`None`: any) is not
    /// executed and answered with the status (kept across resets until it fires).
    pub fail_next: Option<(Option<u32>, u32)>,
    catalogue: Arc<FirmwareCatalogue>,
}

impl Psp {
    /// The model for MP0 registers placed by `addr`, or `None` if a register has no
    /// address. `bootload_status` and `cp_stat` are GC registers RLC autoload sets.
    pub(crate) fn new(
        t: &mp::Table,
        addr: impl Fn(AmReg) -> Option<u32>,
        bootload_status: Option<u32>,
        cp_stat: Option<u32>,
        catalogue: Arc<FirmwareCatalogue>,
        boot_time_tmr: bool,
    ) -> Option<Self> {
        let a = Addrs {
            c35: addr(t.MP0_SMN_C2PMSG_35)?,
            c36: addr(t.MP0_SMN_C2PMSG_36)?,
            c64: addr(t.MP0_SMN_C2PMSG_64)?,
            c67: addr(t.MP0_SMN_C2PMSG_67)?,
            c69: addr(t.MP0_SMN_C2PMSG_69)?,
            c70: addr(t.MP0_SMN_C2PMSG_70)?,
            c71: addr(t.MP0_SMN_C2PMSG_71)?,
            c81: addr(t.MP0_SMN_C2PMSG_81)?,
        };
        let lo = [a.c35, a.c36, a.c64, a.c67, a.c69, a.c70, a.c71, a.c81];
        let start = *lo.iter().min()?;
        let end = lo.iter().max()?.checked_add(1)?;
        Some(Psp {
            a,
            range: start..end,
            bootload_status,
            cp_stat,
            ring: None,
            tmr: None,
            boot_time_tmr,
            bootloader: Vec::new(),
            commands: Vec::new(),
            firmware: Vec::new(),
            rlc_autoloaded: false,
            fail_next: None,
            catalogue,
        })
    }

    /// Whether the TMR is there: set up by `SETUP_TMR`, or by the PSP itself at boot.
    fn tmr_ready(&self) -> bool {
        self.boot_time_tmr || self.tmr.is_some()
    }

    /// What loads are checked against.
    pub fn catalogue(&self) -> &FirmwareCatalogue {
        &self.catalogue
    }

    pub(crate) fn range(&self) -> Range<u32> {
        self.range.clone()
    }

    fn sos_alive(&self, v: &Values) -> bool {
        v.get(self.a.c81) != 0
    }

    fn bootloader_cmd(&mut self, v: &mut Values, vram: Option<&Vram>, command: u32) {
        const KNOWN: [u32; 8] = [
            psp::PSP_BL__LOAD_KEY_DATABASE,
            psp::PSP_BL__LOAD_TOS_SPL_TABLE,
            psp::PSP_BL__LOAD_SYSDRV,
            psp::PSP_BL__LOAD_SOCDRV,
            psp::PSP_BL__LOAD_INTFDRV,
            psp::PSP_BL__LOAD_DBGDRV,
            psp::PSP_BL__LOAD_RASDRV,
            psp::PSP_BL__LOAD_SOSDRV,
        ];
        let mc = u64::from(v.get(self.a.c36)) << 20;
        let off = vram.and_then(|m| m.mc_to_offset(v, mc, u64::from(psp::PSP_1_MEG)));
        let sysdrv_loaded = self
            .bootloader
            .iter()
            .any(|b| b.command == psp::PSP_BL__LOAD_SYSDRV && b.status == 0);
        let status = if !KNOWN.contains(&command) {
            psp::PSP_ERR_UNKNOWN_COMMAND
        } else if off.is_none() || self.sos_alive(v) {
            STATUS_BAD_PARAMETER
        } else if command == psp::PSP_BL__LOAD_SOSDRV && !sysdrv_loaded {
            STATUS_NOT_READY
        } else {
            match (off, vram) {
                (Some(off), Some(vram)) => self.check_component(vram, off, command),
                _ => STATUS_BAD_PARAMETER,
            }
        };
        if status == 0 && command == psp::PSP_BL__LOAD_SOSDRV {
            v.set(self.a.c81, SOS_VERSION);
            v.set(self.a.c64, READY);
        }
        self.bootloader.push(BootloaderLoad {
            command,
            vram_offset: off.unwrap_or(u64::MAX),
            status,
        });
        v.set(self.a.c35, READY | status);
    }

    /// The components `command` takes: `PSP_BL__LOAD_TOS_SPL_TABLE` takes the SPL
    /// table (what amdgpu sends) or the key database (what tinygrad 0.10.1 sends
    /// before MP0 14.0.0).
    fn component_types(command: u32) -> &'static [u32] {
        match command {
            psp::PSP_BL__LOAD_KEY_DATABASE => &[psp::PSP_FW_TYPE_PSP_KDB],
            psp::PSP_BL__LOAD_TOS_SPL_TABLE => &[psp::PSP_FW_TYPE_PSP_SPL, psp::PSP_FW_TYPE_PSP_KDB],
            psp::PSP_BL__LOAD_SYSDRV => &[psp::PSP_FW_TYPE_PSP_SYS_DRV],
            psp::PSP_BL__LOAD_SOCDRV => &[psp::PSP_FW_TYPE_PSP_SOC_DRV],
            psp::PSP_BL__LOAD_INTFDRV => &[psp::PSP_FW_TYPE_PSP_INTF_DRV],
            psp::PSP_BL__LOAD_DBGDRV => &[psp::PSP_FW_TYPE_PSP_DBG_DRV],
            psp::PSP_BL__LOAD_RASDRV => &[psp::PSP_FW_TYPE_PSP_RAS_DRV],
            psp::PSP_BL__LOAD_SOSDRV => &[psp::PSP_FW_TYPE_PSP_SOS],
            _ => &[],
        }
    }

    /// The bootloader's check of the 1 MiB buffer at VRAM offset `off`: a
    /// component `command` takes, then zeros.
    fn check_component(&self, vram: &Vram, off: u64, command: u32) -> u32 {
        let mut buf = vec![0u8; psp::PSP_1_MEG as usize];
        if !vram.read(off, &mut buf) {
            return STATUS_BAD_PARAMETER;
        }
        match self.catalogue.holds_component(Self::component_types(command), &buf) {
            None => STATUS_NO_FIRMWARE,
            Some(false) => STATUS_BAD_IMAGE,
            Some(true) => 0,
        }
    }

    fn ring_ctrl(&mut self, v: &mut Values, vram: Option<&Vram>, value: u32) {
        if !self.sos_alive(v) {
            // No sOS: nobody answers.
            return;
        }
        let status = if value == psp::GFX_CTRL_CMD_ID_DESTROY_RINGS {
            self.ring = None;
            0
        } else if value == psp::PSP_RING_TYPE__KM << 16 {
            let mc = u64::from(v.get(self.a.c69)) | u64::from(v.get(self.a.c70)) << 32;
            let size = v.get(self.a.c71);
            let off = vram.and_then(|m| m.mc_to_offset(v, mc, u64::from(size)));
            match off {
                Some(offset) if size >= FRAME_BYTES && size % FRAME_BYTES == 0 && size <= psp::PSP_1_MEG => {
                    self.ring = Some(Ring { offset, size, rptr: 0 });
                    v.set(self.a.c67, 0);
                    0
                }
                _ => STATUS_BAD_PARAMETER,
            }
        } else {
            psp::PSP_ERR_UNKNOWN_COMMAND
        };
        v.set(self.a.c64, READY | status);
    }

    fn submit(&mut self, v: &mut Values, vram: Option<&Vram>, wptr: u32) {
        let (Some(mut ring), Some(vram)) = (self.ring, vram) else {
            return;
        };
        let ring_dwords = ring.size / 4;
        let frame_dwords = FRAME_BYTES / 4;
        // At most one trip around the ring per update.
        for _ in 0..ring.size / FRAME_BYTES {
            if ring.rptr % ring_dwords == wptr % ring_dwords || wptr % frame_dwords != 0 {
                break;
            }
            let pos = u64::from((ring.rptr % ring_dwords) * 4);
            let mut frame = [0u8; FRAME_BYTES as usize];
            if !vram.read(ring.offset + pos, &mut frame) {
                break;
            }
            self.frame(v, vram, &frame);
            ring.rptr = ring.rptr.wrapping_add(frame_dwords);
        }
        self.ring = Some(ring);
    }

    fn frame(&mut self, v: &mut Values, vram: &Vram, frame: &[u8]) {
        let Ok(frame) = psp_gfx_rb_frame::read_from_bytes(frame) else {
            return;
        };
        let (cmd_mc, fence_mc, fence) = (frame.cmd_buf_addr(), frame.fence_addr(), frame.fence_value);
        let Some(cmd_off) = vram.mc_to_offset(v, cmd_mc, CMD_BYTES as u64) else {
            return;
        };
        let mut cmd = [0u8; CMD_BYTES];
        if !vram.read(cmd_off, &mut cmd) {
            return;
        }
        let Ok(cmd) = psp_gfx_cmd_resp::read_from_bytes(&cmd) else {
            return;
        };
        let cmd_id = cmd.cmd_id;
        let arg = |i: usize| cmd.cmd[i];
        let mut rec = RingCommand {
            cmd_id,
            fw_type: 0,
            size: 0,
            status: 0,
            fence,
        };
        let mut tmr_size = 0;
        let injected = match self.fail_next {
            Some((want, status)) if want.is_none_or(|w| w == cmd_id) => {
                self.fail_next = None;
                Some(status)
            }
            _ => None,
        };
        rec.status = if let Some(status) = injected {
            status
        } else {
            match cmd_id {
                psp::GFX_CMD_ID_LOAD_TOC => {
                    rec.size = arg(2);
                    let mc = u64::from(arg(0)) | u64::from(arg(1)) << 32;
                    let status = self.load_toc(v, vram, mc, rec.size);
                    if status == 0 {
                        tmr_size = TMR_SIZE;
                    }
                    status
                }
                psp::GFX_CMD_ID_SETUP_TMR => {
                    rec.size = arg(2);
                    let mc = u64::from(arg(0)) | u64::from(arg(1)) << 32;
                    match vram.mc_to_offset(v, mc, u64::from(rec.size)) {
                        Some(off) if rec.size != 0 && rec.size % 4096 == 0 && mc % 4096 == 0 => {
                            self.tmr = Some((off, rec.size));
                            0
                        }
                        _ => STATUS_BAD_PARAMETER,
                    }
                }
                psp::GFX_CMD_ID_LOAD_IP_FW => {
                    let mc = u64::from(arg(0)) | u64::from(arg(1)) << 32;
                    rec.size = arg(2);
                    rec.fw_type = arg(3);
                    self.load_ip_fw(v, vram, mc, rec.size, rec.fw_type)
                }
                psp::GFX_CMD_ID_AUTOLOAD_RLC => {
                    let has_rlc = self.firmware.iter().any(|f| f.fw_type == psp::GFX_FW_TYPE_RLC_G);
                    if !self.tmr_ready() || !has_rlc {
                        STATUS_NOT_READY
                    } else {
                        self.rlc_autoloaded = true;
                        if let Some(r) = self.bootload_status {
                            v.set(r, gc::RLC_RLCS_BOOTLOAD_STATUS__BOOTLOAD_COMPLETE_MASK);
                        }
                        if let Some(r) = self.cp_stat {
                            v.set(r, 0);
                        }
                        0
                    }
                }
                _ => psp::PSP_ERR_UNKNOWN_COMMAND,
            }
        };
        // The response's status and TMR size; then the fence.
        let _ = vram.write(cmd_off + psp_if::RESP_STATUS as u64, &rec.status.to_le_bytes());
        let _ = vram.write(cmd_off + psp_if::RESP_TMR_SIZE as u64, &tmr_size.to_le_bytes());
        if let Some(f) = vram.mc_to_offset(v, fence_mc, 4) {
            let _ = vram.write(f, &fence.to_le_bytes());
        }
        self.commands.push(rec);
    }

    /// LOAD_TOC: the table must be a `PSP_FW_TYPE_PSP_TOC` component of the sOS file.
    fn load_toc(&self, v: &Values, vram: &Vram, mc: u64, size: u32) -> u32 {
        let off = vram.mc_to_offset(v, mc, u64::from(size));
        let Some(off) = off.filter(|_| size != 0 && size <= psp::PSP_1_MEG) else {
            return STATUS_BAD_PARAMETER;
        };
        let mut data = vec![0u8; size as usize];
        if !vram.read(off, &mut data) {
            return STATUS_BAD_PARAMETER;
        }
        let tocs = self.catalogue.components(psp::PSP_FW_TYPE_PSP_TOC);
        if tocs.is_empty() {
            STATUS_NO_FIRMWARE
        } else if tocs.contains(&data.as_slice()) {
            0
        } else {
            STATUS_BAD_IMAGE
        }
    }

    fn load_ip_fw(&mut self, v: &Values, vram: &Vram, mc: u64, size: u32, fw_type: u32) -> u32 {
        let known = fw_type != psp::GFX_FW_TYPE_NONE && fw_type < psp::GFX_FW_TYPE_MAX;
        let off = vram.mc_to_offset(v, mc, u64::from(size));
        let Some(off) = off.filter(|_| known && size != 0 && size <= psp::PSP_1_MEG) else {
            return STATUS_BAD_PARAMETER;
        };
        // The SMU's firmware goes first (before the TMR); every other one needs it.
        if fw_type != psp::GFX_FW_TYPE_SMU && !self.tmr_ready() {
            return STATUS_NOT_READY;
        }
        let mut data = vec![0u8; size as usize];
        if !vram.read(off, &mut data) {
            return STATUS_BAD_PARAMETER;
        }
        match self.catalogue.holds_image(fw_type, &data) {
            None => STATUS_NO_FIRMWARE,
            Some(false) => STATUS_BAD_IMAGE,
            Some(true) => {
                self.firmware.push(LoadedFirmware { fw_type, data });
                0
            }
        }
    }
}

impl RegisterBlock for Psp {
    fn write(&mut self, v: &mut Values, vram: Option<&Vram>, reg: u32, value: u32) -> Effect {
        if reg == self.a.c35 {
            self.bootloader_cmd(v, vram, value);
        } else if reg == self.a.c64 {
            self.ring_ctrl(v, vram, value);
        } else if reg == self.a.c67 {
            self.submit(v, vram, value);
        } else if reg == self.a.c81 {
            // Read-only to the driver: the sOS's own value stays.
            let alive = self
                .bootloader
                .iter()
                .any(|b| b.command == psp::PSP_BL__LOAD_SOSDRV && b.status == 0);
            v.set(self.a.c81, if alive { SOS_VERSION } else { 0 });
        }
        Effect::None
    }

    fn reset(&mut self, v: &mut Values) {
        v.set(self.a.c35, READY);
        self.ring = None;
        self.tmr = None;
        self.bootloader.clear();
        self.commands.clear();
        self.firmware.clear();
        self.rlc_autoloaded = false;
    }

    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        self
    }
}
