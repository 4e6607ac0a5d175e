//! The mock's `/dev/kfd` takes every command at any argument size, as `kfd_ioctl()`
//! in `kfd_chardev.c` does: chosen by number, the caller's bytes copied in, the rest
//! of the kernel's struct zero-filled, the caller's size copied back (also when the
//! command fails), the kernel's own direction deciding what is copied. Raw ioctls at
//! the sizes of the 1.11 and 1.17 headers and larger.

use std::sync::Arc;

use amd_kfd::abi::*;
use amd_kfd::sys::{Fd, OpenMode, Sys};
use amd_kfd::topology::Visibility;
use amd_kfd::{Kfd, MemoryKind};
use amd_mockgpu::{GpuProfile, MockConfig, MockSys, SdmaQueue};
use nix::errno::Errno;
use zerocopy::IntoBytes;

const IOC_WRITE: u64 = 1;
const IOC_READ: u64 = 2;

/// A KFD request number of command `nr` with any direction and size.
fn request(dir: u64, nr: u8, size: usize) -> u64 {
    (dir << 30) | ((size as u64) << 16) | (u64::from(AMDKFD_IOCTL_BASE) << 8) | u64::from(nr)
}

fn mock() -> Arc<MockSys> {
    Arc::new(MockSys::new(MockConfig {
        gpus: vec![GpuProfile::gfx1100()],
        ..MockConfig::default()
    }))
}

/// One raw ioctl with `bytes` as the argument (its length the request's size).
fn raw(m: &MockSys, fd: Fd, dir: u64, nr: u8, bytes: &mut [u8]) -> Result<i32, Errno> {
    let req = request(dir, nr, bytes.len());
    // SAFETY: the arguments used here hold no pointers, or pointers into live
    // arrays of this test (MAP's device ids).
    unsafe { m.ioctl(fd, req, "raw", bytes) }.map_err(|e| e.errno)
}

