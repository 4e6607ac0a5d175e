//! `cargo xtask isa-coverage [rdna3|rdna4|cdna3] [--check]`: runs every RDNA3 (or
//! RDNA4, or CDNA3) opcode through the interpreter and writes the report
//! (`crates/amd-isa/coverage/rdna3.md`, `rdna4.md`, `cdna3.md`): per encoding, how many opcodes are implemented, refused on purpose
//! (with the reason), and missing; then prints the table.

use crate::Result;

pub fn run(args: &[String]) -> Result<()> {
    let (generation, rest) = match args {
        [g, rest @ ..] if ["rdna3", "rdna4", "cdna3"].contains(&g.as_str()) => (g.as_str(), rest),
        rest => ("rdna3", rest),
    };
    let check = crate::check_flag(rest, "isa-coverage [rdna3|rdna4|cdna3]")?;
    let (output, report, regen) = match generation {
        "rdna4" => (
            "crates/amd-isa/coverage/rdna4.md",
            amd_isa::rdna4::report(),
            "cargo xtask isa-coverage rdna4",
        ),
        "cdna3" => (
            "crates/amd-isa/coverage/cdna3.md",
            amd_isa::cdna3::report(),
            "cargo xtask isa-coverage cdna3",
        ),
        _ => (
            "crates/amd-isa/coverage/rdna3.md",
            amd_isa::rdna3::report(),
            "cargo xtask isa-coverage",
        ),
    };
    crate::write_or_check(output, &report, check, regen)?;
    for line in report.lines().filter(|l| l.starts_with('|')) {
        println!("{line}");
    }
    println!("(the opcodes by name: {output})");
    Ok(())
}
