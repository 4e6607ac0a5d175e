//! Buffer memory instructions (MUBUF and MTBUF) by ISA name: loads, stores and
//! atomics through a 128-bit buffer resource (V#), untyped or converted through a
//! data format, and the LDS DMA loads (`buffer_load_lds_*`), which write LDS instead
//! of VGPRs.
//!
//! Addressing: `base + soffset + stride × index + voffset + offset`, where the index
//! (IDXEN) and the offset (OFFEN) come from VADDR (index first when both) and the
//! resource's ADD_TID_ENABLE adds the lane to the index; a swizzled resource
//! (SWIZZLE_ENABLE) interleaves INDEX_STRIDE indices element by element instead
//! (`Resource::offset`). Range check: a raw buffer (stride 0) refuses an access
//! whose end passes NUM_RECORDS bytes, a structured one an index at or past
//! NUM_RECORDS; out-of-range loads read 0, stores and atomics do nothing (as the
//! hardware's range checking gives). The resource's OOB_SELECT variants are not told
//! apart.

use super::decode::Inst;
use super::exec::R;
use super::memory::{AtomicOp, MemOp, atomic, atomic_op, atomic64, mem_op};
use super::opcodes::op::mubuf;
use super::opcodes::{Mtbuf, Mubuf};
use super::wave::{M0, Wave};
use crate::error::Trap;
use crate::float::half;
use crate::memory::{AccessKind, Memory};

/// The gfx11 buffer data formats, by number, as LLVM names them (`format:[…]`).
pub(crate) const FORMATS: [&str; 64] = [
    "BUF_FMT_INVALID",
    "BUF_FMT_8_UNORM",
    "BUF_FMT_8_SNORM",
    "BUF_FMT_8_USCALED",
    "BUF_FMT_8_SSCALED",
    "BUF_FMT_8_UINT",
    "BUF_FMT_8_SINT",
    "BUF_FMT_16_UNORM",
    "BUF_FMT_16_SNORM",
    "BUF_FMT_16_USCALED",
    "BUF_FMT_16_SSCALED",
    "BUF_FMT_16_UINT",
    "BUF_FMT_16_SINT",
    "BUF_FMT_16_FLOAT",
    "BUF_FMT_8_8_UNORM",
    "BUF_FMT_8_8_SNORM",
    "BUF_FMT_8_8_USCALED",
    "BUF_FMT_8_8_SSCALED",
    "BUF_FMT_8_8_UINT",
    "BUF_FMT_8_8_SINT",
    "BUF_FMT_32_UINT",
    "BUF_FMT_32_SINT",
    "BUF_FMT_32_FLOAT",
    "BUF_FMT_16_16_UNORM",
    "BUF_FMT_16_16_SNORM",
    "BUF_FMT_16_16_USCALED",
    "BUF_FMT_16_16_SSCALED",
    "BUF_FMT_16_16_UINT",
    "BUF_FMT_16_16_SINT",
    "BUF_FMT_16_16_FLOAT",
    "BUF_FMT_10_11_11_FLOAT",
    "BUF_FMT_11_11_10_FLOAT",
    "BUF_FMT_10_10_10_2_UNORM",
    "BUF_FMT_10_10_10_2_SNORM",
    "BUF_FMT_10_10_10_2_UINT",
    "BUF_FMT_10_10_10_2_SINT",
    "BUF_FMT_2_10_10_10_UNORM",
    "BUF_FMT_2_10_10_10_SNORM",
    "BUF_FMT_2_10_10_10_USCALED",
    "BUF_FMT_2_10_10_10_SSCALED",
    "BUF_FMT_2_10_10_10_UINT",
    "BUF_FMT_2_10_10_10_SINT",
    "BUF_FMT_8_8_8_8_UNORM",
    "BUF_FMT_8_8_8_8_SNORM",
    "BUF_FMT_8_8_8_8_USCALED",
    "BUF_FMT_8_8_8_8_SSCALED",
    "BUF_FMT_8_8_8_8_UINT",
    "BUF_FMT_8_8_8_8_SINT",
    "BUF_FMT_32_32_UINT",
    "BUF_FMT_32_32_SINT",
    "BUF_FMT_32_32_FLOAT",
    "BUF_FMT_16_16_16_16_UNORM",
    "BUF_FMT_16_16_16_16_SNORM",
    "BUF_FMT_16_16_16_16_USCALED",
    "BUF_FMT_16_16_16_16_SSCALED",
    "BUF_FMT_16_16_16_16_UINT",
    "BUF_FMT_16_16_16_16_SINT",
    "BUF_FMT_16_16_16_16_FLOAT",
    "BUF_FMT_32_32_32_UINT",
    "BUF_FMT_32_32_32_SINT",
    "BUF_FMT_32_32_32_FLOAT",
    "BUF_FMT_32_32_32_32_UINT",
    "BUF_FMT_32_32_32_32_SINT",
    "BUF_FMT_32_32_32_32_FLOAT",
];

/// A data format's layout: component widths from the lowest bits up, and their kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Layout {
    bits: [u8; 4],
    n: usize,
    kind: Kind,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Unorm,
    Snorm,
    Uscaled,
    Sscaled,
    Uint,
    Sint,
    Float,
}

impl Kind {
    /// Whether registers hold the component as a float.
    fn is_float(self) -> bool {
        !matches!(self, Kind::Uint | Kind::Sint)
    }
}

/// The layout of format `f` (names list components from the highest bits down).
fn layout(f: u32) -> Option<Layout> {
    let name = FORMATS.get(f as usize)?.strip_prefix("BUF_FMT_")?;
    let (sizes, kind) = name.rsplit_once('_')?;
    let kind = match kind {
        "UNORM" => Kind::Unorm,
        "SNORM" => Kind::Snorm,
        "USCALED" => Kind::Uscaled,
        "SSCALED" => Kind::Sscaled,
        "UINT" => Kind::Uint,
        "SINT" => Kind::Sint,
        "FLOAT" => Kind::Float,
        _ => return None,
    };
    let mut bits = [0u8; 4];
    let parts: Vec<u8> = sizes.split('_').map(|p| p.parse().ok()).collect::<Option<_>>()?;
    if parts.is_empty() || parts.len() > 4 {
        return None;
    }
    for (k, b) in parts.iter().rev().enumerate() {
        bits[k] = *b;
    }
    Some(Layout {
        bits,
        n: parts.len(),
        kind,
    })
}

impl Layout {
    fn bytes(&self) -> usize {
        self.bits.iter().map(|&b| b as usize).sum::<usize>() / 8
    }

    /// Component `k` of an element's raw bits.
    fn field(&self, raw: u128, k: usize) -> u64 {
        let shift: u32 = self.bits[..k].iter().map(|&b| u32::from(b)).sum();
        let b = u32::from(self.bits[k]);
        ((raw >> shift) & ((1u128 << b) - 1)) as u64
    }

    /// Component `k` as the register value a load gives (f32 bits for the float
    /// kinds); missing components are 0, and 1 for W.
    fn load(&self, raw: u128, k: usize) -> u32 {
        if k >= self.n {
            let one = if self.kind.is_float() { 1.0f32.to_bits() } else { 1 };
            return if k == 3 { one } else { 0 };
        }
        let b = u32::from(self.bits[k]);
        let v = self.field(raw, k);
        let signed = || ((v << (64 - b)) as i64) >> (64 - b);
        let max_u = ((1u64 << b) - 1) as f64;
        let max_s = ((1u64 << (b - 1)) - 1) as f64;
        match self.kind {
            Kind::Unorm => (v as f64 / max_u) as f32,
            Kind::Snorm => ((signed() as f64 / max_s).max(-1.0)) as f32,
            Kind::Uscaled => v as f32,
            Kind::Sscaled => signed() as f32,
            Kind::Uint => return v as u32,
            Kind::Sint => return signed() as u32,
            Kind::Float => return small_float_to_f32(v, b),
        }
        .to_bits()
    }

