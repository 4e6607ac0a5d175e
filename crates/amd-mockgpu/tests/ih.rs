//! The IH ring of the mock PCI GPU, programmed at register level as tinygrad 0.10.1's
//! `AM_IH.init` does (ring in VRAM at its memory-controller address, `RB_SIZE`,
//! write-pointer write-back, pointers zeroed, then `RB_ENABLE` and `ENABLE_INTR`): a
//! GMC fault writes a VM-fault vector, advances the write pointer and signals the MSI
//! eventfd set through VFIO; the ring wraps; a full ring drops and flags overflow; a
//! disabled or hostile ring writes nothing.

mod common;

use amd_kfd::mmio::Mmio;
use amd_kfd::sys::{Fd, OpenMode, PollFd, Sys};
use amd_mockgpu::pci::Discovery;
use amd_mockgpu::pci::gmc::{Access, Hub};
use amd_mockgpu::pci::ih::{Delivery, Ih, IvEntry};
use amd_mockgpu::pci::model::reg_addr;
use amd_mockgpu::pci::regs::AmReg;
use amd_mockgpu::pci::regs::generated::{ih, osssys};
use amd_mockgpu::{MockConfig, MockSys};
use amd_regs::discovery::hw_id;
use amd_regs::vfio::*;
use common::{DEV, ioctl, ioctl_value, msi_to_eventfd, p, xorshift64};

/// VRAM at the memory controller's reset location.
const MC: u64 = 0x80_0000_0000;
const RING: u64 = 0x10_0000;
const WB: u64 = 0x20_0000;
const VRAM: u64 = 512 << 20;

struct Gpu {
    m: MockSys,
    efd: Fd,
    d: Discovery,
}

impl Gpu {
    /// A GPU bound to vfio-pci with its MSI going to an eventfd.
    fn new() -> Gpu {
        let m = MockSys::new(MockConfig::pci(1));
        m.write_file(p(&format!("{DEV}/driver/unbind")), b"0000:03:00.0")
            .unwrap();
        m.write_file(p("/sys/module/vfio/parameters/enable_unsafe_noiommu_mode"), b"1")
            .unwrap();
        m.write_file(p(&format!("{DEV}/driver_override")), b"vfio-pci").unwrap();
        m.write_file(p("/sys/bus/pci/drivers_probe"), b"0000:03:00.0").unwrap();
        let container = m.open(p("/dev/vfio/vfio"), OpenMode::ReadWrite).unwrap();
        let g = m.readlink(p(&format!("{DEV}/iommu_group"))).unwrap();
        let g = g.file_name().unwrap().to_str().unwrap().to_string();
        let group = m
            .open(p(&format!("/dev/vfio/noiommu-{g}")), OpenMode::ReadWrite)
            .unwrap();
        ioctl(&m, group, VFIO_GROUP_SET_CONTAINER, &mut container.0.to_ne_bytes()).unwrap();
        ioctl_value(&m, container, VFIO_SET_IOMMU, VFIO_NOIOMMU_IOMMU).unwrap();
        let device = Fd(ioctl(&m, group, VFIO_GROUP_GET_DEVICE_FD, &mut b"0000:03:00.0\0".to_vec()).unwrap());
        let efd = msi_to_eventfd(&m, device);
        Gpu {
            m,
            efd,
            d: Discovery::navi31(),
        }
    }

    fn reg(&self, r: AmReg) -> u32 {
        reg_addr(&self.d, hw_id::OSSSYS, r).unwrap()
    }

    fn rd(&self, r: AmReg) -> u32 {
        self.m.pci_registers(0).unwrap().read32(self.reg(r))
    }

    fn wr(&self, r: AmReg, v: u32) {
        self.m.pci_registers(0).unwrap().write32(self.reg(r), v)
    }

