//! The mock PSP's firmware catalogue: for every firmware type, the images a firmware
//! file of that type holds. The PSP compares what it is asked to load against it, so
//! a driver that cuts a file wrongly gets a failed load, not a silent success.
//!
//! The files are the ones the mock serves (the synthetic ones of
//! [`super::firmware::files`], or a directory a test names with
//! [`MockConfig::pci_firmware_dir`](crate::MockConfig::pci_firmware_dir)). They are
//! cut by the mock's own reading of `amdgpu_ucode.h` (Linux 6.12), independent of the
//! transport's parser, into the parts tinygrad 0.10.1's `AMFirmware` loads (which are
//! the parts `amdgpu_ucode_init_single_fw` cuts for the same types):
//!
//! | file | header | images |
//! |---|---|---|
//! | `psp_13_0_0_sos.bin` | `psp_firmware_header_v2_0`/`_v2_1` | each `psp_fw_bin_desc` by `PSP_FW_TYPE_*` (at `ucode_array_offset_bytes + offset_bytes`) |
//! | `smu_13_0_0.bin` | `smc_firmware_header_v1_0` and later | `GFX_FW_TYPE_SMU`: `ucode_array_offset_bytes`, `ucode_size_bytes` |
//! | `sdma_6_0_0.bin` | `sdma_firmware_header_v2_0` | `SDMA_UCODE_TH0`: `ucode_array_offset_bytes`, `ctx_ucode_size_bytes`; `TH1`: `ctl_ucode_offset`, `ctl_ucode_size_bytes` |
//! | `sdma_7_0_1.bin` (gfx1201) | `sdma_firmware_header_v3_0` | `SDMA_UCODE_TH0`: `ucode_array_offset_bytes`, the v3 `ucode_size_bytes` |
//! | `gc_11_0_0_{pfp,me,mec}.bin` | `gfx_firmware_header_v2_0` | `RS64_{PFP,ME,MEC}`: `ucode_array_offset_bytes`, the v2 `ucode_size_bytes`; every pipe's `…_Pn_STACK`: `data_offset_bytes`, `data_size_bytes` (GC 12's `gc_12_0_1_*`: the stacks `gfx_v12_0` cuts, PFP and ME `P0`, MEC `P0`, `P1`) |
//! | `gc_11_0_0_imu.bin` | `imu_firmware_header_v1_0` | `IMU_I`: `ucode_array_offset_bytes`, `imu_iram_ucode_size_bytes`; `IMU_D`: right after it, `imu_dram_ucode_size_bytes` |
//! | `gc_11_0_0_rlc.bin` | `rlc_firmware_header_v2_0` … `_v2_3` | `RLC_G` (common header); from v2.1 the GPM and SRM restore lists, from v2.2 `RLC_IRAM` and `RLC_DRAM_BOOT`, from v2.3 `RLC_P` and `RLC_V` |
//!
//! Every offset and size is checked against the file; a file that does not parse
//! (or cannot be read) adds nothing and is listed in [`FirmwareCatalogue::problems`],
//! so loads of its types are refused. An image of size 0 is not catalogued (amdgpu
//! skips those too).

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};

use amd_regs::firmware::{FIRMWARE_DIRS, FirmwareFiles, files};

use super::block::generated::psp;

/// How a file of the catalogue is cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Sos,
    Smc,
    Sdma,
    Rs64 { code: u32, stacks: &'static [u32] },
    Imu,
    Rlc,
}

/// The stacks amdgpu cuts from an RS64 file of GC major version `gc` (GC 11: PFP and
/// ME 2 pipes, MEC 4 — `gfx_v11_0`; GC 12: PFP and ME pipe 0, MEC pipes 0 and 1 —
/// `gfx_v12_0`), keyed by the code's type.
fn rs64_kind(code: u32, gc: u8) -> Kind {
    use psp::*;
    let stacks: &'static [u32] = match (code, gc >= 12) {
        (GFX_FW_TYPE_RS64_PFP, false) => &[GFX_FW_TYPE_RS64_PFP_P0_STACK, GFX_FW_TYPE_RS64_PFP_P1_STACK],
        (GFX_FW_TYPE_RS64_ME, false) => &[GFX_FW_TYPE_RS64_ME_P0_STACK, GFX_FW_TYPE_RS64_ME_P1_STACK],
        (GFX_FW_TYPE_RS64_PFP, true) => &[GFX_FW_TYPE_RS64_PFP_P0_STACK],
        (GFX_FW_TYPE_RS64_ME, true) => &[GFX_FW_TYPE_RS64_ME_P0_STACK],
        (_, false) => &[
            GFX_FW_TYPE_RS64_MEC_P0_STACK,
            GFX_FW_TYPE_RS64_MEC_P1_STACK,
            GFX_FW_TYPE_RS64_MEC_P2_STACK,
            GFX_FW_TYPE_RS64_MEC_P3_STACK,
        ],
        (_, true) => &[GFX_FW_TYPE_RS64_MEC_P0_STACK, GFX_FW_TYPE_RS64_MEC_P1_STACK],
    };
    Kind::Rs64 { code, stacks }
}

