//! Kernel arguments: a typed list checked against the code object's metadata when a
//! dispatch is recorded.
//!
//! Buffers, scalars of every width the OpenCL and HIP front ends pass by value, and
//! symbols (integers bound at submit) are checked for kind and size against the
//! kernel's `.args`; where the metadata names the type (`.type_name`), a float must go
//! to a float argument and an integer to an integer argument whose type holds it.
//! [`KernArgs::raw`] places bytes unchecked but for their size.

use std::any::Any;
use std::sync::Arc;

use crate::codeobj::{ArgInfo, ArgKind};
use crate::error::ArgProblem;
use crate::iface::DeviceInterface;
use crate::memory::Buffer;
use crate::sym::Sym;
use crate::{HcqError, Result};

/// The scalar types a kernel takes by value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScalarType {
    /// `uchar`, `uint8_t`.
    U8,
    /// `char`, `int8_t`.
    I8,
    /// `ushort`, `uint16_t`.
    U16,
    /// `short`, `int16_t`.
    I16,
    /// `uint`, `unsigned int`.
    U32,
    /// `int`.
    I32,
    /// `ulong`, `size_t`, `unsigned long long`.
    U64,
    /// `long`, `long long`.
    I64,
    /// `half`, `_Float16`.
    F16,
    /// `float`.
    F32,
    /// `double`.
    F64,
}

impl ScalarType {
    /// Bytes.
    pub const fn size(self) -> u32 {
        match self {
            ScalarType::U8 | ScalarType::I8 => 1,
            ScalarType::U16 | ScalarType::I16 | ScalarType::F16 => 2,
            ScalarType::U32 | ScalarType::I32 | ScalarType::F32 => 4,
            ScalarType::U64 | ScalarType::I64 | ScalarType::F64 => 8,
        }
    }

    /// Whether it is a floating-point type.
    pub const fn is_float(self) -> bool {
        matches!(self, ScalarType::F16 | ScalarType::F32 | ScalarType::F64)
    }

    const fn signed(self) -> bool {
        matches!(
            self,
            ScalarType::I8 | ScalarType::I16 | ScalarType::I32 | ScalarType::I64
        )
    }

    /// The type a metadata `.type_name` names (OpenCL C and HIP spellings), if known.
    pub fn from_type_name(name: &str) -> Option<ScalarType> {
        let n = name.trim();
        Some(match n {
            "uchar" | "unsigned char" | "uint8_t" | "bool" => ScalarType::U8,
            "char" | "signed char" | "int8_t" => ScalarType::I8,
            "ushort" | "unsigned short" | "uint16_t" => ScalarType::U16,
            "short" | "int16_t" => ScalarType::I16,
            "uint" | "unsigned int" | "uint32_t" | "unsigned" => ScalarType::U32,
            "int" | "int32_t" => ScalarType::I32,
            "ulong" | "unsigned long" | "unsigned long long" | "uint64_t" | "size_t" => ScalarType::U64,
            "long" | "long long" | "int64_t" | "ptrdiff_t" => ScalarType::I64,
            "half" | "_Float16" | "__fp16" => ScalarType::F16,
            "float" => ScalarType::F32,
            "double" => ScalarType::F64,
            _ => return None,
        })
    }

    fn name(self) -> &'static str {
        match self {
            ScalarType::U8 => "u8",
            ScalarType::I8 => "i8",
            ScalarType::U16 => "u16",
            ScalarType::I16 => "i16",
            ScalarType::U32 => "u32",
            ScalarType::I32 => "i32",
            ScalarType::U64 => "u64",
            ScalarType::I64 => "i64",
            ScalarType::F16 => "f16",
            ScalarType::F32 => "f32",
            ScalarType::F64 => "f64",
        }
    }
}

/// One argument as given.
#[derive(Clone)]
pub(crate) enum Arg {
    /// A buffer's address (a symbol for one bound at submit).
    Buffer(Sym),
    /// A typed constant: its type and its value (integers as i128 to check range,
    /// floats as their bits).
    Value(ScalarType, i128),
    /// An integer bound at submit, of this type.
    Sym(ScalarType, Sym),
    /// Raw bits for an argument of this many bytes: must fit, no type check (the
    /// word form of [`crate::Program::launch`]).
    Bits(u64),
    /// Raw bytes, checked for size only.
    Raw(Vec<u8>),
}

