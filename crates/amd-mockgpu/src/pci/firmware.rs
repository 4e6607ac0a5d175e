//! Synthetic firmware files of every type tinygrad 0.10.1 loads, built word by word
//! from `amdgpu_ucode.h`'s layouts, so the driverless transport boots on the mock PCI
//! GPU without AMD's firmware. Every image holds distinct bytes ([`blob`]; where each
//! lies is [`IMAGES`] and [`SOS_PARTS`]), so a wrong cut shows.
//!
//! [`MockSys`](crate::MockSys) serves [`files()`] under [`DIR`] when it has PCI GPUs
//! (read-only), so `FirmwareSource::dir(DIR)` finds them through the mock; a test may
//! serve a host directory's files instead
//! ([`MockConfig::pci_firmware_dir`](crate::MockConfig::pci_firmware_dir)). The
//! mock's PSP checks contents, not just types, sizes and places: what it loads must
//! be exactly an image the served files hold for that type, as the mock's own reading
//! of the headers cuts them ([`super::catalogue`]); anything else is a failed load
//! with a PSP status ([`super::psp::STATUS_BAD_IMAGE`]).

use amd_regs::firmware::{FirmwareFiles, files};
use amd_regs::regs::generated::psp;

/// Where [`MockSys`](crate::MockSys) serves the firmware files (a path of the mock's
/// namespace only).
pub const DIR: &str = "/mock/lib/firmware/amdgpu";

/// Distinct bytes per image, so a wrong cut shows.
pub fn blob(tag: u8, n: usize) -> Vec<u8> {
    (0..n)
        .map(|i| tag.wrapping_mul(31).wrapping_add(i as u8) ^ tag)
        .collect()
}

/// A file: `words` of header (the common header's first 8 words included; its
/// `size_bytes` is set here), then each payload at its offset.
pub fn build_file(mut words: Vec<u32>, payloads: &[(usize, &[u8])]) -> Vec<u8> {
    let mut out: Vec<u8> = Vec::new();
    let hdr_len = words.len() * 4;
    words[1] = hdr_len as u32;
    let end = payloads
        .iter()
        .map(|(o, p)| o + p.len())
        .max()
        .unwrap_or(0)
        .max(hdr_len);
    words[0] = end as u32;
    for w in &words {
        out.extend_from_slice(&w.to_le_bytes());
    }
    out.resize(end, 0);
    for (o, p) in payloads {
        out[*o..o + p.len()].copy_from_slice(p);
    }
    out
}

/// `common_firmware_header` words: size and header size are filled by [`build_file`].
pub fn common(major: u16, minor: u16, ucode_size: u32, ucode_off: u32) -> Vec<u32> {
    vec![
        0,
        0,
        u32::from(major) | u32::from(minor) << 16,
        13,
        0x77,
        ucode_size,
        ucode_off,
        0,
    ]
}

/// The sOS components tinygrad 0.10.1 loads, and two it ignores.
pub const SOS_PARTS: [(u32, u8, usize); 9] = [
    (psp::PSP_FW_TYPE_PSP_KDB, 1, 0x40),
    (psp::PSP_FW_TYPE_PSP_SPL, 2, 0x30),
    (psp::PSP_FW_TYPE_PSP_SYS_DRV, 3, 0x100),
    (psp::PSP_FW_TYPE_PSP_SOC_DRV, 4, 0x80),
    (psp::PSP_FW_TYPE_PSP_INTF_DRV, 5, 0x80),
    (psp::PSP_FW_TYPE_PSP_DBG_DRV, 6, 0x20),
    (psp::PSP_FW_TYPE_PSP_RAS_DRV, 7, 0x20),
    (psp::PSP_FW_TYPE_PSP_SOS, 8, 0x200),
    (psp::PSP_FW_TYPE_PSP_TOC, 9, 0x60),
];

/// `psp_13_0_0_sos.bin` (`psp_firmware_header_v2_0`, or v2.1 with `minor` 1) with
/// [`SOS_PARTS`].
pub fn sos_file(minor: u16) -> Vec<u8> {
    sos_file_tagged(minor, 0)
}

