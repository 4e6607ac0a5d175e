//! The GMC against the mock PCI GPU's MMU: VRAM and host memory mapped as tinygrad
//! 0.10.1 maps them, translated by the mock's walker; fragments, unmapping, TLB
//! flushes and faults read back from the fault status registers.

use std::path::Path;
use std::sync::Arc;

use amd_am::gmc::{ADDRESS_SPACE_MASK, ENTRY_ADDR_MASK, Gmc, Hub, MIN_VRAM, MapFlags, PAGE, VA_BASE, VA_SIZE};
use amd_am::ip::AmDevice;
use amd_am::pci::{PciBus, PciOptions};
use amd_am::psp::Psp;
use amd_am::{AmError, HostProblem, MapProblem};
use amd_kfd::sys::{Fd, ForwardSys, MapFlags as MmapFlags, Prot, Sys};
use amd_mockgpu::pci::PciProfile;
use amd_mockgpu::pci::gmc::{Access, Hub as MockHub, Target};
use amd_mockgpu::{MockConfig, MockSys};
use parking_lot::Mutex;

fn device() -> (Arc<MockSys>, AmDevice) {
    let m = Arc::new(MockSys::new(MockConfig::pci(1)));
    let mut bus = PciBus::scan(m.clone() as Arc<dyn Sys>, &PciOptions::default()).unwrap();
    let dev = AmDevice::new(bus.open(0).unwrap()).unwrap();
    (m, dev)
}

/// What a hostile `/proc/self/pagemap` gives for a read of `len` bytes: the bytes
/// read, filled into the buffer.
type PagemapFake = Box<dyn Fn(&mut [u8]) -> usize + Send + Sync>;

/// The pagemap descriptor opened through [`pagemap_sys`], and the fake its reads go to
/// once one is set.
#[derive(Default)]
struct Pagemap {
    fd: Mutex<Option<Fd>>,
    fake: Mutex<Option<PagemapFake>>,
}

/// The mock, except that reads of `/proc/self/pagemap` go to the returned state's
/// `fake` once it is set.
fn pagemap_sys(mock: Arc<MockSys>) -> (Arc<Pagemap>, Arc<dyn Sys>) {
    let state = Arc::new(Pagemap::default());
    let (opened, read) = (state.clone(), state.clone());
    let sys = ForwardSys::new(mock)
        .on_open(move |s, path, mode| {
            let fd = s.open(path, mode)?;
            if path == Path::new("/proc/self/pagemap") {
                *opened.fd.lock() = Some(fd);
            }
            Ok(fd)
        })
        .on_pread(move |s, fd, buf, offset| {
            if *read.fd.lock() == Some(fd)
                && let Some(fake) = &*read.fake.lock()
            {
                return Ok(fake(buf));
            }
            s.pread(fd, buf, offset)
        });
    (state, Arc::new(sys))
}

/// The problem `map_host(host, len)` is refused with (the error names the range).
fn refused(g: &mut Gmc<'_>, host: u64, len: u64) -> HostProblem {
    match g.map_host(host, len).unwrap_err() {
        AmError::MapHost {
            host: h,
            len: l,
            problem,
        } if (h, l) == (host, len) => problem,
        e => panic!("{e}"),
    }
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
    // Mapping over it again is refused, naming the 2 MiB leaf in the way, and
    // changes nothing: a 2 MiB range meets the leaf's own entry, a page inside it
    // meets the leaf on the way down.
    for (at, size) in [(map.va, 2 << 20), (map.va + PAGE, PAGE)] {
        let e = g.map_range(at, &[(0, size)], MapFlags::default()).unwrap_err();
        let AmError::MapRange {
            op: "map_range",
            va,
            size: s,
            problem:
                MapProblem::AlreadyMapped {
                    at: found,
                    page_size,
                    entry,
                },
        } = e
        else {
            panic!("{e}");
        };
        assert_eq!((va, s, found, page_size), (at, size, at, 2 << 20), "{e}");
        assert_eq!(entry & ENTRY_ADDR_MASK, map.paddrs[0].0, "{e}");
        assert!(e.to_string().contains("already mapped by a 0x200000-byte page"), "{e}");
    }
    let t = m.pci_translate(0, MockHub::Gc, map.va, Access::Read).unwrap();
    assert_eq!(t, Ok(Target::Vram(map.paddrs[0].0)));
    // A 4 KiB page after the leaf: its own entry is taken.
    let tail = map.va + (2 << 20);
    let e = g.map_range(tail, &[(0, PAGE)], MapFlags::default()).unwrap_err();
    assert!(
        matches!(
            e,
            AmError::MapRange {
                problem: MapProblem::AlreadyMapped { at, page_size: PAGE, .. },
                ..
            } if at == tail
        ),
        "{e}"
    );
}

