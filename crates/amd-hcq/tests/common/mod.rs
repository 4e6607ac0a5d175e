//! What the whole-stack tests share: the mock platform of either transport, and a
//! macro that runs the same test body over both.

#![allow(dead_code)]

use std::sync::Arc;

use amd_hcq::{Buffer, BufferKind, Device, Iface, Platform, QueueFormat};
use amd_mockgpu::{MockConfig, MockSys, QueueStatus};

/// The `dims3d` kernel (`tests/kernels/dims3d.hsaco`).
pub const DIMS3D: &[u8] = include_bytes!("../../../../tests/kernels/dims3d.hsaco");
/// The `grid3d` kernel (`tests/kernels/grid3d.hsaco`).
pub const GRID3D: &[u8] = include_bytes!("../../../../tests/kernels/grid3d.hsaco");
/// The `private_o0` kernel (`tests/kernels/private_o0.hsaco`).
pub const PRIVATE_O0: &[u8] = include_bytes!("../../../../tests/kernels/private_O0.hsaco");
/// The `saxpy` kernel (`tests/kernels/saxpy.hsaco`).
pub const SAXPY: &[u8] = include_bytes!("../../../../tests/kernels/saxpy.hsaco");
/// The `spin` kernel (`tests/kernels/spin.hsaco`).
pub const SPIN: &[u8] = include_bytes!("../../../../tests/kernels/spin.hsaco");
/// The `vadd` kernel (`tests/kernels/vadd.hsaco`).
pub const VADD: &[u8] = include_bytes!("../../../../tests/kernels/vadd.hsaco");

/// Which transport a test runs over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// `/dev/kfd` of the mock's KFD GPUs (gfx1100).
    Kfd,
    /// The driverless transport on the mock's PCI GPUs (7900 XTX), booted by amd-am
    /// with the mock's synthetic firmware.
    Pci,
    /// `/dev/kfd` of the mock's KFD GPUs with AQL compute queues.
    KfdAql,
}

/// A mock with `n` GPUs and the platform over them.
pub fn platform(t: Transport, n: usize) -> (Arc<MockSys>, Platform) {
    match t {
        Transport::Kfd | Transport::KfdAql => {
            let m = Arc::new(MockSys::new(MockConfig::gfx1100s(n)));
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
        Transport::Pci => {
            let m = Arc::new(MockSys::new(MockConfig::pci(n)));
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
/// runs unoptimised code).
#[macro_export]
macro_rules! kernel {
    ($name:literal) => {
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

/// Runs each named `fn name(t: Transport)` of the file as two tests,
/// `kfd::name` and `pci::name`.
#[macro_export]
macro_rules! on_both_transports {
    ($($name:ident),+ $(,)?) => {
        mod kfd {
            $(
                #[test]
                fn $name() {
                    super::$name(super::common::Transport::Kfd)
                }
            )+
        }
        mod pci {
            $(
                #[test]
                fn $name() {
                    super::$name(super::common::Transport::Pci)
                }
            )+
        }
    };
}
/// Runs each test body over both transports and, on KFD, both compute queue formats
/// (modules `kfd`, `pci`, `kfd_aql`).
#[macro_export]
macro_rules! on_every_queue {
    ($($name:ident),+ $(,)?) => {
        on_both_transports!($($name),+);
        mod kfd_aql {
            $(
                #[test]
                fn $name() {
                    super::$name(super::common::Transport::KfdAql)
                }
            )+
        }
    };
}
