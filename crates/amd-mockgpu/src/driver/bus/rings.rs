//! The driver half of the PCI GPUs' rings: turns what the queue registers bind
//! ([`Queues::bindings`]) into engine queues, and back.
//!
//! Each PCI GPU has an engine slot after the KFD GPUs' (its own device thread in
//! threaded mode). When the slot runs, it first compares the queue block's binding
//! counter with the one it last saw; if the registers changed, a ring whose binding
//! is new or different gets a fresh engine queue (starting at the binding's read
//! pointer), and a ring no longer bound loses its queue (a long operation of it stops
//! at its next slice). A binding the registers cannot describe (a size past the
//! largest ring, a doorbell outside BAR 2, a GPU without a packet format) gives a
//! queue stopped with that error.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use amd_packets::GfxTarget;
use amd_regs::discovery::hw_id;

use crate::driver::Driver;
use crate::engine::{Engine, QueueExec, QueueStatus, WptrSource};
use crate::mem::Vm;
use crate::mem::gpuvm::Hub;
use crate::mem::pci::{PciVm, Peer};
use crate::pci::BAR_VRAM;
use crate::pci::queues::{Queues, RingBinding, RingKey};

/// A ring the queue registers bind, and the engine queue that consumes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PciRing {
    /// The engine queue's id (`MockSys::queue_state`).
    pub id: u32,
    /// What the registers said, or why they could not bind the ring.
    pub binding: Result<RingBinding, String>,
}

impl Driver {
    /// The engine slot of PCI GPU `dev` (after the KFD GPUs).
    pub(crate) fn pci_slot(&self, dev: usize) -> usize {
        self.gpus.len() + dev
    }

    /// The PCI GPU of engine slot `g`, if it is one.
    pub(crate) fn pci_dev_of_slot(&self, g: usize) -> Option<usize> {
        g.checked_sub(self.gpus.len()).filter(|&d| d < self.pci.devs.len())
    }

    /// Engine slots: the KFD GPUs, then the PCI GPUs.
    pub(crate) fn engine_slots(&self) -> usize {
        self.gpus.len() + self.pci.devs.len()
    }

    /// Brings PCI GPU `dev`'s engine queues in line with its queue registers.
    pub(crate) fn sync_pci_rings(&mut self, dev: usize) {
        let Some(p) = self.pci.devs.get_mut(dev) else { return };
        let Some(counter) = &p.ring_gen else { return };
        // Acquire: pairs with the block's Release bump after it stored the registers.
        let now = counter.load(Ordering::Acquire);
        if now == p.ring_gen_seen {
            return;
        }
        p.ring_gen_seen = now;
        let regs = p.regs.clone();
        let want: BTreeMap<RingKey, Result<RingBinding, String>> = regs
            .with_block_state(|_: &Queues| true, |q, v, _| q.bindings(v))
            .unwrap_or_default()
            .into_iter()
            .map(|b| match b {
                Ok(b) => (b.key, Ok(b)),
                Err((key, e)) => (key, Err(e)),
            })
            .collect();
        let old = std::mem::take(&mut self.pci.devs[dev].rings);
        let mut rings = BTreeMap::new();
        for (key, ring) in old {
            if want.get(&key) == Some(&ring.binding) {
                rings.insert(key, ring);
            } else {
                self.unbind_exec(ring.id);
            }
        }
        for (key, binding) in want {
            if let std::collections::btree_map::Entry::Vacant(slot) = rings.entry(key) {
                let id = self.bind_exec(dev, key, &binding);
                slot.insert(PciRing { id, binding });
            }
        }
        self.pci.devs[dev].rings = rings;
    }

    /// Has the queue registers of PCI engine slot `g` stop `stop`'s long operation of
    /// engine queue `id` once its ring is unbound or replaced (nothing for KFD GPUs).
    pub(crate) fn watch_pci_long(&self, g: usize, id: u32, stop: &Arc<AtomicBool>) {
        let Some(p) = self.pci_dev_of_slot(g).and_then(|d| self.pci.devs.get(d)) else {
            return;
        };
        let Some(b) = p
            .rings
            .values()
            .find(|r| r.id == id)
            .and_then(|r| r.binding.as_ref().ok())
        else {
            return;
        };
        let (key, epoch, stop) = (b.key, b.epoch, stop.clone());
        p.regs
            .with_block_state(|_: &Queues| true, |q, v, _| q.watch(v, key, epoch, stop));
    }