impl std::fmt::Debug for Arg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Arg::Buffer(s) => write!(f, "buffer {s:#?}"),
            Arg::Value(ScalarType::F32, v) => write!(f, "f32 {}", f32::from_bits(*v as u32)),
            Arg::Value(ScalarType::F64, v) => write!(f, "f64 {}", f64::from_bits(*v as u64)),
            Arg::Value(ScalarType::F16, v) => write!(f, "f16 (bits {:#06x})", *v as u16),
            Arg::Value(t, v) => write!(f, "{} {v}", t.name()),
            Arg::Sym(t, s) => write!(f, "{} {s}", t.name()),
            Arg::Bits(b) => write!(f, "bits {b:#x}"),
            Arg::Raw(b) => write!(f, "{} raw bytes", b.len()),
        }
    }
}

/// A kernel's arguments, in order (hidden arguments are the runtime's).
///
/// ```
/// use amd_hcq::{KernArgs, Var};
/// let n = Var::new("n");
/// let args = KernArgs::new().f32(2.0).sym_u32(&n).u64(7);
/// assert_eq!(args.len(), 3);
/// ```
#[derive(Clone, Default)]
pub struct KernArgs {
    pub(crate) items: Vec<Arg>,
    pub(crate) keep: Vec<Arc<dyn Any + Send + Sync>>,
    /// Where each buffer given as a [`Buffer`] is mapped, by item index.
    pub(crate) resident: Vec<(usize, Arc<crate::memory::Residency>)>,
}

impl std::fmt::Debug for KernArgs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(&self.items).finish()
    }
}

macro_rules! int_args {
    ($($f:ident $t:ty => $st:ident),*) => {$(
        #[doc = concat!("A `", stringify!($t), "` by value.")]
        pub fn $f(self, v: $t) -> Self {
            self.push(Arg::Value(ScalarType::$st, v as i128))
        }
    )*};
}

impl KernArgs {
    /// No arguments yet.
    pub fn new() -> Self {
        KernArgs::default()
    }

    /// No arguments yet, with room for `n`.
    pub fn with_capacity(n: usize) -> Self {
        // Keepalives are taken as buffers are given (not by the word form of a
        // launch): none is made up front.
        KernArgs {
            items: Vec::with_capacity(n),
            keep: Vec::new(),
            resident: Vec::with_capacity(n),
        }
    }

    fn push(mut self, a: Arg) -> Self {
        self.items.push(a);
        self
    }

    /// Arguments given.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether none was given.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// A buffer (its address). The recorded queue keeps it alive.
    pub fn buffer<I: DeviceInterface>(mut self, b: &Buffer<I>) -> Self {
        self.keep.push(b.keepalive());
        self.resident.push((self.items.len(), b.residency().clone()));
        self.push(Arg::Buffer(Sym::Const(b.va())))
    }

    /// A buffer whose address is bound at submit (e.g. with [`crate::Bindings::buffer`]).
    pub fn buffer_sym(self, addr: impl Into<Sym>) -> Self {
        self.push(Arg::Buffer(addr.into()))
    }

    int_args!(u8 u8 => U8, i8 i8 => I8, u16 u16 => U16, i16 i16 => I16, u32 u32 => U32,
              i32 i32 => I32, u64 u64 => U64, i64 i64 => I64);

    /// An `f16` by value, as its IEEE binary16 bits.
    pub fn f16_bits(self, bits: u16) -> Self {
        self.push(Arg::Value(ScalarType::F16, bits as i128))
    }

    /// An `f32` by value.
    pub fn f32(self, v: f32) -> Self {
        self.push(Arg::Value(ScalarType::F32, v.to_bits() as i128))
    }

    /// An `f64` by value.
    pub fn f64(self, v: f64) -> Self {
        self.push(Arg::Value(ScalarType::F64, v.to_bits() as i128))
    }

    /// An integer of type `ty` bound at submit; it must fit the argument.
    pub fn sym(self, ty: ScalarType, v: impl Into<Sym>) -> Self {
        self.push(Arg::Sym(ty, v.into()))
    }

    /// A `u32` bound at submit.
    pub fn sym_u32(self, v: impl Into<Sym>) -> Self {
        self.sym(ScalarType::U32, v)
    }

