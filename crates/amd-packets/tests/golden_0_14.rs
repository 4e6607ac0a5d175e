//! The encoders reproduce, dword for dword, the command streams tinygrad 0.14.0 builds
//! for gfx1100 and for gfx12 (`golden/tinygrad-0.14.0-streams.json`, captured on its
//! own mock GPU by `cargo xtask golden-capture` with fixed synthetic addresses).
//!
//! tinygrad 0.14 builds every one of these packets alike for both generations (SDMA 7
//! takes SDMA 6's packets; the HDP flush registers and the cache controls are the
//! same): the encoders must too. Its timestamp is three packets (a release, the
//! clock's release, an acquire; tinygrad 0.10.1's, which amd-hcq follows, is the one
//! in the middle), each compared; its signal asks for no interrupt on the signal's own
//! write (0.10.1's did). Copies of at most 4 MiB only: tinygrad 0.14 splits a
//! copy at 1 GiB, 0.10.1 and amd-hcq at 4 MiB.

use amd_packets::GfxTarget;
use amd_packets::pm4::recipes::{self, Signal};
use amd_packets::pm4::{AcquireMem, DataSel, GcrCntl, IntSel, ReleaseMem, WaitRegMem};
use amd_packets::sdma::{CopyLinear, Fence, PollRegmem, Timestamp, Trap};
use serde_json::Value;

fn golden() -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../golden/tinygrad-0.14.0-streams.json");
    let text = std::fs::read_to_string(path).expect("golden file is part of the repository");
    serde_json::from_str(&text).expect("golden file is JSON")
}

fn hex(v: &Value) -> u32 {
    let s = v.as_str().expect("a hex string");
    u32::from_str_radix(s.trim_start_matches("0x"), 16).expect("hex")
}

/// Our stream for case `name` on `t`, and the SDMA packets' sizes; `input` reads the
/// capture's synthetic inputs.
fn build(t: GfxTarget, name: &str, input: &dyn Fn(&str) -> u64) -> (Vec<u32>, Vec<usize>) {
    let mut out = Vec::new();
    let mut sizes = Vec::new();
    let (sig, tl) = (input("sig_base"), input("tl_sig_base"));
    let event = (input("queue_event_mailbox_ptr"), input("queue_event_id") as u32);
    match name {
        "compute.wait" => {
            WaitRegMem::memory_ge(sig, 5).encode(t, &mut out);
        }
        // tinygrad 0.14 raises no interrupt for the signal's own write (0.10.1, whose
        // `Signal` recipe amd-hcq follows, asks for one); the mailbox write is
        // `Signal`'s.
        "compute.signal" => {
            ReleaseMem::signal(sig, 7).int_sel(IntSel::None).encode(t, &mut out);
        }
        "compute.signal_timeline" => {
            ReleaseMem::signal(tl, 7).int_sel(IntSel::None).encode(t, &mut out);
            let mut both = Vec::new();
            Signal {
                address: tl,
                value: 7,
                event: Some(event),
            }
            .encode(t, &mut both);
            out.extend_from_slice(&both[ReleaseMem::DWORDS..]);
        }
        "compute.timestamp" => {
            // tinygrad's release_mem() with its defaults: no data, the interrupt
            // selector 2, no cache action.
            ReleaseMem::new(0, DataSel::None)
                .int_sel(IntSel::AfterWriteConfirm)
                .encode(t, &mut out);
            ReleaseMem::timestamp(sig + 8).encode(t, &mut out);
            AcquireMem::all(GcrCntl::ALL).encode(t, &mut out);
        }
        "compute.memory_barrier" => {
            recipes::memory_barrier(t, &mut out);
        }
        n if n.starts_with("copy.copy_") => {
            let size = u64::from_str_radix(&n["copy.copy_0x".len()..], 16).expect("size in the case name");
            for p in CopyLinear::split(input("dst"), input("src"), size).expect("split") {
                p.encode(t, &mut out);
                sizes.push(CopyLinear::DWORDS);
            }
        }
        "copy.signal" => {
            Fence::new(sig, 7).encode(t, &mut out);
            sizes.push(Fence::DWORDS);
        }
        "copy.signal_timeline" => {
            Fence::new(tl, 7).encode(t, &mut out);
            Fence::new(event.0, event.1).encode(t, &mut out);
            Trap::new(event.1).expect("event ids fit 28 bits").encode(t, &mut out);
            sizes.extend([Fence::DWORDS, Fence::DWORDS, Trap::DWORDS]);
        }
        "copy.wait" => {
            PollRegmem::memory_ge(sig, 5).encode(t, &mut out);
            sizes.push(PollRegmem::DWORDS);
        }
        "copy.timestamp" => {
            Timestamp::new(sig + 8).expect("aligned").encode(t, &mut out);
            sizes.push(Timestamp::DWORDS);
        }
        other => panic!("golden case {other} has no builder here: add one"),
    }
    (out, sizes)
}

#[test]
fn encoders_match_tinygrad_0_14_on_gfx11_and_gfx12() {
    let g = golden();
    let targets = g["targets"].as_array().expect("targets");
    let archs: Vec<&str> = targets.iter().map(|t| t["arch"].as_str().expect("arch")).collect();
    assert_eq!(archs, ["gfx1100", "gfx1200"], "the capture's targets");
    for target in targets {
        let arch = target["arch"].as_str().expect("arch");
        let t = GfxTarget::from_version(target["gfx_target_version"].as_u64().expect("version") as u32)
            .expect("a target the encoders know");
        let input = |k: &str| target["inputs"][k].as_u64().unwrap_or_else(|| panic!("input {k}"));
        let cases = target["cases"].as_object().expect("cases");
        assert_eq!(cases.len(), 12, "{arch}: the cases captured");
        for (name, case) in cases {
            let want: Vec<u32> = case["dwords"].as_array().expect("dwords").iter().map(hex).collect();
            let (got, sizes) = build(t, name, &input);
            assert_eq!(got, want, "{arch} {name}");
            if let Some(s) = case.get("internal_cmd_sizes") {
                let want: Vec<usize> = s
                    .as_array()
                    .expect("sizes")
                    .iter()
                    .map(|v| v.as_u64().expect("size") as usize)
                    .collect();
                assert_eq!(sizes, want, "{arch} {name}: packet sizes");
            }
        }
    }
}
