//! VFIO in no-IOMMU mode, as `drivers/vfio/{container,group,pci/vfio_pci_core,
//! pci/vfio_pci_intrs}.c` answer the requests the driverless transport makes: the
//! container (`/dev/vfio/vfio`), the group (`/dev/vfio/noiommu-N`) and the device
//! descriptor with its regions and interrupts.

use std::fs::File;
use std::os::unix::fs::FileExt;

use amd_kfd::mmio::Mmio;
use amd_regs::vfio::*;
use nix::errno::Errno;
use zerocopy::{FromBytes, IntoBytes};

use super::config::CONFIG_SIZE;
use super::{BAR_DOORBELL, BAR_IO, BAR_MMIO, BAR_VRAM, PciDev};
use crate::driver::{Driver, FdKind};
use amd_regs::pci::{PCI_COMMAND_IO, PCI_COMMAND_MASTER, PCI_COMMAND_MEMORY, PCI_MSI_FLAGS_ENABLE};

/// Decodes a struct whose first field is `argsz` from the front of `arg`: `argsz`
/// must cover `T` and fit in `arg`.
fn read_arg<T: FromBytes>(arg: &[u8]) -> Result<T, Errno> {
    let (t, _) = T::read_from_prefix(arg).map_err(|_| Errno::EINVAL)?;
    let argsz = u32::read_from_prefix(arg).map_err(|_| Errno::EINVAL)?.0 as usize;
    if argsz < size_of::<T>() || argsz > arg.len() {
        return Err(Errno::EINVAL);
    }
    Ok(t)
}

fn write_arg<T: IntoBytes + zerocopy::Immutable>(arg: &mut [u8], t: &T) {
    let b = t.as_bytes();
    arg[..b.len()].copy_from_slice(b);
}

/// How many of `len` bytes at `off` lie inside a region of `size` bytes; an offset
/// at or past the end is an error (`vfio_pci_bar_rw`).
fn clamp(off: u64, len: usize, size: u64) -> Result<usize, Errno> {
    let room = size.checked_sub(off).filter(|&r| r > 0).ok_or(Errno::EINVAL)?;
    Ok(usize::try_from(room).map_or(len, |r| r.min(len)))
}

/// The file behind memory BAR `index` (VRAM or doorbells) and how many of `len` bytes
/// at `off` it holds.
fn memory_bar(d: &PciDev, index: u32, off: u64, len: usize) -> Result<(&File, usize), Errno> {
    let bar = index as usize;
    let n = clamp(off, len, d.bar_size(bar))?;
    Ok((if bar == BAR_VRAM { &d.vram } else { &d.doorbells }, n))
}

/// The register BAR's part of `len` bytes at `off`: the first register and the bytes,
/// whole aligned dwords or `EINVAL`.
fn register_span(d: &PciDev, off: u64, len: usize) -> Result<(u32, usize), Errno> {
    let n = clamp(off, len, d.bar_size(BAR_MMIO))?;
    if off % 4 != 0 || n % 4 != 0 {
        return Err(Errno::EINVAL);
    }
    // The end's index must fit as well, so `first + k` cannot overflow.
    u32::try_from((off + n as u64) / 4).map_err(|_| Errno::EINVAL)?;
    let first = u32::try_from(off / 4).map_err(|_| Errno::EINVAL)?;
    Ok((first, n))
}

/// A region of the device descriptor: (index, offset within it).
pub(crate) fn split_offset(offset: u64) -> (u32, u64) {
    (
        (offset >> VFIO_PCI_OFFSET_SHIFT) as u32,
        offset & ((1 << VFIO_PCI_OFFSET_SHIFT) - 1),
    )
}

