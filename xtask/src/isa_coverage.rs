//! `cargo xtask isa-coverage [rdna4] [--check]`: runs every RDNA3 (or RDNA4) opcode
//! through the interpreter and writes the report (`crates/amd-isa/coverage/rdna3.md`,
//! `rdna4.md`): per encoding, how many opcodes are implemented, refused on purpose
//! (with the reason), and missing; then prints the table.

use crate::Result;

pub fn run(args: &[String]) -> Result<()> {
    let (rdna4, rest) = match args {
        [g, rest @ ..] if g == "rdna4" => (true, rest),
        [g, rest @ ..] if g == "rdna3" => (false, rest),
        rest => (false, rest),
    };
    let check = crate::check_flag(rest, "isa-coverage [rdna3|rdna4]")?;
    let (output, report, regen) = if rdna4 {
        (
            "crates/amd-isa/coverage/rdna4.md",
            amd_isa::rdna4::report(),
            "cargo xtask isa-coverage rdna4",
        )
    } else {
        (
            "crates/amd-isa/coverage/rdna3.md",
            amd_isa::rdna3::report(),
            "cargo xtask isa-coverage",
        )
    };
    crate::write_or_check(output, &report, check, regen)?;
    for line in report.lines().filter(|l| l.starts_with('|')) {
        println!("{line}");
    }
    println!("(the opcodes by name: {output})");
    Ok(())
}
