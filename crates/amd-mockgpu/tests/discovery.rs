//! The IP discovery binary of the mock PCI GPUs, read as a driver finds it (VRAM
//! size from the register file, the binary 64 KiB below the top of VRAM) and parsed
//! with a parser written here from `discovery.h`'s byte layout.

use amd_kfd::mmio::Mmio;
use amd_mockgpu::pci::{Discovery, RCC_CONFIG_MEMSIZE};
use amd_mockgpu::{GpuProfile, MockConfig, MockSys, PciProfile};
use amd_regs::discovery as dsc;
use zerocopy::FromBytes;

const MIB: u64 = 1 << 20;

fn two_gpus() -> MockSys {
    MockSys::new(MockConfig {
        pci: vec![PciProfile::navi31(), PciProfile::navi21()],
        ..MockConfig::pci(0)
    })
}

/// A parser written from `discovery.h`'s byte layout, apart from the structs in
/// amd-am, checking every checksum the driver checks.
/// An IP entry: hardware id, instance, version, bases.
type IpEntry = (u16, u8, (u8, u8, u8), Vec<u32>);

#[derive(Debug)]
struct Parsed {
    ips: Vec<IpEntry>,
    table_version: u16,
    gc: Vec<u32>,
    gc_version: (u16, u16),
    harvest: Vec<(u16, u8)>,
}

fn u16_at(b: &[u8], o: usize) -> u16 {
    u16::from_le_bytes(b[o..o + 2].try_into().unwrap())
}

fn u32_at(b: &[u8], o: usize) -> u32 {
    u32::from_le_bytes(b[o..o + 4].try_into().unwrap())
}

fn byte_sum(b: &[u8]) -> u16 {
    b.iter().fold(0u16, |s, &x| s.wrapping_add(x as u16))
}

/// Entry `i` of the binary's table list: the table's offset, once its signature and
/// the checksum of its `len(offset)` bytes are checked.
fn table(bin: &[u8], i: usize, signature: u32, len: impl Fn(usize) -> usize, what: &str) -> Result<usize, String> {
    let (off, sum) = (u16_at(bin, 12 + 8 * i) as usize, u16_at(bin, 14 + 8 * i));
    if u32_at(bin, off) != signature {
        return Err(format!("{what} signature"));
    }
    if byte_sum(&bin[off..off + len(off)]) != sum {
        return Err(format!("{what} checksum"));
    }
    Ok(off)
}

fn parse(bin: &[u8]) -> Result<Parsed, String> {
    if u32_at(bin, 0) != 0x2821_1407 {
        return Err("binary signature".into());
    }
    let size = u16_at(bin, 10) as usize;
    if byte_sum(&bin[10..size]) != u16_at(bin, 8) {
        return Err("binary checksum".into());
    }
    let ip_off = table(bin, 0, 0x5344_5049, |o| u16_at(bin, o + 6) as usize, "IP discovery")?;
    let num_dies = u16_at(bin, ip_off + 12);
    if num_dies != 1 || bin[ip_off + 78] & 1 != 0 {
        return Err("one die with 32-bit bases expected".into());
    }
    let die_off = u16_at(bin, ip_off + 16) as usize;
    let num_ips = u16_at(bin, die_off + 2) as usize;
    let mut at = die_off + 4;
    let mut ips = Vec::new();
    for _ in 0..num_ips {
        let n = bin[at + 3] as usize;
        let bases = (0..n).map(|k| u32_at(bin, at + 8 + 4 * k)).collect();
        ips.push((
            u16_at(bin, at),
            bin[at + 2],
            (bin[at + 4], bin[at + 5], bin[at + 6]),
            bases,
        ));
        at += 8 + 4 * n;
    }
    let gc_off = table(bin, 1, 0x4347, |o| u32_at(bin, o + 8) as usize, "GC table")?;
    let gc_size = u32_at(bin, gc_off + 8) as usize;
    let gc = (12..gc_size).step_by(4).map(|o| u32_at(bin, gc_off + o)).collect();
    let hv_off = table(bin, 2, 0x5652_4148, |_| 136, "harvest table")?;
    let harvest = (0..32)
        .map(|k| (u16_at(bin, hv_off + 8 + 4 * k), bin[hv_off + 10 + 4 * k]))
        .take_while(|&(id, _)| id != 0)
        .collect();
    Ok(Parsed {
        ips,
        table_version: u16_at(bin, ip_off + 4),
        gc,
        gc_version: (u16_at(bin, gc_off + 4), u16_at(bin, gc_off + 6)),
        harvest,
    })
}

