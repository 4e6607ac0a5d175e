//! Profiling: GPU start/end timestamps of launches and copies, converted to
//! nanoseconds on the CPU clock with the offset calibrated as tinygrad 0.10.1 does (a
//! timestamp taken between two CPU readings is placed at their midpoint).

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use parking_lot::Mutex;

use crate::iface::DeviceInterface;
use crate::signal::Signal;

/// The GPU timestamp clock: 100 MHz on gfx10.3 and gfx11 (tinygrad 0.10.1 divides
/// timestamps by 100 for microseconds); the mock follows it.
pub const GPU_CLOCK_HZ: u64 = amd_packets::TIMESTAMP_HZ;

/// A device's profiling: whether it is on, and the records so far with the clock
/// offset they are read with (one lock: taking the records reads both).
pub(crate) struct Profiling<I: DeviceInterface> {
    /// Read when a submission is built (Relaxed: no data hangs on it).
    pub(crate) on: AtomicBool,
    pub(crate) state: Mutex<ProfileState<I>>,
    /// Where to write the trace at close (`HCQ_PROFILE`).
    pub(crate) trace_path: Option<std::path::PathBuf>,
}

/// The profiled operations not yet taken, and the offset from GPU ticks to the CPU
/// clock once calibrated.
pub(crate) struct ProfileState<I: DeviceInterface> {
    pub(crate) log: ProfileLog<I>,
    pub(crate) clock_offset: Option<i128>,
}

impl<I: DeviceInterface> Profiling<I> {
    /// Off, with the trace path `HCQ_PROFILE` (or `PROFILE=1`) gives GPU `index`.
    pub(crate) fn new(index: usize) -> Self {
        Profiling {
            on: AtomicBool::new(false),
            state: Mutex::new(ProfileState {
                log: ProfileLog::default(),
                clock_offset: None,
            }),
            trace_path: env_trace_path(index),
        }
    }

    /// At close, with `HCQ_PROFILE` set: writes the records whose work finished.
    pub(crate) fn write_env_trace(&mut self, device: usize) {
        let Some(path) = self.trace_path.take() else { return };
        let state = self.state.get_mut();
        let offset = state.clock_offset.unwrap_or(0);
        let pending = std::mem::take(&mut state.log).entries;
        let done: Vec<_> = pending.into_iter().filter(|(_, _, t)| t.ticks().1 != 0).collect();
        let recs = records(done, device, offset);
        // Nothing to report a failure to while closing: the trace is best effort.
        let _ = std::fs::write(path, chrome_trace(&recs));
    }
}

/// Which engine ran a profiled operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Engine {
    /// The compute queue (kernel launches).
    Compute = 0,
    /// The SDMA queue (copies).
    Copy = 1,
}

/// One profiled operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfileRecord {
    /// Kernel name, or a copy's description (`copy_in`, `copy_out`, `copy`, `transfer`).
    pub name: String,
    /// Device index.
    pub device: usize,
    /// Engine.
    pub engine: Engine,
    /// Start, ns on the CPU clock: nanoseconds since the process first turned
    /// profiling on or calibrated a clock.
    pub start_ns: i128,
    /// End, ns on the CPU clock.
    pub end_ns: i128,
}

/// Start and end timestamp signals of one submission.
pub(crate) type Times<I> = Arc<(Signal<I>, Signal<I>)>;

pub(crate) fn ticks_to_ns(ticks: u64) -> i128 {
    ticks as i128 * 1_000_000_000 / GPU_CLOCK_HZ as i128
}

/// The CPU clock the records use: nanoseconds since the first call.
pub(crate) fn cpu_ns() -> i128 {
    static EPOCH: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    EPOCH.get_or_init(Instant::now).elapsed().as_nanos() as i128
}

/// Records of profiled submissions, on the CPU clock by `offset`.
pub(crate) fn records<I: DeviceInterface>(pending: Vec<Pending<I>>, device: usize, offset: i128) -> Vec<ProfileRecord> {
    pending
        .into_iter()
        .map(|(name, engine, t)| {
            let (start, end) = t.ticks();
            ProfileRecord {
                name,
                device,
                engine,
                start_ns: ticks_to_ns(start) + offset,
                end_ns: ticks_to_ns(end) + offset,
            }
        })
        .collect()
}

