//! The GMC against the mock PCI GPU's MMU: VRAM and host memory mapped as tinygrad
//! 0.10.1 maps them, translated by the mock's walker; fragments, unmapping, TLB
//! flushes and faults read back from the fault status registers.

use std::sync::Arc;

use amd_am::AmError;
use amd_am::gmc::{Gmc, Hub, MapFlags, PAGE, VA_BASE};
use amd_am::ip::AmDevice;
use amd_am::pci::{PciBus, PciOptions};
use amd_kfd::sys::{MapFlags as MmapFlags, Prot, Sys};
use amd_mockgpu::pci::gmc::{Access, Hub as MockHub, Target};
use amd_mockgpu::{MockConfig, MockSys};

fn device() -> (Arc<MockSys>, AmDevice) {
    let m = Arc::new(MockSys::new(MockConfig::pci(1)));
    let mut bus = PciBus::scan(m.clone() as Arc<dyn Sys>, &PciOptions::default()).unwrap();
    let dev = AmDevice::new(bus.open(0).unwrap()).unwrap();
    (m, dev)
}

fn booted(dev: &AmDevice) -> Gmc<'_> {
    let mut g = Gmc::new(dev).unwrap();
    g.init_hub(Hub::Mm).unwrap();
    g.init_hub(Hub::Gc).unwrap();
    g.booting = false;
    g
}

#[test]
fn vram_mappings_translate_through_both_hubs() {
    let (m, dev) = device();
    let mut g = booted(&dev);
    // 2 MiB + 8 KiB: one 2 MiB leaf (fragment 9) and two 4 KiB pages.
    let map = g.valloc((2 << 20) + 2 * PAGE, false, false).unwrap();
    assert_eq!(map.va % (2 << 20), 0);
    assert_eq!(map.paddrs.len(), 3, "{:?}", map.paddrs);
    assert_eq!(map.paddrs[0].1, 2 << 20);
    assert_eq!(map.paddrs[0].0 % (2 << 20), 0, "the 2 MiB block is aligned");
    let mut off = 0;
    for &(p, s) in &map.paddrs {
        for probe in [0, s / 2 + 8, s - 4] {
            for hub in [MockHub::Gc, MockHub::Mm] {
                let t = m.pci_translate(0, hub, map.va + off + probe, Access::Write).unwrap();
                assert_eq!(t, Ok(Target::Vram(p + probe)), "va {:#x}", map.va + off + probe);
            }
        }
        off += s;
    }
    assert!(g.flushes[0] >= 1 && g.flushes[1] >= 1);
    // Mapping over it again is refused and changes nothing.
    let e = g.map_range(map.va, &[(0, PAGE)], MapFlags::default()).unwrap_err();
    assert!(matches!(e, AmError::Memory { op: "map_range", .. }), "{e}");
    let t = m.pci_translate(0, MockHub::Gc, map.va, Access::Read).unwrap();
    assert_eq!(t, Ok(Target::Vram(map.paddrs[0].0)));
}

#[test]
fn a_gib_aligned_range_takes_one_1_gib_leaf() {
    let (m, dev) = device();
    let mut g = booted(&dev);
    let (va, pa) = (VA_BASE + (1 << 30), 1u64 << 40);
    let flags = MapFlags {
        system: true,
        ..MapFlags::default()
    };
    let map = g.map_range(va, &[(pa, 1 << 30)], flags).unwrap();
    let t = m.pci_translate(0, MockHub::Mm, va + 0x1234_5678, Access::Read).unwrap();
    assert_eq!(t, Ok(Target::System(pa + 0x1234_5678)));
    // The leaf sits in the root: cutting it is refused, the whole goes at once.
    assert!(g.unmap_range(va, 2 << 20).is_err());
    g.unmap_range(map.va, map.size).unwrap();
    assert!(m.pci_translate(0, MockHub::Mm, va, Access::Read).unwrap().is_err());
}

#[test]
fn unmapped_pages_fault_and_the_fault_reads_back() {
    let (m, dev) = device();
    let mut g = booted(&dev);
    let map = g.valloc(4 * PAGE, true, false).unwrap();
    let free_mapped = g.allocators().0.free_bytes();
    g.vfree(&map).unwrap();
    // The memory and the page tables that became empty are all back.
    let main = g.allocators().0.range().1;
    assert!(free_mapped < main - 4 * PAGE, "the tables came from main memory");
    assert_eq!(g.allocators().0.free_bytes(), main);
    assert_eq!(g.fault(Hub::Gc).unwrap(), None);
    let va = map.va + PAGE + 0x10;
    let r = m.pci_translate(0, MockHub::Gc, va, Access::Read).unwrap();
    assert!(r.is_err(), "{r:?}");
    let f = g.fault(Hub::Gc).unwrap().expect("a latched fault");
    assert_eq!(f.va, va & !(PAGE - 1));
    assert!(!f.write);
    assert!(f.permission_faults != 0 || f.mapping_error, "{f}");
    assert_eq!(g.fault(Hub::Mm).unwrap(), None);
    g.clear_fault(Hub::Gc).unwrap();
    assert_eq!(g.fault(Hub::Gc).unwrap(), None);
    // Unmapping what is not mapped is an error.
    assert!(g.unmap_range(map.va, PAGE).is_err());
    assert!(g.unmap_range(VA_BASE - PAGE, PAGE).is_err());
}

