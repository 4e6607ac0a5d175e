//! Symbolic values: variables and small expressions over them that a queue carries in
//! place of constants, bound to numbers when the queue is submitted.
//!
//! A [`Sym`] is a constant, a [`Var`], or `+ - * / %` of two symbols (as tinygrad
//! 0.10.1's `sint` launch dimensions are). Arithmetic at submit is checked: an
//! overflow, a negative result or a division by zero is an error naming the
//! expression, never a wrapped number.
//!
//! ```
//! use amd_hcq::{Bindings, Sym, Var};
//!
//! let n = Var::new("n");
//! let groups = (Sym::from(&n) + 255) / 256;
//! let mut vals = Bindings::new();
//! vals.set(&n, 1000);
//! assert_eq!(groups.eval(&vals).unwrap(), 4);
//! assert_eq!(groups.to_string(), "((n + 255) / 256)");
//! ```

use std::fmt;
use std::ops;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use crate::{HcqError, Result};

/// A named variable. Each `Var::new` is a distinct variable, even with the same name;
/// clones are the same variable.
#[derive(Clone)]
pub struct Var {
    id: u32,
    name: Arc<str>,
}

impl Var {
    /// A new variable called `name` (the name is for messages only).
    pub fn new(name: &str) -> Var {
        static NEXT: AtomicU32 = AtomicU32::new(1);
        // Relaxed: the counter only has to hand out distinct ids.
        let id = NEXT.fetch_add(1, Ordering::Relaxed);
        Var { id, name: name.into() }
    }

    /// A variable of the runtime's own, with a name shared by all of its kind.
    pub(crate) fn internal(name: &'static str) -> Var {
        use std::collections::HashMap;
        use std::sync::{Mutex, OnceLock};
        static NAMES: OnceLock<Mutex<HashMap<&'static str, Arc<str>>>> = OnceLock::new();
        let names = NAMES.get_or_init(Default::default);
        let name = match names.lock() {
            Ok(mut m) => m.entry(name).or_insert_with(|| name.into()).clone(),
            Err(_) => name.into(),
        };
        static NEXT: AtomicU32 = AtomicU32::new(1 << 31);
        // Relaxed: the counter only has to hand out distinct ids.
        let id = NEXT.fetch_add(1, Ordering::Relaxed);
        Var { id, name }
    }

    /// The name given at creation.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// What tells it from every other variable.
    pub(crate) fn id(&self) -> u32 {
        self.id
    }
}

impl PartialEq for Var {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id
    }
}
impl Eq for Var {}

impl fmt::Debug for Var {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Var({}#{})", self.name, self.id)
    }
}

impl fmt::Display for Var {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)
    }
}

/// An operator of a [`Sym`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Op {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    /// Larger of the two.
    Max,
    /// 1 when the left is greater, else 0.
    Gt,
}

impl Op {
    #[inline]
    pub(crate) fn apply(self, a: u64, b: u64) -> Option<u64> {
        match self {
            Op::Add => a.checked_add(b),
            Op::Sub => a.checked_sub(b),
            Op::Mul => a.checked_mul(b),
            Op::Div => a.checked_div(b),
            Op::Mod => a.checked_rem(b),
            Op::Max => Some(a.max(b)),
            Op::Gt => Some((a > b) as u64),
        }
    }

    fn symbol(self) -> &'static str {
        match self {
            Op::Add => "+",
            Op::Sub => "-",
            Op::Mul => "*",
            Op::Div => "/",
            Op::Mod => "%",
            Op::Max => "max",
            Op::Gt => ">",
        }
    }
}

/// A value a queue carries: a constant, a variable, or an expression over them.
#[derive(Clone, PartialEq, Eq)]
pub enum Sym {
    /// A number known when the queue is built.
    Const(u64),
    /// A variable bound at submit.
    Var(Var),
    /// An operation on two symbols.
    #[doc(hidden)]
    Op(Arc<(OpNode, Sym, Sym)>),
}

/// The operator of [`Sym::Op`] (opaque).
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpNode(Op);

impl Sym {
    pub(crate) fn op(op: Op, a: Sym, b: Sym) -> Sym {
        // Fold constants so an expression of constants costs nothing at submit.
        if let (Sym::Const(x), Sym::Const(y)) = (&a, &b)
            && let Some(v) = op.apply(*x, *y)
        {
            return Sym::Const(v);
        }
        Sym::Op(Arc::new((OpNode(op), a, b)))
    }

    /// The larger of two symbols.
    pub fn max(self, other: impl Into<Sym>) -> Sym {
        Sym::op(Op::Max, self, other.into())
    }

    /// The constant, if it is one.
    pub fn as_const(&self) -> Option<u64> {
        match self {
            Sym::Const(v) => Some(*v),
            _ => None,
        }
    }

    /// Whether it depends on no variable.
    pub fn is_const(&self) -> bool {
        matches!(self, Sym::Const(_))
    }

