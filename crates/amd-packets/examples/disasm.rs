//! Prints PM4 and SDMA command streams as a disassembly.
//!
//! ```text
//! cargo run --release --example disasm                      # the sample streams
//! cargo run --release --example disasm -- FILE [--sdma] [--target gfx1030|gfx1100]
//! ```
//!
//! Without a file, it encodes what a kernel launch and a copy put in the rings (the
//! shape tinygrad 0.10.1 uses) and prints them decoded. With a file, it reads dwords
//! written in hex (`0x` optional; separated by spaces, commas or new lines; `#` starts
//! a comment) and decodes them as PM4, or as SDMA with `--sdma`.

use std::process::ExitCode;

use amd_packets::pm4::recipes::{self, Signal};
use amd_packets::pm4::{self, WaitRegMem};
use amd_packets::sdma::{self, CopyLinear, Fence, PollRegmem, Timestamp, Trap};
use amd_packets::testing::sample_dispatch;
use amd_packets::{GfxTarget, PacketError, lo_hi};

fn print_pm4(target: GfxTarget, words: &[u32]) -> Result<(), PacketError> {
    for item in pm4::decode(target, words) {
        let (at, p) = item?;
        println!("  {at:4}: {p}");
    }
    Ok(())
}

fn print_sdma(target: GfxTarget, words: &[u32]) -> Result<(), PacketError> {
    for item in sdma::decode(target, words) {
        let (at, p) = item?;
        println!("  {at:4}: {p}");
    }
    Ok(())
}

fn samples(target: GfxTarget) -> Result<(), PacketError> {
    let (timeline, mailbox, event_id) = (0x7ff0_0000_1010, 0x7ff0_0010_0010, 2);
    let kernargs = lo_hi(0x7f40_0000_0000);

    let mut compute = Vec::new();
    WaitRegMem::memory_ge(timeline, 4).encode(target, &mut compute);
    recipes::memory_barrier(target, &mut compute);
    sample_dispatch(&kernargs).encode(target, &mut compute)?;
    Signal {
        address: timeline,
        value: 5,
        event: Some((mailbox, event_id)),
    }
    .encode(target, &mut compute);
    println!(
        "compute queue ({target}): wait, memory barrier, dispatch, signal — {} dwords",
        compute.len()
    );
    print_pm4(target, &compute)?;

    let mut copy = Vec::new();
    PollRegmem::memory_ge(timeline, 5).encode(target, &mut copy);
    Timestamp::new(timeline + 8)?.encode(target, &mut copy);
    CopyLinear::encode_split(target, 0x7f10_0000_0000, 0x7f20_0000_0000, 10 << 20, &mut copy)?;
    Fence::new(timeline, 6).encode(target, &mut copy);
    Fence::new(mailbox, event_id).encode(target, &mut copy);
    Trap::new(event_id)?.encode(target, &mut copy);
    println!(
        "\ncopy queue ({target}): wait, timestamp, 10 MiB copy, signal — {} dwords",
        copy.len()
    );
    print_sdma(target, &copy)
}

fn parse_dwords(text: &str) -> Result<Vec<u32>, String> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("");
        for tok in line
            .split(|c: char| c.is_whitespace() || c == ',')
            .filter(|t| !t.is_empty())
        {
            let hex = tok.strip_prefix("0x").or_else(|| tok.strip_prefix("0X")).unwrap_or(tok);
            let v = u32::from_str_radix(hex, 16)
                .map_err(|e| format!("line {}: {tok:?} is not a hex dword ({e})", n + 1))?;
            out.push(v);
        }
    }
    Ok(out)
}

fn run() -> Result<(), String> {
    let mut file = None;
    let mut sdma_stream = false;
    let mut target = GfxTarget::Gfx11;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--sdma" => sdma_stream = true,
            "--target" => {
                let t = args.next().ok_or("--target needs a value such as gfx1100")?;
                target = GfxTarget::from_name(&t).map_err(|e| format!("target {t}: {e}"))?;
            }
            "-h" | "--help" => {
                println!("usage: disasm [FILE [--sdma]] [--target gfx1030|gfx1100]");
                return Ok(());
            }
            _ if file.is_none() => file = Some(a),
            other => return Err(format!("unexpected argument {other}")),
        }
    }
    let Some(path) = file else {
        println!("The command streams amd-hcq puts in a GPU's rings for a launch and a copy");
        println!("(no GPU is driven; `hcq decode` decodes dwords from a file or stdin).\n");
        return samples(target).map_err(|e| e.to_string());
    };
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{path}: {e}"))?;
    let words = parse_dwords(&text).map_err(|e| format!("{path}: {e}"))?;
    let result = if sdma_stream {
        print_sdma(target, &words)
    } else {
        print_pm4(target, &words)
    };
    result.map_err(|e| format!("{path}: {e}"))
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("disasm: {e}");
            ExitCode::FAILURE
        }
    }
}
