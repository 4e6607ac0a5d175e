//! What the layout tests compare with a C compiler's view of a header: a struct's C
//! name, size and field offsets.

/// One field of an ABI struct: its C name and offset.
#[derive(Debug, Clone, Copy)]
pub struct FieldLayout {
    /// Field name as in the header.
    pub name: &'static str,
    /// Byte offset.
    pub offset: usize,
}

/// An ABI struct's C name, size and fields, for the layout tests.
#[derive(Debug, Clone, Copy)]
pub struct StructLayout {
    /// Struct name as in the header (without `struct`).
    pub name: &'static str,
    /// `sizeof`.
    pub size: usize,
    /// Fields in declaration order.
    pub fields: &'static [FieldLayout],
}

/// Defines a C ABI struct as the header lays it out: `repr(C)`, zerocopy's byte
/// conversions, its size pinned by a `const` assertion, and `LAYOUT` (its name, size
/// and field offsets) for the test that compares it with the header. For the VFIO ABI
/// here and the KFD ABI of `amd-kfd` (which needs `zerocopy` among its dependencies).
#[macro_export]
macro_rules! abi_struct {
    ($(#[$m:meta])* pub struct $name:ident { $($(#[$fm:meta])* pub $f:ident : $t:ty,)* } size = $size:literal;) => {
        $(#[$m])*
        #[repr(C)]
        #[derive(
            Debug, Clone, Copy, Default, PartialEq, Eq,
            ::zerocopy::FromBytes, ::zerocopy::IntoBytes, ::zerocopy::Immutable, ::zerocopy::KnownLayout
        )]
        pub struct $name { $($(#[$fm])* pub $f: $t,)* }

        const _: () = assert!(::std::mem::size_of::<$name>() == $size);

        impl $name {
            /// Name, size and field offsets, for the layout test.
            pub const LAYOUT: $crate::layout::StructLayout = $crate::layout::StructLayout {
                name: stringify!($name),
                size: ::std::mem::size_of::<$name>(),
                fields: &[$($crate::layout::FieldLayout {
                    name: stringify!($f),
                    offset: ::std::mem::offset_of!($name, $f),
                },)*],
            };
        }
    };
}

/// What a layout test's C program printed: `kind name value` lines, by (kind, name).
#[cfg(feature = "test-utils")]
pub type CValues = std::collections::BTreeMap<(String, String), u64>;

/// Compiles `source` with the system's C compiler (`CC`, else `cc`), the folders of
/// `include` searched first and the `stand_ins` (relative path, contents) after the
/// system's own headers, runs it and reads its `kind name value` lines. `Ok(None)`
/// where there is no C compiler (the caller says it skipped); a compile or run failure
/// is an error with the compiler's message. For the layout tests of the crates that
/// pin C layouts (behind the `test-utils` feature).
#[cfg(feature = "test-utils")]
pub fn run_c_program(
    source: &str,
    include: &[&std::path::Path],
    stand_ins: &[(&str, &str)],
) -> Result<Option<CValues>, String> {
    use std::process::Command;
    use std::sync::atomic::{AtomicU32, Ordering};

    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    if Command::new(&cc).arg("--version").output().is_err() {
        return Ok(None);
    }
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let dir = std::env::temp_dir().join(format!(
        "amd-regs-layout-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    let io = |e: std::io::Error| format!("{}: {e}", dir.display());
    std::fs::create_dir_all(&dir).map_err(io)?;
    for (path, text) in stand_ins {
        let p = dir.join("stand-ins").join(path);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).map_err(io)?;
        }
        std::fs::write(p, text).map_err(io)?;
    }
    let (src, exe) = (dir.join("layout.c"), dir.join("layout"));
    std::fs::write(&src, source).map_err(io)?;
    let mut cmd = Command::new(&cc);
    for i in include {
        cmd.arg("-I").arg(i);
    }
    let built = cmd
        .arg("-idirafter")
        .arg(dir.join("stand-ins"))
        .arg(&src)
        .arg("-o")
        .arg(&exe)
        .output()
        .map_err(|e| format!("{cc}: {e}"))?;
    let run = built.status.success().then(|| Command::new(&exe).output());
    let _ = std::fs::remove_dir_all(&dir);
    let run = match run {
        None => return Err(format!("C compile failed:\n{}", String::from_utf8_lossy(&built.stderr))),
        Some(r) => r.map_err(|e| format!("{}: {e}", exe.display()))?,
    };
    if !run.status.success() {
        return Err(format!("the layout program failed: {}", run.status));
    }
    let text = String::from_utf8_lossy(&run.stdout);
    let mut values = CValues::new();
    for l in text.lines() {
        let mut p = l.split_whitespace();
        match (p.next(), p.next(), p.next().and_then(|v| v.parse().ok())) {
            (Some(kind), Some(name), Some(v)) => {
                values.insert((kind.to_string(), name.to_string()), v);
            }
            _ => return Err(format!("the layout program printed {l:?}")),
        }
    }
    Ok(Some(values))
}

#[cfg(feature = "test-utils")]
impl StructLayout {
    /// The lines of a C layout program that print this struct's size and field
    /// offsets, as `struct c_name` (`size NAME n`, `field NAME.FIELD n`).
    pub fn c_lines(&self, c_name: &str) -> String {
        let mut c = format!("  printf(\"size {} %zu\\n\", sizeof(struct {c_name}));\n", self.name);
        for f in self.fields {
            c.push_str(&format!(
                "  printf(\"field {}.{} %zu\\n\", offsetof(struct {c_name}, {}));\n",
                self.name, f.name, f.name
            ));
        }
        c
    }
}

/// Compares what a C layout program printed with `structs`: each size and field
/// offset, panicking with the one that differs (a test helper). Returns how many
/// fields were compared.
#[cfg(feature = "test-utils")]
pub fn assert_layouts(c: &CValues, structs: &[StructLayout]) -> usize {
    let mut fields = 0;
    for s in structs {
        let size = c.get(&("size".to_string(), s.name.to_string()));
        assert_eq!(size, Some(&(s.size as u64)), "sizeof(struct {})", s.name);
        for f in s.fields {
            let got = c.get(&("field".to_string(), format!("{}.{}", s.name, f.name)));
            assert_eq!(got, Some(&(f.offset as u64)), "offset of {}.{}", s.name, f.name);
            fields += 1;
        }
    }
    fields
}

/// `STRUCTS`, every listed struct's C name, size and field offsets (the fields named
/// as in the header), for a test that compares them with the header as a C compiler
/// lays it out.
macro_rules! layouts {
    ($($t:ident { $($f:ident),* $(,)? })*) => {
        /// Every struct of this module: name, size, field offsets.
        pub const STRUCTS: &[$crate::layout::StructLayout] = &[$($crate::layout::StructLayout {
            name: stringify!($t),
            size: size_of::<$t>(),
            fields: &[$($crate::layout::FieldLayout { name: stringify!($f), offset: std::mem::offset_of!($t, $f) },)*],
        },)*];
    };
}
pub(crate) use layouts;