#[test]
fn bad_ranges_are_refused_naming_the_range_and_the_problem() {
    let (m, dev) = device();
    let mut g = booted(&dev);
    let vram = dev.vram_size();
    let map = |g: &mut Gmc<'_>, va, paddrs: &[(u64, u64)], flags| g.map_range(va, paddrs, flags).unwrap_err();
    let err = |va, size, problem| AmError::MapRange {
        op: "map_range",
        va,
        size,
        problem,
    };
    let vram_flags = MapFlags::default();
    let system = MapFlags {
        system: true,
        ..MapFlags::default()
    };
    assert_eq!(
        map(&mut g, VA_BASE, &[(0, u64::MAX - PAGE + 1), (0, 2 * PAGE)], system),
        err(VA_BASE, u64::MAX, MapProblem::Overflow),
        "the pieces' sizes overflow"
    );
    assert_eq!(
        map(&mut g, u64::MAX - PAGE + 1, &[(0, 2 * PAGE)], vram_flags),
        err(u64::MAX - PAGE + 1, 2 * PAGE, MapProblem::Overflow)
    );
    assert_eq!(
        map(&mut g, VA_BASE, &[], vram_flags),
        err(VA_BASE, 0, MapProblem::Empty { page: PAGE })
    );
    assert_eq!(
        map(&mut g, VA_BASE + 1, &[(0, PAGE)], vram_flags),
        err(VA_BASE + 1, PAGE, MapProblem::Misaligned { align: PAGE })
    );
    assert_eq!(
        map(&mut g, VA_BASE, &[(0, 0x800)], vram_flags),
        err(VA_BASE, 0x800, MapProblem::Misaligned { align: PAGE })
    );
    let outside = MapProblem::OutsideAperture {
        base: VA_BASE,
        end: VA_BASE + VA_SIZE,
    };
    assert_eq!(
        map(&mut g, VA_BASE - PAGE, &[(0, PAGE)], vram_flags),
        err(VA_BASE - PAGE, PAGE, outside)
    );
    assert_eq!(
        map(&mut g, VA_BASE + VA_SIZE - PAGE, &[(0, 2 * PAGE)], vram_flags),
        err(VA_BASE + VA_SIZE - PAGE, 2 * PAGE, outside)
    );
    assert_eq!(
        map(&mut g, VA_BASE, &[(0x10, PAGE)], vram_flags),
        err(
            VA_BASE,
            PAGE,
            MapProblem::PhysicalMisaligned {
                paddr: 0x10,
                len: PAGE,
                align: PAGE
            }
        )
    );
    assert_eq!(
        map(&mut g, VA_BASE, &[(0, PAGE), (PAGE, 0)], vram_flags),
        err(
            VA_BASE,
            PAGE,
            MapProblem::PhysicalMisaligned {
                paddr: PAGE,
                len: 0,
                align: PAGE
            }
        ),
        "an empty piece"
    );
    let top = ADDRESS_SPACE_MASK + 1;
    for paddr in [top, u64::MAX - PAGE + 1] {
        assert_eq!(
            map(&mut g, VA_BASE, &[(paddr, PAGE)], system),
            err(
                VA_BASE,
                PAGE,
                MapProblem::PastAddressSpace {
                    paddr,
                    len: PAGE,
                    limit: top
                }
            )
        );
    }
    let e = map(&mut g, VA_BASE, &[(vram - PAGE, 2 * PAGE)], vram_flags);
    assert_eq!(
        e,
        err(
            VA_BASE,
            2 * PAGE,
            MapProblem::PastVram {
                paddr: vram - PAGE,
                len: 2 * PAGE,
                vram_size: vram
            }
        )
    );
    assert!(
        e.to_string().contains("MapFlags::system") && e.to_string().starts_with("map_range of 0x2000 bytes at"),
        "{e}"
    );
    // Nothing was written: the aperture's start is still unmapped.
    assert!(m.pci_translate(0, MockHub::Gc, VA_BASE, Access::Read).unwrap().is_err());

    // Unmapping: the same checks on the range, then every page mapped, by leaves
    // wholly inside it.
    assert_eq!(
        g.unmap_range(VA_BASE + 0x10, PAGE).unwrap_err(),
        AmError::MapRange {
            op: "unmap_range",
            va: VA_BASE + 0x10,
            size: PAGE,
            problem: MapProblem::Misaligned { align: PAGE }
        }
    );
    let two = g.valloc(2 * PAGE, true, false).unwrap();
    let e = g.unmap_range(two.va, 3 * PAGE).unwrap_err();
    assert_eq!(
        e,
        AmError::MapRange {
            op: "unmap_range",
            va: two.va,
            size: 3 * PAGE,
            problem: MapProblem::NotMapped { at: two.va + 2 * PAGE }
        }
    );
    assert!(
        e.to_string()
            .ends_with("is not mapped: unmap only what map_range mapped"),
        "{e}"
    );
    // Refused before anything is cleared.
    assert!(m.pci_translate(0, MockHub::Gc, two.va, Access::Read).unwrap().is_ok());
    g.vfree(&two).unwrap();
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
    for (at, size) in [(va, 2 << 20), (va + (2 << 20), 2 << 20)] {
        assert_eq!(
            g.unmap_range(at, size).unwrap_err(),
            AmError::MapRange {
                op: "unmap_range",
                va: at,
                size,
                problem: MapProblem::CutsPage { at, page_size: 1 << 30 }
            }
        );
    }
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
    assert_eq!(
        g.unmap_range(map.va, PAGE).unwrap_err(),
        AmError::MapRange {
            op: "unmap_range",
            va: map.va,
            size: PAGE,
            problem: MapProblem::NotMapped { at: map.va }
        }
    );
    assert_eq!(
        g.unmap_range(VA_BASE - PAGE, PAGE).unwrap_err(),
        AmError::MapRange {
            op: "unmap_range",
            va: VA_BASE - PAGE,
            size: PAGE,
            problem: MapProblem::OutsideAperture {
                base: VA_BASE,
                end: VA_BASE + VA_SIZE
            }
        }
    );
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
    let e = g.map_host(0x1000, PAGE).unwrap_err();
    let AmError::MapHost {
        host: 0x1000,
        len: PAGE,
        problem: HostProblem::NoFrame { page: 0x1000, entry },
    } = e
    else {
        panic!("{e}");
    };
    assert_eq!(entry >> 63, 0, "not present");
    assert!(e.to_string().contains("CAP_SYS_ADMIN"), "{e}");
    // Ranges that are not whole pages.
    for (host, len) in [
        (a as u64 + 8, PAGE),
        (a as u64, PAGE + 8),
        (a as u64, 0),
        (u64::MAX - PAGE + 1, 2 * PAGE),
    ] {
        assert_eq!(refused(&mut g, host, len), HostProblem::NotPages { align: PAGE });
    }
}

