//! The VFIO ABI of `include/uapi/linux/vfio.h`: the argument structs the driverless
//! transport passes (named as in the header), their flags, the PCI region and
//! interrupt indices, and the request numbers.
//!
//! Every VFIO request is `_IO(';', 100 + n)`: no size or direction is encoded, the
//! structs carry their size in `argsz`. `VFIO_CHECK_EXTENSION` and `VFIO_SET_IOMMU`
//! take an integer by value (`Sys::ioctl_value`), `VFIO_GROUP_SET_CONTAINER` a pointer
//! to the container's descriptor, `VFIO_GROUP_GET_DEVICE_FD` a pointer to the device's
//! NUL-terminated PCI address, the others a pointer to their struct.
//!
//! Layouts are pinned twice: `const` size assertions here, and `tests/vfio_layout.rs`,
//! which compiles a C program against the system header and compares every size,
//! field offset and request number.

#![allow(non_camel_case_types, non_upper_case_globals)]

use crate::layout::StructLayout;
use zerocopy::IntoBytes;

/// `VFIO_API_VERSION`: what `VFIO_GET_API_VERSION` returns.
pub const VFIO_API_VERSION: i32 = 0;
/// `VFIO_TYPE1_IOMMU`
pub const VFIO_TYPE1_IOMMU: u64 = 1;
/// `VFIO_TYPE1v2_IOMMU`
pub const VFIO_TYPE1v2_IOMMU: u64 = 3;
/// `VFIO_NOIOMMU_IOMMU`: no translation; device DMA uses physical addresses (the
/// mode of `vfio`'s `enable_unsafe_noiommu_mode`, and the one tinygrad 0.10.1 uses).
pub const VFIO_NOIOMMU_IOMMU: u64 = 8;

crate::abi_struct! {
    /// `VFIO_GROUP_GET_STATUS`
    pub struct vfio_group_status {
        /// Size of the struct, set by the caller.
        pub argsz: u32,
        /// `VFIO_GROUP_FLAGS_*`
        pub flags: u32,
    }
    size = 8;
}

/// `VFIO_GROUP_FLAGS_VIABLE`: every device of the group is bound to a VFIO driver.
pub const VFIO_GROUP_FLAGS_VIABLE: u32 = 1 << 0;
/// `VFIO_GROUP_FLAGS_CONTAINER_SET`
pub const VFIO_GROUP_FLAGS_CONTAINER_SET: u32 = 1 << 1;

crate::abi_struct! {
    /// `VFIO_DEVICE_GET_INFO` (newer headers append a `pad` field; the kernel reads
    /// up to `argsz`, needing only the fields up to `num_irqs`).
    pub struct vfio_device_info {
        /// Size of the struct, set by the caller.
        pub argsz: u32,
        /// `VFIO_DEVICE_FLAGS_*`
        pub flags: u32,
        /// Max region index + 1.
        pub num_regions: u32,
        /// Max interrupt index + 1.
        pub num_irqs: u32,
        /// Offset of the first capability within the info struct.
        pub cap_offset: u32,
    }
    size = 20;
}

/// `VFIO_DEVICE_FLAGS_RESET`: the device supports `VFIO_DEVICE_RESET`.
pub const VFIO_DEVICE_FLAGS_RESET: u32 = 1 << 0;
/// `VFIO_DEVICE_FLAGS_PCI`: a vfio-pci device.
pub const VFIO_DEVICE_FLAGS_PCI: u32 = 1 << 1;

crate::abi_struct! {
    /// `VFIO_DEVICE_GET_REGION_INFO`
    pub struct vfio_region_info {
        /// Size of the struct, set by the caller.
        pub argsz: u32,
        /// `VFIO_REGION_INFO_FLAG_*`
        pub flags: u32,
        /// Region index (`VFIO_PCI_*_REGION_INDEX`), set by the caller.
        pub index: u32,
        /// Offset of the first capability within the info struct.
        pub cap_offset: u32,
        /// Region size in bytes.
        pub size: u64,
        /// Region offset from the start of the device descriptor (for `pread`,
        /// `pwrite` and `mmap`).
        pub offset: u64,
    }
    size = 32;
}