impl Driver {
    /// A VFIO request whose argument is a value (or none).
    pub(crate) fn vfio_ioctl_value(&mut self, kind: FdKind, request: u64, value: u64) -> Result<i32, Errno> {
        let bus = &mut self.pci;
        match (kind, request) {
            (FdKind::VfioContainer(_), VFIO_GET_API_VERSION) => Ok(VFIO_API_VERSION),
            (FdKind::VfioContainer(_), VFIO_CHECK_EXTENSION) => Ok((value == VFIO_NOIOMMU_IOMMU && bus.noiommu) as i32),
            (FdKind::VfioContainer(c), VFIO_SET_IOMMU) => {
                let noiommu = bus.noiommu;
                let cont = bus.containers.get_mut(&c).ok_or(Errno::EBADF)?;
                // A container needs a group before it takes an IOMMU driver, and takes
                // one only once.
                if cont.groups.is_empty() || cont.iommu.is_some() {
                    return Err(Errno::EINVAL);
                }
                if value != VFIO_NOIOMMU_IOMMU || !noiommu {
                    return Err(Errno::ENODEV);
                }
                cont.iommu = Some(value);
                Ok(0)
            }
            (FdKind::VfioGroup(g), VFIO_GROUP_UNSET_CONTAINER) => {
                if bus.devs.iter().any(|d| d.group == Some(g) && d.vfio_device_fds > 0) {
                    // The group's devices are in use.
                    return Err(Errno::EBUSY);
                }
                bus.detach_group(g).map(|_| 0).ok_or(Errno::EINVAL)
            }
            (FdKind::VfioDevice(i), VFIO_DEVICE_RESET) => {
                // Function reset: the device's registers return to their reset
                // values; vfio-pci saves and restores configuration space around it.
                bus.devs.get(i).ok_or(Errno::ENODEV)?.regs.reset();
                Ok(0)
            }
            // The requests that take a pointer: the mock does not dereference values.
            (
                FdKind::VfioGroup(_) | FdKind::VfioDevice(_),
                VFIO_GROUP_GET_STATUS
                | VFIO_GROUP_SET_CONTAINER
                | VFIO_GROUP_GET_DEVICE_FD
                | VFIO_DEVICE_GET_INFO
                | VFIO_DEVICE_GET_REGION_INFO
                | VFIO_DEVICE_GET_IRQ_INFO
                | VFIO_DEVICE_SET_IRQS,
            ) => Err(Errno::EFAULT),
            _ => Err(Errno::ENOTTY),
        }
    }

