//! The AQL compute queue: what a device's compute lane does when its hardware queue
//! takes HSA packets rather than PM4.
//!
//! Lists are recorded as PM4 whatever the queue ([`crate::ComputeQueue`] and its
//! variables, bound lists and graphs are unchanged); at the ring they are sent as AQL
//! packets, as tinygrad 0.14 sends its lists with `AMD_AQL=1`: each DISPATCH_DIRECT
//! becomes a kernel dispatch packet (its kernel descriptor, grid, workgroup and kernel
//! arguments read from the dispatch's registers after the list's values were bound),
//! and the PM4 between dispatches (waits, signals, timestamps, cache operations) goes
//! into an indirect buffer run by AMD's PM4-IB vendor packet. The command processor
//! then loads the user SGPRs the kernel asks for itself, and takes scratch from the
//! queue's `amd_queue_t`, which the device keeps current ([`HwQueue::set_aql_scratch`]).
//!
//! A graph replay sends its bound image as one indirect buffer: its dispatches run as
//! PM4 from that buffer (a PM4-IB packet), not as kernel dispatch packets.

use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};

use amd_packets::aql::{self, FenceScope, Header, KernelDispatch, PacketType, Pm4Ib};
use amd_packets::pm4::regs::gfx11 as sh;
use amd_packets::pm4::{IndirectBuffer, Opcode, Pm4Packet};
use amd_packets::{GfxTarget, PacketError};

use crate::fence::DeviceLink;
use crate::iface::{DeviceInterface, DeviceMemory, HwQueue};
use crate::{HcqError, Result};

/// The kind of hardware queue a device's compute lane uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum QueueFormat {
    /// A PM4 compute queue (the default; what tinygrad 0.10.1 uses).
    #[default]
    Pm4,
    /// An AQL queue (HSA packets: what ROCr and HIP use, and tinygrad 0.14 with
    /// `AMD_AQL=1`). The KFD transport only.
    Aql,
}

impl QueueFormat {
    /// The environment variable that chooses the format of devices opened with
    /// [`crate::Platform::device`]: `pm4` (or unset) or `aql`.
    pub const ENV: &'static str = "HCQ_COMPUTE_QUEUE";

    /// The format [`QueueFormat::ENV`] names (PM4 when it is unset).
    pub fn from_env() -> Result<Self> {
        match std::env::var(Self::ENV) {
            Err(_) => Ok(QueueFormat::Pm4),
            Ok(v) => Self::parse(&v),
        }
    }

    /// The format a value of [`QueueFormat::ENV`] names: `pm4` (or empty) or `aql`, in
    /// any case.
    pub fn parse(value: &str) -> Result<Self> {
        match value.trim().to_ascii_lowercase().as_str() {
            "" | "pm4" => Ok(QueueFormat::Pm4),
            "aql" => Ok(QueueFormat::Aql),
            _ => Err(HcqError::EnvValue {
                var: Self::ENV,
                value: value.to_string(),
                expected: "pm4 or aql",
            }),
        }
    }
}

/// What a kernel dispatch packet needs of a loaded kernel that its PM4 dispatch does
/// not carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct AqlKernel {
    /// The kernel descriptor's address.
    pub(crate) kernel_object: u64,
    /// Group (LDS) and private (scratch per work-item) segment bytes.
    pub(crate) group_segment_size: u32,
    pub(crate) private_segment_size: u32,
    /// The user SGPR holding the kernel-argument pointer in the PM4 dispatch (the
    /// runtime always passes it).
    pub(crate) kernarg_sgpr: usize,
}

/// The loaded kernels by code address, the last one found kept at hand (a loop's
/// launches name one kernel again and again; the map hashes its key).
#[derive(Debug, Default)]
struct Kernels {
    map: HashMap<u64, AqlKernel>,
    last: Option<(u64, AqlKernel)>,
}

impl Kernels {
    /// Notes `k` at `code` (in place of one there before).
    fn add(&mut self, code: u64, k: AqlKernel) {
        self.map.insert(code, k);
        self.last = None;
    }

    /// The kernel at `code`.
    #[inline]
    fn get(&mut self, code: u64) -> Option<AqlKernel> {
        match self.last {
            Some((c, k)) if c == code => Some(k),
            _ => {
                let k = *self.map.get(&code)?;
                self.last = Some((code, k));
                Some(k)
            }
        }
    }
}

