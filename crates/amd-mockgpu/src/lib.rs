//! A mock AMD GPU under the `Sys`/`Mmio` boundary.
//!
//! ```text
//! amd-kfd (the real transport code, unchanged)
//!    │  Sys: open / ioctl / mmap / munmap / read_file / list_dir / …
//!    ▼
//! MockSys  ← this crate's driver half
//!    ├── /dev/kfd: every KFD ioctl the runtime uses, with the kernel's checks and errno
//!    ├── /dev/dri/renderD*: mmap gives shared memory at the address asked for
//!    ├── /sys/…/kfd/topology: nodes for a CPU and N GPUs (gfx1100, gfx1030 profiles)
//!    ├── doorbell pages, the event page and its slots, events and waits
//!    └── bookkeeping of buffers and GPU mappings for the hardware half
//! ```
//!
//! Everything above the `Sys` trait is the production path. Paths the mock does not
//! emulate fall through to the host only for reads outside `/dev` and `/sys`.
//!
//! The hardware half (ring executors, the RDNA3 interpreter) is not built yet:
//! queues are registered ([`MockSys::queues`]) but not consumed.
#![deny(unsafe_code)]

mod driver;
mod kfd;
mod profile;
mod ranges;
mod sys;
mod uaccess;

use std::path::Path;

use amd_kfd::abi::*;
use amd_kfd::sys::{HostSys, SysError, SysResult};
use nix::errno::Errno;
use parking_lot::{Condvar, Mutex};
use zerocopy::{FromBytes, IntoBytes};

use driver::{Driver, FIRST_RENDER_MINOR};
pub use driver::{GPU_CLOCK_HZ, MemoryFault, QueueInfo};
pub use profile::GpuProfile;

/// The sysfs directory of KFD's topology nodes.
pub(crate) const NODES: &str = "/sys/devices/virtual/kfd/kfd/topology/nodes";

/// What the mock presents.
#[derive(Debug, Clone)]
pub struct MockConfig {
    /// The GPUs, in node order (nodes 1..=N when a CPU node is present).
    pub gpus: Vec<GpuProfile>,
    /// Whether node 0 is a CPU node (gpu_id 0), as on real systems.
    pub cpu_node: bool,
}

impl Default for MockConfig {
    /// One gfx1100 (a 7900 XTX) behind a CPU node.
    fn default() -> Self {
        MockConfig {
            gpus: vec![GpuProfile::gfx1100()],
            cpu_node: true,
        }
    }
}

impl MockConfig {
    /// `n` gfx1100 GPUs behind a CPU node.
    pub fn gfx1100s(n: usize) -> Self {
        MockConfig {
            gpus: vec![GpuProfile::gfx1100(); n],
            cpu_node: true,
        }
    }
}

/// Counts of what the mock driver holds for the caller, to find leaks.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MockStats {
    /// Open descriptors (virtual and passed-through).
    pub open_fds: usize,
    /// Live memory handles.
    pub memory_handles: usize,
    /// GPU mappings of memory, summed over GPUs.
    pub gpu_mappings: usize,
    /// Host mappings made through the mock (reservations, render-node and doorbell
    /// maps), as disjoint ranges.
    pub host_mappings: usize,
    /// Live events.
    pub events: usize,
    /// Live queues.
    pub queues: usize,
    /// VRAM bytes allocated, per GPU.
    pub vram_used: Vec<u64>,
}

/// The mock driver, implementing [`Sys`].
#[derive(Debug)]
pub struct MockSys {
    pub(crate) driver: Mutex<Driver>,
    pub(crate) events_changed: Condvar,
    pub(crate) host: HostSys,
}

impl Default for MockSys {
    fn default() -> Self {
        MockSys::new(MockConfig::default())
    }
}

pub(crate) fn err(op: &str, errno: Errno) -> SysError {
    SysError::new(op, errno)
}

/// Decodes an ioctl argument as `T`, runs `f`, and writes `T` back.
pub(crate) fn with_arg<T: FromBytes + IntoBytes + zerocopy::Immutable>(
    arg: &mut [u8],
    f: impl FnOnce(&mut T) -> Result<(), Errno>,
) -> Result<(), Errno> {
    let mut t = T::read_from_bytes(arg).map_err(|_| Errno::EINVAL)?;
    f(&mut t)?;
    arg.copy_from_slice(t.as_bytes());
    Ok(())
}

impl MockSys {
    /// A mock with the GPUs of `config`.
    pub fn new(config: MockConfig) -> Self {
        MockSys {
            driver: Mutex::new(Driver::new(config.gpus, config.cpu_node)),
            events_changed: Condvar::new(),
            host: HostSys,
        }
    }