    /// The value with the variables of `vals`; an unbound variable or an overflow is an
    /// error naming the expression.
    pub fn eval(&self, vals: &Bindings) -> Result<u64> {
        let mut vars = Vec::new();
        self.vars(&mut vars);
        let mut table = Vec::with_capacity(vars.len());
        for v in &vars {
            table.push(vals.get(v).ok_or_else(|| unbound(v))?);
        }
        // Every variable of `self` is in `vars`, so the position is found.
        let e = Expr::compile(self, &mut |v| vars.iter().position(|x| x == v).unwrap_or(0) as u32);
        e.eval(&table).map_err(|_| overflow(self))
    }

    /// Appends the variables it uses (each once) to `out`.
    pub(crate) fn vars(&self, out: &mut Vec<Var>) {
        match self {
            Sym::Const(_) => {}
            Sym::Var(v) => {
                if !out.contains(v) {
                    out.push(v.clone());
                }
            }
            Sym::Op(n) => {
                n.1.vars(out);
                n.2.vars(out);
            }
        }
    }
}

pub(crate) fn unbound(v: &Var) -> HcqError {
    HcqError::Unbound {
        name: v.name().to_string(),
    }
}

fn overflow(s: &Sym) -> HcqError {
    HcqError::SymbolOverflow { what: s.to_string() }
}

impl fmt::Display for Sym {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Sym::Const(v) => write!(f, "{v}"),
            Sym::Var(v) => write!(f, "{v}"),
            Sym::Op(n) if n.0.0 == Op::Max => write!(f, "max({}, {})", n.1, n.2),
            Sym::Op(n) => write!(f, "({} {} {})", n.1, n.0.0.symbol(), n.2),
        }
    }
}

impl fmt::Debug for Sym {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

macro_rules! from_int {
    ($($t:ty),*) => {$(
        impl From<$t> for Sym {
            fn from(v: $t) -> Sym {
                Sym::Const(v as u64)
            }
        }
    )*};
}
from_int!(u8, u16, u32, u64, usize);

macro_rules! from_signed {
    ($($t:ty),*) => {$(
        /// A negative number stays the expression `0 - n`, which is an error when the
        /// queue is submitted (values are unsigned).
        impl From<$t> for Sym {
            fn from(v: $t) -> Sym {
                if v >= 0 {
                    Sym::Const(v as u64)
                } else {
                    Sym::op(Op::Sub, Sym::Const(0), Sym::Const(v.unsigned_abs() as u64))
                }
            }
        }
    )*};
}
from_signed!(i32, i64);

impl From<Var> for Sym {
    fn from(v: Var) -> Sym {
        Sym::Var(v)
    }
}

impl From<&Var> for Sym {
    fn from(v: &Var) -> Sym {
        Sym::Var(v.clone())
    }
}

impl From<&Sym> for Sym {
    fn from(s: &Sym) -> Sym {
        s.clone()
    }
}

macro_rules! ops {
    ($($tr:ident $f:ident $op:ident),*) => {$(
        impl<T: Into<Sym>> ops::$tr<T> for Sym {
            type Output = Sym;
            fn $f(self, rhs: T) -> Sym {
                Sym::op(Op::$op, self, rhs.into())
            }
        }
        impl<T: Into<Sym>> ops::$tr<T> for &Sym {
            type Output = Sym;
            fn $f(self, rhs: T) -> Sym {
                Sym::op(Op::$op, self.clone(), rhs.into())
            }
        }
        impl<T: Into<Sym>> ops::$tr<T> for Var {
            type Output = Sym;
            fn $f(self, rhs: T) -> Sym {
                Sym::op(Op::$op, Sym::Var(self), rhs.into())
            }
        }
        impl<T: Into<Sym>> ops::$tr<T> for &Var {
            type Output = Sym;
            fn $f(self, rhs: T) -> Sym {
                Sym::op(Op::$op, Sym::Var(self.clone()), rhs.into())
            }
        }
    )*};
}
ops!(Add add Add, Sub sub Sub, Mul mul Mul, Div div Div, Rem rem Mod);

/// Values for the variables of a submission.
#[derive(Clone, Debug, Default)]
pub struct Bindings {
    /// The variables' ids, searched at each lookup (apart from the variables, which
    /// only errors and debugging need).
    ids: Vec<u32>,
    values: Vec<u64>,
    vars: Vec<Var>,
}

impl Bindings {
    /// No values.
    pub fn new() -> Self {
        Bindings::default()
    }

    /// No bindings, for the runtime's own submissions of lists without variables (a
    /// launch: nothing made or dropped for it).
    pub(crate) const NONE: &'static Bindings = &Bindings {
        ids: Vec::new(),
        values: Vec::new(),
        vars: Vec::new(),
    };

    /// Binds `var` to `value` (replacing an earlier value).
    pub fn set(&mut self, var: &Var, value: u64) -> &mut Self {
        match self.position(var) {
            Some(i) => self.values[i] = value,
            None => {
                self.ids.push(var.id);
                self.values.push(value);
                self.vars.push(var.clone());
            }
        }
        self
    }

    #[inline]
    fn position(&self, var: &Var) -> Option<usize> {
        self.ids.iter().position(|&id| id == var.id)
    }

