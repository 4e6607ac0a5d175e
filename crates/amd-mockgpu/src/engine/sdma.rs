//! The SDMA engine: copies, fills, fences, traps, polls, timestamps, cache requests
//! and indirect buffers.

use amd_packets::sdma::{Indirect, SdmaPacket};

use super::{Engines, Exec, LongOp, QueueExec, SLICE_BYTES, Stop, decode_stop, fault_in_packet};

impl Engines {
    pub(super) fn exec_sdma(
        &mut self,
        q: &mut QueueExec,
        words: &[u32],
        ring_pos: Option<u64>,
    ) -> Result<(usize, Exec), Stop> {
        let (pkt, len) =
            SdmaPacket::decode(q.target, words).map_err(|e| decode_stop(e, "SDMA", ring_pos, q.ring_dwords))?;
        let exec = self
            .sdma_packet(q, pkt, ring_pos)
            .map_err(|e| fault_in_packet(e, &pkt, ring_pos, q.ring_dwords))?;
        Ok((len, exec))
    }

    fn sdma_packet(&mut self, q: &mut QueueExec, pkt: SdmaPacket, ring_pos: Option<u64>) -> Result<Exec, Stop> {
        let vm = q.vm.clone();
        let exec = match pkt {
            SdmaPacket::Nop(_) => Exec::Done,
            SdmaPacket::CopyLinear(p) => {
                let (src, dst, n) = (p.src(), p.dst(), p.bytes() as u64);
                if n > SLICE_BYTES {
                    // In slices, with the driver lock released.
                    return Ok(Exec::Long(LongOp::Copy { dst, src, len: n }));
                }
                // Overlapping ranges copy as memmove does, in either direction (the
                // BACKWARDS bit exists so that overlapping copies come out right).
                self.vm_copy(&vm, dst, src, n)?;
                q.counters.bytes += n;
                Exec::Done
            }
            SdmaPacket::ConstFill(p) => {
                if p.bytes() as u64 > SLICE_BYTES {
                    return Ok(Exec::Long(LongOp::Fill {
                        dst: p.dst(),
                        pattern: p.data(),
                        len: p.bytes() as u64,
                    }));
                }
                self.vm_fill(&vm, p.dst(), p.data(), p.bytes() as u64)?;
                q.counters.bytes += p.bytes() as u64;
                Exec::Done
            }
            SdmaPacket::Fence(p) => {
                self.vm_store::<u32>(&vm, p.addr, p.data)?;
                Exec::Done
            }
            SdmaPacket::Trap(p) => {
                q.counters.interrupts += 1;
                self.interrupt(q, p.int_context());
                Exec::Done
            }
            SdmaPacket::PollRegmem(p) => {
                let value = if p.mem_poll {
                    self.vm_load::<u32>(&vm, p.addr)?
                } else {
                    self.reg_read(q, p.addr as u32)
                };
                if p.function.test(value, p.mask, p.reference) {
                    Exec::Done
                } else {
                    Exec::Blocked
                }
            }
            SdmaPacket::Timestamp(p) => {
                // The engine writes the 8-aligned slot (bits 2:0 of the address are ignored).
                self.vm_store::<u64>(&vm, p.addr() & !7, self.gpu_clock())?;
                Exec::Done
            }
            SdmaPacket::GcrReq(_) => {
                q.counters.cache_ops += 1;
                Exec::Done
            }
            SdmaPacket::Atomic(p) => {
                // Only the operation whose number the drivers' headers give is known here.
                if p.operation != amd_packets::sdma::Atomic::ADD64 {
                    return Err(Stop::Error(format!(
                        "SDMA_ATOMIC operation {} is not emulated (only SDMA_ATOMIC_ADD64, {})",
                        p.operation,
                        amd_packets::sdma::Atomic::ADD64
                    )));
                }
                if p.addr % 8 != 0 {
                    return Err(Stop::Error(format!("SDMA_ATOMIC at {:#x}: not 8-byte aligned", p.addr)));
                }
                self.space
                    .read()
                    .vm_rmw::<u64, ()>(&vm, p.addr, |v| Ok(v.wrapping_add(p.src_data)))?
                    .ok();
                Exec::Done
            }
            SdmaPacket::Indirect(p) => {
                let Some(pos) = ring_pos else {
                    return Err(Stop::Error("SDMA INDIRECT inside an indirect buffer".into()));
                };
                let at = pos % q.ring_dwords;
                if Indirect::padding_at(at as usize) != 0 {
                    return Err(Stop::Error(format!(
                        "SDMA INDIRECT at ring dword {at:#x} does not end on an 8-dword boundary"
                    )));
                }
                if p.addr() % 32 != 0 {
                    return Err(Stop::Error(format!(
                        "SDMA INDIRECT base {:#x} is not 32-byte aligned",
                        p.addr()
                    )));
                }
                Exec::Ib(self.vm_read_words(&vm, p.addr(), p.size_dwords() as usize)?)
            }
        };
        Ok(exec)
    }
}
