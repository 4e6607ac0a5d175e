//! Firmware files: found where tinygrad 0.10.1 finds them, parsed with the headers of
//! amdgpu's `amdgpu_ucode.h` (Linux 6.12), every offset and size checked against
//! the file's length.
//!
//! [`FirmwareSource::system`] looks in `/lib/firmware/updates/amdgpu/`, then
//! `/lib/firmware/amdgpu/` (tinygrad's `AMFirmware.load_fw`); [`FIRMWARE_DIR_ENV`]
//! (`AM_FIRMWARE_DIR`) or [`FirmwareSource::dir`] replaces both with one directory.
//! Files are read through [`Sys`].
//!
//! [`AmFirmware::load`] cuts the files of a 7900 XTX into what the PSP loads, in
//! tinygrad 0.10.1's order: the sOS components of `psp_13_0_0_sos.bin` (by
//! `PSP_FW_TYPE_*`), the SMU image of `smu_13_0_0.bin`, then the `GFX_FW_TYPE_*`
//! images of `sdma_6_0_0.bin`, `gc_11_0_0_{pfp,me,mec}.bin` (code and one stack per
//! pipe), `gc_11_0_0_imu.bin` and `gc_11_0_0_rlc.bin`. [`AmFirmware::load_for`] does
//! the same for the files a GPU's IP versions name ([`FirmwareFiles`]): on a gfx1201,
//! `psp_14_0_3_sos.bin`, `smu_14_0_3.bin`, `sdma_7_0_1.bin` (header 3.0: one image)
//! and `gc_12_0_1_*.bin` (RLC header 2.2; the stacks of [`Rs64::pipes`]). Where tinygrad slices a
//! Python buffer (which silently shortens a range past the end), a range past the
//! end of the file here is an error naming the file, the field and the sizes.
//!
//! The header structs keep the C names and are `repr(C)` with every field naturally
//! aligned, so their layout is the header's; sizes are pinned by assertions.

#![allow(non_camel_case_types)]

use std::collections::BTreeMap;
use std::path::PathBuf;

use amd_kfd::sys::Sys;
use zerocopy::FromBytes;

use crate::error::{AmError, Result};
use crate::ip::GcGen;
use crate::regs::generated::psp;

pub use amd_regs::firmware::*;

/// The variable naming one directory to use instead.
pub const FIRMWARE_DIR_ENV: &str = "AM_FIRMWARE_DIR";

/// A firmware file read whole, for parsing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FirmwareFile {
    /// Where it was read from.
    pub path: PathBuf,
    /// Its bytes.
    pub data: Vec<u8>,
}

impl FirmwareFile {
    /// A file with `data`, named `path` in errors.
    pub fn new(path: impl Into<PathBuf>, data: Vec<u8>) -> Self {
        FirmwareFile {
            path: path.into(),
            data,
        }
    }

    fn err(&self, msg: impl Into<String>) -> AmError {
        AmError::Firmware {
            path: self.path.clone(),
            msg: msg.into(),
        }
    }

    /// Reads a `T` at byte `off`.
    fn at<T: FromBytes>(&self, off: usize, what: &str) -> Result<T> {
        self.data
            .get(off..)
            .and_then(|b| T::read_from_prefix(b).ok())
            .map(|(t, _)| t)
            .ok_or_else(|| {
                self.err(format!(
                    "{what} ({} bytes at {off:#x}) runs past the end of the file ({:#x} bytes)",
                    size_of::<T>(),
                    self.data.len()
                ))
            })
    }

    /// The common header, checked as amdgpu's `amdgpu_ucode_validate` does (its
    /// `size_bytes` is the file's length), and its major version against `majors`.
    pub fn common(&self, majors: &[u16]) -> Result<common_firmware_header> {
        let h: common_firmware_header = self.at(0, "common_firmware_header")?;
        let len = self.data.len();
        if usize::try_from(h.size_bytes).ok() != Some(len) {
            return Err(self.err(format!(
                "header says the file is {:#x} bytes, it is {len:#x} (truncated or not a firmware file)",
                h.size_bytes
            )));
        }
        if !majors.contains(&h.header_version_major) {
            return Err(self.err(format!(
                "header version {}.{}: expected major version {}",
                h.header_version_major,
                h.header_version_minor,
                majors.iter().map(u16::to_string).collect::<Vec<_>>().join(" or ")
            )));
        }
        Ok(h)
    }