    /// Register value `x` as component `k`'s bits for a store.
    fn store(&self, x: u32, k: usize) -> u64 {
        let b = u32::from(self.bits[k]);
        let mask = (1u64 << b) - 1;
        let f = f64::from(f32::from_bits(x));
        let max_u = mask as f64;
        let max_s = ((1u64 << (b - 1)) - 1) as f64;
        let v = match self.kind {
            Kind::Unorm => (if f.is_nan() { 0.0 } else { f.clamp(0.0, 1.0) } * max_u).round_ties_even() as u64,
            Kind::Snorm => (if f.is_nan() { 0.0 } else { f.clamp(-1.0, 1.0) } * max_s).round_ties_even() as i64 as u64,
            Kind::Uscaled => (f.clamp(0.0, max_u)) as u64,
            Kind::Sscaled => f.clamp(-max_s - 1.0, max_s) as i64 as u64,
            Kind::Uint | Kind::Sint => u64::from(x),
            Kind::Float => f32_to_small_float(f32::from_bits(x), b),
        };
        v & mask
    }
}

/// A float of `b` bits (16: half; 32: single; 11 and 10: unsigned with a 5-bit
/// exponent) as f32 bits.
fn small_float_to_f32(v: u64, b: u32) -> u32 {
    match b {
        32 => v as u32,
        16 => half::to_f32(v as u16).to_bits(),
        _ => {
            let mbits = b - 5;
            let (e, m) = ((v >> mbits) & 0x1f, v & ((1 << mbits) - 1));
            let x = match e {
                0 => m as f64 * 2f64.powi(-14 - mbits as i32),
                31 if m == 0 => f64::INFINITY,
                31 => f64::NAN,
                _ => (1.0 + m as f64 / (1u64 << mbits) as f64) * 2f64.powi(e as i32 - 15),
            };
            (x as f32).to_bits()
        }
    }
}

/// An f32 as a float of `b` bits (negative values clamp to 0 in the unsigned
/// 10- and 11-bit floats; nearest-even).
fn f32_to_small_float(x: f32, b: u32) -> u64 {
    match b {
        32 => u64::from(x.to_bits()),
        16 => u64::from(half::from_f64(f64::from(x))),
        _ => {
            let mbits = b - 5;
            if x.is_nan() {
                return 0x1f << mbits | 1;
            }
            let x = f64::from(x.max(0.0));
            let max = (2.0 - 2f64.powi(-(mbits as i32))) * 2f64.powi(15);
            if x > max {
                return 0x1f << mbits;
            }
            // The value in units of the smallest step of its binade, rounded.
            let e = if x < 2f64.powi(-14) {
                -14
            } else {
                x.log2().floor() as i32
            };
            let step = 2f64.powi(e - mbits as i32);
            let q = (x / step).round_ties_even() as u64;
            let (e, q) = if q >> (mbits + 1) != 0 { (e + 1, q >> 1) } else { (e, q) };
            if x < 2f64.powi(-14) && q >> mbits == 0 {
                return q;
            }
            (((e + 15) as u64) << mbits) | (q & ((1 << mbits) - 1))
        }
    }
}

/// A swizzled resource's layout: elements of `element` bytes, `index_stride`
/// consecutive indices interleaved element by element.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Swizzle {
    element: u64,
    index_stride: u64,
}

/// The resource fields this model uses.
struct Resource {
    base: u64,
    stride: u64,
    records: u64,
    format: u32,
    add_tid: bool,
    swizzle: Option<Swizzle>,
}

fn resource(w: &Wave, srsrc: u16) -> R<Resource> {
    let d: Vec<u32> = (0..4).map(|k| w.sread(srsrc + k, None)).collect::<R<_>>()?;
    // gfx11's V#: SWIZZLE_ENABLE is word 1 bits 31:30 and is also the element size (1:
    // 4 bytes, 2: 8, 3: 16); INDEX_STRIDE is word 3 bits 22:21 (8, 16, 32 or 64
    // indices). Sources: ROCR's `registers.h` (SQ_BUF_RSRC_WORD3_GFX11: INDEX_STRIDE
    // 22:21, ADD_TID_ENABLE 23); Mesa's `ac_build_buffer_descriptor` (gfx11:
    // S_008F04_SWIZZLE_ENABLE_GFX11, two bits) with the descriptors it builds for gfx11:
    // the attribute ring's `swizzle_enable = 3 /* 16B */` with `index_stride = 2 /* 32
    // elements */`, and the scratch rings of radeonsi and RADV, SWIZZLE_ENABLE 1 (4-byte
    // elements, the per-lane dwords of scratch) with INDEX_STRIDE 2 for wave32 and 3 for
    // wave64 (64 indices). No source here uses 2; it is taken as the size between, 8.
    let swizzle = match d[1] >> 30 {
        0 => None,
        s => Some(Swizzle {
            element: 2 << s,
            index_stride: 8 << (d[3] >> 21 & 3),
        }),
    };
    Ok(Resource {
        base: u64::from(d[0]) | u64::from(d[1] & 0xffff) << 32,
        stride: u64::from((d[1] >> 16) & 0x3fff),
        records: u64::from(d[2]),
        format: (d[3] >> 12) & 0x7f,
        add_tid: d[3] >> 23 & 1 == 1,
        swizzle,
    })
}

/// A gfx9 V# (CDNA3's): the base and stride where gfx11 has them; SWIZZLE_EN is word 1's
/// bit 31 alone, with the element size in word 3 bits 20:19 (ELEMENT_SIZE: 2, 4, 8 or
/// 16 bytes) and INDEX_STRIDE in bits 22:21 (8, 16, 32 or 64 indices), as ROCr's gfx9
/// scratch descriptor (`SQ_BUF_RSRC_WORD3`: ELEMENT_SIZE 1, INDEX_STRIDE 3) and
/// tinygrad 0.14's set them; ADD_TID_ENABLE bit 23. Its data format is two fields
/// (DATA_FORMAT 18:15, NUM_FORMAT 14:12), read as the gfx11 format of the same layout
/// ([`gfx9_format`]).
fn resource_gfx9(w: &Wave, srsrc: u16) -> R<Resource> {
    let d: Vec<u32> = (0..4).map(|k| w.sread(srsrc + k, None)).collect::<R<_>>()?;
    let swizzle = (d[1] >> 31 == 1).then(|| Swizzle {
        element: 2 << (d[3] >> 19 & 3),
        index_stride: 8 << (d[3] >> 21 & 3),
    });
    Ok(Resource {
        base: u64::from(d[0]) | u64::from(d[1] & 0xffff) << 32,
        stride: u64::from((d[1] >> 16) & 0x3fff),
        records: u64::from(d[2]),
        format: gfx9_format(d[3] >> 15 & 0xf, d[3] >> 12 & 7),
        add_tid: d[3] >> 23 & 1 == 1,
        swizzle,
    })
}

