//! Graphs: launches and copies over the compute and copy engines of one or more
//! devices, recorded once, bound into GPU memory, and replayed as one step with new
//! buffers and values (tinygrad 0.10.1's `HCQGraph`).
//!
//! Recording checks each launch and copy as it is added. Binding makes one list per
//! engine and device: each starts by waiting for the previous value of every graph
//! device's timeline (so a replay is ordered after everything submitted before it on
//! each device it touches), waits for the nodes of other engines it depends on (graph
//! signals carrying the replay number), runs its nodes, and signals those other
//! engines wait for; on each device one list then waits for the device's other list
//! and signals the device's timeline. Every list is kept in several copies (see
//! [`crate::BoundQueue`]), so replays pipeline.
//!
//! A graph bound while its devices profile ([`Device::set_profiling`]) times each node
//! of every replay: [`Device::take_profile`] returns a record per node and replay, as
//! for launches and copies.
//!
//! ```
//! use amd_hcq::{Bindings, BufferKind, Graph, KernArgs, Platform, Program, SymDims, Var};
//! # let p = Platform::mock(amd_hcq::mock::MockConfig::gfx1100s(1)).unwrap();
//! let dev = p.device(0).unwrap();
//! # let elf = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/kernels/saxpy.hsaco")).unwrap();
//! let saxpy = Program::load(&dev, &elf, "saxpy").unwrap();
//! let (x, y) = (Var::new("x"), Var::new("y"));
//! let n = Var::new("n");
//! let mut g = Graph::new();
//! let args = KernArgs::new().buffer_sym(&x).buffer_sym(&y).f32(2.0).sym_u32(&n);
//! g.exec(&saxpy, &args, SymDims::new([(&n + 255u32) / 256u32, 1.into(), 1.into()], [256, 1, 1]), &[]).unwrap();
//! let g = g.bind().unwrap();
//! let xs = dev.alloc(4096, BufferKind::Host).unwrap();
//! let ys = dev.alloc(4096, BufferKind::Host).unwrap();
//! xs.write_slice(0, &[1.5f32; 1024]).unwrap();
//! ys.write_slice(0, &[1.0f32; 1024]).unwrap();
//! let mut vals = Bindings::new();
//! vals.buffer(&x, &xs).buffer(&y, &ys).set(&n, 1000);
//! g.replay(&vals).unwrap(); // y = 2x + y on the first n elements
//! g.synchronize().unwrap();
//! let y_now: Vec<f32> = ys.read_vec(0, 1024).unwrap();
//! assert_eq!((y_now[999], y_now[1000]), (4.0, 1.0));
//! ```

use std::sync::Arc;

use parking_lot::{Mutex, MutexGuard};

use amd_packets::pm4::IndirectBuffer;

use crate::args::KernArgs;
use crate::bind::{BoundList, DEFAULT_COPIES, Image};
use crate::device::Device;
use crate::iface::DeviceInterface;
use crate::launch::SymDims;
use crate::profile::{Engine, GraphRun, Stamps};
use crate::program::Program;
use crate::queue::{ComputeQueue, CopyQueue};
use crate::rings::Engines;
use crate::signal::Signal;
use crate::sym::{Bindings, Sym, Var};
use crate::timeline::{OpName, Point, TIMELINE_WRAP};
use crate::{HcqError, Result};

/// A node of a [`Graph`]: a launch or a copy, to name as a dependency of later nodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Node(usize);

enum Work {
    Compute(ComputeQueue),
    Copy(CopyQueue),
}

struct GraphNode {
    /// Index into the graph's devices.
    dev: usize,
    work: Work,
    deps: Vec<usize>,
    /// What a profile calls it: the kernel's name, or `copy`.
    name: Arc<str>,
}

impl GraphNode {
    fn is_copy(&self) -> bool {
        matches!(self.work, Work::Copy(_))
    }
}

/// Launches and copies recorded for replay (see the module documentation).
pub struct Graph<I: DeviceInterface = crate::AnyIface> {
    devices: Vec<Device<I>>,
    nodes: Vec<GraphNode>,
}

impl<I: DeviceInterface> Default for Graph<I> {
    fn default() -> Self {
        Graph {
            devices: Vec::new(),
            nodes: Vec::new(),
        }
    }
}