#[test]
fn host_pages_map_through_the_pagemap() {
    let (m, dev) = device();
    let mut g = booted(&dev);
    let len = 3 * PAGE as usize;
    // SAFETY: an anonymous mapping at an address the kernel (mock) chooses.
    let a = unsafe {
        m.mmap(
            0,
            len,
            Prot::ReadWrite,
            MmapFlags::SHARED.with(MmapFlags::ANONYMOUS),
            None,
            0,
        )
    }
    .unwrap();
    let map = g.map_host(a as u64, len as u64).unwrap();
    assert!(map.flags.system && map.flags.snooped);
    for i in 0..3u64 {
        let t = m
            .pci_translate(0, MockHub::Mm, map.va + i * PAGE + 4, Access::Read)
            .unwrap();
        assert_eq!(t, Ok(Target::Host(a + (i * PAGE + 4) as usize)));
    }
    // Memory the pagemap has no frame for is refused.
    assert!(g.map_host(0x1000, PAGE).is_err());
}

#[test]
fn allocators_refuse_what_does_not_fit() {
    let (_m, dev) = device();
    let mut g = Gmc::new(&dev).unwrap();
    assert!(
        g.palloc(PAGE, PAGE, true, false).is_err(),
        "main memory during the boot"
    );
    g.booting = false;
    assert!(g.palloc(1 << 40, PAGE, false, false).is_err());
    assert!(g.palloc(0, PAGE, false, false).is_err());
    assert!(g.pfree(0x1234_5000).is_err());
    let a = g.palloc(PAGE, 1 << 20, false, false).unwrap();
    assert_eq!(a % (1 << 20), 0);
    g.pfree(a).unwrap();
    assert!(
        g.map_range(VA_BASE, &[(dev.vram_size(), PAGE)], MapFlags::default())
            .is_err()
    );
    assert!(g.map_range(VA_BASE + 1, &[(0, PAGE)], MapFlags::default()).is_err());
}

mod property {
    use super::*;
    use proptest::prelude::*;

    fn start() -> impl Strategy<Value = u64> {
        // Page numbers in a 32 MiB window, often 2 MiB aligned so large leaves occur.
        prop_oneof![(0u64..16).prop_map(|x| x * 512), 0u64..8192]
    }

    fn translate(m: &MockSys, va: u64) -> Option<u64> {
        match m.pci_translate(0, MockHub::Gc, va, Access::Read).unwrap() {
            Ok(Target::Vram(p)) => Some(p),
            Ok(other) => panic!("{va:#x} -> {other:?}"),
            Err(_) => None,
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(16))]

        /// Random ranges map to exactly their pages, their neighbours stay
        /// unmapped, and unmapping leaves no entry and no table behind.
        #[test]
        fn random_ranges_map_exactly(ranges in prop::collection::vec((start(), 1u64..1100), 1..5)) {
            let (m, dev) = device();
            let mut g = booted(&dev);
            let free0 = g.allocators().0.free_bytes();
            // Keep the ranges that do not overlap an earlier one.
            let mut kept: Vec<(u64, u64)> = Vec::new();
            for (s, n) in ranges {
                if kept.iter().all(|&(ks, kn)| s + n <= ks || ks + kn <= s) {
                    kept.push((s, n));
                }
            }
            let inside = |p: u64, kept: &[(u64, u64)]| kept.iter().any(|&(s, n)| p >= s && p < s + n);
            let mut maps = Vec::new();
            for &(s, n) in &kept {
                let p = g.palloc(n * PAGE, 2 << 20, false, false).unwrap();
                let map = g.map_range(VA_BASE + s * PAGE, &[(p, n * PAGE)], MapFlags::default()).unwrap();
                maps.push((map, p));
            }
            for (map, p) in &maps {
                let n = map.size / PAGE;
                for i in [0, n / 2, n - 1] {
                    prop_assert_eq!(translate(&m, map.va + i * PAGE + 8), Some(p + i * PAGE + 8));
                }
                let first = (map.va - VA_BASE) / PAGE;
                for q in [first.wrapping_sub(1), first + n] {
                    if q < u64::MAX && !inside(q, &kept) {
                        prop_assert_eq!(translate(&m, VA_BASE + q * PAGE), None);
                    }
                }
            }
            for (map, p) in &maps {
                g.unmap_range(map.va, map.size).unwrap();
                g.pfree(*p).unwrap();
            }
            for (map, _) in &maps {
                let n = map.size / PAGE;
                for i in [0, n / 2, n - 1] {
                    prop_assert_eq!(translate(&m, map.va + i * PAGE), None);
                }
            }
            prop_assert_eq!(g.allocators().0.free_bytes(), free0, "every table freed");
            // The root holds no valid entry.
            let mut root = vec![0u8; PAGE as usize];
            prop_assert!(m.pci_read_vram(0, g.root(), &mut root));
            prop_assert!(root.chunks_exact(8).all(|e| e[0] & 1 == 0));
        }
    }
}