    /// The bytes at `offset..offset + size`, checked against the file.
    pub fn range(&self, what: &str, offset: u64, size: u64) -> Result<&[u8]> {
        let len = self.data.len();
        let end = offset.checked_add(size);
        let r = end
            .and_then(|e| Some(usize::try_from(offset).ok()?..usize::try_from(e).ok()?))
            .and_then(|r| self.data.get(r));
        r.ok_or_else(|| {
            self.err(format!(
                "{what}: {size:#x} bytes at offset {offset:#x} run past the end of the file ({len:#x} bytes)"
            ))
        })
    }

    fn piece(&self, fw_type: u32, what: &str, offset: u64, size: u64) -> Result<FwImage> {
        if size == 0 {
            return Err(self.err(format!("{what}: empty (size 0)")));
        }
        Ok(FwImage {
            fw_type,
            name: gfx_fw_type_name(fw_type),
            bytes: self.range(what, offset, size)?.to_vec(),
        })
    }
}

/// One image the PSP loads with `LOAD_IP_FW`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FwImage {
    /// `GFX_FW_TYPE_*`.
    pub fw_type: u32,
    /// Its name, for messages.
    pub name: &'static str,
    /// The image.
    pub bytes: Vec<u8>,
}

/// The name of a `GFX_FW_TYPE_*` the transport loads.
pub fn gfx_fw_type_name(t: u32) -> &'static str {
    const NAMES: &[(u32, &str)] = &[
        (psp::GFX_FW_TYPE_SMU, "GFX_FW_TYPE_SMU"),
        (psp::GFX_FW_TYPE_SDMA_UCODE_TH0, "GFX_FW_TYPE_SDMA_UCODE_TH0"),
        (psp::GFX_FW_TYPE_SDMA_UCODE_TH1, "GFX_FW_TYPE_SDMA_UCODE_TH1"),
        (psp::GFX_FW_TYPE_RS64_PFP, "GFX_FW_TYPE_RS64_PFP"),
        (psp::GFX_FW_TYPE_RS64_PFP_P0_STACK, "GFX_FW_TYPE_RS64_PFP_P0_STACK"),
        (psp::GFX_FW_TYPE_RS64_PFP_P1_STACK, "GFX_FW_TYPE_RS64_PFP_P1_STACK"),
        (psp::GFX_FW_TYPE_RS64_ME, "GFX_FW_TYPE_RS64_ME"),
        (psp::GFX_FW_TYPE_RS64_ME_P0_STACK, "GFX_FW_TYPE_RS64_ME_P0_STACK"),
        (psp::GFX_FW_TYPE_RS64_ME_P1_STACK, "GFX_FW_TYPE_RS64_ME_P1_STACK"),
        (psp::GFX_FW_TYPE_RS64_MEC, "GFX_FW_TYPE_RS64_MEC"),
        (psp::GFX_FW_TYPE_RS64_MEC_P0_STACK, "GFX_FW_TYPE_RS64_MEC_P0_STACK"),
        (psp::GFX_FW_TYPE_RS64_MEC_P1_STACK, "GFX_FW_TYPE_RS64_MEC_P1_STACK"),
        (psp::GFX_FW_TYPE_RS64_MEC_P2_STACK, "GFX_FW_TYPE_RS64_MEC_P2_STACK"),
        (psp::GFX_FW_TYPE_RS64_MEC_P3_STACK, "GFX_FW_TYPE_RS64_MEC_P3_STACK"),
        (psp::GFX_FW_TYPE_IMU_I, "GFX_FW_TYPE_IMU_I"),
        (psp::GFX_FW_TYPE_IMU_D, "GFX_FW_TYPE_IMU_D"),
        (
            psp::GFX_FW_TYPE_RLC_RESTORE_LIST_GPM_MEM,
            "GFX_FW_TYPE_RLC_RESTORE_LIST_GPM_MEM",
        ),
        (
            psp::GFX_FW_TYPE_RLC_RESTORE_LIST_SRM_MEM,
            "GFX_FW_TYPE_RLC_RESTORE_LIST_SRM_MEM",
        ),
        (psp::GFX_FW_TYPE_RLC_IRAM, "GFX_FW_TYPE_RLC_IRAM"),
        (psp::GFX_FW_TYPE_RLC_DRAM_BOOT, "GFX_FW_TYPE_RLC_DRAM_BOOT"),
        (psp::GFX_FW_TYPE_RLC_P, "GFX_FW_TYPE_RLC_P"),
        (psp::GFX_FW_TYPE_RLC_V, "GFX_FW_TYPE_RLC_V"),
        (psp::GFX_FW_TYPE_RLC_G, "GFX_FW_TYPE_RLC_G"),
    ];
    NAMES.iter().find(|(v, _)| *v == t).map_or("GFX_FW_TYPE_?", |(_, n)| n)
}

