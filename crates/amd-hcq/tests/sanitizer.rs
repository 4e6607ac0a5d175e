//! The mock's sanitizer (`MockConfig::sanitize`, `AMD_MOCK_SANITIZE=1`) under the
//! runtime: a kernel's read of VRAM nothing wrote, a kernel running off a buffer's
//! end, a kernel reaching freed memory — each stops the device with a fault whose
//! report names the byte and the allocation; work that reads only what it wrote runs
//! as without it. On PM4 and AQL queues and on RDNA3 and RDNA4 alike: the sanitizer
//! is the memory layer's, below every engine and interpreter. The interpreters add
//! what only they see: an LDS access outside the workgroup's allocation, a private
//! (scratch) access past the lane's share of COMPUTE_TMPRING_SIZE.
#![cfg(feature = "mock")]

mod common;

use std::sync::Arc;

use amd_hcq::{Buffer, BufferKind, HcqError, KernArgs, LaunchDims, Platform, Program};
use amd_mockgpu::{MockConfig, MockSys, SANITIZER_GUARD_BYTES};
use common::{Transport, VADD, platform_with};

/// A mock of `t`'s GPU with the sanitizer on, and a platform on it.
fn sanitized(t: Transport) -> (Arc<MockSys>, Platform) {
    platform_with(t, 1, |c| MockConfig { sanitize: true, ..c })
}

/// Workgroups of 256 threads, `groups` of them.
fn groups(groups: u32) -> LaunchDims {
    LaunchDims {
        global: [groups, 1, 1],
        local: [256, 1, 1],
    }
}

/// The report of a device fault (anything else fails the test).
fn fault_report<T: std::fmt::Debug>(r: Result<T, HcqError>) -> Vec<String> {
    match r {
        Err(HcqError::DeviceFault { report, .. }) => report,
        other => panic!("expected a device fault, got {other:?}"),
    }
}

/// `vadd` reads `b` past what was copied into it: the first byte nothing wrote is
/// where the device stops; once filled, the same launch computes the right sums.
fn a_read_of_vram_nothing_wrote_stops_at_its_first_byte(t: Transport) {
    let n = 256usize;
    let (_m, p) = sanitized(t);
    let dev = p.device(0).unwrap();
    let prg = Program::load(&dev, VADD.of(t), "vadd").unwrap();
    let [a, b, c]: [Buffer; 3] = std::array::from_fn(|_| dev.alloc(n * 4, BufferKind::Device).unwrap());
    let xs: Vec<f32> = (0..n).map(|i| i as f32).collect();
    dev.copy_in_slice(&a, 0, &xs).unwrap();
    // The last wave's 32 elements of `b` are never written.
    dev.copy_in_slice(&b, 0, &xs[..n - 32]).unwrap();
    let report = fault_report(prg.launch_timed(&[&a, &b, &c], &[n as u32], groups(1)));
    let at = b.va() + (n as u64 - 32) * 4;
    let want = format!("the sanitizer stopped a read of {at:#x} in kernel");
    let byte = format!(
        "byte {:#x} of the 4096-byte VRAM allocation at {:#x}, which nothing has written",
        (n - 32) * 4,
        b.va()
    );
    assert!(
        report.iter().any(|l| l.contains(&want) && l.contains(&byte)),
        "{report:?}"
    );

    // A fresh device: written first (a copy, a fill), read after.
    drop((a, b, c, prg, dev, p));
    let (_m, p) = sanitized(t);
    let dev = p.device(0).unwrap();
    let prg = Program::load(&dev, VADD.of(t), "vadd").unwrap();
    let [a, b, c]: [Buffer; 3] = std::array::from_fn(|_| dev.alloc(n * 4, BufferKind::Device).unwrap());
    dev.copy_in_slice(&a, 0, &xs).unwrap();
    dev.fill(&b, 0, n * 4, 2.5f32.to_bits()).unwrap();
    prg.launch_timed(&[&a, &b, &c], &[n as u32], groups(1)).unwrap();
    let got = dev.copy_out_vec::<f32>(&c, 0, n).unwrap();
    assert!(got.iter().enumerate().all(|(i, &v)| v == i as f32 + 2.5), "{got:?}");
}

