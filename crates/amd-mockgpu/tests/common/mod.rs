//! What the mock's integration tests share: the first PCI GPU's BARs and registers,
//! VFIO ioctls, and GPUs opened through the KFD transport. Each test file uses a part.
#![allow(dead_code)]

use std::path::Path;
use std::sync::Arc;

use amd_kfd::mmio::Mmio;
use amd_kfd::sys::{Fd, MapFlags, OpenMode, Prot, Sys};
use amd_kfd::topology::Visibility;
use amd_kfd::{Kfd, KfdDevice};
use amd_mockgpu::pci::Discovery;
use amd_mockgpu::pci::gmc::Hub;
use amd_mockgpu::pci::model::reg_addr;
use amd_mockgpu::pci::regs::AmReg;
use amd_mockgpu::pci::regs::generated::{gc, mmhub};
use amd_mockgpu::{ExecMode, MockConfig, MockSys};
use amd_regs::discovery::hw_id;
use amd_regs::vfio::{VFIO_DEVICE_SET_IRQS, VFIO_PCI_MSI_IRQ_INDEX, vfio_irq_set};
use nix::errno::Errno;

pub const MIB: u64 = 1 << 20;
/// The sysfs folder of the first PCI GPU.
pub const DEV: &str = "/sys/bus/pci/devices/0000:03:00.0";

pub fn p(s: &str) -> &Path {
    Path::new(s)
}

/// `n` gfx1100 GPUs running in `mode`, opened through the KFD transport.
pub fn kfd_gpus(n: usize, mode: ExecMode) -> (Arc<MockSys>, Kfd, Vec<KfdDevice>) {
    let m = Arc::new(MockSys::new(MockConfig {
        mode,
        ..MockConfig::gfx1100s(n)
    }));
    let kfd = Kfd::open_with(m.clone(), &Visibility::all()).unwrap();
    let devs = (0..n).map(|i| kfd.device(i).unwrap()).collect();
    (m, kfd, devs)
}

/// Maps `len` bytes of the first PCI GPU's sysfs `file` (`resource0`, `resource5`…),
/// shared, for the test's life.
pub fn map_resource(m: &MockSys, file: &str, len: u64) -> usize {
    let fd = m.open(p(&format!("{DEV}/{file}")), OpenMode::ReadWrite).unwrap();
    // SAFETY: a shared mapping at an address the kernel picks replaces nothing; it
    // stays mapped for the test's life.
    unsafe { m.mmap(0, len as usize, Prot::ReadWrite, MapFlags::SHARED, Some(fd), 0) }.unwrap()
}

/// The first PCI GPU's register BAR (resource5) and the discovery table that places
/// each IP's registers in it.
pub struct Regs {
    pub mmio: Arc<dyn Mmio>,
    pub d: Discovery,
}

impl Regs {
    /// Maps the register BAR of `m`'s first PCI GPU (a Navi 31).
    pub fn map(m: &MockSys) -> Regs {
        let r = map_resource(m, "resource5", MIB);
        Regs {
            // SAFETY: `r` is the live register mapping, never unmapped in these tests.
            mmio: unsafe { amd_am::bar::registers(m, r, MIB as usize) },
            d: Discovery::navi31(),
        }
    }

    /// The dword index of register `r` of IP `hw` (instance 0).
    pub fn addr(&self, hw: u16, r: AmReg) -> u32 {
        reg_addr(&self.d, hw, r).unwrap()
    }

    pub fn rd(&self, hw: u16, r: AmReg) -> u32 {
        self.mmio.read32(self.addr(hw, r))
    }

    pub fn wr(&self, hw: u16, r: AmReg, v: u32) {
        self.mmio.write32(self.addr(hw, r), v)
    }

    /// `enable_vm_addressing(root, ip, vmid=0)` at register level: VM context 0 of
    /// `hub` translates `start..=end` from the page directory at `root`, with `cntl`
    /// (enable, page-table depth, fault bits) in its `CONTEXT0_CNTL`.
    pub fn enable_vm(&self, hub: Hub, root: u64, start: u64, end: u64, cntl: u32) {
        let (hw, r) = match hub {
            Hub::Gc => (
                hw_id::GC,
                [
                    gc::V11_0_0.GCVM_CONTEXT0_PAGE_TABLE_START_ADDR_LO32,
                    gc::V11_0_0.GCVM_CONTEXT0_PAGE_TABLE_START_ADDR_HI32,
                    gc::V11_0_0.GCVM_CONTEXT0_PAGE_TABLE_END_ADDR_LO32,
                    gc::V11_0_0.GCVM_CONTEXT0_PAGE_TABLE_END_ADDR_HI32,
                    gc::V11_0_0.GCVM_CONTEXT0_PAGE_TABLE_BASE_ADDR_LO32,
                    gc::V11_0_0.GCVM_CONTEXT0_PAGE_TABLE_BASE_ADDR_HI32,
                    gc::V11_0_0.GCVM_CONTEXT0_CNTL,
                ],
            ),
            Hub::Mm => (
                hw_id::MMHUB,
                [
                    mmhub::V3_0_0.MMVM_CONTEXT0_PAGE_TABLE_START_ADDR_LO32,
                    mmhub::V3_0_0.MMVM_CONTEXT0_PAGE_TABLE_START_ADDR_HI32,
                    mmhub::V3_0_0.MMVM_CONTEXT0_PAGE_TABLE_END_ADDR_LO32,
                    mmhub::V3_0_0.MMVM_CONTEXT0_PAGE_TABLE_END_ADDR_HI32,
                    mmhub::V3_0_0.MMVM_CONTEXT0_PAGE_TABLE_BASE_ADDR_LO32,
                    mmhub::V3_0_0.MMVM_CONTEXT0_PAGE_TABLE_BASE_ADDR_HI32,
                    mmhub::V3_0_0.MMVM_CONTEXT0_CNTL,
                ],
            ),
        };
        for (v, i) in [(start >> 12, 0), (end >> 12, 2), (root | 1, 4)] {
            self.wr(hw, r[i], v as u32);
            self.wr(hw, r[i + 1], (v >> 32) as u32);
        }
        self.wr(hw, r[6], cntl);
    }
}

/// A VFIO ioctl with a struct argument.
pub fn ioctl(m: &MockSys, fd: Fd, req: u64, arg: &mut [u8]) -> Result<i32, Errno> {
    // SAFETY: the arguments hold no pointers; the mock reads and writes only `arg`.
    unsafe { m.ioctl(fd, req, "vfio", arg) }.map_err(|e| e.errno)
}

/// A VFIO ioctl with a value argument.
pub fn ioctl_value(m: &MockSys, fd: Fd, req: u64, value: u64) -> Result<i32, Errno> {
    // SAFETY: the requests used take their argument by value (or are refused).
    unsafe { m.ioctl_value(fd, req, "vfio", value) }.map_err(|e| e.errno)
}

/// Sends the MSI of VFIO `device` to a new eventfd, which it returns.
pub fn msi_to_eventfd(m: &MockSys, device: Fd) -> Fd {
    let efd = m.eventfd(0).unwrap();
    let mut set = vfio_irq_set::trigger_eventfd(VFIO_PCI_MSI_IRQ_INDEX, efd.0);
    ioctl(m, device, VFIO_DEVICE_SET_IRQS, &mut set).unwrap();
    efd
}

/// A deterministic xorshift generator for hostile values, from `seed` (not 0).
#[allow(unused_imports)] // (not every test binary uses it)
pub use amd_packets::testing::xorshift64;
