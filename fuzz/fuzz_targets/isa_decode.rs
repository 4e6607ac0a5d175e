//! Random dwords through the RDNA3 decoder (`amd_isa::rdna3::Inst::decode`), one
//! instruction after another (skipping a dword after an error), with `Display`, the
//! mnemonic and the source operands of each. Sizes stay within what was decoded.
#![no_main]

use std::fmt::Write;

use amd_isa::rdna3::Inst;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let words = amd_hcq_fuzz::dwords(data);
    let mut text = String::new();
    let mut at = 0;
    while at < words.len() {
        match Inst::decode(&words[at..]) {
            Ok(inst) => {
                let size = inst.size as usize;
                assert!(
                    size >= 1 && at + size <= words.len(),
                    "size {size} at {at} of {}",
                    words.len()
                );
                let _ = write!(text, "{inst}");
                let _ = inst.mnemonic();
                let _ = inst.srcs();
                at += size;
            }
            Err(e) => {
                let _ = write!(text, "{e}");
                at += 1;
            }
        }
        text.clear();
    }
});