/// `VFIO_REGION_INFO_FLAG_READ`
pub const VFIO_REGION_INFO_FLAG_READ: u32 = 1 << 0;
/// `VFIO_REGION_INFO_FLAG_WRITE`
pub const VFIO_REGION_INFO_FLAG_WRITE: u32 = 1 << 1;
/// `VFIO_REGION_INFO_FLAG_MMAP`
pub const VFIO_REGION_INFO_FLAG_MMAP: u32 = 1 << 2;

crate::abi_struct! {
    /// `VFIO_DEVICE_GET_IRQ_INFO`
    pub struct vfio_irq_info {
        /// Size of the struct, set by the caller.
        pub argsz: u32,
        /// `VFIO_IRQ_INFO_*`
        pub flags: u32,
        /// Interrupt index (`VFIO_PCI_*_IRQ_INDEX`), set by the caller.
        pub index: u32,
        /// Number of interrupts within this index.
        pub count: u32,
    }
    size = 16;
}

/// `VFIO_IRQ_INFO_EVENTFD`
pub const VFIO_IRQ_INFO_EVENTFD: u32 = 1 << 0;
/// `VFIO_IRQ_INFO_MASKABLE`
pub const VFIO_IRQ_INFO_MASKABLE: u32 = 1 << 1;
/// `VFIO_IRQ_INFO_AUTOMASKED`
pub const VFIO_IRQ_INFO_AUTOMASKED: u32 = 1 << 2;
/// `VFIO_IRQ_INFO_NORESIZE`
pub const VFIO_IRQ_INFO_NORESIZE: u32 = 1 << 3;

crate::abi_struct! {
    /// `VFIO_DEVICE_SET_IRQS`: the fixed part; `count` data items follow it (`s32`
    /// eventfds for `VFIO_IRQ_SET_DATA_EVENTFD`, `u8` for `VFIO_IRQ_SET_DATA_BOOL`),
    /// and `argsz` covers both.
    pub struct vfio_irq_set {
        /// Size of the struct and its data, set by the caller.
        pub argsz: u32,
        /// One `VFIO_IRQ_SET_DATA_*` and one `VFIO_IRQ_SET_ACTION_*`.
        pub flags: u32,
        /// Interrupt index (`VFIO_PCI_*_IRQ_INDEX`).
        pub index: u32,
        /// First interrupt of the index.
        pub start: u32,
        /// Number of interrupts (and data items).
        pub count: u32,
    }
    size = 20;
}

/// `VFIO_IRQ_SET_DATA_NONE`
pub const VFIO_IRQ_SET_DATA_NONE: u32 = 1 << 0;
/// `VFIO_IRQ_SET_DATA_BOOL`
pub const VFIO_IRQ_SET_DATA_BOOL: u32 = 1 << 1;
/// `VFIO_IRQ_SET_DATA_EVENTFD`
pub const VFIO_IRQ_SET_DATA_EVENTFD: u32 = 1 << 2;
/// `VFIO_IRQ_SET_ACTION_MASK`
pub const VFIO_IRQ_SET_ACTION_MASK: u32 = 1 << 3;
/// `VFIO_IRQ_SET_ACTION_UNMASK`
pub const VFIO_IRQ_SET_ACTION_UNMASK: u32 = 1 << 4;
/// `VFIO_IRQ_SET_ACTION_TRIGGER`
pub const VFIO_IRQ_SET_ACTION_TRIGGER: u32 = 1 << 5;
impl vfio_irq_set {
    /// The argument of `VFIO_DEVICE_SET_IRQS` that signals `eventfd` on the first
    /// vector of interrupt `index` (`VFIO_PCI_*_IRQ_INDEX`): the struct, then the
    /// descriptor, with `argsz` covering both.
    pub fn trigger_eventfd(index: u32, eventfd: i32) -> Vec<u8> {
        let mut arg = vfio_irq_set {
            argsz: (size_of::<vfio_irq_set>() + size_of::<i32>()) as u32,
            flags: VFIO_IRQ_SET_DATA_EVENTFD | VFIO_IRQ_SET_ACTION_TRIGGER,
            index,
            start: 0,
            count: 1,
        }
        .as_bytes()
        .to_vec();
        arg.extend_from_slice(&eventfd.to_ne_bytes());
        arg
    }
}