impl<I: DeviceInterface> std::fmt::Debug for Graph<I> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Graph")
            .field("devices", &self.devices.len())
            .field("nodes", &self.nodes.len())
            .finish()
    }
}

impl<I: DeviceInterface> Graph<I> {
    /// An empty graph.
    pub fn new() -> Self {
        Graph::default()
    }

    /// Nodes recorded.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    fn device_slot(&mut self, dev: &Device<I>) -> Result<usize> {
        if let Some(i) = self.devices.iter().position(|d| Arc::ptr_eq(&d.inner, &dev.inner)) {
            return Ok(i);
        }
        if let Some(d0) = self.devices.first()
            && !Arc::ptr_eq(&d0.inner.pool, &dev.inner.pool)
        {
            return Err(HcqError::GraphPlatform {
                device: dev.index(),
                first: d0.index(),
            });
        }
        self.devices.push(dev.clone());
        Ok(self.devices.len() - 1)
    }

    fn deps(&self, deps: &[Node]) -> Result<Vec<usize>> {
        deps.iter()
            .map(|n| {
                if n.0 < self.nodes.len() {
                    Ok(n.0)
                } else {
                    Err(HcqError::UnknownNode {
                        node: n.0,
                        nodes: self.nodes.len(),
                    })
                }
            })
            .collect()
    }

    /// Records a launch of `prg` on its device's compute engine, after the earlier
    /// nodes of that engine and after `deps`.
    pub fn exec(&mut self, prg: &Program<I>, args: &KernArgs, dims: impl Into<SymDims>, deps: &[Node]) -> Result<Node> {
        let deps = self.deps(deps)?;
        let mut q = ComputeQueue::new(prg.device().props().target);
        q.exec(prg, args, dims)?;
        let dev = self.device_slot(prg.device())?;
        self.nodes.push(GraphNode {
            dev,
            work: Work::Compute(q),
            deps,
            name: prg.name_arc().clone(),
        });
        Ok(Node(self.nodes.len() - 1))
    }

    /// Records a copy of `size` bytes from `src` to `dst` on `dev`'s copy engine, after
    /// the earlier nodes of that engine and after `deps`. Addresses are constants or
    /// symbols; memory of another device must be mapped on `dev` ([`Device::map_peer`]).
    pub fn copy(
        &mut self,
        dev: &Device<I>,
        dst: impl Into<Sym>,
        src: impl Into<Sym>,
        size: impl Into<Sym>,
        deps: &[Node],
    ) -> Result<Node> {
        let deps = self.deps(deps)?;
        let mut q = CopyQueue::new(dev.props().target);
        q.copy(dst, src, size)?;
        let d = self.device_slot(dev)?;
        self.nodes.push(GraphNode {
            dev: d,
            work: Work::Copy(q),
            deps,
            name: "copy".into(),
        });
        Ok(Node(self.nodes.len() - 1))
    }

    /// Binds the graph into GPU memory with [`DEFAULT_COPIES`] copies of each list.
    pub fn bind(&self) -> Result<BoundGraph<I>> {
        self.bind_copies(DEFAULT_COPIES)
    }

    /// Binds the graph with `copies` copies of each list (replays beyond that many in
    /// flight wait for the oldest).
    pub fn bind_copies(&self, copies: usize) -> Result<BoundGraph<I>> {
        if self.nodes.is_empty() {
            return Err(HcqError::EmptyGraph);
        }
        let replay = Var::new("(graph replay)");
        let tl: Vec<[Var; 3]> = self
            .devices
            .iter()
            .map(|d| {
                let i = d.index();
                [
                    Var::new(&format!("(timeline address of GPU {i})")),
                    Var::new(&format!("(previous timeline value of GPU {i})")),
                    Var::new(&format!("(timeline value of GPU {i})")),
                ]
            })
            .collect();
        // The lists, in order of first use: (device, copy engine).
        let mut keys: Vec<(usize, bool)> = Vec::new();
        for n in &self.nodes {
            if !keys.contains(&(n.dev, n.is_copy())) {
                keys.push((n.dev, n.is_copy()));
            }
        }
        let list_of = |n: &GraphNode| keys.iter().position(|&k| k == (n.dev, n.is_copy())).unwrap_or(0);
        // Signals for nodes another list waits for, and for lists another list of
        // their device waits for.
        let mut node_sig: Vec<Option<Signal<I>>> = (0..self.nodes.len()).map(|_| None).collect();
        for n in &self.nodes {
            for &d in &n.deps {
                if list_of(&self.nodes[d]) != list_of(n) && node_sig[d].is_none() {
                    node_sig[d] = Some(self.devices[self.nodes[d].dev].new_signal(0)?);
                }
            }
        }
        let finals: Vec<usize> = (0..self.devices.len())
            .map(|d| {
                keys.iter()
                    .position(|&k| k == (d, false))
                    .or_else(|| keys.iter().position(|&k| k.0 == d))
                    .unwrap_or(0)
            })
            .collect();
        let mut end_sig: Vec<Option<Signal<I>>> = Vec::with_capacity(keys.len());
        for (l, &(d, _)) in keys.iter().enumerate() {
            end_sig.push(if finals[d] == l {
                None
            } else {
                Some(self.devices[d].new_signal(0)?)
            });
        }

        // The runtime's values of a replay, in this order: the replay number, then per
        // device its timeline's address, previous value and new value.
        let mut runtime = vec![replay.clone()];
        for t in &tl {
            runtime.extend(t.iter().cloned());
        }
        let mut lists = Vec::with_capacity(keys.len());
        let mut images = Vec::with_capacity(keys.len());
        for (l, &(d, copy)) in keys.iter().enumerate() {
            let dev = &self.devices[d];
            let target = dev.props().target;
            let mut b = ListBuilder::new(copy, target);
            // Nodes of a device profiling when bound write their start and end times.
            let profiled = dev.profiling();
            let mut stamps = Vec::new();
            for t in &tl {
                b.wait(Sym::from(&t[0]), Sym::from(&t[1]));
            }
            if !copy {
                b.barrier();
            }
            for (i, n) in self.nodes.iter().enumerate() {
                if list_of(n) != l {
                    continue;
                }
                for &dep in &n.deps {
                    if let Some(s) = node_sig[dep].as_ref().filter(|_| list_of(&self.nodes[dep]) != l) {
                        b.wait(Sym::Const(s.addr()), Sym::from(&replay));
                    }
                }
                let start = if profiled { Some(b.timestamp()?) } else { None };
                b.append(&n.work);
                if let Some(start) = start {
                    stamps.push((i, start, b.timestamp()?));
                }
                if let Some(s) = &node_sig[i] {
                    b.signal(Sym::Const(s.addr()), Sym::from(&replay), None);
                }
            }
            match &end_sig[l] {
                Some(s) => b.signal(Sym::Const(s.addr()), Sym::from(&replay), None),
                None => {
                    for (other, &(od, _)) in keys.iter().enumerate() {
                        if od == d
                            && other != l
                            && let Some(s) = &end_sig[other]
                        {
                            b.wait(Sym::Const(s.addr()), Sym::from(&replay));
                        }
                    }
                    let event = dev.iface().queue_event();
                    b.signal(Sym::from(&tl[d][0]), Sym::from(&tl[d][2]), event);
                }
            }
            let (list, copies_of) = b.bind(dev, copies, &runtime)?;
            let engine = if copy { Engine::Copy } else { Engine::Compute };
            let profile = ListProfile {
                names: stamps
                    .iter()
                    .map(|&(i, ..)| (self.nodes[i].name.clone(), engine))
                    .collect(),
                slots: stamps
                    .iter()
                    .map(|&(_, s, e)| (list.karg_off + s, list.karg_off + e))
                    .collect(),
            };
            lists.push(GraphList { dev: d, list, profile });
            images.push(copies_of);
        }
        let signals = node_sig.into_iter().chain(end_sig).flatten().collect();
        let profiled = lists.iter().any(|l| !l.profile.names.is_empty());
        // By copy, then list.
        let mut per_list: Vec<_> = images.into_iter().map(Vec::into_iter).collect();
        let images = (0..copies)
            .map(|_| per_list.iter_mut().filter_map(Iterator::next).collect())
            .collect();
        // Timelines are locked in one order (by address) whatever the graph's order.
        let mut order: Vec<usize> = (0..self.devices.len()).collect();
        order.sort_by_key(|&d| Arc::as_ptr(&self.devices[d].inner) as usize);
        Ok(BoundGraph {
            order,
            devices: self.devices.clone(),
            lists,
            signals,
            replay,
            tl,
            state: Mutex::new(ReplayState {
                count: 0,
                next: 0,
                images,
                runtime: Vec::new(),
                runs: (0..copies).map(|_| (0..keys.len()).map(|_| None).collect()).collect(),
                points: Vec::new(),
            }),
            copies,
            profiled,
        })
    }
}

