//! What the whole-stack tests share: the mock platform of either transport, and a
//! macro that runs the same test body over both.

#![allow(dead_code)]

use std::sync::Arc;

use amd_hcq::{Buffer, BufferKind, Device, Iface, Platform, QueueFormat};
use amd_mockgpu::{MockConfig, MockSys, QueueStatus};

/// A committed test kernel's builds for the two targets the mock runs kernels of.
#[derive(Clone, Copy)]
pub struct Kernel {
    /// `tests/kernels/NAME.hsaco`.
    pub gfx1100: &'static [u8],
    /// `tests/kernels/gfx1201/NAME.hsaco`.
    pub gfx1201: &'static [u8],
}

impl Kernel {
    /// The build for `t`'s GPU.
    pub fn of(&self, t: Transport) -> &'static [u8] {
        match t.target() {
            "gfx1201" => self.gfx1201,
            _ => self.gfx1100,
        }
    }
}

macro_rules! builds {
    ($name:literal) => {
        Kernel {
            gfx1100: include_bytes!(concat!("../../../../tests/kernels/", $name, ".hsaco")),
            gfx1201: include_bytes!(concat!("../../../../tests/kernels/gfx1201/", $name, ".hsaco")),
        }
    };
}

/// The `args` kernel.
pub const ARGS: Kernel = builds!("args");
/// The `dims3d` kernel.
pub const DIMS3D: Kernel = builds!("dims3d");
/// The `grid3d` kernel.
pub const GRID3D: Kernel = builds!("grid3d");
/// The `private_o0` kernel (`private_O0.hsaco`).
pub const PRIVATE_O0: Kernel = builds!("private_O0");
/// The `saxpy` kernel.
pub const SAXPY: Kernel = builds!("saxpy");
/// The `spin` kernel.
pub const SPIN: Kernel = builds!("spin");
/// The `vadd` kernel.
pub const VADD: Kernel = builds!("vadd");

/// Which transport a test runs over, and on which GPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// `/dev/kfd` of the mock's KFD GPUs (gfx1100).
    Kfd,
    /// The driverless transport on the mock's PCI GPUs (7900 XTX), booted by amd-am
    /// with the mock's synthetic firmware.
    Pci,
    /// `/dev/kfd` of the mock's KFD GPUs with AQL compute queues.
    KfdAql,
    /// `/dev/kfd` of the mock's gfx1201 KFD GPUs (RX 9070 XT; the RDNA4 interpreter).
    KfdGfx1201,
    /// The driverless transport on the mock's gfx1201 PCI GPUs.
    PciGfx1201,
}

impl Transport {
    /// Whether the GPUs are the mock's PCI GPUs, driverless.
    pub fn is_pci(self) -> bool {
        matches!(self, Transport::Pci | Transport::PciGfx1201)
    }

    /// The GPUs' target.
    pub fn target(self) -> &'static str {
        match self {
            Transport::KfdGfx1201 | Transport::PciGfx1201 => "gfx1201",
            _ => "gfx1100",
        }
    }
}

/// A mock with `n` GPUs and the platform over them.
pub fn platform(t: Transport, n: usize) -> (Arc<MockSys>, Platform) {
    platform_with(t, n, |c| c)
}

/// [`platform`], with `adjust` changing the mock's configuration first.
pub fn platform_with(
    t: Transport,
    n: usize,
    adjust: impl FnOnce(MockConfig) -> MockConfig,
) -> (Arc<MockSys>, Platform) {
    match t {
        Transport::Kfd | Transport::KfdAql | Transport::KfdGfx1201 => {
            let config = if t == Transport::KfdGfx1201 {
                MockConfig::named("gfx1201", n).expect("the gfx1201 profile")
            } else {
                MockConfig::gfx1100s(n)
            };
            let m = Arc::new(MockSys::new(adjust(config)));
            let format = if t == Transport::KfdAql {
                QueueFormat::Aql
            } else {
                QueueFormat::Pm4
            };
            let p = Platform::with_sys(m.clone(), Iface::Mock)
                .unwrap()
                .with_queue_format(format);
            (m, p)
        }
        Transport::Pci | Transport::PciGfx1201 => {
            let config = if t == Transport::PciGfx1201 {
                MockConfig::named_pci("gfx1201", n).expect("the gfx1201 PCI profile")
            } else {
                MockConfig::pci(n)
            };
            let m = Arc::new(MockSys::new(adjust(config)));
            let p = Platform::mock_pci_with(m.clone()).unwrap();
            (m, p)
        }
    }
}

/// `rand_u32(n, seed)`: `n` pseudo-random words (xorshift32).
pub fn rand_u32(n: usize, seed: u32) -> Vec<u32> {
    let mut x = seed | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x
        })
        .collect()
}

/// `pattern(n, seed)`: `n` pseudo-random bytes (the low bytes of [`rand_u32`]).
pub fn pattern(n: usize, seed: u32) -> Vec<u8> {
    rand_u32(n, seed).into_iter().map(|x| x as u8).collect()
}

