//! `cargo xtask isa-coverage [--check]`: runs every RDNA3 opcode through the mock's
//! interpreter and writes the report (`crates/amd-isa/coverage/rdna3.md`): per
//! encoding, how many opcodes are implemented, refused on purpose (with the reason),
//! and missing; then prints the table.

use crate::Result;

const OUTPUT: &str = "crates/amd-isa/coverage/rdna3.md";

pub fn run(args: &[String]) -> Result<()> {
    let check = crate::check_flag(args, "isa-coverage")?;
    let report = amd_isa::rdna3::report();
    crate::write_or_check(OUTPUT, &report, check, "cargo xtask isa-coverage")?;
    for line in report.lines().filter(|l| l.starts_with('|')) {
        println!("{line}");
    }
    println!("(the opcodes by name: {OUTPUT})");
    Ok(())
}