#[test]
fn a_hostile_pagemap_is_refused() {
    let mock = Arc::new(MockSys::new(MockConfig::pci(1)));
    let (pagemap, sys) = pagemap_sys(mock);
    let mut bus = PciBus::scan(sys, &PciOptions::default()).unwrap();
    let dev = AmDevice::new(bus.open(0).unwrap()).unwrap();
    let mut g = booted(&dev);
    let host = 0x10_0000u64;
    // A short read.
    *pagemap.fake.lock() = Some(Box::new(|b: &mut [u8]| b.len() - 8));
    assert_eq!(
        refused(&mut g, host, 3 * PAGE),
        HostProblem::ShortPagemap { got: 16, wanted: 24 }
    );
    // Present, with the largest frame number: its bus address passes 64 bits.
    let huge = (1u64 << 63) | ((1 << 55) - 1);
    *pagemap.fake.lock() = Some(Box::new(move |b: &mut [u8]| {
        for c in b.chunks_exact_mut(8) {
            c.copy_from_slice(&huge.to_ne_bytes());
        }
        b.len()
    }));
    assert_eq!(
        refused(&mut g, host, PAGE),
        HostProblem::FrameOverflow {
            page: host,
            entry: huge
        }
    );
    // The highest frame whose address fits: the mapping is refused as past the
    // 44-bit space, no sum overflows.
    let last = (1u64 << 63) | ((u64::MAX >> 12) & ((1 << 55) - 1));
    *pagemap.fake.lock() = Some(Box::new(move |b: &mut [u8]| {
        for c in b.chunks_exact_mut(8) {
            c.copy_from_slice(&last.to_ne_bytes());
        }
        b.len()
    }));
    let e = g.map_host(host, 2 * PAGE).unwrap_err();
    assert!(
        matches!(
            e,
            AmError::MapRange {
                op: "map_range",
                problem: MapProblem::PastAddressSpace { .. },
                ..
            }
        ),
        "{e}"
    );
    // 513 pages are read as 512 entries, then 1; the second read gives nothing.
    let calls = Arc::new(Mutex::new(Vec::new()));
    let seen = calls.clone();
    *pagemap.fake.lock() = Some(Box::new(move |b: &mut [u8]| {
        let mut seen = seen.lock();
        seen.push(b.len());
        if seen.len() > 1 {
            return 0;
        }
        for (i, c) in b.chunks_exact_mut(8).enumerate() {
            c.copy_from_slice(&((1u64 << 63) | (0x100 + i as u64)).to_ne_bytes());
        }
        b.len()
    }));
    assert_eq!(
        refused(&mut g, host, 513 * PAGE),
        HostProblem::ShortPagemap { got: 0, wanted: 8 }
    );
    assert_eq!(*calls.lock(), [4096, 8]);
}

