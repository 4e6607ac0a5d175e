//! The crate's one error type.

use std::path::PathBuf;

use amd_kfd::KfdError;
use amd_kfd::sys::SysError;

/// What went wrong in the driverless transport.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AmError {
    /// A system call failed (the call, path and errno are in the inner error).
    #[error(transparent)]
    Sys(#[from] SysError),
    /// A `VISIBLE_DEVICES` / `HIP_VISIBLE_DEVICES` value that does not select GPUs.
    #[error(transparent)]
    Visibility(KfdError),
    /// No PCI GPU at the index asked for.
    #[error("no PCI GPU {index}: {available} supported GPU(s) visible{}", if *available == 0 { " (tinygrad 0.10.1's driverless transport drives the Radeon RX 7900 XTX, PCI id 1002:744c)" } else { "" })]
    NoDevice {
        /// The index asked for.
        index: usize,
        /// How many supported GPUs are visible.
        available: usize,
    },
    /// A sysfs file (or another file the kernel writes) that is missing, unreadable
    /// or does not parse.
    #[error("{}: {msg}", path.display())]
    Sysfs {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        msg: String,
    },
    /// A step of taking the device (unbinding, resizing, VFIO, mapping a BAR) failed.
    #[error("{device}: {step}: {msg}")]
    Take {
        /// The PCI address (`0000:03:00.0`).
        device: String,
        /// The step (`unbind from amdgpu`, `VFIO_GROUP_SET_CONTAINER`, `map BAR 0`…).
        step: &'static str,
        /// What went wrong.
        msg: String,
    },
    /// The IP discovery binary read from VRAM is malformed.
    #[error("IP discovery binary at VRAM offset {vram_offset:#x}: {msg}")]
    Discovery {
        /// Where the binary starts in VRAM.
        vram_offset: u64,
        /// What is wrong (the table and the byte offset inside the binary).
        msg: String,
    },
    /// An IP block (or a register segment of it) the transport needs is not in the
    /// discovery table.
    #[error("IP block {ip} instance {instance}{}: not in the IP discovery table", seg.map(|s| format!(" segment {s}")).unwrap_or_default())]
    MissingIp {
        /// The block (`GC`, `MP0`, …).
        ip: &'static str,
        /// Its instance.
        instance: u8,
        /// The register segment, where a segment was missing.
        seg: Option<u8>,
    },
    /// A register address that does not fit in 32 bits (a base from the discovery
    /// table plus the register's offset overflowed).
    #[error("register {name} of {ip}: base {base:#x} + offset {offset:#x} overflows")]
    RegisterAddress {
        /// The register.
        name: &'static str,
        /// Its IP block.
        ip: &'static str,
        /// The segment base from discovery.
        base: u32,
        /// The register's offset in the segment.
        offset: u32,
    },
    /// A firmware file that is missing, or whose headers do not describe its
    /// contents.
    #[error("firmware {}: {msg}", path.display())]
    Firmware {
        /// The file (or, when missing, the path tried last).
        path: PathBuf,
        /// What is wrong.
        msg: String,
    },
    /// A register did not reach the value waited for in time.
    #[error(
        "{step}: timed out after {timeout_ms} ms waiting for {reg} & {mask:#x} == {value:#x} (last read {last:#x})"
    )]
    Timeout {
        /// The step (`PSP bootloader`, `PSP ring create`…).
        step: &'static str,
        /// The register's name.
        reg: &'static str,
        /// The mask.
        mask: u32,
        /// The value waited for.
        value: u32,
        /// The last value read.
        last: u32,
        /// How long it waited.
        timeout_ms: u64,
    },
    /// The PSP refused a step.
    #[error("PSP {step}: status {status:#x}")]
    Psp {
        /// The step (`LOAD_IP_FW GFX_FW_TYPE_RLC_G`, `bootloader PSP_BL__LOAD_SOSDRV`…).
        step: String,
        /// The status the PSP answered.
        status: u32,
    },
    /// The SMU answered a message with something other than `PPSMC_Result_OK`, or
    /// did not answer in time (`response` 0).
    #[error("SMU {msg} (argument {param:#x}): {}", smu_response(*response, *waited_ms))]
    Smu {
        /// The message (`PPSMC_MSG_…`).
        msg: &'static str,
        /// Its argument.
        param: u32,
        /// What `MP1_SMN_C2PMSG_90` held last (0: no answer).
        response: u32,
        /// How long the transport waited.
        waited_ms: u64,
    },
    /// An allocator has no room for the request.
    #[error("no {size:#x} bytes aligned to {align:#x} left in the {allocator} ({free:#x} bytes free)")]
    OutOfMemory {
        /// Which allocator: `VRAM`, `boot VRAM` or `GPU virtual address space`.
        allocator: &'static str,
        /// Bytes asked for.
        size: u64,
        /// Their alignment.
        align: u64,
        /// Bytes free (perhaps in pieces too small).
        free: u64,
    },
    /// A mapping request does not fit the page tables (overlap, unmapped range, bad
    /// alignment or size), or memory could not be prepared.
    #[error("{op}: {msg}")]
    Memory {
        /// The operation (`palloc`, `map_range`, `unmap_range`, …).
        op: &'static str,
        /// What is wrong.
        msg: String,
    },
    /// A ring the transport was asked to set up that the queue registers cannot
    /// describe (size, alignment, pipe, queue or doorbell out of range).
    #[error("{ring} ring: {msg}")]
    Ring {
        /// Which kind (`compute`, `SDMA`).
        ring: &'static str,
        /// What is wrong.
        msg: String,
    },
    /// A value read from the device (an interrupt vector, a pointer) that cannot be
    /// right.
    #[error("{what}: {msg}")]
    Device {
        /// What was read (`IH ring 0 write pointer`, …).
        what: &'static str,
        /// What is wrong with it.
        msg: String,
    },
}

fn smu_response(response: u32, waited_ms: u64) -> String {
    use crate::regs::generated::smu;
    match response {
        0 => format!("no response within {waited_ms} ms"),
        smu::PPSMC_Result_Failed => "response 0xff (PPSMC_Result_Failed)".into(),
        smu::PPSMC_Result_UnknownCmd => "response 0xfe (PPSMC_Result_UnknownCmd)".into(),
        smu::PPSMC_Result_CmdRejectedPrereq => "response 0xfd (PPSMC_Result_CmdRejectedPrereq)".into(),
        smu::PPSMC_Result_CmdRejectedBusy => "response 0xfc (PPSMC_Result_CmdRejectedBusy)".into(),
        r => format!("response {r:#x}"),
    }
}

/// Result of the driverless transport.
pub type Result<T> = std::result::Result<T, AmError>;
