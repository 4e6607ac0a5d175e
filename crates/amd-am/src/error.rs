//! The crate's one error type.

use std::path::PathBuf;

use amd_kfd::KfdError;
use amd_kfd::sys::SysError;

/// What went wrong in the driverless transport.
///
/// A request the transport refuses (a page-table range, an allocation, a ring
/// description, a doorbell slot, a VRAM access past BAR 0) has its own variant
/// holding the values involved, with a message naming the argument and the fix;
/// nothing is written when it is refused:
///
/// ```
/// use amd_am::{AmError, MapProblem, RingProblem};
/// use amd_am::gmc::{PAGE, VA_BASE};
///
/// let e = AmError::MapRange {
///     op: "map_range",
///     va: VA_BASE + 0x10,
///     size: PAGE,
///     problem: MapProblem::Misaligned { align: PAGE },
/// };
/// assert_eq!(
///     e.to_string(),
///     "map_range of 0x1000 bytes at 0x7f0000000010: not whole 0x1000-byte pages: align the address and the size to 0x1000"
/// );
/// let e = AmError::RingSetup {
///     ring: "SDMA",
///     field: "ring_size",
///     value: 0x3000,
///     problem: RingProblem::NotPowerOfTwo { min: 4 },
/// };
/// assert_eq!(
///     e.to_string(),
///     "SDMA ring: ring_size 0x3000: not a power of two of at least 4 bytes: pass a power of two"
/// );
/// ```
///
/// Free text remains only where it renders what a file, the kernel or the device
/// gave, which has no fixed shape: [`AmError::Sysfs`], [`AmError::Take`],
/// [`AmError::Discovery`], [`AmError::Firmware`] and [`AmError::Device`] (each
/// variant's documentation says why).
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
    /// or does not parse. The message is text because it quotes the file: the line
    /// and what it holds, which the kernel writes in many shapes.
    #[error("{}: {msg}", path.display())]
    Sysfs {
        /// The file.
        path: PathBuf,
        /// What is wrong (the line number and the text found, where it parses badly).
        msg: String,
    },
    /// A step of taking the device (unbinding, resizing, VFIO, mapping a BAR) failed.
    /// The message is text because it is what the kernel answered (a system call's
    /// error rendered with its path and errno, or what a VFIO link points to).
    #[error("{device}: {step}: {msg}")]
    Take {
        /// The PCI address (`0000:03:00.0`).
        device: String,
        /// The step (`unbind`, `VFIO_GROUP_SET_CONTAINER`, `map BAR 0 (VRAM)`…).
        step: &'static str,
        /// What the kernel answered.
        msg: String,
    },
    /// The IP discovery binary read from VRAM is malformed. The message is text
    /// because it describes the device's binary: the table, the field and the byte
    /// offset inside it, of many layouts.
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
    /// An IP block whose version no register table covers: the GPU is of a
    /// generation the transport does not drive.
    #[error("IP block {ip} {}.{}.{}: no register table for this version (the driverless transport knows the IP versions of GC 11 and GC 12)", version[0], version[1], version[2])]
    UnsupportedIp {
        /// The block (`GC`, `MP0`, …).
        ip: &'static str,
        /// Its version in the discovery table.
        version: [u8; 3],
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
    /// A firmware file that cannot be read, or whose headers do not describe its
    /// contents. The message is text because it describes the file: which header,
    /// field or image is wrong and where, in the many header versions AMD ships.
    #[error("firmware {}: {msg}", path.display())]
    Firmware {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        msg: String,
    },
    /// A firmware file found in none of the directories searched.
    #[error(
        "firmware {name}: not found (tried {}; Debian ships it in firmware-amd-graphics, or set AM_FIRMWARE_DIR)",
        tried.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
    )]
    FirmwareMissing {
        /// The file's name (`gc_11_0_0_mec.bin`).
        name: String,
        /// The paths tried, in order.
        tried: Vec<PathBuf>,
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
    /// An allocation size the allocator does not take: 0, or one that overflows
    /// when rounded up to a page.
    #[error(
        "{op}: a size of {size:#x} bytes: ask for at least 1 byte, and few enough that rounding up to 4 KiB pages does not overflow"
    )]
    AllocSize {
        /// The operation (`palloc`, `valloc`).
        op: &'static str,
        /// The size asked for.
        size: u64,
    },
    /// An allocation alignment that is not a power of two.
    #[error("{op}: alignment {align:#x} is not a power of two: pass a power of two")]
    AllocAlign {
        /// The operation (`palloc`).
        op: &'static str,
        /// The alignment asked for.
        align: u64,
    },
    /// `palloc` asked for boot memory after the boot (`boot` true), or for main
    /// memory during it (`boot` false); tinygrad 0.10.1 asserts the same.
    #[error("palloc with boot = {boot}: {}", if *boot { "the boot is over, only main memory is left: pass boot = false" } else { "during the boot only boot memory can be allocated: pass boot = true until Gmc::booting is false" })]
    AllocPhase {
        /// What was asked for.
        boot: bool,
    },
    /// Memory given back that no allocation starts at.
    #[error("{op}: no allocation starts at VRAM offset {paddr:#x}: pass an address palloc returned, and free it once")]
    NotAllocated {
        /// The operation (`pfree`).
        op: &'static str,
        /// The address given.
        paddr: u64,
    },
    /// A page-table range the GMC refuses (`map_range`, `unmap_range`); nothing is
    /// written.
    #[error("{op} of {size:#x} bytes at {va:#x}: {problem}")]
    MapRange {
        /// The operation (`map_range`, `unmap_range`).
        op: &'static str,
        /// The GPU virtual address asked for.
        va: u64,
        /// The range's size in bytes (for `map_range`, the pieces' sum, saturated
        /// where it overflows).
        size: u64,
        /// What is wrong.
        problem: MapProblem,
    },
    /// Host memory `Gmc::map_host` cannot map; nothing is mapped.
    #[error("map_host of {len:#x} bytes at host address {host:#x}: {problem}")]
    MapHost {
        /// The host address given.
        host: u64,
        /// Its length in bytes.
        len: u64,
        /// What is wrong.
        problem: HostProblem,
    },
    /// An access to VRAM through BAR 0 that lies past the BAR's end.
    #[error("{what}: {len:#x} bytes at VRAM offset {offset:#x} lie past BAR 0 ({bar_size:#x} bytes){}", past_bar(*offset, *len, *vram_size))]
    PastBar {
        /// What was read or written (`the MQD`, `a page-table entry`, `the IH ring`…).
        what: &'static str,
        /// The VRAM offset.
        offset: u64,
        /// Bytes accessed.
        len: u64,
        /// BAR 0's size.
        bar_size: u64,
        /// VRAM's size (`RCC_CONFIG_MEMSIZE`).
        vram_size: u64,
    },
    /// A GPU with less VRAM than the transport lays out.
    #[error(
        "{vram_size:#x} bytes ({} MiB) of VRAM (RCC_CONFIG_MEMSIZE) are too few for {what}: it needs at least {min:#x} bytes",
        vram_size >> 20
    )]
    VramTooSmall {
        /// VRAM's size.
        vram_size: u64,
        /// The least that works.
        min: u64,
        /// What does not fit (`the discovery binary 64 KiB below the top`, `the
        /// 64 MiB kept at the top and the boot region`).
        what: &'static str,
    },
    /// A memory-controller address past 64 bits: the base from
    /// `MMMC_VM_FB_LOCATION_BASE` plus a VRAM offset.
    #[error(
        "memory-controller address {mc_base:#x} (MMMC_VM_FB_LOCATION_BASE) + VRAM offset {offset:#x} overflows 64 bits: pass a VRAM offset below VRAM's size"
    )]
    McOverflow {
        /// The memory-controller address of VRAM offset 0.
        mc_base: u64,
        /// The VRAM offset.
        offset: u64,
    },
    /// A ring size or address its queue registers cannot describe; refused before
    /// anything is allocated or written.
    #[error("{ring} ring: {field} {value:#x}: {problem}")]
    RingSetup {
        /// Which kind (`compute`, `SDMA`).
        ring: &'static str,
        /// The description's field (`ring_size`, `eop_size`, `ring`, `eop`, `rptr`,
        /// `wptr`).
        field: &'static str,
        /// Its value.
        value: u64,
        /// What is wrong.
        problem: RingProblem,
    },
    /// A ring's pipe, queue or doorbell outside the range the hardware has or its
    /// register field holds; refused before anything is allocated or written.
    #[error("{ring} ring: {field} {value} is out of range: use 0 to {max}")]
    RingIndex {
        /// Which kind (`compute`, `SDMA`).
        ring: &'static str,
        /// The description's field (`pipe`, `queue`, `doorbell`).
        field: &'static str,
        /// Its value.
        value: u32,
        /// The largest value taken.
        max: u32,
    },
    /// A doorbell slot outside BAR 2.
    #[error("doorbell slot {index} is outside BAR 2 ({bar_size:#x} bytes: slots 0 to {}): ring a slot a queue was set up with", (bar_size / 8).saturating_sub(1))]
    DoorbellSlot {
        /// The 64-bit slot asked for.
        index: u32,
        /// BAR 2's size in bytes.
        bar_size: u64,
    },
    /// A value read from the device (an interrupt ring pointer, a page-table entry
    /// in VRAM, an SMU answer) that cannot be right. The message is text because it
    /// describes the device's value in the terms of the register or table it came
    /// from.
    #[error("{what}: {msg}")]
    Device {
        /// What was read (`IH ring 0 write pointer`, …).
        what: &'static str,
        /// What is wrong with it.
        msg: String,
    },
}

