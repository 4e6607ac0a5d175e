//! The mock's file system: emulated `/dev` and `/sys`, host reads elsewhere.

use std::path::Path;

use amd_kfd::sys::{OpenMode, Sys};
use amd_mockgpu::{GpuProfile, MockConfig, MockSys};
use nix::errno::Errno;

#[test]
fn sysfs_topology_and_devices() {
    let m = MockSys::new(MockConfig {
        gpus: vec![GpuProfile::gfx1100(), GpuProfile::gfx1030()],
        ..MockConfig::default()
    });
    let nodes = Path::new("/sys/devices/virtual/kfd/kfd/topology/nodes");
    let mut names = m.list_dir(nodes).unwrap();
    names.sort();
    assert_eq!(names, ["0", "1", "2"]);
    assert_eq!(m.read_file(&nodes.join("0/gpu_id")).unwrap(), b"0\n");
    let id = String::from_utf8(m.read_file(&nodes.join("2/gpu_id")).unwrap()).unwrap();
    assert_eq!(id.trim().parse::<u32>().unwrap(), m.gpu_id(1).unwrap());
    let props = String::from_utf8(m.read_file(&nodes.join("2/properties")).unwrap()).unwrap();
    assert!(props.contains("gfx_target_version 100300\n") && props.contains("drm_render_minor 129\n"));
    assert!(m.exists(Path::new("/dev/kfd")) && m.exists(Path::new("/dev/dri/renderD129")));
    assert!(!m.exists(Path::new("/dev/dri/renderD130")));
    assert!(m.exists(Path::new("/sys/module/amdgpu")));
    assert_eq!(m.read_file(&nodes.join("3/gpu_id")).unwrap_err().errno, Errno::ENOENT);
    assert_eq!(
        m.read_file(Path::new("/sys/class/drm/card0/device/vendor"))
            .unwrap_err()
            .errno,
        Errno::ENOENT
    );
    assert_eq!(
        m.open(Path::new("/dev/dri/renderD200"), OpenMode::ReadWrite)
            .unwrap_err()
            .errno,
        Errno::ENOENT
    );

    let kfd = m.open(Path::new("/dev/kfd"), OpenMode::ReadWrite).unwrap();
    let mut junk = [0u8; 8];
    // SAFETY: an unknown request reads nothing through pointers.
    let r = unsafe { m.ioctl(kfd, 0xdead, "JUNK", &mut junk) };
    assert_eq!(r.unwrap_err().errno, Errno::ENOTTY);
    // A request whose size is past the buffer given is refused, not read past (the
    // kernel's copy_from_user would fault: EFAULT).
    let mut short = [0u8; 3];
    let req = amd_kfd::abi::AMDKFD_IOC_GET_VERSION;
    // SAFETY: GET_VERSION carries no pointers.
    let r = unsafe { m.ioctl(kfd, req.request, req.name, &mut short) };
    assert_eq!(r.unwrap_err().errno, Errno::EFAULT);
    m.close(kfd).unwrap();
    assert_eq!(m.close(kfd).unwrap_err().errno, Errno::EBADF);
    assert_eq!(m.stats().open_fds, 0);
}

#[test]
fn reads_outside_dev_and_sys_reach_the_host() {
    let m = MockSys::default();
    assert!(!m.read_file(Path::new("/proc/self/status")).unwrap().is_empty());
    assert!(m.list_dir(Path::new("/proc/self")).unwrap().iter().any(|n| n == "maps"));
    let fd = m.open(Path::new("/proc/self/status"), OpenMode::ReadOnly).unwrap();
    m.close(fd).unwrap();
    assert_eq!(
        m.open(Path::new("/tmp/amd-mock-write"), OpenMode::ReadWrite)
            .unwrap_err()
            .errno,
        Errno::EACCES
    );
    assert_eq!(
        m.write_file(Path::new("/tmp/amd-mock-write"), b"x").unwrap_err().errno,
        Errno::EACCES
    );
    assert_eq!(m.stats().open_fds, 0);
}
