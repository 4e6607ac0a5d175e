//! `hcq`: the command-line tool of amd-hcq, for people who debug AMD GPUs.
//!
//! ```text
//! hcq info                          the GPUs, their transport and properties
//! hcq disasm FILE                   a code object's kernels, descriptors, arguments, code
//! hcq decode [--sdma] [--target T] [FILE]
//!                                   PM4 (or SDMA) dwords, in hex, one packet per line
//! hcq run FILE KERNEL --grid X[,Y,Z] --block X[,Y,Z] [--arg A]...
//!                                   runs a kernel and prints its buffers and time
//! ```
//!
//! The GPU is the first AMD GPU through `/dev/kfd`, or the mock GPU where there is
//! none (`AMD_IFACE=KFD` / `AMD_IFACE=MOCK` force one).

use std::process::ExitCode;

mod cmd;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match cmd::run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(cmd::Error::Usage(msg)) => {
            eprintln!("hcq: {msg}\n\n{}", cmd::USAGE);
            ExitCode::from(2)
        }
        Err(cmd::Error::Failed(msg)) => {
            eprintln!("hcq: {msg}");
            ExitCode::FAILURE
        }
    }
}