/// A component of a PSP (or TA) file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PspComponent {
    /// `PSP_FW_TYPE_*` (or `TA_FW_TYPE_*`).
    pub fw_type: u32,
    /// Its version.
    pub fw_version: u32,
    /// Its bytes.
    pub bytes: Vec<u8>,
}

/// Parses a PSP v2.x file (`psp_firmware_header_v2_0`/`_v2_1`, or the TA's
/// `ta_firmware_header_v2_0`): its components, each at `ucode_array_offset_bytes +
/// offset_bytes`.
pub fn parse_psp_components(f: &FirmwareFile) -> Result<Vec<PspComponent>> {
    let h: psp_firmware_header_v2_0 = f.at(0, "psp_firmware_header_v2_0")?;
    let common = f.common(&[2])?;
    // v2.1 puts `psp_aux_fw_bin_index` before the array.
    let first = size_of::<psp_firmware_header_v2_0>() + if common.header_version_minor >= 1 { 4 } else { 0 };
    let count = usize::try_from(h.psp_fw_bin_count).map_err(|_| f.err("psp_fw_bin_count does not fit"))?;
    let table = count
        .checked_mul(size_of::<psp_fw_bin_desc>())
        .and_then(|n| n.checked_add(first))
        .filter(|&end| end <= f.data.len());
    if table.is_none() {
        return Err(f.err(format!(
            "psp_fw_bin_count {count}: the component table runs past the end of the file ({:#x} bytes)",
            f.data.len()
        )));
    }
    let mut out = Vec::with_capacity(count);
    for i in 0..count {
        let d: psp_fw_bin_desc = f.at(first + i * size_of::<psp_fw_bin_desc>(), "psp_fw_bin_desc")?;
        let what = format!("component {i} (fw_type {})", d.fw_type);
        let start = u64::from(common.ucode_array_offset_bytes) + u64::from(d.offset_bytes);
        out.push(PspComponent {
            fw_type: d.fw_type,
            fw_version: d.fw_version,
            bytes: f.range(&what, start, u64::from(d.size_bytes))?.to_vec(),
        });
    }
    Ok(out)
}

/// Parses `smu_13_0_0.bin` (SMC header v1 or v2; the image at the common header's
/// offset and size).
pub fn parse_smu(f: &FirmwareFile) -> Result<FwImage> {
    let h: smc_firmware_header_v1_0 = f.at(0, "smc_firmware_header_v1_0")?;
    f.common(&[1, 2])?;
    f.piece(
        psp::GFX_FW_TYPE_SMU,
        "SMU image (ucode_array_offset_bytes, ucode_size_bytes)",
        u64::from(h.header.ucode_array_offset_bytes),
        u64::from(h.header.ucode_size_bytes),
    )
}

