//! IP discovery and register access by IP block and instance.
//!
//! As tinygrad 0.10.1's `AMDev._run_discovery` does, the VRAM size in MiB is read from
//! `RCC_CONFIG_MEMSIZE` at its fixed address (no IP base is known yet), and the
//! discovery binary is read through BAR 0 at [`DISCOVERY_TMR_OFFSET`] below the top of
//! VRAM. [`Discovery::parse`] checks every offset, size, count, signature and checksum
//! of it (it is data read from a device) before it believes a field. [`Registers`]
//! then turns a generated register ([`AmReg`]: offset in a segment) into a dword
//! address with the discovery base of its IP block, instance and segment, and reads
//! and writes it through [`Mmio`], indirectly (the NBIO `RSMU` index/data pair) for
//! an address past the register BAR.

use std::sync::Arc;

use amd_kfd::mmio::Mmio;
use zerocopy::FromBytes;

use crate::discovery::{
    self as dsc, BINARY_CHECKSUM_START, BINARY_SIGNATURE, DISCOVERY_TABLE_SIGNATURE, DISCOVERY_TMR_OFFSET,
    DISCOVERY_TMR_SIZE, GC_TABLE_ID, HARVEST_TABLE_SIGNATURE, binary_header, die_header, gc_info_v1_0, gc_info_v1_2,
    gc_info_v1_3, gpu_info_header, harvest_table, ip_discovery_header,
};
use crate::error::{AmError, Result};
use crate::pci::PciDevice;
use crate::regs::generated::gc;
use crate::regs::{AmReg, AsicRegs, IpVersions};
use amd_regs::firmware::FirmwareFiles;

/// The fixed NBIO segment and `RCC_CONFIG_MEMSIZE`'s fixed address in it, which the
/// transport reads before discovery.
pub use amd_regs::regs::{NBIO_FIXED_SEG2_BASE, RCC_CONFIG_MEMSIZE};
/// The value tinygrad 0.10.1 leaves in `SCRATCH_REG7` after its boot (`am_version`):
/// a GPU that shows it was set up by the driverless transport and may boot partially.
pub const AM_VERSION: u32 = 0xA000_0002;

/// The graphics generation the transport drives, by GC's major version: the
/// register tables exist for GC 11 and GC 12 only, so a device that opened is one of
/// these.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GcGen {
    /// GC 11 (RDNA3: gfx1100), as tinygrad 0.10.1 boots it.
    Gfx11,
    /// GC 12 (RDNA4: gfx1200, gfx1201), with the differences tinygrad 0.14 and Linux
    /// 6.12 make for it.
    Gfx12,
}

impl GcGen {
    /// The generation of GC `version`.
    pub fn of(version: [u8; 3]) -> Self {
        if version[0] >= 12 { GcGen::Gfx12 } else { GcGen::Gfx11 }
    }
}

/// An IP block kind, by its discovery hardware id (`soc15_hw_ip.h`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Ip {
    /// Graphics and compute.
    Gc,
    /// Host data path.
    Hdp,
    /// SDMA engine 0.
    Sdma0,
    /// SDMA engine 1.
    Sdma1,
    /// SDMA engine 2.
    Sdma2,
    /// SDMA engine 3.
    Sdma3,
    /// Memory hub.
    Mmhub,
    /// The NBIO (NBIF) block.
    Nbio,
    /// The PSP's microprocessor.
    Mp0,
    /// The SMU's microprocessor.
    Mp1,
    /// The interrupt handler.
    Osssys,
    /// SMU I/O.
    Smuio,
    /// Video codec.
    Vcn,
    /// Data fabric.
    Df,
    /// Memory controller.
    Umc,
    /// Thermal.
    Thm,
    /// Clock A.
    Clka,
    /// ATHUB.
    Athub,
    /// Display.
    Dmu,
}

impl Ip {
    /// Every kind.
    pub const ALL: [Ip; 19] = [
        Ip::Gc,
        Ip::Hdp,
        Ip::Sdma0,
        Ip::Sdma1,
        Ip::Sdma2,
        Ip::Sdma3,
        Ip::Mmhub,
        Ip::Nbio,
        Ip::Mp0,
        Ip::Mp1,
        Ip::Osssys,
        Ip::Smuio,
        Ip::Vcn,
        Ip::Df,
        Ip::Umc,
        Ip::Thm,
        Ip::Clka,
        Ip::Athub,
        Ip::Dmu,
    ];

