//! Bytes as the IP discovery binary read from the top of VRAM
//! (`amd_am::ip::Discovery::parse`). What parses has one GC info table of version
//! 1.x and blocks whose base counts fit the entry's 8-bit count.
#![no_main]

use amd_am::ip::{Discovery, Ip};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(d) = Discovery::parse(data) else { return };
    assert_eq!(d.gc.version.0, 1);
    assert!(d.blocks.iter().all(|b| b.bases.len() <= 255));
    for ip in Ip::ALL {
        let _ = d.ip_version(ip);
    }
});
