//! The firmware file headers equal amdgpu's `amdgpu_ucode.h` (Linux 6.12, copied in
//! `vendor/`), as a C compiler lays it out: every struct's size and field offsets.
//! Skipped, saying so, where no C compiler is present.

use amd_regs::firmware::STRUCTS;
use amd_regs::layout::{assert_layouts, run_c_program};

const HEADER: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/vendor/amdgpu_ucode.h");

#[test]
fn firmware_headers_match_amdgpu_ucode_h() {
    // What the kernel's build gives the header besides its structs: `u8`, `bool`,
    // `struct mutex` and the printf attribute of its prototypes, and the soc bounding
    // box of `amdgpu_socbb.h` (only the GPU-info table holds one, not compared here).
    let prelude = "#include <stdbool.h>\n\
                   typedef uint8_t u8;\n\
                   struct mutex { int stand_in; };\n\
                   struct amdgpu_device;\n\
                   struct firmware;\n\
                   #define __printf(a, b)\n";
    let socbb = (
        "amdgpu_socbb.h",
        "struct gpu_info_soc_bounding_box_v1_0 { int stand_in; };\n",
    );
    let mut c = format!(
        "#include <stdio.h>\n#include <stddef.h>\n#include <stdint.h>\n{prelude}#include \"{HEADER}\"\nint main(void) {{\n"
    );
    for s in STRUCTS {
        c.push_str(&s.c_lines(s.name));
    }
    c.push_str("  return 0;\n}\n");
    let Some(got) = run_c_program(&c, &[], &[socbb]).unwrap() else {
        eprintln!("skipped: no C compiler to check the layouts against {HEADER}");
        return;
    };
    let fields = assert_layouts(&got, STRUCTS);
    assert!(STRUCTS.len() >= 11 && fields >= 87, "the layout list lost entries");
}
