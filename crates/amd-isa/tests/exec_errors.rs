//! The interpreter's errors are typed: a memory fault names the address, the access
//! (kind and size) and the instruction; a read-only page is told apart from a missing
//! one; an undecodable instruction keeps its dwords.

use amd_isa::rdna3::{WaveState, execute, execute_on};
use amd_isa::{Access, AccessKind, ExecError, MemoryFault, SliceMemory};

/// Runs `words` with v0 = `addr`'s low dword in every lane (s[0:1] = the high part) on
/// `mem`.
fn run(words: &[u32], addr: u64, mem: &SliceMemory<'_>) -> Result<WaveState, ExecError> {
    let mut w = WaveState::new(8);
    w.sgpr[0] = 0;
    w.sgpr[1] = (addr >> 32) as u32;
    w.vgpr[0] = [addr as u32; 32];
    // Only lane 0 on: one access.
    w.sgpr[126] = 1;
    w.vgpr[1] = [7; 32];
    execute_on(words, &mut w, mem).map(|()| w)
}

#[test]
fn faults_name_the_access_and_the_instruction() {
    let mut data = [0u8; 64];
    let base = 0x7f00_1000_0000u64;
    let mut mem = SliceMemory::new();
    mem.map(base, &mut data);
    // global_load_b32 v1, v0, s[0:1]: 4 bytes past the end.
    let load = [0xdc52_0000, 0x0100_0000];
    let w = run(&load, base + 60, &mem).unwrap();
    assert_eq!(w.vgpr[1][0], 0, "inside: loads the zeroed bytes");
    match run(&load, base + 64, &mem) {
        Err(ExecError::Fault { fault, access, at }) => {
            assert_eq!(fault, MemoryFault::not_present(base + 64, false));
            assert_eq!(
                access,
                Access {
                    kind: AccessKind::Load,
                    bytes: 4
                }
            );
            assert_eq!(at.inst, "global_load_b32 v1, v0, s[0:1] [dc520000 01000000]");
        }
        other => panic!("{other:?}"),
    }
    // global_store_b64 v0, v[2:3], s[0:1], straddling the end: the first byte outside.
    match run(&[0xdc6e_0000, 0x0000_0200], base + 60, &mem) {
        Err(ExecError::Fault { fault, access, .. }) => {
            assert_eq!(fault, MemoryFault::not_present(base + 64, true));
            assert_eq!(
                access,
                Access {
                    kind: AccessKind::Store,
                    bytes: 8
                }
            );
        }
        other => panic!("{other:?}"),
    }
    // global_atomic_add_u32 v0, v1, s[0:1] on a read-only page.
    let ro = [0u8; 16];
    let mut rom = SliceMemory::new();
    rom.map_read_only(base, &ro);
    match run(&[0xdcd6_0000, 0x0000_0100], base + 4, &rom) {
        Err(e @ ExecError::Fault { .. }) => {
            let ExecError::Fault { fault, access, .. } = &e else {
                unreachable!()
            };
            assert_eq!(*fault, MemoryFault::read_only(base + 4));
            assert_eq!(
                *access,
                Access {
                    kind: AccessKind::Atomic,
                    bytes: 4
                }
            );
            assert_eq!(e.fault(), Some(*fault));
            let text = e.to_string();
            assert!(
                text.contains("4-byte atomic") && text.contains("global_atomic_add_u32"),
                "{text}"
            );
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn undecodable_and_refused_instructions_say_why() {
    let mut w = WaveState::new(8);
    // A VOP3 dword without its second: truncated.
    match execute(&[0xd727_0002], &mut w) {
        Err(ExecError::Decode { words, reason, .. }) => {
            assert_eq!(words, [0xd727_0002]);
            assert!(!reason.is_empty());
        }
        other => panic!("{other:?}"),
    }
    // s_trap 2: the interpreter runs no trap handler.
    match execute(&[0xbf90_0002], &mut w) {
        Err(ExecError::Unsupported { at, reason }) => {
            assert_eq!(at.inst, "s_trap 2 [bf900002]");
            assert!(reason.contains("trap"), "{reason}");
        }
        other => panic!("{other:?}"),
    }
}