    /// Its hardware id in the discovery table.
    pub const fn hw_id(self) -> u16 {
        use dsc::hw_id::*;
        match self {
            Ip::Gc => GC,
            Ip::Hdp => HDP,
            Ip::Sdma0 => SDMA0,
            Ip::Sdma1 => SDMA1,
            Ip::Sdma2 => SDMA2,
            Ip::Sdma3 => SDMA3,
            Ip::Mmhub => MMHUB,
            Ip::Nbio => NBIF,
            Ip::Mp0 => MP0,
            Ip::Mp1 => MP1,
            Ip::Osssys => OSSSYS,
            Ip::Smuio => SMUIO,
            Ip::Vcn => VCN,
            Ip::Df => DF,
            Ip::Umc => UMC,
            Ip::Thm => THM,
            Ip::Clka => CLKA,
            Ip::Athub => ATHUB,
            Ip::Dmu => DMU,
        }
    }

    /// The kind with hardware id `hw_id`, if the transport knows it.
    pub fn from_hw_id(hw_id: u16) -> Option<Ip> {
        Ip::ALL.into_iter().find(|ip| ip.hw_id() == hw_id)
    }

    /// Its name as amdgpu spells the `*_HWIP`.
    pub const fn name(self) -> &'static str {
        match self {
            Ip::Gc => "GC",
            Ip::Hdp => "HDP",
            Ip::Sdma0 => "SDMA0",
            Ip::Sdma1 => "SDMA1",
            Ip::Sdma2 => "SDMA2",
            Ip::Sdma3 => "SDMA3",
            Ip::Mmhub => "MMHUB",
            Ip::Nbio => "NBIO",
            Ip::Mp0 => "MP0",
            Ip::Mp1 => "MP1",
            Ip::Osssys => "OSSSYS",
            Ip::Smuio => "SMUIO",
            Ip::Vcn => "VCN",
            Ip::Df => "DF",
            Ip::Umc => "UMC",
            Ip::Thm => "THM",
            Ip::Clka => "CLKA",
            Ip::Athub => "ATHUB",
            Ip::Dmu => "DMU",
        }
    }
}

/// One IP block instance of the discovery table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IpBlock {
    /// The die it is on.
    pub die: u16,
    /// Hardware id ([`dsc::hw_id`]).
    pub hw_id: u16,
    /// Instance number.
    pub instance: u8,
    /// Major, minor, revision.
    pub version: (u8, u8, u8),
    /// Register segment bases, in dwords of the register BAR.
    pub bases: Vec<u32>,
}

/// The GC info table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GcInfo {
    /// Table version (major, minor): 1.0 to 1.3.
    pub version: (u16, u16),
    /// The fields every 1.x version has.
    pub v1_0: gc_info_v1_0,
    /// The fields up to 1.2, for version 1.2 and later.
    pub v1_2: Option<gc_info_v1_2>,
    /// The whole table, for version 1.3.
    pub v1_3: Option<gc_info_v1_3>,
}

/// What the discovery binary says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Discovery {
    /// The IP discovery table's version.
    pub table_version: u16,
    /// Every IP block instance, in table order.
    pub blocks: Vec<IpBlock>,
    /// The GC info table.
    pub gc: GcInfo,
    /// Harvested (fused-off) instances: (hardware id, instance).
    pub harvest: Vec<(u16, u8)>,
}

/// Reads a `T` at byte `off` of `bin`, or says what did not fit.
fn at<T: FromBytes>(bin: &[u8], off: usize, what: &str) -> std::result::Result<T, String> {
    bin.get(off..)
        .and_then(|b| T::read_from_prefix(b).ok())
        .map(|(t, _)| t)
        .ok_or_else(|| {
            format!(
                "{what} at byte {off:#x} ({} bytes) runs past the end of the binary ({:#x} bytes)",
                size_of::<T>(),
                bin.len()
            )
        })
}

