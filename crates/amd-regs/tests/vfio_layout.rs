//! Every VFIO ABI struct's size and field offsets, and every request number and
//! constant, equal those of the system header `/usr/include/linux/vfio.h`, as a C
//! compiler sees them.
//! Skipped, saying so, where no C compiler or no header is present.

use std::fmt::Write as _;
use std::path::Path;

use amd_regs::layout::{assert_layouts, run_c_program};
use amd_regs::vfio::{CONSTANTS, STRUCTS};

const HEADER: &str = "/usr/include/linux/vfio.h";

fn c_program() -> String {
    let mut c = String::from("#include <stdio.h>\n#include <stddef.h>\n#include <linux/vfio.h>\nint main(void) {\n");
    for s in STRUCTS {
        c.push_str(&s.c_lines(s.name));
    }
    for (name, _) in CONSTANTS {
        writeln!(c, "  printf(\"constant {name} %lu\\n\", (unsigned long){name});").unwrap();
    }
    c.push_str("  return 0;\n}\n");
    c
}

#[test]
fn abi_matches_the_system_header() {
    if !Path::new(HEADER).exists() {
        eprintln!("skipped: {HEADER} is not installed (Debian: linux-libc-dev)");
        return;
    }
    let Some(c) = run_c_program(&c_program(), &[], &[]).unwrap() else {
        eprintln!("skipped: no C compiler to check the VFIO ABI against {HEADER}");
        return;
    };
    let checked = assert_layouts(&c, STRUCTS);
    for (name, value) in CONSTANTS {
        assert_eq!(c[&("constant".into(), name.to_string())], *value, "{name}");
    }
    assert!(checked >= 20 && CONSTANTS.len() >= 40, "the registry lost entries");
}