#[test]
fn get_version_at_any_size_and_direction() {
    let m = mock();
    let fd = m.open(std::path::Path::new("/dev/kfd"), OpenMode::ReadWrite).unwrap();
    let mut v = [0xaau8; 8];
    raw(&m, fd, IOC_READ, 0x01, &mut v).unwrap();
    assert_eq!(v, [1, 0, 0, 0, 17, 0, 0, 0], "interface 1.17");
    // A shorter argument gets only its own bytes.
    let mut short = [0xaau8; 4];
    raw(&m, fd, IOC_READ, 0x01, &mut short).unwrap();
    assert_eq!(short, [1, 0, 0, 0]);
    // A longer one: the kernel copies nothing in for a read-only command and
    // zeroes the caller's size before copying it back.
    let mut long = [0xaau8; 16];
    raw(&m, fd, IOC_READ, 0x01, &mut long).unwrap();
    assert_eq!(long, [1, 0, 0, 0, 17, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    // The caller's direction bits are not the kernel's business.
    let mut none = [0xaau8; 8];
    raw(&m, fd, 0, 0x01, &mut none).unwrap();
    assert_eq!(none, [1, 0, 0, 0, 17, 0, 0, 0]);
    // Numbers outside the table: ENOTTY. A size past the caller's memory: EFAULT.
    assert_eq!(raw(&m, fd, IOC_READ, 0x00, &mut v).unwrap_err(), Errno::ENOTTY);
    assert_eq!(raw(&m, fd, IOC_READ, 0x27, &mut v).unwrap_err(), Errno::ENOTTY);
    let req = request(IOC_READ, 0x01, 64);
    // SAFETY: the mock reads no further than the slice it is given.
    let e = unsafe { m.ioctl(fd, req, "raw", &mut v) }.unwrap_err();
    assert_eq!(e.errno, Errno::EFAULT);
    m.close(fd).unwrap();
}

/// A GPU with its VM acquired, a ring and a read/write-pointer page, and a raw
/// `/dev/kfd` descriptor.
struct Setup {
    m: Arc<MockSys>,
    _kfd: Kfd,
    dev: amd_kfd::KfdDevice,
    fd: Fd,
    gpu_id: u32,
    ring: amd_kfd::KfdMemory,
    gart: amd_kfd::KfdMemory,
}

fn setup() -> Setup {
    let m = mock();
    let kfd = Kfd::open_with(m.clone(), &Visibility::all()).unwrap();
    let dev = kfd.device(0).unwrap();
    let ring = dev.alloc(0x1000, MemoryKind::UNCACHED).unwrap();
    let gart = dev.alloc(0x1000, MemoryKind::UNCACHED).unwrap();
    let fd = m.open(std::path::Path::new("/dev/kfd"), OpenMode::ReadWrite).unwrap();
    Setup {
        gpu_id: dev.gpu_id(),
        dev,
        m,
        _kfd: kfd,
        fd,
        ring,
        gart,
    }
}

impl Setup {
    fn sdma_args(&self, queue_type: u32, engine: u32) -> kfd_ioctl_create_queue_args {
        kfd_ioctl_create_queue_args {
            ring_base_address: self.ring.va() as u64,
            write_pointer_address: self.gart.va() as u64,
            read_pointer_address: self.gart.va() as u64 + 8,
            ring_size: 0x1000,
            gpu_id: self.gpu_id,
            queue_type,
            queue_percentage: 100,
            queue_priority: 7,
            sdma_engine_id: engine,
            ..Default::default()
        }
    }

    /// CREATE_QUEUE with the first `size` bytes of `a` (padded with `fill` past 96).
    fn create(&self, a: &kfd_ioctl_create_queue_args, size: usize, fill: u8) -> Result<Vec<u8>, Errno> {
        let mut bytes = a.as_bytes().to_vec();
        bytes.resize(size.max(bytes.len()), fill);
        bytes.truncate(size);
        raw(&self.m, self.fd, IOC_READ | IOC_WRITE, 0x02, &mut bytes)?;
        Ok(bytes)
    }

    fn destroy(&self, id: u32) {
        let mut d = kfd_ioctl_destroy_queue_args { queue_id: id, pad: 0 };
        raw(&self.m, self.fd, IOC_READ | IOC_WRITE, 0x03, d.as_mut_bytes()).unwrap();
    }

    fn sdma_of(&self, id: u32) -> SdmaQueue {
        let q = self.m.queues().into_iter().find(|q| q.id == id).unwrap();
        q.sdma.expect("an SDMA queue")
    }
}

fn queue_id(bytes: &[u8]) -> u32 {
    u32::from_ne_bytes(bytes[52..56].try_into().unwrap())
}

#[test]
fn create_queue_at_the_old_the_current_and_a_larger_size() {
    let s = setup();
    let a = s.sdma_args(KFD_IOC_QUEUE_TYPE_SDMA, 0);
    // Interface 1.11's 88 bytes: no sdma_engine_id, read as 0.
    let old = s.create(&a, KFD_CREATE_QUEUE_ARGS_SIZE_1_11, 0).unwrap();
    assert_eq!(old.len(), 88);
    let id_old = queue_id(&old);
    assert!(
        u64::from_ne_bytes(old[24..32].try_into().unwrap()) != 0,
        "a doorbell offset came back"
    );
    // 1.17's 96 bytes.
    let cur = s.create(&a, 96, 0).unwrap();
    let id_cur = queue_id(&cur);
    assert_ne!(id_old, id_cur);
    // A newer header's larger struct: the unknown tail goes in and comes back as it was.
    let big = s.create(&a, 112, 0x5a).unwrap();
    assert_eq!(&big[96..], &[0x5a; 16]);
    let id_big = queue_id(&big);
    // Plain SDMA queues go round the engines, as KFD's allocate_sdma_queue does.
    assert_eq!(
        [
            s.sdma_of(id_old).engine,
            s.sdma_of(id_cur).engine,
            s.sdma_of(id_big).engine
        ],
        [0, 1, 0]
    );
    for id in [id_old, id_cur, id_big] {
        s.destroy(id);
    }
    // A failing command still copies the caller's size back: here nothing changed.
    let mut bad = s.sdma_args(KFD_IOC_QUEUE_TYPE_SDMA, 0);
    bad.gpu_id = 0xdead;
    assert_eq!(s.create(&bad, 88, 0).unwrap_err(), Errno::EINVAL);
    s.m.close(s.fd).unwrap();
}

#[test]
fn sdma_queues_on_a_chosen_engine() {
    let s = setup();
    // The gfx1100 profile: two SDMA engines, six queues each for KFD.
    let on = |engine| {
        s.create(&s.sdma_args(KFD_IOC_QUEUE_TYPE_SDMA_BY_ENG_ID, engine), 96, 0)
            .map(|b| queue_id(&b))
    };
    let first = on(1).unwrap();
    let second = on(1).unwrap();
    assert_eq!(
        (s.sdma_of(first), s.sdma_of(second).queue),
        (
            SdmaQueue {
                xgmi: false,
                sdma_id: 1,
                engine: 1,
                queue: 0
            },
            1
        )
    );
    let mut ids = vec![first, second];
    for _ in 0..4 {
        ids.push(on(1).unwrap());
    }
    assert_eq!(on(1).unwrap_err(), Errno::ENOMEM, "engine 1's six queues are taken");
    let zero = on(0).unwrap();
    assert_eq!(s.sdma_of(zero).engine, 0, "engine 0 still has room");
    assert_eq!(on(2).unwrap_err(), Errno::EINVAL, "no engine 2 (and no XGMI engines)");
    // A 1.11 client cannot name an engine: its queue is placed as a plain one.
    let plain = s.create(&s.sdma_args(KFD_IOC_QUEUE_TYPE_SDMA, 1), 88, 0).unwrap();
    assert_eq!(s.sdma_of(queue_id(&plain)).engine, 0, "engine 1 is full, id 2 is free");
    s.destroy(ids.remove(0));
    let again = on(1).unwrap();
    assert_eq!(s.sdma_of(again).sdma_id, 1, "a destroyed queue's place is free again");
    // No XGMI engines on this GPU: KFD has no XGMI queue to give.
    let xgmi = s.create(&s.sdma_args(KFD_IOC_QUEUE_TYPE_SDMA_XGMI, 0), 96, 0);
    assert_eq!(xgmi.unwrap_err(), Errno::ENOMEM);
    s.m.close(s.fd).unwrap();
}

#[test]
fn a_failed_map_reports_how_far_it_got() {
    let s = setup();
    let handle = {
        let mut a = kfd_ioctl_alloc_memory_of_gpu_args {
            va_addr: 0x7a00_0000_0000,
            size: 0x1000,
            gpu_id: s.gpu_id,
            flags: KFD_IOC_ALLOC_MEM_FLAGS_VRAM | KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE,
            ..Default::default()
        };
        raw(&s.m, s.fd, IOC_READ | IOC_WRITE, 0x16, a.as_mut_bytes()).unwrap();
        a.handle
    };
    let ids = [s.gpu_id, 0xbad];
    let mut a = kfd_ioctl_map_memory_to_gpu_args {
        handle,
        device_ids_array_ptr: ids.as_ptr() as u64,
        n_devices: 2,
        n_success: 0,
    };
    assert_eq!(
        raw(&s.m, s.fd, IOC_READ | IOC_WRITE, 0x18, a.as_mut_bytes()).unwrap_err(),
        Errno::EINVAL
    );
    assert_eq!(a.n_success, 1, "the first GPU was mapped, and the kernel says so");
    s.m.close(s.fd).unwrap();
}

#[test]
fn runtime_enable_as_the_kernel_takes_it() {
    let s = setup();
    let call = |mode_mask: u32| {
        let mut a = kfd_ioctl_runtime_enable_args {
            r_debug: 0x1000,
            mode_mask,
            capabilities_mask: 0,
        };
        raw(&s.m, s.fd, IOC_READ | IOC_WRITE, 0x25, a.as_mut_bytes())
    };
    // tinygrad 0.14 at open: disabling what is off succeeds.
    call(0).unwrap();
    call(KFD_RUNTIME_ENABLE_MODE_ENABLE_MASK).unwrap();
    assert_eq!(call(KFD_RUNTIME_ENABLE_MODE_ENABLE_MASK).unwrap_err(), Errno::EBUSY);
    call(0).unwrap();
    let q = s.create(&s.sdma_args(KFD_IOC_QUEUE_TYPE_SDMA, 0), 96, 0).unwrap();
    assert_eq!(
        call(KFD_RUNTIME_ENABLE_MODE_ENABLE_MASK | KFD_RUNTIME_ENABLE_MODE_TTMP_SAVE_MASK).unwrap_err(),
        Errno::EEXIST,
        "not once a queue exists"
    );
    s.destroy(queue_id(&q));
    call(KFD_RUNTIME_ENABLE_MODE_ENABLE_MASK).unwrap();
    s.m.close(s.fd).unwrap();
}

/// Memory the GPU reaches is whole pages, as the kernel maps it: a buffer of 12 bytes
/// (tinygrad 0.14 asks for such) is readable to the end of its page — a 16-byte
/// scalar load of it is legal on hardware — and the next page is not. Render-node
/// memory mapped with the length asked, and user-pointer memory of an odd length.
#[test]
fn the_gpu_reaches_whole_pages() {
    use amd_packets::GfxTarget;
    use amd_packets::sdma::CopyLinear;

    let s = setup();
    let dev = &s.dev;
    let dst = dev.alloc(0x2000, MemoryKind::UNCACHED).unwrap();
    let q = dev.create_queue(amd_kfd::QueueKind::Sdma, 0x1000).unwrap();
    let render =
        s.m.open(std::path::Path::new("/dev/dri/renderD128"), OpenMode::ReadWrite)
            .unwrap();
    // SAFETY: a fresh anonymous reservation (the address the buffer will live at).
    let va = unsafe {
        s.m.mmap(
            0,
            0x2000,
            amd_kfd::sys::Prot::None,
            amd_kfd::sys::MapFlags::PRIVATE.with(amd_kfd::sys::MapFlags::ANONYMOUS),
            None,
            0,
        )
    }
    .unwrap();
    let mut a = kfd_ioctl_alloc_memory_of_gpu_args {
        va_addr: va as u64,
        size: 12,
        gpu_id: s.gpu_id,
        flags: KFD_IOC_ALLOC_MEM_FLAGS_GTT | KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE,
        ..Default::default()
    };
    raw(&s.m, s.fd, IOC_READ | IOC_WRITE, 0x16, a.as_mut_bytes()).unwrap();
    // SAFETY: the buffer's own range, reserved above; mapped with the 12 bytes asked.
    let got = unsafe {
        s.m.mmap(
            va,
            12,
            amd_kfd::sys::Prot::ReadWrite,
            amd_kfd::sys::MapFlags::SHARED.with(amd_kfd::sys::MapFlags::FIXED),
            Some(render),
            a.mmap_offset,
        )
    }
    .unwrap();
    assert_eq!(got, va);
    let ids = [s.gpu_id];
    let mut m = kfd_ioctl_map_memory_to_gpu_args {
        handle: a.handle,
        device_ids_array_ptr: ids.as_ptr() as u64,
        n_devices: 1,
        n_success: 0,
    };
    raw(&s.m, s.fd, IOC_READ | IOC_WRITE, 0x18, m.as_mut_bytes()).unwrap();

    let mut ring = Vec::new();
    let copy = |ring: &mut Vec<u32>, src: u64, dst_off: u64, n: u32| {
        let c = CopyLinear::new(dst.va() as u64 + dst_off, src, n).unwrap();
        ring.extend_from_slice(&c.to_dwords(GfxTarget::Gfx11));
    };
    let run = |ring: &Vec<u32>| {
        q.ring().write(0, ring.as_bytes()).unwrap();
        q.submit(ring.len() as u64 * 4);
        s.m.kick();
        let t = std::time::Instant::now();
        while q.read_ptr() < ring.len() as u64 * 4 && s.m.stop_reasons(0).is_empty() {
            assert!(
                t.elapsed() < std::time::Duration::from_secs(10),
                "the copy did not finish"
            );
            std::thread::yield_now();
        }
    };
    // 16 bytes of the 12-byte buffer, and its page's last 4 bytes.
    copy(&mut ring, va as u64, 0, 16);
    copy(&mut ring, va as u64 + 0xffc, 16, 4);
    run(&ring);
    assert!(s.m.stop_reasons(0).is_empty(), "{:?}", s.m.stop_reasons(0));
    // The next page is outside the buffer: a fault.
    copy(&mut ring, va as u64 + 0x1000, 32, 4);
    run(&ring);
    let reasons = s.m.stop_reasons(0);
    assert!(
        reasons.iter().any(|r| r.contains(&format!("{:#x}", va + 0x1000))),
        "{reasons:?}"
    );
    // The faulted queue stays stopped; a queue made afterwards in the same process
    // runs (what a client that reopens its device after a fault gets).
    let q2 = dev.create_queue(amd_kfd::QueueKind::Sdma, 0x1000).unwrap();
    let one = CopyLinear::new(dst.va() as u64 + 64, va as u64, 12)
        .unwrap()
        .to_dwords(GfxTarget::Gfx11);
    q2.ring().write(0, one.as_bytes()).unwrap();
    q2.submit(one.len() as u64 * 4);
    s.m.kick();
    let t = std::time::Instant::now();
    while q2.read_ptr() < one.len() as u64 * 4 {
        assert!(
            t.elapsed() < std::time::Duration::from_secs(10),
            "the new queue did not run"
        );
        std::thread::yield_now();
    }
    assert_eq!(s.m.stop_reasons(0).len(), 1, "only the first queue stopped");
    s.m.close(render).unwrap();
    s.m.close(s.fd).unwrap();
}
