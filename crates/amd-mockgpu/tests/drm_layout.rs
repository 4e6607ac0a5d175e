//! The DRM structs the mock's render nodes answer with equal Linux 6.12's
//! `include/uapi/drm/drm.h` and `amdgpu_drm.h` (copied in `vendor/drm/`), as a C
//! compiler lays them out: every struct's size and field offsets. Skipped, saying so,
//! where no C compiler or no `<linux/types.h>` is present.

use std::path::Path;

use amd_mockgpu::drm::abi::STRUCTS;
use amd_regs::layout::run_c_program;

const INCLUDE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/vendor");

/// The C expression of a field's offset where the Rust field is not a C member of the
/// same name (`None`: padding the C struct leaves implicit).
fn c_offset(s: &str, f: &str) -> Option<String> {
    match (s, f) {
        // The one padding member the header names.
        ("drm_amdgpu_info_gds", "_pad") => Some(format!("offsetof(struct {s}, _pad)")),
        // Padding the header leaves implicit: after `drm_version`'s `int
        // version_patchlevel`, and inside and at the end of `drm_amdgpu_info_device`.
        (_, f) if f.starts_with('_') => None,
        // The request's arguments, a union of per-query structs.
        ("drm_amdgpu_info", "args") => Some("offsetof(struct drm_amdgpu_info, mode_crtc)".into()),
        _ => Some(format!("offsetof(struct {s}, {f})")),
    }
}

#[test]
fn drm_structs_match_the_headers() {
    if !Path::new("/usr/include/linux/types.h").exists() {
        eprintln!("skipped: <linux/types.h> is not installed (Debian: linux-libc-dev)");
        return;
    }
    let mut c = String::from(
        // `__user` marks user pointers for the kernel's checker; installing the headers
        // strips it, as this does.
        "#include <stdio.h>\n#include <stddef.h>\n#define __user\n#include <drm/drm.h>\n#include <drm/amdgpu_drm.h>\n\
         int main(void) {\n",
    );
    let mut fields = 0;
    for s in STRUCTS {
        c.push_str(&format!("  printf(\"size {0} %zu\\n\", sizeof(struct {0}));\n", s.name));
        for f in s.fields {
            if let Some(expr) = c_offset(s.name, f.name) {
                c.push_str(&format!("  printf(\"field {}.{} %zu\\n\", {expr});\n", s.name, f.name));
            }
        }
    }
    c.push_str("  return 0;\n}\n");
    let Some(got) = run_c_program(&c, &[Path::new(INCLUDE)], &[]).unwrap() else {
        eprintln!("skipped: no C compiler to check the DRM structs against {INCLUDE}/drm");
        return;
    };
    for s in STRUCTS {
        assert_eq!(
            got[&("size".into(), s.name.into())],
            s.size as u64,
            "sizeof(struct {})",
            s.name
        );
        for f in s.fields {
            if c_offset(s.name, f.name).is_some() {
                let key = ("field".to_string(), format!("{}.{}", s.name, f.name));
                assert_eq!(got[&key], f.offset as u64, "offset of {}.{}", s.name, f.name);
                fields += 1;
            }
        }
    }
    assert!(
        STRUCTS.len() == 10 && fields >= 100,
        "{} structs, {fields} fields compared",
        STRUCTS.len()
    );
}