/// A list being built for one engine of a graph.
enum ListBuilder {
    Compute(ComputeQueue),
    Copy(CopyQueue),
}

impl ListBuilder {
    fn new(copy: bool, target: amd_packets::GfxTarget) -> Self {
        if copy {
            ListBuilder::Copy(CopyQueue::new(target))
        } else {
            ListBuilder::Compute(ComputeQueue::new(target))
        }
    }

    fn wait(&mut self, addr: Sym, value: Sym) {
        match self {
            ListBuilder::Compute(q) => {
                q.wait_addr(addr, value);
            }
            ListBuilder::Copy(q) => {
                q.wait_addr(addr, value);
            }
        }
    }

    fn signal(&mut self, addr: Sym, value: Sym, event: Option<(u64, u32)>) {
        match self {
            ListBuilder::Compute(q) => {
                q.signal_addr(addr, value, event);
            }
            ListBuilder::Copy(q) => {
                q.signal_addr(addr, value, event);
            }
        }
    }

    /// Writes the GPU clock into a new slot of the list's kernel arguments; returns
    /// its offset there.
    fn timestamp(&mut self) -> Result<usize> {
        match self {
            ListBuilder::Compute(q) => {
                let Ok(off) = q.timestamp_in_kernargs();
                Ok(off)
            }
            ListBuilder::Copy(q) => q.timestamp_in_kernargs(),
        }
    }