/// A profiled operation not yet turned into a record.
pub(crate) type Pending<I> = (String, Engine, Stamps<I>);

/// A device's profiled operations not yet taken, in submission order. Those whose
/// times are final are read as new ones come (the first `settled`), so their signals
/// and graph copies are released while a long run goes on.
pub(crate) struct ProfileLog<I: DeviceInterface> {
    pub(crate) entries: Vec<Pending<I>>,
    settled: usize,
}

impl<I: DeviceInterface> Default for ProfileLog<I> {
    fn default() -> Self {
        ProfileLog {
            entries: Vec::new(),
            settled: 0,
        }
    }
}

impl<I: DeviceInterface> ProfileLog<I> {
    /// Adds `p`, after reading the times of the earlier operations that are done (up
    /// to the first that is not); returns what held those times, for the caller to drop
    /// once the log is unlocked (a graph's last copy frees memory, which asks the
    /// device how far its work is).
    #[must_use]
    pub(crate) fn push(&mut self, p: Pending<I>) -> Vec<Stamps<I>> {
        let released = self.settle();
        self.entries.push(p);
        released
    }

    /// Reads the times of the operations that are done, up to the first that is not;
    /// returns what held them, for the caller to drop once the log is unlocked.
    #[must_use]
    pub(crate) fn settle(&mut self) -> Vec<Stamps<I>> {
        let mut released = Vec::new();
        while let Some((_, _, s)) = self.entries.get_mut(self.settled) {
            match s.settled() {
                Some((start, end)) => released.push(std::mem::replace(s, Stamps::Ticks(start, end))),
                None => break,
            }
            self.settled += 1;
        }
        released
    }

    /// Whether an operation's times are still to come (its signals held).
    pub(crate) fn unsettled(&self) -> bool {
        self.settled < self.entries.len()
    }
}

/// Where a profiled operation's start and end timestamps are.
pub(crate) enum Stamps<I: DeviceInterface> {
    /// In two signals' timestamp slots (a launch or copy).
    Signals(Times<I>),
    /// Node `k` of a graph replay's run of one list.
    Graph(Arc<GraphRun<I>>, usize),
    /// Read: start and end ticks.
    Ticks(u64, u64),
}

impl<I: DeviceInterface> Stamps<I> {
    /// The start and end, in GPU ticks (0 where not written).
    fn ticks(&self) -> (u64, u64) {
        match self {
            Stamps::Signals(t) => (t.0.timestamp(), t.1.timestamp()),
            Stamps::Graph(run, k) => run.ticks(*k),
            Stamps::Ticks(start, end) => (*start, *end),
        }
    }

    /// The start and end if the operation is done (its end written; the start is
    /// written before it), without waiting.
    fn settled(&self) -> Option<(u64, u64)> {
        match self {
            Stamps::Signals(t) => (t.1.timestamp() != 0).then(|| (t.0.timestamp(), t.1.timestamp())),
            Stamps::Graph(run, k) => run.read_ticks(*k),
            Stamps::Ticks(start, end) => Some((*start, *end)),
        }
    }
}

/// One run of a bound graph list: the timestamps its profiled nodes wrote into the
/// kernel arguments of the copy it ran from. They are read once, when that copy is
/// about to run again or when the records are taken (its run is done then), and the
/// slots are zeroed (a run that has not reached a slot leaves 0 there).
pub(crate) struct GraphRun<I: DeviceInterface> {
    /// The copy's memory.
    buf: crate::memory::Buffer<I>,
    /// Byte offsets in `buf` of each profiled node's start and end timestamps.
    slots: Arc<[(usize, usize)]>,
    ticks: parking_lot::Mutex<Option<Vec<(u64, u64)>>>,
}

impl<I: DeviceInterface> GraphRun<I> {
    pub(crate) fn new(buf: crate::memory::Buffer<I>, slots: Arc<[(usize, usize)]>) -> Arc<Self> {
        Arc::new(GraphRun {
            buf,
            slots,
            ticks: parking_lot::Mutex::new(None),
        })
    }

