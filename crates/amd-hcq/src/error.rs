//! The runtime's one error type.

use amd_kfd::KfdError;
use amd_packets::PacketError;

/// What went wrong.
///
/// Misuse is refused before anything reaches the GPU, each kind with its own variant
/// holding the values involved (a range and the buffer's size, a kernel's argument and
/// what it takes, launch sizes and the limit they pass), and a message naming the
/// argument and the fix:
///
/// ```
/// use amd_hcq::{ArgProblem, BufferKind, HcqError, KernArgs, LaunchDims, Platform, Program};
///
/// let dev = Platform::mock(amd_hcq::mock::MockConfig::gfx1100s(1))?.device(0)?;
/// let elf = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/kernels/saxpy.hsaco"))?;
/// let saxpy = Program::load(&dev, &elf, "saxpy")?;
/// let (x, y) = (dev.alloc(64, BufferKind::Device)?, dev.alloc(64, BufferKind::Device)?);
/// // saxpy's third argument is a float: an integer there is refused, naming both.
/// let wrong = KernArgs::new().buffer(&x).buffer(&y).i32(2).u32(16);
/// match saxpy.enqueue(&wrong, LaunchDims::linear(16, 256)) {
///     Err(HcqError::KernelArgument { kernel, index: 2, problem, .. }) => match *problem {
///         ArgProblem::Type { expected, given } => {
///             assert_eq!((kernel.as_str(), expected.as_str(), given.as_str()), ("saxpy", "float", "i32"));
///         }
///         other => panic!("{other:?}"),
///     },
///     other => panic!("{other:?}"),
/// }
/// // A range past the buffer's end names the range and the size.
/// let e = dev.copy_in(&x, 60, &[0u8; 8]).unwrap_err();
/// assert_eq!(e, HcqError::OutOfBounds { offset: 60, len: 8, size: 64 });
/// // Device memory is written before a kernel reads it.
/// dev.fill(&x, 0, 64, 0)?;
/// dev.fill(&y, 0, 64, 0)?;
/// let right = KernArgs::new().buffer(&x).buffer(&y).f32(2.0).u32(16);
/// dev.wait_timeline(saxpy.enqueue(&right, LaunchDims::linear(16, 256))?)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HcqError {
    /// The transport failed (an ioctl, a mapping, an allocation).
    #[error(transparent)]
    Transport(#[from] KfdError),
    /// The driverless transport failed (a register wait, the page tables, VRAM
    /// exhausted, a ring its registers cannot describe, a system call).
    #[error(transparent)]
    Pci(#[from] amd_am::AmError),
    /// A packet could not be encoded.
    #[error(transparent)]
    Packet(#[from] PacketError),
    /// A wait timed out: the value did not come in time, and the device reports
    /// nothing wrong (a long kernel, or work waiting on a signal nobody sets).
    #[error("timeout: waited {waited_ms} ms for {what} to reach {wanted}, it is {current}")]
    Timeout {
        /// What was waited for (`the timeline of GPU 0`, `a signal`, `room in the compute ring`).
        what: String,
        /// The value waited for.
        wanted: u64,
        /// The value found.
        current: u64,
        /// How long the wait lasted.
        waited_ms: u64,
    },
    /// The device faulted (a memory fault, a hardware exception, a queue the
    /// engine stopped). Sticky: every later operation on the device returns it at
    /// once, until the device is dropped and opened again.
    #[error("GPU {device} faulted{}{}", match kernel { Some(k) => format!(" in {k}"), None => String::new() }, if report.is_empty() { String::new() } else { format!("\n{}", report.join("\n")) })]
    DeviceFault {
        /// Index of the device.
        device: usize,
        /// The kernel or copy that was running, where the runtime can tell.
        kernel: Option<String>,
        /// The transport's report, one line per fault (address, reason, the stopped
        /// queue's instruction or packet where known).
        report: Vec<String>,
    },
    /// No GPU to open, and what can be done about it.
    #[error("{0}")]
    NoDevice(String),
    /// A buffer range that does not fit the buffer: `len` bytes at `offset` of a
    /// buffer of `size` bytes (a copy, a CPU read or write, a sub-buffer, a store).
    #[error("range {offset:#x}+{len:#x} outside a buffer of {size:#x} bytes: keep offset + length within the buffer")]
    OutOfBounds {
        /// The first byte asked for.
        offset: usize,
        /// How many bytes.
        len: usize,
        /// The buffer's size in bytes.
        size: usize,
    },
    /// A buffer size the runtime does not allocate (0, or past `isize::MAX`).
    #[error("a buffer of {size} bytes (a buffer holds 1 to {max} bytes)")]
    BufferSize {
        /// The size asked for.
        size: usize,
        /// The largest size a buffer can have.
        max: usize,
    },
    /// A CPU access to a buffer the CPU cannot reach (VRAM outside the CPU-visible
    /// window, or a buffer outside BAR 0).
    #[error(
        "the buffer at {va:#x} {why}: allocate it CPU-visible (BufferKind::DeviceCpuVisible, Host or Uncached) or copy through Device::copy_out"
    )]
    CpuUnreachable {
        /// The buffer's GPU virtual address.
        va: u64,
        /// Why (`is VRAM the CPU cannot reach`, `is outside BAR 0`).
        why: &'static str,
    },
    /// An atomic access at an offset that is not a multiple of its size.
    #[error("unaligned {what} at {offset:#x}: the offset must be a multiple of {align}")]
    Unaligned {
        /// The access (`64-bit load`, `64-bit store`).
        what: &'static str,
        /// The offset in the buffer.
        offset: usize,
        /// The alignment it needs, in bytes.
        align: usize,
    },
    /// A fill that does not cover whole dwords (SDMA's constant fill writes a 32-bit
    /// pattern).
    #[error(
        "a fill of {size:#x} bytes at {at:#x}: a fill covers whole dwords, so its start and size must be multiples of 4"
    )]
    FillUnaligned {
        /// Where it starts: the offset in the buffer ([`Device::fill`]), or the
        /// address ([`CopyQueue::fill`]; 0 where it is a symbol).
        ///
        /// [`Device::fill`]: crate::Device::fill
        /// [`CopyQueue::fill`]: crate::CopyQueue::fill
        at: u64,
        /// Its size in bytes.
        size: u64,
    },
    /// Memory of a GPU that is not mapped on the GPU that uses it.
    #[error("{what} is memory of GPU {owner} not mapped on GPU {device} (Device::map_peer maps it)")]
    NotMapped {
        /// What the memory is to the operation (`argument 1`, `the source`).
        what: String,
        /// The GPU that owns the memory.
        owner: usize,
        /// The GPU that was to use it.
        device: usize,
    },
    /// Memory of a GPU of another [`Platform`](crate::Platform), which no GPU of
    /// this platform can reach.
    #[error(
        "{what} is memory of another platform's GPU {owner}, not reachable from GPU {device}: open both GPUs from one Platform"
    )]
    OtherPlatform {
        /// What the memory is to the operation (`argument 1`, `the source`, `a buffer`).
        what: String,
        /// The index of the GPU that owns it, on its own platform.
        owner: usize,
        /// The GPU that was to use it.
        device: usize,
    },
    /// VRAM a peer cannot reach: it lies past the owner's BAR 0 (the window peers
    /// reach VRAM through), or the owner has no BAR 0.
    #[error(
        "VRAM at {paddr:#x} + {size:#x} of GPU {gpu} is past its BAR 0 ({bar_size:#x} bytes): peers reach only the VRAM BAR 0 shows"
    )]
    PeerUnreachable {
        /// The owner's PCI address.
        gpu: String,
        /// The VRAM offset of the piece.
        paddr: u64,
        /// Its size.
        size: u64,
        /// The size of the owner's BAR 0 (0: it has none).
        bar_size: u64,
    },
    /// The driverless transport's queue of that engine is taken by another `Device`.
    #[error(
        "the {engine} queue of GPU {gpu} is in use: the driverless transport drives one compute and one SDMA queue per GPU (one Device at a time)"
    )]
    QueueInUse {
        /// `compute` or `SDMA`.
        engine: &'static str,
        /// The GPU's PCI address.
        gpu: String,
    },
    /// Every signal slot is taken.
    #[error(
        "all {slots} signals are in use ({waiting} of them wait for work that may still write them: synchronize the devices to release those)"
    )]
    SignalsExhausted {
        /// How many signals the process has.
        slots: usize,
        /// How many dropped signals wait for work that may still write them.
        waiting: usize,
    },
    /// A kernel argument that does not match the kernel's metadata.
    #[error("kernel {kernel}, {}: {problem}", arg_label(*index, name.as_deref()))]
    KernelArgument {
        /// The kernel.
        kernel: String,
        /// The argument's index among the kernel's arguments.
        index: usize,
        /// The argument's name in the metadata, where it has one.
        name: Option<String>,
        /// What is wrong with it (boxed: it keeps the error, and every `Result` of the
        /// runtime, small).
        problem: Box<ArgProblem>,
    },
    /// A launch given another number of arguments than the kernel takes.
    #[error("kernel {kernel} takes {expected} arguments, got {given}")]
    ArgumentCount {
        /// The kernel.
        kernel: String,
        /// How many it takes (buffers and values).
        expected: usize,
        /// How many were given.
        given: usize,
    },
    /// A launch from buffers and value words ([`Program::launch`](crate::Program::launch))
    /// given other counts than the kernel takes.
    #[error("kernel {kernel} takes {buffers} buffers and {words} value words, got {given_buffers} and {given_words}")]
    ArgumentWords {
        /// The kernel.
        kernel: String,
        /// How many buffers it takes.
        buffers: usize,
        /// How many 32-bit value words its values fill.
        words: usize,
        /// How many buffers were given.
        given_buffers: usize,
        /// How many value words were given.
        given_words: usize,
    },
    /// Launch sizes past what a dispatch can describe or the kernel allows.
    #[error("launch of {kernel} with grid {grid:?} and workgroup {workgroup:?}: {limit}")]
    LaunchDims {
        /// The kernel.
        kernel: String,
        /// The grid, in workgroups.
        grid: [u64; 3],
        /// The workgroup, in work-items.
        workgroup: [u64; 3],
        /// Which limit the sizes pass.
        limit: LaunchLimit,
    },
    /// A launch with a constant size of 0 among symbolic sizes.
    #[error("launch of {kernel}: {axis} size {index} is 0; every size must be at least 1")]
    ZeroLaunchSize {
        /// The kernel.
        kernel: String,
        /// `grid` or `workgroup`.
        axis: &'static str,
        /// The axis (0 x, 1 y, 2 z).
        index: usize,
    },
    /// A code object that does not parse, or whose headers or metadata do not describe
    /// its contents (free text about the file: the table, offset or field at fault).
    #[error("code object: {msg}")]
    CodeObject {
        /// What is wrong with the file.
        msg: String,
    },
    /// A kernel the code object does not have.
    #[error("code object: no kernel {name:?} (kernels: {})", available.join(", "))]
    NoKernel {
        /// The name asked for.
        name: String,
        /// The kernels the code object has.
        available: Vec<String>,
    },
    /// A code object built for another processor than the GPU's.
    #[error("the code object is for {processor} ({target}); GPU {device} is {arch}: build it for {arch}")]
    CodeObjectTarget {
        /// The processor it is built for (`gfx1100`).
        processor: String,
        /// Its whole target string (`amdgcn-amd-amdhsa--gfx1100`).
        target: String,
        /// The GPU.
        device: usize,
        /// The GPU's processor.
        arch: String,
    },
    /// A kernel this runtime cannot launch on the GPU (its registers, LDS, wave size
    /// or set-up needs).
    #[error("kernel {kernel}: {limit}")]
    KernelUnsupported {
        /// The kernel.
        kernel: String,
        /// What it needs that the runtime or the GPU does not give.
        limit: KernelLimit,
    },
    /// A list built for another GPU generation than the device's (or a kernel of
    /// one device recorded in a list for another).
    #[error("{} built for {list:?} {action} {arch} ({target:?}): build the list with the device's target (its DeviceProps::target)", match kernel { Some(k) => format!("kernel {k} in a list"), None => "a list".to_string() })]
    ListTarget {
        /// The kernel, where a kernel's device and the list disagree.
        kernel: Option<String>,
        /// The target the list was built for.
        list: amd_packets::GfxTarget,
        /// What was done with it (`bound on`, `submitted to`, `launched from`).
        action: &'static str,
        /// The device's processor (`gfx1100`).
        arch: String,
        /// The device's target.
        target: amd_packets::GfxTarget,
    },
    /// A list longer than what holds it (an indirect buffer, a ring), or empty.
    #[error("a {list} of {dwords} dwords: it must hold 1 to {max} dwords (split the work into several lists)")]
    ListSize {
        /// Which list (`bound list`, `bound copy list`, `graph's compute list`,
        /// `list for the compute ring`).
        list: &'static str,
        /// Its length in dwords.
        dwords: usize,
        /// The most it can hold (a ring: its dwords less one, and less the padding
        /// its packets need).
        max: usize,
    },
    /// [`Device::bind_copies`](crate::Device::bind_copies) or
    /// [`Graph::bind_copies`](crate::Graph::bind_copies) with 0 copies.
    #[error("a bound list needs at least one copy (bind_copies with copies >= 1)")]
    ZeroCopies,
    /// [`Device::bind_copy`](crate::Device::bind_copy) of a list holding an INDIRECT
    /// packet (the SDMA engine does not nest them).
    #[error("a bound copy list cannot hold an INDIRECT packet: submit that list with CopyQueue::submit")]
    NestedIndirect,
    /// A bound list submitted to another GPU than the one it is bound on.
    #[error("a list bound on GPU {bound} submitted to GPU {device}: submit it to the device that bound it")]
    WrongDevice {
        /// The GPU the list is bound on.
        bound: usize,
        /// The GPU it was submitted to.
        device: usize,
    },
    /// A graph node on a GPU of another platform than the graph's first GPU.
    #[error("GPU {device} is not of the platform of GPU {first}: a graph spans the devices of one platform")]
    GraphPlatform {
        /// The node's GPU.
        device: usize,
        /// The graph's first GPU.
        first: usize,
    },
    /// A graph node handle from another graph.
    #[error("node {node} is not of this graph (it has {nodes} nodes)")]
    UnknownNode {
        /// The node's index.
        node: usize,
        /// How many nodes the graph has.
        nodes: usize,
    },
    /// Binding a graph with no node.
    #[error("binding an empty graph: record a launch or a copy first")]
    EmptyGraph,
    /// A list sent as built ([`Device::submit_ordered`](crate::Device::submit_ordered),
    /// [`Device::submit_compute`](crate::Device::submit_compute),
    /// [`Device::submit_copy`](crate::Device::submit_copy)) that holds a symbol or a
    /// kernel launch, which only a submit that binds them can send.
    #[error("{} in a list of {call}, which sends its list as built: {}", match variable { Some(v) => format!("variable {v}"), None if *launch => "a kernel launch".to_string(), None => "a symbol".to_string() }, if *launch { "launch with Program::enqueue, or submit the list with ComputeQueue::submit" } else { "submit the list with ComputeQueue::submit or CopyQueue::submit" })]
    NotSentAsBuilt {
        /// The call (`Device::submit_ordered`, `Device::submit_compute`, `Device::submit_copy`).
        call: &'static str,
        /// The list's first variable, where it holds one.
        variable: Option<String>,
        /// Whether the list holds a kernel launch (whose arguments are placed at submit).
        launch: bool,
    },
    /// A variable a list uses that the submit's bindings do not set.
    #[error("variable {name} is not bound: set it in the Bindings")]
    Unbound {
        /// The variable.
        name: String,
    },
    /// A symbolic value that overflows 64 bits, goes negative or divides by zero with
    /// the values bound.
    #[error("{what} overflows 64 bits, is negative or divides by zero")]
    SymbolOverflow {
        /// The value (a field, or the expression).
        what: String,
    },
    /// A value (bound or constant) outside the range of the packet field or argument
    /// it fills.
    #[error("{what} = {value} does not fit its field ({min}..={max})")]
    FieldRange {
        /// The field (`copy size`, `kernel k, argument 2`).
        what: String,
        /// The value.
        value: u64,
        /// The smallest value the field takes.
        min: u64,
        /// The largest.
        max: u64,
    },
    /// A patch of a bound list past its end.
    #[error("patch of {len} dwords at dword {at} outside a list of {dwords}")]
    PatchRange {
        /// The first dword patched.
        at: usize,
        /// How many dwords.
        len: usize,
        /// The list's length.
        dwords: usize,
    },
    /// A launch's kernel arguments larger than the device's kernel-argument region.
    #[error("{len} bytes of kernel arguments do not fit the {region}-byte kernel-argument region")]
    KernargsTooLarge {
        /// The bytes of one launch.
        len: usize,
        /// The region's size.
        region: usize,
    },
    /// Scratch memory whose size overflows on this GPU.
    #[error(
        "scratch of {per_lane} bytes per lane overflows ({what}; {cu_count} CUs, {simd_per_cu} SIMDs per CU, {waves_per_simd} waves per SIMD, {slots_per_cu} scratch slots per CU)"
    )]
    ScratchOverflow {
        /// Bytes per lane asked for.
        per_lane: u32,
        /// The product that overflowed.
        what: &'static str,
        /// The GPU's compute units.
        cu_count: u32,
        /// SIMDs per CU.
        simd_per_cu: u32,
        /// Waves per SIMD.
        waves_per_simd: u32,
        /// Scratch slots per CU.
        slots_per_cu: u32,
    },
    /// Scratch memory the transport could not allocate.
    #[error("scratch of {bytes} bytes ({per_lane} bytes per lane) could not be allocated: {source}")]
    ScratchAlloc {
        /// Bytes asked for.
        bytes: usize,
        /// Bytes per lane.
        per_lane: u32,
        /// Why the transport refused.
        source: KfdError,
    },
    /// A file the runtime writes (a trace) that could not be written.
    #[error("writing {}: {msg}", path.display())]
    Io {
        /// The file.
        path: std::path::PathBuf,
        /// The error's kind.
        kind: std::io::ErrorKind,
        /// The error's text.
        msg: String,
    },
    /// An environment variable the runtime reads holds a value it does not take.
    #[error("{var}={value:?}: expected {expected}")]
    EnvValue {
        /// The variable.
        var: &'static str,
        /// Its value.
        value: String,
        /// What it takes.
        expected: &'static str,
    },
    /// A queue format the transport does not offer (AQL queues on the driverless
    /// transport).
    #[error("{format:?} compute queues are not available on the {transport} transport: {why}")]
    QueueFormatUnsupported {
        /// The format asked for.
        format: crate::QueueFormat,
        /// The transport.
        transport: &'static str,
        /// Why, and what to use instead.
        why: &'static str,
    },
    /// A GPU partition of several XCCs (compute dies: an MI300X in SPX, DPX or QPX
    /// mode), whose queue every XCC's command processor runs: the runtime does not
    /// yet keep its signals and timestamps to one XCC, nor give each XCC a scratch
    /// area of its own.
    #[error(
        "{arch} has {xccs} XCCs in one partition: amd-hcq drives partitions of one XCC only (an MI300X in CPX mode: `amd-smi set --compute-partition CPX`)"
    )]
    MultiXcc {
        /// The GPU's target (`gfx942`).
        arch: String,
        /// Its XCCs (`num_xcc`).
        xccs: u32,
    },
    /// A dispatch an AQL queue cannot send as a kernel dispatch packet.
    #[error("the dispatch of the code at {code_addr:#x} cannot go to the AQL queue: {why}")]
    AqlDispatch {
        /// The dispatch's code address (COMPUTE_PGM_LO/HI).
        code_addr: u64,
        /// Why.
        why: &'static str,
    },
    /// A state the runtime keeps that does not hold (a bug of amd-hcq).
    #[error("internal error: {what} (a bug of amd-hcq; please report it)")]
    Internal {
        /// What does not hold.
        what: &'static str,
    },
    /// A caller's argument the runtime rejects, in the few one-off checks that have
    /// no variant of their own:
    ///
    /// - `Device::set_kernarg_region_for_test` with fewer than 64 bytes (a hidden
    ///   test hook);
    /// - `AnyIface::map` of one transport's memory on a GPU of the other (what
    ///   [`Device::map_peer`](crate::Device::map_peer) refuses as
    ///   [`HcqError::OtherPlatform`] first; the trait's own check);
    /// - `AmIface::map` of memory of a GPU whose virtual address space differs (the
    ///   same, at the driverless transport, where the GPUs have PCI addresses).
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
}

