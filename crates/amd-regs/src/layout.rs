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
