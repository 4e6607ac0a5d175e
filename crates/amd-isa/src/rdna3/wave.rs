//! A wave's registers and its operand reads and writes (wave32, and wave64 as two
//! passes of 32 lanes).

use super::decode::LITERAL;
use crate::error::Trap;
use crate::float::exact::Round;

/// Base of the flat aperture that addresses a workgroup's LDS (`src_shared_base`;
/// the value KFD gives gfx9 and later), 4 GiB long.
pub const SHARED_APERTURE: u64 = 0x2000_0000_0000_0000;
/// Base of the flat aperture that addresses a lane's private memory
/// (`src_private_base`), 4 GiB long.
pub const PRIVATE_APERTURE: u64 = 0x1000_0000_0000_0000;

/// The aperture registers as 64-bit operands (235 shared base, 236 shared limit, 237
/// private base, 238 private limit).
fn aperture(n: u16) -> u64 {
    let base = if n < 237 { SHARED_APERTURE } else { PRIVATE_APERTURE };
    if n % 2 == 1 { base } else { base + 0xffff_ffff }
}

/// SGPR numbers of special registers.
pub const VCC_LO: usize = 106;
/// `exec_lo`
pub const EXEC_LO: usize = 126;
/// `null`
pub const NULL: usize = 124;
/// `m0`
pub const M0: usize = 125;
/// The SGPRs proper, s0 to s105 (`vcc_lo` follows).
pub const SGPRS: usize = 106;
/// TTMP7: on gfx12, the workgroup's y (bits 15:0) and z (bits 31:16) ids.
pub(crate) const TTMP7: usize = 115;
/// TTMP9: on gfx12, the workgroup's x id.
pub(crate) const TTMP9: usize = 117;

/// MODE's round modes (bits 3:0; 0 rounds to nearest even).
pub const MODE_ROUND: u32 = 0xf;
/// MODE's f32 round mode (bits 1:0; f16 and f64 have bits 3:2).
pub const MODE_ROUND_F32: u32 = 0x3;
/// MODE's denormal modes (bits 7:4; all set keeps every denormal).
pub const MODE_DENORM: u32 = 0xf0;
/// MODE: f32 input denormals kept (not flushed).
pub const MODE_DENORM_F32_IN: u32 = 1 << 4;
/// MODE: f32 output denormals kept (not flushed).
pub const MODE_DENORM_F32_OUT: u32 = 1 << 5;
/// MODE: f16 and f64 input denormals kept (not flushed).
pub const MODE_DENORM_F16_F64_IN: u32 = 1 << 6;
/// MODE: f16 and f64 output denormals kept (not flushed).
pub const MODE_DENORM_F16_F64_OUT: u32 = 1 << 7;
/// MODE.IEEE: signaling NaNs win min/max, quieted.
pub const MODE_IEEE: u32 = 1 << 9;

/// The lanes of a mask, lowest first.
pub(crate) struct Bits(pub(crate) u32);

impl Iterator for Bits {
    type Item = usize;

    #[inline]
    fn next(&mut self) -> Option<usize> {
        if self.0 == 0 {
            return None;
        }
        let lane = self.0.trailing_zeros() as usize;
        self.0 &= self.0 - 1;
        Some(lane)
    }
}

/// Lanes at or under which a whole-wave operation visits the enabled lanes one by one
/// rather than computing all 32 and blending.
pub(crate) const SPARSE_LANES: u32 = 4;

/// Whether `exec` has at most [`SPARSE_LANES`] lanes on (without a population count,
/// which the baseline x86-64 build makes a dozen instructions).
#[inline(always)]
pub(crate) fn sparse(exec: u32) -> bool {
    let mut e = exec;
    for _ in 0..SPARSE_LANES {
        e &= e.wrapping_sub(1);
    }
    e == 0
}

/// One VGPR's 32 lanes, on two cache lines of its own. A register file left where
/// the allocator put it (16 bytes past a line, or 32, by the thread's history) had
/// every row straddle three lines: a dispatching thread whose file sat 32 past did
/// 0.48 of a two-thread dispatch against its helper's 0.52, and 8,192 one-lane
/// workgroups scaled 0.80–0.86 × 2 instead of 0.88–0.92 × 2.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[repr(C, align(64))]
pub(crate) struct VgprRow(pub(crate) [u32; 32]);