    /// `AM_IH.init` for ring 0 (with the write-back enabled, as Linux's
    /// `ih_v6_0_rb_cntl` does), the ring `4 << log2` bytes at `ring` (MC address).
    fn program(&self, ring: u64, log2: u32) {
        self.wr(osssys::V6_0_0.IH_RB_BASE, (ring >> 8) as u32);
        self.wr(osssys::V6_0_0.IH_RB_BASE_HI, (ring >> 40) as u32);
        let f = |v: u32, mask: u32| (v << mask.trailing_zeros()) & mask;
        let cntl = f(4, osssys::IH_RB_CNTL__MC_SPACE_MASK)
            | osssys::IH_RB_CNTL__WPTR_OVERFLOW_CLEAR_MASK
            | f(log2, osssys::IH_RB_CNTL__RB_SIZE_MASK)
            | osssys::IH_RB_CNTL__WPTR_OVERFLOW_ENABLE_MASK
            | osssys::IH_RB_CNTL__RPTR_REARM_MASK
            | osssys::IH_RB_CNTL__WPTR_WRITEBACK_ENABLE_MASK;
        self.wr(osssys::V6_0_0.IH_RB_CNTL, cntl);
        self.wr(osssys::V6_0_0.IH_RB_WPTR_ADDR_LO, (MC + WB) as u32);
        self.wr(osssys::V6_0_0.IH_RB_WPTR_ADDR_HI, ((MC + WB) >> 32) as u32);
        self.wr(osssys::V6_0_0.IH_RB_WPTR, 0);
        self.wr(osssys::V6_0_0.IH_RB_RPTR, 0);
        self.wr(
            osssys::V6_0_0.IH_DOORBELL_RPTR,
            2 | osssys::IH_DOORBELL_RPTR__ENABLE_MASK,
        );
        self.wr(
            osssys::V6_0_0.IH_RB_CNTL,
            cntl | osssys::IH_RB_CNTL__RB_ENABLE_MASK | osssys::IH_RB_CNTL__ENABLE_INTR_MASK,
        );
    }

    fn vram(&self, off: u64, len: usize) -> Vec<u8> {
        let mut b = vec![0; len];
        assert!(self.m.pci_read_vram(0, off, &mut b));
        b
    }

    fn iv(&self, off: u64) -> (IvEntry, u64) {
        let b = self.vram(off, 32);
        let mut dw = [0u32; 8];
        for (d, c) in dw.iter_mut().zip(b.chunks_exact(4)) {
            *d = u32::from_le_bytes(c.try_into().unwrap());
        }
        IvEntry::decode(&dw)
    }

    /// MSIs signalled since the last call (0 if none).
    fn msis(&self) -> u64 {
        let mut pfd = [PollFd {
            fd: self.efd,
            readable: true,
            ready: false,
        }];
        if self.m.poll(&mut pfd, 0).unwrap() == 0 {
            return 0;
        }
        let mut n = [0u8; 8];
        self.m.read(self.efd, &mut n).unwrap();
        u64::from_ne_bytes(n)
    }

    fn raise(&self, ctx: u32) -> Delivery {
        self.m
            .pci_registers(0)
            .unwrap()
            .raise_interrupt(IvEntry::cp_eop(1, 0, 0, ctx))
    }
}

#[test]
fn a_gmc_fault_writes_a_vm_fault_vector_and_signals_the_msi() {
    let g = Gpu::new();
    g.program(MC + RING, 16);
    assert_eq!(g.msis(), 0);
    // Context 0 disabled: every translation faults.
    let va = 0x1234_5678_9000u64;
    let f = g.m.pci_translate(0, Hub::Gc, va, Access::Write).unwrap();
    assert!(f.is_err());
    let (e, ts0) = g.iv(RING);
    assert_eq!(u32::from(e.client_id), ih::SOC21_IH_CLIENTID_GFX);
    assert_eq!(u32::from(e.src_id), ih::GFX_11_0_0__SRCID__UTCL2_FAULT);
    // As gmc_v11_0_process_interrupt reads the address back.
    let addr = (u64::from(e.src_data[0]) << 12) | (u64::from(e.src_data[1] & 0xf) << 44);
    assert_eq!(addr, va);
    assert_ne!(e.src_data[1] & 0x20, 0, "write fault");
    assert_eq!(g.rd(osssys::V6_0_0.IH_RB_WPTR), 32);
    assert_eq!(g.vram(WB, 4), 32u32.to_le_bytes());
    assert_eq!(g.msis(), 1);

    // The MM hub's fault comes from the VMC client; a read has no write bit.
    g.m.pci_translate(0, Hub::Mm, 0x5000, Access::Read)
        .unwrap()
        .unwrap_err();
    let (e, ts1) = g.iv(RING + 32);
    assert_eq!(u32::from(e.client_id), ih::SOC21_IH_CLIENTID_VMC);
    assert_eq!(u32::from(e.src_id), ih::VMC_1_0__SRCID__VM_FAULT);
    assert_eq!((e.src_data[0], e.src_data[1]), (5, 0));
    assert!(ts1 > ts0);
    assert_eq!(g.rd(osssys::V6_0_0.IH_RB_WPTR), 64);
    assert_eq!(g.msis(), 1);

    // An engine's end of pipe.
    assert_eq!(g.raise(0xfeed), Delivery::Written(true));
    let (e, _) = g.iv(RING + 64);
    assert_eq!(
        (u32::from(e.client_id), u32::from(e.src_id), e.ring_id, e.src_data[0]),
        (
            ih::SOC21_IH_CLIENTID_GRBM_CP,
            ih::GFX_11_0_0__SRCID__CP_EOP_INTERRUPT,
            1,
            0xfeed
        )
    );
    assert_eq!(g.msis(), 1);
}

