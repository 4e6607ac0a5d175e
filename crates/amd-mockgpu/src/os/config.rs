//! What the mock presents: its GPUs, PCI devices and how its engines run.

use std::time::Duration;

use super::ExecMode;
use crate::driver::profile::GpuProfile;
use crate::pci::{PciFirmware, PciProfile};

/// What the mock presents.
#[derive(Debug, Clone)]
pub struct MockConfig {
    /// The GPUs, in node order (nodes 1..=N when a CPU node is present).
    pub gpus: Vec<GpuProfile>,
    /// Whether node 0 is a CPU node (gpu_id 0), as on real systems.
    pub cpu_node: bool,
    /// How the engines run.
    pub mode: ExecMode,
    /// GPUs on the PCI bus for the driverless transport (`/sys/bus/pci/devices/
    /// 0000:03:00.0`, `0000:04:00.0`, …; see [`crate::pci`]). They are separate from the
    /// KFD GPUs above: the mock does not remove a PCI GPU from the KFD topology when
    /// it leaves amdgpu, nor the reverse.
    pub pci: Vec<PciProfile>,
    /// Whether the `vfio` and `vfio-pci` modules are loaded (`/dev/vfio/vfio`,
    /// `/sys/module/vfio`, the `vfio-pci` driver).
    pub vfio: bool,
    /// The PCI GPUs' firmware files: served under [`crate::pci::firmware::DIR`] and checked
    /// by their PSPs ([`crate::pci::FirmwareCatalogue`]); the synthetic ones by default.
    pub pci_firmware: PciFirmware,
    /// Where the mock writes what the kernel would print to its log (`dmesg`): each
    /// queue that stops, with the packet or instruction it stopped at. `None` (the
    /// default) keeps it to [`crate::MockSys::stop_reasons`]; the interposer prints it
    /// on stderr, as a client on real hardware would find it in `dmesg`.
    pub kernel_log: Option<fn(&str)>,
    /// How long a device thread with nothing left to run keeps watching for doorbells
    /// before it sleeps ([`ExecMode::Threaded`]), as a GPU's command processor polls
    /// its rings: a doorbell in that window costs its writer a store, one after it the
    /// thread's wake-up (a futex wake, several µs). [`DEFAULT_IDLE_POLL`] unless
    /// `HCQ_MOCK_IDLE_POLL_US` says otherwise (0: sleep at once).
    pub idle_poll: Duration,
    /// The sanitizer: the memory layer's checks for a program's memory bugs, off by
    /// default (they cost a lookup per access to the memory they watch).
    /// On, a kernel's load or atomic of VRAM nothing has written stops its queue with
    /// a memory fault, as an access outside every allocation does; every reservation
    /// the mock makes for a client is followed by unmapped address space
    /// ([`crate::SANITIZER_GUARD_BYTES`]) so that running off a buffer's end faults
    /// rather than reaching its neighbour. The stop reason (the kernel log) names the
    /// allocation and the byte. `AMD_MOCK_SANITIZE=1` turns it on. Only the KFD GPUs
    /// have it (see `docs/mock.md`).
    pub sanitize: bool,
}

/// [`MockConfig::sanitize`] from `AMD_MOCK_SANITIZE`: on for `1`, off for anything
/// else or nothing.
fn sanitize_from_env() -> bool {
    std::env::var("AMD_MOCK_SANITIZE").is_ok_and(|v| v.trim() == "1")
}

/// The default [`MockConfig::idle_poll`]: longer than the gap between a host's
/// back-to-back submissions, far shorter than a scheduler tick.
pub const DEFAULT_IDLE_POLL: Duration = Duration::from_micros(200);

/// [`MockConfig::idle_poll`] from `HCQ_MOCK_IDLE_POLL_US` (microseconds), else
/// [`DEFAULT_IDLE_POLL`]; a value that is not a number of at most 1,000,000 µs is
/// ignored.
fn idle_poll_from_env() -> Duration {
    std::env::var("HCQ_MOCK_IDLE_POLL_US")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|&us| us <= 1_000_000)
        .map_or(DEFAULT_IDLE_POLL, Duration::from_micros)
}

impl Default for MockConfig {
    /// One gfx1100 (a 7900 XTX) behind a CPU node; no PCI GPU; VFIO loaded.
    fn default() -> Self {
        MockConfig {
            gpus: vec![GpuProfile::gfx1100()],
            cpu_node: true,
            mode: ExecMode::Threaded,
            pci: Vec::new(),
            vfio: true,
            pci_firmware: PciFirmware::Synthetic,
            kernel_log: None,
            idle_poll: idle_poll_from_env(),
            sanitize: sanitize_from_env(),
        }
    }
}

impl MockConfig {
    /// `n` gfx1100 GPUs behind a CPU node.
    pub fn gfx1100s(n: usize) -> Self {
        MockConfig {
            gpus: vec![GpuProfile::gfx1100(); n],
            ..Self::default()
        }
    }

    /// `n` GPUs of the KFD profile named `name` (`gfx1100`, `gfx1201`, `gfx942`, `gfx1030`; see
    /// [`GpuProfile::named`]) behind a CPU node, `None` for another name.
    pub fn named(name: &str, n: usize) -> Option<Self> {
        Some(MockConfig {
            gpus: vec![GpuProfile::named(name)?; n],
            ..Self::default()
        })
    }

    /// `n` 7900 XTXs on the PCI bus ([`PciProfile::navi31`], bound to amdgpu), no KFD
    /// GPU, VFIO loaded.
    pub fn pci(n: usize) -> Self {
        MockConfig {
            gpus: Vec::new(),
            pci: vec![PciProfile::navi31(); n],
            ..Self::default()
        }
    }

    /// `n` PCI GPUs of the profile a KFD target names (`AMD_MOCK_PROFILE`): `gfx1100`
    /// a 7900 XTX ([`PciProfile::navi31`]), `gfx1201` an RX 9070 XT
    /// ([`PciProfile::navi48`]), `gfx1030` a Navi 21 ([`PciProfile::navi21`], which
    /// the driverless transport refuses); `None` for another name.
    pub fn named_pci(name: &str, n: usize) -> Option<Self> {
        let profile = match name {
            "gfx1100" => PciProfile::navi31(),
            "gfx1201" => PciProfile::navi48(),
            "gfx1030" => PciProfile::navi21(),
            _ => return None,
        };
        Some(MockConfig {
            pci: vec![profile; n],
            ..Self::pci(0)
        })
    }

    /// The same GPUs, with the firmware files of the host directory `dir` (such as
    /// `/lib/firmware/amdgpu`) served under [`crate::pci::firmware::DIR`] and checked by the
    /// PSPs instead of the synthetic ones ([`PciFirmware::Dir`]).
    pub fn pci_firmware_dir(mut self, dir: impl Into<std::path::PathBuf>) -> Self {
        self.pci_firmware = PciFirmware::Dir(dir.into());
        self
    }

    /// The same GPUs, run inline (deterministic).
    pub fn inline(mut self) -> Self {
        self.mode = ExecMode::Inline;
        self
    }
}