    /// A VFIO request whose argument is a struct (or string) in `arg`.
    pub(crate) fn vfio_ioctl(&mut self, kind: FdKind, request: u64, arg: &mut [u8]) -> Result<i32, Errno> {
        match (kind, request) {
            (FdKind::VfioGroup(g), VFIO_GROUP_GET_STATUS) => {
                let mut st: vfio_group_status = read_arg(arg)?;
                let s = self.pci.groups.get(&g).ok_or(Errno::ENODEV)?;
                st.flags = VFIO_GROUP_FLAGS_VIABLE;
                if s.container.is_some() {
                    st.flags |= VFIO_GROUP_FLAGS_CONTAINER_SET;
                }
                write_arg(arg, &st);
                Ok(0)
            }
            (FdKind::VfioGroup(g), VFIO_GROUP_SET_CONTAINER) => {
                let (fd, _) = i32::read_from_prefix(arg).map_err(|_| Errno::EFAULT)?;
                let Some(FdKind::VfioContainer(c)) = self.fds.get(&fd).copied() else {
                    return Err(Errno::EBADF);
                };
                let bus = &mut self.pci;
                let s = bus.groups.get_mut(&g).ok_or(Errno::ENODEV)?;
                if s.container.is_some() {
                    return Err(Errno::EINVAL);
                }
                let cont = bus.containers.get_mut(&c).ok_or(Errno::EBADF)?;
                // Every group here is a no-IOMMU group, so they all mix; once the
                // container has its IOMMU driver, a further group is attached to it,
                // and the no-IOMMU driver's `attach_group` accepts any group
                // (drivers/vfio/container.c, `vfio_container_attach_group`).
                cont.groups.insert(g);
                s.container = Some(c);
                Ok(0)
            }
            (FdKind::VfioGroup(g), VFIO_GROUP_GET_DEVICE_FD) => {
                let name = arg
                    .split(|&b| b == 0)
                    .next()
                    .filter(|_| arg.contains(&0))
                    .ok_or(Errno::EINVAL)?;
                let name = std::str::from_utf8(name).map_err(|_| Errno::EINVAL)?;
                let bus = &mut self.pci;
                let s = bus.groups.get(&g).ok_or(Errno::ENODEV)?;
                // The group must be in a container with an IOMMU driver.
                let ready = s
                    .container
                    .and_then(|c| bus.containers.get(&c))
                    .is_some_and(|c| c.iommu.is_some());
                if !ready {
                    return Err(Errno::EINVAL);
                }
                let i = bus.dev_of_group(g).ok_or(Errno::ENODEV)?;
                if bus.devs[i].name != name {
                    return Err(Errno::ENODEV);
                }
                // vfio_pci_core_enable: memory and I/O decoding on, bus mastering left
                // to the user.
                let d = &mut bus.devs[i];
                d.vfio_device_fds += 1;
                d.command |= PCI_COMMAND_MEMORY | PCI_COMMAND_IO;
                Ok(self.alloc_fd(FdKind::VfioDevice(i)))
            }
            (FdKind::VfioDevice(i), VFIO_DEVICE_GET_INFO) => {
                let mut info: vfio_device_info = read_arg(arg)?;
                self.pci.devs.get(i).ok_or(Errno::ENODEV)?;
                info.flags = VFIO_DEVICE_FLAGS_PCI | VFIO_DEVICE_FLAGS_RESET;
                info.num_regions = VFIO_PCI_NUM_REGIONS;
                info.num_irqs = VFIO_PCI_NUM_IRQS;
                info.cap_offset = 0;
                write_arg(arg, &info);
                Ok(0)
            }
            (FdKind::VfioDevice(i), VFIO_DEVICE_GET_REGION_INFO) => {
                let mut info: vfio_region_info = read_arg(arg)?;
                let d = self.pci.devs.get(i).ok_or(Errno::ENODEV)?;
                const RW: u32 = VFIO_REGION_INFO_FLAG_READ | VFIO_REGION_INFO_FLAG_WRITE;
                let (size, flags) = match info.index {
                    0..=5 => {
                        let bar = info.index as usize;
                        let size = d.bar_size(bar);
                        let flags = match bar {
                            BAR_VRAM | BAR_DOORBELL | BAR_MMIO => RW | VFIO_REGION_INFO_FLAG_MMAP,
                            BAR_IO => RW,
                            _ => 0,
                        };
                        (size, flags)
                    }
                    VFIO_PCI_ROM_REGION_INDEX => (128 << 10, VFIO_REGION_INFO_FLAG_READ),
                    VFIO_PCI_CONFIG_REGION_INDEX => (CONFIG_SIZE as u64, RW),
                    VFIO_PCI_VGA_REGION_INDEX => (0, 0),
                    _ => return Err(Errno::EINVAL),
                };
                info.offset = vfio_pci_index_to_offset(info.index);
                info.size = size;
                info.flags = flags;
                info.cap_offset = 0;
                write_arg(arg, &info);
                Ok(0)
            }
            (FdKind::VfioDevice(i), VFIO_DEVICE_GET_IRQ_INFO) => {
                let mut info: vfio_irq_info = read_arg(arg)?;
                self.pci.devs.get(i).ok_or(Errno::ENODEV)?;
                let (flags, count) = match info.index {
                    VFIO_PCI_INTX_IRQ_INDEX => (
                        VFIO_IRQ_INFO_EVENTFD | VFIO_IRQ_INFO_MASKABLE | VFIO_IRQ_INFO_AUTOMASKED,
                        1,
                    ),
                    VFIO_PCI_MSI_IRQ_INDEX => (VFIO_IRQ_INFO_EVENTFD | VFIO_IRQ_INFO_NORESIZE, 1),
                    VFIO_PCI_MSIX_IRQ_INDEX => (VFIO_IRQ_INFO_EVENTFD | VFIO_IRQ_INFO_NORESIZE, 0),
                    VFIO_PCI_ERR_IRQ_INDEX | VFIO_PCI_REQ_IRQ_INDEX => (VFIO_IRQ_INFO_EVENTFD, 1),
                    _ => return Err(Errno::EINVAL),
                };
                info.flags = flags;
                info.count = count;
                write_arg(arg, &info);
                Ok(0)
            }
            (FdKind::VfioDevice(i), VFIO_DEVICE_SET_IRQS) => self.set_irqs(i, arg),
            (FdKind::VfioContainer(_), VFIO_CHECK_EXTENSION | VFIO_SET_IOMMU | VFIO_GET_API_VERSION)
            | (FdKind::VfioGroup(_), VFIO_GROUP_UNSET_CONTAINER)
            | (FdKind::VfioDevice(_), VFIO_DEVICE_RESET) => {
                // Requests taking a value (`Sys::ioctl_value`), given a pointer: the
                // kernel would read the address as the value; no valid one is.
                Err(Errno::EINVAL)
            }
            _ => Err(Errno::ENOTTY),
        }
    }