    /// Removes engine queue `id`; a long operation of it stops at its next slice.
    fn unbind_exec(&mut self, id: u32) {
        self.engines.execs.remove(&id);
        for (qid, stop) in self.engines.running.values() {
            if *qid == id {
                // Release: pairs with the engine's Acquire load between slices.
                stop.store(true, Ordering::Release);
            }
        }
    }

    /// Creates the engine queue of ring `key` of PCI GPU `dev`.
    fn bind_exec(&mut self, dev: usize, key: RingKey, binding: &Result<RingBinding, String>) -> u32 {
        let id = self.next_queue_id;
        self.next_queue_id = self.next_queue_id.wrapping_add(1);
        let gpu = self.pci_slot(dev);
        let peers: Vec<Peer> = self
            .pci
            .devs
            .iter()
            .map(|d| Peer {
                phys: d.bar_phys[BAR_VRAM],
                window: d.bar0_size.min(d.profile.vram_size),
                mem: d.vram_map.clone(),
            })
            .collect();
        let p = &self.pci.devs[dev];
        let (engine, hub) = match key {
            RingKey::Compute { .. } => (Engine::Pm4, Hub::Gc),
            RingKey::Sdma { .. } => (Engine::Sdma, Hub::Mm),
        };
        let vm = Vm::Pci(Arc::new(PciVm {
            hub,
            gmc: p.regs.clone(),
            vram: p.vram_map.clone(),
            peers,
            pages: self.pci.page_of_pfn.clone(),
            stop: None,
        }));
        let gc = p
            .profile
            .discovery
            .ips
            .iter()
            .find(|ip| ip.hw_id == hw_id::GC && ip.instance == 0)
            .map(|ip| ip.version);
        let target = gc
            .ok_or_else(|| "the discovery table has no GC block".to_string())
            .and_then(|(a, b, c)| {
                let v = u32::from(a) * 10000 + u32::from(b) * 100 + u32::from(c);
                GfxTarget::from_version(v).map_err(|_| format!("GC {a}.{b}.{c} has no packet format in the mock"))
            });
        let checked = binding.clone().and_then(|b| {
            let wptr = match b.doorbell {
                None => WptrSource::Unbound,
                Some(off) if off % 8 == 0 && off.checked_add(8).is_some_and(|e| e <= p.doorbell_map.len() as u64) => {
                    WptrSource::Doorbell(p.doorbell_map.clone(), off)
                }
                Some(off) => return Err(format!("doorbell at byte {off:#x} is not a 64-bit slot of BAR 2")),
            };
            Ok((b, wptr))
        });
        let (b, wptr, status) = match (checked, target.clone()) {
            (Ok((b, wptr)), Ok(_)) => (Some(b), wptr, QueueStatus::Running),
            (Err(e), _) | (_, Err(e)) => (None, WptrSource::Unbound, QueueStatus::Error(e)),
        };
        let stop_reason = match &status {
            QueueStatus::Error(e) => Some(format!("queue {id} stopped: {e}")),
            _ => None,
        };
        let rptr = b.as_ref().map_or(0, |b| match engine {
            // PCI GPUs have no AQL rings yet.
            Engine::Pm4 | Engine::Aql => b.rptr,
            Engine::Sdma => b.rptr / 4,
        });
        self.engines.execs.insert(
            id,
            QueueExec {
                id,
                gpu,
                engine,
                target: target.unwrap_or(GfxTarget::Gfx11),
                ring_base: b.as_ref().map_or(0, |b| b.base),
                ring_dwords: b.as_ref().map_or(1, |b| b.dwords),
                rptr_addr: b.as_ref().and_then(|b| b.rptr_addr),
                wptr,
                vm,
                port: Some(p.regs.clone()),
                ring_id: key.ring_id(),
                rptr,
                regs: BTreeMap::new(),
                ib: Vec::new(),
                ib_ring_len: 0,
                status,
                counters: Default::default(),
                hung: false,
                delay: std::time::Duration::ZERO,
                not_before: None,
                in_flight: None,
                stop_reason,
                aql: None,
            },
        );
        id
    }
}