/// Bytes of the indirect-buffer area each AQL lane has for the PM4 between dispatches
/// (tinygrad 0.14's 16 MiB: the PM4 of some 100,000 launches in flight).
pub(crate) const IB_BYTES: usize = 16 << 20;

/// A compute lane's AQL state: the indirect-buffer area (a ring: each submission's
/// buffers are reused once the packets that read them were consumed), the loaded
/// kernels by code address, and the packets of the submission being built.
pub(crate) struct AqlLane<I: DeviceInterface> {
    ib: I::Memory,
    /// Bytes placed so far (running, never wrapped) and bytes freed.
    ib_put: u64,
    ib_freed: u64,
    /// Per submission: the running byte count at its end and the packet count after
    /// its last packet.
    ib_live: VecDeque<(u64, u64)>,
    kernels: Kernels,
    target: GfxTarget,
    packets: Vec<[u32; aql::PACKET_DWORDS]>,
    ib_words: Vec<u32>,
    /// Per PM4-IB packet of the submission: its buffer's start and length in
    /// `ib_words`.
    segments: Vec<(usize, usize)>,
}

impl<I: DeviceInterface> AqlLane<I> {
    /// Notes a loaded kernel at `code_addr` (in place of one loaded there before).
    pub(crate) fn add_kernel(&mut self, code_addr: u64, k: AqlKernel) {
        self.kernels.add(code_addr, k);
    }

    pub(crate) fn new(ib: I::Memory, target: GfxTarget) -> Self {
        AqlLane {
            ib,
            ib_put: 0,
            ib_freed: 0,
            ib_live: VecDeque::new(),
            kernels: Kernels::default(),
            target,
            packets: Vec::new(),
            ib_words: Vec::new(),
            segments: Vec::new(),
        }
    }

    /// Sends the PM4 `parts` as AQL packets on `q`, whose write pointer (in packets)
    /// is `*put`; `seen` is the read pointer last read. `encoded`: every packet came
    /// from the runtime's encoders (none from [`crate::ComputeQueue::raw`]), so its
    /// header tells its length.
    pub(crate) fn write<Q: HwQueue>(
        &mut self,
        q: &Q,
        put: &mut u64,
        seen: &mut u64,
        parts: &[&[u32]],
        encoded: bool,
        dev: &dyn DeviceLink<I>,
    ) -> Result<()> {
        self.packets.clear();
        self.ib_words.clear();
        self.segments.clear();
        for part in parts {
            self.transcode(part, encoded)?;
        }
        let ib_len = (self.ib_words.len() * 4) as u64;
        let area = IB_BYTES as u64;
        if ib_len > area {
            return Err(HcqError::ListSize {
                list: "PM4 between the dispatches of a list for the AQL queue",
                dwords: self.ib_words.len(),
                max: IB_BYTES / 4,
            });
        }
        // This submission's indirect buffers are contiguous, from the running count,
        // wrapped to the area's start when they do not fit before its end.
        let at = self.ib_put % area;
        let skip = if at + ib_len > area { area - at } else { 0 };
        let slots = (q.ring_bytes() / aql::PACKET_BYTES) as u64;
        let n = self.packets.len() as u64;
        if n > slots {
            return Err(HcqError::ListSize {
                list: "list for the AQL queue (in packets)",
                dwords: n as usize,
                max: slots as usize,
            });
        }
        // Room: the buffers' bytes, and the packets' slots; the read pointer that
        // gives both (past the packets holding the slots, and those whose indirect
        // buffers hold the bytes), for a timeout.
        let ib_need = skip + ib_len;
        let put_now = *put;
        let wanted = |s: &Self| {
            let for_ib = s
                .ib_live
                .iter()
                .find(|&&(end, _)| s.ib_put + ib_need - end <= area)
                .map_or(0, |&(_, after)| after);
            (put_now + n).saturating_sub(slots).max(for_ib)
        };
        self.wait(q, seen, dev, wanted, |s, seen| {
            s.free(seen);
            s.ib_put + ib_need - s.ib_freed <= area && *put + n - (*seen).min(*put) <= slots
        })?;
        let ib_va = self.ib.va() + (at + skip) % area;
        let ib_off = ((at + skip) % area) as usize;
        if !self.ib_words.is_empty() {
            self.ib
                .write(ib_off, zerocopy::IntoBytes::as_bytes(&self.ib_words[..]))?;
        }
        // The PM4-IB packets' addresses, now that the area is known.
        let mut seg = self.segments.iter();
        for p in self.packets.iter_mut() {
            if p[0] as u8 == PacketType::VendorSpecific as u8 {
                let &(start, len) = seg.next().ok_or(HcqError::Internal {
                    what: "an AQL PM4-IB packet without its indirect buffer",
                })?;
                let ib = Pm4Ib::new(
                    header(PacketType::VendorSpecific),
                    ib_va + start as u64 * 4,
                    len as u32,
                    0,
                )?;
                *p = ib.to_dwords(self.target);
            }
        }
        // The packets in one write (two where they wrap): the engine reads no slot at
        // or past the write pointer, which is published after them, so no header needs
        // writing last.
        let words = self.packets.as_flattened();
        let first_slot = (*put % slots) as usize;
        let before_end = (slots as usize - first_slot).min(self.packets.len()) * aql::PACKET_DWORDS;
        q.write_ring(first_slot * aql::PACKET_BYTES, &words[..before_end])?;
        if before_end < words.len() {
            q.write_ring(0, &words[before_end..])?;
        }
        self.ib_put += skip + ib_len;
        *put += n;
        self.ib_live.push_back((self.ib_put, *put));
        q.submit(*put);
        Ok(())
    }

