//! Every ABI struct's size and field offsets, and every request number, equal those
//! of Linux 6.12's `kfd_ioctl.h` (interface 1.17, copied in `include/`), as a C
//! compiler sees them; the 1.11 header's `CREATE_QUEUE` is the older size the mock
//! also takes. Skipped, saying so, where no C compiler or no `<linux/types.h>` is
//! present.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;

use amd_kfd::abi::{COMMANDS, KFD_CREATE_QUEUE_ARGS_SIZE_1_11, KFD_IOCTL_MINOR_VERSION, REQUESTS, STRUCTS};

const INCLUDE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/include");
const INCLUDE_1_11: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/include/kfd-1.11");

fn c_program() -> String {
    let mut c =
        String::from("#include <stdio.h>\n#include <stddef.h>\n#include <linux/kfd_ioctl.h>\nint main(void) {\n");
    for s in STRUCTS {
        writeln!(c, "  printf(\"size {0} %zu\\n\", sizeof(struct {0}));", s.name).unwrap();
        for f in s.fields {
            writeln!(
                c,
                "  printf(\"field {0}.{1} %zu\\n\", offsetof(struct {0}, {1}));",
                s.name, f.name
            )
            .unwrap();
        }
    }
    for name in REQUESTS.iter().map(|r| r.0).chain(COMMANDS.iter().map(|c| c.name)) {
        writeln!(c, "  printf(\"request {name} %lu\\n\", (unsigned long){name});").unwrap();
    }
    c.push_str("  printf(\"minor version %lu\\n\", (unsigned long)KFD_IOCTL_MINOR_VERSION);\n");
    c.push_str("  return 0;\n}\n");
    c
}

/// Compiles and runs `program` with `include` searched first; its output lines
/// `kind name value` as a map. `None` (after saying why) where no C compiler or no
/// `<linux/types.h>` is present.
fn run_c(include: &str, program: &str) -> Option<BTreeMap<(String, String), u64>> {
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    if Command::new(&cc).arg("--version").output().is_err() {
        eprintln!("skipped: no C compiler ({cc}) to check the KFD ABI against {include}");
        return None;
    }
    if !Path::new("/usr/include/linux/types.h").exists() {
        eprintln!("skipped: <linux/types.h> is not installed (Debian: linux-libc-dev)");
        return None;
    }
    let dir = std::env::temp_dir().join(format!("amd-kfd-abi-{}-{}", std::process::id(), program.len()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("abi.c");
    let exe = dir.join("abi");
    std::fs::write(&src, program).unwrap();
    // kfd_ioctl.h includes <drm/drm.h> only for the __u32/__u64 types. Where libdrm's
    // headers are absent, a stand-in that brings <linux/types.h> is searched after
    // the system directories, so a real drm.h still wins.
    std::fs::create_dir_all(dir.join("drm")).unwrap();
    std::fs::write(dir.join("drm/drm.h"), "#include <linux/types.h>\n").unwrap();
    let out = Command::new(&cc)
        .arg("-I")
        .arg(include)
        .arg("-idirafter")
        .arg(&dir)
        .arg(&src)
        .arg("-o")
        .arg(&exe)
        .output()
        .expect("run the C compiler");
    assert!(
        out.status.success(),
        "C compile failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run = Command::new(&exe).output().expect("run the layout program");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(run.status.success());
    let text = String::from_utf8(run.stdout).unwrap();
    Some(
        text.lines()
            .map(|l| {
                let mut p = l.split_whitespace();
                let (kind, name, v) = (p.next().unwrap(), p.next().unwrap(), p.next().unwrap());
                ((kind.to_string(), name.to_string()), v.parse().unwrap())
            })
            .collect(),
    )
}

#[test]
fn abi_matches_the_current_header() {
    let Some(c) = run_c(INCLUDE, &c_program()) else {
        return;
    };
    let mut checked = 0;
    for s in STRUCTS {
        assert_eq!(
            c[&("size".into(), s.name.into())],
            s.size as u64,
            "sizeof(struct {})",
            s.name
        );
        for f in s.fields {
            let key = ("field".to_string(), format!("{}.{}", s.name, f.name));
            assert_eq!(c[&key], f.offset as u64, "offsetof(struct {}, {})", s.name, f.name);
            checked += 1;
        }
    }
    for (name, req) in REQUESTS
        .iter()
        .copied()
        .chain(COMMANDS.iter().map(|c| (c.name, c.request)))
    {
        assert_eq!(c[&("request".into(), name.to_string())], req, "{name}");
    }
    assert_eq!(
        c[&("minor".into(), "version".into())],
        u64::from(KFD_IOCTL_MINOR_VERSION)
    );
    assert!(checked > 100 && REQUESTS.len() >= 20, "the registry lost entries");
}

#[test]
fn the_older_header_passes_the_smaller_create_queue() {
    let program = "#include <stdio.h>\n#include <linux/kfd_ioctl.h>\nint main(void) {\n  \
                   printf(\"size create %zu\\n\", sizeof(struct kfd_ioctl_create_queue_args));\n  \
                   printf(\"minor version %lu\\n\", (unsigned long)KFD_IOCTL_MINOR_VERSION);\n  return 0;\n}\n";
    let Some(c) = run_c(INCLUDE_1_11, program) else {
        return;
    };
    assert_eq!(
        c[&("size".into(), "create".into())],
        KFD_CREATE_QUEUE_ARGS_SIZE_1_11 as u64
    );
    assert_eq!(c[&("minor".into(), "version".into())], 11);
}
