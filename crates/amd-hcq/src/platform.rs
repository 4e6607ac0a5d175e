//! Opening GPUs: the transport chosen by `AMD_IFACE`, the devices of a process sharing
//! `/dev/kfd`, the event page and the signal page.

use std::path::Path;
use std::sync::Arc;

use amd_kfd::Kfd;
use amd_kfd::sys::{HostSys, Sys};
use amd_kfd::topology::Visibility;
use parking_lot::Mutex;

use crate::device::Device;
use crate::iface::KfdIface;
use crate::signal::SignalPool;
use crate::{HcqError, Result};

/// The transports `AMD_IFACE` selects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Iface {
    /// `/dev/kfd` of the amdgpu driver.
    Kfd,
    /// The in-process mock GPU (the `mock` feature).
    Mock,
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

/// The process's GPUs on one transport.
pub struct Platform {
    kfd: Kfd,
    iface: Iface,
    /// The signal page its open devices share (freed with the last of them).
    pool: Mutex<std::sync::Weak<SignalPool<KfdIface>>>,
}

impl std::fmt::Debug for Platform {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Platform")
            .field("iface", &self.iface)
            .field("gpus", &self.kfd.gpus().len())
            .finish()
    }
}

impl Platform {
    /// Opens the transport `AMD_IFACE` names (`KFD`, or `MOCK` with the `mock`
    /// feature). Unset: KFD when it lists a GPU, else, with the `mock` feature, the
    /// mock; else an error naming the alternatives.
    pub fn open() -> Result<Self> {
        match std::env::var("AMD_IFACE")
            .ok()
            .as_deref()
            .map(str::to_ascii_uppercase)
            .as_deref()
        {
            Some("KFD") => Self::kfd(),
            Some("MOCK") => Self::mock_or_err(),
            Some(other) => Err(HcqError::NoDevice(format!(
                "AMD_IFACE={other} is not a transport: use KFD{}",
                if cfg!(feature = "mock") {
                    " or MOCK"
                } else {
                    " (or MOCK, with the `mock` feature)"
                }
            ))),
            None => match Self::kfd() {
                Ok(p) if !p.kfd.gpus().is_empty() => Ok(p),
                other if cfg!(feature = "mock") => {
                    let _ = other;
                    Self::mock_or_err()
                }
                Ok(_) => Err(Self::no_gpu()),
                Err(e) => Err(HcqError::NoDevice(format!("{e}; {}", Self::no_gpu()))),
            },
        }
    }

    fn no_gpu() -> HcqError {
        HcqError::NoDevice(
            "no AMD GPU found through /dev/kfd (is the amdgpu driver loaded?); to run without one, build with the \
             `mock` feature and set AMD_IFACE=MOCK"
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

    #[cfg(feature = "mock")]
    fn mock_or_err() -> Result<Self> {
        Self::mock(amd_mockgpu::MockConfig::default())
    }

    #[cfg(not(feature = "mock"))]
    fn mock_or_err() -> Result<Self> {
        Err(HcqError::NoDevice(
            "AMD_IFACE=MOCK needs the `mock` feature of amd-hcq".into(),
        ))
    }

    /// The mock GPU with `config` (the `mock` feature).
    #[cfg(feature = "mock")]
    pub fn mock(config: amd_mockgpu::MockConfig) -> Result<Self> {
        Self::with_sys(Arc::new(amd_mockgpu::MockSys::new(config)), Iface::Mock)
    }

    /// A platform over any [`Sys`] (the mock's, in tests).
    pub fn with_sys(sys: Arc<dyn Sys>, iface: Iface) -> Result<Self> {
        let kfd = Kfd::open_with(sys, &Visibility::from_env())?;
        Ok(Platform {
            kfd,
            iface,
            pool: Mutex::new(std::sync::Weak::new()),
        })
    }

    /// The transport in use.
    pub fn iface(&self) -> Iface {
        self.iface
    }

    /// How many GPUs are visible.
    pub fn device_count(&self) -> usize {
        self.kfd.gpus().len()
    }

    /// The KFD handle.
    pub fn kfd_handle(&self) -> &Kfd {
        &self.kfd
    }

    /// Opens GPU `index`. Devices of one platform share the signal page.
    pub fn device(&self, index: usize) -> Result<Device> {
        if index >= self.kfd.gpus().len() {
            return Err(HcqError::NoDevice(format!(
                "no GPU {index}: {} visible (VISIBLE_DEVICES / HIP_VISIBLE_DEVICES select them)",
                self.kfd.gpus().len()
            )));
        }
        let iface = KfdIface::new(self.kfd.device(index)?)?;
        let mut pool = self.pool.lock();
        let dev = Device::with_iface(iface, index, pool.upgrade())?;
        *pool = Arc::downgrade(&dev.pool());
        Ok(dev)
    }
}