/// Reads the discovery binary as a driver finds it: VRAM size from the register,
/// the binary 64 KiB below the top.
fn read_discovery(m: &MockSys, gpu: usize) -> Vec<u8> {
    let mib = m.pci_registers(gpu).unwrap().read32(RCC_CONFIG_MEMSIZE) as u64;
    let mut bin = vec![0u8; dsc::DISCOVERY_TMR_SIZE];
    assert!(m.pci_read_vram(gpu, (mib << 20) - dsc::DISCOVERY_TMR_OFFSET, &mut bin));
    bin
}

fn ip_of(p: &Parsed, hw: u16, inst: u8) -> (&(u8, u8, u8), &Vec<u32>) {
    let e = p.ips.iter().find(|e| e.0 == hw && e.1 == inst).unwrap();
    (&e.2, &e.3)
}

/// tinygrad's `props`: SIMDs from the GC table, as KFD's `simd_count`.
fn simd_count(gc: &[u32]) -> u64 {
    let (se, wgp0, wgp1, sa) = (gc[0], gc[1], gc[2], gc[16]);
    2 * 2 * (sa * se) as u64 * (wgp0 + wgp1) as u64
}

#[test]
fn discovery_tables_of_both_profiles() {
    let m = two_gpus();
    let xtx = parse(&read_discovery(&m, 0)).unwrap();
    assert_eq!(xtx.table_version, 4);
    let h = dsc::hw_id::GC;
    assert_eq!(
        ip_of(&xtx, h, 0),
        (&(11, 0, 0), &vec![0x1260, 0xA000, 0x1C000, 0x2402C00])
    );
    assert_eq!(ip_of(&xtx, dsc::hw_id::MP0, 0).0, &(13, 0, 0));
    assert_eq!(ip_of(&xtx, dsc::hw_id::MP1, 0).0, &(13, 0, 0));
    assert_eq!(ip_of(&xtx, dsc::hw_id::NBIF, 0).0, &(4, 3, 0));
    assert_eq!(
        ip_of(&xtx, dsc::hw_id::NBIF, 0).1[2],
        0xD20,
        "RCC_CONFIG_MEMSIZE's segment"
    );
    assert_eq!(ip_of(&xtx, dsc::hw_id::MMHUB, 0).0, &(3, 0, 0));
    assert_eq!(ip_of(&xtx, dsc::hw_id::OSSSYS, 0).0, &(6, 0, 0));
    assert_eq!(ip_of(&xtx, dsc::hw_id::SDMA0, 0).0, &(6, 0, 0));
    assert_eq!(ip_of(&xtx, dsc::hw_id::SDMA1, 0).0, &(6, 0, 0));
    assert_eq!(ip_of(&xtx, dsc::hw_id::HDP, 0).0, &(6, 0, 0));
    assert_eq!(ip_of(&xtx, dsc::hw_id::SMUIO, 0).0, &(13, 0, 0));
    assert_eq!(xtx.gc_version, (1, 2));
    assert_eq!(xtx.gc.len(), 30);
    assert_eq!(simd_count(&xtx.gc), GpuProfile::gfx1100().prop("simd_count").unwrap());
    assert_eq!(
        (xtx.gc[12], xtx.gc[13], xtx.gc[14]),
        (16, 32, 64),
        "waves, scratch slots, LDS"
    );
    assert!(xtx.harvest.is_empty());

    let n21 = parse(&read_discovery(&m, 1)).unwrap();
    assert_eq!(n21.table_version, 3);
    assert_eq!(ip_of(&n21, h, 0).0, &(10, 3, 0));
    assert_eq!(ip_of(&n21, dsc::hw_id::MP0, 0).0, &(11, 0, 7));
    assert_eq!(ip_of(&n21, dsc::hw_id::NBIF, 0).1.len(), 5);
    assert!(n21.ips.iter().any(|e| e.0 == dsc::hw_id::SDMA3));
    assert_eq!(n21.gc_version, (1, 0));
    assert_eq!(n21.gc.len(), 19);
    assert_eq!(simd_count(&n21.gc), GpuProfile::gfx1030().prop("simd_count").unwrap());
    assert_eq!(n21.harvest, [(dsc::hw_id::VCN, 1)]);
    assert_eq!(m.pci_registers(1).unwrap().read32(RCC_CONFIG_MEMSIZE), 256);

    // The amd-am structs read the same binary; a flipped byte breaks a checksum.
    let mut bin = read_discovery(&m, 0);
    let (bh, _) = dsc::binary_header::read_from_prefix(&bin).unwrap();
    assert_eq!(bh.binary_signature, dsc::BINARY_SIGNATURE);
    let at = bh.table_list[dsc::IP_DISCOVERY].offset as usize;
    let (ih, _) = dsc::ip_discovery_header::read_from_prefix(&bin[at..]).unwrap();
    assert_eq!((ih.signature, ih.num_dies), (dsc::DISCOVERY_TABLE_SIGNATURE, 1));
    assert_eq!(
        dsc::checksum(&bin[dsc::BINARY_CHECKSUM_START..bh.binary_size as usize]),
        bh.binary_checksum
    );
    bin[at + 90] ^= 1;
    assert!(parse(&bin).unwrap_err().contains("checksum"));

    // The generator is driven by the profile: a changed profile changes the table.
    let mut custom = Discovery::navi31();
    custom.ips[0].version = (11, 0, 3);
    custom.harvest.push((dsc::hw_id::SDMA1, 0));
    let m = MockSys::new(MockConfig {
        pci: vec![PciProfile {
            discovery: custom,
            ..PciProfile::navi31().with_vram(64 * MIB)
        }],
        ..MockConfig::pci(0)
    });
    let c = parse(&read_discovery(&m, 0)).unwrap();
    assert_eq!(ip_of(&c, h, 0).0, &(11, 0, 3));
    assert_eq!(c.harvest, [(dsc::hw_id::SDMA1, 0)]);
}