#[test]
fn allocators_refuse_what_does_not_fit() {
    let (_m, dev) = device();
    let mut g = Gmc::new(&dev).unwrap();
    let e = g.palloc(PAGE, PAGE, true, false).unwrap_err();
    assert_eq!(e, AmError::AllocPhase { boot: false }, "main memory during the boot");
    assert!(e.to_string().contains("pass boot = true"), "{e}");
    g.booting = false;
    let e = g.palloc(PAGE, PAGE, true, true).unwrap_err();
    assert_eq!(e, AmError::AllocPhase { boot: true }, "boot memory after the boot");
    assert!(e.to_string().contains("pass boot = false"), "{e}");
    let free = g.allocators().0.free_bytes();
    assert_eq!(
        g.palloc(1 << 40, PAGE, false, false).unwrap_err(),
        AmError::OutOfMemory {
            allocator: "VRAM",
            size: 1 << 40,
            align: PAGE,
            free
        }
    );
    for size in [0, u64::MAX] {
        assert_eq!(
            g.palloc(size, PAGE, false, false).unwrap_err(),
            AmError::AllocSize { op: "palloc", size }
        );
        assert_eq!(
            g.valloc(size, false, false).unwrap_err(),
            AmError::AllocSize { op: "valloc", size }
        );
    }
    for align in [0, 3, 0x1800] {
        let e = g.palloc(PAGE, align, false, false).unwrap_err();
        assert_eq!(e, AmError::AllocAlign { op: "palloc", align });
        assert!(
            e.to_string().ends_with("is not a power of two: pass a power of two"),
            "{e}"
        );
    }
    assert_eq!(
        g.pfree(0x1234_5000).unwrap_err(),
        AmError::NotAllocated {
            op: "pfree",
            paddr: 0x1234_5000
        }
    );
    let a = g.palloc(PAGE, 1 << 20, false, false).unwrap();
    assert_eq!(a % (1 << 20), 0);
    g.pfree(a).unwrap();
    assert_eq!(
        g.pfree(a).unwrap_err(),
        AmError::NotAllocated { op: "pfree", paddr: a },
        "freed twice"
    );
    // A VRAM offset whose memory-controller address passes 64 bits.
    let mc_base = g.mc_base();
    assert_ne!(mc_base, 0, "the mock places VRAM above 0");
    assert_eq!(
        g.mc(u64::MAX).unwrap_err(),
        AmError::McOverflow {
            mc_base,
            offset: u64::MAX
        }
    );
    assert_eq!(g.mc(0x1000).unwrap(), mc_base + 0x1000);
}

#[test]
fn too_little_vram_is_refused_naming_the_size_and_the_least() {
    for (mib, psp_fits) in [(64u64, true), (32, false)] {
        let m = Arc::new(MockSys::new(MockConfig {
            pci: vec![PciProfile::navi31().with_vram(mib << 20)],
            ..MockConfig::pci(0)
        }));
        let mut bus = PciBus::scan(m.clone() as Arc<dyn Sys>, &PciOptions::default()).unwrap();
        let dev = AmDevice::new(bus.open(0).unwrap()).unwrap();
        let e = Gmc::new(&dev).unwrap_err();
        assert_eq!(
            e,
            AmError::VramTooSmall {
                vram_size: mib << 20,
                min: MIN_VRAM,
                what: "the 64 MiB kept at the top and the main allocator"
            }
        );
        assert!(e.to_string().contains(&format!("({mib} MiB)")), "{e}");
        let psp = Psp::new(&dev);
        assert_eq!(psp.is_ok(), psp_fits, "{mib} MiB");
        if let Err(e) = psp {
            assert_eq!(
                e,
                AmError::VramTooSmall {
                    vram_size: mib << 20,
                    min: MIN_VRAM,
                    what: "the PSP's buffers in the boot region"
                }
            );
        }
    }
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
