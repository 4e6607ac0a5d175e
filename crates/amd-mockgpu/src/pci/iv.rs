//! Interrupt vectors: the entries a source raises and the IH writes to its ring.

use crate::mem::gpuvm::{Access, Hub, VmFault};
use amd_regs::regs::generated::ih;

/// Bytes per interrupt vector.
pub const IV_BYTES: u64 = 32;

/// One interrupt vector, as `amdgpu_iv_entry` names its fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct IvEntry {
    /// `SOC21_IH_CLIENTID_*`.
    pub client_id: u8,
    /// The client's source id (`GFX_11_0_0__SRCID__*`, ...).
    pub src_id: u8,
    /// The ring (engine, queue) the source encodes.
    pub ring_id: u8,
    /// VM id (4 bits).
    pub vmid: u8,
    /// Process address space id.
    pub pasid: u16,
    /// Node id.
    pub node_id: u8,
    /// Source data.
    pub src_data: [u32; 4],
}

impl IvEntry {
    /// The 8 dwords written to the ring: dw0 client, source, ring, VM id (bits 27:24);
    /// dw1 and dw2 bits 15:0 the 48-bit timestamp; dw3 PASID (15:0) and node id
    /// (23:16); dw4..7 the source data.
    pub fn encode(&self, timestamp: u64) -> [u32; 8] {
        [
            u32::from(self.client_id)
                | u32::from(self.src_id) << 8
                | u32::from(self.ring_id) << 16
                | u32::from(self.vmid & 0xf) << 24,
            timestamp as u32,
            ((timestamp >> 32) & 0xffff) as u32,
            u32::from(self.pasid) | u32::from(self.node_id) << 16,
            self.src_data[0],
            self.src_data[1],
            self.src_data[2],
            self.src_data[3],
        ]
    }

    /// Decodes a vector as `amdgpu_ih_decode_iv_helper` does: the entry and its
    /// timestamp.
    pub fn decode(dw: &[u32; 8]) -> (IvEntry, u64) {
        let e = IvEntry {
            client_id: dw[0] as u8,
            src_id: (dw[0] >> 8) as u8,
            ring_id: (dw[0] >> 16) as u8,
            vmid: ((dw[0] >> 24) & 0xf) as u8,
            pasid: dw[3] as u16,
            node_id: (dw[3] >> 16) as u8,
            src_data: [dw[4], dw[5], dw[6], dw[7]],
        };
        (e, u64::from(dw[1]) | (u64::from(dw[2] & 0xffff) << 32))
    }

    /// The vector a VM fault raises: the GC hub's UTCL2 (`SOC21_IH_CLIENTID_GFX`,
    /// `UTCL2_FAULT`) or the MM hub's VMC (`SOC21_IH_CLIENTID_VMC`, `VM_FAULT`), with
    /// the page number in `src_data[0]`, address bits 47:44 in `src_data[1]` bits 3:0
    /// and bit 5 set for a write, as `gmc_v11_0_process_interrupt` reads them.
    pub fn vm_fault(f: &VmFault) -> IvEntry {
        let (client, src) = match f.hub {
            Hub::Gc => (ih::SOC21_IH_CLIENTID_GFX, ih::GFX_11_0_0__SRCID__UTCL2_FAULT),
            Hub::Mm => (ih::SOC21_IH_CLIENTID_VMC, ih::VMC_1_0__SRCID__VM_FAULT),
        };
        let write = if f.access == Access::Write { 0x20 } else { 0 };
        IvEntry {
            client_id: client as u8,
            src_id: src as u8,
            src_data: [(f.va >> 12) as u32, ((f.va >> 44) & 0xf) as u32 | write, 0, 0],
            ..IvEntry::default()
        }
    }

    /// A CP end-of-pipe interrupt (`SOC21_IH_CLIENTID_GRBM_CP`, `CP_EOP_INTERRUPT`)
    /// for `ring_id` (me, pipe, queue as the CP encodes them), with `context` (a
    /// RELEASE_MEM's interrupt context) in `src_data[0]`.
    pub fn cp_eop(ring_id: u8, vmid: u8, pasid: u16, context: u32) -> IvEntry {
        let (client, src) = (ih::SOC21_IH_CLIENTID_GRBM_CP, ih::GFX_11_0_0__SRCID__CP_EOP_INTERRUPT);
        Self::ring_event(client, src, ring_id, vmid, pasid, context)
    }

    /// An SDMA trap (`SOC21_IH_CLIENTID_GFX`, `SDMA_TRAP`) for `ring_id`, with the
    /// trap packet's context in `src_data[0]`.
    pub fn sdma_trap(ring_id: u8, vmid: u8, pasid: u16, context: u32) -> IvEntry {
        let (client, src) = (ih::SOC21_IH_CLIENTID_GFX, ih::GFX_11_0_0__SRCID__SDMA_TRAP);
        Self::ring_event(client, src, ring_id, vmid, pasid, context)
    }

    /// An engine's interrupt from `client`'s `src` for `ring_id`, with `context` in
    /// `src_data[0]`.
    fn ring_event(client: u32, src: u32, ring_id: u8, vmid: u8, pasid: u16, context: u32) -> IvEntry {
        IvEntry {
            client_id: client as u8,
            src_id: src as u8,
            ring_id,
            vmid,
            pasid,
            node_id: 0,
            src_data: [context, 0, 0, 0],
        }
    }
}
