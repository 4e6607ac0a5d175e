//! IP discovery read from the mock PCI GPU's VRAM through BAR 0, register access by
//! IP block and instance, and the identification registers tinygrad 0.10.1 reads at
//! bring-up; hostile discovery binaries give errors, never panics.

use std::sync::Arc;

use amd_am::AmError;
use amd_am::discovery::{self as dsc, hw_id};
use amd_am::ip::{AM_VERSION, AmDevice, Discovery, Ip};
use amd_am::pci::{PciBus, PciOptions};
use amd_am::regs::AmReg;
use amd_am::regs::generated::{gc, mp, nbio, osssys};
use amd_kfd::sys::Sys;
use amd_mockgpu::pci::model::reg_addr;
use amd_mockgpu::pci::{GcInfo, RegWrite};
use amd_mockgpu::{MockConfig, MockSys, PciProfile};
use proptest::prelude::*;

const MIB: u64 = 1 << 20;

fn open(profiles: Vec<PciProfile>) -> (Arc<MockSys>, Vec<amd_am::Result<AmDevice>>) {
    let m = Arc::new(MockSys::new(MockConfig {
        pci: profiles,
        ..MockConfig::pci(0)
    }));
    let mut bus = PciBus::scan(m.clone() as Arc<dyn Sys>, &PciOptions::default()).unwrap();
    let devs = (0..bus.gpus().len())
        .map(|i| bus.open(i).and_then(AmDevice::new))
        .collect();
    (m, devs)
}

/// A Navi 31 opened, with the discovery table the mock gives it.
fn navi31() -> (Arc<MockSys>, AmDevice, amd_mockgpu::pci::Discovery) {
    let (m, mut devs) = open(vec![PciProfile::navi31()]);
    (m, devs.remove(0).unwrap(), amd_mockgpu::pci::Discovery::navi31())
}

/// An IP entry: hardware id, instance, version, bases.
type Entry = (u16, u8, (u8, u8, u8), Vec<u32>);
/// A corruption of a binary, and what the error must say.
type Case<'a> = (Box<dyn Fn(&mut Vec<u8>) + 'a>, &'static str);

/// The mock's table in the transport's terms.
fn expected(d: &amd_mockgpu::pci::Discovery) -> Vec<Entry> {
    d.ips
        .iter()
        .map(|b| (b.hw_id, b.instance, b.version, b.bases.clone()))
        .collect()
}

fn got(d: &Discovery) -> Vec<Entry> {
    d.blocks
        .iter()
        .map(|b| (b.hw_id, b.instance, b.version, b.bases.clone()))
        .collect()
}

#[test]
fn discovery_through_bar0_matches_the_gpu() {
    let (_m, dev, want) = navi31();
    assert_eq!(dev.vram_size(), 512 * MIB);
    let d = dev.discovery();
    assert_eq!(d.table_version, want.table_version);
    assert_eq!(got(d), expected(&want));
    let GcInfo::V1_2(g) = want.gc else {
        panic!("navi31 has GC info v1.2")
    };
    assert_eq!(d.gc.version, (1, 2));
    assert_eq!(d.gc.v1_0, g.v1_0);
    assert_eq!(d.gc.v1_2, Some(g));
    assert_eq!(d.harvest, want.harvest);
    assert_eq!(d.ip_version(Ip::Gc), Some(110000));
    assert_eq!(d.ip_version(Ip::Mp0), Some(130000));
    assert_eq!(d.ip_version(Ip::Sdma3), None);
    // tinygrad 0.10.1's props: 96 CUs → 192 SIMDs as KFD counts them.
    let g0 = d.gc.v1_0;
    let arrays = g0.gc_num_sa_per_se * g0.gc_num_se;
    assert_eq!(2 * 2 * arrays * (g0.gc_num_wgp0_per_sa + g0.gc_num_wgp1_per_sa), 192);
}

#[test]
fn navi21s_table_parses_too() {
    // The mock's Navi 21 is not a supported device, so parse its binary directly:
    // table version 3, GC info v1.0.
    let want = amd_mockgpu::pci::Discovery::navi21();
    let d = Discovery::parse(&want.to_bytes().unwrap()).unwrap();
    assert_eq!(d.table_version, 3);
    assert_eq!(got(&d), expected(&want));
    assert_eq!((d.gc.version, d.gc.v1_2), ((1, 0), None));
    assert_eq!(Some(&d.gc.v1_0), want.gc.v1_0());
}