/// `vadd` told `n` one workgroup larger than its buffers: the overrun lands in the
/// gap the sanitizer leaves after every reservation (no neighbour is reached), and
/// the report names the buffer it ran off.
fn running_off_a_buffer_faults_after_its_end(t: Transport) {
    let n = 1024usize; // 4096 bytes: the buffers have no slack past their last element
    let (_m, p) = sanitized(t);
    let dev = p.device(0).unwrap();
    let prg = Program::load(&dev, VADD.of(t), "vadd").unwrap();
    let bufs: Vec<Buffer> = (0..3).map(|_| dev.alloc(n * 4, BufferKind::Device).unwrap()).collect();
    for b in &bufs {
        dev.fill(b, 0, n * 4, 0).unwrap();
    }
    // No two buffers closer than a buffer and its guard.
    for (i, x) in bufs.iter().enumerate() {
        for y in &bufs[i + 1..] {
            let gap = x.va().abs_diff(y.va());
            assert!(
                gap >= (n * 4 + SANITIZER_GUARD_BYTES) as u64,
                "{:#x} {:#x}",
                x.va(),
                y.va()
            );
        }
    }
    let (a, b, c) = (&bufs[0], &bufs[1], &bufs[2]);
    let report = fault_report(prg.launch_timed(&[a, b, c], &[n as u32 + 256], groups(5)));
    // Whichever of the two loads the compiler put first.
    let found = [a, b].iter().any(|x| {
        let end = x.va() + n as u64 * 4;
        let head = format!("memory fault reading {end:#x} (page not present) in kernel");
        let tail = format!(
            "the first byte after the end of the 4096-byte VRAM allocation at {:#x}",
            x.va()
        );
        report.iter().any(|l| l.contains(&head) && l.contains(&tail))
    });
    assert!(found, "{report:?}");
}

/// A kernel given the address of a buffer that was freed: the report says so — after
/// buffers of the same size were allocated since, too: the runtime gives a freed
/// buffer back instead of keeping it for reuse, and the sanitizer's quarantine keeps
/// the freed address space from the next allocations (the kernel would give the same
/// address back, and the kernel's writes would land in the new buffer).
fn a_kernel_reaching_freed_memory_is_told_so(t: Transport) {
    let n = 256usize;
    let (_m, p) = sanitized(t);
    let dev = p.device(0).unwrap();
    let prg = Program::load(&dev, VADD.of(t), "vadd").unwrap();
    let a = dev.alloc(n * 4, BufferKind::Device).unwrap();
    let c = dev.alloc(n * 4, BufferKind::Device).unwrap();
    dev.fill(&a, 0, n * 4, 0).unwrap();
    let freed = dev.alloc(n * 4, BufferKind::Device).unwrap();
    let gone = freed.va();
    dev.synchronize().unwrap();
    // Dropped, a buffer goes back to the driver once the GPU is done with it: the
    // runtime keeps nothing for reuse where the sanitizer watches freed memory (a
    // cached buffer is still allocated, so a kernel reaching it would not fault).
    drop(freed);
    dev.synchronize().unwrap();
    assert_eq!(dev.memory_stats(), (0, 0), "nothing kept for reuse");
    assert_eq!(dev.release_cached_memory(), 0);
    let since: Vec<Buffer> = (0..8).map(|_| dev.alloc(n * 4, BufferKind::Device).unwrap()).collect();
    for b in &since {
        dev.fill(b, 0, n * 4, 7).unwrap();
        assert_ne!(b.va(), gone, "a new buffer at the freed one's address");
    }
    let args = KernArgs::new().buffer(&a).buffer_sym(gone).buffer(&c).u32(n as u32);
    let report = fault_report(prg.enqueue(&args, groups(1)).and_then(|v| dev.wait_timeline(v)));
    let want = format!("byte 0x0 of the 4096-byte VRAM allocation at {gone:#x}, freed before this access");
    assert!(report.iter().any(|l| l.contains(&want)), "{report:?}");
}