    /// Frees the indirect buffers of submissions whose packets were all consumed.
    fn free(&mut self, seen: &u64) {
        while let Some(&(end, after)) = self.ib_live.front() {
            if after > *seen {
                break;
            }
            self.ib_freed = end;
            self.ib_live.pop_front();
        }
    }

    /// Waits until `fits` (given the read pointer) holds; a timeout names the read
    /// pointer `wanted` says makes it hold.
    fn wait<Q: HwQueue>(
        &mut self,
        q: &Q,
        seen: &mut u64,
        dev: &dyn DeviceLink<I>,
        wanted: impl Fn(&Self) -> u64,
        mut fits: impl FnMut(&mut Self, &u64) -> bool,
    ) -> Result<()> {
        if fits(self, seen) {
            return Ok(());
        }
        let timeout = dev.timeout();
        let start = Instant::now();
        let mut polled = Duration::ZERO;
        loop {
            *seen = q.read_ptr();
            if fits(self, seen) {
                return Ok(());
            }
            if start.elapsed() >= polled {
                dev.poll_fault()?;
                polled = start.elapsed() + Duration::from_millis(1);
            }
            if start.elapsed() > timeout {
                return Err(HcqError::Timeout {
                    what: "room in the AQL ring and its indirect buffers".into(),
                    wanted: wanted(self),
                    current: *seen,
                    waited_ms: start.elapsed().as_millis() as u64,
                });
            }
            std::thread::yield_now();
        }
    }