/// What cannot fail fails into any error (a PM4 timestamp refuses no address).
impl From<std::convert::Infallible> for HcqError {
    fn from(never: std::convert::Infallible) -> Self {
        match never {}
    }
}

/// What is wrong with a kernel argument ([`HcqError::KernelArgument`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ArgProblem {
    /// A value of another type than the kernel declares (an integer for a float, a
    /// buffer for a value, a value for a buffer).
    #[error("{}", type_message(expected, given))]
    Type {
        /// What the kernel takes (`float`, `uint`, `buffer`).
        expected: String,
        /// What was given (`i32`, `f32 symbol`, `buffer`, `u64 value`, `raw byte string`).
        given: String,
    },
    /// A value of another size than the kernel's argument.
    #[error("{}", size_message(expected, *expected_bytes, given, *given_bytes))]
    Size {
        /// What the kernel takes (`float`, `by value`, `buffer`).
        expected: String,
        /// Its size in bytes.
        expected_bytes: usize,
        /// What was given (`f64`, `raw bytes`, `value word`, `buffer address`).
        given: String,
        /// Its size in bytes.
        given_bytes: usize,
    },
    /// A value outside the range of the kernel's type.
    #[error("{value} does not fit a {ty}")]
    Range {
        /// The value.
        value: i128,
        /// The type (`uint`, `4-byte argument`).
        ty: String,
    },
}