/// gfx9's data format (DATA_FORMAT `dfmt`, NUM_FORMAT `nfmt`: a V#'s, or an MTBUF
/// instruction's) as gfx11's unified format of the same components and kind (its number
/// in [`FORMATS`]); 0 (invalid, which a typed access refuses naming it) for gfx9's
/// invalid and reserved values and the pairs gfx11 has no format for (a 32-bit UNORM,
/// a float 8-bit component). The numbering is LLVM's (`BUF_DATA_FORMAT_*`,
/// `BUF_NUM_FORMAT_*` for gfx9).
pub(crate) fn gfx9_format(dfmt: u32, nfmt: u32) -> u32 {
    // Every pair's gfx11 number, found by name once (a V# is read at every buffer
    // access).
    static TABLE: std::sync::OnceLock<[u8; 128]> = std::sync::OnceLock::new();
    let table = TABLE.get_or_init(|| {
        const DATA: [&str; 16] = [
            "",
            "8",
            "16",
            "8_8",
            "32",
            "16_16",
            "10_11_11",
            "11_11_10",
            "10_10_10_2",
            "2_10_10_10",
            "8_8_8_8",
            "32_32",
            "16_16_16_16",
            "32_32_32",
            "32_32_32_32",
            "",
        ];
        const NUM: [&str; 8] = ["UNORM", "SNORM", "USCALED", "SSCALED", "UINT", "SINT", "", "FLOAT"];
        let mut t = [0u8; 128];
        for (d, data) in DATA.iter().enumerate().filter(|(_, s)| !s.is_empty()) {
            for (n, num) in NUM.iter().enumerate().filter(|(_, s)| !s.is_empty()) {
                let name = format!("BUF_FMT_{data}_{num}");
                t[d * 8 + n] = FORMATS.iter().position(|f| *f == name).map_or(0, |k| k as u8);
            }
        }
        t
    });
    u32::from(table[(dfmt as usize & 15) * 8 + (nfmt as usize & 7)])
}

impl Resource {
    /// The byte offset from the base (before SOFFSET) of `size` bytes at `index` and
    /// `offset` (VGPR offset plus the instruction's), wrapped to 32 bits.
    ///
    /// Linear: `stride × index + offset`. Swizzled, as the ISA's "Swizzled Buffer
    /// Addressing" gives it: with index_msb = index / index_stride, index_lsb = index %
    /// index_stride, offset_msb = offset / element and offset_lsb = offset % element,
    /// `(index_msb × stride + offset_msb × element) × index_stride + index_lsb ×
    /// element + offset_lsb`. The ISA allows no swizzled access larger than an element;
    /// one that would leave its element is refused.
    fn offset(&self, index: u64, offset: u64, size: u64, what: &str) -> R<u64> {
        let overflow = || format!("{what}: the buffer offset of index {index:#x}, offset {offset:#x} overflows");
        let at = match self.swizzle {
            None => self
                .stride
                .checked_mul(index)
                .and_then(|a| a.checked_add(offset))
                .ok_or_else(overflow)?,
            Some(Swizzle { element, index_stride }) => {
                let (index_msb, index_lsb) = (index / index_stride, index % index_stride);
                let (offset_msb, offset_lsb) = (offset / element, offset % element);
                if offset_lsb + size > element {
                    return Err(format!(
                        "{what}: {size} bytes at offset {offset:#x} of a swizzled resource with {element}-byte \
                         elements leave their element (the ISA allows no access larger than an element)"
                    )
                    .into());
                }
                index_msb
                    .checked_mul(self.stride)
                    .and_then(|a| a.checked_add(offset_msb.checked_mul(element)?))
                    .and_then(|a| a.checked_mul(index_stride))
                    .and_then(|a| a.checked_add(index_lsb * element + offset_lsb))
                    .ok_or_else(overflow)?
            }
        };
        Ok(at & 0xffff_ffff)
    }

    /// The range check: a raw buffer (stride 0) refuses an access whose end passes
    /// NUM_RECORDS bytes (`offset` without the index, swizzled or not), a structured
    /// one an index at or past NUM_RECORDS.
    fn inside(&self, index: u64, offset: u64, size: u64) -> bool {
        if self.stride == 0 {
            (offset & 0xffff_ffff) + size <= self.records
        } else {
            index < self.records
        }
    }
}

/// What a buffer opcode does.
#[derive(Clone, Copy)]
enum Access {
    /// Untyped, as the global instruction with the same number.
    Plain(MemOp),
    /// Through a data format: components, d16 (`hi`: into or from the high half),
    /// store.
    Format {
        n: usize,
        d16: bool,
        hi: bool,
        store: bool,
    },
    Atomic(AtomicOp),
    /// A load into LDS rather than VGPRs (`buffer_load_lds_*`).
    Lds(LdsLoad),
    Nothing,
}

/// What an LDS DMA load reads: 1, 2 or 4 bytes (zero- or sign-extended), or the X
/// component through the resource's format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum LdsLoad {
    Plain { bytes: usize, signed: bool },
    FormatX,
}

impl Access {
    /// The VGPRs a load's data fills (where TFE's status dword follows), for loads into
    /// VGPRs.
    fn data_vgprs(self) -> Option<usize> {
        match self {
            Access::Plain(MemOp::Load(n)) => Some(n),
            Access::Plain(MemOp::LoadSmall { .. }) => Some(1),
            Access::Format {
                n,
                d16,
                hi,
                store: false,
            } => Some(match (d16, hi) {
                (false, _) => n,
                (true, false) => n.div_ceil(2),
                (true, true) => 1,
            }),
            _ => None,
        }
    }
}

/// A format opcode's access: MTBUF's and MUBUF's first 16, numbered alike, are loads
/// of x, xy, xyz and xyzw, the stores, then both again with 16-bit data.
fn format_access(k: u16) -> Access {
    Access::Format {
        n: usize::from(k % 4) + 1,
        d16: k >= mubuf::BUFFER_LOAD_D16_FORMAT_X,
        hi: false,
        store: k % 8 >= mubuf::BUFFER_STORE_FORMAT_X,
    }
}

fn access(iop: u16, mtbuf: bool) -> R<Access> {
    // RDNA4's own atomics, numbered past MUBUF's opcodes.
    if let Some(atomic) = atomic_op(iop).filter(|_| iop >= super::memory::extra_atomic::FIRST) {
        return Ok(Access::Atomic(atomic));
    }
    if mtbuf {
        let op =
            Mtbuf::from_op(iop).ok_or_else(|| Trap::missing(format!("MTBUF opcode {iop:#x} is not implemented")))?;
        return Ok(format_access(op as u16));
    }
    use Mubuf::*;
    let op = Mubuf::from_op(iop).ok_or_else(|| Trap::missing(format!("MUBUF opcode {iop:#x} is not implemented")))?;
    let lds = |bytes, signed| Ok(Access::Lds(LdsLoad::Plain { bytes, signed }));
    match op {
        BUFFER_LOAD_LDS_U8 => return lds(1, false),
        BUFFER_LOAD_LDS_I8 => return lds(1, true),
        BUFFER_LOAD_LDS_U16 => return lds(2, false),
        BUFFER_LOAD_LDS_I16 => return lds(2, true),
        BUFFER_LOAD_LDS_B32 => return lds(4, false),
        BUFFER_LOAD_LDS_FORMAT_X => return Ok(Access::Lds(LdsLoad::FormatX)),
        _ => {}
    }
    let k = op as u16;
    // The atomics, numbered as GLOBAL's.
    if let Some(atomic) = atomic_op(k) {
        return Ok(Access::Atomic(atomic));
    }
    Ok(match op {
        _ if k <= mubuf::BUFFER_STORE_D16_FORMAT_XYZW => format_access(k),
        BUFFER_LOAD_D16_HI_FORMAT_X | BUFFER_STORE_D16_HI_FORMAT_X => Access::Format {
            n: 1,
            d16: true,
            hi: true,
            store: op == BUFFER_STORE_D16_HI_FORMAT_X,
        },
        BUFFER_GL0_INV | BUFFER_GL1_INV => Access::Nothing,
        _ => Access::Plain(
            mem_op(k)
                .ok_or_else(|| Trap::missing(format!("MUBUF opcode {iop:#x} ({}) is not implemented", op.name())))?,
        ),
    })
}

