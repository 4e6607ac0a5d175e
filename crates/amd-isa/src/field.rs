//! Instruction fields: where a field lies in an instruction's dwords, and what its
//! value names. Each generation's `generated/fields.rs` places every field of every
//! encoding with these types, as AMD's machine-readable ISA places them; code that
//! reads an instruction reads it through those constants, never by shifting and
//! masking by hand.
//!
//! A field is given as the ISA gives it, by bit numbers counted across the
//! instruction's dwords (bit 32 is bit 0 of the second dword); no field crosses a
//! dword, which [`Bits::new`] checks when the constant is built.

/// An instruction's first three dwords, the first first; the dwords past a shorter
/// instruction's end are 0.
pub type Words = [u32; 3];

/// Bits `hi..=lo` of an instruction, a plain number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Bits {
    dword: u8,
    lo: u8,
    width: u8,
}

impl Bits {
    /// Bits `hi..=lo`, counted across the dwords. Refuses (at compile time, where the
    /// field is a constant) a field that crosses a dword or lies past the third.
    pub const fn new(hi: u32, lo: u32) -> Bits {
        assert!(
            lo <= hi && hi < 96 && hi / 32 == lo / 32,
            "a field lies within one of three dwords"
        );
        Bits {
            dword: (lo / 32) as u8,
            lo: (lo % 32) as u8,
            width: (hi - lo + 1) as u8,
        }
    }

    /// The field's value in `w`.
    #[inline]
    pub const fn get(self, w: &Words) -> u32 {
        let v = w[self.dword as usize] >> self.lo;
        if self.width == 32 {
            v
        } else {
            v & ((1 << self.width) - 1)
        }
    }

    /// Writes `v` (its low bits, as many as the field has) into the field in `w`.
    #[inline]
    pub const fn put(self, w: &mut Words, v: u32) {
        let mask = if self.width == 32 {
            u32::MAX
        } else {
            (1 << self.width) - 1
        };
        let d = self.dword as usize;
        w[d] = (w[d] & !(mask << self.lo)) | (v & mask) << self.lo;
    }

    /// The field's value in `w`, sign-extended from its top bit.
    #[inline]
    pub const fn signed(self, w: &Words) -> i32 {
        let up = 32 - self.width as u32;
        ((self.get(w) << up) as i32) >> up
    }

    /// Whether the field (one bit, or any of its bits) is set in `w`.
    #[inline]
    pub const fn is_set(self, w: &Words) -> bool {
        self.get(w) != 0
    }

    /// The lowest bit's number, counted across the dwords.
    pub const fn lo(self) -> u32 {
        self.dword as u32 * 32 + self.lo as u32
    }

    /// The highest bit's number, counted across the dwords.
    pub const fn hi(self) -> u32 {
        self.lo() + self.width as u32 - 1
    }

    /// How many bits wide the field is.
    pub const fn width(self) -> u32 {
        self.width as u32
    }
}

/// A field that names the encoding: the bits and the value they hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Fixed {
    /// Where the field lies.
    pub bits: Bits,
    /// The value that names the encoding.
    pub value: u32,
}

impl Fixed {
    /// The field `hi..=lo` holding `value`.
    pub const fn new(hi: u32, lo: u32, value: u32) -> Fixed {
        Fixed {
            bits: Bits::new(hi, lo),
            value,
        }
    }

    /// Whether `w` holds the value.
    #[inline]
    pub const fn matches(self, w: &Words) -> bool {
        self.bits.get(w) == self.value
    }
}

/// A field that names a vector register by its index.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Vgpr(pub Bits);

impl Vgpr {
    /// The register field `hi..=lo`.
    pub const fn new(hi: u32, lo: u32) -> Vgpr {
        Vgpr(Bits::new(hi, lo))
    }

    /// The register's index.
    #[inline]
    pub const fn index(self, w: &Words) -> usize {
        self.0.get(w) as usize
    }

    /// The register as a source operand number (256 + index).
    #[inline]
    pub const fn operand(self, w: &Words) -> u16 {
        256 + self.0.get(w) as u16
    }
}

/// A field that names a scalar register (or another scalar operand: VCC, M0, NULL,
/// EXEC) by its operand number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Sgpr(pub Bits);

impl Sgpr {
    /// The register field `hi..=lo`.
    pub const fn new(hi: u32, lo: u32) -> Sgpr {
        Sgpr(Bits::new(hi, lo))
    }