/// The kernel that reads a workgroup's LDS array at the indices a buffer gives, built
/// for `target`.
fn lds_index(target: &str) -> &'static [u8] {
    let builds = kernel!("lds_index");
    builds
        .iter()
        .find(|(t, _)| *t == target)
        .map(|&(_, elf)| elf)
        .expect("a build for the target")
}

/// `lds_index` reading its 256-entry LDS array at index 300 (byte 0x4b0 of its 1 KiB):
/// the sanitizer stops the dispatch naming the access and the instruction; indices
/// within the array run as without it.
fn an_lds_access_outside_the_allocation_is_stopped(t: Transport) {
    let (_m, p) = sanitized(t);
    lds_outside_stops(&p, t.target());
}

fn lds_outside_stops(p: &Platform, target: &str) {
    let want = "the sanitizer stopped an LDS 4-byte load at byte 0x4b0, outside the workgroup's 1024 bytes of LDS";
    let report = index_past_the_end(p, lds_index(target), "lds_index", 256, 300, target);
    assert!(
        report.iter().any(|r| r.contains(want) && r.contains(": ds_")),
        "{target}: {report:?}"
    );
}

/// Kernel `name` of `elf` (`out[i] = table[idx[i]]` over a `len`-entry table holding
/// `3 k + 1`) run on 512 indices within the table, checked, then with one index
/// (`bad`, in the second workgroup) past it: the device fault's report.
fn index_past_the_end(p: &Platform, elf: &[u8], name: &str, len: u32, bad: u32, target: &str) -> Vec<String> {
    let dev = p.device(0).unwrap();
    let prg = Program::load(&dev, elf, name).unwrap();
    let n = 512usize;
    let idx: Vec<u32> = (0..n as u32).map(|i| (i * 7) % len).collect();
    let (bi, out) = (
        dev.alloc(n * 4, BufferKind::Device).unwrap(),
        dev.alloc(n * 4, BufferKind::Device).unwrap(),
    );
    dev.copy_in_slice(&bi, 0, &idx).unwrap();
    prg.launch_timed(&[&bi, &out], &[], groups(2)).unwrap();
    let got = dev.copy_out_vec::<u32>(&out, 0, n).unwrap();
    assert!(got.iter().zip(&idx).all(|(&g, &i)| g == 3 * i + 1), "{target}: {got:?}");
    let mut past = idx.clone();
    past[300] = bad;
    dev.copy_in_slice(&bi, 0, &past).unwrap();
    fault_report(prg.launch_timed(&[&bi, &out], &[], groups(2)))
}

/// `private_index` reading its 64-entry private array at index 200 (byte 0x320 of the
/// lane's private memory, past the share COMPUTE_TMPRING_SIZE gives each lane): the
/// sanitizer stops the dispatch naming the access, the share and the instruction;
/// indices within the array run as without it. Built for `target` (`wave64`: gfx1100's
/// wave64 build, whose lanes the runtime gives twice a wave32 lane's bytes).
fn private_outside_stops(p: &Platform, target: &str) {
    let elf = match target {
        "wave64" => &include_bytes!("../../../tests/kernels/wave64/private_index.hsaco")[..],
        t => kernel!("private_index")
            .iter()
            .find(|(k, _)| *k == t)
            .map(|&(_, elf)| elf)
            .expect("a build for the target"),
    };
    let report = index_past_the_end(p, elf, "private_index", 64, 200, target);
    let want =
        "the sanitizer stopped a private (scratch) 4-byte load at byte 0x320 of a lane's private memory, past the";
    assert!(
        report
            .iter()
            .any(|r| r.contains(want) && r.contains("(COMPUTE_TMPRING_SIZE)") && r.contains("scratch_load")),
        "{target}: {report:?}"
    );
}