fn type_message(expected: &str, given: &str) -> String {
    match expected {
        "buffer" => format!("the kernel takes a buffer, got a {given} (KernArgs::buffer or buffer_sym)"),
        "integer" => format!("a symbol must be an integer, not {given}"),
        _ if given == "buffer" => format!("the kernel takes a {expected} value, got a buffer"),
        _ => format!("a {given} for a {expected}"),
    }
}

fn size_message(expected: &str, expected_bytes: usize, given: &str, given_bytes: usize) -> String {
    match given {
        "raw bytes" => format!("{given_bytes} raw bytes for an argument of {expected_bytes}"),
        "value word" => {
            format!("{expected_bytes} bytes; value words fill arguments of 1, 2, 4 or 8 bytes (use KernArgs::raw)")
        }
        _ if expected == "buffer" => format!("a buffer argument of {expected_bytes} bytes (a buffer address is 8)"),
        _ => format!("a {given} ({given_bytes} bytes) for a {expected_bytes}-byte {expected}"),
    }
}

fn arg_label(index: usize, name: Option<&str>) -> String {
    match name {
        Some(n) => format!("argument {index} ({n})"),
        None => format!("argument {index}"),
    }
}

/// Which limit a launch's sizes pass ([`HcqError::LaunchDims`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LaunchLimit {
    /// A size is 0.
    #[error("every size must be at least 1")]
    ZeroSize,
    /// A grid size past 32 bits.
    #[error("a grid size does not fit 32 bits")]
    Grid32,
    /// A workgroup size past 16 bits.
    #[error("a workgroup size does not fit 16 bits")]
    Workgroup16,
    /// More work-items per workgroup than the kernel allows.
    #[error("{work_items} work-items per workgroup, the kernel allows at most {max}")]
    WorkgroupSize {
        /// Work-items in one workgroup.
        work_items: u64,
        /// The kernel's `.max_flat_workgroup_size`.
        max: u32,
    },
    /// Grid × workgroup past 32 bits on an axis.
    #[error("grid × workgroup does not fit 32 bits")]
    Total32,
}