impl std::ops::Deref for VgprRow {
    type Target = [u32; 32];
    #[inline(always)]
    fn deref(&self) -> &[u32; 32] {
        &self.0
    }
}

impl std::ops::DerefMut for VgprRow {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut [u32; 32] {
        &mut self.0
    }
}

impl PartialEq<[u32; 32]> for VgprRow {
    fn eq(&self, other: &[u32; 32]) -> bool {
        self.0 == *other
    }
}

impl<'a> IntoIterator for &'a VgprRow {
    type Item = &'a u32;
    type IntoIter = std::slice::Iter<'a, u32>;
    #[inline(always)]
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl<'a> IntoIterator for &'a mut VgprRow {
    type Item = &'a mut u32;
    type IntoIter = std::slice::IterMut<'a, u32>;
    #[inline(always)]
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter_mut()
    }
}

/// One wave: 128 scalar slots, up to 256 VGPRs of 32 lanes, SCC, PC.
pub struct Wave {
    pub(crate) s: [u32; 128],
    /// The VGPRs of the lanes the running instruction sees: lanes 0 to 31, or in a
    /// wave64's second pass lanes 32 to 63 (see [`Wave::half`]).
    pub(crate) v: Vec<VgprRow>,
    /// A wave64's other 32 lanes (lanes 32 to 63, or 0 to 31 during its second
    /// pass); empty for a wave32.
    pub(crate) v_other: Vec<VgprRow>,
    /// A wave of 64 lanes (RDNA's wave64: each vector instruction runs as two passes
    /// of 32 lanes, as the hardware issues it).
    pub(crate) wave64: bool,
    /// The pass of a wave64's vector instruction: 0 for lanes 0 to 31, 1 for lanes 32
    /// to 63 (always 0 for a wave32). The lane masks (EXEC, VCC, a mask in an SGPR
    /// pair) are read and written at their half.
    pub(crate) half: usize,
    pub(crate) scc: bool,
    pub(crate) pc: u64,
    pub(crate) done: bool,
    pub(crate) at_barrier: bool,
    /// Each lane's private (scratch) memory, grown on use.
    pub(crate) private: Vec<Vec<u8>>,
    /// Whether any lane's private memory may hold bytes (a reset clears it only then).
    pub(crate) private_used: bool,
    /// The MODE register: bits 3:0 round modes, 7:4 denormal modes (bit 4 f32 input
    /// denormals allowed, bit 5 f32 output denormals allowed, 7:6 the same for f16/f64),
    /// bit 8 DX10_CLAMP, bit 9 IEEE (signaling NaNs win min/max, quieted).
    pub(crate) mode: u32,
    /// [`super::Interpreter::check_lds`]: an LDS access outside the allocation traps.
    pub(crate) check_lds: bool,
    /// [`super::Interpreter::check_private`]: each lane's private bytes, past which an
    /// access traps.
    pub(crate) private_limit: Option<usize>,
    /// Where the dispatch placed the wave (what `s_getreg` reads of it).
    pub(crate) place: Place,
    /// The float minimum and maximum's NaN rule where MODE does not decide it: RDNA4's
    /// waves (IEEE 754-2019's minimumNumber/maximumNumber; RDNA4 has no IEEE mode),
    /// and RDNA4's `v_minimum*`/`v_maximum*` while they run.
    pub(crate) nan_rule: Option<crate::float::minmax::Nans>,
    /// What the wave's memory instructions' addresses did, by PC (direct-mapped):
    /// learned over the workgroups this wave's slot ran (a reset keeps it), a hint for
    /// prefetching only ([`Wave::stride_ahead`]).
    pub(crate) strides: [Stride; STRIDE_SLOTS],
}

/// Memory instructions a wave follows the strides of at once (more share slots).
pub(crate) const STRIDE_SLOTS: usize = 8;
/// How many strides ahead a prefetch reaches: a workgroup or two later, time enough for
/// the line to arrive.
const STRIDE_AHEAD: u64 = 2;
/// The largest stride followed (a larger one is rarely regular).
const STRIDE_MAX: u64 = 1 << 20;

/// One memory instruction's last address and the stride that led to it.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Stride {
    pc: u64,
    last: u64,
    delta: u64,
}