/// `VFIO_IRQ_SET_DATA_TYPE_MASK`
pub const VFIO_IRQ_SET_DATA_TYPE_MASK: u32 =
    VFIO_IRQ_SET_DATA_NONE | VFIO_IRQ_SET_DATA_BOOL | VFIO_IRQ_SET_DATA_EVENTFD;
/// `VFIO_IRQ_SET_ACTION_TYPE_MASK`
pub const VFIO_IRQ_SET_ACTION_TYPE_MASK: u32 =
    VFIO_IRQ_SET_ACTION_MASK | VFIO_IRQ_SET_ACTION_UNMASK | VFIO_IRQ_SET_ACTION_TRIGGER;

/// `VFIO_PCI_BAR0_REGION_INDEX`
pub const VFIO_PCI_BAR0_REGION_INDEX: u32 = 0;
/// `VFIO_PCI_BAR2_REGION_INDEX`
pub const VFIO_PCI_BAR2_REGION_INDEX: u32 = 2;
/// `VFIO_PCI_BAR5_REGION_INDEX`
pub const VFIO_PCI_BAR5_REGION_INDEX: u32 = 5;
/// `VFIO_PCI_ROM_REGION_INDEX`
pub const VFIO_PCI_ROM_REGION_INDEX: u32 = 6;
/// `VFIO_PCI_CONFIG_REGION_INDEX`
pub const VFIO_PCI_CONFIG_REGION_INDEX: u32 = 7;
/// `VFIO_PCI_VGA_REGION_INDEX`
pub const VFIO_PCI_VGA_REGION_INDEX: u32 = 8;
/// `VFIO_PCI_NUM_REGIONS`
pub const VFIO_PCI_NUM_REGIONS: u32 = 9;

/// `VFIO_PCI_INTX_IRQ_INDEX`
pub const VFIO_PCI_INTX_IRQ_INDEX: u32 = 0;
/// `VFIO_PCI_MSI_IRQ_INDEX`
pub const VFIO_PCI_MSI_IRQ_INDEX: u32 = 1;
/// `VFIO_PCI_MSIX_IRQ_INDEX`
pub const VFIO_PCI_MSIX_IRQ_INDEX: u32 = 2;
/// `VFIO_PCI_ERR_IRQ_INDEX`
pub const VFIO_PCI_ERR_IRQ_INDEX: u32 = 3;
/// `VFIO_PCI_REQ_IRQ_INDEX`
pub const VFIO_PCI_REQ_IRQ_INDEX: u32 = 4;
/// `VFIO_PCI_NUM_IRQS`
pub const VFIO_PCI_NUM_IRQS: u32 = 5;

/// Where vfio-pci places region `index` in the device descriptor's offsets
/// (`VFIO_PCI_INDEX_TO_OFFSET` of the kernel's `vfio_pci_core.h`; user space reads it
/// from `vfio_region_info::offset`).
pub const fn vfio_pci_index_to_offset(index: u32) -> u64 {
    (index as u64) << VFIO_PCI_OFFSET_SHIFT
}

/// `VFIO_PCI_OFFSET_SHIFT` of the kernel's `vfio_pci_core.h`.
pub const VFIO_PCI_OFFSET_SHIFT: u32 = 40;

/// `VFIO_TYPE`
pub const VFIO_TYPE: u64 = b';' as u64;
/// `VFIO_BASE`
pub const VFIO_BASE: u64 = 100;

const fn io(nr: u64) -> u64 {
    (VFIO_TYPE << 8) | nr
}

