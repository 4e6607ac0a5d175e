//! Firmware files: synthetic files of every type tinygrad 0.10.1 loads (built in
//! `common` word by word from `amdgpu_ucode.h`'s layouts), cut into the images the PSP loads;
//! missing and corrupt files give errors naming the file and what is wrong; the
//! installed files are parsed where present.

use std::path::PathBuf;

use amd_am::AmError;
use amd_am::firmware::{
    AmFirmware, FIRMWARE_DIR_ENV, FirmwareFile, FirmwareFiles, FirmwareSource, Rs64, files, parse_imu,
    parse_psp_components, parse_rlc, parse_rs64, parse_sdma, parse_smu,
};
use amd_am::ip::GcGen;
use amd_am::regs::generated::psp;
use amd_kfd::sys::HostSys;
use proptest::prelude::*;

mod common;

use common::*;

#[test]
fn every_image_cut_in_tinygrads_order() {
    let d = dir_with("all", &all_files());
    let fw = AmFirmware::load(&HostSys, &FirmwareSource::dir(&d)).unwrap();
    for &(t, tag, n) in &SOS_PARTS {
        assert_eq!(fw.sos[&t], blob(tag, n), "PSP_FW_TYPE {t}");
    }
    assert_eq!(
        (fw.smu.fw_type, &fw.smu.bytes),
        (psp::GFX_FW_TYPE_SMU, &blob(20, 0x300))
    );
    let want: Vec<(u32, Vec<u8>)> = vec![
        (psp::GFX_FW_TYPE_SDMA_UCODE_TH0, blob(30, 0x180)),
        (psp::GFX_FW_TYPE_SDMA_UCODE_TH1, blob(31, 0x120)),
        (psp::GFX_FW_TYPE_RS64_PFP, blob(40, 0x200)),
        (psp::GFX_FW_TYPE_RS64_PFP_P0_STACK, blob(41, 0x80)),
        (psp::GFX_FW_TYPE_RS64_PFP_P1_STACK, blob(41, 0x80)),
        (psp::GFX_FW_TYPE_RS64_ME, blob(42, 0x200)),
        (psp::GFX_FW_TYPE_RS64_ME_P0_STACK, blob(43, 0x80)),
        (psp::GFX_FW_TYPE_RS64_ME_P1_STACK, blob(43, 0x80)),
        (psp::GFX_FW_TYPE_RS64_MEC, blob(44, 0x200)),
        (psp::GFX_FW_TYPE_RS64_MEC_P0_STACK, blob(45, 0x80)),
        (psp::GFX_FW_TYPE_RS64_MEC_P1_STACK, blob(45, 0x80)),
        (psp::GFX_FW_TYPE_RS64_MEC_P2_STACK, blob(45, 0x80)),
        (psp::GFX_FW_TYPE_RS64_MEC_P3_STACK, blob(45, 0x80)),
        (psp::GFX_FW_TYPE_IMU_I, blob(50, 0x140)),
        (psp::GFX_FW_TYPE_IMU_D, blob(51, 0xc0)),
        (psp::GFX_FW_TYPE_RLC_RESTORE_LIST_GPM_MEM, blob(60, 0x40)),
        (psp::GFX_FW_TYPE_RLC_RESTORE_LIST_SRM_MEM, blob(61, 0x50)),
        (psp::GFX_FW_TYPE_RLC_IRAM, blob(62, 0x60)),
        (psp::GFX_FW_TYPE_RLC_DRAM_BOOT, blob(63, 0x70)),
        (psp::GFX_FW_TYPE_RLC_P, blob(64, 0x80)),
        (psp::GFX_FW_TYPE_RLC_V, blob(65, 0x90)),
        (psp::GFX_FW_TYPE_RLC_G, blob(66, 0x100)),
    ];
    let got: Vec<(u32, Vec<u8>)> = fw.descs.iter().map(|d| (d.fw_type, d.bytes.clone())).collect();
    assert_eq!(got, want);
    assert!(
        fw.descs
            .iter()
            .all(|d| d.name.starts_with("GFX_FW_TYPE_") && !d.name.ends_with('?'))
    );
    assert_eq!(
        fw.ucode_start,
        [(Rs64::Pfp, PFP_START), (Rs64::Me, ME_START), (Rs64::Mec, MEC_START)]
    );
    assert_eq!(fw.paths.len(), files::ALL.len());
    assert!(fw.paths.iter().all(|p| p.starts_with(&d)));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn psp_v2_1_and_ta_tables() {
    let f = FirmwareFile::new("/sos.bin", sos_file(1));
    let parts = parse_psp_components(&f).unwrap();
    assert_eq!(parts.len(), SOS_PARTS.len());
    for (p, &(t, tag, n)) in parts.iter().zip(&SOS_PARTS) {
        assert_eq!((p.fw_type, p.fw_version, &p.bytes), (t, 0x100 + t, &blob(tag, n)));
    }
    // The TA file has the same layout (ta_firmware_header_v2_0, ta_fw_bin).
    let mut w = common(2, 0, 0, 0x100);
    w.extend([2, 1, 7, 0, 0x20, 4, 8, 0x40, 0x30]);
    let ta = FirmwareFile::new("/ta.bin", file(w, &[(0x100, &blob(1, 0x20)), (0x140, &blob(2, 0x30))]));
    let parts = parse_psp_components(&ta).unwrap();
    assert_eq!(parts[1].fw_type, 4);
    assert_eq!(parts[1].bytes, blob(2, 0x30));
}

#[test]
fn missing_files_name_the_file_and_the_places_tried() {
    let mut some = all_files();
    some.retain(|(n, _)| *n != files::IMU);
    let d = dir_with("missing", &some);
    let e = AmFirmware::load(&HostSys, &FirmwareSource::dir(&d)).unwrap_err();
    let text = e.to_string();
    assert_eq!(
        e,
        AmError::FirmwareMissing {
            name: files::IMU.to_string(),
            tried: vec![d.join(files::IMU)],
        }
    );
    assert!(
        text.contains(&d.join(files::IMU).display().to_string()) && text.contains(FIRMWARE_DIR_ENV),
        "{text}"
    );
    let src = FirmwareSource::from_lookup(|v| (v == FIRMWARE_DIR_ENV).then(|| d.display().to_string()));
    assert_eq!(src.dirs(), std::slice::from_ref(&d));
    let sys = FirmwareSource::from_lookup(|_| None);
    assert_eq!(
        sys.dirs(),
        [
            PathBuf::from("/lib/firmware/updates/amdgpu"),
            PathBuf::from("/lib/firmware/amdgpu")
        ]
    );
    let _ = std::fs::remove_dir_all(&d);
}

/// Sets word `i` of `b` to `v`.
fn set(b: &mut [u8], i: usize, v: u32) {
    b[4 * i..4 * i + 4].copy_from_slice(&v.to_le_bytes());
}

#[test]
fn corrupt_files_say_what_is_wrong() {
    type Parse = fn(&FirmwareFile) -> Result<(), AmError>;
    let sos: Parse = |f| parse_psp_components(f).map(drop);
    let smu: Parse = |f| parse_smu(f).map(drop);
    let sdma: Parse = |f| parse_sdma(f).map(drop);
    let mec: Parse = |f| parse_rs64(f, Rs64::Mec, 4).map(drop);
    let imu: Parse = |f| parse_imu(f).map(drop);
    let rlc: Parse = |f| parse_rlc(f).map(drop);
    type Edit = Box<dyn Fn(&mut Vec<u8>)>;
    let cases: Vec<(Vec<u8>, Parse, Edit, &str)> = vec![
        (
            sos_file(0),
            sos,
            Box::new(|b| b.truncate(b.len() - 1)),
            "header says the file is",
        ),
        (
            sos_file(0),
            sos,
            Box::new(|b| set(b, 2, 1)),
            "header version 1.0: expected major version 2",
        ),
        (
            sos_file(0),
            sos,
            Box::new(|b| set(b, 8, 100_000)),
            "psp_fw_bin_count 100000",
        ),
        (
            sos_file(0),
            sos,
            Box::new(|b| set(b, 8, u32::MAX)),
            "component table runs past",
        ),
        (
            sos_file(0),
            sos,
            Box::new(|b| set(b, 9 + 2, 0xffff_fff0)),
            "component 0 (fw_type",
        ),
        (
            sos_file(0),
            sos,
            Box::new(|b| set(b, 6, u32::MAX)),
            "run past the end of the file",
        ),
        (smu_file(), smu, Box::new(|b| set(b, 5, 0x10_0000)), "SMU image"),
        (
            smu_file(),
            smu,
            Box::new(|b| set(b, 5, 0)),
            "SMU image (ucode_array_offset_bytes, ucode_size_bytes): empty",
        ),
        (
            sdma_file(),
            sdma,
            Box::new(|b| set(b, 12, 0x1000)),
            "SDMA control thread",
        ),
        (
            sdma_file(),
            sdma,
            Box::new(|b| set(b, 9, u32::MAX)),
            "SDMA context thread",
        ),
        (
            rs64_file(1, 0),
            mec,
            Box::new(|b| set(b, 12, 0x4000)),
            "stack (data_offset_bytes",
        ),
        (imu_file(), imu, Box::new(|b| set(b, 8, 0x200)), "IMU DRAM"),
        (imu_file(), imu, Box::new(|b| set(b, 2, 2)), "expected major version 1"),
        (
            rlc_file(3),
            rlc,
            Box::new(|b| set(b, 2, 2 | 1 << 16)),
            "header version 2.1: the IRAM and DRAM images need 2.2",
        ),
        (
            rlc_file(2),
            rlc,
            Box::new(|b| set(b, 42, u32::MAX)),
            "RLC DRAM (rlc_dram_ucode_offset_bytes",
        ),
        (
            sdma_v3_file(),
            sdma,
            Box::new(|b| set(b, 10, 0x10_0000)),
            "SDMA image (ucode_array_offset_bytes, v3 ucode_size_bytes)",
        ),
        (
            rlc_file(3),
            rlc,
            Box::new(|b| set(b, 50, u32::MAX)),
            "RLCV (rlcv_ucode_offset_bytes",
        ),
        (
            rlc_file(3),
            rlc,
            Box::new(|b| b.truncate(b.len() - 4)),
            "header says the file is",
        ),
        (
            rlc_file(3),
            rlc,
            Box::new(|b| b.truncate(20)),
            "rlc_firmware_header_v2_2 (172 bytes at 0x0) runs past",
        ),
    ];
    for (good, parse, f, what) in cases {
        assert!(
            parse(&FirmwareFile::new("/fw/x.bin", good.clone())).is_ok(),
            "{what}: the good file parses"
        );
        let mut b = good;
        f(&mut b);
        let e = parse(&FirmwareFile::new("/fw/x.bin", b)).unwrap_err().to_string();
        assert!(e.starts_with("firmware /fw/x.bin: ") && e.contains(what), "{what}: {e}");
    }
}

/// The installed files (`AM_FIRMWARE_DIR`, else the system's directories), where
/// Debian's `firmware-amd-graphics` has them: a 7900 XTX's cut into its 22 images,
/// and a gfx1201's (from the 20250410 package) into its 15, at the sizes the headers
/// give.
#[test]
fn installed_firmware_parses_where_present() {
    let src = FirmwareSource::from_env();
    for (names, gc, images) in [
        (FirmwareFiles::navi31(), GcGen::Gfx11, 22),
        (FirmwareFiles::navi48(), GcGen::Gfx12, 15),
    ] {
        let all = names.all();
        let present = all
            .iter()
            .filter(|n| src.dirs().iter().any(|d| d.join(n).exists()))
            .count();
        if present < all.len() {
            eprintln!(
                "skipped: {} not all installed in {:?} ({present} of {} present; Debian: firmware-amd-graphics)",
                all.join(", "),
                src.dirs(),
                all.len()
            );
            continue;
        }
        let fw = AmFirmware::load_for(&HostSys, &src, &names, gc).unwrap();
        assert!(fw.sos.contains_key(&psp::PSP_FW_TYPE_PSP_SOS));
        assert_eq!(fw.descs.len(), images, "{}", names.rlc);
        assert!(fw.descs.iter().all(|d| !d.bytes.is_empty()));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Any change to the headers of any file type gives images or an error.
    #[test]
    fn hostile_headers_never_panic(
        which in 0usize..8,
        edits in prop::collection::vec((0usize..256, any::<u8>()), 1..24),
        cut in 0usize..0x1200,
    ) {
        let (_, mut b) = all_files().swap_remove(which);
        for (at, v) in edits {
            if let Some(x) = b.get_mut(at) {
                *x = v;
            }
        }
        // Keep size_bytes honest half the time, so the deeper checks run.
        if cut % 2 == 0 {
            let n = b.len() as u32;
            b[..4].copy_from_slice(&n.to_le_bytes());
        }
        let f = FirmwareFile::new("/fw/p.bin", b.clone());
        let _ = parse_psp_components(&f);
        let _ = parse_smu(&f);
        let _ = parse_sdma(&f);
        let _ = parse_rs64(&f, Rs64::Pfp, 2);
        let _ = parse_imu(&f);
        let _ = parse_rlc(&f);
        b.truncate(cut);
        let f = FirmwareFile::new("/fw/p.bin", b);
        let _ = parse_psp_components(&f);
        let _ = parse_rlc(&f);
    }
}