    /// Bytes placed as they are; only their count is checked against the argument.
    pub fn raw(self, bytes: &[u8]) -> Self {
        self.push(Arg::Raw(bytes.to_vec()))
    }

    pub(crate) fn bits(self, bits: u64) -> Self {
        self.push(Arg::Bits(bits))
    }
}

impl Arg {
    /// Whether the argument is known now (no symbol left to bind at submit).
    pub(crate) fn is_const(&self) -> bool {
        match self {
            Arg::Buffer(s) | Arg::Sym(_, s) => s.as_const().is_some(),
            Arg::Value(..) | Arg::Bits(_) | Arg::Raw(_) => true,
        }
    }

    /// What the argument is, for an error (`u32 value`, `f32 symbol`).
    fn describe(&self) -> String {
        match self {
            Arg::Buffer(_) => "buffer".into(),
            Arg::Value(t, _) => format!("{} value", t.name()),
            Arg::Sym(t, _) => format!("{} symbol", t.name()),
            Arg::Bits(_) => "value word".into(),
            Arg::Raw(_) => "raw byte string".into(),
        }
    }
}

/// What to place for an argument: constant bytes (up to 8, or a slice), or a symbol
/// of `bytes` bytes.
pub(crate) enum Placed<'a> {
    Small([u8; 8], usize),
    Slice(&'a [u8]),
    Sym { expr: &'a Sym, bytes: u32, max: u64 },
}

fn small(v: u64, n: u32) -> Placed<'static> {
    Placed::Small(v.to_le_bytes(), n as usize)
}

/// Checks `arg` against the metadata's `info` (argument `i` of `kernel`) and says what
/// to place.
pub(crate) fn place<'a>(kernel: &str, i: usize, info: &ArgInfo, arg: &'a Arg) -> Result<Placed<'a>> {
    let size = info.size;
    let err = |problem: ArgProblem| HcqError::KernelArgument {
        kernel: kernel.to_string(),
        index: i,
        name: info.name.clone(),
        problem: Box::new(problem),
    };
    let declared = info.scalar;
    let declared_name = info.type_name.as_deref().unwrap_or("by value");
    let wrong_type = |expected: &str, given: String| {
        err(ArgProblem::Type {
            expected: expected.to_string(),
            given,
        })
    };
    let wrong_size = |given: &str, given_bytes: usize| {
        err(ArgProblem::Size {
            expected: declared_name.to_string(),
            expected_bytes: size as usize,
            given: given.to_string(),
            given_bytes,
        })
    };
    let too_big = |value: i128, ty: String| err(ArgProblem::Range { value, ty });
    match (&info.kind, arg) {
        (ArgKind::Buffer, Arg::Buffer(s)) => {
            if size != 8 {
                return Err(err(ArgProblem::Size {
                    expected: "buffer".into(),
                    expected_bytes: size as usize,
                    given: "buffer address".into(),
                    given_bytes: 8,
                }));
            }
            Ok(match s.as_const() {
                Some(v) => small(v, 8),
                None => Placed::Sym {
                    expr: s,
                    bytes: 8,
                    max: u64::MAX,
                },
            })
        }
        (ArgKind::Buffer, other) => Err(wrong_type("buffer", other.describe())),
        (ArgKind::Value, Arg::Buffer(_)) => Err(wrong_type(declared_name, "buffer".into())),
        (ArgKind::Value, Arg::Value(t, v)) => {
            if t.size() != size {
                return Err(wrong_size(t.name(), t.size() as usize));
            }
            if let Some(d) = declared {
                if d.is_float() != t.is_float() || (t.is_float() && d != *t) {
                    return Err(wrong_type(declared_name, t.name().into()));
                }
                if !d.is_float() && !int_fits(d, *v) {
                    return Err(too_big(*v, declared_name.into()));
                }
            }
            Ok(small(*v as u64, size))
        }
        (ArgKind::Value, Arg::Sym(t, s)) => {
            if t.is_float() {
                return Err(wrong_type("integer", t.name().into()));
            }
            if t.size() != size {
                return Err(wrong_size(t.name(), t.size() as usize));
            }
            if declared.is_some_and(|d| d.is_float()) {
                return Err(wrong_type(declared_name, format!("{} symbol", t.name())));
            }
            let ty = declared.unwrap_or(*t);
            let max = match ty.size() {
                8 => u64::MAX,
                n if ty.signed() => (1u64 << (8 * n - 1)) - 1,
                n => (1u64 << (8 * n)) - 1,
            };
            Ok(match s.as_const() {
                Some(v) if v <= max => small(v, size),
                Some(v) => return Err(too_big(i128::from(v), declared_name.into())),
                None => Placed::Sym {
                    expr: s,
                    bytes: size,
                    max,
                },
            })
        }
        (ArgKind::Value, Arg::Bits(b)) => match size {
            8 => Ok(small(*b, 8)),
            1 | 2 | 4 if size == 4 && *b <= u32::MAX as u64 || *b >> (8 * size) == 0 => Ok(small(*b, size)),
            1 | 2 | 4 => Err(too_big(i128::from(*b), format!("{size}-byte argument"))),
            _ => Err(wrong_size("value word", 4)),
        },
        (ArgKind::Value, Arg::Raw(b)) => {
            if b.len() != size as usize {
                return Err(wrong_size("raw bytes", b.len()));
            }
            Ok(Placed::Slice(b))
        }
        // Hidden arguments are the runtime's: the caller's arguments are matched to the
        // buffer and value ones only.
        (ArgKind::Hidden(_), _) => Err(HcqError::Internal {
            what: "a hidden kernel argument matched to a caller's argument",
        }),
    }
}

