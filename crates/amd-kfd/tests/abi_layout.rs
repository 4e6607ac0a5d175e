//! Every ABI struct's size and field offsets, and every request number, equal those
//! of Linux 6.12's `kfd_ioctl.h` (interface 1.17, copied in `vendor/`), as a C
//! compiler sees them; the 1.11 header's `CREATE_QUEUE` is the older size the mock
//! also takes. Skipped, saying so, where no C compiler or no `<linux/types.h>` is
//! present.

use std::fmt::Write as _;
use std::path::Path;

use amd_kfd::abi::{COMMANDS, KFD_CREATE_QUEUE_ARGS_SIZE_1_11, KFD_IOCTL_MINOR_VERSION, REQUESTS, STRUCTS};
use amd_regs::layout::{CValues, assert_layouts, run_c_program};

const INCLUDE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/vendor");
const INCLUDE_1_11: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/vendor/kfd-1.11");

fn c_program() -> String {
    let mut c =
        String::from("#include <stdio.h>\n#include <stddef.h>\n#include <linux/kfd_ioctl.h>\nint main(void) {\n");
    for s in STRUCTS {
        c.push_str(&s.c_lines(s.name));
    }
    for name in REQUESTS.iter().map(|r| r.0).chain(COMMANDS.iter().map(|c| c.name)) {
        writeln!(c, "  printf(\"request {name} %lu\\n\", (unsigned long){name});").unwrap();
    }
    c.push_str("  printf(\"minor version %lu\\n\", (unsigned long)KFD_IOCTL_MINOR_VERSION);\n");
    c.push_str("  return 0;\n}\n");
    c
}

/// Runs `program` with `include` searched first (and a stand-in `<drm/drm.h>` after
/// the system's headers: kfd_ioctl.h includes it only for the `__u32`/`__u64` types,
/// and Debian's linux-libc-dev lacks libdrm's). `None` (after saying why) where no C
/// compiler or no `<linux/types.h>` is present.
fn run_c(include: &str, program: &str) -> Option<CValues> {
    if !Path::new("/usr/include/linux/types.h").exists() {
        eprintln!("skipped: <linux/types.h> is not installed (Debian: linux-libc-dev)");
        return None;
    }
    let stand_in = [("drm/drm.h", "#include <linux/types.h>\n")];
    let c = run_c_program(program, &[Path::new(include)], &stand_in).unwrap();
    if c.is_none() {
        eprintln!("skipped: no C compiler to check the KFD ABI against {include}");
    }
    c
}

#[test]
fn abi_matches_the_current_header() {
    let Some(c) = run_c(INCLUDE, &c_program()) else {
        return;
    };
    let checked = assert_layouts(&c, STRUCTS);
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