#[test]
fn the_ring_wraps_and_a_full_ring_drops_and_flags_overflow() {
    let g = Gpu::new();
    // 4 << 5 = 128 bytes: four slots, three usable (the write pointer never reaches
    // the read pointer).
    g.program(MC + RING, 5);
    for i in 0..3 {
        assert_eq!(g.raise(i), Delivery::Written(true));
    }
    assert_eq!(g.rd(osssys::V6_0_0.IH_RB_WPTR), 96);
    assert_eq!(g.raise(99), Delivery::Dropped);
    let w = g.rd(osssys::V6_0_0.IH_RB_WPTR);
    assert_eq!(w & !osssys::IH_RB_WPTR__RB_OVERFLOW_MASK, 96);
    assert_ne!(w & osssys::IH_RB_WPTR__RB_OVERFLOW_MASK, 0);
    assert_eq!(g.vram(WB, 4), w.to_le_bytes(), "the write-back carries the flag");
    assert_eq!(g.iv(RING + 96).0.src_data[0], 0, "nothing written over the free slot");
    assert_eq!(g.msis(), 3);

    // The handler as tinygrad's: read pointer to the write pointer, overflow cleared.
    g.wr(osssys::V6_0_0.IH_RB_RPTR, 96);
    let cntl = g.rd(osssys::V6_0_0.IH_RB_CNTL);
    g.wr(
        osssys::V6_0_0.IH_RB_CNTL,
        cntl | osssys::IH_RB_CNTL__WPTR_OVERFLOW_CLEAR_MASK,
    );
    g.wr(
        osssys::V6_0_0.IH_RB_CNTL,
        cntl & !osssys::IH_RB_CNTL__WPTR_OVERFLOW_CLEAR_MASK,
    );
    assert_eq!(g.rd(osssys::V6_0_0.IH_RB_WPTR), 96);
    // Slot 3, then wrap to slot 0.
    assert_eq!(g.raise(10), Delivery::Written(true));
    assert_eq!(g.raise(11), Delivery::Written(true));
    assert_eq!(g.rd(osssys::V6_0_0.IH_RB_WPTR), 32);
    assert_eq!(g.iv(RING + 96).0.src_data[0], 10);
    assert_eq!(g.iv(RING).0.src_data[0], 11);
    assert_eq!(g.msis(), 2);
}

#[test]
fn a_disabled_ring_writes_nothing() {
    let g = Gpu::new();
    g.program(MC + RING, 16);
    let cntl = g.rd(osssys::V6_0_0.IH_RB_CNTL);
    g.wr(osssys::V6_0_0.IH_RB_CNTL, cntl & !osssys::IH_RB_CNTL__RB_ENABLE_MASK);
    assert_eq!(g.raise(1), Delivery::Dropped);
    g.m.pci_translate(0, Hub::Gc, 0x1000, Access::Read)
        .unwrap()
        .unwrap_err();
    assert_eq!(g.vram(RING, 64), vec![0; 64]);
    assert_eq!(g.rd(osssys::V6_0_0.IH_RB_WPTR), 0);
    assert_eq!(g.msis(), 0);
    // Enabled without ENABLE_INTR: written, no MSI.
    g.wr(
        osssys::V6_0_0.IH_RB_CNTL,
        (cntl | osssys::IH_RB_CNTL__RB_ENABLE_MASK) & !osssys::IH_RB_CNTL__ENABLE_INTR_MASK,
    );
    assert_eq!(g.raise(1), Delivery::Written(false));
    assert_eq!(g.msis(), 0);
}

