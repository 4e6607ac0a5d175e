//! The PSP interface layouts equal amdgpu's `psp_gfx_if.h` (Linux 6.12, copied in
//! `vendor/`), as a C compiler lays it out: every struct's size and field offsets.
//! Skipped, saying so, where no C compiler is present.

use amd_regs::layout::{assert_layouts, run_c_program};
use amd_regs::psp_if::STRUCTS;

const HEADER: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/vendor/psp_gfx_if.h");

#[test]
fn psp_layouts_match_psp_gfx_if_h() {
    let mut c = format!(
        "#include <stdio.h>\n#include <stddef.h>\n#include <stdint.h>\n#include \"{HEADER}\"\nint main(void) {{\n"
    );
    for s in STRUCTS {
        c.push_str(&s.c_lines(s.name));
    }
    c.push_str("  return 0;\n}\n");
    let Some(got) = run_c_program(&c, &[], &[]).unwrap() else {
        eprintln!("skipped: no C compiler to check the layouts against {HEADER}");
        return;
    };
    let fields = assert_layouts(&got, STRUCTS);
    assert!(STRUCTS.len() == 3 && fields == 29, "the layout list lost entries");
}