fn slice<'a>(bin: &'a [u8], off: usize, len: usize, what: &str) -> std::result::Result<&'a [u8], String> {
    off.checked_add(len).and_then(|end| bin.get(off..end)).ok_or_else(|| {
        format!(
            "{what} at byte {off:#x} ({len:#x} bytes) runs past the end of the binary ({:#x} bytes)",
            bin.len()
        )
    })
}

fn check_sum(data: &[u8], want: u16, what: &str) -> std::result::Result<(), String> {
    let got = dsc::checksum(data);
    if got == want {
        Ok(())
    } else {
        Err(format!("{what} checksum is {got:#06x}, the header says {want:#06x}"))
    }
}

/// Checks the identifying field (`field`, the first) of the table `what` at byte `off`.
fn check_id(what: &str, off: usize, field: &str, got: u32, want: u32) -> std::result::Result<(), String> {
    if got == want {
        Ok(())
    } else {
        Err(format!(
            "{what} at {off:#x}: {field} {got:#010x}, expected {want:#010x}"
        ))
    }
}

impl Discovery {
    /// Parses the discovery binary (at least its `binary_size` bytes; more is
    /// ignored). Every error says which table and byte offset is wrong.
    pub fn parse(bin: &[u8]) -> std::result::Result<Self, String> {
        let bh: binary_header = at(bin, 0, "binary header")?;
        if bh.binary_signature != BINARY_SIGNATURE {
            return Err(format!(
                "binary signature {:#010x}, expected {BINARY_SIGNATURE:#010x}",
                bh.binary_signature
            ));
        }
        let size = usize::from(bh.binary_size);
        if size < size_of::<binary_header>() {
            return Err(format!("binary_size {size:#x} is smaller than the binary header"));
        }
        let bin = slice(bin, 0, size, "binary (binary_size)")?;
        check_sum(&bin[BINARY_CHECKSUM_START..], bh.binary_checksum, "binary")?;

        // IP discovery table.
        let ti = bh.table_list[dsc::IP_DISCOVERY];
        let ip_off = usize::from(ti.offset);
        let ih: ip_discovery_header = at(bin, ip_off, "IP discovery header")?;
        check_id(
            "IP discovery table",
            ip_off,
            "signature",
            ih.signature,
            DISCOVERY_TABLE_SIGNATURE,
        )?;
        if !(1..=4).contains(&ih.version) {
            return Err(format!("IP discovery table version {} is not 1 to 4", ih.version));
        }
        let table = slice(bin, ip_off, usize::from(ih.size), "IP discovery table")?;
        check_sum(table, ti.checksum, "IP discovery table")?;
        let wide = ih.version >= 4 && ih.flags & 1 != 0;
        let dies = usize::from(ih.num_dies);
        if dies == 0 || dies > ih.die_info.len() {
            return Err(format!("IP discovery table: {dies} dies (1 to 16 expected)"));
        }
        let mut blocks = Vec::new();
        for d in &ih.die_info[..dies] {
            let mut off = usize::from(d.die_offset);
            let dh: die_header = at(bin, off, "die header")?;
            off += size_of::<die_header>();
            for n in 0..dh.num_ips {
                let e: dsc::ip = at(bin, off, &format!("die {} IP entry {n}", dh.die_id))?;
                off += size_of::<dsc::ip>();
                let count = usize::from(e.num_base_address);
                let mut bases = Vec::with_capacity(count);
                for k in 0..count {
                    let what = format!("die {} IP entry {n} (hw_id {}) base {k}", dh.die_id, e.hw_id);
                    let base = if wide {
                        let b: u64 = at(bin, off, &what)?;
                        off += 8;
                        u32::try_from(b).map_err(|_| format!("{what}: {b:#x} does not fit in 32 bits"))?
                    } else {
                        let b: u32 = at(bin, off, &what)?;
                        off += 4;
                        b
                    };
                    bases.push(base);
                }
                blocks.push(IpBlock {
                    die: dh.die_id,
                    hw_id: e.hw_id,
                    instance: e.instance_number,
                    version: (e.major, e.minor, e.revision),
                    bases,
                });
            }
        }

        // GC info table.
        let tg = bh.table_list[dsc::GC];
        let gc_off = usize::from(tg.offset);
        let gh: gpu_info_header = at(bin, gc_off, "GC info header")?;
        check_id("GC info table", gc_off, "id", gh.table_id, GC_TABLE_ID)?;
        let gc_size = usize::try_from(gh.size).map_err(|_| "GC info size does not fit".to_string())?;
        let gtable = slice(bin, gc_off, gc_size, "GC info table")?;
        check_sum(gtable, tg.checksum, "GC info table")?;
        // 1.3 (GC 12) adds cache sizes after 1.2's fields; 2.x (GC 9.4.3) lays
        // the table out differently and is not read.
        let need = match (gh.version_major, gh.version_minor) {
            (1, 0) => size_of::<gc_info_v1_0>(),
            (1, 1) => size_of::<gc_info_v1_0>() + 12,
            (1, 2) => size_of::<gc_info_v1_2>(),
            (1, 3) => size_of::<gc_info_v1_3>(),
            (a, b) => return Err(format!("GC info version {a}.{b} is not supported (1.0 to 1.3 are)")),
        };
        if gc_size < need {
            return Err(format!(
                "GC info v{}.{} is {gc_size:#x} bytes, its fields need {need:#x}",
                gh.version_major, gh.version_minor
            ));
        }
        let gc = GcInfo {
            version: (gh.version_major, gh.version_minor),
            v1_0: at(gtable, 0, "GC info v1.0")?,
            v1_2: (gh.version_minor >= 2)
                .then(|| at(gtable, 0, "GC info v1.2"))
                .transpose()?,
            v1_3: (gh.version_minor >= 3)
                .then(|| at(gtable, 0, "GC info v1.3"))
                .transpose()?,
        };

        // Harvest table (optional: offset 0 means none).
        let th = bh.table_list[dsc::HARVEST_INFO];
        let mut harvest = Vec::new();
        if th.offset != 0 {
            let hv_off = usize::from(th.offset);
            let ht: harvest_table = at(bin, hv_off, "harvest table")?;
            check_id(
                "harvest table",
                hv_off,
                "signature",
                ht.header.signature,
                HARVEST_TABLE_SIGNATURE,
            )?;
            check_sum(
                slice(bin, hv_off, size_of::<harvest_table>(), "harvest table")?,
                th.checksum,
                "harvest table",
            )?;
            harvest = ht
                .list
                .iter()
                .take_while(|h| h.hw_id != 0)
                .map(|h| (h.hw_id, h.number_instance))
                .collect();
        }
        Ok(Discovery {
            table_version: ih.version,
            blocks,
            gc,
            harvest,
        })
    }

