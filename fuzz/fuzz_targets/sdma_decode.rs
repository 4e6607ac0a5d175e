//! Random dwords through the SDMA decoder for both targets, to the end of the stream:
//! offsets advance and stay inside the stream, every packet and error prints, and a
//! decoded packet re-encodes to dwords that decode to the same packet.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    amd_hcq_fuzz::check_packet_stream!(&amd_hcq_fuzz::dwords(data), sdma, SdmaPacket);
});