#[test]
fn hostile_ring_registers_write_nothing_out_of_bounds() {
    let g = Gpu::new();
    // Past VRAM, straddling its end, below it, huge sizes, size 0 (4 bytes).
    let cases: &[(u64, u32)] = &[
        (MC + VRAM, 5),
        (MC + VRAM - 0x100, 7),
        (MC - 0x100, 5),
        (0, 5),
        (MC, 31),
        (MC, 28),
        (MC + RING, 0),
        (0xff_ffff_ff00, 31),
    ];
    for &(ring, log2) in cases {
        g.program(ring, log2);
        assert_eq!(g.raise(7), Delivery::Dropped, "{ring:#x} {log2}");
        assert_eq!(g.rd(osssys::V6_0_0.IH_RB_WPTR), 0);
    }
    assert_eq!(g.vram(VRAM - 64, 64), vec![0; 64]);
    assert_eq!(g.vram(RING, 32), vec![0; 32]);
    assert_eq!(g.msis(), 0);
    // A write pointer and read pointer of all ones, a write-back past VRAM.
    g.program(MC + RING, 5);
    g.wr(osssys::V6_0_0.IH_RB_WPTR, u32::MAX);
    g.wr(osssys::V6_0_0.IH_RB_RPTR, u32::MAX);
    g.wr(osssys::V6_0_0.IH_RB_WPTR_ADDR_LO, u32::MAX);
    g.wr(osssys::V6_0_0.IH_RB_WPTR_ADDR_HI, u32::MAX);
    for i in 0..8 {
        let _ = g.raise(i);
    }
    assert!(g.rd(osssys::V6_0_0.IH_RB_WPTR) & !3 < 128);
    assert_eq!(g.vram(RING + 128, 32), vec![0; 32]);
    // Random register values never panic.
    let mut next = xorshift64(0x9e37_79b9_7f4a_7c15);
    for i in 0..500u32 {
        let x = next();
        g.wr(Ih::ring_regs(&osssys::V6_0_0)[(x % 7) as usize], (x >> 16) as u32);
        let _ = g.raise(i);
    }
}

#[test]
fn a_read_pointer_update_with_vectors_left_rearms_the_msi() {
    let g = Gpu::new();
    g.program(MC + RING, 16);
    for i in 0..3 {
        assert_eq!(g.raise(i), Delivery::Written(true));
    }
    assert_eq!(g.msis(), 3);
    // The handler took one vector: two are left, so RPTR_REARM signals again.
    g.wr(osssys::V6_0_0.IH_RB_RPTR, 32);
    assert_eq!(g.msis(), 1);
    // Caught up: nothing.
    g.wr(osssys::V6_0_0.IH_RB_RPTR, 96);
    assert_eq!(g.msis(), 0);
    // Without RPTR_REARM a read pointer behind the write pointer signals nothing.
    assert_eq!(g.raise(7), Delivery::Written(true));
    assert_eq!(g.msis(), 1);
    let cntl = g.rd(osssys::V6_0_0.IH_RB_CNTL);
    g.wr(osssys::V6_0_0.IH_RB_CNTL, cntl & !osssys::IH_RB_CNTL__RPTR_REARM_MASK);
    g.wr(osssys::V6_0_0.IH_RB_RPTR, 96);
    assert_eq!(g.msis(), 0);
    assert_eq!(
        g.m.pci_registers(0)
            .unwrap()
            .with_block(|ih: &mut amd_mockgpu::pci::ih::Ih| ih.msis)
            .unwrap(),
        5,
        "four vectors and one re-arm"
    );
}