/// How the file `name` is cut, by amdgpu's naming (`psp_*_sos.bin`, `smu_*.bin`,
/// `sdma_*.bin`, `gc_*_{pfp,me,mec,imu,rlc}.bin`); `None` for a file the boot does not
/// read.
fn kind_of(name: &str) -> Option<Kind> {
    let stem = name.strip_suffix(".bin")?;
    if stem.starts_with("psp_") && stem.ends_with("_sos") {
        return Some(Kind::Sos);
    }
    if stem
        .strip_prefix("smu_")
        .is_some_and(|v| v.chars().all(|c| c.is_ascii_digit() || c == '_'))
    {
        return Some(Kind::Smc);
    }
    if stem.starts_with("sdma_") {
        return Some(Kind::Sdma);
    }
    let rest = stem.strip_prefix("gc_")?;
    let gc: u8 = rest.split('_').next()?.parse().ok()?;
    match rest.rsplit('_').next()? {
        "pfp" => Some(rs64_kind(psp::GFX_FW_TYPE_RS64_PFP, gc)),
        "me" => Some(rs64_kind(psp::GFX_FW_TYPE_RS64_ME, gc)),
        "mec" => Some(rs64_kind(psp::GFX_FW_TYPE_RS64_MEC, gc)),
        "imu" => Some(Kind::Imu),
        "rlc" => Some(Kind::Rlc),
        _ => None,
    }
}

/// The names of a 7900 XTX's files, in tinygrad 0.10.1's order (what
/// [`FirmwareCatalogue::from_dir`] reads).
pub fn file_names() -> impl Iterator<Item = &'static str> {
    files::ALL.into_iter()
}

/// The host directory holding every file of [`file_names`] (where Debian's
/// `firmware-amd-graphics` is installed), for a mock serving the installed firmware
/// ([`MockConfig::pci_firmware_dir`](crate::MockConfig::pci_firmware_dir)): as
/// [`installed_dir_of`] for a 7900 XTX's files.
pub fn installed_dir() -> Result<PathBuf, String> {
    installed_dir_of(&FirmwareFiles::navi31())
}

/// The host directory holding every one of `files`: `AM_FIRMWARE_DIR` if set (the
/// directory the transport reads instead of the system's), else the first of
/// [`FIRMWARE_DIRS`] that does; else why none does.
pub fn installed_dir_of(files: &FirmwareFiles) -> Result<PathBuf, String> {
    let names = files.all();
    let has = |d: &Path, n: &str| d.join(n).exists();
    let dirs: Vec<PathBuf> = match std::env::var_os("AM_FIRMWARE_DIR").filter(|d| !d.is_empty()) {
        Some(d) => vec![PathBuf::from(d)],
        None => FIRMWARE_DIRS.iter().map(PathBuf::from).collect(),
    };
    if let Some(d) = dirs.iter().find(|d| names.iter().all(|n| has(d, n))) {
        return Ok(d.clone());
    }
    let zst = dirs.iter().any(|d| names.iter().any(|n| has(d, &format!("{n}.zst"))));
    Err(format!(
        "{} not all installed in {dirs:?}{} (Debian: firmware-amd-graphics, non-free-firmware; gfx1201's files from 20250410 on)",
        names.join(", "),
        if zst {
            "; .zst compressed files are present, which neither the transport nor the mock decompresses"
        } else {
            ""
        }
    ))
}

