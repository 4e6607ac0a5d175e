//! Random dwords through the SDMA decoder for both targets, to the end of the stream:
//! offsets advance and stay inside the stream, every packet and error prints, and a
//! decoded packet re-encodes to dwords that decode to the same packet.
#![no_main]

use std::fmt::Write;

use amd_packets::GfxTarget;
use amd_packets::sdma::{self, SdmaPacket};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let words = amd_hcq_fuzz::dwords(data);
    let mut text = String::new();
    for t in GfxTarget::ALL {
        let mut next = 0;
        let mut items = 0;
        for r in sdma::decode(t, &words) {
            items += 1;
            assert!(items <= words.len() + 1, "the stream does not end");
            match r {
                Ok((at, p)) => {
                    assert!(at == next && at < words.len(), "offset {at}, expected {next}");
                    let _ = write!(text, "{p}");
                    let mut again = Vec::new();
                    let start = p.encode(t, &mut again);
                    assert_eq!(start, 0);
                    match SdmaPacket::decode(t, &again) {
                        Ok((q, len)) => {
                            assert_eq!(q, p, "{t:?}: decode(encode(p)) != p");
                            assert_eq!(len, again.len());
                        }
                        Err(e) => panic!("{t:?}: {p} re-encodes to {again:08x?}, which does not decode: {e}"),
                    }
                    next = at + SdmaPacket::decode(t, &words[at..]).map_or(0, |(_, n)| n);
                }
                Err(e) => {
                    let _ = write!(text, "{e}");
                }
            }
        }
        text.clear();
    }
});