    /// The first entry of `ip`, instance `instance`.
    pub fn block(&self, ip: Ip, instance: u8) -> Option<&IpBlock> {
        self.blocks
            .iter()
            .find(|b| b.hw_id == ip.hw_id() && b.instance == instance)
    }

    /// The versions of the blocks the transport has register tables for, or
    /// [`AmError::MissingIp`] naming the first one the table lacks.
    pub fn ip_versions(&self) -> Result<IpVersions> {
        let v = |ip: Ip| {
            self.block(ip, 0)
                .map(|b| [b.version.0, b.version.1, b.version.2])
                .ok_or(AmError::MissingIp {
                    ip: ip.name(),
                    instance: 0,
                    seg: None,
                })
        };
        Ok(IpVersions {
            gc: v(Ip::Gc)?,
            mmhub: v(Ip::Mmhub)?,
            osssys: v(Ip::Osssys)?,
            nbio: v(Ip::Nbio)?,
            mp0: v(Ip::Mp0)?,
            mp1: v(Ip::Mp1)?,
        })
    }

    /// `ip`'s version, as tinygrad 0.10.1's `ip_versions` holds it
    /// (`major * 10000 + minor * 100 + revision`: GC 11.0.0 is 110000).
    pub fn ip_version(&self, ip: Ip) -> Option<u32> {
        self.block(ip, 0)
            .map(|b| u32::from(b.version.0) * 10000 + u32::from(b.version.1) * 100 + u32::from(b.version.2))
    }
}

