//! The PSP bring-up against the mock PSP, in tinygrad 0.10.1's order: bootloader
//! components, ring, TOC, SMU firmware, TMR, every `LOAD_IP_FW`, RLC autoload; and
//! each refusal an error naming the step.

use std::sync::Arc;

use amd_am::AmError;
use amd_am::discovery::hw_id;
use amd_am::firmware::{AmFirmware, FirmwareSource};
use amd_am::ip::AmDevice;
use amd_am::pci::{PciBus, PciOptions};
use amd_am::psp::{Psp, SOS_LOAD_ORDER};
use amd_am::regs::generated::psp;
use amd_kfd::sys::Sys;
use amd_mockgpu::pci::firmware::DIR;
use amd_mockgpu::pci::psp::{Psp as MockPsp, STATUS_BAD_IMAGE, TMR_SIZE};
use amd_mockgpu::{MockConfig, MockSys, PciFault, PciProfile};

fn device(p: PciProfile) -> (Arc<MockSys>, AmDevice) {
    let m = Arc::new(MockSys::new(MockConfig {
        pci: vec![p],
        ..MockConfig::pci(0)
    }));
    let mut bus = PciBus::scan(m.clone() as Arc<dyn Sys>, &PciOptions::default()).unwrap();
    let dev = AmDevice::new(bus.open(0).unwrap()).unwrap();
    (m, dev)
}

/// Firmware as `AmFirmware::load` cuts the synthetic files the mock serves (the
/// files' parsing is tested in `firmware.rs`; the mock's PSP takes only the images
/// those files hold).
fn firmware(m: &MockSys) -> AmFirmware {
    AmFirmware::load(m, &FirmwareSource::dir(DIR)).unwrap()
}

#[test]
fn bring_up_in_tinygrads_order() {
    let (m, dev) = device(PciProfile::navi31());
    let fw = firmware(&m);
    let mut p = Psp::new(&dev).unwrap();
    assert!(!p.is_sos_alive());
    p.init(&fw).unwrap();
    assert!(p.is_sos_alive());
    assert_eq!(p.tmr_size, Some(TMR_SIZE));

    let file = m.pci_registers(0).unwrap();
    let (bl, cmds, loaded, rlc) = file
        .with_block::<MockPsp, _>(|b| {
            (
                b.bootloader.iter().map(|l| (l.command, l.status)).collect::<Vec<_>>(),
                b.commands
                    .iter()
                    .map(|c| (c.cmd_id, c.fw_type, c.status))
                    .collect::<Vec<_>>(),
                b.firmware
                    .iter()
                    .map(|f| (f.fw_type, f.data.clone()))
                    .collect::<Vec<_>>(),
                b.rlc_autoloaded,
            )
        })
        .unwrap();
    let want_bl: Vec<(u32, u32)> = SOS_LOAD_ORDER.iter().map(|&(_, c, _)| (c, 0)).collect();
    assert_eq!(bl, want_bl, "every component, in order, accepted");

    let mut want = vec![
        (psp::GFX_CMD_ID_LOAD_TOC, 0),
        (psp::GFX_CMD_ID_LOAD_IP_FW, psp::GFX_FW_TYPE_SMU),
        (psp::GFX_CMD_ID_SETUP_TMR, 0),
    ];
    want.extend(fw.descs.iter().map(|d| (psp::GFX_CMD_ID_LOAD_IP_FW, d.fw_type)));
    want.push((psp::GFX_CMD_ID_AUTOLOAD_RLC, 0));
    let got: Vec<(u32, u32)> = cmds.iter().map(|&(c, t, _)| (c, t)).collect();
    assert_eq!(got, want);
    assert!(cmds.iter().all(|c| c.2 == 0));
    let mut want_fw = vec![(fw.smu.fw_type, fw.smu.bytes.clone())];
    want_fw.extend(fw.descs.iter().map(|d| (d.fw_type, d.bytes.clone())));
    assert_eq!(loaded, want_fw, "each image's bytes reached the PSP");
    assert!(rlc);

    // Again with the sOS running: no bootloader, the ring destroyed and recreated.
    let mut again = Psp::new(&dev).unwrap();
    again.init(&fw).unwrap();
    let n_bl = file.with_block::<MockPsp, _>(|b| b.bootloader.len()).unwrap();
    assert_eq!(n_bl, SOS_LOAD_ORDER.len());
}