/// `VFIO_GET_API_VERSION` (container; no argument).
pub const VFIO_GET_API_VERSION: u64 = io(VFIO_BASE);
/// `VFIO_CHECK_EXTENSION` (container; the extension by value).
pub const VFIO_CHECK_EXTENSION: u64 = io(VFIO_BASE + 1);
/// `VFIO_SET_IOMMU` (container; the IOMMU type by value).
pub const VFIO_SET_IOMMU: u64 = io(VFIO_BASE + 2);
/// `VFIO_GROUP_GET_STATUS` (group; [`vfio_group_status`]).
pub const VFIO_GROUP_GET_STATUS: u64 = io(VFIO_BASE + 3);
/// `VFIO_GROUP_SET_CONTAINER` (group; pointer to the container's `s32` descriptor).
pub const VFIO_GROUP_SET_CONTAINER: u64 = io(VFIO_BASE + 4);
/// `VFIO_GROUP_UNSET_CONTAINER` (group; no argument).
pub const VFIO_GROUP_UNSET_CONTAINER: u64 = io(VFIO_BASE + 5);
/// `VFIO_GROUP_GET_DEVICE_FD` (group; pointer to the device's NUL-terminated name).
pub const VFIO_GROUP_GET_DEVICE_FD: u64 = io(VFIO_BASE + 6);
/// `VFIO_DEVICE_GET_INFO` (device; [`vfio_device_info`]).
pub const VFIO_DEVICE_GET_INFO: u64 = io(VFIO_BASE + 7);
/// `VFIO_DEVICE_GET_REGION_INFO` (device; [`vfio_region_info`]).
pub const VFIO_DEVICE_GET_REGION_INFO: u64 = io(VFIO_BASE + 8);
/// `VFIO_DEVICE_GET_IRQ_INFO` (device; [`vfio_irq_info`]).
pub const VFIO_DEVICE_GET_IRQ_INFO: u64 = io(VFIO_BASE + 9);
/// `VFIO_DEVICE_SET_IRQS` (device; [`vfio_irq_set`] and its data).
pub const VFIO_DEVICE_SET_IRQS: u64 = io(VFIO_BASE + 10);
/// `VFIO_DEVICE_RESET` (device; no argument).
pub const VFIO_DEVICE_RESET: u64 = io(VFIO_BASE + 11);

/// Every struct above, for the layout test.
pub const STRUCTS: &[StructLayout] = &[
    vfio_group_status::LAYOUT,
    vfio_device_info::LAYOUT,
    vfio_region_info::LAYOUT,
    vfio_irq_info::LAYOUT,
    vfio_irq_set::LAYOUT,
];

