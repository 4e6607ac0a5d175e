//! The PM4 engine (MEC): SH registers, dispatches, cache operations, releases with
//! interrupts, register/memory waits, indirect buffers.

use amd_packets::pm4::{DataSel, IntSel, Pm4Packet, WaitLocation, WaitOperation};

use super::executor::DispatchInfo;
use super::{Engines, Exec, LongOp, QueueExec, Stop, decode_stop, packet_place};

/// DISPATCH_INITIATOR.CS_W32_EN: waves of 32 lanes (gfx10 and later).
const CS_W32_EN: u32 = 1 << 15;

/// SET_SH_REG offsets the dispatch reads (identical on gfx10.3 and gfx11).
mod reg {
    pub const NUM_THREAD_X: u16 = 0x207;
    pub const PGM_LO: u16 = 0x20c;
    pub const SCRATCH_BASE_LO: u16 = 0x210;
    pub const RSRC1: u16 = 0x212;
    pub const RSRC2: u16 = 0x213;
    pub const TMPRING_SIZE: u16 = 0x218;
    pub const RSRC3: u16 = 0x228;
    pub const USER_DATA_0: u16 = 0x240;
}

impl Engines {
    pub(super) fn exec_pm4(
        &mut self,
        q: &mut QueueExec,
        words: &[u32],
        ring_pos: Option<u64>,
    ) -> Result<(usize, Exec), Stop> {
        let (pkt, len) = Pm4Packet::decode(q.target, words)
            .map_err(|e| decode_stop(e, "PM4", ring_pos.map(|p| p % q.ring_dwords)))?;
        let exec = self.pm4_packet(q, pkt).map_err(|e| match e {
            Stop::Fault(f) => Stop::FaultIn(f, format!("PM4 {pkt}{}", packet_place(ring_pos, q.ring_dwords))),
            e => e,
        })?;
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
                let r = |o: u16| q.regs.get(&o).copied().unwrap_or(0);
                let mut user_data = [0u32; 16];
                for (i, u) in user_data.iter_mut().enumerate() {
                    *u = r(reg::USER_DATA_0 + i as u16);
                }
                let info = DispatchInfo {
                    gpu: q.gpu,
                    queue: q.id,
                    target: q.target,
                    regs: amd_isa::Dispatch {
                        code_addr: ((r(reg::PGM_LO + 1) as u64) << 32 | r(reg::PGM_LO) as u64) << 8,
                        rsrc: [r(reg::RSRC1), r(reg::RSRC2), r(reg::RSRC3)],
                        user_data,
                        block: [r(reg::NUM_THREAD_X), r(reg::NUM_THREAD_X + 1), r(reg::NUM_THREAD_X + 2)],
                        grid: p.dims,
                        tmpring_size: r(reg::TMPRING_SIZE),
                        scratch_base: ((r(reg::SCRATCH_BASE_LO + 1) as u64) << 32 | r(reg::SCRATCH_BASE_LO) as u64)
                            << 8,
                        initiator: p.initiator.0,
                        // gfx10 and later run wave64 unless the dispatch asks for wave32.
                        wave64: p.initiator.0 & CS_W32_EN == 0,
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
