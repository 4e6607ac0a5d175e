//! Every PCI configuration-space constant equals the system header
//! `/usr/include/linux/pci_regs.h`'s, as a C compiler sees it.
//! Skipped, saying so, where no C compiler or no header is present.

use std::fmt::Write as _;
use std::path::Path;

use amd_regs::layout::run_c_program;
use amd_regs::pci::CONSTANTS;

const HEADER: &str = "/usr/include/linux/pci_regs.h";

#[test]
fn constants_match_the_system_header() {
    if !Path::new(HEADER).exists() {
        eprintln!("skipped: {HEADER} is not installed (Debian: linux-libc-dev)");
        return;
    }
    let mut c = String::from("#include <stdio.h>\n#include <linux/pci_regs.h>\nint main(void) {\n");
    for (name, _) in CONSTANTS {
        writeln!(c, "  printf(\"constant {name} %lu\\n\", (unsigned long){name});").unwrap();
    }
    c.push_str("  return 0;\n}\n");
    let Some(out) = run_c_program(&c, &[], &[]).unwrap() else {
        eprintln!("skipped: no C compiler to check the PCI constants against {HEADER}");
        return;
    };
    for (name, value) in CONSTANTS {
        assert_eq!(out[&("constant".into(), name.to_string())], *value, "{name}");
    }
    assert!(CONSTANTS.len() >= 25, "the registry lost entries");
}