/// Byte offsets of the `amdgpu_ucode.h` fields the catalogue reads.
mod field {
    // struct common_firmware_header
    pub const SIZE_BYTES: usize = 0;
    pub const HEADER_VERSION_MAJOR: usize = 8;
    pub const HEADER_VERSION_MINOR: usize = 10;
    pub const UCODE_SIZE_BYTES: usize = 20;
    pub const UCODE_ARRAY_OFFSET_BYTES: usize = 24;
    // struct psp_firmware_header_v2_0 / _v2_1
    pub const PSP_FW_BIN_COUNT: usize = 32;
    pub const PSP_FW_BIN_V2_0: usize = 36;
    pub const PSP_FW_BIN_V2_1: usize = 40;
    /// sizeof(struct psp_fw_bin_desc): fw_type, fw_version, offset_bytes, size_bytes
    pub const PSP_FW_BIN_DESC: usize = 16;
    // struct sdma_firmware_header_v2_0
    pub const SDMA_CTX_UCODE_SIZE_BYTES: usize = 36;
    pub const SDMA_CTL_UCODE_OFFSET: usize = 48;
    pub const SDMA_CTL_UCODE_SIZE_BYTES: usize = 52;
    // struct sdma_firmware_header_v3_0
    pub const SDMA_V3_UCODE_SIZE_BYTES: usize = 40;
    // struct gfx_firmware_header_v2_0
    pub const GFX_UCODE_SIZE_BYTES: usize = 36;
    pub const GFX_DATA_SIZE_BYTES: usize = 44;
    pub const GFX_DATA_OFFSET_BYTES: usize = 48;
    // struct imu_firmware_header_v1_0
    pub const IMU_IRAM_UCODE_SIZE_BYTES: usize = 32;
    pub const IMU_DRAM_UCODE_SIZE_BYTES: usize = 40;
    // struct rlc_firmware_header_v2_1
    pub const RLC_GPM_SIZE_BYTES: usize = 132;
    pub const RLC_GPM_OFFSET_BYTES: usize = 136;
    pub const RLC_SRM_SIZE_BYTES: usize = 148;
    pub const RLC_SRM_OFFSET_BYTES: usize = 152;
    // struct rlc_firmware_header_v2_2
    pub const RLC_IRAM_SIZE_BYTES: usize = 156;
    pub const RLC_IRAM_OFFSET_BYTES: usize = 160;
    pub const RLC_DRAM_SIZE_BYTES: usize = 164;
    pub const RLC_DRAM_OFFSET_BYTES: usize = 168;
    // struct rlc_firmware_header_v2_3
    pub const RLCP_SIZE_BYTES: usize = 180;
    pub const RLCP_OFFSET_BYTES: usize = 184;
    pub const RLCV_SIZE_BYTES: usize = 196;
    pub const RLCV_OFFSET_BYTES: usize = 200;
}

/// An image: which file, which bytes of it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Piece {
    file: usize,
    range: Range<usize>,
}

/// What the mock PSP checks loads against (see the [module](self) documentation).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FirmwareCatalogue {
    files: Vec<(String, Vec<u8>)>,
    /// `GFX_FW_TYPE_*` → images.
    images: BTreeMap<u32, Vec<Piece>>,
    /// `PSP_FW_TYPE_*` → the sOS file's components.
    components: BTreeMap<u32, Vec<Piece>>,
    problems: Vec<String>,
}

impl FirmwareCatalogue {
    /// The catalogue of the synthetic files ([`super::firmware::all_files`]: a
    /// gfx1100's and a gfx1201's).
    pub fn synthetic() -> Self {
        Self::from_files(super::firmware::all_files())
    }

    /// The catalogue of `names` only (one GPU's files: its PSP takes no image of
    /// another generation's files); a name the catalogue does not hold is a
    /// [problem](Self::problems).
    pub fn subset(&self, names: &[&str]) -> Self {
        let files = self
            .files
            .iter()
            .filter(|(n, _)| names.contains(&n.as_str()))
            .cloned()
            .collect();
        let mut c = Self::from_files(files);
        for n in names {
            if self.file(n).is_none() {
                c.problems.push(format!("{n}: not served"));
            }
        }
        c.problems.extend(
            self.problems
                .iter()
                .filter(|p| names.iter().any(|n| p.starts_with(&format!("{n}:"))))
                .cloned(),
        );
        c
    }

    /// The catalogue of `files` (name, contents); names other than those of
    /// [`file_names`] are kept (served) but not cut.
    pub fn from_files(files: Vec<(String, Vec<u8>)>) -> Self {
        let mut c = FirmwareCatalogue {
            files,
            ..Self::default()
        };
        for i in 0..c.files.len() {
            let name = c.files[i].0.clone();
            let Some(kind) = kind_of(&name) else {
                continue;
            };
            let f = File { data: &c.files[i].1 };
            match cut(&f, kind) {
                Ok(cuts) => {
                    for (map, t, range) in cuts {
                        let map = match map {
                            Map::Gfx => &mut c.images,
                            Map::Psp => &mut c.components,
                        };
                        map.entry(t).or_default().push(Piece { file: i, range });
                    }
                }
                Err(e) => c.problems.push(format!("{name}: {e}")),
            }
        }
        c
    }