/// A gfx1201's table: GC info 1.3 (1.2's fields and the cache fields after them),
/// read through BAR 0 of the mock's Navi 48; a GC info 2.x table (GC 9.4.3's layout)
/// is refused by name.
#[test]
fn navi48s_gc_info_1_3_parses_and_2_x_is_refused() {
    let (_m, mut devs) = open(vec![PciProfile::navi48()]);
    let dev = devs.remove(0).unwrap();
    let want = amd_mockgpu::pci::Discovery::navi48();
    let d = dev.discovery();
    assert_eq!(got(d), expected(&want));
    let GcInfo::V1_3(g) = want.gc else {
        panic!("the mock's Navi 48 has GC info 1.3")
    };
    assert_eq!((d.gc.version, d.gc.v1_3, d.gc.v1_2), ((1, 3), Some(g), Some(g.v1_2)));
    assert_eq!(d.gc.v1_0.gc_num_se, 4);
    // The same table calling itself 2.1 (checksums made to match by the mock).
    let mut two = want.clone();
    let GcInfo::V1_3(g) = &mut two.gc else { unreachable!() };
    (g.v1_2.v1_0.header.version_major, g.v1_2.v1_0.header.version_minor) = (2, 1);
    let bytes = two.to_bytes().unwrap();
    let e = Discovery::parse(&bytes).unwrap_err();
    assert!(
        e.contains("GC info version 2.1 is not supported (1.0 to 1.3 are)"),
        "{e}"
    );
}

#[test]
fn registers_by_ip_and_instance_and_the_bring_up_reads() {
    let (m, dev, want) = navi31();
    let r = dev.regs();
    for (ip, reg) in [
        (Ip::Gc, gc::V11_0_0.SCRATCH_REG7),
        (Ip::Gc, gc::V11_0_0.CP_MEC_RS64_CNTL),
        (Ip::Gc, gc::V11_0_0.CP_STAT),
        (Ip::Mp0, mp::V13_0_0.MP0_SMN_C2PMSG_81),
        (Ip::Mp1, mp::V13_0_0.MP1_SMN_C2PMSG_90),
        (Ip::Nbio, nbio::V4_3_0.RCC_DEV0_EPF0_RCC_CONFIG_MEMSIZE),
        (Ip::Osssys, osssys::V6_0_0.IH_RB_CNTL),
    ] {
        let a = r.resolve(ip, 0, reg).unwrap();
        assert_eq!(Some(a.addr), reg_addr(&want, ip.hw_id(), reg), "{}", reg.name);
    }
    assert_eq!(
        r.read_reg(Ip::Nbio, nbio::V4_3_0.RCC_DEV0_EPF0_RCC_CONFIG_MEMSIZE)
            .unwrap(),
        512,
        "the discovered NBIO base agrees with the fixed address"
    );

    // Power-on state: not booted by this transport, no sOS, the SMU answered once.
    let s = dev.boot_state().unwrap();
    assert_eq!((s.scratch_reg7, s.sos_alive, s.smu_response), (0, false, 1));
    assert!(!s.partial_boot(false));

    let file = m.pci_registers(0).unwrap();
    file.take_writes();
    r.write_reg(Ip::Gc, gc::V11_0_0.SCRATCH_REG7, AM_VERSION).unwrap();
    let addr = reg_addr(&want, hw_id::GC, gc::V11_0_0.SCRATCH_REG7).unwrap();
    assert_eq!(
        file.take_writes(),
        [RegWrite {
            reg: addr,
            value: AM_VERSION
        }]
    );
    let s = dev.boot_state().unwrap();
    assert_eq!(s.scratch_reg7, AM_VERSION);
    assert_eq!(s.partial_boot(false), s.mec_halted);
    assert!(!s.partial_boot(true), "AM_RESET=1 forces a full boot");

    // A second SDMA instance exists, a third does not.
    assert!(r.resolve(Ip::Sdma1, 0, gc::V11_0_0.SDMA0_QUEUE0_RB_CNTL).is_ok());
    assert_eq!(
        r.resolve(Ip::Gc, 1, gc::V11_0_0.SCRATCH_REG7).unwrap_err(),
        AmError::MissingIp {
            ip: "GC",
            instance: 1,
            seg: None
        }
    );
    let far_seg = AmReg {
        name: "FAR",
        offset: 0,
        seg: 9,
    };
    let e = r.resolve(Ip::Gc, 0, far_seg).unwrap_err();
    assert_eq!(
        e,
        AmError::MissingIp {
            ip: "GC",
            instance: 0,
            seg: Some(9)
        }
    );
    let overflow = AmReg {
        name: "OVER",
        offset: u32::MAX,
        seg: 0,
    };
    assert!(matches!(
        r.resolve(Ip::Gc, 0, overflow).unwrap_err(),
        AmError::RegisterAddress { name: "OVER", .. }
    ));
}

