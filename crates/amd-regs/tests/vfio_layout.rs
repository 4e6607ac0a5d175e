//! Every VFIO ABI struct's size and field offsets, and every request number and
//! constant, equal those of the system header `/usr/include/linux/vfio.h`, as a C
//! compiler sees them.
//! Skipped, saying so, where no C compiler or no header is present.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;

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
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    if Command::new(&cc).arg("--version").output().is_err() {
        eprintln!("skipped: no C compiler ({cc}) to check the VFIO ABI against {HEADER}");
        return;
    }
    if !Path::new(HEADER).exists() {
        eprintln!("skipped: {HEADER} is not installed (Debian: linux-libc-dev)");
        return;
    }
    let dir = std::env::temp_dir().join(format!("amd-am-vfio-abi-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("abi.c");
    let exe = dir.join("abi");
    std::fs::write(&src, c_program()).unwrap();
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
    let c: BTreeMap<(String, String), u64> = text
        .lines()
        .map(|l| {
            let mut p = l.split_whitespace();
            let (kind, name, v) = (p.next().unwrap(), p.next().unwrap(), p.next().unwrap());
            ((kind.to_string(), name.to_string()), v.parse().unwrap())
        })
        .collect();

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