/// Parses an SDMA file: `sdma_firmware_header_v2_0` (SDMA 6, `sdma_6_0_0.bin`) gives
/// the context thread (`SDMA_UCODE_TH0`) and the control thread (`SDMA_UCODE_TH1`);
/// `sdma_firmware_header_v3_0` (SDMA 7, `sdma_7_0_1.bin`) one image, `SDMA_UCODE_TH0`
/// at the common header's offset with the v3 size (as `amdgpu_ucode_init_single_fw`).
pub fn parse_sdma(f: &FirmwareFile) -> Result<Vec<FwImage>> {
    let c = f.common(&[2, 3])?;
    if c.header_version_major == 3 {
        let h: sdma_firmware_header_v3_0 = f.at(0, "sdma_firmware_header_v3_0")?;
        return Ok(vec![f.piece(
            psp::GFX_FW_TYPE_SDMA_UCODE_TH0,
            "SDMA image (ucode_array_offset_bytes, v3 ucode_size_bytes)",
            u64::from(c.ucode_array_offset_bytes),
            u64::from(h.ucode_size_bytes),
        )?]);
    }
    let h: sdma_firmware_header_v2_0 = f.at(0, "sdma_firmware_header_v2_0")?;
    Ok(vec![
        f.piece(
            psp::GFX_FW_TYPE_SDMA_UCODE_TH0,
            "SDMA context thread (ucode_array_offset_bytes, ctx_ucode_size_bytes)",
            u64::from(h.header.ucode_array_offset_bytes),
            u64::from(h.ctx_ucode_size_bytes),
        )?,
        f.piece(
            psp::GFX_FW_TYPE_SDMA_UCODE_TH1,
            "SDMA control thread (ctl_ucode_offset, ctl_ucode_size_bytes)",
            u64::from(h.ctl_ucode_offset),
            u64::from(h.ctl_ucode_size_bytes),
        )?,
    ])
}

/// Which RS64 engine a `gfx_firmware_header_v2_0` file is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rs64 {
    /// Prefetch parser.
    Pfp,
    /// Micro engine.
    Me,
    /// Compute micro engine.
    Mec,
}

impl Rs64 {
    /// The pipes whose stacks the boot loads and whose program counters it sets: on
    /// GC 11 two for PFP and ME and four for the MEC (tinygrad 0.10.1); on GC 12 one
    /// for PFP and ME and two for the MEC, the stacks Linux's `gfx_v12_0` loads
    /// (`RS64_PFP_P0_STACK`, `RS64_ME_P0_STACK`, `RS64_MEC_P0/P1_STACK`) and the MEC's
    /// two pipes.
    pub fn pipes(self, gc: GcGen) -> u8 {
        match (self, gc) {
            (Rs64::Pfp | Rs64::Me, GcGen::Gfx11) => 2,
            (Rs64::Mec, GcGen::Gfx11) => 4,
            (Rs64::Pfp | Rs64::Me, GcGen::Gfx12) => 1,
            (Rs64::Mec, GcGen::Gfx12) => 2,
        }
    }

    /// Its code's type and every pipe's stack type.
    pub fn fw_types(self) -> (u32, &'static [u32]) {
        match self {
            Rs64::Pfp => (
                psp::GFX_FW_TYPE_RS64_PFP,
                &[psp::GFX_FW_TYPE_RS64_PFP_P0_STACK, psp::GFX_FW_TYPE_RS64_PFP_P1_STACK],
            ),
            Rs64::Me => (
                psp::GFX_FW_TYPE_RS64_ME,
                &[psp::GFX_FW_TYPE_RS64_ME_P0_STACK, psp::GFX_FW_TYPE_RS64_ME_P1_STACK],
            ),
            Rs64::Mec => (
                psp::GFX_FW_TYPE_RS64_MEC,
                &[
                    psp::GFX_FW_TYPE_RS64_MEC_P0_STACK,
                    psp::GFX_FW_TYPE_RS64_MEC_P1_STACK,
                    psp::GFX_FW_TYPE_RS64_MEC_P2_STACK,
                    psp::GFX_FW_TYPE_RS64_MEC_P3_STACK,
                ],
            ),
        }
    }
}