    /// The catalogue of the files of [`file_names`] (and a gfx1201's, where present)
    /// in the host directory `dir`, read now. A missing file of [`file_names`] is a
    /// [problem](Self::problems) (a compressed `.bin.zst` beside it is named: the mock
    /// does not decompress); a directory that cannot be listed is an error.
    pub fn from_dir(dir: &Path) -> Result<Self, String> {
        std::fs::read_dir(dir).map_err(|e| format!("firmware directory {}: {e}", dir.display()))?;
        let mut files = Vec::new();
        let mut problems = Vec::new();
        // A gfx1201's files where the directory has them (Debian's 20230210 package
        // has none: their absence is a problem only for a gfx1201's PSP).
        let gfx1201 = FirmwareFiles::navi48();
        for name in gfx1201.all() {
            if let Ok(b) = std::fs::read(dir.join(name)) {
                files.push((name.to_string(), b));
            }
        }
        for name in file_names() {
            let p = dir.join(name);
            match std::fs::read(&p) {
                Ok(b) => files.push((name.to_string(), b)),
                Err(e) => {
                    let zst = dir.join(format!("{name}.zst"));
                    problems.push(if zst.exists() {
                        format!("{name}: only {} is installed (compressed; not read)", zst.display())
                    } else {
                        format!("{name}: {}: {e}", p.display())
                    });
                }
            }
        }
        let mut c = Self::from_files(files);
        problems.append(&mut c.problems);
        c.problems = problems;
        Ok(c)
    }

    /// The files, by name, as the mock serves them.
    pub fn files(&self) -> impl Iterator<Item = (&str, &[u8])> {
        self.files.iter().map(|(n, b)| (n.as_str(), b.as_slice()))
    }

    /// The file called `name`.
    pub fn file(&self, name: &str) -> Option<&[u8]> {
        self.files.iter().find(|(n, _)| n == name).map(|(_, b)| b.as_slice())
    }

    /// Files that could not be read or cut, each with why.
    pub fn problems(&self) -> &[String] {
        &self.problems
    }

    fn bytes(&self, p: &Piece) -> &[u8] {
        // Ranges are checked against their file when cut; an empty slice otherwise.
        self.files
            .get(p.file)
            .and_then(|(_, b)| b.get(p.range.clone()))
            .unwrap_or(&[])
    }

    /// The bytes of `kind`'s pieces of type `fw_type`.
    fn pieces(&self, kind: &BTreeMap<u32, Vec<Piece>>, fw_type: u32) -> Vec<&[u8]> {
        kind.get(&fw_type)
            .map_or_else(Vec::new, |v| v.iter().map(|p| self.bytes(p)).collect())
    }

    /// The images of `GFX_FW_TYPE_*` `fw_type`.
    pub fn images(&self, fw_type: u32) -> Vec<&[u8]> {
        self.pieces(&self.images, fw_type)
    }

    /// The `GFX_FW_TYPE_*` values with at least one image.
    pub fn image_types(&self) -> Vec<u32> {
        self.images.keys().copied().collect()
    }

    /// The sOS file's components of `PSP_FW_TYPE_*` `fw_type`.
    pub fn components(&self, fw_type: u32) -> Vec<&[u8]> {
        self.pieces(&self.components, fw_type)
    }

    /// The `PSP_FW_TYPE_*` values with at least one component.
    pub fn component_types(&self) -> Vec<u32> {
        self.components.keys().copied().collect()
    }

    /// Whether `data` is exactly an image of `fw_type`: `None` if the catalogue has
    /// none of that type.
    pub fn holds_image(&self, fw_type: u32, data: &[u8]) -> Option<bool> {
        let v = self.images.get(&fw_type)?;
        Some(v.iter().any(|p| self.bytes(p) == data))
    }

    /// Whether `buf` holds exactly a component of one of `types`, followed by zeros
    /// only (the bootloader is given no size; both drivers zero the rest of the
    /// buffer): `None` if the catalogue has no component of those types.
    pub fn holds_component(&self, types: &[u32], buf: &[u8]) -> Option<bool> {
        let pieces: Vec<&Piece> = types.iter().filter_map(|t| self.components.get(t)).flatten().collect();
        if pieces.is_empty() {
            return None;
        }
        Some(pieces.iter().any(|p| {
            let c = self.bytes(p);
            buf.len() >= c.len() && buf[..c.len()] == *c && buf[c.len()..].iter().all(|&b| b == 0)
        }))
    }
}

/// A file being cut.
struct File<'a> {
    data: &'a [u8],
}

