//! Text as a sysfs `properties` file (`NodeProperties::parse`). What parses has sizes
//! that fit: wave slots, LDS bytes and the context-save sizes are all computable.
#![no_main]

use std::path::Path;

use amd_kfd::CwsrSizes;
use amd_kfd::topology::NodeProperties;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let Ok(p) = NodeProperties::parse(&text, Path::new("properties")) else {
        return;
    };
    let _ = p.arch();
    let _ = p.target();
    let _ = p.cu_count();
    p.waves_per_cu().expect("parsed properties have a wave count");
    p.lds_size().expect("parsed properties have an LDS size");
    match CwsrSizes::for_props(&p) {
        Ok(s) => {
            s.ctx_save_restore_size().expect("a save size");
            s.allocation_size().expect("an allocation size");
        }
        Err(e) => assert!(e.to_string().contains("no compute units"), "{e}"),
    }
});