/// [`sos_file`] with every part's tag raised by `raise` (distinct bytes per
/// generation: [`GFX1201_TAG`]).
fn sos_file_tagged(minor: u16, raise: u8) -> Vec<u8> {
    let base = 0x400usize;
    let mut words = common(2, minor, 0, base as u32);
    words.push(SOS_PARTS.len() as u32);
    if minor == 1 {
        words.push(0); // psp_aux_fw_bin_index
    }
    let mut payloads = Vec::new();
    let mut off = 0usize;
    let bodies: Vec<Vec<u8>> = SOS_PARTS.iter().map(|&(_, tag, n)| blob(tag + raise, n)).collect();
    for (i, &(t, _, n)) in SOS_PARTS.iter().enumerate() {
        words.extend([t, 0x100 + t, off as u32, n as u32]);
        payloads.push((base + off, bodies[i].clone()));
        off += n + 0x10;
    }
    let refs: Vec<(usize, &[u8])> = payloads.iter().map(|(o, p)| (*o, p.as_slice())).collect();
    build_file(words, &refs)
}

/// `smu_13_0_0.bin` (v2.1).
pub fn smu_file() -> Vec<u8> {
    smu_file_tagged(0)
}

fn smu_file_tagged(raise: u8) -> Vec<u8> {
    let mut w = common(2, 1, 0x300, 0x100);
    w.push(0); // ucode_start_addr
    build_file(w, &[(0x100, &blob(20 + raise, 0x300))])
}

/// `sdma_6_0_0.bin` (v2.0).
pub fn sdma_file() -> Vec<u8> {
    let mut w = common(2, 0, 0, 0x100);
    // feature, ctx size, ctx jt, ctx jt size, ctl offset, ctl size, ctl jt, ctl jt size
    w.extend([1, 0x180, 0, 0, 0x300, 0x120, 0, 0]);
    build_file(w, &[(0x100, &blob(30, 0x180)), (0x300, &blob(31, 0x120))])
}

/// `sdma_7_0_1.bin` (`sdma_firmware_header_v3_0`): one image, at the common header's
/// offset with the v3 size (the v3 offset field points elsewhere, as a check that the
/// cut follows amdgpu's).
pub fn sdma_v3_file() -> Vec<u8> {
    let mut w = common(3, 0, 0x40, 0x100);
    // feature, ucode offset (not where amdgpu cuts), ucode size
    w.extend([1, 0x300, 0x180]);
    build_file(w, &[(0x100, &blob(30 + GFX1201_TAG, 0x180)), (0x300, &blob(7, 0x40))])
}

/// An RS64 engine's file (`gfx_firmware_header_v2_0`) starting at `start`.
pub fn rs64_file(tag: u8, start: u64) -> Vec<u8> {
    let mut w = common(2, 0, 0, 0x100);
    // feature, code size, code offset, data size, data offset, start lo, start hi
    w.extend([1, 0x200, 0x100, 0x80, 0x400, start as u32, (start >> 32) as u32]);
    build_file(w, &[(0x100, &blob(tag, 0x200)), (0x400, &blob(tag + 1, 0x80))])
}

/// `gc_11_0_0_imu.bin` (v1.0).
pub fn imu_file() -> Vec<u8> {
    imu_file_tagged(0)
}

fn imu_file_tagged(raise: u8) -> Vec<u8> {
    let mut w = common(1, 0, 0, 0x100);
    // iram size, iram offset, dram size, dram offset (tinygrad cuts DRAM right after IRAM)
    w.extend([0x140, 0x100, 0xc0, 0]);
    build_file(
        w,
        &[(0x100, &blob(50 + raise, 0x140)), (0x240, &blob(51 + raise, 0xc0))],
    )
}

/// `gc_11_0_0_rlc.bin` with header minor version `minor` (3 or more: tinygrad 0.10.1
/// reads v2.3 fields; GC 12's is 2).
pub fn rlc_file(minor: u16) -> Vec<u8> {
    rlc_file_tagged(minor, 0)
}

