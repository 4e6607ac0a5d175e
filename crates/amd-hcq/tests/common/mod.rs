//! What the whole-stack tests share: the mock platform of either transport, and a
//! macro that runs the same test body over both.

#![allow(dead_code)]

use std::sync::Arc;

use amd_hcq::{Iface, Platform};
use amd_mockgpu::{MockConfig, MockSys};

/// Which transport a test runs over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// `/dev/kfd` of the mock's KFD GPUs (gfx1100).
    Kfd,
    /// The driverless transport on the mock's PCI GPUs (7900 XTX), booted by amd-am
    /// with the mock's synthetic firmware.
    Pci,
}

/// A mock with `n` GPUs and the platform over them.
pub fn platform(t: Transport, n: usize) -> (Arc<MockSys>, Platform) {
    match t {
        Transport::Kfd => {
            let m = Arc::new(MockSys::new(MockConfig::gfx1100s(n)));
            let p = Platform::with_sys(m.clone(), Iface::Mock).unwrap();
            (m, p)
        }
        Transport::Pci => {
            let m = Arc::new(MockSys::new(MockConfig::pci(n)));
            let p = Platform::mock_pci_with(m.clone()).unwrap();
            (m, p)
        }
    }
}

/// `pattern(n, seed)`: `n` pseudo-random bytes.
pub fn pattern(n: usize, seed: u32) -> Vec<u8> {
    let mut x = seed | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x as u8
        })
        .collect()
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