    fn barrier(&mut self) {
        if let ListBuilder::Compute(q) = self {
            q.memory_barrier();
        }
    }

    fn append(&mut self, w: &Work) {
        match (self, w) {
            (ListBuilder::Compute(q), Work::Compute(seg)) => q.append(seg),
            (ListBuilder::Copy(q), Work::Copy(seg)) => q.append(seg),
            // Lists are keyed by engine: a node only joins a list of its kind.
            _ => {}
        }
    }

    fn bind<I: DeviceInterface>(
        self,
        dev: &Device<I>,
        copies: usize,
        runtime: &[Var],
    ) -> Result<(BoundList, Vec<Image<I>>)> {
        match self {
            ListBuilder::Compute(q) => {
                if q.cmds.len() > IndirectBuffer::MAX_DWORDS as usize {
                    return Err(HcqError::ListSize {
                        list: "graph's compute list",
                        dwords: q.cmds.len(),
                        max: IndirectBuffer::MAX_DWORDS as usize,
                    });
                }
                BoundList::new(dev, &q.cmds, q.rec, false, copies, runtime)
            }
            ListBuilder::Copy(q) => {
                let mut words = q.cmds;
                if words.len() > amd_packets::sdma::Indirect::MAX_DWORDS as usize {
                    return Err(HcqError::ListSize {
                        list: "graph's copy list",
                        dwords: words.len(),
                        max: amd_packets::sdma::Indirect::MAX_DWORDS as usize,
                    });
                }
                words.resize(words.len().next_multiple_of(8), 0);
                BoundList::new(dev, &words, q.rec, true, copies, runtime)
            }
        }
    }
}

struct GraphList {
    /// Index into the graph's devices.
    dev: usize,
    list: BoundList,
    profile: ListProfile,
}

/// The profiled nodes of a list: each one's name and engine, and where in a copy of
/// the list its start and end timestamps are (byte offsets).
struct ListProfile {
    names: Vec<(Arc<str>, Engine)>,
    slots: Arc<[(usize, usize)]>,
}

struct ReplayState<I: DeviceInterface> {
    /// Replays so far (the value graph signals carry), restarting past the wrap.
    count: u64,
    /// Each copy of the graph: one image per list.
    images: Vec<Vec<Image<I>>>,
    /// The runtime's values of the replay (see `Graph::bind_copies`).
    runtime: Vec<u64>,
    points: Vec<Point>,
    /// The copy the next replay uses.
    next: usize,
    /// By copy, then list: the profiled run whose timestamps that copy holds.
    runs: Vec<Vec<Option<Arc<GraphRun<I>>>>>,
}