    /// Appends the AQL packets for the PM4 `words`: kernel dispatch packets for its
    /// dispatches, PM4-IB packets (their addresses filled in later) for the rest, whose
    /// dwords go to `ib_words` (a segment per packet in `segments`: start, length).
    /// `encoded` as in [`AqlLane::write`]: the packets are read by their headers
    /// ([`shape`]), else decoded in full (a malformed one is an error here).
    fn transcode(&mut self, words: &[u32], encoded: bool) -> Result<()> {
        let mut regs = [0u32; 16];
        let (mut pgm, mut block) = ([0u32; 2], [1u32; 3]);
        let mut seg_start = self.ib_words.len();
        // The packets bound for the indirect buffer and not yet copied there are
        // `words[run..at]`: a run goes in one copy.
        let mut run = 0;
        let mut at = 0;
        while at < words.len() {
            let rest = &words[at..];
            let (pkt, len) = match encoded.then(|| shape(rest)).flatten() {
                Some(p) => p,
                None => {
                    let (p, len) = Pm4Packet::decode(self.target, rest).map_err(|e: PacketError| e.rebased(at))?;
                    let p = match p {
                        Pm4Packet::SetShReg(p) => Shape::SetShReg(p.reg().offset(), p.values()),
                        Pm4Packet::DispatchDirect(d) => Shape::Dispatch(d.dims),
                        _ => Shape::Other,
                    };
                    (p, len)
                }
            };
            match pkt {
                Shape::SetShReg(base, values) => {
                    for (i, &v) in values.iter().enumerate() {
                        let r = base.wrapping_add(i as u16);
                        match r {
                            _ if r == sh::COMPUTE_PGM_LO.offset() => pgm[0] = v,
                            _ if r == sh::COMPUTE_PGM_HI.offset() => pgm[1] = v,
                            _ if (sh::COMPUTE_NUM_THREAD_X.offset()..sh::COMPUTE_NUM_THREAD_X.offset() + 3)
                                .contains(&r) =>
                            {
                                block[usize::from(r - sh::COMPUTE_NUM_THREAD_X.offset())] = v & 0x3ff;
                            }
                            _ if (sh::COMPUTE_USER_DATA_0.offset()..sh::COMPUTE_USER_DATA_0.offset() + 16)
                                .contains(&r) =>
                            {
                                regs[usize::from(r - sh::COMPUTE_USER_DATA_0.offset())] = v;
                            }
                            _ => {}
                        }
                    }
                    // The registers stay in the indirect buffer too (in the run):
                    // harmless there.
                }
                Shape::Dispatch(dims) => {
                    self.ib_words.extend_from_slice(&words[run..at]);
                    run = at + len;
                    self.flush(&mut seg_start);
                    let code = (u64::from(pgm[1]) << 32 | u64::from(pgm[0])) << 8;
                    // let-else, not ok_or: an error built before it is known to be
                    // needed was built and dropped at every launch.
                    let Some(k) = self.kernels.get(code) else {
                        return Err(HcqError::AqlDispatch {
                            code_addr: code,
                            why: "no program loaded on this device has its code there",
                        });
                    };
                    let s = k.kernarg_sgpr;
                    let kernarg = u64::from(regs[s]) | u64::from(regs[s + 1]) << 32;
                    let mut grid = [0u32; 3];
                    for i in 0..3 {
                        let Some(g) = dims[i].checked_mul(block[i]) else {
                            return Err(HcqError::AqlDispatch {
                                code_addr: code,
                                why: "its grid in work-items does not fit 32 bits",
                            });
                        };
                        grid[i] = g;
                    }
                    let p = KernelDispatch {
                        header: header(PacketType::KernelDispatch),
                        dimensions: 3,
                        workgroup_size: block.map(|b| b as u16),
                        grid_size: grid,
                        private_segment_size: k.private_segment_size,
                        group_segment_size: k.group_segment_size,
                        kernel_object: k.kernel_object,
                        kernarg_address: kernarg,
                        completion_signal: 0,
                    };
                    self.packets.push(p.to_dwords());
                }
                Shape::Other => {
                    let pending = self.ib_words.len() + (at - run) - seg_start;
                    if pending + len > IndirectBuffer::MAX_DWORDS as usize {
                        self.ib_words.extend_from_slice(&words[run..at]);
                        run = at;
                        self.flush(&mut seg_start);
                    }
                }
            }
            at += len;
        }
        self.ib_words.extend_from_slice(&words[run..at]);
        self.flush(&mut seg_start);
        Ok(())
    }

    /// Ends the indirect buffer begun at `*start` (if it holds anything) with a PM4-IB
    /// packet, whose address is filled in once the buffers are placed.
    fn flush(&mut self, start: &mut usize) {
        let len = self.ib_words.len() - *start;
        if len > 0 {
            self.segments.push((*start, len));
            let mut p = [0u32; aql::PACKET_DWORDS];
            p[0] = header(PacketType::VendorSpecific).to_bits() as u32;
            self.packets.push(p);
        }
        *start = self.ib_words.len();
    }
}

/// What the transcoder reads of a PM4 packet.
#[derive(Debug, PartialEq, Eq)]
enum Shape<'a> {
    /// SET_SH_REG: the first register's offset and the values.
    SetShReg(u16, &'a [u32]),
    /// DISPATCH_DIRECT: the grid in workgroups.
    Dispatch([u32; 3]),
    /// Anything else, which goes to an indirect buffer as it is.
    Other,
}

