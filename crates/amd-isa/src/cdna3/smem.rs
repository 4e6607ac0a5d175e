//! gfx9's scalar stores and atomics (SMEM): `s_store_dword*`, `s_buffer_store_dword*`,
//! `s_atomic_*` and `s_buffer_atomic_*`, which gfx11 dropped. Their address is a scalar
//! load's (`SBASE + OFFSET + SOFFSET`, dword-aligned; through a buffer resource, its
//! base and a range check against NUM_RECORDS that drops what lies past the end); an
//! atomic's operation is its GLOBAL twin's (RDNA3's arithmetic), the old value to SDATA
//! where GLC says, and a compare-swap takes its comparand from the SGPRs after the data,
//! as the ISA's pseudocode has it (`src = DATA[31:0]`, `cmp = DATA[63:32]`).

use super::decode::Inst;
use crate::error::Trap;
use crate::memory::Memory;
use crate::rdna3::{self, ScalarLoad, Wave};

/// A scalar store or atomic, decoded.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ScalarWrite {
    /// Where, and SDATA: the dwords stored, or an atomic's data (and comparand).
    pub(crate) at: ScalarLoad,
    /// Through a buffer resource (V#) at SBASE.
    pub(crate) buffer: bool,
    /// What it does.
    pub(crate) kind: WriteKind,
}

/// A [`ScalarWrite`]'s operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WriteKind {
    /// Stores `at.dwords` dwords.
    Store,
    /// An atomic in RDNA3's GLOBAL numbering, 64-bit where `wide`, a compare-swap where
    /// `cmpswap`; the old value to SDATA where `returns` (GLC).
    Atomic {
        op: u16,
        wide: bool,
        cmpswap: bool,
        returns: bool,
    },
}

/// The store or atomic `i` is, from its name (`s_store_dwordx2`, `s_buffer_atomic_add`,
/// `s_atomic_cmpswap_x2`, …) and the address `at` its fields give (with SDATA); `None`
/// for another SMEM opcode, or an atomic RDNA3 has no GLOBAL twin of.
pub(crate) fn decode(i: &Inst, at: ScalarLoad) -> Option<ScalarWrite> {
    let name = i.name()?;
    let (buffer, rest) = match name.strip_prefix("s_buffer_") {
        Some(rest) => (true, rest),
        None => (false, name.strip_prefix("s_")?),
    };
    if let Some(width) = rest.strip_prefix("store_dword") {
        let dwords = match width {
            "" => 1,
            "x2" => 2,
            "x4" => 4,
            _ => return None,
        };
        return Some(ScalarWrite {
            at: ScalarLoad { dwords, ..at },
            buffer,
            kind: WriteKind::Store,
        });
    }
    let operation = rest.strip_prefix("atomic_")?;
    // The GLOBAL twin, by name, in RDNA3's numbering (the generated memory lowering).
    let global = format!("global_atomic_{operation}");
    let (_, ops) = super::opcodes::SPEC.iter().find(|(e, _)| *e == "GLOBAL")?;
    let &(op9, _) = ops.iter().find(|(_, n)| *n == global)?;
    let op = super::lowering::global(op9)?;
    let a = rdna3::atomic_op(op)?;
    Some(ScalarWrite {
        at: ScalarLoad {
            dwords: if a.wide { 2 } else { 1 },
            ..at
        },
        buffer,
        kind: WriteKind::Atomic {
            op,
            wide: a.wide,
            cmpswap: a.cmpswap,
            returns: super::fields::smem::GLC.get(&i.words) == 1,
        },
    })
}