    /// The operand number, as an index into the scalar registers.
    #[inline]
    pub const fn index(self, w: &Words) -> usize {
        self.0.get(w) as usize
    }

    /// The operand number.
    #[inline]
    pub const fn operand(self, w: &Words) -> u16 {
        self.0.get(w) as u16
    }
}

/// A source operand: a register, an inline constant or the literal, by operand
/// number (9 bits where a vector register can stand, 8 where only scalar ones can).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Src(pub Bits);

impl Src {
    /// The operand field `hi..=lo`.
    pub const fn new(hi: u32, lo: u32) -> Src {
        Src(Bits::new(hi, lo))
    }

    /// The operand number.
    #[inline]
    pub const fn operand(self, w: &Words) -> u16 {
        self.0.get(w) as u16
    }
}

/// A scalar register pair's first register, in units of two (SMEM's SBASE).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Sbase(pub Bits);

impl Sbase {
    /// The field `hi..=lo`.
    pub const fn new(hi: u32, lo: u32) -> Sbase {
        Sbase(Bits::new(hi, lo))
    }

    /// The first register's operand number.
    #[inline]
    pub const fn operand(self, w: &Words) -> u16 {
        self.0.get(w) as u16 * 2
    }
}

/// A resource descriptor's first scalar register, in units of four (SRSRC, SSAMP).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Srsrc(pub Bits);

impl Srsrc {
    /// The field `hi..=lo`.
    pub const fn new(hi: u32, lo: u32) -> Srsrc {
        Srsrc(Bits::new(hi, lo))
    }

    /// The first register's operand number.
    #[inline]
    pub const fn operand(self, w: &Words) -> u16 {
        self.0.get(w) as u16 * 4
    }
}

/// VOPD's second destination: the register's index without its lowest bit, which is
/// the opposite of the first destination's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct VdstY(pub Bits);

impl VdstY {
    /// The field `hi..=lo`.
    pub const fn new(hi: u32, lo: u32) -> VdstY {
        VdstY(Bits::new(hi, lo))
    }

    /// The register's index, given the first destination's index `vdstx`.
    #[inline]
    pub const fn index(self, w: &Words, vdstx: usize) -> usize {
        (self.0.get(w) as usize) << 1 | ((vdstx & 1) ^ 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_read_their_bits_across_the_dwords() {
        let w: Words = [0x8765_4321, 0xfedc_ba98, 0x0000_00ff];
        assert_eq!(Bits::new(7, 0).get(&w), 0x21);
        assert_eq!(Bits::new(31, 28).get(&w), 0x8);
        assert_eq!(Bits::new(31, 0).get(&w), 0x8765_4321);
        assert_eq!(Bits::new(39, 32).get(&w), 0x98);
        assert_eq!(Bits::new(63, 56).get(&w), 0xfe);
        assert_eq!(Bits::new(71, 64).get(&w), 0xff);
        let f = Bits::new(52, 32);
        assert_eq!((f.lo(), f.hi(), f.width()), (32, 52, 21));
        // 0xfedcba98's low 21 bits, 0x1cba98, have the top bit set.
        assert_eq!(f.signed(&w), 0x1c_ba98 - (1 << 21));
        assert_eq!(Bits::new(12, 0).signed(&[0x0fff, 0, 0]), 0xfff);
        let mut p = w;
        Bits::new(47, 40).put(&mut p, 0x1ab);
        assert_eq!(p, [w[0], 0xfedc_ab98, w[2]], "only the field's bits change");
        Bits::new(95, 64).put(&mut p, 7);
        assert_eq!(p[2], 7);
        assert!(Fixed::new(31, 28, 0x8).matches(&w));
        assert!(!Fixed::new(31, 28, 0x9).matches(&w));
        assert_eq!(Vgpr::new(39, 32).operand(&w), 256 + 0x98);
        assert_eq!(Sbase::new(5, 0).operand(&w), 0x21 * 2);
        assert_eq!(Srsrc::new(52, 48).operand(&w), 0x1c * 4);
        // Bits 55:49 are 0x6e; the lowest bit is the opposite of VDSTX's.
        assert_eq!(VdstY::new(55, 49).index(&w, 3), 0xdc);
        assert_eq!(VdstY::new(55, 49).index(&w, 2), 0xdd);
    }
}