/// What is wrong with a page-table range ([`AmError::MapRange`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum MapProblem {
    /// The range's end (or the sum of the pieces' sizes) overflows 64 bits.
    #[error("the range's end overflows 64 bits: pass a smaller size")]
    Overflow,
    /// An empty range.
    #[error("an empty range: map or unmap at least one {page:#x}-byte page")]
    Empty {
        /// The page size.
        page: u64,
    },
    /// The address or the size is not a whole number of pages.
    #[error("not whole {align:#x}-byte pages: align the address and the size to {align:#x}")]
    Misaligned {
        /// The page size.
        align: u64,
    },
    /// The range leaves the VM aperture.
    #[error("outside the VM aperture {base:#x}..{end:#x}: take addresses from Gmc::alloc_vaddr")]
    OutsideAperture {
        /// The aperture's first address.
        base: u64,
        /// The address past its end.
        end: u64,
    },
    /// A physical piece that is not whole pages (or is empty).
    #[error(
        "physical piece {paddr:#x} + {len:#x}: not whole {align:#x}-byte pages: align each piece's address and size to {align:#x}"
    )]
    PhysicalMisaligned {
        /// The piece's address.
        paddr: u64,
        /// Its size.
        len: u64,
        /// The page size.
        align: u64,
    },
    /// A physical piece that ends past the GPU's physical address space.
    #[error("physical piece {paddr:#x} + {len:#x} ends past the {limit:#x}-byte physical address space (44 bits)")]
    PastAddressSpace {
        /// The piece's address.
        paddr: u64,
        /// Its size.
        len: u64,
        /// The address space's size.
        limit: u64,
    },
    /// A VRAM piece that ends past VRAM.
    #[error(
        "VRAM piece {paddr:#x} + {len:#x} ends past VRAM ({vram_size:#x} bytes): pass VRAM offsets palloc returned, or MapFlags::system for bus addresses"
    )]
    PastVram {
        /// The piece's VRAM offset.
        paddr: u64,
        /// Its size.
        len: u64,
        /// VRAM's size.
        vram_size: u64,
    },
    /// A page of the range is mapped already (by a leaf of `page_size` bytes).
    #[error(
        "{at:#x} is already mapped by a {page_size:#x}-byte page (entry {entry:#x}): unmap it first or map at another address"
    )]
    AlreadyMapped {
        /// The first address of the range found mapped.
        at: u64,
        /// The bytes the existing leaf covers.
        page_size: u64,
        /// The existing entry.
        entry: u64,
    },
    /// A page of the range is not mapped.
    #[error("{at:#x} is not mapped: unmap only what map_range mapped")]
    NotMapped {
        /// The first address found unmapped.
        at: u64,
    },
    /// The range covers part of a larger page only.
    #[error(
        "{at:#x} lies in a {page_size:#x}-byte page the range covers only in part: unmap whole pages (the range they were mapped with)"
    )]
    CutsPage {
        /// The address inside the page.
        at: u64,
        /// The page's size.
        page_size: u64,
    },
}