/// A graph bound into GPU memory; see [`Graph`].
pub struct BoundGraph<I: DeviceInterface = crate::AnyIface> {
    devices: Vec<Device<I>>,
    /// Device indices in the order their timelines are locked.
    order: Vec<usize>,
    lists: Vec<GraphList>,
    signals: Vec<Signal<I>>,
    replay: Var,
    tl: Vec<[Var; 3]>,
    state: Mutex<ReplayState<I>>,
    copies: usize,
    /// Whether some list writes timestamps (see [`BoundGraph::profile_runs`]).
    profiled: bool,
}

impl<I: DeviceInterface> std::fmt::Debug for BoundGraph<I> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BoundGraph")
            .field("devices", &self.devices.len())
            .field("lists", &self.lists.len())
            .field("copies", &self.copies)
            .finish()
    }
}

impl<I: DeviceInterface> BoundGraph<I> {
    /// The devices it runs on, in the order [`BoundGraph::replay`] reports them.
    pub fn devices(&self) -> &[Device<I>] {
        &self.devices
    }

    /// Dwords of each list: (device index, copy engine, dwords).
    pub fn lists(&self) -> Vec<(usize, bool, usize)> {
        self.lists
            .iter()
            .map(|l| (self.devices[l.dev].index(), l.list.copy, l.list.dwords as usize))
            .collect()
    }

    /// How many values a replay evaluates and may rewrite (sites whose values depend
    /// on variables; those that depend only on where a copy lives are written once).
    pub fn sites(&self) -> usize {
        self.lists.iter().map(|l| l.list.plan.len()).sum()
    }

    /// The variables its symbols use (the runtime's own excluded).
    pub fn vars(&self) -> Vec<Var> {
        let mut out: Vec<Var> = Vec::new();
        for l in &self.lists {
            for v in &l.list.rec.vars {
                let internal = *v == self.replay
                    || self.tl.iter().any(|t| t.contains(v))
                    || Some(v) == l.list.rec.karg_base.as_ref();
                if !internal && !out.contains(v) {
                    out.push(v.clone());
                }
            }
        }
        out
    }

    /// Replays the graph with `vals` bound, after everything submitted before on each
    /// of its devices; returns the timeline value marking its end on each device (in
    /// [`BoundGraph::devices`] order). Only the sites whose values changed since the
    /// copy it uses last ran are rewritten; an unbound variable, a value that does not
    /// fit or a launch size a kernel refuses is an error, and nothing is sent.
    pub fn replay(&self, vals: &Bindings) -> Result<ReplayEnds> {
        if let [dev] = &self.devices[..] {
            return self.replay_on(dev, vals);
        }
        for d in &self.devices {
            d.inner.check()?;
        }
        let mut st = self.state.lock();
        let st = &mut *st;
        let j = self.next_copy(st)?;
        let imgs = &mut st.images[j];
        for (l, img) in self.lists.iter().zip(imgs.iter()) {
            self.devices[l.dev].wait_point(img.last_run)?;
        }
        if self.profiled {
            collect_runs(&mut st.runs[j]);
        }
        let imgs = &mut st.images[j];
        let mut guards: Few<MutexGuard<'_, Engines<I>>> = Few::new(self.devices.len());
        for &d in &self.order {
            *guards.slot(d) = Some(self.devices[d].lock_engines()?);
        }
        let count = st.count + 1;
        st.runtime.clear();
        st.runtime.push(count);
        st.points.clear();
        for g in guards.slots() {
            let t = &g
                .as_ref()
                .ok_or(HcqError::Internal {
                    what: "a graph device's timeline not locked",
                })?
                .timeline;
            st.runtime.extend([t.signal().addr(), t.last().value, t.next().value]);
            st.points.push(t.next());
        }
        for (l, img) in self.lists.iter().zip(imgs.iter_mut()) {
            l.list.update(img, vals, &st.runtime)?;
        }
        // The values are taken, and the replay noted, before the packets go out: a ring
        // that fails midway leaves its value unsignalled (a wait for it reports the
        // device), never signalled twice; and the GPU starts at the first doorbell, so
        // what the host does after it only delays the return.
        for (g, dev) in guards.slots_mut().iter_mut().zip(&self.devices) {
            if let Some(e) = g.as_mut() {
                e.timeline
                    .advance(OpName::Static("graph replay"), dev.inner.seen_done());
            }
        }
        for (l, img) in self.lists.iter().zip(imgs.iter_mut()) {
            let e = guards.slot(l.dev).as_mut().ok_or(HcqError::Internal {
                what: "a graph device's timeline not locked",
            })?;
            push_list(e, &self.devices[l.dev], img)?;
            img.last_run = st.points[l.dev];
        }
        if self.profiled {
            // Without the timelines held: reading earlier records may free memory.
            drop(guards);
            self.profile_runs(st, j);
        }
        self.finish(st, j, count);
        Ok(ReplayEnds::new(st.points.iter().map(|p| p.logical())))
    }