fn rlc_file_tagged(minor: u16, raise: u8) -> Vec<u8> {
    let mut w = common(2, minor, 0x100, 0x1000);
    w.extend(std::iter::repeat_n(0, 18)); // rlc_firmware_header_v2_0's own fields
    // v2_1: direct list length, cntl ver/feature/size/offset, gpm ver/feature/size/
    // offset, srm ver/feature/size/offset
    w.extend([0, 0, 0, 0, 0, 0, 0, 0x40, 0x400, 0, 0, 0x50, 0x500]);
    // v2_2: iram size/offset, dram size/offset
    w.extend([0x60, 0x600, 0x70, 0x700]);
    // v2_3: rlcp ver/feature/size/offset, rlcv ver/feature/size/offset
    w.extend([0, 0, 0x80, 0x800, 0, 0, 0x90, 0x900]);
    build_file(
        w,
        &[
            (0x400, &blob(60 + raise, 0x40)),
            (0x500, &blob(61 + raise, 0x50)),
            (0x600, &blob(62 + raise, 0x60)),
            (0x700, &blob(63 + raise, 0x70)),
            (0x800, &blob(64 + raise, 0x80)),
            (0x900, &blob(65 + raise, 0x90)),
            (0x1000, &blob(66 + raise, 0x100)),
        ],
    )
}

/// The PFP's start address.
pub const PFP_START: u64 = 0x1_2345_6000;
/// The ME's start address.
pub const ME_START: u64 = 0x2000;
/// The MEC's start address.
pub const MEC_START: u64 = 0xffff_0000_0000_1000;

/// The images [`files()`] places, in tinygrad 0.10.1's load order: `(GFX_FW_TYPE_*,
/// tag, size)`, each image being [`blob`]`(tag, size)` (a stack is the same for every
/// pipe). Stated from the builders above, independently of any parser.
pub const IMAGES: [(u32, u8, usize); 23] = [
    (psp::GFX_FW_TYPE_SMU, 20, 0x300),
    (psp::GFX_FW_TYPE_SDMA_UCODE_TH0, 30, 0x180),
    (psp::GFX_FW_TYPE_SDMA_UCODE_TH1, 31, 0x120),
    (psp::GFX_FW_TYPE_RS64_PFP, 40, 0x200),
    (psp::GFX_FW_TYPE_RS64_PFP_P0_STACK, 41, 0x80),
    (psp::GFX_FW_TYPE_RS64_PFP_P1_STACK, 41, 0x80),
    (psp::GFX_FW_TYPE_RS64_ME, 42, 0x200),
    (psp::GFX_FW_TYPE_RS64_ME_P0_STACK, 43, 0x80),
    (psp::GFX_FW_TYPE_RS64_ME_P1_STACK, 43, 0x80),
    (psp::GFX_FW_TYPE_RS64_MEC, 44, 0x200),
    (psp::GFX_FW_TYPE_RS64_MEC_P0_STACK, 45, 0x80),
    (psp::GFX_FW_TYPE_RS64_MEC_P1_STACK, 45, 0x80),
    (psp::GFX_FW_TYPE_RS64_MEC_P2_STACK, 45, 0x80),
    (psp::GFX_FW_TYPE_RS64_MEC_P3_STACK, 45, 0x80),
    (psp::GFX_FW_TYPE_IMU_I, 50, 0x140),
    (psp::GFX_FW_TYPE_IMU_D, 51, 0xc0),
    (psp::GFX_FW_TYPE_RLC_RESTORE_LIST_GPM_MEM, 60, 0x40),
    (psp::GFX_FW_TYPE_RLC_RESTORE_LIST_SRM_MEM, 61, 0x50),
    (psp::GFX_FW_TYPE_RLC_IRAM, 62, 0x60),
    (psp::GFX_FW_TYPE_RLC_DRAM_BOOT, 63, 0x70),
    (psp::GFX_FW_TYPE_RLC_P, 64, 0x80),
    (psp::GFX_FW_TYPE_RLC_V, 65, 0x90),
    (psp::GFX_FW_TYPE_RLC_G, 66, 0x100),
];

/// What a gfx1201's synthetic files add to each tag of the gfx1100's, so that no
/// image of one generation is an image of the other.
pub const GFX1201_TAG: u8 = 100;

