//! The PM4 engine (MEC): SH registers, dispatches, cache operations, releases with
//! interrupts, register/memory waits, indirect buffers.

use amd_packets::pm4::regs::gfx11 as reg;
use amd_packets::pm4::{DataSel, DispatchInitiator, IntSel, Pm4Packet, ShReg, WaitLocation, WaitOperation};

use super::executor::DispatchInfo;
use super::{Engines, Exec, LongOp, QueueExec, Stop, decode_stop, fault_in_packet};

// The dispatch reads the COMPUTE_* registers at gfx11's SET_SH_REG offsets, which are
// gfx10.3's and gfx12's too, and gfx9.4's but for COMPUTE_PGM_RSRC3.

impl Engines {
    pub(super) fn exec_pm4(
        &mut self,
        q: &mut QueueExec,
        words: &[u32],
        ring_pos: Option<u64>,
    ) -> Result<(usize, Exec), Stop> {
        let (pkt, len) =
            Pm4Packet::decode(q.target, words).map_err(|e| decode_stop(e, "PM4", ring_pos, q.ring_dwords))?;
        if let Pm4Packet::PredExec(p) = pkt {
            // One command processor stands for a partition's XCCs: XCC 0's. It runs
            // what XCC 0 would and dispatches every workgroup (see docs/mock.md).
            if p.runs_on(0) {
                return Ok((len, Exec::Done));
            }
            let skip = len + usize::from(p.exec_count());
            if skip > words.len() {
                return Err(match ring_pos {
                    Some(_) => Stop::NeedMore(skip),
                    None => Stop::Error(format!(
                        "PM4 {pkt} in an indirect buffer: its dwords run {} past the buffer's end",
                        skip - words.len()
                    )),
                });
            }
            return Ok((skip, Exec::Done));
        }
        let exec = self
            .pm4_packet(q, pkt)
            .map_err(|e| fault_in_packet(e, &format_args!("PM4 {pkt}"), ring_pos, q.ring_dwords))?;
        Ok((len, exec))
    }

    fn pm4_packet(&mut self, q: &mut QueueExec, pkt: Pm4Packet<'_>) -> Result<Exec, Stop> {
        let vm = q.vm.clone();
        let exec = match pkt {
            Pm4Packet::Nop(_) => Exec::Done,
            Pm4Packet::SetShReg(p) => {
                for (i, &v) in p.values().iter().enumerate() {
                    q.regs.insert(p.reg().offset().wrapping_add(i as u16), v);
                }
                Exec::Done
            }
            Pm4Packet::DispatchDirect(p) => {
                let r = |reg: ShReg| q.regs.get(&reg.offset()).copied().unwrap_or(0);
                let pair = |lo: ShReg| u64::from(r(lo.add(1))) << 32 | u64::from(r(lo));
                let user_data = std::array::from_fn(|i| r(reg::COMPUTE_USER_DATA_0.add(i as u16)));
                let info = DispatchInfo {
                    gpu: q.gpu,
                    queue: q.id,
                    target: q.target,
                    sanitize: self.sanitize,
                    regs: amd_isa::Dispatch {
                        code_addr: pair(reg::COMPUTE_PGM_LO) << 8,
                        rsrc: [
                            r(reg::COMPUTE_PGM_RSRC1),
                            r(reg::COMPUTE_PGM_RSRC2),
                            r(if q.target.is_gfx9() {
                                amd_packets::pm4::regs::gfx94::COMPUTE_PGM_RSRC3
                            } else {
                                reg::COMPUTE_PGM_RSRC3
                            }),
                        ],
                        user_data,
                        block: std::array::from_fn(|k| r(reg::COMPUTE_NUM_THREAD_X.add(k as u16))),
                        grid: p.dims,
                        tmpring_size: r(reg::COMPUTE_TMPRING_SIZE),
                        scratch_base: pair(reg::COMPUTE_DISPATCH_SCRATCH_BASE_LO) << 8,
                        initiator: p.initiator.0,
                        // gfx10 and later run wave64 unless the dispatch asks for wave32;
                        // gfx9 has waves of 64 only (its initiator has no CS_W32_EN).
                        wave64: !q.target.has_wave32() || !p.initiator.contains(DispatchInitiator::CS_W32_EN),
                    },
                };
                // Runs with the driver lock released; the packet completes after it.
                Exec::Long(LongOp::Dispatch(info))
            }
            Pm4Packet::EventWrite(_) => {
                q.counters.event_writes += 1;
                Exec::Done
            }
            Pm4Packet::AcquireMem(_) => {
                q.counters.cache_ops += 1;
                Exec::Done
            }
            Pm4Packet::ReleaseMem(p) => {
                // All prior work of this queue is complete: packets run in order and a
                // dispatch runs to completion before the next packet.
                match p.data_sel {
                    DataSel::None => {}
                    DataSel::Data32 => self.vm_store::<u32>(&vm, p.address, p.data as u32)?,
                    DataSel::Data64 => self.vm_store::<u64>(&vm, p.address, p.data)?,
                    DataSel::GpuClock => self.vm_store::<u64>(&vm, p.address, self.gpu_clock())?,
                    DataSel::SystemClock => {
                        let ns = self.clock_origin.elapsed().as_nanos() as u64;
                        self.vm_store::<u64>(&vm, p.address, ns)?
                    }
                    DataSel::GdsData => return Err(Stop::Error("RELEASE_MEM of GDS data is not emulated".into())),
                }
                if p.int_sel != IntSel::None {
                    q.counters.interrupts += 1;
                    self.interrupt(q, p.int_ctxid);
                }
                Exec::Done
            }
            Pm4Packet::WaitRegMem(p) => {
                let value = match p.location {
                    WaitLocation::Memory { addr } => self.vm_load::<u32>(&vm, addr)?,
                    WaitLocation::Registers { reg0, reg1 } => match p.operation {
                        WaitOperation::WaitRegMem => self.reg_read(q, reg0),
                        WaitOperation::WriteWaitWriteReg => {
                            self.reg_write(q, reg0, p.reference);
                            self.reg_read(q, reg1)
                        }
                    },
                };
                if p.function.test(value, p.mask, p.reference) {
                    Exec::Done
                } else {
                    Exec::Blocked
                }
            }
            // Taken before (it decides what runs after it).
            Pm4Packet::PredExec(_) => Exec::Done,
            Pm4Packet::IndirectBuffer(p) => {
                if !p.valid {
                    Exec::Done
                } else {
                    Exec::Ib(self.vm_read_words(&vm, p.addr(), p.size_dwords() as usize)?)
                }
            }
        };
        Ok(exec)
    }
}
