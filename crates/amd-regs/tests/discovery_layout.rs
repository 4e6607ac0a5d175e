//! The IP discovery layouts equal amdgpu's `discovery.h` (Linux 6.12, copied in
//! `include/`), as a C compiler lays it out: every struct's size and field offsets.
//! Skipped, saying so, where no C compiler is present.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::process::Command;

use amd_regs::discovery::STRUCTS;

const HEADER: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/include/discovery.h");

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
        _ => format!("offsetof(struct {}, {f})", c_struct(s)),
    }
}

#[test]
fn discovery_layouts_match_the_header() {
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    if Command::new(&cc).arg("--version").output().is_err() {
        eprintln!("skipped: no C compiler ({cc}) to check the layouts against {HEADER}");
        return;
    }
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
    let dir = std::env::temp_dir().join(format!("amd-regs-discovery-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (src, exe) = (dir.join("layout.c"), dir.join("layout"));
    std::fs::write(&src, c).unwrap();
    let out = Command::new(&cc)
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
    let got: BTreeMap<(String, String), usize> = text
        .lines()
        .map(|l| {
            let mut p = l.split_whitespace();
            let (kind, name, v) = (p.next().unwrap(), p.next().unwrap(), p.next().unwrap());
            ((kind.to_string(), name.to_string()), v.parse().unwrap())
        })
        .collect();
    let mut fields = 0;
    for s in STRUCTS {
        assert_eq!(
            got[&("size".into(), s.name.into())],
            s.size,
            "sizeof(struct {})",
            c_struct(s.name)
        );
        for f in s.fields {
            let key = ("field".to_string(), format!("{}.{}", s.name, f.name));
            assert_eq!(got[&key], f.offset, "offset of {}.{}", s.name, f.name);
            fields += 1;
        }
    }
    assert!(STRUCTS.len() >= 12 && fields > 60, "the layout list lost entries");
}