/// The images [`gfx1201_files`] places, in the driverless transport's load order for
/// a gfx1201: SDMA 7's one image, one stack for PFP and ME and two for the MEC (the
/// stacks Linux's `gfx_v12_0` loads), the RLC 2.2 images (no RLCP/RLCV).
pub const IMAGES_GFX1201: [(u32, u8, usize); 16] = [
    (psp::GFX_FW_TYPE_SMU, 20 + GFX1201_TAG, 0x300),
    (psp::GFX_FW_TYPE_SDMA_UCODE_TH0, 30 + GFX1201_TAG, 0x180),
    (psp::GFX_FW_TYPE_RS64_PFP, 40 + GFX1201_TAG, 0x200),
    (psp::GFX_FW_TYPE_RS64_PFP_P0_STACK, 41 + GFX1201_TAG, 0x80),
    (psp::GFX_FW_TYPE_RS64_ME, 42 + GFX1201_TAG, 0x200),
    (psp::GFX_FW_TYPE_RS64_ME_P0_STACK, 43 + GFX1201_TAG, 0x80),
    (psp::GFX_FW_TYPE_RS64_MEC, 44 + GFX1201_TAG, 0x200),
    (psp::GFX_FW_TYPE_RS64_MEC_P0_STACK, 45 + GFX1201_TAG, 0x80),
    (psp::GFX_FW_TYPE_RS64_MEC_P1_STACK, 45 + GFX1201_TAG, 0x80),
    (psp::GFX_FW_TYPE_IMU_I, 50 + GFX1201_TAG, 0x140),
    (psp::GFX_FW_TYPE_IMU_D, 51 + GFX1201_TAG, 0xc0),
    (psp::GFX_FW_TYPE_RLC_RESTORE_LIST_GPM_MEM, 60 + GFX1201_TAG, 0x40),
    (psp::GFX_FW_TYPE_RLC_RESTORE_LIST_SRM_MEM, 61 + GFX1201_TAG, 0x50),
    (psp::GFX_FW_TYPE_RLC_IRAM, 62 + GFX1201_TAG, 0x60),
    (psp::GFX_FW_TYPE_RLC_DRAM_BOOT, 63 + GFX1201_TAG, 0x70),
    (psp::GFX_FW_TYPE_RLC_G, 66 + GFX1201_TAG, 0x100),
];

/// Every file a gfx1201's boot reads ([`FirmwareFiles::navi48`]), by name: the same
/// shapes as [`files()`] with the gfx12 headers (SDMA 3.0, RLC 2.2) and
/// [`GFX1201_TAG`]-raised bytes.
pub fn gfx1201_files() -> Vec<(String, Vec<u8>)> {
    let f = FirmwareFiles::navi48();
    let g = GFX1201_TAG;
    vec![
        (f.psp_sos, sos_file_tagged(0, g)),
        (f.smu, smu_file_tagged(g)),
        (f.sdma, sdma_v3_file()),
        (f.pfp, rs64_file(40 + g, PFP_START)),
        (f.me, rs64_file(42 + g, ME_START)),
        (f.mec, rs64_file(44 + g, MEC_START)),
        (f.imu, imu_file_tagged(g)),
        (f.rlc, rlc_file_tagged(2, g)),
    ]
}

/// Every synthetic file the mock serves: [`files()`] and [`gfx1201_files`].
pub fn all_files() -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<(String, Vec<u8>)> = files().into_iter().map(|(n, b)| (n.to_string(), b)).collect();
    v.extend(gfx1201_files());
    v
}

/// Every file tinygrad 0.10.1's boot reads, by name.
pub fn files() -> Vec<(&'static str, Vec<u8>)> {
    vec![
        (files::PSP_SOS, sos_file(0)),
        (files::SMU, smu_file()),
        (files::SDMA, sdma_file()),
        (files::PFP, rs64_file(40, PFP_START)),
        (files::ME, rs64_file(42, ME_START)),
        (files::MEC, rs64_file(44, MEC_START)),
        (files::IMU, imu_file()),
        (files::RLC, rlc_file(3)),
    ]
}
