//! Bytes as a code object: `CodeObject::parse`, then `kernel(name)` for every kernel
//! it names (and for the names of its `.kd` symbols). Never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(co) = amd_hcq::CodeObject::parse(data) else {
        return;
    };
    for name in co.kernel_names() {
        if let Ok(k) = co.kernel(&name) {
            let _ = format!("{k:?}");
        }
    }
    // A name that is not there.
    assert!(co.kernel("\u{0}no such kernel").is_err());
});