/// Every request and constant above with its C name, for the layout test.
pub const CONSTANTS: &[(&str, u64)] = &[
    ("VFIO_API_VERSION", VFIO_API_VERSION as u64),
    ("VFIO_TYPE1_IOMMU", VFIO_TYPE1_IOMMU),
    ("VFIO_TYPE1v2_IOMMU", VFIO_TYPE1v2_IOMMU),
    ("VFIO_NOIOMMU_IOMMU", VFIO_NOIOMMU_IOMMU),
    ("VFIO_GROUP_FLAGS_VIABLE", VFIO_GROUP_FLAGS_VIABLE as u64),
    ("VFIO_GROUP_FLAGS_CONTAINER_SET", VFIO_GROUP_FLAGS_CONTAINER_SET as u64),
    ("VFIO_DEVICE_FLAGS_RESET", VFIO_DEVICE_FLAGS_RESET as u64),
    ("VFIO_DEVICE_FLAGS_PCI", VFIO_DEVICE_FLAGS_PCI as u64),
    ("VFIO_REGION_INFO_FLAG_READ", VFIO_REGION_INFO_FLAG_READ as u64),
    ("VFIO_REGION_INFO_FLAG_WRITE", VFIO_REGION_INFO_FLAG_WRITE as u64),
    ("VFIO_REGION_INFO_FLAG_MMAP", VFIO_REGION_INFO_FLAG_MMAP as u64),
    ("VFIO_IRQ_INFO_EVENTFD", VFIO_IRQ_INFO_EVENTFD as u64),
    ("VFIO_IRQ_INFO_MASKABLE", VFIO_IRQ_INFO_MASKABLE as u64),
    ("VFIO_IRQ_INFO_AUTOMASKED", VFIO_IRQ_INFO_AUTOMASKED as u64),
    ("VFIO_IRQ_INFO_NORESIZE", VFIO_IRQ_INFO_NORESIZE as u64),
    ("VFIO_IRQ_SET_DATA_NONE", VFIO_IRQ_SET_DATA_NONE as u64),
    ("VFIO_IRQ_SET_DATA_BOOL", VFIO_IRQ_SET_DATA_BOOL as u64),
    ("VFIO_IRQ_SET_DATA_EVENTFD", VFIO_IRQ_SET_DATA_EVENTFD as u64),
    ("VFIO_IRQ_SET_ACTION_MASK", VFIO_IRQ_SET_ACTION_MASK as u64),
    ("VFIO_IRQ_SET_ACTION_UNMASK", VFIO_IRQ_SET_ACTION_UNMASK as u64),
    ("VFIO_IRQ_SET_ACTION_TRIGGER", VFIO_IRQ_SET_ACTION_TRIGGER as u64),
    ("VFIO_IRQ_SET_DATA_TYPE_MASK", VFIO_IRQ_SET_DATA_TYPE_MASK as u64),
    ("VFIO_IRQ_SET_ACTION_TYPE_MASK", VFIO_IRQ_SET_ACTION_TYPE_MASK as u64),
    ("VFIO_PCI_BAR0_REGION_INDEX", VFIO_PCI_BAR0_REGION_INDEX as u64),
    ("VFIO_PCI_BAR2_REGION_INDEX", VFIO_PCI_BAR2_REGION_INDEX as u64),
    ("VFIO_PCI_BAR5_REGION_INDEX", VFIO_PCI_BAR5_REGION_INDEX as u64),
    ("VFIO_PCI_ROM_REGION_INDEX", VFIO_PCI_ROM_REGION_INDEX as u64),
    ("VFIO_PCI_CONFIG_REGION_INDEX", VFIO_PCI_CONFIG_REGION_INDEX as u64),
    ("VFIO_PCI_VGA_REGION_INDEX", VFIO_PCI_VGA_REGION_INDEX as u64),
    ("VFIO_PCI_NUM_REGIONS", VFIO_PCI_NUM_REGIONS as u64),
    ("VFIO_PCI_INTX_IRQ_INDEX", VFIO_PCI_INTX_IRQ_INDEX as u64),
    ("VFIO_PCI_MSI_IRQ_INDEX", VFIO_PCI_MSI_IRQ_INDEX as u64),
    ("VFIO_PCI_MSIX_IRQ_INDEX", VFIO_PCI_MSIX_IRQ_INDEX as u64),
    ("VFIO_PCI_ERR_IRQ_INDEX", VFIO_PCI_ERR_IRQ_INDEX as u64),
    ("VFIO_PCI_REQ_IRQ_INDEX", VFIO_PCI_REQ_IRQ_INDEX as u64),
    ("VFIO_PCI_NUM_IRQS", VFIO_PCI_NUM_IRQS as u64),
    ("VFIO_TYPE", VFIO_TYPE),
    ("VFIO_BASE", VFIO_BASE),
    ("VFIO_GET_API_VERSION", VFIO_GET_API_VERSION),
    ("VFIO_CHECK_EXTENSION", VFIO_CHECK_EXTENSION),
    ("VFIO_SET_IOMMU", VFIO_SET_IOMMU),
    ("VFIO_GROUP_GET_STATUS", VFIO_GROUP_GET_STATUS),
    ("VFIO_GROUP_SET_CONTAINER", VFIO_GROUP_SET_CONTAINER),
    ("VFIO_GROUP_UNSET_CONTAINER", VFIO_GROUP_UNSET_CONTAINER),
    ("VFIO_GROUP_GET_DEVICE_FD", VFIO_GROUP_GET_DEVICE_FD),
    ("VFIO_DEVICE_GET_INFO", VFIO_DEVICE_GET_INFO),
    ("VFIO_DEVICE_GET_REGION_INFO", VFIO_DEVICE_GET_REGION_INFO),
    ("VFIO_DEVICE_GET_IRQ_INFO", VFIO_DEVICE_GET_IRQ_INFO),
    ("VFIO_DEVICE_SET_IRQS", VFIO_DEVICE_SET_IRQS),
    ("VFIO_DEVICE_RESET", VFIO_DEVICE_RESET),
];