/// A register resolved to its dword address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reg {
    /// Its name (without `reg`).
    pub name: &'static str,
    /// Its IP block.
    pub ip: Ip,
    /// Dword address in the register space.
    pub addr: u32,
}

/// The value of field `mask` (a generated `…_MASK`) in `value`.
pub const fn field(value: u32, mask: u32) -> u32 {
    match (value & mask).checked_shr(mask.trailing_zeros()) {
        Some(v) => v,
        None => 0,
    }
}

/// `value` with field `mask` set to `field` (bits of `field` past the mask dropped).
pub const fn with_field(value: u32, mask: u32, field: u32) -> u32 {
    let shifted = match field.checked_shl(mask.trailing_zeros()) {
        Some(v) => v,
        None => 0,
    };
    (value & !mask) | (shifted & mask)
}

/// Registers by IP block and instance, through [`Mmio`].
#[derive(Clone)]
pub struct Registers {
    mmio: Arc<dyn Mmio>,
    discovery: Arc<Discovery>,
    tables: AsicRegs,
    versions: IpVersions,
    indirect: Option<(u32, u32)>,
}

impl std::fmt::Debug for Registers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registers")
            .field("size_dwords", &self.mmio.size_dwords())
            .field("indirect", &self.indirect)
            .finish()
    }
}

impl Registers {
    /// Registers of `mmio` placed by `discovery`, named by the tables of the IP
    /// versions it gives; [`AmError::MissingIp`] if it lacks a block the transport
    /// drives, [`AmError::UnsupportedIp`] if no table covers a block's version.
    pub fn new(mmio: Arc<dyn Mmio>, discovery: Arc<Discovery>) -> Result<Self> {
        let versions = discovery.ip_versions()?;
        let tables = AsicRegs::for_versions(&versions).map_err(|e| AmError::UnsupportedIp {
            ip: e.ip,
            version: e.version,
        })?;
        let nbio_bases = discovery.block(Ip::Nbio, 0).map(|b| b.bases.clone());
        let indirect = nbio_bases.and_then(|b| {
            Some((
                tables.nbio.BIF_BX_PF0_RSMU_INDEX.addr(&b)?,
                tables.nbio.BIF_BX_PF0_RSMU_DATA.addr(&b)?,
            ))
        });
        Ok(Registers {
            mmio,
            discovery,
            tables,
            versions,
            indirect,
        })
    }

    /// The register tables of this GPU's IP versions.
    pub fn tables(&self) -> &AsicRegs {
        &self.tables
    }

    /// The IP versions the discovery table gives.
    pub fn versions(&self) -> &IpVersions {
        &self.versions
    }

    /// The graphics generation.
    pub fn gc_gen(&self) -> GcGen {
        GcGen::of(self.versions.gc)
    }

    /// The discovery table the addresses come from.
    pub fn discovery(&self) -> &Discovery {
        &self.discovery
    }

    /// The register BAR.
    pub fn mmio(&self) -> &Arc<dyn Mmio> {
        &self.mmio
    }

    /// `reg` of `ip` instance `instance`: its address from the discovery base of its
    /// segment. An error if the block or segment is missing, the sum overflows, or
    /// the address is past the BAR and cannot be reached indirectly.
    pub fn resolve(&self, ip: Ip, instance: u8, reg: AmReg) -> Result<Reg> {
        let b = self.discovery.block(ip, instance).ok_or(AmError::MissingIp {
            ip: ip.name(),
            instance,
            seg: None,
        })?;
        let base = *b.bases.get(usize::from(reg.seg)).ok_or(AmError::MissingIp {
            ip: ip.name(),
            instance,
            seg: Some(reg.seg),
        })?;
        let addr = base.checked_add(reg.offset).ok_or(AmError::RegisterAddress {
            name: reg.name,
            ip: ip.name(),
            base,
            offset: reg.offset,
        })?;
        if addr >= self.mmio.size_dwords() && (self.indirect.is_none() || addr.checked_mul(4).is_none()) {
            return Err(AmError::RegisterAddress {
                name: reg.name,
                ip: ip.name(),
                base,
                offset: reg.offset,
            });
        }
        Ok(Reg {
            name: reg.name,
            ip,
            addr,
        })
    }

