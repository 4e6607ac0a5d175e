//! The PSP's GFX interface (`psp_gfx_if.h`, Linux 6.12, copied in `vendor/`): the
//! 64-byte frame the driver puts on the PSP's kernel-mode ring, and the 1 KiB command
//! buffer a frame points at, with its response. The driverless transport writes them
//! and reads the response; the mock GPU's PSP reads them and writes the response.
//!
//! The command union (`union psp_gfx_commands`) is kept as dwords: each command's
//! arguments are its first dwords, in the header's order. The structs keep the C
//! names and are `repr(C)`; `tests/psp_layout.rs` compares every size and field
//! offset with the header as a C compiler lays it out.

#![allow(non_camel_case_types)]

use zerocopy::{FromBytes, FromZeros, Immutable, IntoBytes, KnownLayout};

use crate::regs::generated::psp;

/// Bit 31 of `C2PMSG_35` (the bootloader) and of `C2PMSG_64` (the secure OS): set when
/// the PSP has taken the last command and is ready for the next
/// (`GFX_CMD_RESPONSE_MASK`).
pub const READY: u32 = psp::GFX_CMD_RESPONSE_MASK;

/// `struct psp_gfx_rb_frame`: one entry of the kernel-mode ring.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
pub struct psp_gfx_rb_frame {
    /// The command buffer's address (MC), low and high dwords.
    pub cmd_buf_addr_lo: u32,
    /// See `cmd_buf_addr_lo`.
    pub cmd_buf_addr_hi: u32,
    /// The command buffer's size in bytes.
    pub cmd_buf_size: u32,
    /// The fence's address (MC), low and high dwords.
    pub fence_addr_lo: u32,
    /// See `fence_addr_lo`.
    pub fence_addr_hi: u32,
    /// What the PSP writes to the fence when the command is done.
    pub fence_value: u32,
    /// The session id (RBI frames only), low and high dwords.
    pub sid_lo: u32,
    /// See `sid_lo`.
    pub sid_hi: u32,
    /// The VMID the frame's addresses are in.
    pub vmid: u8,
    /// 1: a destroy-context frame (RBI frames only).
    pub frame_type: u8,
    /// Zero.
    pub reserved1: [u8; 2],
    /// Zero.
    pub reserved2: [u32; 7],
}

const _: () = assert!(size_of::<psp_gfx_rb_frame>() == 64);

impl psp_gfx_rb_frame {
    /// The command buffer's address.
    pub fn cmd_buf_addr(&self) -> u64 {
        u64::from(self.cmd_buf_addr_hi) << 32 | u64::from(self.cmd_buf_addr_lo)
    }

    /// The fence's address.
    pub fn fence_addr(&self) -> u64 {
        u64::from(self.fence_addr_hi) << 32 | u64::from(self.fence_addr_lo)
    }
}

/// `struct psp_gfx_resp`: the PSP's answer to a command.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
pub struct psp_gfx_resp {
    /// The command's status (0: success).
    pub status: u32,
    /// The session a `LOAD_TA` opened.
    pub session_id: u32,
    /// Where `LOAD_IP_FW` put the firmware in the TMR, low and high dwords.
    pub fw_addr_lo: u32,
    /// See `fw_addr_lo`.
    pub fw_addr_hi: u32,
    /// The TMR size `LOAD_TOC` asks for.
    pub tmr_size: u32,
    /// Zero.
    pub reserved: [u32; 11],
    /// Command-specific answers (`union psp_gfx_uresp`), as dwords.
    pub uresp: [u32; 8],
}

const _: () = assert!(size_of::<psp_gfx_resp>() == 96);

/// Dwords from the command union's start to the response: the union and the reserved
/// bytes after it (`reserved_1`).
pub const CMD_DWORDS: usize = (864 - 28) / 4;

/// `struct psp_gfx_cmd_resp`: a command buffer, the response included.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
pub struct psp_gfx_cmd_resp {
    /// The buffer's size in bytes.
    pub buf_size: u32,
    /// `PSP_GFX_CMD_BUF_VERSION`.
    pub buf_version: u32,
    /// The command (`GFX_CMD_ID_*`).
    pub cmd_id: u32,
    /// A separate response buffer (unused: the response is in this one).
    pub resp_buf_addr_lo: u32,
    /// See `resp_buf_addr_lo`.
    pub resp_buf_addr_hi: u32,
    /// See `resp_buf_addr_lo`.
    pub resp_offset: u32,
    /// See `resp_buf_addr_lo`.
    pub resp_buf_size: u32,
    /// The command's arguments (`union psp_gfx_commands cmd`), then zeros.
    pub cmd: [u32; CMD_DWORDS],
    /// The response.
    pub resp: psp_gfx_resp,
    /// Zero.
    pub reserved_2: [u8; 1024 - 864 - 96],
}

const _: () = assert!(size_of::<psp_gfx_cmd_resp>() == 1024);

impl psp_gfx_cmd_resp {
    /// A command buffer for command `cmd_id` with the union's first dwords `args`
    /// (at most [`CMD_DWORDS`]; more are dropped), everything else zero.
    pub fn command(cmd_id: u32, args: &[u32]) -> Self {
        let mut c = Self::new_zeroed();
        c.cmd_id = cmd_id;
        for (d, a) in c.cmd.iter_mut().zip(args) {
            *d = *a;
        }
        c
    }
}

/// Byte offset of the response's status in the command buffer.
pub const RESP_STATUS: usize =
    std::mem::offset_of!(psp_gfx_cmd_resp, resp) + std::mem::offset_of!(psp_gfx_resp, status);
/// Byte offset of the response's TMR size in the command buffer.
pub const RESP_TMR_SIZE: usize =
    std::mem::offset_of!(psp_gfx_cmd_resp, resp) + std::mem::offset_of!(psp_gfx_resp, tmr_size);

crate::layout::layouts! {
    psp_gfx_rb_frame {
        cmd_buf_addr_lo, cmd_buf_addr_hi, cmd_buf_size, fence_addr_lo, fence_addr_hi, fence_value, sid_lo, sid_hi,
        vmid, frame_type, reserved1, reserved2,
    }
    psp_gfx_resp { status, session_id, fw_addr_lo, fw_addr_hi, tmr_size, reserved, uresp }
    psp_gfx_cmd_resp {
        buf_size, buf_version, cmd_id, resp_buf_addr_lo, resp_buf_addr_hi, resp_offset, resp_buf_size, cmd, resp,
        reserved_2,
    }
}