#[test]
fn past_the_bar_goes_through_the_rsmu_pair() {
    let (m, dev, want) = navi31();
    let r = dev.regs();
    let size = r.mmio().size_dwords();
    let far = AmReg {
        name: "FAR",
        offset: size + 0x10,
        seg: 0,
    };
    let a = r.resolve(Ip::Gc, 0, far).unwrap();
    assert!(a.addr >= size);
    let file = m.pci_registers(0).unwrap();
    file.take_writes();
    r.write(a, 0x1234_5678);
    let index = reg_addr(&want, hw_id::NBIF, nbio::V4_3_0.BIF_BX_PF0_RSMU_INDEX).unwrap();
    let data = reg_addr(&want, hw_id::NBIF, nbio::V4_3_0.BIF_BX_PF0_RSMU_DATA).unwrap();
    let w = file.take_writes();
    assert_eq!(
        w[0],
        RegWrite {
            reg: index,
            value: a.addr * 4
        }
    );
    assert_eq!(
        w[1],
        RegWrite {
            reg: data,
            value: 0x1234_5678
        }
    );
    assert_eq!(r.read(a), 0x1234_5678, "read back through the pair");
    // An address whose byte address does not fit in 32 bits cannot be reached.
    let huge = AmReg {
        name: "HUGE",
        offset: 0x4000_0000,
        seg: 0,
    };
    assert!(r.resolve(Ip::Gc, 0, huge).is_err());
}

#[test]
fn a_missing_ip_is_named() {
    // The register tables are chosen from every block's version when the device is
    // opened, so a block the transport drives must be in the table from the start.
    let (_m, mut devs) = open(vec![PciProfile::navi31().without_ip(hw_id::MP0)]);
    let e = devs.remove(0).unwrap_err();
    assert_eq!(
        e,
        AmError::MissingIp {
            ip: "MP0",
            instance: 0,
            seg: None
        }
    );
    assert_eq!(e.to_string(), "IP block MP0 instance 0: not in the IP discovery table");
}

#[test]
fn a_block_of_an_unknown_version_is_named() {
    let mut p = PciProfile::navi31();
    for ip in p.discovery.ips.iter_mut().filter(|ip| ip.hw_id == hw_id::GC) {
        ip.version = (10, 3, 0);
    }
    let (_m, mut devs) = open(vec![p]);
    let e = devs.remove(0).unwrap_err();
    assert_eq!(
        e,
        AmError::UnsupportedIp {
            ip: "GC",
            version: [10, 3, 0]
        }
    );
    assert!(
        e.to_string().starts_with("IP block GC 10.3.0: no register table"),
        "{e}"
    );
}

#[test]
fn a_bar_too_small_for_the_discovery_binary_says_so() {
    let mut p = PciProfile::navi31();
    p.bar0_resize_sizes = 0;
    let (_m, mut devs) = open(vec![p]);
    let e = devs.remove(0).unwrap_err();
    assert_eq!(
        e,
        AmError::PastBar {
            what: "the IP discovery binary",
            offset: (512 << 20) - amd_am::discovery::DISCOVERY_TMR_OFFSET,
            len: amd_am::discovery::DISCOVERY_TMR_SIZE as u64,
            bar_size: 256 << 20,
            vram_size: 512 << 20,
        }
    );
    let text = e.to_string();
    assert!(
        text.contains("past BAR 0 (0x10000000 bytes)") && text.contains("resized to show all 512 MiB"),
        "{text}"
    );
}