/// A wave's place in its dispatch: the facts the hardware registers HW_ID1, STATUS
/// and LDS_ALLOC report (GPR_ALLOC follows from the wave's VGPRs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Place {
    /// The wave's number within its workgroup (0 first).
    pub(crate) wave: u32,
    /// The waves of the workgroup.
    pub(crate) waves: u32,
    /// The workgroup's LDS allocation in bytes.
    pub(crate) lds_bytes: u32,
    /// CDNA3: where the AccVGPRs start in the unified register file (ACCUM_OFFSET):
    /// `a[n]` is `v[acc_base + n]`. 0 on RDNA.
    pub(crate) acc_base: u32,
}

/// The most VGPRs a wave holds: CDNA3's unified file (256 VGPRs and 256 AccVGPRs).
const MAX_VGPRS: usize = 512;

impl Wave {
    pub(crate) fn new(vgprs: usize, pc: u64) -> Self {
        Wave {
            s: [0; 128],
            v: vec![VgprRow::default(); vgprs.clamp(1, MAX_VGPRS)],
            v_other: Vec::new(),
            wave64: false,
            half: 0,
            scc: false,
            pc,
            done: false,
            at_barrier: false,
            private: vec![Vec::new(); 64],
            private_used: false,
            // Round to nearest even, every denormal kept.
            mode: MODE_DENORM,
            check_lds: false,
            private_limit: None,
            place: Place::default(),
            nan_rule: None,
            strides: [Stride::default(); STRIDE_SLOTS],
        }
    }

    /// The address worth prefetching for the memory instruction at the wave's PC,
    /// which now accesses `addr`: `STRIDE_AHEAD` strides on, once two accesses in a row
    /// have moved by the same non-zero stride (as a hardware stride prefetcher
    /// follows a load: one-lane workgroups reading `a[group * n]` each touch a new
    /// line, which then arrives before the workgroup that needs it).
    #[inline]
    pub(crate) fn stride_ahead(&mut self, addr: u64) -> Option<u64> {
        let pc = self.pc;
        let s = &mut self.strides[(pc >> 2) as usize % STRIDE_SLOTS];
        if s.pc != pc {
            *s = Stride {
                pc,
                last: addr,
                delta: 0,
            };
            return None;
        }
        let delta = addr.wrapping_sub(s.last);
        let steady = delta == s.delta && delta != 0 && (delta as i64).unsigned_abs() <= STRIDE_MAX;
        (s.last, s.delta) = (addr, delta);
        steady.then(|| addr.wrapping_add(delta.wrapping_mul(STRIDE_AHEAD)))
    }

    /// The wave `Wave::new(vgprs, pc)` makes, reusing this one's allocations (the next
    /// workgroup of a dispatch on the same thread).
    pub(crate) fn reset(&mut self, vgprs: usize, pc: u64) {
        self.s = [0; 128];
        // Pushed back one by one: fewer host instructions as one fill (a call into
        // the C library's memset), but slower in time where it was measured.
        self.v.clear();
        self.v.resize(vgprs.clamp(1, MAX_VGPRS), VgprRow::default());
        self.v_other.clear();
        self.wave64 = false;
        self.half = 0;
        self.scc = false;
        self.pc = pc;
        self.done = false;
        self.at_barrier = false;
        if std::mem::take(&mut self.private_used) {
            for p in &mut self.private {
                p.clear();
            }
        }
        self.mode = MODE_DENORM;
        self.place = Place::default();
    }

    /// `x` with an f32 denormal flushed to a signed zero when MODE says inputs flush.
    pub(crate) fn f32_in(&self, x: f32) -> f32 {
        if self.mode & MODE_DENORM_F32_IN == 0 && x.is_subnormal() {
            0.0f32.copysign(x)
        } else {
            x
        }
    }

    /// An f32 result's bits, a denormal flushed to a signed zero when MODE says outputs
    /// flush.
    pub(crate) fn f32_out(&self, bits: u32) -> u32 {
        if self.mode & MODE_DENORM_F32_OUT == 0 && bits & 0x7f80_0000 == 0 {
            bits & 0x8000_0000
        } else {
            bits
        }
    }