/// Parses a `gc_*_{pfp,me,mec}.bin` (`gfx_firmware_header_v2_0`): the code (at
/// `ucode_array_offset_bytes`, `ucode_size_bytes` of the v2 header), then the data
/// (stack) image once for each of the first `pipes` pipes, and the start address.
pub fn parse_rs64(f: &FirmwareFile, engine: Rs64, pipes: u8) -> Result<(Vec<FwImage>, u64)> {
    let h: gfx_firmware_header_v2_0 = f.at(0, "gfx_firmware_header_v2_0")?;
    f.common(&[2])?;
    let (code, stacks) = engine.fw_types();
    let mut out = vec![f.piece(
        code,
        "code (ucode_array_offset_bytes, ucode_size_bytes)",
        u64::from(h.header.ucode_array_offset_bytes),
        u64::from(h.ucode_size_bytes),
    )?];
    for &t in stacks.iter().take(usize::from(pipes)) {
        out.push(f.piece(
            t,
            "stack (data_offset_bytes, data_size_bytes)",
            u64::from(h.data_offset_bytes),
            u64::from(h.data_size_bytes),
        )?);
    }
    Ok((
        out,
        u64::from(h.ucode_start_addr_lo) | u64::from(h.ucode_start_addr_hi) << 32,
    ))
}

/// Parses `gc_11_0_0_imu.bin` (`imu_firmware_header_v1_0`): IRAM at
/// `ucode_array_offset_bytes`, DRAM right after it (as tinygrad 0.10.1 cuts it).
pub fn parse_imu(f: &FirmwareFile) -> Result<[FwImage; 2]> {
    let h: imu_firmware_header_v1_0 = f.at(0, "imu_firmware_header_v1_0")?;
    f.common(&[1])?;
    let i_off = u64::from(h.header.ucode_array_offset_bytes);
    let i_size = u64::from(h.imu_iram_ucode_size_bytes);
    Ok([
        f.piece(
            psp::GFX_FW_TYPE_IMU_I,
            "IMU IRAM (ucode_array_offset_bytes, imu_iram_ucode_size_bytes)",
            i_off,
            i_size,
        )?,
        f.piece(
            psp::GFX_FW_TYPE_IMU_D,
            "IMU DRAM (after IRAM, imu_dram_ucode_size_bytes)",
            i_off + i_size,
            u64::from(h.imu_dram_ucode_size_bytes),
        )?,
    ])
}

/// Parses an RLC file: the GPM and SRM restore lists, IRAM, DRAM boot, then (from
/// header 2.3, GC 11's `gc_11_0_0_rlc.bin`) RLCP and RLCV, then RLC_G, in tinygrad
/// 0.10.1's order. GC 12's `gc_12_0_1_rlc.bin` is a 2.2 header: no RLCP/RLCV, and the
/// restore lists loaded as Linux loads them.
pub fn parse_rlc(f: &FirmwareFile) -> Result<Vec<FwImage>> {
    let h22: rlc_firmware_header_v2_2 = f.at(0, "rlc_firmware_header_v2_2")?;
    let c = f.common(&[2])?;
    if c.header_version_minor < 2 {
        return Err(f.err(format!(
            "header version 2.{}: the IRAM and DRAM images need 2.2 or later",
            c.header_version_minor
        )));
    }
    let v21 = &h22.v2_1;
    let v22 = &h22;
    let g = |v: u32| u64::from(v);
    let mut out = vec![
        f.piece(
            psp::GFX_FW_TYPE_RLC_RESTORE_LIST_GPM_MEM,
            "GPM restore list (save_restore_list_gpm_offset_bytes, _size_bytes)",
            g(v21.save_restore_list_gpm_offset_bytes),
            g(v21.save_restore_list_gpm_size_bytes),
        )?,
        f.piece(
            psp::GFX_FW_TYPE_RLC_RESTORE_LIST_SRM_MEM,
            "SRM restore list (save_restore_list_srm_offset_bytes, _size_bytes)",
            g(v21.save_restore_list_srm_offset_bytes),
            g(v21.save_restore_list_srm_size_bytes),
        )?,
        f.piece(
            psp::GFX_FW_TYPE_RLC_IRAM,
            "RLC IRAM (rlc_iram_ucode_offset_bytes, _size_bytes)",
            g(v22.rlc_iram_ucode_offset_bytes),
            g(v22.rlc_iram_ucode_size_bytes),
        )?,
        f.piece(
            psp::GFX_FW_TYPE_RLC_DRAM_BOOT,
            "RLC DRAM (rlc_dram_ucode_offset_bytes, _size_bytes)",
            g(v22.rlc_dram_ucode_offset_bytes),
            g(v22.rlc_dram_ucode_size_bytes),
        )?,
    ];
    if c.header_version_minor >= 3 {
        let h: rlc_firmware_header_v2_3 = f.at(0, "rlc_firmware_header_v2_3")?;
        out.push(f.piece(
            psp::GFX_FW_TYPE_RLC_P,
            "RLCP (rlcp_ucode_offset_bytes, _size_bytes)",
            g(h.rlcp_ucode_offset_bytes),
            g(h.rlcp_ucode_size_bytes),
        )?);
        out.push(f.piece(
            psp::GFX_FW_TYPE_RLC_V,
            "RLCV (rlcv_ucode_offset_bytes, _size_bytes)",
            g(h.rlcv_ucode_offset_bytes),
            g(h.rlcv_ucode_size_bytes),
        )?);
    }
    out.push(f.piece(
        psp::GFX_FW_TYPE_RLC_G,
        "RLC_G (ucode_array_offset_bytes, ucode_size_bytes)",
        g(c.ucode_array_offset_bytes),
        g(c.ucode_size_bytes),
    )?);
    Ok(out)
}

