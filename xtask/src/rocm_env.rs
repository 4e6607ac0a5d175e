//! `cargo xtask rocm-env [--dir DIR]`: a ROCm user space to run clients against the
//! mock, installed as a newcomer would: a Debian trixie root (`debootstrap`) with
//! `rocminfo`, `hipcc`, `libamdhip64-dev`, the header-only parallel primitives
//! (rocPRIM, hipCUB, rocThrust), rocBLAS 5.5, rocFFT and rocRAND from Debian's own
//! archive (ROCr 6.1, HIP 5.7, clang 17),
//! under `target/rocm-env/trixie` unless `--dir` names another place. Made once: a
//! finished root is left as it is, but for the packages a newer list adds (delete it
//! to start over). Needs root
//! (debootstrap and chroot do), `debootstrap` (installed with apt-get when missing and
//! running as root) and the network; it downloads about 1.2 GB and takes about 4 GB. The tests never need it:
//! those that run a ROCm client skip, saying why, where it is absent.
//!
//! Run a client in it with the interposer (built on the host; the root's C library
//! is newer, which runs it): `cp target/release/libamd_interpose.so DIR/tmp/ &&
//! chroot DIR env LD_PRELOAD=/tmp/libamd_interpose.so rocminfo`.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::{Result, check, workspace_root};

/// The Debian release and archive.
const SUITE: &str = "trixie";
const MIRROR: &str = "http://deb.debian.org/debian";
/// What the root gets beyond the minimal base.
const PACKAGES: &[&str] = &[
    "rocminfo",
    "hipcc",
    "libamdhip64-dev",
    "librocprim-dev",
    "libhipcub-dev",
    "librocthrust-dev",
    "librocblas-dev",
    "librocfft-dev",
    "librocrand-dev",
];

/// The file a finished root holds: the packages it was made with, one a line.
const MARKER: &str = ".rocm-env-complete";

/// Whether the root at `dir` is finished, with every package of [`PACKAGES`].
pub fn ready(dir: &Path) -> bool {
    std::fs::read_to_string(dir.join(MARKER)).is_ok_and(|made| made.trim() == PACKAGES.join("\n"))
}

/// The root's default place.
pub fn default_dir() -> PathBuf {
    workspace_root().join("target/rocm-env").join(SUITE)
}

pub fn run(args: &[String]) -> Result<()> {
    let dir = match args {
        [] => default_dir(),
        [flag, d] if flag == "--dir" => PathBuf::from(d),
        _ => return Err("usage: cargo xtask rocm-env [--dir DIR]".into()),
    };
    // The marker lists what the root was made with; a root made with fewer packages
    // gets the rest.
    let (done, listed) = (dir.join(MARKER), PACKAGES.join("\n"));
    if ready(&dir) {
        println!("rocm-env: {} is ready ({})", dir.display(), PACKAGES.join(", "));
        return Ok(());
    }
    if !is_root() {
        return Err("rocm-env needs root: debootstrap and chroot do (run it with sudo)".into());
    }
    ensure_debootstrap()?;
    let base = dir.join(".rocm-env-base");
    if !base.exists() {
        println!(
            "rocm-env: debootstrap {SUITE} into {} (a minimal Debian)",
            dir.display()
        );
        std::fs::create_dir_all(&dir)?;
        check(
            Command::new("debootstrap")
                .args(["--variant=minbase", "--include=ca-certificates", SUITE])
                .arg(&dir)
                .arg(MIRROR),
            "debootstrap",
        )?;
        std::fs::write(&base, b"")?;
    }
    println!("rocm-env: apt-get install {} in the root", PACKAGES.join(" "));
    let proc_dir = dir.join("proc");
    check(
        Command::new("mount").args(["-t", "proc", "proc"]).arg(&proc_dir),
        "mounting /proc in the root",
    )?;
    let installed = apt_in(&dir);
    // Unmounted whatever apt did.
    let unmounted = check(Command::new("umount").arg(&proc_dir), "unmounting the root's /proc");
    installed?;
    unmounted?;
    std::fs::write(&done, listed)?;
    println!("rocm-env: {} is ready", dir.display());
    Ok(())
}

/// `apt-get update` and the install, inside the root.
fn apt_in(dir: &Path) -> Result<()> {
    let apt = |args: &[&str], what: &str| {
        check(
            Command::new("chroot")
                .arg(dir)
                .args(["env", "DEBIAN_FRONTEND=noninteractive", "apt-get"])
                .args(args),
            what,
        )
    };
    apt(&["update"], "apt-get update in the root")?;
    let mut install = vec!["install", "-y", "--no-install-recommends"];
    install.extend(PACKAGES);
    apt(&install, "apt-get install in the root")
}

pub fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// `debootstrap` on PATH, installed with apt-get where missing.
fn ensure_debootstrap() -> Result<()> {
    let present = Command::new("debootstrap")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if present {
        return Ok(());
    }
    println!("rocm-env: installing debootstrap");
    check(Command::new("apt-get").arg("update"), "apt-get update")?;
    check(
        Command::new("apt-get").args(["install", "-y", "debootstrap"]),
        "apt-get install debootstrap",
    )
}