    fn set_irqs(&mut self, i: usize, arg: &mut [u8]) -> Result<i32, Errno> {
        let set: vfio_irq_set = read_arg(arg)?;
        let argsz = set.argsz as usize;
        let data_type = set.flags & VFIO_IRQ_SET_DATA_TYPE_MASK;
        let action = set.flags & VFIO_IRQ_SET_ACTION_TYPE_MASK;
        // vfio_set_irqs_validate_and_prepare: one data type, one action, no other
        // flags, the range inside the index, and the data inside argsz.
        if !data_type.is_power_of_two()
            || !action.is_power_of_two()
            || set.flags & !(VFIO_IRQ_SET_DATA_TYPE_MASK | VFIO_IRQ_SET_ACTION_TYPE_MASK) != 0
        {
            return Err(Errno::EINVAL);
        }
        let max = match set.index {
            VFIO_PCI_INTX_IRQ_INDEX | VFIO_PCI_MSI_IRQ_INDEX | VFIO_PCI_ERR_IRQ_INDEX | VFIO_PCI_REQ_IRQ_INDEX => 1,
            VFIO_PCI_MSIX_IRQ_INDEX => 0,
            _ => return Err(Errno::EINVAL),
        };
        let end = set.start.checked_add(set.count).ok_or(Errno::EINVAL)?;
        if end > max && !(set.count == 0 && data_type == VFIO_IRQ_SET_DATA_NONE) {
            return Err(Errno::EINVAL);
        }
        let item = match data_type {
            VFIO_IRQ_SET_DATA_EVENTFD => 4,
            VFIO_IRQ_SET_DATA_BOOL => 1,
            _ => 0,
        };
        let data_len = (set.count as usize).checked_mul(item).ok_or(Errno::EINVAL)?;
        let hdr = size_of::<vfio_irq_set>();
        if argsz.checked_sub(hdr).is_none_or(|room| room < data_len) {
            return Err(Errno::EINVAL);
        }
        let data = &arg[hdr..hdr + data_len];
        if set.index != VFIO_PCI_MSI_IRQ_INDEX {
            // The mock raises only MSI; the other indices accept their setup.
            return if action == VFIO_IRQ_SET_ACTION_TRIGGER {
                Ok(0)
            } else {
                Err(Errno::ENOTTY)
            };
        }
        if action != VFIO_IRQ_SET_ACTION_TRIGGER {
            // MSI cannot be masked (vfio_pci_set_msi_trigger is its only handler).
            return Err(Errno::ENOTTY);
        }
        let d = self.pci.devs.get_mut(i).ok_or(Errno::ENODEV)?;
        match data_type {
            VFIO_IRQ_SET_DATA_NONE if set.count == 0 => {
                d.msi_eventfd = None;
                d.regs.set_msi_eventfd(None);
                d.msi_control &= !PCI_MSI_FLAGS_ENABLE;
            }
            VFIO_IRQ_SET_DATA_EVENTFD => {
                let fd = data.get(..4).ok_or(Errno::EINVAL)?;
                let fd = i32::from_ne_bytes(fd.try_into().map_err(|_| Errno::EINVAL)?);
                if fd == -1 {
                    d.msi_eventfd = None;
                    d.regs.set_msi_eventfd(None);
                    d.msi_control &= !PCI_MSI_FLAGS_ENABLE;
                } else if fd < 0 || !self.pci.eventfds.contains(&fd) {
                    return Err(Errno::EINVAL);
                } else {
                    let d = &mut self.pci.devs[i];
                    d.msi_eventfd = Some(fd);
                    d.regs.set_msi_eventfd(Some(fd));
                    d.msi_control |= PCI_MSI_FLAGS_ENABLE;
                }
            }
            // A loopback trigger (DATA_NONE with a count, or BOOL true) is what the
            // device would raise: `MockSys::pci_raise_msi` does it.
            _ => return Err(Errno::ENOTTY),
        }
        Ok(0)
    }

