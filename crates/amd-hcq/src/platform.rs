//! Opening GPUs: the transport chosen by `AMD_IFACE` (KFD, or driverless through the
//! PCI BARs), the devices of a process sharing `/dev/kfd` (or the PCI bus), the event
//! page and the signal page.

use std::path::Path;
use std::sync::{Arc, Weak};

use amd_am::AmGpu;
use amd_am::device::BootOptions;
use amd_am::ip::AmDevice;
use amd_am::pci::{PciBus, PciOptions};
use amd_kfd::Kfd;
use amd_kfd::sys::{HostSys, Sys};
use amd_kfd::topology::Visibility;
use parking_lot::Mutex;

use crate::am::{AmIface, AmShared};
use crate::any::AnyIface;
use crate::device::Device;
use crate::iface::KfdIface;
use crate::signal::SignalPool;
use crate::{HcqError, Result};

/// The transports `AMD_IFACE` selects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Iface {
    /// `/dev/kfd` of the amdgpu driver.
    Kfd,
    /// The in-process mock GPU behind a mock `/dev/kfd` (the `mock` feature).
    Mock,
    /// Driverless: the GPU taken from the kernel driver and driven through its PCI
    /// BARs (tinygrad 0.10.1's `PCIIface`).
    Pci,
    /// Driverless, on the mock's PCI GPU (the `mock` feature).
    MockPci,
}

impl Iface {
    /// Whether this is the driverless transport (real or mock).
    pub fn driverless(self) -> bool {
        matches!(self, Iface::Pci | Iface::MockPci)
    }
}

/// The process's platform, opened by the first [`Device::open`].
static GLOBAL: Mutex<Option<Arc<Platform>>> = Mutex::new(None);

impl Device {
    /// Opens GPU `index` of the process's platform (opened on first use with
    /// [`Platform::open`]: `AMD_IFACE`, visible-device variables).
    pub fn open(index: usize) -> Result<Device> {
        let p = {
            let mut g = GLOBAL.lock();
            match g.as_ref() {
                Some(p) => p.clone(),
                None => g.insert(Arc::new(Platform::open()?)).clone(),
            }
        };
        p.device(index)
    }
}

/// The GPUs a platform reaches.
enum Backend {
    Kfd(Kfd),
    Pci {
        bus: Mutex<PciBus>,
        boot: BootOptions,
        /// Each GPU once booted (kept until the platform and everything of the GPU
        /// is dropped, as tinygrad 0.10.1 keeps its devices for the process).
        gpus: Vec<Mutex<Option<Arc<AmShared>>>>,
    },
}

/// The process's GPUs on one transport.
pub struct Platform {
    backend: Backend,
    iface: Iface,
    /// The signal page its open devices share (freed with the last of them).
    pool: Mutex<Weak<SignalPool<AnyIface>>>,
    /// The compute queue format of devices opened with [`Platform::device`] (none:
    /// `HCQ_COMPUTE_QUEUE`'s).
    format: Option<crate::QueueFormat>,
}

impl std::fmt::Debug for Platform {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Platform")
            .field("iface", &self.iface)
            .field("gpus", &self.device_count())
            .finish()
    }
}

impl Platform {
    /// Opens the transport `AMD_IFACE` names: `KFD`; `PCI` (driverless: the first
    /// supported GPU on the PCI bus, or, with the `mock` feature and none there, the
    /// mock's PCI GPU); `MOCK` or `MOCK_PCI` (the `mock` feature: the mock GPU behind
    /// KFD or on the PCI bus). Unset: KFD when it lists a GPU; else, as tinygrad
    /// 0.10.1 does, driverless when the amdgpu module is not loaded and the bus has a
    /// supported GPU; else, with the `mock` feature, the mock; else an error naming
    /// the alternatives.
    pub fn open() -> Result<Self> {
        match std::env::var("AMD_IFACE")
            .ok()
            .as_deref()
            .map(str::to_ascii_uppercase)
            .as_deref()
        {
            Some("KFD") => Self::kfd(),
            Some("MOCK") => Self::mock_or_err(false),
            Some("MOCK_PCI") => Self::mock_or_err(true),
            Some("PCI") => match Self::pci() {
                Ok(p) if p.device_count() > 0 => Ok(p),
                _ if cfg!(feature = "mock") => Self::mock_or_err(true),
                Ok(_) => Err(HcqError::NoDevice(
                    "AMD_IFACE=PCI: no supported GPU on the PCI bus (tinygrad 0.10.1's driverless transport drives \
                     the Radeon RX 7900 XTX, 1002:744c)"
                        .into(),
                )),
                Err(e) => Err(e),
            },
            Some(other) => Err(HcqError::NoDevice(format!(
                "AMD_IFACE={other} is not a transport: use KFD or PCI{}",
                if cfg!(feature = "mock") {
                    ", MOCK or MOCK_PCI"
                } else {
                    " (or MOCK / MOCK_PCI, with the `mock` feature)"
                }
            ))),
            None => match Self::kfd() {
                Ok(p) if p.device_count() > 0 => Ok(p),
                other => {
                    if !Path::new("/sys/module/amdgpu").exists()
                        && let Ok(p) = Self::pci()
                        && p.device_count() > 0
                    {
                        return Ok(p);
                    }
                    match other {
                        _ if cfg!(feature = "mock") => Self::mock_or_err(false),
                        Ok(_) => Err(Self::no_gpu()),
                        Err(e) => Err(HcqError::NoDevice(format!("{e}; {}", Self::no_gpu()))),
                    }
                }
            },
        }
    }