#[derive(Debug, Clone, Copy)]
enum Map {
    Gfx,
    Psp,
}

type Cuts = Vec<(Map, u32, Range<usize>)>;

impl File<'_> {
    fn u32_at(&self, off: usize, what: &str) -> Result<u32, String> {
        self.bytes_at(off, what).map(u32::from_le_bytes)
    }

    fn u16_at(&self, off: usize, what: &str) -> Result<u16, String> {
        self.bytes_at(off, what).map(u16::from_le_bytes)
    }

    /// The `N` bytes at `off`; `what` names them where they are past the end.
    fn bytes_at<const N: usize>(&self, off: usize, what: &str) -> Result<[u8; N], String> {
        off.checked_add(N)
            .and_then(|end| self.data.get(off..end))
            .and_then(|b| <[u8; N]>::try_from(b).ok())
            .ok_or_else(|| format!("{what} at byte {off:#x} is past the end ({:#x} bytes)", self.data.len()))
    }

    /// `offset..offset + size`, checked against the file.
    fn range(&self, what: &str, offset: u64, size: u64) -> Result<Range<usize>, String> {
        let r = offset
            .checked_add(size)
            .and_then(|end| Some(usize::try_from(offset).ok()?..usize::try_from(end).ok()?))
            .filter(|r| r.end <= self.data.len());
        r.ok_or_else(|| {
            format!(
                "{what}: {size:#x} bytes at {offset:#x} run past the end of the file ({:#x} bytes)",
                self.data.len()
            )
        })
    }

    /// The common header's checks (`amdgpu_ucode_validate`: `size_bytes` is the
    /// file's length) and its version, `(major, minor)`, which must be one of `majors`.
    fn common(&self, majors: &[u16]) -> Result<(u16, u16), String> {
        let size = self.u32_at(field::SIZE_BYTES, "size_bytes")?;
        if usize::try_from(size).ok() != Some(self.data.len()) {
            return Err(format!(
                "size_bytes {size:#x} is not the file's length {:#x}",
                self.data.len()
            ));
        }
        let major = self.u16_at(field::HEADER_VERSION_MAJOR, "header_version_major")?;
        let minor = self.u16_at(field::HEADER_VERSION_MINOR, "header_version_minor")?;
        if !majors.contains(&major) {
            return Err(format!("header version {major}.{minor} is not one this file type has"));
        }
        Ok((major, minor))
    }

    /// The piece of `fw_type` at `offset`, `size` bytes, if its size is not 0.
    fn piece(&self, out: &mut Cuts, map: Map, fw_type: u32, what: &str, offset: u64, size: u64) -> Result<(), String> {
        if size != 0 {
            out.push((map, fw_type, self.range(what, offset, size)?));
        }
        Ok(())
    }

    fn field(&self, off: usize, what: &str) -> Result<u64, String> {
        self.u32_at(off, what).map(u64::from)
    }
}