/// The instruction's name, for errors.
fn name(op: u16, mtbuf: bool) -> &'static str {
    if mtbuf {
        Mtbuf::from_op(op).map_or("tbuffer instruction", Mtbuf::name)
    } else {
        Mubuf::from_op(op).map_or("buffer instruction", Mubuf::name)
    }
}

/// A MUBUF or MTBUF access as the instruction's fields give it, whichever
/// generation's encoding they come from.
#[derive(Clone, Copy, Debug)]
pub(crate) struct BufferAccess {
    /// The opcode, in RDNA3's MUBUF (or, `mtbuf`, MTBUF) numbering.
    pub(crate) op: u16,
    /// A typed (`tbuffer_*`) access, its data format in `format`.
    pub(crate) mtbuf: bool,
    /// MTBUF's FORMAT (MUBUF takes the resource's).
    pub(crate) format: u32,
    /// The instruction's byte offset.
    pub(crate) offset: u64,
    /// Atomics return the old value.
    pub(crate) returns: bool,
    /// VADDR, as an operand number; VDATA, a VGPR index.
    pub(crate) vaddr: u16,
    pub(crate) vdata: usize,
    /// The resource's first SGPR, as an operand number.
    pub(crate) srsrc: u16,
    /// SOFFSET, an operand number.
    pub(crate) soffset: u16,
    pub(crate) offen: bool,
    pub(crate) idxen: bool,
    pub(crate) tfe: bool,
    /// The resource is in gfx9's layout (CDNA3's): [`resource_gfx9`].
    pub(crate) gfx9: bool,
}

/// The layout of `format`, or an error naming it.
fn format_layout(format: u32) -> R<Layout> {
    layout(format).ok_or_else(|| {
        Trap::refused(format!(
            "buffer data format {format} ({}) is not a format",
            FORMATS.get(format as usize).unwrap_or(&"?")
        ))
    })
}

/// Runs a MUBUF or MTBUF instruction for every lane of EXEC; `lds` is the workgroup's
/// LDS (the LDS DMA loads' destination).
///
/// TFE (word 1 bit 21) on a load into VGPRs writes one more VGPR after the data: the
/// fail status, nonzero only for memory that is not resident (a partially resident
/// resource's unmapped page). The mock has no such memory (an unmapped address
/// faults), and a range-checked access is not a fail (it reads 0), so the status is 0
/// for every lane. TFE has no meaning for stores and atomics (LLVM's assembler refuses
/// it there): they ignore it. With an LDS DMA load (no VGPR data) it is refused.
pub(crate) fn exec(w: &mut Wave, i: &Inst, mem: &dyn Memory, lds: &mut [u8], mtbuf: bool) -> R<()> {
    // MUBUF's fields; MTBUF's stand in the same places, but for its FORMAT.
    use super::fields::mubuf::*;
    let iw = i.words();
    let a = BufferAccess {
        op: i.op,
        mtbuf,
        format: super::fields::mtbuf::FORMAT.get(&iw),
        offset: u64::from(OFFSET.get(&iw)),
        returns: GLC.is_set(&iw),
        vaddr: VADDR.operand(&iw),
        vdata: VDATA.index(&iw),
        srsrc: SRSRC.operand(&iw),
        soffset: SOFFSET.operand(&iw),
        offen: OFFEN.is_set(&iw),
        idxen: IDXEN.is_set(&iw),
        tfe: TFE.is_set(&iw),
        gfx9: false,
    };
    buffer(w, &a, mem, lds)
}

/// An LDS DMA load's value for its lane's dword: `bytes` (1, 2 or 4) of `b`, zero- or
/// sign-extended.
pub(crate) fn lds_dma_value(b: &[u8], bytes: usize, signed: bool) -> u32 {
    match (bytes, signed) {
        (1, true) => b[0] as i8 as u32,
        (1, false) => u32::from(b[0]),
        (2, true) => i16::from_le_bytes([b[0], b[1]]) as u32,
        (2, false) => u32::from(u16::from_le_bytes([b[0], b[1]])),
        _ => u32::from_le_bytes([b[0], b[1], b[2], b[3]]),
    }
}

/// Writes lane `lane`'s dword `v` of an LDS DMA load (a buffer's or gfx9's
/// `global_load_lds_*`) into the workgroup's LDS: at M0[15:0] plus the instruction's
/// offset, each lane of the wave a dword further (the GCN/Vega ISA's "LDS_ADDR =
/// LDSbase + LDS_offset + inst_offset + TID*4" with M0 as LDS_offset; LLVM's
/// `buffer.load.lds` and `global.load.lds` intrinsics: the LDS base in M0, the
/// immediate offset applied to both addresses, 4 × the lane's id in the wave for sizes
/// up to 4 bytes). A dword past the workgroup's LDS is written nothing of, as every
/// LDS store outside it, or stops the instruction under the sanitizer's check
/// ([`super::lds::missed`]).
pub(crate) fn lds_dma_store(w: &Wave, lds: &mut [u8], lane: usize, inst_offset: i64, v: u32) -> R<()> {
    let at = (i64::from(w.s[M0] & 0xffff) + inst_offset + 4 * w.lane_id(lane) as i64) as u64;
    let lds_bytes = lds.len();
    match usize::try_from(at).ok().and_then(|a| lds.get_mut(a..a.checked_add(4)?)) {
        Some(dst) => dst.copy_from_slice(&v.to_le_bytes()),
        None => super::lds::missed(w.check_lds, at, 4, AccessKind::Store, lds_bytes)?,
    }
    Ok(())
}