/// Where firmware files are looked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FirmwareSource {
    dirs: Vec<PathBuf>,
}

impl FirmwareSource {
    /// tinygrad 0.10.1's directories ([`FIRMWARE_DIRS`]).
    pub fn system() -> Self {
        FirmwareSource {
            dirs: FIRMWARE_DIRS.iter().map(PathBuf::from).collect(),
        }
    }

    /// One directory only.
    pub fn dir(dir: impl Into<PathBuf>) -> Self {
        FirmwareSource { dirs: vec![dir.into()] }
    }

    /// [`FIRMWARE_DIR_ENV`] if set (and not empty), else [`FirmwareSource::system`].
    pub fn from_env() -> Self {
        Self::from_lookup(|v| std::env::var(v).ok())
    }

    /// As [`FirmwareSource::from_env`], with the variables `lookup` returns.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Self {
        match lookup(FIRMWARE_DIR_ENV).filter(|d| !d.is_empty()) {
            Some(d) => Self::dir(d),
            None => Self::system(),
        }
    }

    /// The directories, in order.
    pub fn dirs(&self) -> &[PathBuf] {
        &self.dirs
    }

    /// Reads `name` from the first directory that has it; in none is
    /// [`AmError::FirmwareMissing`] naming the paths tried.
    pub fn read(&self, sys: &dyn Sys, name: &str) -> Result<FirmwareFile> {
        for d in &self.dirs {
            let p = d.join(name);
            if sys.exists(&p) {
                let data = sys.read_file(&p).map_err(|e| AmError::Firmware {
                    path: p.clone(),
                    msg: e.to_string(),
                })?;
                return Ok(FirmwareFile::new(p, data));
            }
        }
        Err(AmError::FirmwareMissing {
            name: name.to_string(),
            tried: self.dirs.iter().map(|d| d.join(name)).collect(),
        })
    }
}

/// Everything the PSP loads on a 7900 XTX, cut from the files as tinygrad 0.10.1's
/// `AMFirmware` cuts them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AmFirmware {
    /// The sOS file's components by `PSP_FW_TYPE_*` (a type listed twice keeps the
    /// last, as tinygrad's dict does).
    pub sos: BTreeMap<u32, Vec<u8>>,
    /// The SMU image, loaded before the TMR is set up.
    pub smu: FwImage,
    /// The other images, in load order.
    pub descs: Vec<FwImage>,
    /// The RS64 engines' start addresses.
    pub ucode_start: [(Rs64, u64); 3],
    /// The files read.
    pub paths: Vec<PathBuf>,
}

impl AmFirmware {
    /// Reads and cuts a 7900 XTX's files ([`files::ALL`]).
    pub fn load(sys: &dyn Sys, src: &FirmwareSource) -> Result<Self> {
        Self::load_for(sys, src, &FirmwareFiles::navi31(), GcGen::Gfx11)
    }