/// The packet at the start of `words` as its header gives it, and its length, for a
/// packet from the runtime's encoders; `None` where the header or body is not what
/// the full decoder accepts for SET_SH_REG and DISPATCH_DIRECT, or runs past `words`
/// (the caller then decodes it in full, for the error).
fn shape(words: &[u32]) -> Option<(Shape<'_>, usize)> {
    let hdr = *words.first()?;
    if hdr >> 30 != 3 {
        return None;
    }
    let (opcode, count) = ((hdr >> 8) as u8, ((hdr >> 16) & 0x3fff) as usize);
    // A NOP of count 0x3fff is the one-dword filler.
    let len = if opcode == Opcode::Nop as u8 && count == 0x3fff {
        1
    } else {
        count + 2
    };
    let body = words.get(1..len)?;
    let p = match opcode {
        o if o == Opcode::SetShReg as u8 => match body {
            [reg, values @ ..] if !values.is_empty() && *reg <= u32::from(u16::MAX) => {
                Shape::SetShReg(*reg as u16, values)
            }
            _ => return None,
        },
        o if o == Opcode::DispatchDirect as u8 => match *body {
            [x, y, z, _] => Shape::Dispatch([x, y, z]),
            _ => return None,
        },
        _ => Shape::Other,
    };
    Some((p, len))
}

/// Every packet's header: it waits for the packets before it (barrier) and fences
/// system memory before and after, as tinygrad 0.14's AQL packets do.
fn header(ty: PacketType) -> Header {
    Header::new(ty).barrier().fences(FenceScope::System)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kernel kept at hand is the one loaded at the address now: a kernel loaded
    /// where another was replaces it there.
    #[test]
    fn a_kernel_loaded_again_at_an_address_replaces_the_one_kept() {
        let k = |object: u64| AqlKernel {
            kernel_object: object,
            group_segment_size: 0,
            private_segment_size: 0,
            kernarg_sgpr: 0,
        };
        let mut ks = Kernels::default();
        assert_eq!(ks.get(0x1000), None);
        ks.add(0x1000, k(1));
        ks.add(0x2000, k(2));
        assert_eq!(ks.get(0x1000), Some(k(1)));
        assert_eq!(ks.get(0x1000), Some(k(1)));
        assert_eq!(ks.get(0x2000), Some(k(2)));
        ks.add(0x2000, k(3));
        assert_eq!(ks.get(0x2000), Some(k(3)));
        assert_eq!(ks.get(0x1000), Some(k(1)));
        assert_eq!(ks.get(0x3000), None);
    }

    /// Wherever the full decoder accepts a packet, reading it by its header gives the
    /// same length and, for SET_SH_REG and DISPATCH_DIRECT, the same fields: random
    /// packets of every opcode the runtime encodes (and others), of random counts and
    /// bodies; a packet running past the words is left to the full decoder.
    #[test]
    fn a_packet_read_by_its_header_is_the_decoded_packet() {
        let mut rng = amd_packets::testing::xorshift64(0x2545_f491_4f6c_dd1d);
        let mut next = move || rng() as u32;
        let opcodes = [0x10, 0x15, 0x3c, 0x3f, 0x46, 0x49, 0x58, 0x76, 0x77, 0x00];
        let (mut agreed, mut sh, mut dispatch) = (0, 0, 0);
        for round in 0..200_000 {
            let op = opcodes[round % opcodes.len()];
            let count = match next() % 8 {
                0 => 0x3fff,
                k => (k as usize - 1) * (next() as usize % 3 + 1),
            };
            let mut words = vec![3 << 30 | (count as u32) << 16 | op << 8];
            // Bodies of all lengths around the header's, small register offsets
            // often (SET_SH_REG reads them), any value otherwise.
            let body = (count + 1).min(40) + next() as usize % 3;
            for k in 0..body {
                let v = next();
                words.push(if k == 0 && v % 2 == 0 { v % 0x1_0000 } else { v });
            }
            let full = Pm4Packet::decode(GfxTarget::Gfx11, &words);
            let light = shape(&words);
            let Ok((p, len)) = full else { continue };
            let want = match p {
                Pm4Packet::SetShReg(p) => {
                    sh += 1;
                    Shape::SetShReg(p.reg().offset(), p.values())
                }
                Pm4Packet::DispatchDirect(d) => {
                    dispatch += 1;
                    Shape::Dispatch(d.dims)
                }
                _ => Shape::Other,
            };
            assert_eq!(light, Some((want, len)), "{words:x?}");
            agreed += 1;
        }
        assert!(
            agreed > 10_000 && sh > 1_000 && dispatch > 1_000,
            "{agreed} {sh} {dispatch}"
        );
        // Past the end, or not a type-3 header: the full decoder's to refuse.
        assert_eq!(shape(&[3 << 30 | 4 << 16 | 0x76 << 8, 0x200, 1]), None);
        assert_eq!(shape(&[2 << 30]), None);
        assert_eq!(shape(&[]), None);
    }
}
