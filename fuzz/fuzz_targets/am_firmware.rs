//! Bytes as a firmware file of each kind tinygrad 0.10.1 loads (`amd_am::firmware`):
//! the first byte picks the parser (bits 0..3) and, for the RS64 images, how many
//! pipes' data images to take (bits 3..6). What parses gives non-empty images that
//! lie inside the file.
#![no_main]

use amd_am::firmware::{
    FirmwareFile, Rs64, parse_imu, parse_psp_components, parse_rlc, parse_rs64, parse_sdma, parse_smu,
};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&which, body)) = data.split_first() else {
        return;
    };
    let len = body.len();
    let pipes = which >> 3 & 7;
    let f = FirmwareFile::new("fuzz.bin", body.to_vec());
    let images = match which % 8 {
        0 => {
            if let Ok(parts) = parse_psp_components(&f) {
                assert!(parts.iter().all(|p| p.bytes.len() <= len));
            }
            return;
        }
        1 => parse_smu(&f).map(|i| vec![i]),
        2 => parse_sdma(&f).map(Vec::from),
        3 => parse_rs64(&f, Rs64::Pfp, pipes).map(|(v, _)| v),
        4 => parse_rs64(&f, Rs64::Mec, pipes).map(|(v, _)| v),
        5 => parse_imu(&f).map(Vec::from),
        _ => parse_rlc(&f),
    };
    match images {
        Ok(v) => assert!(v.iter().all(|i| !i.bytes.is_empty() && i.bytes.len() <= len)),
        Err(e) => assert!(e.to_string().starts_with("firmware fuzz.bin: "), "{e}"),
    }
});