/// What is wrong with host memory given to `Gmc::map_host` ([`AmError::MapHost`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HostProblem {
    /// The address or length is not whole pages, the length is 0, or the end
    /// overflows.
    #[error("not whole {align:#x}-byte pages: pass a page-aligned address and a non-zero length of whole pages")]
    NotPages {
        /// The page size.
        align: u64,
    },
    /// More pages than this platform's `usize` counts.
    #[error("too long for this platform's address space")]
    TooLong,
    /// `/proc/self/pagemap` gave fewer bytes than asked for.
    #[error("/proc/self/pagemap gave {got} of {wanted} bytes")]
    ShortPagemap {
        /// Bytes read.
        got: usize,
        /// Bytes asked for.
        wanted: usize,
    },
    /// A page `/proc/self/pagemap` gives no frame for.
    #[error(
        "page {page:#x}: /proc/self/pagemap gives no frame (entry {entry:#x}): map and lock the memory first; reading frames needs CAP_SYS_ADMIN"
    )]
    NoFrame {
        /// The page's host address.
        page: u64,
        /// Its pagemap entry.
        entry: u64,
    },
    /// A frame number whose bus address overflows 64 bits.
    #[error("page {page:#x}: the frame of pagemap entry {entry:#x} overflows 64 bits")]
    FrameOverflow {
        /// The page's host address.
        page: u64,
        /// Its pagemap entry.
        entry: u64,
    },
}

/// What is wrong with a ring's size or address ([`AmError::RingSetup`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RingProblem {
    /// A size that is not a power of two of at least `min` bytes.
    #[error("not a power of two of at least {min} bytes: pass a power of two")]
    NotPowerOfTwo {
        /// The smallest size taken.
        min: u64,
    },
    /// A size past what the register field holds.
    #[error("larger than the register field holds: pass at most {max:#x}")]
    TooLarge {
        /// The largest size taken.
        max: u64,
    },
    /// An address that is not aligned.
    #[error("not {align}-byte aligned: align it to {align} bytes")]
    Misaligned {
        /// The alignment needed, in bytes.
        align: u64,
    },
}

fn past_bar(offset: u64, len: u64, vram_size: u64) -> String {
    if offset.checked_add(len).is_none_or(|end| end > vram_size) {
        format!(", past VRAM's {vram_size:#x} bytes too: pass an offset inside VRAM")
    } else {
        format!(
            ": BAR 0 could not be resized to show all {} MiB of VRAM (see resource0_resize)",
            vram_size >> 20
        )
    }
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