    /// [`BoundGraph::replay`] of a graph on one device: the same steps, with its one
    /// timeline lock held directly (the common case, kept short).
    fn replay_on(&self, dev: &Device<I>, vals: &Bindings) -> Result<ReplayEnds> {
        dev.inner.check()?;
        let mut st = self.state.lock();
        let st = &mut *st;
        let j = self.next_copy(st)?;
        let imgs = &mut st.images[j];
        for img in imgs.iter() {
            dev.wait_point(img.last_run)?;
        }
        if self.profiled {
            collect_runs(&mut st.runs[j]);
        }
        let imgs = &mut st.images[j];
        let mut guard = dev.lock_engines()?;
        let e = &mut *guard;
        let count = st.count + 1;
        let t = &e.timeline;
        let runtime = [count, t.signal().addr(), t.last().value, t.next().value];
        for (l, img) in self.lists.iter().zip(imgs.iter_mut()) {
            l.list.update(img, vals, &runtime)?;
        }
        // Taken before the packets go out, as in `replay`.
        let point = e
            .timeline
            .advance(OpName::Static("graph replay"), dev.inner.seen_done());
        for img in imgs.iter_mut() {
            push_list(e, dev, img)?;
            img.last_run = point;
        }
        if self.profiled {
            // Without the timeline held: reading earlier records may free memory.
            drop(guard);
            self.profile_runs(st, j);
        }
        self.finish(st, j, count);
        Ok(ReplayEnds::one(point.logical()))
    }

    /// Notes the run copy `j` just started of each profiled list: its nodes join their
    /// devices' profiles, their times read when the run is done (see [`GraphRun`]).
    #[cold]
    fn profile_runs(&self, st: &mut ReplayState<I>, j: usize) {
        for (l, list) in self.lists.iter().enumerate() {
            let p = &list.profile;
            if p.names.is_empty() {
                continue;
            }
            let (Some(img), Some(slot)) = (st.images[j].get(l), st.runs[j].get_mut(l)) else {
                continue;
            };
            let run = GraphRun::new(img.buf.clone(), p.slots.clone());
            *slot = Some(run.clone());
            let mut state = self.devices[list.dev].inner.profile.state.lock();
            let mut released = Vec::new();
            for (k, (name, engine)) in p.names.iter().enumerate() {
                released.extend(
                    state
                        .log
                        .push((name.to_string(), *engine, Stamps::Graph(run.clone(), k))),
                );
            }
            // Released without the log held (it may free memory).
            drop(state);
            drop(released);
        }
    }

    /// The copy the next replay uses (an index into `st.images`), restarting the
    /// replay count first when it passed [`TIMELINE_WRAP`].
    #[inline]
    fn next_copy(&self, st: &mut ReplayState<I>) -> Result<usize> {
        if st.count + 1 > TIMELINE_WRAP {
            self.restart_count(st, 0)?;
        }
        if st.next >= st.images.len() {
            return Err(HcqError::Internal {
                what: "a replay's copy index past the graph's copies",
            });
        }
        Ok(st.next)
    }

    /// Notes replay `count` sent from copy `j`.
    #[inline]
    fn finish(&self, st: &mut ReplayState<I>, j: usize, count: u64) {
        st.count = count;
        // The next copy, round the `copies` (no division on this path).
        st.next = if j + 1 >= self.copies { 0 } else { j + 1 };
    }

    /// Waits for every replay so far.
    pub fn synchronize(&self) -> Result<()> {
        let last: Vec<(usize, Point)> = {
            let st = self.state.lock();
            self.last_runs(&st).collect()
        };
        for (d, p) in last {
            self.devices[d].wait_point(p)?;
        }
        Ok(())
    }

    /// Sets the replay count, and the graph's signals, as if `count` replays had run
    /// (tests of its restart past [`TIMELINE_WRAP`]); waits for every replay first.
    #[doc(hidden)]
    pub fn set_replay_count_for_test(&self, count: u64) -> Result<()> {
        self.restart_count(&mut self.state.lock(), count)
    }