impl ScalarWrite {
    /// Runs it on the wave.
    pub(crate) fn run(&self, w: &mut Wave, mem: &dyn Memory) -> Result<(), Trap> {
        let l = &self.at;
        let bytes = 4 * l.dwords as u64;
        // The address, or `None` where a buffer's range check drops the access.
        let addr = if self.buffer {
            let (base, at, records) = l.buffer_place(w)?;
            let at = at & !3;
            rdna3::inside_buffer(at, bytes, records).then(|| base.wrapping_add(at as u64))
        } else {
            Some(l.address(w)?)
        };
        let sdata = |w: &Wave, k: usize| w.sread(l.sdata as u16 + k as u16, None);
        match self.kind {
            WriteKind::Store => {
                let Some(addr) = addr else { return Ok(()) };
                let mut buf = [0u8; 16];
                for k in 0..l.dwords {
                    buf[4 * k..4 * k + 4].copy_from_slice(&sdata(w, k)?.to_le_bytes());
                }
                mem.write(addr, &buf[..bytes as usize])
                    .map_err(Trap::store(bytes as usize))
            }
            WriteKind::Atomic {
                op,
                wide,
                cmpswap,
                returns,
            } => {
                let pair = |w: &Wave, k: usize| -> Result<u64, Trap> {
                    Ok(u64::from(sdata(w, k)?) | u64::from(sdata(w, k + 1)?) << 32)
                };
                let old = match (addr, wide) {
                    // Dropped past a buffer's end: the old value reads as 0.
                    (None, _) => 0,
                    (Some(a), false) => {
                        let cmp = if cmpswap { sdata(w, 1)? } else { 0 };
                        u64::from(rdna3::atomic(op, mem, a, sdata(w, 0)?, cmp)?)
                    }
                    (Some(a), true) => {
                        let cmp = if cmpswap { pair(w, 2)? } else { 0 };
                        rdna3::atomic64(op, mem, a, pair(w, 0)?, cmp)?
                    }
                };
                if returns {
                    w.swrite(l.sdata, old as u32)?;
                    if wide {
                        w.swrite(l.sdata + 1, (old >> 32) as u32)?;
                    }
                }
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::exec::Cdna3;
    use crate::rdna3::testing::run_as;

    /// Stores write SDATA's dwords at a scalar load's address; a buffer store past
    /// NUM_RECORDS is dropped; atomics return the old value with GLC alone, a
    /// compare-swap takes its comparand after the data, a buffer atomic its offset from
    /// an SGPR.
    #[test]
    fn scalar_stores_and_atomics() {
        // s_store_dwordx2 s[8:9], s[4:5], 0x8
        let store: &[u32] = &[0xc046_0202, 0x8];
        // s_buffer_store_dword s8, s[4:7], 0x3c / 0x40 (the last dword, then past it)
        let bstore: &[u32] = &[0xc062_0202, 0x3c];
        let bstore_past: &[u32] = &[0xc062_0202, 0x40];
        // s_atomic_add s8, s[4:5], 0x4 glc / s_atomic_sub s8, s[4:5], 0x0
        let add: &[u32] = &[0xc20b_0202, 0x4];
        let sub: &[u32] = &[0xc20e_0202, 0];
        // s_atomic_cmpswap_x2 s[8:11], s[4:5], 0x10 glc
        let cmpswap: &[u32] = &[0xc287_0202, 0x10];
        // s_buffer_atomic_umax s8, s[4:7], s2
        let umax: &[u32] = &[0xc11c_0202, 0x2];
        let setup = |w: &mut crate::rdna3::Wave, base: u64| {
            // A V# of 64 bytes at the data; SDATA s[8:11].
            super::super::exec::tests::vsharp(w, base, 0x27000);
            w.s[8..12].copy_from_slice(&[0x1111, 0x2222, 0x3333, 0x4444]);
            w.s[2] = 0x20;
        };
        let words = |d: &[u8]| -> Vec<u32> { d.chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect() };
        let fresh = || -> Vec<u8> { (0..16u32).flat_map(|k| (100 + k).to_le_bytes()).collect() };

        let mut d = fresh();
        let w = run_as::<Cdna3>(&[store, bstore, bstore_past], &mut d, &mut [0; 64], setup).unwrap();
        let m = words(&d);
        assert_eq!((m[1], m[2], m[3], m[15]), (101, 0x1111, 0x2222, 0x1111));
        assert_eq!(w.s[8], 0x1111, "a store leaves SDATA");

        let mut d = fresh();
        let w = run_as::<Cdna3>(&[add], &mut d, &mut [0; 64], setup).unwrap();
        assert_eq!((words(&d)[1], w.s[8]), (101 + 0x1111, 101), "GLC returns the old value");
        let mut d = fresh();
        let w = run_as::<Cdna3>(&[sub], &mut d, &mut [0; 64], setup).unwrap();
        assert_eq!(
            (words(&d)[0], w.s[8]),
            (100u32.wrapping_sub(0x1111), 0x1111),
            "no GLC, no return"
        );

        // Memory at 0x10 holds 104 | 105 << 32: the comparand s[10:11] does not match,
        // then does.
        let mut d = fresh();
        let w = run_as::<Cdna3>(&[cmpswap], &mut d, &mut [0; 64], setup).unwrap();
        assert_eq!((words(&d)[4], words(&d)[5], w.s[8], w.s[9]), (104, 105, 104, 105));
        let mut d = fresh();
        let w = run_as::<Cdna3>(&[cmpswap], &mut d, &mut [0; 64], |w, base| {
            setup(w, base);
            w.s[10..12].copy_from_slice(&[104, 105]);
        })
        .unwrap();
        assert_eq!((words(&d)[4], words(&d)[5], w.s[8]), (0x1111, 0x2222, 104));

        // Byte 0x20 (108): the maximum of 108 and 0x1111.
        let mut d = fresh();
        run_as::<Cdna3>(&[umax], &mut d, &mut [0; 64], setup).unwrap();
        assert_eq!(words(&d)[8], 0x1111);
    }
}