#[test]
fn a_missing_ip_block_is_absent_from_the_table_and_has_no_behaviour() {
    let m = MockSys::new(MockConfig {
        pci: vec![PciProfile::navi31().without_ip(dsc::hw_id::MP1)],
        ..MockConfig::pci(0)
    });
    let t = parse(&read_discovery(&m, 0)).unwrap();
    assert!(t.ips.iter().all(|e| e.0 != dsc::hw_id::MP1), "no MP1 entry");
    assert_eq!(ip_of(&t, dsc::hw_id::MP0, 0).0, &(13, 0, 0), "the rest is there");
    let regs = m.pci_registers(0).unwrap();
    assert!(
        regs.with_block(|_: &mut amd_mockgpu::pci::smu::Smu| ()).is_none(),
        "no SMU block"
    );
    // Where a 7900 XTX's SMU answers (MP1 segment 0 + C2PMSG_66/90), nothing does:
    // the response register stays as written.
    let bases = Discovery::navi31();
    let mp1 = bases.ips.iter().find(|ip| ip.hw_id == dsc::hw_id::MP1).unwrap();
    let at = |r: amd_mockgpu::pci::regs::AmReg| r.addr(&mp1.bases).unwrap();
    use amd_mockgpu::pci::regs::generated::{mp, smu};
    regs.write32(at(mp::V13_0_0.MP1_SMN_C2PMSG_90), 0);
    regs.write32(at(mp::V13_0_0.MP1_SMN_C2PMSG_66), smu::PPSMC_MSG_GetSmuVersion);
    assert_eq!(regs.read32(at(mp::V13_0_0.MP1_SMN_C2PMSG_90)), 0);
    // The same message to a complete device is answered.
    let full = MockSys::new(MockConfig::pci(1));
    let regs = full.pci_registers(0).unwrap();
    regs.write32(at(mp::V13_0_0.MP1_SMN_C2PMSG_90), 0);
    regs.write32(at(mp::V13_0_0.MP1_SMN_C2PMSG_66), smu::PPSMC_MSG_GetSmuVersion);
    assert_eq!(regs.read32(at(mp::V13_0_0.MP1_SMN_C2PMSG_90)), smu::PPSMC_Result_OK);
}
