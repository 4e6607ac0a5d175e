//! Random dwords through the RDNA3 and RDNA4 decoders (`amd_isa::rdna3::Inst::decode`,
//! `amd_isa::rdna4::Inst::decode`), one instruction after another (skipping a dword
//! after an error): RDNA3's with `Display`, the mnemonic and the source operands of
//! each; RDNA4's with its text, its name and its RDNA3 lowering. Sizes stay within
//! what was decoded.
#![no_main]

use std::fmt::Write;

use amd_isa::rdna3::Inst;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let words = amd_hcq_fuzz::dwords(data);
    rdna3(&words);
    rdna4(&words);
});

fn rdna3(words: &[u32]) {
    let mut text = String::new();
    let mut at = 0;
    while at < words.len() {
        match Inst::decode(&words[at..]) {
            Ok(inst) => {
                at += checked_size(inst.size, at, words.len());
                let _ = write!(text, "{inst}");
                let _ = inst.mnemonic();
                let _ = inst.srcs();
            }
            Err(e) => {
                let _ = write!(text, "{e}");
                at += 1;
            }
        }
        text.clear();
    }
}

fn rdna4(words: &[u32]) {
    let mut at = 0;
    while at < words.len() {
        match amd_isa::rdna4::Inst::decode(&words[at..]) {
            Ok(inst) => {
                at += checked_size(inst.size, at, words.len());
                let _ = inst.text();
                let _ = inst.name();
                if let Some(r) = inst.to_rdna3() {
                    let _ = r.to_string();
                }
            }
            Err(e) => {
                let _ = e.to_string();
                at += 1;
            }
        }
    }
}

/// An instruction's size in dwords, checked to lie inside the words from `at`.
fn checked_size(size: u8, at: usize, len: usize) -> usize {
    let size = usize::from(size);
    assert!(size >= 1 && at + size <= len, "size {size} at {at} of {len}");
    size
}