    /// `x` with an f64 denormal flushed to a signed zero when MODE says f16/f64 inputs
    /// flush.
    pub(crate) fn f64_in(&self, x: f64) -> f64 {
        if self.mode & MODE_DENORM_F16_F64_IN == 0 && x.is_subnormal() {
            0.0f64.copysign(x)
        } else {
            x
        }
    }

    /// An f64 result's bits, a denormal flushed to a signed zero when MODE says f16/f64
    /// outputs flush.
    pub(crate) fn f64_out(&self, bits: u64) -> u64 {
        if self.mode & MODE_DENORM_F16_F64_OUT == 0 && bits & 0x7ff0_0000_0000_0000 == 0 {
            bits & 1 << 63
        } else {
            bits
        }
    }

    /// Half bits `h`, a denormal flushed to a signed zero when MODE says f16/f64 inputs
    /// flush.
    pub(crate) fn f16_in(&self, h: u16) -> u16 {
        if self.mode & MODE_DENORM_F16_F64_IN == 0 && h & 0x7c00 == 0 {
            h & 0x8000
        } else {
            h
        }
    }

    /// A half result's bits, a denormal flushed to a signed zero when MODE says f16/f64
    /// outputs flush.
    pub(crate) fn f16_out(&self, h: u16) -> u16 {
        if self.mode & MODE_DENORM_F16_F64_OUT == 0 && h & 0x7c00 == 0 {
            h & 0x8000
        } else {
            h
        }
    }

    /// The rounding of f32 results (MODE bits 1:0).
    pub(crate) fn round32(&self) -> Round {
        Round::from_bits(self.mode)
    }

    /// The rounding of f16 and f64 results (MODE bits 3:2).
    pub(crate) fn round16_64(&self) -> Round {
        Round::from_bits(self.mode >> 2)
    }

    /// The EXEC lanes the running instruction sees (a wave64's half of them).
    pub(crate) fn exec(&self) -> u32 {
        self.s[EXEC_LO + self.half]
    }

    /// The whole EXEC mask (64 bits for a wave64; a wave32's EXEC_HI is not part).
    pub(crate) fn exec_all(&self) -> u64 {
        self.mask_all(EXEC_LO)
    }

    /// The whole VCC mask, as [`Wave::exec_all`].
    pub(crate) fn vcc_all(&self) -> u64 {
        self.mask_all(VCC_LO)
    }

    fn mask_all(&self, r: usize) -> u64 {
        if self.wave64 {
            u64::from(self.s[r]) | u64::from(self.s[r + 1]) << 32
        } else {
            u64::from(self.s[r])
        }
    }

    /// The lanes of a lane-mask operand the running instruction sees: SGPR `n` (or
    /// `n + 1` in a wave64's second pass), or a constant (64 bits sign-extended in a
    /// wave64, as an SGPR pair's operand is).
    pub(crate) fn mask_read(&self, n: u16, lit: Option<u32>) -> Result<u32, Trap> {
        if self.half == 0 {
            return self.sread(n, lit);
        }
        match n {
            0..=127 => Ok(self.s.get(n as usize + 1).copied().unwrap_or(0)),
            _ => Ok((self.sread64(n, lit)? >> 32) as u32),
        }
    }

    /// Writes the lanes of a lane-mask destination the running instruction computed:
    /// SGPR `n`, or `n + 1` in a wave64's second pass.
    pub(crate) fn mask_write(&mut self, n: usize, v: u32) -> Result<(), Trap> {
        if n == NULL {
            return Ok(());
        }
        self.swrite(n + self.half, v)
    }

    /// The mask of a lane number: 31, or 63 in a wave64.
    #[inline]
    pub(crate) fn lane_mask(&self) -> u32 {
        if self.wave64 { 63 } else { 31 }
    }

    /// The lane number in the wave of lane `lane` of the running pass.
    #[inline]
    pub(crate) fn lane_id(&self, lane: usize) -> usize {
        lane + 32 * self.half
    }

    /// Starts a wave64's second pass (lanes 32 to 63), or ends it.
    #[inline]
    pub(crate) fn swap_halves(&mut self) {
        std::mem::swap(&mut self.v, &mut self.v_other);
        self.half ^= 1;
    }

