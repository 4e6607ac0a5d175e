//! Every VFIO ABI struct's size and field offsets, and every request number and
//! constant, equal those of the system header `/usr/include/linux/vfio.h`, as a C
//! compiler sees them.
//! Skipped, saying so, where no C compiler or no header is present.

use std::fmt::Write as _;
use std::path::Path;

use amd_regs::layout::run_c_program;
use amd_regs::vfio::{CONSTANTS, STRUCTS};

const HEADER: &str = "/usr/include/linux/vfio.h";

fn c_program() -> String {
    let mut c = String::from("#include <stdio.h>\n#include <stddef.h>\n#include <linux/vfio.h>\nint main(void) {\n");
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
    for (name, value) in CONSTANTS {
        assert_eq!(c[&("constant".into(), name.to_string())], *value, "{name}");
    }
    assert!(checked >= 20 && CONSTANTS.len() >= 40, "the registry lost entries");
}