#[test]
fn broken_tables_give_errors_naming_what() {
    let good = amd_mockgpu::pci::Discovery::navi31().to_bytes().unwrap();
    assert!(Discovery::parse(&good).is_ok());
    let cases: Vec<Case> = vec![
        (Box::new(|b| b[0] ^= 1), "binary signature"),
        (Box::new(|b| b.truncate(40)), "binary header at byte 0x0"),
        (Box::new(|b| b[100] ^= 0xff), "checksum"),
        (
            Box::new(|b| b[10..12].copy_from_slice(&0xffffu16.to_le_bytes())),
            "binary (binary_size)",
        ),
        (
            Box::new(|b| b[10..12].copy_from_slice(&8u16.to_le_bytes())),
            "smaller than the binary header",
        ),
    ];
    for (f, what) in cases {
        let mut b = good.clone();
        f(&mut b);
        let e = Discovery::parse(&b).unwrap_err();
        assert!(e.contains(what), "{what}: {e}");
    }
    // With checksums fixed up, the structural checks speak.
    let ip_off = u16::from_le_bytes([good[12], good[13]]) as usize;
    let gc_off = u16::from_le_bytes([good[20], good[21]]) as usize;
    let fix = |b: &mut Vec<u8>| {
        let ip_size = u16::from_le_bytes([b[ip_off + 6], b[ip_off + 7]]) as usize;
        let s = dsc::checksum(&b[ip_off..ip_off + ip_size]);
        b[14..16].copy_from_slice(&s.to_le_bytes());
        let gc_size = u32::from_le_bytes(b[gc_off + 8..gc_off + 12].try_into().unwrap()) as usize;
        if let Some(t) = b.get(gc_off..gc_off + gc_size) {
            let s = dsc::checksum(t);
            b[22..24].copy_from_slice(&s.to_le_bytes());
        }
        let size = u16::from_le_bytes([b[10], b[11]]) as usize;
        let s = dsc::checksum(&b[10..size]);
        b[8..10].copy_from_slice(&s.to_le_bytes());
    };
    let structural: Vec<Case> = vec![
        (
            Box::new(|b| b[ip_off + 12..ip_off + 14].copy_from_slice(&0u16.to_le_bytes())),
            "0 dies",
        ),
        (
            Box::new(|b| b[ip_off + 12..ip_off + 14].copy_from_slice(&17u16.to_le_bytes())),
            "17 dies",
        ),
        (
            Box::new(|b| b[ip_off + 4..ip_off + 6].copy_from_slice(&9u16.to_le_bytes())),
            "version 9",
        ),
        (
            Box::new(|b| b[gc_off + 4..gc_off + 6].copy_from_slice(&2u16.to_le_bytes())),
            "GC info version 2.2",
        ),
        (
            Box::new(|b| b[gc_off..gc_off + 4].copy_from_slice(&0u32.to_le_bytes())),
            "GC info table at",
        ),
        (
            Box::new(|b| b[gc_off + 8..gc_off + 12].copy_from_slice(&40u32.to_le_bytes())),
            "its fields need",
        ),
        (
            // The die's IP count far past the table.
            Box::new(|b| {
                let die = u16::from_le_bytes([b[ip_off + 16], b[ip_off + 17]]) as usize;
                b[die + 2..die + 4].copy_from_slice(&0xfffu16.to_le_bytes());
            }),
            "runs past the end",
        ),
        (
            // 64-bit bases (flag) make the entries run past the table.
            Box::new(|b| b[ip_off + 78] = 1),
            "",
        ),
    ];
    for (f, what) in structural {
        let mut b = good.clone();
        f(&mut b);
        fix(&mut b);
        match Discovery::parse(&b) {
            Err(e) => assert!(e.contains(what), "{what}: {e}"),
            Ok(d) => panic!("{what}: parsed {d:?}"),
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Any corruption of a real table, or random bytes, gives a table or an error.
    #[test]
    fn corrupted_tables_never_panic(
        edits in prop::collection::vec((0usize..4096, any::<u8>()), 1..16),
        cut in 0usize..4096,
        random in prop::collection::vec(any::<u8>(), 0..512),
    ) {
        let mut b = amd_mockgpu::pci::Discovery::navi31().to_bytes().unwrap();
        b.resize(dsc::DISCOVERY_TMR_SIZE, 0);
        for (at, v) in edits {
            b[at] = v;
        }
        let _ = Discovery::parse(&b);
        let _ = Discovery::parse(&b[..cut]);
        let _ = Discovery::parse(&random);
        // Random bytes behind a valid signature and size.
        let mut r = random.clone();
        r.resize(r.len().max(64), 0);
        r[..4].copy_from_slice(&dsc::BINARY_SIGNATURE.to_le_bytes());
        let n = r.len() as u16;
        r[10..12].copy_from_slice(&n.to_le_bytes());
        let _ = Discovery::parse(&r);
    }
}