    /// Reads the run's timestamps if not yet read (and zeroes their slots).
    pub(crate) fn collect(&self) {
        let mut ticks = self.ticks.lock();
        if ticks.is_some() {
            return;
        }
        let read = |off: usize| -> u64 {
            let v = self.slot(off);
            // A slot that cannot be read (never: it is inside the copy) reads as 0.
            let _ = self.buf.write(off, &0u64.to_le_bytes());
            v.unwrap_or(0)
        };
        *ticks = Some(self.slots.iter().map(|&(s, e)| (read(s), read(e))).collect());
    }

    /// Node `k`'s times once it is done (its end written), without waiting: as read
    /// when its copy ran again, or from the copy (which cannot run again meanwhile:
    /// that reads the times first, under the same lock).
    fn read_ticks(&self, k: usize) -> Option<(u64, u64)> {
        let ticks = self.ticks.lock();
        if let Some(t) = ticks.as_ref() {
            return t.get(k).copied();
        }
        let &(start, end) = self.slots.get(k)?;
        match self.slot(end)? {
            0 => None,
            e => Some((self.slot(start)?, e)),
        }
    }

    /// The timestamp at byte `off` of the copy.
    fn slot(&self, off: usize) -> Option<u64> {
        let mut b = [0u8; 8];
        self.buf.read(off, &mut b).ok()?;
        Some(u64::from_le_bytes(b))
    }

    fn ticks(&self, k: usize) -> (u64, u64) {
        self.collect();
        self.ticks
            .lock()
            .as_ref()
            .and_then(|t| t.get(k).copied())
            .unwrap_or((0, 0))
    }
}

/// Where `HCQ_PROFILE` (or tinygrad's `PROFILE=1`, to `/tmp/amd_hcq_profile.json`)
/// asks for the trace of GPU `index`: the path, with `.gpuN` before the extension for
/// GPUs past the first.
pub(crate) fn env_trace_path(index: usize) -> Option<std::path::PathBuf> {
    let base = match std::env::var("HCQ_PROFILE") {
        Ok(p) if !p.is_empty() => std::path::PathBuf::from(p),
        _ => match std::env::var("PROFILE").as_deref() {
            Ok("1") => std::path::PathBuf::from("/tmp/amd_hcq_profile.json"),
            _ => return None,
        },
    };
    if index == 0 {
        return Some(base);
    }
    let stem = base
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let ext = base
        .extension()
        .map(|e| format!(".{}", e.to_string_lossy()))
        .unwrap_or_default();
    Some(base.with_file_name(format!("{stem}.gpu{index}{ext}")))
}

/// The records as a Chrome trace (the JSON event format Perfetto and
/// `chrome://tracing` open): one process per device, one thread per engine, one
/// complete event per launch or copy, times in microseconds.
pub fn chrome_trace(records: &[ProfileRecord]) -> String {
    use std::fmt::Write;
    let mut out = String::from("{\"traceEvents\":[");
    let mut first = true;
    let mut sep = |out: &mut String| {
        if !std::mem::take(&mut first) {
            out.push(',');
        }
    };
    let mut named: Vec<(usize, Engine)> = Vec::new();
    for r in records {
        if !named.contains(&(r.device, r.engine)) {
            if !named.iter().any(|n| n.0 == r.device) {
                sep(&mut out);
                let _ = write!(
                    out,
                    "{{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":{},\"args\":{{\"name\":\"GPU {}\"}}}}",
                    r.device, r.device
                );
            }
            named.push((r.device, r.engine));
            sep(&mut out);
            let _ = write!(
                out,
                "{{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":{},\"tid\":{},\"args\":{{\"name\":\"{}\"}}}}",
                r.device,
                r.engine as u8,
                match r.engine {
                    Engine::Compute => "compute",
                    Engine::Copy => "copy",
                }
            );
        }
        sep(&mut out);
        let _ = write!(
            out,
            "{{\"ph\":\"X\",\"name\":{},\"pid\":{},\"tid\":{},\"ts\":{:.3},\"dur\":{:.3}}}",
            json_string(&r.name),
            r.device,
            r.engine as u8,
            r.start_ns as f64 / 1e3,
            (r.end_ns - r.start_ns).max(0) as f64 / 1e3
        );
    }
    out.push_str("]}");
    out
}

/// `s` as a JSON string literal.
fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}