/// A MUBUF or MTBUF load, store or atomic.
pub(crate) fn buffer(w: &mut Wave, a: &BufferAccess, mem: &dyn Memory, lds: &mut [u8]) -> R<()> {
    let &BufferAccess {
        op: iop,
        mtbuf,
        offset: inst_offset,
        returns: glc,
        vaddr,
        vdata,
        srsrc,
        offen,
        idxen,
        tfe,
        ..
    } = a;
    let what = access(iop, mtbuf)?;
    if matches!(what, Access::Nothing) {
        return Ok(());
    }
    let name = name(iop, mtbuf);
    if tfe && matches!(what, Access::Lds(_)) {
        return Err(format!("{name} with TFE: an LDS DMA load has no VGPR for the status").into());
    }
    let status_vgpr = what.data_vgprs().filter(|_| tfe).map(|n| vdata + n);
    let res = if a.gfx9 {
        resource_gfx9(w, srsrc)?
    } else {
        resource(w, srsrc)?
    };
    let soffset = u64::from(w.sread(a.soffset, None)?);
    let format = if mtbuf { a.format } else { res.format };
    let exec = w.exec();
    for lane in (0..32).filter(|l| exec >> l & 1 == 1) {
        let index = if idxen {
            u64::from(w.vread(vaddr, lane, None)?)
        } else {
            0
        } + if res.add_tid { w.lane_id(lane) as u64 } else { 0 };
        let voffset = if offen {
            u64::from(w.vread(vaddr + u16::from(idxen), lane, None)?)
        } else {
            0
        };
        let size = match what {
            Access::Plain(k) => k.len() as u64,
            Access::Atomic(AtomicOp { wide, .. }) => {
                if wide {
                    8
                } else {
                    4
                }
            }
            Access::Format { .. } | Access::Lds(LdsLoad::FormatX) => layout(format).map_or(4, |l| l.bytes()) as u64,
            Access::Lds(LdsLoad::Plain { bytes, .. }) => bytes as u64,
            Access::Nothing => 0,
        };
        let offset = res.offset(index, voffset + inst_offset, size, name)?;
        let addr = res.base.wrapping_add(soffset).wrapping_add(offset);
        let inside = res.inside(index, voffset + inst_offset, size);
        match what {
            Access::Plain(k) if k.is_load() => {
                let mut buf = [0u8; 16];
                if inside {
                    mem.read(addr, &mut buf[..k.len()]).map_err(Trap::load(k.len()))?;
                }
                k.load(w, lane, vdata, &buf)?;
            }
            Access::Plain(k) => {
                if inside {
                    let (buf, n) = k.store_bytes(w, lane, 256 + vdata as u16)?;
                    mem.write(addr, &buf[..n]).map_err(Trap::store(n))?;
                }
            }
            Access::Atomic(AtomicOp { wide, cmpswap }) => {
                let data = 256 + vdata as u16;
                let old = if !inside {
                    0
                } else if wide {
                    let cmp = if cmpswap { w.vread64(data + 2, lane, None)? } else { 0 };
                    atomic64(iop, mem, addr, w.vread64(data, lane, None)?, cmp)?
                } else {
                    let cmp = if cmpswap { w.vread(data + 1, lane, None)? } else { 0 };
                    u64::from(atomic(iop, mem, addr, w.vread(data, lane, None)?, cmp)?)
                };
                if glc {
                    w.vwrite(vdata, lane, old as u32)?;
                    if wide {
                        w.vwrite(vdata + 1, lane, (old >> 32) as u32)?;
                    }
                }
            }
            Access::Lds(kind) => {
                let mut b = [0u8; 16];
                if inside {
                    mem.read(addr, &mut b[..size as usize])
                        .map_err(Trap::load(size as usize))?;
                }
                let v = match kind {
                    LdsLoad::FormatX => {
                        let l = format_layout(format)?;
                        if inside { l.load(u128::from_le_bytes(b), 0) } else { 0 }
                    }
                    _ if !inside => 0,
                    LdsLoad::Plain { bytes, signed } => lds_dma_value(&b, bytes, signed),
                };
                lds_dma_store(w, lds, lane, inst_offset as i64, v)?;
            }
            Access::Format { n, d16, hi, store } => {
                let l = format_layout(format)?;
                let bytes = l.bytes();
                if store {
                    let mut raw = 0u128;
                    let mut shift = 0;
                    for k in 0..l.n {
                        let x = if k >= n {
                            0
                        } else if d16 {
                            let v = w.vread(256 + (vdata + k / 2) as u16, lane, None)?;
                            let h = (v >> (16 * ((k % 2) + usize::from(hi)))) as u16;
                            if l.kind.is_float() {
                                half::to_f32(h).to_bits()
                            } else {
                                u32::from(h)
                            }
                        } else {
                            w.vread(256 + (vdata + k) as u16, lane, None)?
                        };
                        raw |= u128::from(l.store(x, k)) << shift;
                        shift += u32::from(l.bits[k]);
                    }
                    if inside && n >= 1 {
                        mem.write(addr, &raw.to_le_bytes()[..bytes])
                            .map_err(Trap::store(bytes))?;
                    }
                } else {
                    let mut b = [0u8; 16];
                    if inside {
                        mem.read(addr, &mut b[..bytes]).map_err(Trap::load(bytes))?;
                    }
                    let raw = u128::from_le_bytes(b);
                    for k in 0..n {
                        let v = if inside { l.load(raw, k) } else { 0 };
                        if d16 {
                            let h = if l.kind.is_float() {
                                half::from_f64(f64::from(f32::from_bits(v)))
                            } else {
                                v as u16
                            };
                            let r = vdata + k / 2;
                            let old = w.vread(256 + r as u16, lane, None)?;
                            let new = if k % 2 == 0 && !hi {
                                (old & 0xffff_0000) | u32::from(h)
                            } else {
                                (old & 0xffff) | u32::from(h) << 16
                            };
                            w.vwrite(r, lane, new)?;
                        } else {
                            w.vwrite(vdata + k, lane, v)?;
                        }
                    }
                }
            }
            Access::Nothing => {}
        }
        if let Some(r) = status_vgpr {
            w.vwrite(r, lane, 0)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    //! Encodings (and the text of the disassembly test) from
    //! `llvm-mc-19 -arch=amdgcn -mcpu=gfx1100 -show-encoding`.
    use super::*;
    use crate::rdna3::testing::{lanes, run_mem, run_mem_lds, xorshift32};

    fn fmt(name: &str) -> u32 {
        FORMATS.iter().position(|f| *f == name).expect("format") as u32
    }

    /// s[8:11] = a V# at `base` with `stride`, `records` and `format`.
    fn vsharp(w: &mut Wave, base: u64, stride: u32, records: u32, format: u32) {
        w.s[8] = base as u32;
        w.s[9] = (base >> 32) as u32 | stride << 16;
        w.s[10] = records;
        w.s[11] = format << 12;
    }

    fn words(data: &[u8]) -> Vec<u32> {
        data.chunks(4)
            .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
            .collect()
    }

    /// The format opcodes' accesses follow from their names, in MUBUF and MTBUF.
    #[test]
    fn format_opcodes_by_name() {
        use crate::rdna3::opcodes::SPEC;
        let table = |enc: &str| SPEC.iter().find(|(e, _)| *e == enc).map_or(&[][..], |(_, ops)| *ops);
        let formats = table("MUBUF")
            .iter()
            .filter(|(k, _)| *k <= mubuf::BUFFER_STORE_D16_FORMAT_XYZW)
            .chain(table("MTBUF"));
        let mut seen = 0;
        for &(k, name) in formats {
            let Access::Format { n, d16, hi, store } = format_access(k) else {
                panic!("{name}");
            };
            let components = name.rsplit('_').next().map_or(0, str::len);
            assert_eq!(
                (n, d16, hi, store),
                (components, name.contains("_d16_"), false, name.contains("_store_")),
                "{name}"
            );
            seen += 1;
        }
        assert_eq!(seen, 32);
    }

    #[test]
    fn raw_loads_stores_and_the_range_check() {
        let mut data: Vec<u8> = (0..256u32).flat_map(|k| (1000 + k).to_le_bytes()).collect();
        // buffer_load_b32 v4, v2, s[8:11], 0 offen offset:4 against 64 bytes.
        let w = run_mem(&[&[0xe050_0004, 0x8042_0402]], &mut data, |w, base| {
            vsharp(w, base, 0, 64, 0);
            lanes(w, 2, |l| 4 * l as u32);
        })
        .unwrap();
        assert_eq!(w.v[4][0], 1001);
        assert_eq!(w.v[4][14], 1015, "the last dword inside");
        assert_eq!(w.v[4][15], 0, "past NUM_RECORDS: 0");
        // buffer_store_b32 v4, v2, s[8:11], s5 offen: at base + s5 + v2, where v2 + 4
        // is within the records (SOFFSET is not range-checked)
        let w = run_mem(&[&[0xe068_0000, 0x0542_0402]], &mut data, |w, base| {
            vsharp(w, base, 0, 256, 0);
            w.s[5] = 256;
            lanes(w, 2, |l| 16 * l as u32);
            lanes(w, 4, |l| 7 + l as u32);
        });
        w.unwrap();
        let v = words(&data);
        assert_eq!((v[64], v[68], v[65]), (7, 8, 1065));
        assert_eq!(v[64 + 4 * 15], 7 + 15, "offset 240 + 4 is inside");
        assert_eq!(v[64 + 4 * 16], 1000 + 64 + 4 * 16, "offset 256 + 4 > 256 is refused");
        // buffer_load_u16 v4, v2, s[8:11], 0 offen
        let w = run_mem(&[&[0xe048_0000, 0x8042_0402]], &mut data, |w, base| {
            vsharp(w, base, 0, 1024, 0);
            lanes(w, 2, |_| 2);
        })
        .unwrap();
        assert_eq!(w.v[4][0], 0, "the high half of 1000 (0x3e8)");
    }

    #[test]
    fn structured_indexing_and_atomics() {
        let mut data = vec![0u8; 1024];
        for (k, c) in data.chunks_mut(4).enumerate() {
            c.copy_from_slice(&(k as u32).to_le_bytes());
        }
        // buffer_load_b32 v4, v[2:3], s[8:11], 0 idxen offen: stride 16, 8 records
        let w = run_mem(&[&[0xe050_0000, 0x80c2_0402]], &mut data, |w, base| {
            vsharp(w, base, 16, 8, 0);
            lanes(w, 2, |l| l as u32);
            lanes(w, 3, |_| 8);
        })
        .unwrap();
        assert_eq!(w.v[4][3], 3 * 4 + 2);
        assert_eq!(w.v[4][8], 0, "index 8 is past the records");
        // buffer_atomic_add_u32 v4, v2, s[8:11], 0 offen glc: every lane adds 1 to dword 0
        let w = run_mem(&[&[0xe0d4_4000, 0x8042_0402]], &mut data, |w, base| {
            vsharp(w, base, 0, 1024, 0);
            lanes(w, 4, |_| 1);
        })
        .unwrap();
        assert_eq!((w.v[4][0], w.v[4][31]), (0, 31), "each lane sees the ones before it");
        assert_eq!(words(&data)[0], 32);
        // buffer_atomic_cmpswap_b64 v[4:7], v2, s[8:11], 0 offen glc
        let w = run_mem(&[&[0xe108_4000, 0x8042_0402]], &mut data, |w, base| {
            vsharp(w, base, 0, 1024, 0);
            w.s[crate::rdna3::wave::EXEC_LO] = 1;
            lanes(w, 2, |_| 8);
            lanes(w, 4, |_| 99);
            lanes(w, 6, |_| 2);
            lanes(w, 7, |_| 3);
        })
        .unwrap();
        assert_eq!((w.v[4][0], w.v[5][0]), (2, 3), "the old value came back");
        assert_eq!(&words(&data)[2..4], &[99, 0]);
    }

    #[test]
    fn formatted_loads_and_stores() {
        let mut data = vec![0u8; 256];
        data[..4].copy_from_slice(&[0, 255, 51, 128]);
        // buffer_load_format_xyzw v[4:7], v2, s[8:11], 0 idxen with 8_8_8_8_UNORM
        let w = run_mem(&[&[0xe00c_0000, 0x8082_0402]], &mut data, |w, base| {
            vsharp(w, base, 4, 4, fmt("BUF_FMT_8_8_8_8_UNORM"));
        })
        .unwrap();
        let got: Vec<f32> = (4..8).map(|r| f32::from_bits(w.v[r][0])).collect();
        assert_eq!(got, [0.0, 1.0, 0.2, 128.0 / 255.0]);
        // A two-component format read as four: Z 0, W 1.
        let w = run_mem(&[&[0xe00c_0000, 0x8082_0402]], &mut data, |w, base| {
            vsharp(w, base, 4, 4, fmt("BUF_FMT_16_16_UINT"));
        })
        .unwrap();
        assert_eq!((w.v[4][0], w.v[5][0], w.v[6][0], w.v[7][0]), (0xff00, 0x8033, 0, 1));
        // buffer_store_format_xy v[4:5], v2, s[8:11], 0 idxen with 16_16_SINT at index 2
        run_mem(&[&[0xe014_0000, 0x8082_0402]], &mut data, |w, base| {
            vsharp(w, base, 4, 4, fmt("BUF_FMT_16_16_SINT"));
            w.s[crate::rdna3::wave::EXEC_LO] = 1;
            lanes(w, 2, |_| 2);
            lanes(w, 4, |_| (-2i32) as u32);
            lanes(w, 5, |_| 0x1234);
        })
        .unwrap();
        assert_eq!(words(&data)[2], 0x1234_fffe);
        // tbuffer_load_format_xyz v[4:6] format:[BUF_FMT_10_11_11_FLOAT] idxen: R11 1.0,
        // G11 2.0, B10 0.5
        let raw: u32 = (15 << 6) | (16 << 6) << 11 | (14 << 5) << 22;
        data[12..16].copy_from_slice(&raw.to_le_bytes());
        let w = run_mem(&[&[0xe8f1_0000, 0x8082_0402]], &mut data, |w, base| {
            vsharp(w, base, 4, 4, 0);
            lanes(w, 2, |_| 3);
        })
        .unwrap();
        assert_eq!([4, 5, 6].map(|r| f32::from_bits(w.v[r][0])), [1.0, 2.0, 0.5]);
        // tbuffer_store_format_x v4, v2 format:[BUF_FMT_16_SNORM] offen: -1.0, 0.5
        run_mem(&[&[0xe842_0000, 0x8042_0402]], &mut data, |w, base| {
            vsharp(w, base, 0, 256, 0);
            w.s[crate::rdna3::wave::EXEC_LO] = 0b11;
            lanes(w, 2, |l| 64 + 2 * l as u32);
            lanes(w, 4, |l| if l == 0 { (-1.0f32).to_bits() } else { 0.5f32.to_bits() });
        })
        .unwrap();
        assert_eq!(words(&data)[16], 0x4000_8001, "snorm16: -32767 and 16384");
    }

    #[test]
    fn half_register_formats() {
        let mut data = vec![0u8; 64];
        data[..4].copy_from_slice(&[0x00, 0x3c, 0x00, 0xc0]); // f16 1.0, -2.0
        // buffer_load_d16_format_xy v4 with 16_16_FLOAT: both halves packed into v4
        let w = run_mem(&[&[0xe024_0000, 0x8082_0402]], &mut data, |w, base| {
            vsharp(w, base, 4, 4, fmt("BUF_FMT_16_16_FLOAT"));
        })
        .unwrap();
        assert_eq!(w.v[4][0], 0xc000_3c00);
        // buffer_load_d16_hi_format_x v4: X into the high half, the low half kept
        let w = run_mem(&[&[0xe098_0000, 0x8082_0402]], &mut data, |w, base| {
            vsharp(w, base, 4, 4, fmt("BUF_FMT_16_16_FLOAT"));
            lanes(w, 4, |_| 0x1234);
        })
        .unwrap();
        assert_eq!(w.v[4][0], 0x3c00_1234);
        // buffer_gl0_inv: nothing to do.
        run_mem(&[&[0xe0ac_0000, 0]], &mut data, |_, _| {}).unwrap();
    }

    /// s[8:11] = a V# at `base` with `stride`, `records`, SWIZZLE_ENABLE `swizzle`
    /// (elements of 2 << swizzle bytes), INDEX_STRIDE `index_stride` (8 << it indices)
    /// and ADD_TID_ENABLE.
    fn swizzled(w: &mut Wave, base: u64, stride: u32, records: u32, swizzle: u32, index_stride: u32, add_tid: bool) {
        vsharp(w, base, stride, records, 0);
        w.s[9] |= swizzle << 30;
        w.s[11] |= index_stride << 21 | u32::from(add_tid) << 23;
    }

    #[test]
    fn swizzled_scratch_layout() {
        // The scratch resource radeonsi and RADV build for gfx11 wave32: stride 0,
        // 4-byte elements, 32 indices, ADD_TID. Each lane's dword k is at (32 k +
        // lane) × 4: lane-interleaved dwords.
        let mut data: Vec<u8> = (0..1024u32).flat_map(|k| k.to_le_bytes()).collect();
        let mut next = xorshift32(0x51);
        let k: Vec<u32> = (0..32).map(|_| next() % 16).collect();
        // buffer_load_b32 v4, v2, s[8:11], 0 offen
        let w = run_mem(&[&[0xe050_0000, 0x8042_0402]], &mut data, |w, base| {
            swizzled(w, base, 0, u32::MAX, 1, 2, true);
            lanes(w, 2, |l| 4 * k[l]);
        })
        .unwrap();
        for (lane, &k) in k.iter().enumerate() {
            assert_eq!(w.v[4][lane], 32 * k + lane as u32, "lane {lane}");
        }
        // buffer_load_u8 v4, v2, s[8:11], 0 offen at 4k + 3: the top byte of that dword.
        let w = run_mem(&[&[0xe040_0000, 0x8042_0402]], &mut data, |w, base| {
            swizzled(w, base, 0, u32::MAX, 1, 2, true);
            lanes(w, 2, |l| 4 * k[l] + 3);
        })
        .unwrap();
        assert_eq!(w.v[4][9], (32 * k[9] + 9) >> 24);
        // buffer_store_b32 v4, v[2:3], s[8:11], 0 idxen offen (ADD_TID off: the index
        // is v2's): lane l stores l + 5000 as index 31 - l's dword 2.
        run_mem(&[&[0xe068_0000, 0x80c2_0402]], &mut data, |w, base| {
            swizzled(w, base, 0, u32::MAX, 1, 2, false);
            lanes(w, 2, |l| 31 - l as u32);
            lanes(w, 3, |_| 8);
            lanes(w, 4, |l| l as u32 + 5000);
        })
        .unwrap();
        let v = words(&data);
        assert!((0..32).all(|i| v[2 * 32 + i] == 31 - i as u32 + 5000));
        // An access larger than the element: the ISA allows none.
        // buffer_load_b64 v[4:5], v2, s[8:11], 0 offen
        let e = run_mem(&[&[0xe054_0000, 0x8042_0402]], &mut data, |w, base| {
            swizzled(w, base, 0, u32::MAX, 1, 2, true);
        })
        .err()
        .unwrap_or_default();
        assert!(e.contains("buffer_load_b64") && e.contains("element"), "{e}");
    }

    #[test]
    fn swizzled_records_interleave_by_element() {
        // 16-byte elements (SWIZZLE_ENABLE 3), 8 indices (INDEX_STRIDE 0), records of
        // 48 bytes: blocks of 8 records, each block element 0 of its 8 records, then
        // element 1, then element 2.
        let mut data: Vec<u8> = (0..1024u32).flat_map(|k| k.to_le_bytes()).collect();
        let mut next = xorshift32(0xb0f);
        let idx: Vec<u32> = (0..32).map(|_| next() % 40).collect();
        let off: Vec<u32> = (0..32).map(|_| 4 * (next() % 12)).collect();
        // buffer_load_b32 v4, v[2:3], s[8:11], 0 idxen offen
        let w = run_mem(&[&[0xe050_0000, 0x80c2_0402]], &mut data, |w, base| {
            swizzled(w, base, 48, 36, 3, 0, false);
            lanes(w, 2, |l| idx[l]);
            lanes(w, 3, |l| off[l]);
        })
        .unwrap();
        for lane in 0..32 {
            let (i, o) = (idx[lane], off[lane]);
            let block = (i / 8) * 48 * 8;
            let element = (o / 16) * 16 * 8;
            let byte = block + element + (i % 8) * 16 + o % 16;
            let want = if i < 36 { byte / 4 } else { 0 };
            assert_eq!(w.v[4][lane], want, "index {i} offset {o}");
        }
    }

    #[test]
    fn tfe_writes_a_zero_status_after_the_data() {
        let mut data: Vec<u8> = (0..64u32).flat_map(|k| (100 + k).to_le_bytes()).collect();
        // buffer_load_b32 v[4:5], v2, s[8:11], 0 offen tfe against 64 bytes: lanes 16
        // and up out of range, lane 31 off.
        let w = run_mem(&[&[0xe050_0000, 0x8062_0402]], &mut data, |w, base| {
            vsharp(w, base, 0, 64, 0);
            w.s[crate::rdna3::wave::EXEC_LO] = 0x7fff_ffff;
            lanes(w, 2, |l| 4 * l as u32);
            lanes(w, 5, |_| 0xdead);
        })
        .unwrap();
        assert_eq!((w.v[4][3], w.v[5][3]), (103, 0));
        assert_eq!((w.v[4][20], w.v[5][20]), (0, 0), "out of range reads 0, not a fail");
        assert_eq!(w.v[5][31], 0xdead, "EXEC off");
        // buffer_load_d16_format_xyz v[4:6], v2, s[8:11], 0 idxen tfe: XY packed in
        // v4, Z in v5's low half, the status in v6.
        let w = run_mem(&[&[0xe028_0000, 0x80a2_0402]], &mut data, |w, base| {
            vsharp(w, base, 8, 8, fmt("BUF_FMT_16_16_16_16_UINT"));
            lanes(w, 2, |_| 1);
            lanes(w, 6, |_| 0xdead);
        })
        .unwrap();
        assert_eq!((w.v[4][0], w.v[5][0] & 0xffff, w.v[6][0]), (102, 103, 0));
        // buffer_store_b32 v4, v2, s[8:11], 0 offen tfe: TFE means nothing to a store.
        run_mem(&[&[0xe068_0000, 0x8062_0402]], &mut data, |w, base| {
            vsharp(w, base, 0, 64, 0);
            lanes(w, 2, |l| 4 * l as u32);
            lanes(w, 4, |l| 7 * l as u32);
            lanes(w, 5, |_| 0xdead);
        })
        .unwrap();
        assert_eq!(words(&data)[..16], (0..16).map(|l| 7 * l).collect::<Vec<u32>>());
    }

    #[test]
    fn lds_dma_loads_write_the_lanes_dwords() {
        let mut data: Vec<u8> = (0..=255u8).collect();
        let mut lds = vec![0xeeu8; 1024];
        // buffer_load_lds_b32 v1, s[8:11], 0 offen offset:4 against 128 bytes; M0 64,
        // lane 5 off: lane l's dword from byte 4l + 4 into LDS at 64 + 4 + 4l.
        run_mem_lds(&[&[0xe0c4_0004, 0x8042_0001]], &mut data, &mut lds, |w, base| {
            vsharp(w, base, 0, 128, 0);
            w.s[M0] = 64;
            w.s[crate::rdna3::wave::EXEC_LO] = !(1 << 5);
            lanes(w, 1, |l| 4 * l as u32);
        })
        .unwrap();
        let dword = |lds: &[u8], at: usize| u32::from_le_bytes(lds[at..at + 4].try_into().unwrap());
        for lane in 0..32 {
            let want = match lane {
                5 => 0xeeee_eeee,
                // 4l + 4 + 4 > 128: out of range, 0.
                31 => 0,
                _ => u32::from_le_bytes(data[4 * lane + 4..4 * lane + 8].try_into().unwrap()),
            };
            assert_eq!(dword(&lds, 68 + 4 * lane), want, "lane {lane}");
        }
        assert!(lds[..68].iter().chain(&lds[68 + 128..]).all(|&b| b == 0xee));
        // The small loads widen as into a VGPR: buffer_load_lds_u8, _i8, _i16 v1 with
        // lane l reading at 100 + 2l (bytes 128 and up are negative as i8).
        for (w0, f) in [
            (
                0xe0b4_0000u32,
                (|d: &[u8], a: usize| u32::from(d[a])) as fn(&[u8], usize) -> u32,
            ),
            (0xe0b8_0000, |d, a| d[a] as i8 as u32),
            (0xe0c0_0000, |d, a| i16::from_le_bytes([d[a], d[a + 1]]) as u32),
        ] {
            run_mem_lds(&[&[w0, 0x8042_0001]], &mut data, &mut lds, |w, base| {
                vsharp(w, base, 0, 256, 0);
                // M0's high half is not part of the LDS address.
                w.s[M0] = 0xabcd_0000;
                lanes(w, 1, |l| 100 + 2 * l as u32);
            })
            .unwrap();
            assert!((0..32).all(|l| dword(&lds, 4 * l) == f(&data, 100 + 2 * l)), "{w0:#x}");
        }
        // buffer_load_lds_format_x v1, s[8:11], 0 idxen through 16_16_UINT: X only.
        run_mem_lds(&[&[0xe0c8_0000, 0x8082_0001]], &mut data, &mut lds, |w, base| {
            vsharp(w, base, 4, 64, fmt("BUF_FMT_16_16_UINT"));
            lanes(w, 1, |l| l as u32);
        })
        .unwrap();
        assert!((0..32).all(|l| dword(&lds, 4 * l) == u32::from(u16::from_le_bytes([data[4 * l], data[4 * l + 1]]))));
    }

    #[test]
    fn lds_dma_loads_stay_inside_the_lds() {
        let mut data: Vec<u8> = (0..=255).collect();
        // M0 960 + offset 4: lane 15's dword would end at 1028. Lanes 0 to 14 write,
        // lane 15 on writes nothing (as any LDS store outside it); under the
        // sanitizer's LDS check, the instruction stops.
        for check in [false, true] {
            let mut lds = vec![0u8; 1024];
            let ran = run_mem_lds(&[&[0xe0c4_0004, 0x8042_0001]], &mut data, &mut lds, |w, base| {
                vsharp(w, base, 0, 256, 0);
                w.s[M0] = 960;
                w.check_lds = check;
            });
            if check {
                let e = ran.err().unwrap_or_default();
                assert_eq!(e, "LDS 4-byte store at byte 0x400, outside the workgroup's 1024 bytes");
            } else {
                assert!(ran.is_ok());
                // Every lane reads bytes 4 to 7 (no VGPR offset); lane 14 the last to write.
                assert_eq!(lds[1020..1024], [4, 5, 6, 7]);
            }
        }
        let mut lds = vec![0u8; 1024];
        // With TFE (no VGPR for the status): refused.
        let e = run_mem_lds(&[&[0xe0c4_0004, 0x8062_0001]], &mut data, &mut lds, |w, base| {
            vsharp(w, base, 0, 256, 0);
        })
        .err()
        .unwrap_or_default();
        assert!(e.contains("TFE"), "{e}");
    }

    #[test]
    fn small_floats_round_trip() {
        for (b, max) in [(10, 64512.0f32), (11, 65024.0)] {
            for x in [0.0f32, 1.0, 0.5, max, 6.1035156e-5, 3.0517578e-5] {
                let bits = f32_to_small_float(x, b);
                assert_eq!(f32::from_bits(small_float_to_f32(bits, b)), x, "{x} in {b} bits");
            }
            assert_eq!(f32_to_small_float(-3.0, b), 0, "unsigned: negatives clamp to 0");
            assert_eq!(
                f32::from_bits(small_float_to_f32(f32_to_small_float(max * 1.01, b), b)),
                f32::INFINITY
            );
            assert!(f32::from_bits(small_float_to_f32(f32_to_small_float(f32::NAN, b), b)).is_nan());
            assert_eq!(
                f32::from_bits(small_float_to_f32(f32_to_small_float(1e9, b), b)),
                f32::INFINITY
            );
        }
    }

    #[test]
    fn buffer_instructions_read_as_llvm_prints_them() {
        use crate::rdna3::Inst;
        let cases: &[(&[u32], &str)] = &[
            (
                &[0xe050_0004, 0x8042_0402],
                "buffer_load_b32 v4, v2, s[8:11], 0 offen offset:4",
            ),
            (
                &[0xe068_0000, 0x0542_0402],
                "buffer_store_b32 v4, v2, s[8:11], s5 offen",
            ),
            (
                &[0xe050_0000, 0x80c2_0402],
                "buffer_load_b32 v4, v[2:3], s[8:11], 0 idxen offen",
            ),
            (
                &[0xe050_7010, 0x8042_0402],
                "buffer_load_b32 v4, v2, s[8:11], 0 offen offset:16 glc slc dlc",
            ),
            (
                &[0xe0d4_4000, 0x8042_0402],
                "buffer_atomic_add_u32 v4, v2, s[8:11], 0 offen glc",
            ),
            (
                &[0xe108_4000, 0x8042_0402],
                "buffer_atomic_cmpswap_b64 v[4:7], v2, s[8:11], 0 offen glc",
            ),
            (
                &[0xe00c_0000, 0x8082_0402],
                "buffer_load_format_xyzw v[4:7], v2, s[8:11], 0 idxen",
            ),
            (
                &[0xe8f1_0000, 0x8082_0402],
                "tbuffer_load_format_xyz v[4:6], v2, s[8:11], 0 format:[BUF_FMT_10_11_11_FLOAT] idxen",
            ),
            (
                &[0xe808_0000, 0x8042_0402],
                "tbuffer_load_format_x v4, v2, s[8:11], 0 offen",
            ),
            (
                &[0xe024_0000, 0x8082_0402],
                "buffer_load_d16_format_xy v4, v2, s[8:11], 0 idxen",
            ),
            (&[0xe0ac_0000, 0x0000_0000], "buffer_gl0_inv"),
            (
                &[0xe0c4_0004, 0x8042_0001],
                "buffer_load_lds_b32 v1, s[8:11], 0 offen offset:4",
            ),
            (
                &[0xe050_0000, 0x8062_0402],
                "buffer_load_b32 v[4:5], v2, s[8:11], 0 offen tfe",
            ),
            (
                &[0xe028_0000, 0x80a2_0402],
                "buffer_load_d16_format_xyz v[4:6], v2, s[8:11], 0 idxen tfe",
            ),
            (
                &[0xe068_0000, 0x8062_0402],
                "buffer_store_b32 v[4:5], v2, s[8:11], 0 offen tfe",
            ),
        ];
        for (words, text) in cases {
            let i = Inst::decode(words).unwrap();
            assert_eq!(i.llvm().to_string(), *text, "{words:08x?}");
        }
    }

    /// The format names are LLVM's, where llvm-mc-19 is installed.
    #[test]
    fn format_names_are_llvms() {
        use std::io::Write as _;
        let mut input = String::new();
        for f in 0..64u32 {
            let w0: u32 = 0xe800_0000 | f << 19;
            let bytes: Vec<String> = [w0, 0x8042_0402]
                .iter()
                .flat_map(|w| w.to_le_bytes())
                .map(|b| format!("{b:#04x}"))
                .collect();
            input.push_str(&bytes.join(" "));
            input.push('\n');
        }
        let child = std::process::Command::new("llvm-mc-19")
            .args(["-arch=amdgcn", "-mcpu=gfx1100", "-disassemble"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn();
        let Ok(mut child) = child else {
            eprintln!("skipped: llvm-mc-19 is not installed");
            return;
        };
        child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
        let out = String::from_utf8(child.wait_with_output().unwrap().stdout).unwrap();
        let lines: Vec<&str> = out.lines().filter(|l| l.contains("tbuffer")).collect();
        assert_eq!(lines.len(), 64);
        for (f, line) in lines.iter().enumerate() {
            let name = line.split("format:[").nth(1).and_then(|r| r.split(']').next());
            // LLVM leaves out the default format (1, BUF_FMT_8_UNORM).
            let want = name.unwrap_or(if f == 1 { "BUF_FMT_8_UNORM" } else { "?" });
            assert_eq!(FORMATS[f], want, "format {f}");
        }
    }
}
