//! The IP discovery layouts equal amdgpu's `discovery.h` (Linux 6.12, copied in
//! `vendor/`), as a C compiler lays it out: every struct's size and field offsets.
//! Skipped, saying so, where no C compiler is present.

use std::fmt::Write as _;

use amd_regs::discovery::STRUCTS;
use amd_regs::layout::{assert_layouts, run_c_program};

const HEADER: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/vendor/discovery.h");

/// The C struct a Rust struct models, where the names differ.
fn c_struct(rust: &str) -> &str {
    match rust {
        // The version-4 entry, whose bases may be 64-bit (the Rust struct reads the
        // header part; the bases follow it).
        "ip" => "ip_v4",
        other => other,
    }
}

/// The C expression of a field's offset, where the Rust field is not a C member of the
/// same name: an anonymous union, a bitfield byte, a nested struct standing for fields.
fn c_offset(s: &str, f: &str) -> String {
    match (s, f) {
        ("ip_discovery_header", "flags") => "offsetof(struct ip_discovery_header, padding)".into(),
        ("ip", "variant_sub_revision") => "offsetof(struct ip_v4, revision) + 1".into(),
        ("gc_info_v1_2", "v1_0") => "offsetof(struct gc_info_v1_2, header)".into(),
        ("gc_info_v1_3", "v1_2") => "offsetof(struct gc_info_v1_3, header)".into(),
        _ => format!("offsetof(struct {}, {f})", c_struct(s)),
    }
}

#[test]
fn discovery_layouts_match_the_header() {
    // What the kernel's build gives the header: its flexible-array helper
    // (`include/uapi/linux/stddef.h`) and the byte order amdgpu defines.
    let prelude = "#define DECLARE_FLEX_ARRAY(T, N) struct { struct { } __empty_##N; T N[]; }\n\
                   #define LITTLEENDIAN_CPU 1\n";
    let mut c = format!(
        "#include <stdio.h>\n#include <stddef.h>\n#include <stdint.h>\n{prelude}#include \"{HEADER}\"\nint main(void) {{\n"
    );
    for s in STRUCTS {
        writeln!(
            c,
            "  printf(\"size {} %zu\\n\", sizeof(struct {}));",
            s.name,
            c_struct(s.name)
        )
        .unwrap();
        for f in s.fields {
            writeln!(
                c,
                "  printf(\"field {}.{} %zu\\n\", (size_t)({}));",
                s.name,
                f.name,
                c_offset(s.name, f.name)
            )
            .unwrap();
        }
    }
    c.push_str("  return 0;\n}\n");
    let Some(got) = run_c_program(&c, &[], &[]).unwrap() else {
        eprintln!("skipped: no C compiler to check the layouts against {HEADER}");
        return;
    };
    let fields = assert_layouts(&got, STRUCTS);
    assert!(STRUCTS.len() >= 12 && fields > 60, "the layout list lost entries");
}
