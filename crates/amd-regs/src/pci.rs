//! PCI as Linux shows an AMD GPU to a user-space driver: configuration-space offsets
//! and bits (`<linux/pci_regs.h>`), the BARs the GPU's apertures sit in, and the
//! sysfs, procfs and VFIO paths through which the driverless transport reaches it —
//! and which the mock GPU serves.
//!
//! Configuration-space offsets are byte offsets from the start of a function's space;
//! the MSI ones (`PCI_MSI_*`) from the start of the MSI capability.

/// AMD's PCI vendor id.
pub const AMD_VENDOR: u16 = 0x1002;

/// `PCI_VENDOR_ID` (16 bits).
pub const PCI_VENDOR_ID: usize = 0x00;
/// `PCI_DEVICE_ID` (16 bits).
pub const PCI_DEVICE_ID: usize = 0x02;
/// `PCI_COMMAND` (16 bits).
pub const PCI_COMMAND: usize = 0x04;
/// `PCI_COMMAND_IO`: I/O space decoded.
pub const PCI_COMMAND_IO: u16 = 0x1;
/// `PCI_COMMAND_MEMORY`: memory space decoded.
pub const PCI_COMMAND_MEMORY: u16 = 0x2;
/// `PCI_COMMAND_MASTER`: bus mastering (DMA) enabled.
pub const PCI_COMMAND_MASTER: u16 = 0x4;
/// `PCI_COMMAND_INTX_DISABLE`: legacy interrupts off.
pub const PCI_COMMAND_INTX_DISABLE: u16 = 0x400;
/// `PCI_STATUS` (16 bits).
pub const PCI_STATUS: usize = 0x06;
/// `PCI_STATUS_CAP_LIST`: the function has a capability list.
pub const PCI_STATUS_CAP_LIST: u16 = 0x10;
/// `PCI_REVISION_ID` (8 bits), followed by the 24-bit class code.
pub const PCI_REVISION_ID: usize = 0x08;
/// `PCI_CLASS_PROG`: the class code's low byte (the class code is 24 bits from here).
pub const PCI_CLASS_PROG: usize = 0x09;
/// `PCI_HEADER_TYPE` (8 bits).
pub const PCI_HEADER_TYPE: usize = 0x0e;
/// `PCI_BASE_ADDRESS_0`: the first of six 32-bit BAR registers.
pub const PCI_BASE_ADDRESS_0: usize = 0x10;
/// `PCI_SUBSYSTEM_VENDOR_ID` (16 bits).
pub const PCI_SUBSYSTEM_VENDOR_ID: usize = 0x2c;
/// `PCI_SUBSYSTEM_ID` (16 bits).
pub const PCI_SUBSYSTEM_ID: usize = 0x2e;
/// `PCI_CAPABILITY_LIST`: the first capability's offset (8 bits).
pub const PCI_CAPABILITY_LIST: usize = 0x34;
/// `PCI_INTERRUPT_PIN` (8 bits).
pub const PCI_INTERRUPT_PIN: usize = 0x3d;
/// `PCI_CAP_ID_MSI`: the MSI capability's id.
pub const PCI_CAP_ID_MSI: u8 = 0x05;
/// `PCI_MSI_FLAGS`: the MSI message control (16 bits).
pub const PCI_MSI_FLAGS: usize = 0x02;
/// `PCI_MSI_FLAGS_ENABLE`
pub const PCI_MSI_FLAGS_ENABLE: u16 = 0x1;
/// `PCI_MSI_FLAGS_64BIT`: the message address is 64 bits.
pub const PCI_MSI_FLAGS_64BIT: u16 = 0x80;
/// `PCI_MSI_ADDRESS_LO`
pub const PCI_MSI_ADDRESS_LO: usize = 0x04;
/// `PCI_MSI_ADDRESS_HI` (with `PCI_MSI_FLAGS_64BIT`).
pub const PCI_MSI_ADDRESS_HI: usize = 0x08;
/// `PCI_MSI_DATA_64`: the message data of a 64-bit capability (16 bits).
pub const PCI_MSI_DATA_64: usize = 0x0c;
/// `PCI_CFG_SPACE_EXP_SIZE`: a PCI Express function's configuration space.
pub const PCI_CFG_SPACE_EXP_SIZE: usize = 4096;