#[test]
fn a_refused_command_names_the_step() {
    let (m, dev) = device(PciProfile::navi31());
    assert!(m.pci_inject(
        0,
        PciFault::PspCommand {
            cmd_id: Some(psp::GFX_CMD_ID_LOAD_IP_FW),
            status: 7
        }
    ));
    let e = Psp::new(&dev).unwrap().init(&firmware(&m)).unwrap_err();
    assert_eq!(
        e,
        AmError::Psp {
            step: "LOAD_IP_FW GFX_FW_TYPE_SMU".into(),
            status: 7
        }
    );
    assert_eq!(e.to_string(), "PSP LOAD_IP_FW GFX_FW_TYPE_SMU: status 0x7");

    let (m, dev) = device(PciProfile::navi31());
    m.pci_inject(
        0,
        PciFault::PspCommand {
            cmd_id: Some(psp::GFX_CMD_ID_SETUP_TMR),
            status: 0x11,
        },
    );
    let e = Psp::new(&dev).unwrap().init(&firmware(&m)).unwrap_err();
    assert!(
        matches!(&e, AmError::Psp { step, status: 0x11 } if step == "SETUP_TMR"),
        "{e}"
    );
}

#[test]
fn the_bootloader_refusing_the_sos_is_an_error() {
    // Without its system driver, the mock's bootloader refuses the sOS.
    let (m, dev) = device(PciProfile::navi31());
    let mut fw = firmware(&m);
    fw.sos.remove(&psp::PSP_FW_TYPE_PSP_SYS_DRV);
    let e = Psp::new(&dev).unwrap().init(&fw).unwrap_err();
    match e {
        AmError::Psp { step, status } => {
            assert_eq!(step, "bootloader PSP_BL__LOAD_SOSDRV");
            assert_ne!(status, 0);
        }
        e => panic!("{e}"),
    }
}

#[test]
fn a_wrong_cut_is_a_failed_load_naming_the_step() {
    // The first image one byte long, the sixth one byte short, the last replaced
    // by other bytes: the PSP refuses it with its status, and the bring-up names
    // the image.
    for i in [0, 5, 21] {
        let (m, dev) = device(PciProfile::navi31());
        let mut fw = firmware(&m);
        let bytes = &mut fw.descs[i].bytes;
        match i {
            0 => bytes.push(0),
            5 => bytes.truncate(bytes.len() - 1),
            _ => *bytes = vec![0x5a; bytes.len()],
        }
        let e = Psp::new(&dev).unwrap().init(&fw).unwrap_err();
        assert_eq!(
            e,
            AmError::Psp {
                step: format!("LOAD_IP_FW {}", fw.descs[i].name),
                status: STATUS_BAD_IMAGE
            }
        );
        let loaded = m
            .pci_registers(0)
            .unwrap()
            .with_block::<MockPsp, _>(|b| b.firmware.len())
            .unwrap();
        assert_eq!(loaded, i + 1, "the SMU and the images before it");
    }
    // An sOS component with its descriptor's neighbour attached.
    let (m, dev) = device(PciProfile::navi31());
    let mut fw = firmware(&m);
    fw.sos
        .get_mut(&psp::PSP_FW_TYPE_PSP_SYS_DRV)
        .unwrap()
        .extend_from_slice(&[1; 16]);
    let e = Psp::new(&dev).unwrap().init(&fw).unwrap_err();
    assert_eq!(
        e,
        AmError::Psp {
            step: "bootloader PSP_BL__LOAD_SYSDRV".into(),
            status: STATUS_BAD_IMAGE
        }
    );
}

#[test]
fn a_gpu_without_its_psp_says_so() {
    // MP0 in the table, but without the register segment its mailbox is in (a GPU
    // without MP0 at all is refused when it is opened: `ip.rs`).
    let mut p = PciProfile::navi31();
    for ip in p.discovery.ips.iter_mut().filter(|ip| ip.hw_id == hw_id::MP0) {
        ip.bases.clear();
    }
    let (_m, dev) = device(p);
    let e = Psp::new(&dev).unwrap_err();
    assert_eq!(
        e,
        AmError::MissingIp {
            ip: "MP0",
            instance: 0,
            seg: Some(0)
        }
    );
}