    /// Once every replay is done, sets the replay count and the graph's signals to
    /// `count` (0 past [`TIMELINE_WRAP`]: graph signals compare in 32 bits).
    #[cold]
    fn restart_count(&self, st: &mut ReplayState<I>, count: u64) -> Result<()> {
        self.wait_all(st)?;
        for s in &self.signals {
            s.set(count)?;
        }
        st.count = count;
        Ok(())
    }

    /// The last run of each copy of each list: (device index, point).
    fn last_runs<'a>(&'a self, st: &'a ReplayState<I>) -> impl Iterator<Item = (usize, Point)> + 'a {
        st.images
            .iter()
            .flat_map(|copy| self.lists.iter().zip(copy).map(|(l, img)| (l.dev, img.last_run)))
    }

    /// Waits for every replay so far, under the replay lock.
    fn wait_all(&self, st: &ReplayState<I>) -> Result<()> {
        for (d, p) in self.last_runs(st) {
            self.devices[d].wait_point(p)?;
        }
        Ok(())
    }
}

/// Reads the timestamps of a copy's previous runs (done by now) before it runs again.
#[cold]
fn collect_runs<I: DeviceInterface>(runs: &mut [Option<Arc<GraphRun<I>>>]) {
    for r in runs.iter_mut().filter_map(Option::take) {
        r.collect();
    }
}

/// Sends a copy of a bound list to its engine: one indirect packet, built when the
/// list was bound.
#[inline]
fn push_list<I: DeviceInterface>(e: &mut Engines<I>, dev: &Device<I>, img: &Image<I>) -> Result<()> {
    match img.copy_indirect() {
        Some(q) => e.push_copy(q, &*dev.inner),
        None => e.push_compute(img.indirect(), &*dev.inner),
    }
}

/// The timeline values marking the end of a replay, one per device of the graph (in
/// [`BoundGraph::devices`] order); indexes and iterates like a slice of `u64`, without
/// an allocation for up to four devices.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplayEnds(Ends);

#[derive(Clone, Debug, PartialEq, Eq)]
enum Ends {
    Inline([u64; FEW], usize),
    Heap(Vec<u64>),
}

impl ReplayEnds {
    /// The end of a replay on one device.
    fn one(value: u64) -> Self {
        let mut a = [0; FEW];
        a[0] = value;
        ReplayEnds(Ends::Inline(a, 1))
    }

    fn new(values: impl ExactSizeIterator<Item = u64>) -> Self {
        let n = values.len();
        if n <= FEW {
            let mut a = [0; FEW];
            for (slot, v) in a.iter_mut().zip(values) {
                *slot = v;
            }
            ReplayEnds(Ends::Inline(a, n))
        } else {
            ReplayEnds(Ends::Heap(values.collect()))
        }
    }
}

impl std::ops::Deref for ReplayEnds {
    type Target = [u64];
    fn deref(&self) -> &[u64] {
        match &self.0 {
            Ends::Inline(a, n) => &a[..*n],
            Ends::Heap(v) => v,
        }
    }
}

/// How many locks a replay keeps without allocating (graphs mostly span one or two
/// devices, with a compute and a copy list on each).
const FEW: usize = 4;

/// Up to [`FEW`] slots inline, more on the heap: the locks a replay holds.
enum Few<T> {
    /// The slots and how many are in use.
    Inline([Option<T>; FEW], usize),
    Heap(Vec<Option<T>>),
}

impl<T> Few<T> {
    /// `n` empty slots.
    fn new(n: usize) -> Self {
        if n <= FEW {
            Few::Inline(std::array::from_fn(|_| None), n)
        } else {
            let mut v = Vec::with_capacity(n);
            v.resize_with(n, || None);
            Few::Heap(v)
        }
    }

    fn slots(&self) -> &[Option<T>] {
        match self {
            Few::Inline(a, n) => &a[..*n],
            Few::Heap(v) => v,
        }
    }

    fn slots_mut(&mut self) -> &mut [Option<T>] {
        match self {
            Few::Inline(a, n) => &mut a[..*n],
            Few::Heap(v) => v,
        }
    }

    fn slot(&mut self, i: usize) -> &mut Option<T> {
        &mut self.slots_mut()[i]
    }
}