fn cut(f: &File<'_>, kind: Kind) -> Result<Cuts, String> {
    let mut out = Cuts::new();
    let g = |off, what| f.field(off, what);
    let array = g(field::UCODE_ARRAY_OFFSET_BYTES, "ucode_array_offset_bytes")?;
    let ucode_size = g(field::UCODE_SIZE_BYTES, "ucode_size_bytes")?;
    match kind {
        Kind::Sos => {
            let (_, minor) = f.common(&[2])?;
            let first = if minor >= 1 {
                field::PSP_FW_BIN_V2_1
            } else {
                field::PSP_FW_BIN_V2_0
            };
            let count = g(field::PSP_FW_BIN_COUNT, "psp_fw_bin_count")?;
            let table_end = count
                .checked_mul(field::PSP_FW_BIN_DESC as u64)
                .and_then(|n| n.checked_add(first as u64));
            if table_end.is_none_or(|e| e > f.data.len() as u64) {
                return Err(format!(
                    "psp_fw_bin_count {count}: the table runs past the end of the file"
                ));
            }
            for i in 0..count as usize {
                let d = first + i * field::PSP_FW_BIN_DESC;
                let t = f.u32_at(d, "psp_fw_bin_desc.fw_type")?;
                let off = g(d + 8, "psp_fw_bin_desc.offset_bytes")?;
                let size = g(d + 12, "psp_fw_bin_desc.size_bytes")?;
                let what = format!("component {i} (PSP_FW_TYPE {t})");
                f.piece(&mut out, Map::Psp, t, &what, array + off, size)?;
            }
        }
        Kind::Smc => {
            f.common(&[1, 2])?;
            f.piece(&mut out, Map::Gfx, psp::GFX_FW_TYPE_SMU, "SMU image", array, ucode_size)?;
        }
        Kind::Sdma => {
            let (major, _) = f.common(&[2, 3])?;
            if major == 3 {
                // sdma_firmware_header_v3_0: one image at the common header's offset,
                // the v3 size (`amdgpu_ucode_init_single_fw`'s SDMA_RS64).
                let size = g(field::SDMA_V3_UCODE_SIZE_BYTES, "ucode_size_bytes (v3)")?;
                f.piece(
                    &mut out,
                    Map::Gfx,
                    psp::GFX_FW_TYPE_SDMA_UCODE_TH0,
                    "SDMA image",
                    array,
                    size,
                )?;
                return Ok(out);
            }
            let ctx = g(field::SDMA_CTX_UCODE_SIZE_BYTES, "ctx_ucode_size_bytes")?;
            let ctl_off = g(field::SDMA_CTL_UCODE_OFFSET, "ctl_ucode_offset")?;
            let ctl = g(field::SDMA_CTL_UCODE_SIZE_BYTES, "ctl_ucode_size_bytes")?;
            f.piece(
                &mut out,
                Map::Gfx,
                psp::GFX_FW_TYPE_SDMA_UCODE_TH0,
                "context thread",
                array,
                ctx,
            )?;
            f.piece(
                &mut out,
                Map::Gfx,
                psp::GFX_FW_TYPE_SDMA_UCODE_TH1,
                "control thread",
                ctl_off,
                ctl,
            )?;
        }
        Kind::Rs64 { code, stacks } => {
            f.common(&[2])?;
            let size = g(field::GFX_UCODE_SIZE_BYTES, "ucode_size_bytes (v2)")?;
            let data_size = g(field::GFX_DATA_SIZE_BYTES, "data_size_bytes")?;
            let data_off = g(field::GFX_DATA_OFFSET_BYTES, "data_offset_bytes")?;
            f.piece(&mut out, Map::Gfx, code, "code", array, size)?;
            for &t in stacks {
                f.piece(&mut out, Map::Gfx, t, "stack", data_off, data_size)?;
            }
        }
        Kind::Imu => {
            f.common(&[1])?;
            let iram = g(field::IMU_IRAM_UCODE_SIZE_BYTES, "imu_iram_ucode_size_bytes")?;
            let dram = g(field::IMU_DRAM_UCODE_SIZE_BYTES, "imu_dram_ucode_size_bytes")?;
            f.piece(&mut out, Map::Gfx, psp::GFX_FW_TYPE_IMU_I, "IRAM", array, iram)?;
            // DRAM follows IRAM (amdgpu_ucode_init_single_fw's AMDGPU_UCODE_ID_IMU_D).
            f.piece(&mut out, Map::Gfx, psp::GFX_FW_TYPE_IMU_D, "DRAM", array + iram, dram)?;
        }
        Kind::Rlc => {
            let (_, minor) = f.common(&[2])?;
            let mut lists = Vec::new();
            if minor >= 1 {
                lists.push((
                    psp::GFX_FW_TYPE_RLC_RESTORE_LIST_GPM_MEM,
                    "GPM restore list",
                    field::RLC_GPM_OFFSET_BYTES,
                    field::RLC_GPM_SIZE_BYTES,
                ));
                lists.push((
                    psp::GFX_FW_TYPE_RLC_RESTORE_LIST_SRM_MEM,
                    "SRM restore list",
                    field::RLC_SRM_OFFSET_BYTES,
                    field::RLC_SRM_SIZE_BYTES,
                ));
            }
            if minor >= 2 {
                lists.push((
                    psp::GFX_FW_TYPE_RLC_IRAM,
                    "RLC IRAM",
                    field::RLC_IRAM_OFFSET_BYTES,
                    field::RLC_IRAM_SIZE_BYTES,
                ));
                lists.push((
                    psp::GFX_FW_TYPE_RLC_DRAM_BOOT,
                    "RLC DRAM",
                    field::RLC_DRAM_OFFSET_BYTES,
                    field::RLC_DRAM_SIZE_BYTES,
                ));
            }
            if minor >= 3 {
                lists.push((
                    psp::GFX_FW_TYPE_RLC_P,
                    "RLCP",
                    field::RLCP_OFFSET_BYTES,
                    field::RLCP_SIZE_BYTES,
                ));
                lists.push((
                    psp::GFX_FW_TYPE_RLC_V,
                    "RLCV",
                    field::RLCV_OFFSET_BYTES,
                    field::RLCV_SIZE_BYTES,
                ));
            }
            for (t, what, off, size) in lists {
                let (o, s) = (g(off, what)?, g(size, what)?);
                f.piece(&mut out, Map::Gfx, t, what, o, s)?;
            }
            f.piece(&mut out, Map::Gfx, psp::GFX_FW_TYPE_RLC_G, "RLC_G", array, ucode_size)?;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::super::firmware::{self, blob};
    use super::*;

    use super::super::firmware::IMAGES as SYNTHETIC;

    /// Each generation's files, alone (as a GPU's PSP sees them), cut into exactly
    /// the images the synthetic builders place.
    #[test]
    fn synthetic_files_cut_into_every_type() {
        let all = FirmwareCatalogue::synthetic();
        assert_eq!(all.problems(), &[] as &[String]);
        assert_eq!(all.files().count(), 16);
        let gfx1100 = FirmwareFiles::navi31();
        let gfx1201 = FirmwareFiles::navi48();
        for (names, images, raise) in [
            (&gfx1100, &SYNTHETIC[..], 0),
            (&gfx1201, &firmware::IMAGES_GFX1201[..], firmware::GFX1201_TAG),
        ] {
            let c = all.subset(&names.all());
            assert_eq!(c.problems(), &[] as &[String]);
            // The catalogue lists every stack amdgpu cuts; the synthetic image lists
            // the ones the transport loads (the same, for both generations).
            let mut want: Vec<u32> = images.iter().map(|s| s.0).collect();
            want.sort();
            want.dedup();
            assert_eq!(c.image_types(), want, "{}", names.rlc);
            for &(t, tag, n) in images {
                assert_eq!(c.images(t), [blob(tag, n).as_slice()], "type {t:#x}");
                assert_eq!(c.holds_image(t, &blob(tag, n)), Some(true));
            }
            let mut comps: Vec<u32> = firmware::SOS_PARTS.iter().map(|p| p.0).collect();
            comps.sort();
            assert_eq!(c.component_types(), comps);
            for (t, tag, n) in firmware::SOS_PARTS {
                assert_eq!(c.components(t), [blob(tag + raise, n).as_slice()], "component {t:#x}");
            }
            assert_eq!(c.files().count(), 8);
        }
        // No image of one generation is one of the other's.
        let g11 = all.subset(&gfx1100.all());
        for &(t, tag, n) in &firmware::IMAGES_GFX1201 {
            assert_ne!(g11.holds_image(t, &blob(tag, n)), Some(true), "type {t:#x}");
        }
        assert_eq!(all.holds_image(psp::GFX_FW_TYPE_CP_MES, &[1]), None);
        assert_eq!(all.file(files::SMU), Some(firmware::smu_file().as_slice()));
        let missing = all.subset(&["gc_13_0_0_rlc.bin"]);
        assert_eq!(missing.problems(), ["gc_13_0_0_rlc.bin: not served"]);
    }

    /// amdgpu's file names decide the cut; other names are served, not cut.
    #[test]
    fn names_decide_the_kind() {
        assert_eq!(kind_of("psp_14_0_3_sos.bin"), Some(Kind::Sos));
        assert_eq!(kind_of("psp_14_0_3_ta.bin"), None);
        assert_eq!(kind_of("smu_14_0_3.bin"), Some(Kind::Smc));
        assert_eq!(kind_of("smu_14_0_3_kicker.bin"), None);
        assert_eq!(kind_of("sdma_7_0_1.bin"), Some(Kind::Sdma));
        assert_eq!(kind_of("gc_12_0_1_rlc.bin"), Some(Kind::Rlc));
        assert_eq!(kind_of("gc_12_0_1_toc.bin"), None);
        let Some(Kind::Rs64 { stacks, .. }) = kind_of("gc_12_0_1_mec.bin") else {
            panic!("gc_12_0_1_mec.bin is an RS64 file");
        };
        assert_eq!(stacks.len(), 2);
        let Some(Kind::Rs64 { stacks, .. }) = kind_of("gc_11_0_0_mec.bin") else {
            panic!("gc_11_0_0_mec.bin is an RS64 file");
        };
        assert_eq!(stacks.len(), 4);
        assert_eq!(kind_of("gc_x_pfp.bin"), None);
    }

    #[test]
    fn header_versions_decide_what_is_cut() {
        // psp_firmware_header_v2_1: the table after psp_aux_fw_bin_index.
        let c = FirmwareCatalogue::from_files(vec![(files::PSP_SOS.into(), firmware::sos_file(1))]);
        assert_eq!(c.problems(), &[] as &[String]);
        for (t, tag, n) in firmware::SOS_PARTS {
            assert_eq!(c.components(t), [blob(tag, n).as_slice()]);
        }
        // RLC v2.1 has only the lists besides RLC_G; v2.2 adds IRAM and DRAM.
        let mut v21 = firmware::rlc_file(3);
        v21[10] = 1;
        let c = FirmwareCatalogue::from_files(vec![(files::RLC.into(), v21)]);
        let mut want = [
            psp::GFX_FW_TYPE_RLC_RESTORE_LIST_GPM_MEM,
            psp::GFX_FW_TYPE_RLC_RESTORE_LIST_SRM_MEM,
            psp::GFX_FW_TYPE_RLC_G,
        ];
        want.sort();
        assert_eq!(c.image_types(), want);
        let mut v22 = firmware::rlc_file(3);
        v22[10] = 2;
        let c = FirmwareCatalogue::from_files(vec![(files::RLC.into(), v22)]);
        assert_eq!(c.image_types().len(), 5);
        // SDMA 7's header 3.0: one image at the common header's offset, the v3 size.
        let c = FirmwareCatalogue::from_files(vec![("sdma_7_0_1.bin".into(), firmware::sdma_v3_file())]);
        assert_eq!(c.image_types(), [psp::GFX_FW_TYPE_SDMA_UCODE_TH0]);
        assert_eq!(
            c.images(psp::GFX_FW_TYPE_SDMA_UCODE_TH0),
            [blob(30 + firmware::GFX1201_TAG, 0x180).as_slice()]
        );
        // A wrong major version, a size_bytes that is not the length: problems.
        let mut bad = firmware::sdma_file();
        bad[8] = 1;
        let mut short = firmware::smu_file();
        short.pop();
        let c = FirmwareCatalogue::from_files(vec![(files::SDMA.into(), bad), (files::SMU.into(), short)]);
        assert!(c.image_types().is_empty());
        assert_eq!(c.problems().len(), 2, "{:?}", c.problems());
        assert!(
            c.problems()[0].starts_with("sdma_6_0_0.bin: header version 1.0"),
            "{:?}",
            c.problems()
        );
        assert!(c.problems()[1].contains("size_bytes 0x"), "{:?}", c.problems());
    }

    #[test]
    fn components_fill_the_buffer_then_zeros() {
        let c = FirmwareCatalogue::synthetic();
        let (t, tag, n) = firmware::SOS_PARTS[2];
        let mut buf = vec![0u8; 4096];
        buf[..n].copy_from_slice(&blob(tag, n));
        assert_eq!(c.holds_component(&[t], &buf), Some(true));
        assert_eq!(c.holds_component(&[psp::PSP_FW_TYPE_PSP_KDB, t], &buf), Some(true));
        assert_eq!(c.holds_component(&[psp::PSP_FW_TYPE_PSP_KDB], &buf), Some(false));
        assert_eq!(c.holds_component(&[psp::PSP_FW_TYPE_PSP_RL], &buf), None);
        buf[n] = 1;
        assert_eq!(c.holds_component(&[t], &buf), Some(false), "junk after it");
        assert_eq!(c.holds_component(&[t], &buf[..n - 1]), Some(false), "a short buffer");
    }

    #[test]
    fn hostile_files_never_panic() {
        let mut next = amd_packets::testing::xorshift64(0x2545_f491_4f6c_dd1d);
        for (name, good) in firmware::all_files() {
            // Every truncation, with size_bytes kept honest so the deeper fields run.
            for cut in 0..good.len() {
                let mut b = good[..cut].to_vec();
                if let Some(s) = b.get_mut(..4) {
                    s.copy_from_slice(&(cut as u32).to_le_bytes());
                }
                let _ = FirmwareCatalogue::from_files(vec![(name.clone(), b)]);
            }
            // Random header words.
            for _ in 0..2000 {
                let mut b = good.clone();
                for _ in 0..1 + next() % 4 {
                    let r = next();
                    let at = (r as usize % 52) * 4;
                    let v = match r >> 60 {
                        0..4 => u32::MAX,
                        4..8 => (r >> 16) as u32 & 0xffff,
                        _ => (r >> 32) as u32,
                    };
                    b[at..at + 4].copy_from_slice(&v.to_le_bytes());
                }
                let n = b.len() as u32;
                b[..4].copy_from_slice(&n.to_le_bytes());
                let c = FirmwareCatalogue::from_files(vec![(name.clone(), b)]);
                for t in c.image_types() {
                    assert!(c.images(t).iter().all(|i| !i.is_empty()));
                }
            }
        }
    }
}