    /// VGPR `r` of wave lane `lane` (0 to 63 in a wave64), whichever pass runs.
    pub(crate) fn vread_lane64(&self, n: u16, lane: usize, lit: Option<u32>) -> Result<u32, Trap> {
        let here = lane / 32 == self.half;
        if here || n < 256 {
            return self.vread(n, lane % 32, lit);
        }
        let r = (n - 256) as usize;
        self.v_other
            .get(r)
            .map(|v| v[lane % 32])
            .ok_or_else(|| Trap::refused(format!("v{r} beyond the wave's {} VGPRs", self.v_other.len())))
    }

    /// Writes VGPR `r` of wave lane `lane` (0 to 63 in a wave64), whichever pass runs.
    pub(crate) fn vwrite_lane64(&mut self, r: usize, lane: usize, v: u32) -> Result<(), Trap> {
        if lane / 32 == self.half {
            return self.vwrite(r, lane % 32, v);
        }
        let n = self.v_other.len();
        let reg = self
            .v_other
            .get_mut(r)
            .ok_or_else(|| format!("v{r} beyond the wave's {n} VGPRs"))?;
        reg[lane % 32] = v;
        Ok(())
    }

    /// The NaN rule of the float minimum and maximum: RDNA4's, or MODE.IEEE's.
    pub(crate) fn nans(&self) -> crate::float::minmax::Nans {
        use crate::float::minmax::Nans;
        let ieee = self.mode & MODE_IEEE != 0;
        match (self.nan_rule, ieee) {
            // A CDNA3 wave's rule follows MODE.IEEE as it is now.
            (Some(Nans::Gfx9Ieee | Nans::Gfx9Legacy), true) => Nans::Gfx9Ieee,
            (Some(Nans::Gfx9Ieee | Nans::Gfx9Legacy), false) => Nans::Gfx9Legacy,
            (Some(rule), _) => rule,
            (None, true) => Nans::Ieee,
            (None, false) => Nans::Legacy,
        }
    }

    /// The VCC lanes the running instruction sees (a wave64's half of them).
    pub(crate) fn vcc(&self) -> u32 {
        self.s[VCC_LO + self.half]
    }

    /// A scalar operand (9-bit space, or 8-bit for SALU), as 32 bits.
    #[inline]
    pub(crate) fn sread(&self, n: u16, lit: Option<u32>) -> Result<u32, Trap> {
        // A scalar register (the commonest operand; NULL reads 0): inline.
        if n < 128 && usize::from(n) != NULL {
            return Ok(self.s[usize::from(n)]);
        }
        self.sread_other(n, lit)
    }

    /// [`Wave::sread`] of an operand other than a scalar register: NULL, the inline
    /// constants, a literal, SCC, the apertures, or an error.
    #[inline(never)]
    fn sread_other(&self, n: u16, lit: Option<u32>) -> Result<u32, Trap> {
        Ok(match n {
            124 => 0,
            128..=192 => (n - 128) as u32,
            193..=208 => (-((n - 192) as i32)) as u32,
            240 => 0.5f32.to_bits(),
            241 => (-0.5f32).to_bits(),
            242 => 1.0f32.to_bits(),
            243 => (-1.0f32).to_bits(),
            244 => 2.0f32.to_bits(),
            245 => (-2.0f32).to_bits(),
            246 => 4.0f32.to_bits(),
            247 => (-4.0f32).to_bits(),
            248 => 0x3e22_f983, // 1/(2π)
            // As 32-bit operands the aperture registers give their high halves.
            235..=238 => (aperture(n) >> 32) as u32,
            253 => self.scc as u32,
            LITERAL => lit.ok_or("literal operand without a literal")?,
            256..=511 => return Err(format!("VGPR operand v{} where a scalar is needed", n - 256).into()),
            _ => return Err(format!("operand {n} is not supported").into()),
        })
    }

    /// A 64-bit scalar operand (register pairs; constants sign- or zero-extended).
    pub(crate) fn sread64(&self, n: u16, lit: Option<u32>) -> Result<u64, Trap> {
        Ok(match n {
            0..=127 => {
                let lo = self.s[n as usize] as u64;
                let hi = self.s.get(n as usize + 1).copied().unwrap_or(0) as u64;
                lo | hi << 32
            }
            193..=208 => (-((n - 192) as i64)) as u64,
            // 64-bit operands take the float inline constants as doubles.
            240..=247 => [0.5f64, -0.5, 1.0, -1.0, 2.0, -2.0, 4.0, -4.0][(n - 240) as usize].to_bits(),
            248 => 0x3fc4_5f30_6dc9_c883, // 1/(2π)
            235..=238 => aperture(n),
            _ => self.sread(n, lit)? as u64,
        })
    }