/// What a kernel needs that the runtime or the GPU does not give
/// ([`HcqError::KernelUnsupported`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum KernelLimit {
    /// More VGPRs than a wave has.
    #[error("asks for {vgprs} VGPRs; a wave of GPU {device} ({arch}) has at most {max}")]
    Vgprs {
        /// VGPRs the kernel asks for.
        vgprs: u32,
        /// The most a wave has.
        max: u32,
        /// The GPU.
        device: usize,
        /// Its processor.
        arch: String,
    },
    /// More LDS than the GPU has per workgroup.
    #[error(
        "Too many resources requested: group_segment_size (asks for {bytes} bytes of LDS; GPU {device} has {available})"
    )]
    Lds {
        /// LDS bytes the kernel asks for.
        bytes: u32,
        /// LDS bytes the GPU has.
        available: u32,
        /// The GPU.
        device: usize,
    },
    /// User SGPRs the runtime does not set up (queue pointer, flat scratch init,
    /// private segment size).
    #[error("asks for user SGPRs ({properties:#x}) this runtime does not set up")]
    UserSgprs {
        /// The descriptor's `kernel_code_properties`.
        properties: u16,
    },
    /// A kernel entry that is not 256-byte aligned.
    #[error("entry {entry:#x} is not 256-byte aligned")]
    EntryAlign {
        /// The entry's address.
        entry: u64,
    },
}

/// [`HcqError::OutOfBounds`] unless `offset..offset + len` lies in a buffer of
/// `size` bytes.
#[inline]
pub(crate) fn check_range(size: usize, offset: usize, len: usize) -> Result<()> {
    match offset.checked_add(len) {
        Some(end) if end <= size => Ok(()),
        _ => Err(HcqError::OutOfBounds { offset, len, size }),
    }
}

/// Result of the runtime.
pub type Result<T, E = HcqError> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    /// Every `Result` of the runtime carries the error: it stays small.
    #[test]
    fn the_error_stays_small() {
        assert!(size_of::<super::HcqError>() <= 96, "{}", size_of::<super::HcqError>());
    }
}