/// A device buffer holding `words` (at least 4 bytes, for an empty slice).
/// What the `private_array` kernel writes for the indices `idx`: element `i` builds a
/// 40-entry table in scratch (`k² + i`), bumps entry `(j·7) % 40` by `j` (`j = idx[i] %
/// 40`) and sums entries `j` and `j + 3`.
pub fn private_array_expected(idx: &[u32]) -> Vec<u32> {
    idx.iter()
        .enumerate()
        .map(|(i, &x)| {
            let mut tbl: Vec<u32> = (0..40u32).map(|k| k * k + i as u32).collect();
            let j = (x % 40) as usize;
            tbl[(j * 7) % 40] += j as u32;
            tbl[j] + tbl[(j + 3) % 40]
        })
        .collect()
}

pub fn upload(dev: &Device, words: &[u32]) -> Buffer {
    let b = dev.alloc(words.len().max(1) * 4, BufferKind::Device).unwrap();
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    dev.copy_in(&b, 0, &bytes).unwrap();
    b
}

/// The first `n` words of `b`.
pub fn download(dev: &Device, b: &Buffer, n: usize) -> Vec<u32> {
    let mut out = vec![0u8; n * 4];
    dev.copy_out(&mut out, b, 0).unwrap();
    out.chunks(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// Why the mock stopped its queues (an instruction the interpreter lacks, a fault),
/// for failure messages: a runtime error only sums that up.
pub fn stop_reasons(m: &MockSys) -> Vec<String> {
    m.queues()
        .into_iter()
        .filter_map(|q| m.queue_state(q.id))
        .filter_map(|st| match st.status {
            QueueStatus::Error(msg) => Some(msg),
            QueueStatus::Faulted(f) => Some(format!("memory fault at {:#x}", f.va)),
            _ => None,
        })
        .collect()
}

/// A committed test kernel built at -O2 and at -O0 (which keeps values in scratch and
/// runs unoptimised code), for gfx1100, gfx1201 and gfx942; `kernel!(rdna "name")`
/// for the kernels built for RDNA only (wave32 or WMMA kernels: `tests/kernels`'
/// `// wave32 only` and `// rdna only` markers); `kernel!(in "folder" for "target"
/// "name")` for the two builds of a kernel built for one target (`// targets:`,
/// `// wave64 only`).
#[macro_export]
macro_rules! kernel {
    (in $folder:literal for $target:literal $name:literal) => {
        [
            (
                $target,
                &include_bytes!(concat!("../../../tests/kernels/", $folder, "/", $name, ".hsaco"))[..],
            ),
            (
                $target,
                &include_bytes!(concat!("../../../tests/kernels/", $folder, "/", $name, "_O0.hsaco"))[..],
            ),
        ]
    };
    ($name:literal) => {{
        let mut builds = kernel!(rdna $name).to_vec();
        builds.extend([
            (
                "gfx942",
                &include_bytes!(concat!("../../../tests/kernels/gfx942/", $name, ".hsaco"))[..],
            ),
            (
                "gfx942",
                &include_bytes!(concat!("../../../tests/kernels/gfx942/", $name, "_O0.hsaco"))[..],
            ),
        ]);
        builds
    }};
    (rdna $name:literal) => {
        [
            (
                "gfx1100",
                &include_bytes!(concat!("../../../tests/kernels/", $name, ".hsaco"))[..],
            ),
            (
                "gfx1100",
                &include_bytes!(concat!("../../../tests/kernels/", $name, "_O0.hsaco"))[..],
            ),
            (
                "gfx1201",
                &include_bytes!(concat!("../../../tests/kernels/gfx1201/", $name, ".hsaco"))[..],
            ),
            (
                "gfx1201",
                &include_bytes!(concat!("../../../tests/kernels/gfx1201/", $name, "_O0.hsaco"))[..],
            ),
        ]
    };
}

/// Runs each named `fn name(t: Transport)` of the file as a test `module::name` on
/// transport `t`.
#[macro_export]
macro_rules! on_transport {
    ($module:ident, $t:ident, $($name:ident),+) => {
        mod $module {
            $(
                #[test]
                fn $name() {
                    super::$name(super::common::Transport::$t)
                }
            )+
        }
    };
}

/// Runs each named `fn name(t: Transport)` of the file as two tests,
/// `kfd::name` and `pci::name`.
#[macro_export]
macro_rules! on_both_transports {
    ($($name:ident),+ $(,)?) => {
        on_transport!(kfd, Kfd, $($name),+);
        on_transport!(pci, Pci, $($name),+);
    };
}

/// Runs each test body over both transports and, on KFD, both compute queue formats
/// (modules `kfd`, `pci`, `kfd_aql`), on gfx1100 GPUs.
#[macro_export]
macro_rules! on_every_queue {
    ($($name:ident),+ $(,)?) => {
        on_both_transports!($($name),+);
        on_transport!(kfd_aql, KfdAql, $($name),+);
    };
}

/// [`on_every_queue!`], and the same bodies on gfx1201 GPUs over both transports
/// (modules `gfx1201_kfd`, `gfx1201_pci`; the kernels' gfx1201 builds).
#[macro_export]
macro_rules! on_every_queue_and_target {
    ($($name:ident),+ $(,)?) => {
        on_every_queue!($($name),+);
        on_transport!(gfx1201_kfd, KfdGfx1201, $($name),+);
        on_transport!(gfx1201_pci, PciGfx1201, $($name),+);
    };
}