/// A private access past the lane's share stops under the sanitizer (gfx1100 on each
/// transport).
fn a_private_access_past_the_lanes_share_is_stopped(t: Transport) {
    let (_m, p) = sanitized(t);
    private_outside_stops(&p, t.target());
}

/// The private check on gfx942 (waves of 64, gfx9's 1 KiB units), gfx1201 (gfx12's
/// wider field) and a gfx1100 wave64 kernel.
#[test]
fn the_private_check_on_gfx942_gfx1201_and_wave64() {
    for profile in ["gfx942", "gfx1201"] {
        let m = Arc::new(MockSys::new(MockConfig {
            sanitize: true,
            ..MockConfig::named(profile, 1).expect("a mock profile")
        }));
        let p = Platform::with_sys(m, amd_hcq::Iface::Mock).unwrap();
        private_outside_stops(&p, profile);
    }
    let (_m, p) = sanitized(Transport::Kfd);
    private_outside_stops(&p, "wave64");
}

/// Without the sanitizer, the same read is the hardware's: 0.
#[test]
fn without_the_sanitizer_an_lds_read_outside_reads_zero() {
    // Off whatever AMD_MOCK_SANITIZE says (CI runs the tests again under it).
    let (_m, p) = platform_with(Transport::Kfd, 1, |c| MockConfig { sanitize: false, ..c });
    let dev = p.device(0).unwrap();
    let prg = Program::load(&dev, lds_index("gfx1100"), "lds_index").unwrap();
    let idx = [5u32, 300, 7, 1000];
    let mut all = vec![0u32; 256];
    all[..4].copy_from_slice(&idx);
    let (bi, out) = (
        dev.alloc(1024, BufferKind::Device).unwrap(),
        dev.alloc(1024, BufferKind::Device).unwrap(),
    );
    dev.copy_in_slice(&bi, 0, &all).unwrap();
    prg.launch_timed(&[&bi, &out], &[], groups(1)).unwrap();
    let got = dev.copy_out_vec::<u32>(&out, 0, 4).unwrap();
    assert_eq!(got, [16, 0, 22, 0]);
}

/// The LDS check is the interpreter's, on every GPU the mock runs: CDNA3's too, and
/// the driverless transport's.
#[test]
fn the_lds_check_on_gfx942_and_on_a_pci_gpu() {
    let m = Arc::new(MockSys::new(MockConfig {
        sanitize: true,
        ..MockConfig::named("gfx942", 1).expect("the gfx942 profile")
    }));
    let p = Platform::with_sys(m, amd_hcq::Iface::Mock).unwrap();
    lds_outside_stops(&p, "gfx942");
    let (_m, p) = sanitized(Transport::Pci);
    lds_outside_stops(&p, "gfx1100");
}

macro_rules! on {
    ($($t:ident => $name:ident),* $(,)?) => {$(
        mod $name {
            use super::*;
            #[test]
            fn a_read_of_vram_nothing_wrote_stops_at_its_first_byte() {
                super::a_read_of_vram_nothing_wrote_stops_at_its_first_byte(Transport::$t);
            }
            #[test]
            fn running_off_a_buffer_faults_after_its_end() {
                super::running_off_a_buffer_faults_after_its_end(Transport::$t);
            }
            #[test]
            fn a_kernel_reaching_freed_memory_is_told_so() {
                super::a_kernel_reaching_freed_memory_is_told_so(Transport::$t);
            }
            #[test]
            fn an_lds_access_outside_the_allocation_is_stopped() {
                super::an_lds_access_outside_the_allocation_is_stopped(Transport::$t);
            }
            #[test]
            fn a_private_access_past_the_lanes_share_is_stopped() {
                super::a_private_access_past_the_lanes_share_is_stopped(Transport::$t);
            }
        }
    )*};
}

on! {
    Kfd => kfd,
    KfdAql => kfd_aql,
    KfdGfx1201 => gfx1201_kfd,
}
