//! `cargo xtask isa-coverage [--check]`: runs every RDNA3 opcode through the mock's
//! interpreter and writes the report (`crates/amd-isa/coverage/rdna3.md`): per
//! encoding, how many opcodes are implemented, refused on purpose (with the reason),
//! and missing; then prints the table.

use crate::{Result, workspace_root};

const OUTPUT: &str = "crates/amd-isa/coverage/rdna3.md";

pub fn run(args: &[String]) -> Result<()> {
    let check = match args {
        [] => false,
        [a] if a == "--check" => true,
        _ => return Err("usage: cargo xtask isa-coverage [--check]".into()),
    };
    let report = amd_isa::rdna3::report();
    let path = workspace_root().join(OUTPUT);
    if check {
        if std::fs::read_to_string(&path).ok().as_deref() != Some(report.as_str()) {
            return Err(format!("{OUTPUT} is stale: run `cargo xtask isa-coverage`").into());
        }
    } else {
        std::fs::write(&path, &report)?;
    }
    for line in report.lines().filter(|l| l.starts_with('|')) {
        println!("{line}");
    }
    println!("(the opcodes by name: {OUTPUT})");
    Ok(())
}