    /// Reads a resolved register (past the BAR: through `RSMU_INDEX`/`RSMU_DATA`, as
    /// tinygrad 0.10.1's `indirect_rreg`).
    pub fn read(&self, r: Reg) -> u32 {
        match self.indirect_pair(r.addr) {
            Some((index, data, byte)) => {
                self.mmio.write32(index, byte);
                self.mmio.read32(data)
            }
            None => self.mmio.read32(r.addr),
        }
    }

    /// Writes a resolved register.
    pub fn write(&self, r: Reg, value: u32) {
        match self.indirect_pair(r.addr) {
            Some((index, data, byte)) => {
                self.mmio.write32(index, byte);
                self.mmio.write32(data, value);
            }
            None => self.mmio.write32(r.addr, value),
        }
    }

    fn indirect_pair(&self, addr: u32) -> Option<(u32, u32, u32)> {
        if addr < self.mmio.size_dwords() {
            return None;
        }
        let (i, d) = self.indirect?;
        Some((i, d, addr.checked_mul(4)?))
    }

    /// tinygrad 0.10.1's `wait_reg`: polls `r` every millisecond until `r & mask ==
    /// value`, for at most `timeout`; the value read, or [`AmError::Timeout`] naming
    /// `step`.
    pub fn wait(&self, step: &'static str, r: Reg, mask: u32, value: u32, timeout: std::time::Duration) -> Result<u32> {
        let start = std::time::Instant::now();
        loop {
            let v = self.read(r);
            if v & mask == value {
                return Ok(v);
            }
            if start.elapsed() >= timeout {
                return Err(AmError::Timeout {
                    step,
                    reg: r.name,
                    mask,
                    value,
                    last: v,
                    timeout_ms: u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX),
                });
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }

    /// Read-modify-write of `r` (tinygrad's `update`): each `(mask, value)` field
    /// set in turn.
    pub fn update(&self, r: Reg, fields: &[(u32, u32)]) {
        let v = fields.iter().fold(self.read(r), |v, &(m, f)| with_field(v, m, f));
        self.write(r, v);
    }

    /// Resolves and reads `reg` of `ip` instance 0.
    pub fn read_reg(&self, ip: Ip, reg: AmReg) -> Result<u32> {
        Ok(self.read(self.resolve(ip, 0, reg)?))
    }

    /// Resolves and writes `reg` of `ip` instance 0.
    pub fn write_reg(&self, ip: Ip, reg: AmReg, value: u32) -> Result<()> {
        self.write(self.resolve(ip, 0, reg)?, value);
        Ok(())
    }
}

/// What the identification registers say at bring-up, read as tinygrad 0.10.1's
/// `AMDev.__init__` reads them before it decides how to boot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BootState {
    /// `SCRATCH_REG7`: [`AM_VERSION`] after a boot by this transport.
    pub scratch_reg7: u32,
    /// `CP_MEC_RS64_CNTL.MEC_HALT`: the compute micro-engine is halted.
    pub mec_halted: bool,
    /// `MP0_SMN_C2PMSG_81` non-zero: the PSP's secure OS runs.
    pub sos_alive: bool,
    /// `MP1_SMN_C2PMSG_90`: the SMU's last response (non-zero once it answered).
    pub smu_response: u32,
}

impl BootState {
    /// Whether tinygrad 0.10.1 would boot partially (only GFX and SDMA): the GPU was
    /// set up by this transport (`SCRATCH_REG7`) and its MEC is halted; `reset`
    /// (`AM_RESET=1`) forces a full boot.
    pub fn partial_boot(&self, reset: bool) -> bool {
        self.scratch_reg7 == AM_VERSION && self.mec_halted && !reset
    }
}

/// A taken GPU with its IP blocks found: VRAM size, discovery, registers.
#[derive(Debug)]
pub struct AmDevice {
    pci: PciDevice,
    vram_size: u64,
    discovery: Arc<Discovery>,
    regs: Registers,
}