    /// `pread` of the device descriptor: configuration space, VRAM, doorbells, or
    /// registers (whole aligned dwords).
    pub(crate) fn vfio_region_read(&mut self, i: usize, offset: u64, buf: &mut [u8]) -> Result<usize, Errno> {
        let (index, off) = split_offset(offset);
        let d = self.pci.devs.get(i).ok_or(Errno::ENODEV)?;
        match index {
            VFIO_PCI_CONFIG_REGION_INDEX => Ok(d.config_read(off, buf)),
            0 | 2 => {
                let (file, n) = memory_bar(d, index, off, buf.len())?;
                file.read_exact_at(&mut buf[..n], off).map_err(|_| Errno::EIO)?;
                Ok(n)
            }
            5 => {
                let (first, n) = register_span(d, off, buf.len())?;
                for (k, chunk) in buf[..n].chunks_exact_mut(4).enumerate() {
                    chunk.copy_from_slice(&d.regs.read32(first + k as u32).to_le_bytes());
                }
                Ok(n)
            }
            _ => Err(Errno::EINVAL),
        }
    }

    /// `pwrite` of the device descriptor.
    pub(crate) fn vfio_region_write(&mut self, i: usize, offset: u64, data: &[u8]) -> Result<usize, Errno> {
        let (index, off) = split_offset(offset);
        let d = self.pci.devs.get_mut(i).ok_or(Errno::ENODEV)?;
        match index {
            VFIO_PCI_CONFIG_REGION_INDEX => Ok(d.config_write(off, data)),
            0 | 2 => {
                let (file, n) = memory_bar(d, index, off, data.len())?;
                file.write_all_at(&data[..n], off).map_err(|_| Errno::EIO)?;
                Ok(n)
            }
            5 => {
                let (first, n) = register_span(d, off, data.len())?;
                for (k, chunk) in data[..n].chunks_exact(4).enumerate() {
                    let v = u32::from_le_bytes(chunk.try_into().map_err(|_| Errno::EINVAL)?);
                    d.regs.write32(first + k as u32, v);
                }
                Ok(n)
            }
            _ => Err(Errno::EINVAL),
        }
    }

    /// Closing a VFIO descriptor.
    pub(crate) fn vfio_close(&mut self, kind: FdKind) {
        let bus = &mut self.pci;
        match kind {
            FdKind::VfioGroup(g) => {
                if let Some(s) = bus.groups.get_mut(&g) {
                    s.open = false;
                    // An open device descriptor holds its group in the container.
                    if !bus.devs.iter().any(|d| d.group == Some(g) && d.vfio_device_fds > 0) {
                        bus.detach_group(g);
                    }
                }
            }
            FdKind::VfioContainer(c) => {
                // The container lives on while groups hold it.
                if let Some(cont) = bus.containers.get_mut(&c) {
                    cont.closed = true;
                    if cont.groups.is_empty() {
                        bus.containers.remove(&c);
                    }
                }
            }
            FdKind::VfioDevice(i) => {
                let Some(d) = bus.devs.get_mut(i) else { return };
                d.vfio_device_fds = d.vfio_device_fds.saturating_sub(1);
                if d.vfio_device_fds > 0 {
                    return;
                }
                // vfio_pci_core_disable: interrupts off, device disabled.
                d.msi_eventfd = None;
                d.regs.set_msi_eventfd(None);
                d.msi_control &= !PCI_MSI_FLAGS_ENABLE;
                d.command &= !PCI_COMMAND_MASTER;
                // A group closed while the device was open leaves its container now.
                if let Some(g) = d.group
                    && bus.groups.get(&g).is_some_and(|s| !s.open)
                {
                    bus.detach_group(g);
                }
            }
            _ => {}
        }
    }
}