    /// The value of `var`, if bound.
    #[inline]
    pub fn get(&self, var: &Var) -> Option<u64> {
        self.position(var).and_then(|i| self.values.get(i).copied())
    }

    /// The value of the variable with id `id`, if bound, looked for first where `hint`
    /// says (then set to where it is): a caller reusing its bindings finds each
    /// variable at once.
    #[inline]
    pub(crate) fn get_id(&self, id: u32, hint: &mut usize) -> Option<u64> {
        if self.ids.get(*hint) != Some(&id) {
            *hint = self.ids.iter().position(|&x| x == id)?;
        }
        self.values.get(*hint).copied()
    }

    /// Whether nothing is bound.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }
}

impl<const N: usize> From<[(&Var, u64); N]> for Bindings {
    fn from(pairs: [(&Var, u64); N]) -> Self {
        let mut b = Bindings::new();
        for (v, x) in pairs {
            b.set(v, x);
        }
        b
    }
}

/// A [`Sym`] compiled against a queue's variable table (variables by index).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Expr {
    Const(u64),
    Var(u32),
    /// A variable plus a constant (addresses of kernel arguments), without a box.
    VarAdd(u32, u64),
    Op(Box<(Op, Expr, Expr)>),
}

impl Expr {
    /// Compiles `s`, numbering variables with `index`.
    pub(crate) fn compile(s: &Sym, index: &mut impl FnMut(&Var) -> u32) -> Expr {
        match s {
            Sym::Const(v) => Expr::Const(*v),
            Sym::Var(v) => Expr::Var(index(v)),
            Sym::Op(n) => Expr::Op(Box::new((
                n.0.0,
                Self::compile(&n.1, index),
                Self::compile(&n.2, index),
            ))),
        }
    }

    /// Appends the variable indices it uses.
    pub(crate) fn var_indices(&self, out: &mut Vec<u32>) {
        match self {
            Expr::Const(_) => {}
            Expr::Var(i) | Expr::VarAdd(i, _) => out.push(*i),
            Expr::Op(n) => {
                n.1.var_indices(out);
                n.2.var_indices(out);
            }
        }
    }

    /// The expression with each variable `i` replaced by `map[i]`.
    pub(crate) fn substitute(&self, map: &[Expr]) -> Expr {
        match self {
            Expr::Const(v) => Expr::Const(*v),
            Expr::Var(i) => map.get(*i as usize).cloned().unwrap_or(Expr::Var(*i)),
            Expr::VarAdd(i, c) => match map.get(*i as usize) {
                Some(Expr::Var(j)) => Expr::VarAdd(*j, *c),
                Some(Expr::VarAdd(j, d)) if d.checked_add(*c).is_some() => Expr::VarAdd(*j, d + c),
                Some(e) => Expr::Op(Box::new((Op::Add, e.clone(), Expr::Const(*c)))),
                None => Expr::VarAdd(*i, *c),
            },
            Expr::Op(n) => Expr::Op(Box::new((n.0, n.1.substitute(map), n.2.substitute(map)))),
        }
    }

    /// The value with variable `i` at `vals[i]`; `Err` on overflow.
    #[inline]
    pub(crate) fn eval(&self, vals: &[u64]) -> std::result::Result<u64, ()> {
        match self {
            Expr::Const(v) => Ok(*v),
            Expr::Var(i) => vals.get(*i as usize).copied().ok_or(()),
            Expr::VarAdd(i, c) => vals.get(*i as usize).and_then(|v| v.checked_add(*c)).ok_or(()),
            Expr::Op(n) => n.0.apply(n.1.eval(vals)?, n.2.eval(vals)?).ok_or(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evaluates_with_checked_arithmetic() {
        let (a, b) = (Var::new("a"), Var::new("b"));
        let e = (&a * 4 + &b) % 7 - 1;
        let vals = Bindings::from([(&a, 5), (&b, 3)]);
        assert_eq!(e.eval(&vals).unwrap(), 1);
        assert_eq!(e.to_string(), "((((a * 4) + b) % 7) - 1)");
        let zero = Bindings::from([(&a, 0), (&b, 1)]);
        assert_eq!(e.eval(&zero).unwrap(), 0);
        let under = Sym::from(&a) - 1;
        let err = under.eval(&zero).unwrap_err().to_string();
        assert!(err.contains("(a - 1)"), "{err}");
        let missing = Bindings::from([(&a, 1)]);
        assert!(
            e.eval(&missing)
                .unwrap_err()
                .to_string()
                .contains("variable b is not bound")
        );
        assert!((Sym::from(&a) / 0u32).eval(&vals).is_err());
        assert!((Sym::from(&a) * u64::MAX).eval(&vals).is_err());
        assert_eq!((Sym::from(3u32) + 4u32).as_const(), Some(7));
        assert_eq!(Sym::from(&a).max(9u32).eval(&vals).unwrap(), 9);
        // An integer literal is an i32; a negative one is refused when evaluated.
        assert_eq!(Sym::from(5).as_const(), Some(5));
        assert!(Sym::from(-5).eval(&vals).unwrap_err().to_string().contains("(0 - 5)"));
    }
}