impl AmDevice {
    /// Reads the VRAM size and the discovery binary of `pci` and builds its
    /// register access.
    pub fn new(pci: PciDevice) -> Result<Self> {
        let mmio = pci.registers();
        let mib = mmio.read32(RCC_CONFIG_MEMSIZE);
        let vram_size = u64::from(mib) << 20;
        let at = vram_size
            .checked_sub(DISCOVERY_TMR_OFFSET)
            .ok_or(AmError::VramTooSmall {
                vram_size,
                min: DISCOVERY_TMR_OFFSET,
                what: "the IP discovery binary 64 KiB below its top",
            })?;
        let mut bin = vec![0u8; DISCOVERY_TMR_SIZE];
        if !pci.vram().read(at, &mut bin) {
            return Err(AmError::PastBar {
                what: "the IP discovery binary",
                offset: at,
                len: DISCOVERY_TMR_SIZE as u64,
                bar_size: pci.vram().len() as u64,
                vram_size,
            });
        }
        let discovery = Arc::new(Discovery::parse(&bin).map_err(|msg| AmError::Discovery { vram_offset: at, msg })?);
        let regs = Registers::new(mmio, discovery.clone())?;
        Ok(AmDevice {
            pci,
            vram_size,
            discovery,
            regs,
        })
    }

    /// The PCI side.
    pub fn pci(&self) -> &PciDevice {
        &self.pci
    }

    /// VRAM size in bytes.
    pub fn vram_size(&self) -> u64 {
        self.vram_size
    }

    /// [`AmError::PastBar`] for `len` bytes of `what` at VRAM offset `offset`.
    pub(crate) fn past_bar(&self, what: &'static str, offset: u64, len: u64) -> AmError {
        AmError::PastBar {
            what,
            offset,
            len,
            bar_size: self.pci.vram().len() as u64,
            vram_size: self.vram_size,
        }
    }

    /// The discovery table.
    pub fn discovery(&self) -> &Discovery {
        &self.discovery
    }

    /// Register access.
    pub fn regs(&self) -> &Registers {
        &self.regs
    }

    /// The firmware files this GPU needs, named from its MP0, MP1, SDMA 0 and GC
    /// versions; [`AmError::MissingIp`] without an SDMA 0 block.
    pub fn firmware_files(&self) -> Result<FirmwareFiles> {
        let v = self.regs.versions();
        let sdma = self.discovery.block(Ip::Sdma0, 0).ok_or(AmError::MissingIp {
            ip: Ip::Sdma0.name(),
            instance: 0,
            seg: None,
        })?;
        let (a, b, c) = sdma.version;
        Ok(FirmwareFiles::for_versions(v.mp0, v.mp1, [a, b, c], v.gc))
    }

    /// Reads the identification registers tinygrad 0.10.1 reads at bring-up.
    pub fn boot_state(&self) -> Result<BootState> {
        let (r, t) = (&self.regs, self.regs.tables());
        Ok(BootState {
            scratch_reg7: r.read_reg(Ip::Gc, t.gc.SCRATCH_REG7)?,
            mec_halted: field(
                r.read_reg(Ip::Gc, t.gc.CP_MEC_RS64_CNTL)?,
                gc::CP_MEC_RS64_CNTL__MEC_HALT_MASK,
            ) != 0,
            sos_alive: r.read_reg(Ip::Mp0, t.mp0.MP0_SMN_C2PMSG_81)? != 0,
            smu_response: r.read_reg(Ip::Mp1, t.mp1.MP1_SMN_C2PMSG_90)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields() {
        assert_eq!(field(0xabcd_1234, 0x0000_ff00), 0x12);
        assert_eq!(field(u32::MAX, 0), 0);
        assert_eq!(with_field(0xffff_ffff, 0x0000_ff00, 0x1ab), 0xffff_abff);
        assert_eq!(with_field(7, 0, 1), 7);
        assert_eq!(RCC_CONFIG_MEMSIZE, 0xde3, "tinygrad 0.10.1's mmRCC_CONFIG_MEMSIZE");
    }

    #[test]
    fn ip_ids_round_trip() {
        for ip in Ip::ALL {
            assert_eq!(Ip::from_hw_id(ip.hw_id()), Some(ip));
        }
        assert_eq!(Ip::from_hw_id(0), None);
    }
}