fn int_fits(t: ScalarType, v: i128) -> bool {
    let bits = 8 * t.size();
    if t.signed() {
        let lim = 1i128 << (bits - 1);
        (-lim..lim).contains(&v)
    } else {
        (0..1i128 << bits).contains(&v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(kind: ArgKind, size: u32, ty: Option<&str>) -> ArgInfo {
        ArgInfo {
            name: Some("x".into()),
            offset: 0,
            size,
            kind,
            type_name: ty.map(String::from),
            scalar: ty.and_then(ScalarType::from_type_name),
        }
    }

    #[test]
    fn checks_kind_type_and_range() {
        let int = info(ArgKind::Value, 4, Some("int"));
        let float = info(ArgKind::Value, 4, Some("float"));
        let ok = |i: &ArgInfo, a: Arg| place("k", 0, i, &a).is_ok();
        assert!(ok(&int, Arg::Value(ScalarType::I32, -5)));
        assert!(ok(&int, Arg::Value(ScalarType::U32, 5)));
        assert!(!ok(&int, Arg::Value(ScalarType::U32, 3_000_000_000)));
        assert!(!ok(&int, Arg::Value(ScalarType::F32, 0)));
        assert!(!ok(&float, Arg::Value(ScalarType::I32, 2)));
        assert!(ok(&float, Arg::Value(ScalarType::F32, 2.0f32.to_bits() as i128)));
        assert!(!ok(&float, Arg::Value(ScalarType::F64, 0)));
        assert!(!ok(&float, Arg::Sym(ScalarType::U32, Sym::Const(1))));
        assert!(!ok(&int, Arg::Buffer(Sym::Const(0x1000))));
        assert!(!ok(&info(ArgKind::Buffer, 8, None), Arg::Value(ScalarType::U64, 1)));
        assert!(ok(
            &info(ArgKind::Value, 2, Some("short")),
            Arg::Value(ScalarType::I16, -1)
        ));
        assert!(!ok(
            &info(ArgKind::Value, 2, Some("short")),
            Arg::Value(ScalarType::U32, 1)
        ));
        assert!(ok(&info(ArgKind::Value, 3, None), Arg::Raw(vec![1, 2, 3])));
        assert!(!ok(&info(ArgKind::Value, 3, None), Arg::Raw(vec![1, 2])));
        let e = place("saxpy", 2, &float, &Arg::Value(ScalarType::I32, 2))
            .err()
            .unwrap();
        assert_eq!(e.to_string(), "kernel saxpy, argument 2 (x): a i32 for a float");
        assert_eq!(
            e,
            HcqError::KernelArgument {
                kernel: "saxpy".into(),
                index: 2,
                name: Some("x".into()),
                problem: Box::new(ArgProblem::Type {
                    expected: "float".into(),
                    given: "i32".into(),
                }),
            }
        );
    }
}