    fn no_gpu() -> HcqError {
        HcqError::NoDevice(
            "no AMD GPU found through /dev/kfd (is the amdgpu driver loaded?) or on the PCI bus (AMD_IFACE=PCI); \
             to run without one, build with the `mock` feature and set AMD_IFACE=MOCK"
                .into(),
        )
    }

    /// The real driver, through `/dev/kfd`.
    pub fn kfd() -> Result<Self> {
        if !Path::new(amd_kfd::KFD_PATH).exists() {
            return Err(Self::no_gpu());
        }
        Self::with_sys(Arc::new(HostSys), Iface::Kfd)
    }

    /// Driverless: the supported GPUs of the PCI bus (`VISIBLE_DEVICES`, `VFIO`),
    /// each taken from its driver and booted when first opened (firmware from
    /// `AM_FIRMWARE_DIR` or `/lib/firmware`, `AM_RESET`).
    pub fn pci() -> Result<Self> {
        Self::pci_with_sys(Arc::new(HostSys), BootOptions::from_env(), Iface::Pci)
    }

    #[cfg(feature = "mock")]
    fn mock_or_err(pci: bool) -> Result<Self> {
        // AMD_MOCK_PROFILE picks the mock's GPU, as the interposer's does: a KFD GPU,
        // or with AMD_IFACE=MOCK_PCI the PCI GPU of that target.
        let named = match std::env::var("AMD_MOCK_PROFILE") {
            Ok(name) => {
                let config = if pci {
                    amd_mockgpu::MockConfig::named_pci(&name, 1)
                } else {
                    amd_mockgpu::MockConfig::named(&name, 1)
                };
                Some(config.ok_or_else(|| {
                    HcqError::NoDevice(if pci {
                        format!("AMD_MOCK_PROFILE={name:?} names no mock PCI GPU (gfx1100, gfx1201 or gfx1030)")
                    } else {
                        format!("AMD_MOCK_PROFILE={name:?} names no mock GPU (gfx1100, gfx1201, gfx942, gfx942-spx or gfx1030)")
                    })
                })?)
            }
            Err(_) => None,
        };
        match (pci, named) {
            (true, config) => Self::mock_pci(config.unwrap_or_else(|| amd_mockgpu::MockConfig::pci(1))),
            (false, config) => Self::mock(config.unwrap_or_default()),
        }
    }

    #[cfg(not(feature = "mock"))]
    fn mock_or_err(_pci: bool) -> Result<Self> {
        Err(HcqError::NoDevice(
            "the mock GPU (AMD_IFACE=MOCK or MOCK_PCI) needs the `mock` feature of amd-hcq".into(),
        ))
    }

    /// The mock GPU with `config`, behind its mock `/dev/kfd` (the `mock` feature).
    #[cfg(feature = "mock")]
    pub fn mock(config: amd_mockgpu::MockConfig) -> Result<Self> {
        Self::with_sys(Arc::new(amd_mockgpu::MockSys::new(config)), Iface::Mock)
    }

    /// The PCI GPUs of the mock with `config` (`MockConfig::pci(n)`), driverless, booted
    /// with the mock's synthetic firmware (the `mock` feature).
    #[cfg(feature = "mock")]
    pub fn mock_pci(config: amd_mockgpu::MockConfig) -> Result<Self> {
        Self::mock_pci_with(Arc::new(amd_mockgpu::MockSys::new(config)))
    }