    /// Reads and cuts `names`, the files of a GPU of generation `gc`.
    pub fn load_for(sys: &dyn Sys, src: &FirmwareSource, names: &FirmwareFiles, gc: GcGen) -> Result<Self> {
        let mut paths = Vec::new();
        let mut read = |name: &str| {
            let f = src.read(sys, name)?;
            paths.push(f.path.clone());
            Ok::<_, AmError>(f)
        };
        let sos_file = read(&names.psp_sos)?;
        let sos = parse_psp_components(&sos_file)?
            .into_iter()
            .map(|c| (c.fw_type, c.bytes))
            .collect::<BTreeMap<_, _>>();
        for (t, name) in [
            (psp::PSP_FW_TYPE_PSP_SOS, "PSP_FW_TYPE_PSP_SOS"),
            (psp::PSP_FW_TYPE_PSP_TOC, "PSP_FW_TYPE_PSP_TOC"),
        ] {
            if !sos.contains_key(&t) {
                return Err(sos_file.err(format!("no {name} component")));
            }
        }
        let smu = parse_smu(&read(&names.smu)?)?;
        let mut descs = parse_sdma(&read(&names.sdma)?)?;
        let mut starts = Vec::new();
        for (engine, name) in [(Rs64::Pfp, &names.pfp), (Rs64::Me, &names.me), (Rs64::Mec, &names.mec)] {
            let (images, start) = parse_rs64(&read(name)?, engine, engine.pipes(gc))?;
            descs.extend(images);
            starts.push((engine, start));
        }
        descs.extend(parse_imu(&read(&names.imu)?)?);
        descs.extend(parse_rlc(&read(&names.rlc)?)?);
        let ucode_start = [starts[0], starts[1], starts[2]];
        Ok(AmFirmware {
            sos,
            smu,
            descs,
            ucode_start,
            paths,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_file_names_the_variable_that_points_elsewhere() {
        let e = crate::AmError::FirmwareMissing {
            name: "gc_11_0_0_mec.bin".into(),
            tried: vec!["/lib/firmware/amdgpu".into()],
        };
        assert!(e.to_string().contains(FIRMWARE_DIR_ENV), "{e}");
    }

    #[test]
    fn header_offsets_follow_amdgpu_ucode_h() {
        use std::mem::offset_of;
        assert_eq!(offset_of!(common_firmware_header, ucode_array_offset_bytes), 24);
        assert_eq!(offset_of!(sdma_firmware_header_v2_0, ctl_ucode_offset), 48);
        assert_eq!(offset_of!(gfx_firmware_header_v2_0, data_offset_bytes), 48);
        assert_eq!(offset_of!(gfx_firmware_header_v2_0, ucode_start_addr_hi), 56);
        assert_eq!(offset_of!(imu_firmware_header_v1_0, imu_dram_ucode_size_bytes), 40);
        assert_eq!(
            offset_of!(rlc_firmware_header_v2_1, save_restore_list_gpm_offset_bytes),
            136
        );
        assert_eq!(offset_of!(rlc_firmware_header_v2_3, rlcv_ucode_offset_bytes), 200);
    }

    #[test]
    fn ranges_are_checked() {
        let f = FirmwareFile::new("/x.bin", vec![0; 64]);
        assert_eq!(f.range("a", 60, 4).unwrap().len(), 4);
        for (o, s) in [(61, 4), (u64::MAX, 2), (0, u64::MAX), (65, 0)] {
            let e = f.range("a", o, s).unwrap_err().to_string();
            assert!(e.starts_with("firmware /x.bin: a: "), "{e}");
        }
        let e = f.common(&[2]).unwrap_err().to_string();
        assert!(e.contains("header says the file is 0x0 bytes, it is 0x40"), "{e}");
        let short = FirmwareFile::new("/y.bin", vec![0; 10]);
        let e = short.common(&[1]).unwrap_err().to_string();
        assert!(e.contains("common_firmware_header (32 bytes at 0x0) runs past"), "{e}");
    }
}