    /// What the driver holds now.
    pub fn stats(&self) -> MockStats {
        let d = self.driver.lock();
        MockStats {
            open_fds: d.fds.len(),
            memory_handles: d.handles.len(),
            gpu_mappings: d.gpus.iter().map(|g| g.mapped.len()).sum(),
            host_mappings: d.host_maps.len(),
            events: d.events.len(),
            queues: d.queues.len(),
            vram_used: d.gpus.iter().map(|g| g.vram_used).collect(),
        }
    }

    /// The queues created so far, as the hardware half will consume them.
    pub fn queues(&self) -> Vec<QueueInfo> {
        self.driver.lock().queues.values().cloned().collect()
    }

    /// KFD's id of GPU `index`.
    pub fn gpu_id(&self, index: usize) -> Option<u32> {
        self.driver.lock().gpus.get(index).map(|g| g.gpu_id)
    }

    /// Whether `[addr, addr + len)` is mapped to GPU `index`.
    pub fn is_gpu_mapped(&self, index: usize, addr: u64, len: u64) -> bool {
        let d = self.driver.lock();
        index < d.gpus.len() && d.gpu_mapped(index, addr, len)
    }

    /// Whether `[addr, addr + len)` lies in one host mapping made through the mock.
    pub fn is_host_mapped(&self, addr: usize, len: usize) -> bool {
        addr.checked_add(len)
            .is_some_and(|end| self.driver.lock().host_maps.contains(addr, end))
    }

    /// Address of the event page, once registered.
    pub fn event_page(&self) -> Option<u64> {
        self.driver.lock().event_page.map(|(va, _)| va)
    }

    /// Makes the next `n` memory allocations fail with `errno`.
    pub fn fail_next_allocs(&self, n: usize, errno: Errno) {
        self.driver.lock().inject.alloc.extend(std::iter::repeat_n(errno, n));
    }

    /// Makes the next queue creation fail with `errno`.
    pub fn fail_next_queue_creation(&self, errno: Errno) {
        self.driver.lock().inject.create_queue.push_back(errno);
    }

    /// Records a memory fault on GPU `index` and fires the memory events.
    pub fn inject_memory_fault(&self, index: usize, fault: MemoryFault) {
        self.driver.lock().memory_fault(index, fault);
        self.events_changed.notify_all();
    }

    /// Fires the hardware-exception events for GPU `index` (a GPU hang reset).
    pub fn inject_hw_exception(&self, index: usize) {
        self.driver.lock().hw_exception(index, KFD_HW_EXCEPTION_GPU_HANG);
        self.events_changed.notify_all();
    }

    /// Signals event `id`, as an interrupt from the GPU would.
    pub fn signal_event(&self, id: u32) -> bool {
        let ok = self.driver.lock().set_event(id, true).is_ok();
        self.events_changed.notify_all();
        ok
    }

    pub(crate) fn virtual_text(&self, path: &Path) -> Option<SysResult<Vec<u8>>> {
        let d = self.driver.lock();
        let rel = path.strip_prefix(NODES).ok()?;
        let mut parts = rel.iter().map(|p| p.to_string_lossy().into_owned());
        let node: usize = parts.next()?.parse().ok()?;
        let file = parts.next()?;
        if parts.next().is_some() {
            return Some(Err(SysError::at("read", path, Errno::ENOENT)));
        }
        let first_gpu = d.cpu_node as usize;
        let text = if d.cpu_node && node == 0 {
            match file.as_str() {
                "gpu_id" => "0\n".to_string(),
                "properties" => "cpu_cores_count 16\nsimd_count 0\nmem_banks_count 1\ngfx_target_version 0\n\
                                 drm_render_minor 0\n"
                    .to_string(),
                "name" => "\n".to_string(),
                _ => return Some(Err(SysError::at("read", path, Errno::ENOENT))),
            }
        } else {
            let Some(g) = node.checked_sub(first_gpu).and_then(|i| d.gpus.get(i).map(|g| (i, g))) else {
                return Some(Err(SysError::at("read", path, Errno::ENOENT)));
            };
            let (i, g) = g;
            match file.as_str() {
                "gpu_id" => format!("{}\n", g.gpu_id),
                "properties" => g.profile.properties_text(FIRST_RENDER_MINOR + i as u32),
                "name" => format!("{}\n", g.profile.name),
                _ => return Some(Err(SysError::at("read", path, Errno::ENOENT))),
            }
        };
        Some(Ok(text.into_bytes()))
    }

    pub(crate) fn is_virtual(path: &Path) -> bool {
        path.starts_with("/dev") || path.starts_with("/sys")
    }

    pub(crate) fn render_index(path: &Path) -> Option<usize> {
        let name = path.strip_prefix("/dev/dri").ok()?.to_str()?;
        let minor: u32 = name.strip_prefix("renderD")?.parse().ok()?;
        minor.checked_sub(FIRST_RENDER_MINOR).map(|i| i as usize)
    }
}