/// The BAR of VRAM (the frame buffer aperture; 64-bit, prefetchable).
pub const BAR_VRAM: usize = 0;
/// The BAR of the doorbells (64-bit, prefetchable).
pub const BAR_DOORBELL: usize = 2;
/// The I/O BAR.
pub const BAR_IO: usize = 4;
/// The BAR of the registers (32-bit).
pub const BAR_MMIO: usize = 5;

/// Where the kernel lists PCI devices (one directory per `domain:bus:slot.function`).
pub const PCI_DEVICES: &str = "/sys/bus/pci/devices";
/// Where the kernel lists PCI drivers.
pub const PCI_DRIVERS: &str = "/sys/bus/pci/drivers";
/// The file that probes drivers for the device written to it.
pub const DRIVERS_PROBE: &str = "/sys/bus/pci/drivers_probe";
/// The `vfio` module's directory.
pub const VFIO_MODULE: &str = "/sys/module/vfio";
/// The `vfio` module's no-IOMMU switch.
pub const NOIOMMU_PARAM: &str = "/sys/module/vfio/parameters/enable_unsafe_noiommu_mode";
/// The VFIO container.
pub const VFIO_CONTAINER: &str = "/dev/vfio/vfio";
/// The process's page map (virtual page → physical frame): a 64-bit entry a page
/// (Linux's `Documentation/admin-guide/mm/pagemap.rst`).
pub const PAGEMAP: &str = "/proc/self/pagemap";
/// A page map entry's bit 63: the page is present.
pub const PM_PRESENT: u64 = 1 << 63;
/// A page map entry's bits 0–54: the page frame number (zero without `CAP_SYS_ADMIN`).
pub const PM_PFN_MASK: u64 = (1 << 55) - 1;

/// Every constant above that `<linux/pci_regs.h>` defines, by its name there, for the
/// test that compares them with the header.
pub const CONSTANTS: &[(&str, u64)] = &[
    ("PCI_VENDOR_ID", PCI_VENDOR_ID as u64),
    ("PCI_DEVICE_ID", PCI_DEVICE_ID as u64),
    ("PCI_COMMAND", PCI_COMMAND as u64),
    ("PCI_COMMAND_IO", PCI_COMMAND_IO as u64),
    ("PCI_COMMAND_MEMORY", PCI_COMMAND_MEMORY as u64),
    ("PCI_COMMAND_MASTER", PCI_COMMAND_MASTER as u64),
    ("PCI_COMMAND_INTX_DISABLE", PCI_COMMAND_INTX_DISABLE as u64),
    ("PCI_STATUS", PCI_STATUS as u64),
    ("PCI_STATUS_CAP_LIST", PCI_STATUS_CAP_LIST as u64),
    ("PCI_REVISION_ID", PCI_REVISION_ID as u64),
    ("PCI_CLASS_PROG", PCI_CLASS_PROG as u64),
    ("PCI_HEADER_TYPE", PCI_HEADER_TYPE as u64),
    ("PCI_BASE_ADDRESS_0", PCI_BASE_ADDRESS_0 as u64),
    ("PCI_SUBSYSTEM_VENDOR_ID", PCI_SUBSYSTEM_VENDOR_ID as u64),
    ("PCI_SUBSYSTEM_ID", PCI_SUBSYSTEM_ID as u64),
    ("PCI_CAPABILITY_LIST", PCI_CAPABILITY_LIST as u64),
    ("PCI_INTERRUPT_PIN", PCI_INTERRUPT_PIN as u64),
    ("PCI_CAP_ID_MSI", PCI_CAP_ID_MSI as u64),
    ("PCI_MSI_FLAGS", PCI_MSI_FLAGS as u64),
    ("PCI_MSI_FLAGS_ENABLE", PCI_MSI_FLAGS_ENABLE as u64),
    ("PCI_MSI_FLAGS_64BIT", PCI_MSI_FLAGS_64BIT as u64),
    ("PCI_MSI_ADDRESS_LO", PCI_MSI_ADDRESS_LO as u64),
    ("PCI_MSI_ADDRESS_HI", PCI_MSI_ADDRESS_HI as u64),
    ("PCI_MSI_DATA_64", PCI_MSI_DATA_64 as u64),
    ("PCI_CFG_SPACE_EXP_SIZE", PCI_CFG_SPACE_EXP_SIZE as u64),
];