    /// The PCI GPUs of `sys`, driverless, booted with the mock's synthetic firmware
    /// (the `mock` feature).
    #[cfg(feature = "mock")]
    pub fn mock_pci_with(sys: Arc<amd_mockgpu::MockSys>) -> Result<Self> {
        let boot = BootOptions {
            firmware: amd_am::firmware::FirmwareSource::dir(amd_mockgpu::pci::firmware::DIR),
            ..BootOptions::from_env()
        };
        Self::pci_with_sys(sys, boot, Iface::MockPci)
    }

    /// A platform over any [`Sys`] (the mock's, in tests).
    pub fn with_sys(sys: Arc<dyn Sys>, iface: Iface) -> Result<Self> {
        let kfd = Kfd::open_with(sys, &Visibility::from_env())?;
        Ok(Platform {
            backend: Backend::Kfd(kfd),
            iface,
            pool: Mutex::new(Weak::new()),
            format: None,
        })
    }

    /// A driverless platform over any [`Sys`]: its PCI bus scanned, each GPU booted
    /// with `boot` when first opened.
    pub fn pci_with_sys(sys: Arc<dyn Sys>, boot: BootOptions, iface: Iface) -> Result<Self> {
        let bus = PciBus::scan(sys, &PciOptions::from_env())?;
        let gpus = (0..bus.gpus().len()).map(|_| Mutex::new(None)).collect();
        Ok(Platform {
            backend: Backend::Pci {
                bus: Mutex::new(bus),
                boot,
                gpus,
            },
            iface,
            pool: Mutex::new(Weak::new()),
            format: None,
        })
    }

    /// The transport in use.
    pub fn iface(&self) -> Iface {
        self.iface
    }

    /// How many GPUs are visible.
    pub fn device_count(&self) -> usize {
        match &self.backend {
            Backend::Kfd(k) => k.gpus().len(),
            Backend::Pci { gpus, .. } => gpus.len(),
        }
    }

    /// The KFD handle (the KFD transport only).
    pub fn kfd_handle(&self) -> Option<&Kfd> {
        match &self.backend {
            Backend::Kfd(k) => Some(k),
            Backend::Pci { .. } => None,
        }
    }

    /// Opens GPU `index` with the compute queue format given to
    /// [`Platform::with_queue_format`], else the one `HCQ_COMPUTE_QUEUE` names (`pm4`,
    /// the default, or `aql`: see [`QueueFormat`](crate::QueueFormat)). Devices
    /// of one platform share the signal page. On the driverless transport the first
    /// open takes and boots the GPU; it stays booted until the platform and every
    /// device, buffer and signal of it are dropped (then `fini` runs), and one device
    /// at a time drives it (a device opened again starts without the faults of the one
    /// before).
    pub fn device(&self, index: usize) -> Result<Device> {
        let format = match self.format {
            Some(f) => f,
            None => crate::QueueFormat::from_env()?,
        };
        self.device_with(index, format)
    }

    /// The same platform, whose [`Platform::device`] opens devices with compute queues
    /// of `format` whatever `HCQ_COMPUTE_QUEUE` says.
    pub fn with_queue_format(mut self, format: crate::QueueFormat) -> Self {
        self.format = Some(format);
        self
    }

    /// Opens GPU `index` with a compute queue of `format` (AQL: the KFD transport
    /// only; the driverless one refuses it).
    pub fn device_with(&self, index: usize, format: crate::QueueFormat) -> Result<Device> {
        if index >= self.device_count() {
            return Err(HcqError::NoDevice(format!(
                "no GPU {index}: {} visible (VISIBLE_DEVICES / HIP_VISIBLE_DEVICES select them)",
                self.device_count()
            )));
        }
        let iface = match &self.backend {
            Backend::Kfd(kfd) => AnyIface::Kfd(KfdIface::new(kfd.device(index)?)?),
            Backend::Pci { bus, boot, gpus } => {
                let mut slot = gpus[index].lock();
                let shared = match &*slot {
                    Some(s) => s.clone(),
                    None => {
                        let pci = bus.lock().open(index)?;
                        let s = AmShared::new(AmGpu::boot(AmDevice::new(pci)?, boot)?);
                        *slot = Some(s.clone());
                        s
                    }
                };
                AnyIface::Am(AmIface::new(shared)?)
            }
        };
        let mut pool = self.pool.lock();
        let dev = Device::with_iface(iface, index, pool.upgrade(), format)?;
        *pool = Arc::downgrade(&dev.pool());
        Ok(dev)
    }
}