    /// A vector operand of `lane` (VGPRs, else the scalar value).
    #[inline]
    pub(crate) fn vread(&self, n: u16, lane: usize, lit: Option<u32>) -> Result<u32, Trap> {
        if n >= 256 {
            let r = (n - 256) as usize;
            self.v
                .get(r)
                .map(|v| v[lane])
                .ok_or_else(|| Trap::refused(format!("v{r} beyond the wave's {} VGPRs", self.v.len())))
        } else {
            self.sread(n, lit)
        }
    }

    /// A 64-bit vector operand of `lane`.
    pub(crate) fn vread64(&self, n: u16, lane: usize, lit: Option<u32>) -> Result<u64, Trap> {
        if n >= 256 {
            let lo = self.vread(n, lane, lit)? as u64;
            let hi = self.vread(n + 1, lane, lit)? as u64;
            Ok(lo | hi << 32)
        } else {
            self.sread64(n, lit)
        }
    }

    pub(crate) fn swrite(&mut self, n: usize, v: u32) -> Result<(), Trap> {
        match n {
            NULL => Ok(()),
            0..=127 => {
                self.s[n] = v;
                Ok(())
            }
            _ => Err(format!("scalar destination {n}").into()),
        }
    }

    pub(crate) fn swrite64(&mut self, n: usize, v: u64) -> Result<(), Trap> {
        if n == NULL {
            return Ok(());
        }
        self.swrite(n, v as u32)?;
        self.swrite(n + 1, (v >> 32) as u32)
    }

    pub(crate) fn vwrite(&mut self, r: usize, lane: usize, v: u32) -> Result<(), Trap> {
        let n = self.v.len();
        let reg = self
            .v
            .get_mut(r)
            .ok_or_else(|| format!("v{r} beyond the wave's {n} VGPRs"))?;
        reg[lane] = v;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every VGPR takes two whole cache lines, whatever the allocator hands out: the
    /// register files of a wave32 and of a wave64's other half, new and reset.
    #[test]
    fn vgpr_rows_sit_on_their_own_cache_lines() {
        assert_eq!(std::mem::size_of::<VgprRow>(), 128);
        for vgprs in [1, 3, 8, 100, 256] {
            let mut w = Wave::new(vgprs, 0);
            w.v_other.resize(w.v.len(), VgprRow::default());
            for rows in [&w.v, &w.v_other] {
                assert!(rows.iter().all(|r| (r as *const VgprRow as usize) % 64 == 0));
            }
            w.reset(257 - vgprs, 0);
            assert!(w.v.iter().all(|r| (r as *const VgprRow as usize) % 64 == 0));
        }
    }

    /// A stride is followed once seen twice in a row, downward too; a change of
    /// stride, a stride too large and another instruction taking the slot restart it.
    #[test]
    fn strides_are_followed_once_steady() {
        let mut w = Wave::new(8, 0x1000);
        let seq = |w: &mut Wave, addrs: &[u64]| addrs.iter().map(|&a| w.stride_ahead(a)).collect::<Vec<_>>();
        assert_eq!(seq(&mut w, &[100, 164, 228, 292]), [None, None, Some(356), Some(420)]);
        // Another stride: seen once, then followed.
        assert_eq!(seq(&mut w, &[292, 260, 228]), [None, None, Some(164)]);
        // Larger than followed.
        let big = STRIDE_MAX + 4;
        assert_eq!(seq(&mut w, &[0, big, 2 * big, 3 * big]), [None, None, None, None]);
        // The instruction at the slot's next PC takes it over and starts again.
        w.pc += 4 * STRIDE_SLOTS as u64;
        assert_eq!(seq(&mut w, &[8, 16, 24]), [None, None, Some(40)]);
        // A reset (the next workgroup) keeps what was learned.
        w.reset(8, w.pc);
        assert_eq!(w.stride_ahead(32), Some(48));
    }
}
