//! The PSP (MP0 13.0.0), HDP flush and indirect register access of the mock PCI GPU,
//! driven at register level through `Sys::mmio` in the order tinygrad 0.10.1's
//! `AM_PSP.init` uses them, with firmware images built from the `amdgpu_ucode.h`
//! header layouts (and the installed firmware where present): every image type
//! loads given the right bytes, and a wrong cut of each is a failed load.

mod common;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use amd_kfd::sys::Sys;
use amd_mockgpu::pci::RegisterFile;
use amd_mockgpu::pci::firmware::{DIR, IMAGES, blob, sos_file};
use amd_mockgpu::pci::model::FB_LOCATION_BASE;
use amd_mockgpu::pci::psp::{
    Psp, READY, STATUS_BAD_IMAGE, STATUS_BAD_PARAMETER, STATUS_NO_FIRMWARE, STATUS_NOT_READY, TMR_SIZE,
};
use amd_mockgpu::pci::regs::generated::{gc, mp, nbio, psp};
use amd_mockgpu::{MockConfig, MockSys, PciFault};
use amd_regs::discovery::hw_id;
use common::{MIB, Regs};

const VRAM: u64 = 512 * MIB;
/// The boot allocator's region (VRAM − 64 MiB), as tinygrad 0.10.1 places its buffers.
const BOOT: u64 = VRAM - 64 * MIB;
const MSG1: u64 = BOOT;
const CMD: u64 = BOOT + MIB;
const FENCE: u64 = CMD + 0x1000;
const RING: u64 = FENCE + 0x1000;
const RING_SIZE: u32 = 0x10000;
const TMR: u64 = BOOT + 2 * MIB;

struct Gpu {
    m: MockSys,
    r: Regs,
    file: Arc<RegisterFile>,
}

impl Gpu {
    fn new() -> Self {
        Self::with(MockConfig::pci(1))
    }
    fn with(config: MockConfig) -> Self {
        let m = MockSys::new(config);
        let r = Regs::map(&m);
        let file = m.pci_registers(0).unwrap();
        Gpu { m, r, file }
    }
    fn mc(&self, paddr: u64) -> u64 {
        (u64::from(FB_LOCATION_BASE) << 24) + paddr
    }
    fn vram_u32(&self, off: u64) -> u32 {
        let mut b = [0; 4];
        assert!(self.m.pci_read_vram(0, off, &mut b));
        u32::from_le_bytes(b)
    }
    fn psp<T>(&self, f: impl FnOnce(&mut Psp) -> T) -> T {
        self.file.with_block::<Psp, T>(f).unwrap()
    }
    /// `_bootloader_load_component`: wait for the bootloader, stage (`_prep_msg1`:
    /// the 1 MiB buffer zeroed, then the data), write the address and the command;
    /// the status the bootloader answers.
    fn bl_load(&self, comp: u32, data: &[u8]) -> u32 {
        assert_eq!(
            self.r.rd(hw_id::MP0, mp::V13_0_0.MP0_SMN_C2PMSG_35) & READY,
            READY,
            "bootloader ready"
        );
        let mut buf = vec![0u8; MIB as usize];
        buf[..data.len()].copy_from_slice(data);
        assert!(self.m.pci_write_vram(0, MSG1, &buf));
        self.r
            .wr(hw_id::NBIF, nbio::V4_3_0.BIF_BX_PF0_GPU_HDP_FLUSH_REQ, u32::MAX);
        self.r
            .wr(hw_id::MP0, mp::V13_0_0.MP0_SMN_C2PMSG_36, (self.mc(MSG1) >> 20) as u32);
        self.r.wr(hw_id::MP0, mp::V13_0_0.MP0_SMN_C2PMSG_35, comp);
        let r = self.r.rd(hw_id::MP0, mp::V13_0_0.MP0_SMN_C2PMSG_35);
        assert_eq!(r & READY, READY);
        r & !READY
    }
    fn ring_create(&self) -> u32 {
        self.r
            .wr(hw_id::MP0, mp::V13_0_0.MP0_SMN_C2PMSG_69, self.mc(RING) as u32);
        self.r
            .wr(hw_id::MP0, mp::V13_0_0.MP0_SMN_C2PMSG_70, (self.mc(RING) >> 32) as u32);
        self.r.wr(hw_id::MP0, mp::V13_0_0.MP0_SMN_C2PMSG_71, RING_SIZE);
        self.r
            .wr(hw_id::MP0, mp::V13_0_0.MP0_SMN_C2PMSG_64, psp::PSP_RING_TYPE__KM << 16);
        self.r.rd(hw_id::MP0, mp::V13_0_0.MP0_SMN_C2PMSG_64)
    }
    /// `_ring_submit` of a command whose union dwords are `args`: (status, fence
    /// seen, tmr_size answered).
    fn submit(&self, cmd_id: u32, args: &[u32]) -> (u32, u32, u32) {
        let cmd = amd_am::psp::command(cmd_id, args);
        assert!(self.m.pci_write_vram(0, CMD, &cmd));
        let wptr = self.r.rd(hw_id::MP0, mp::V13_0_0.MP0_SMN_C2PMSG_67);
        let bytes = amd_am::psp::ring_frame(self.mc(CMD), self.mc(FENCE), wptr);
        assert!(self.m.pci_write_vram(0, RING + u64::from(wptr) * 4, &bytes));
        self.r.wr(hw_id::MP0, mp::V13_0_0.MP0_SMN_C2PMSG_67, wptr + 16);
        (self.vram_u32(CMD + 864), self.vram_u32(FENCE), self.vram_u32(CMD + 880))
    }
    /// LOAD_TOC of `toc`: (status, tmr_size answered).
    fn load_toc(&self, toc: &[u8]) -> (u32, u32) {
        assert!(self.m.pci_write_vram(0, MSG1, toc));
        let mc = self.mc(MSG1);
        let (st, _, tmr) = self.submit(
            psp::GFX_CMD_ID_LOAD_TOC,
            &[mc as u32, (mc >> 32) as u32, toc.len() as u32],
        );
        (st, tmr)
    }
    fn setup_tmr(&self) -> u32 {
        let t = self.mc(TMR);
        self.submit(
            psp::GFX_CMD_ID_SETUP_TMR,
            &[t as u32, (t >> 32) as u32, TMR_SIZE, 2, TMR as u32, (TMR >> 32) as u32],
        )
        .0
    }
    /// LOAD_IP_FW of `image`, its length as the size.
    fn load(&self, fw_type: u32, image: &[u8]) -> u32 {
        self.load_ip_fw(fw_type, image, image.len() as u32)
    }
    fn load_ip_fw(&self, fw_type: u32, image: &[u8], size: u32) -> u32 {
        assert!(self.m.pci_write_vram(0, MSG1, image));
        let mc = self.mc(MSG1);
        self.submit(
            psp::GFX_CMD_ID_LOAD_IP_FW,
            &[mc as u32, (mc >> 32) as u32, size, fw_type],
        )
        .0
    }
}

/// `struct common_firmware_header` (amdgpu_ucode.h), 32 bytes.
fn common_header(size: u32, ucode_size: u32, ucode_off: u32, major: u16) -> Vec<u8> {
    let mut h = Vec::new();
    for v in [size, 32] {
        h.extend_from_slice(&v.to_le_bytes());
    }
    h.extend_from_slice(&major.to_le_bytes()); // header_version_major
    h.extend_from_slice(&0u16.to_le_bytes()); // header_version_minor
    h.extend_from_slice(&0u16.to_le_bytes()); // ip_version_major
    h.extend_from_slice(&0u16.to_le_bytes()); // ip_version_minor
    // ucode_version, ucode_size_bytes, ucode_array_offset_bytes, crc32
    for v in [0u32, ucode_size, ucode_off, 0] {
        h.extend_from_slice(&v.to_le_bytes());
    }
    h
}

/// A `psp_firmware_header_v2_0` sOS image with the given components (`PSP_FW_TYPE_*`,
/// bytes), as `psp_13_0_0_sos.bin` is laid out.
fn sos_image(parts: &[(u32, Vec<u8>)]) -> Vec<u8> {
    let desc_bytes = 4 * 4;
    let ucode_off = (32 + 4 + desc_bytes * parts.len()) as u32;
    let total: usize = parts.iter().map(|p| p.1.len()).sum();
    let mut img = common_header(ucode_off + total as u32, total as u32, ucode_off, 2);
    img.extend_from_slice(&(parts.len() as u32).to_le_bytes());
    let mut off = 0u32;
    for (ty, data) in parts {
        // psp_fw_bin_desc: fw_type, fw_version, offset_bytes, size_bytes
        for v in [*ty, 1, off, data.len() as u32] {
            img.extend_from_slice(&v.to_le_bytes());
        }
        off += data.len() as u32;
    }
    for (_, data) in parts {
        img.extend_from_slice(data);
    }
    img
}

/// The components of a v2.0 sOS image, as tinygrad 0.10.1's `AMFirmware` reads them;
/// `None` if a field points outside the blob.
fn sos_components(file: &[u8]) -> Option<Vec<(u32, Vec<u8>)>> {
    let u = |o: usize| Some(u32::from_le_bytes(file.get(o..o + 4)?.try_into().ok()?));
    if u16::from_le_bytes(file.get(8..10)?.try_into().ok()?) != 2 {
        return None;
    }
    let ucode_off = u(24)? as usize;
    let count = u(32)? as usize;
    let mut out = Vec::new();
    for i in 0..count.min(64) {
        let d = 36 + i * 16;
        let start = ucode_off.checked_add(u(d + 8)? as usize)?;
        let end = start.checked_add(u(d + 12)? as usize)?;
        out.push((u(d)?, file.get(start..end)?.to_vec()));
    }
    Some(out)
}

const SOS_ORDER: [(u32, u32); 8] = [
    (psp::PSP_FW_TYPE_PSP_KDB, psp::PSP_BL__LOAD_KEY_DATABASE),
    (psp::PSP_FW_TYPE_PSP_KDB, psp::PSP_BL__LOAD_TOS_SPL_TABLE),
    (psp::PSP_FW_TYPE_PSP_SYS_DRV, psp::PSP_BL__LOAD_SYSDRV),
    (psp::PSP_FW_TYPE_PSP_SOC_DRV, psp::PSP_BL__LOAD_SOCDRV),
    (psp::PSP_FW_TYPE_PSP_INTF_DRV, psp::PSP_BL__LOAD_INTFDRV),
    (psp::PSP_FW_TYPE_PSP_DBG_DRV, psp::PSP_BL__LOAD_DBGDRV),
    (psp::PSP_FW_TYPE_PSP_RAS_DRV, psp::PSP_BL__LOAD_RASDRV),
    (psp::PSP_FW_TYPE_PSP_SOS, psp::PSP_BL__LOAD_SOSDRV),
];

fn boot_sos(g: &Gpu, comps: &[(u32, Vec<u8>)]) {
    for (fw, comp) in SOS_ORDER {
        if let Some((_, data)) = comps.iter().find(|c| c.0 == fw) {
            assert_eq!(g.bl_load(comp, data), 0, "component {comp:#x}");
        }
    }
}

/// The sOS components of the synthetic `psp_13_0_0_sos.bin` the mock serves, read by
/// this file's own parser.
fn synthetic_sos() -> Vec<(u32, Vec<u8>)> {
    sos_components(&sos_file(0)).expect("a valid v2.0 header")
}

/// The synthetic sOS file's component of type `fw_type` (`PSP_FW_TYPE_PSP_*`).
fn synthetic_sos_part(fw_type: u32) -> Vec<u8> {
    synthetic_sos().into_iter().find(|c| c.0 == fw_type).unwrap().1
}

/// Every image of the synthetic files, by `GFX_FW_TYPE_*`, in tinygrad 0.10.1's order.
fn synthetic_images() -> Vec<(u32, Vec<u8>)> {
    IMAGES.iter().map(|&(t, tag, n)| (t, blob(tag, n))).collect()
}

/// A GPU with the sOS running, the ring created, the TOC loaded; and the TMR set up
/// after the SMU firmware if `tmr`.
fn ready(g: &Gpu, tmr: bool) {
    boot_sos(g, &synthetic_sos());
    assert_eq!(g.ring_create() & 0x8000_ffff, READY);
    let toc = &synthetic_sos_part(psp::PSP_FW_TYPE_PSP_TOC);
    assert_eq!(g.load_toc(toc), (0, TMR_SIZE));
    if tmr {
        assert_eq!(g.load(psp::GFX_FW_TYPE_SMU, &blob(20, 0x300)), 0);
        assert_eq!(g.setup_tmr(), 0);
    }
}

#[test]
fn sos_boot_ring_and_firmware_loads() {
    let g = Gpu::new();
    assert_eq!(
        g.r.rd(hw_id::MP0, mp::V13_0_0.MP0_SMN_C2PMSG_81),
        0,
        "no sOS after power-on"
    );
    let comps = synthetic_sos();
    boot_sos(&g, &comps);
    assert_ne!(g.r.rd(hw_id::MP0, mp::V13_0_0.MP0_SMN_C2PMSG_81), 0, "sOS alive");
    let bl = g.psp(|p| p.bootloader.clone());
    assert_eq!(
        bl.iter().map(|b| b.command).collect::<Vec<_>>(),
        SOS_ORDER.map(|(_, c)| c),
        "every component the synthetic sOS file has"
    );
    assert!(bl.iter().all(|b| b.status == 0 && b.vram_offset == MSG1));

    // Ring: the sOS is ready, the ring is created.
    assert_eq!(g.r.rd(hw_id::MP0, mp::V13_0_0.MP0_SMN_C2PMSG_64) & READY, READY);
    assert_eq!(g.ring_create() & 0x8000_ffff, READY);

    // TOC, then SMU firmware, TMR, the rest, RLC autoload.
    let toc = &comps.iter().find(|c| c.0 == psp::PSP_FW_TYPE_PSP_TOC).unwrap().1;
    assert!(g.m.pci_write_vram(0, MSG1, toc));
    let mc = g.mc(MSG1);
    let (st, fence, tmr) = g.submit(
        psp::GFX_CMD_ID_LOAD_TOC,
        &[mc as u32, (mc >> 32) as u32, toc.len() as u32],
    );
    assert_eq!((st, fence, tmr), (0, 0, TMR_SIZE));

    let rlc = blob(66, 0x100);
    assert_eq!(g.load(psp::GFX_FW_TYPE_RLC_G, &rlc), STATUS_NOT_READY, "before the TMR");
    let smu = blob(20, 0x300);
    assert_eq!(g.load(psp::GFX_FW_TYPE_SMU, &smu), 0);
    let t = g.mc(TMR);
    let (st, fence, _) = g.submit(
        psp::GFX_CMD_ID_SETUP_TMR,
        &[t as u32, (t >> 32) as u32, TMR_SIZE, 2, TMR as u32, (TMR >> 32) as u32],
    );
    assert_eq!(st, 0);
    assert_eq!(
        fence,
        3 * 16,
        "the fence carries the frame's write pointer (fourth frame)"
    );
    assert_eq!(g.load(psp::GFX_FW_TYPE_RLC_G, &rlc), 0);
    // Hostile commands: a wrong type, a zero size, an image past VRAM.
    assert_eq!(g.load(psp::GFX_FW_TYPE_MAX, &rlc), STATUS_BAD_PARAMETER);
    assert_eq!(g.load(psp::GFX_FW_TYPE_NONE, &rlc), STATUS_BAD_PARAMETER);
    assert_eq!(
        g.load_ip_fw(psp::GFX_FW_TYPE_SDMA_UCODE_TH0, &rlc, 0),
        STATUS_BAD_PARAMETER
    );
    assert_eq!(
        g.load_ip_fw(psp::GFX_FW_TYPE_SDMA_UCODE_TH0, &rlc, u32::MAX),
        STATUS_BAD_PARAMETER
    );
    assert_eq!(g.submit(0x7777, &[]).0, psp::PSP_ERR_UNKNOWN_COMMAND);

    assert_eq!(g.r.rd(hw_id::GC, gc::V11_0_0.RLC_RLCS_BOOTLOAD_STATUS), 0);
    assert_eq!(g.submit(psp::GFX_CMD_ID_AUTOLOAD_RLC, &[]).0, 0);
    assert_eq!(
        g.r.rd(hw_id::GC, gc::V11_0_0.RLC_RLCS_BOOTLOAD_STATUS) & gc::RLC_RLCS_BOOTLOAD_STATUS__BOOTLOAD_COMPLETE_MASK,
        gc::RLC_RLCS_BOOTLOAD_STATUS__BOOTLOAD_COMPLETE_MASK
    );
    let fw = g.psp(|p| p.firmware.clone());
    assert_eq!(
        fw.iter().map(|f| (f.fw_type, f.data.len())).collect::<Vec<_>>(),
        [(psp::GFX_FW_TYPE_SMU, 0x300), (psp::GFX_FW_TYPE_RLC_G, 0x100)]
    );
    assert_eq!(fw[0].data, smu);
    assert!(g.psp(|p| p.rlc_autoloaded));

    // Destroy and re-create, as a second boot does when C2PMSG_71 is set.
    assert_ne!(g.r.rd(hw_id::MP0, mp::V13_0_0.MP0_SMN_C2PMSG_71), 0);
    g.r.wr(
        hw_id::MP0,
        mp::V13_0_0.MP0_SMN_C2PMSG_64,
        psp::GFX_CTRL_CMD_ID_DESTROY_RINGS,
    );
    assert_eq!(g.r.rd(hw_id::MP0, mp::V13_0_0.MP0_SMN_C2PMSG_64), READY);
    assert_eq!(g.ring_create() & 0x8000_ffff, READY);
    assert_eq!(
        g.submit(psp::GFX_CMD_ID_AUTOLOAD_RLC, &[]),
        (0, 0, 0),
        "a fresh ring starts at 0"
    );
}

#[test]
fn every_image_type_loads_with_the_right_bytes() {
    let g = Gpu::new();
    ready(&g, false);
    let images = synthetic_images();
    // The catalogue holds exactly these types: a type loaded by tinygrad 0.10.1 and
    // missing here would be refused.
    let mut types: Vec<u32> = images.iter().map(|i| i.0).collect();
    types.sort();
    types.dedup();
    assert_eq!(g.m.pci_firmware().image_types(), types);
    for (i, (t, img)) in images.iter().enumerate() {
        assert_eq!(g.load(*t, img), 0, "type {t:#x}");
        if i == 0 {
            assert_eq!(g.setup_tmr(), 0);
        }
    }
    let fw = g.psp(|p| p.firmware.clone());
    assert_eq!(
        fw.into_iter().map(|f| (f.fw_type, f.data)).collect::<Vec<_>>(),
        images,
        "every image counted as loaded, with its bytes"
    );
}

/// Where `part` lies in `file`.
fn find(file: &[u8], part: &[u8]) -> usize {
    file.windows(part.len())
        .position(|w| w == part)
        .expect("the image is in its file")
}

/// Wrong versions of `image` (a part of `file` of type `t`), each named: a byte
/// changed at the start and at the end, one byte short, one byte long, shifted by
/// one byte in the file, with the file's header still attached, and another type's
/// bytes (`other`).
fn wrong_cuts(file: &[u8], image: &[u8], other: &[u8]) -> Vec<(&'static str, Vec<u8>)> {
    let at = find(file, image);
    let n = image.len();
    let mut first = image.to_vec();
    first[0] ^= 1;
    let mut last = image.to_vec();
    last[n - 1] ^= 0x80;
    let mut long = image.to_vec();
    long.push(file.get(at + n).copied().unwrap_or(0));
    let shifted = file
        .get(at + 1..at + 1 + n)
        .map_or_else(|| image[1..].to_vec(), <[u8]>::to_vec);
    vec![
        ("first byte changed", first),
        ("last byte changed", last),
        ("one byte short", image[..n - 1].to_vec()),
        ("one byte long", long),
        ("shifted by one byte", shifted),
        ("header still attached", file[..at + n].to_vec()),
        ("another type's bytes", other.to_vec()),
    ]
}

/// The synthetic file holding `image`.
fn file_of(image: &[u8]) -> Vec<u8> {
    amd_mockgpu::pci::firmware::files()
        .into_iter()
        .map(|(_, b)| b)
        .find(|b| b.windows(image.len()).any(|w| w == image))
        .expect("a file holds the image")
}

#[test]
fn wrong_cuts_of_every_image_fail_and_load_nothing() {
    let g = Gpu::new();
    ready(&g, true);
    let before = g.psp(|p| (p.firmware.len(), p.commands.len()));
    let images = synthetic_images();
    let mut tried = 0;
    for (i, (t, img)) in images.iter().enumerate() {
        let other = images
            .iter()
            .cycle()
            .skip(i + 1)
            .find(|o| o.1 != *img)
            .map(|o| o.1.clone())
            .unwrap();
        for (what, bad) in wrong_cuts(&file_of(img), img, &other) {
            assert_ne!(&bad, img, "{what}");
            assert_eq!(g.load(*t, &bad), STATUS_BAD_IMAGE, "type {t:#x}: {what}");
            tried += 1;
        }
    }
    // A type no served file holds.
    assert_eq!(g.load(psp::GFX_FW_TYPE_CP_MES, &blob(1, 0x100)), STATUS_NO_FIRMWARE);
    let (loaded, cmds) = g.psp(|p| (p.firmware.len(), p.commands.clone()));
    assert_eq!(loaded, before.0, "nothing counted as loaded");
    assert_eq!(cmds.len(), before.1 + tried + 1);
    assert!(cmds[before.1..].iter().all(|c| c.status != 0));
    // The RLC firmware never arrived, so RLC autoload is refused.
    assert_eq!(g.submit(psp::GFX_CMD_ID_AUTOLOAD_RLC, &[]).0, STATUS_NOT_READY);
}

#[test]
fn the_toc_is_checked() {
    let g = Gpu::new();
    boot_sos(&g, &synthetic_sos());
    assert_eq!(g.ring_create() & 0x8000_ffff, READY);
    let sos = sos_file(0);
    let comps = synthetic_sos();
    let toc = &comps.iter().find(|c| c.0 == psp::PSP_FW_TYPE_PSP_TOC).unwrap().1;
    let kdb = &comps.iter().find(|c| c.0 == psp::PSP_FW_TYPE_PSP_KDB).unwrap().1;
    for (what, bad) in wrong_cuts(&sos, toc, kdb) {
        assert_eq!(g.load_toc(&bad), (STATUS_BAD_IMAGE, 0), "{what}");
    }
    assert_eq!(g.load_toc(toc), (0, TMR_SIZE));
}

#[test]
fn the_bootloader_checks_each_component() {
    let g = Gpu::new();
    let comps = synthetic_sos();
    let sos = sos_file(0);
    let comp = |t: u32| comps.iter().find(|c| c.0 == t).unwrap().1.clone();
    let last = || g.psp(|p| p.bootloader.last().map(|b| (b.command, b.status)));
    for (i, &(t, cmd)) in SOS_ORDER.iter().enumerate() {
        let right = comp(t);
        // Another component: the first of a type the command does not take.
        let takes = if cmd == psp::PSP_BL__LOAD_TOS_SPL_TABLE {
            [psp::PSP_FW_TYPE_PSP_KDB, psp::PSP_FW_TYPE_PSP_SPL]
        } else {
            [t, t]
        };
        let other = &comps.iter().find(|c| !takes.contains(&c.0)).unwrap().1;
        // The bootloader is given no size: a component one byte short is caught
        // only where its last byte is not 0 (true of every synthetic one).
        assert_ne!(right.last(), Some(&0));
        for (what, bad) in wrong_cuts(&sos, &right, other) {
            // Given no size, the bootloader cannot tell trailing zeros (here the gap
            // before the next component) from the zeroed buffer.
            if bad.starts_with(&right) && bad[right.len()..].iter().all(|&b| b == 0) {
                continue;
            }
            assert_eq!(g.bl_load(cmd, &bad), STATUS_BAD_IMAGE, "{cmd:#x}: {what}");
            assert_eq!(last(), Some((cmd, STATUS_BAD_IMAGE)));
        }
        // The buffer not zeroed behind the component.
        let mut junk = right.clone();
        junk.extend_from_slice(&[0, 0, 7]);
        assert_eq!(g.bl_load(cmd, &junk), STATUS_BAD_IMAGE, "{cmd:#x}: junk after it");
        assert_eq!(g.r.rd(hw_id::MP0, mp::V13_0_0.MP0_SMN_C2PMSG_81), 0, "no sOS yet");
        assert_eq!(g.bl_load(cmd, &right), 0, "{cmd:#x}");
        if i == 0 {
            // The SPL table is the SPL (amdgpu) or the key database (tinygrad 0.10.1
            // on MP0 13.0.0).
            let spl = comp(psp::PSP_FW_TYPE_PSP_SPL);
            assert_eq!(g.bl_load(psp::PSP_BL__LOAD_TOS_SPL_TABLE, &spl), 0);
        }
    }
    assert_ne!(g.r.rd(hw_id::MP0, mp::V13_0_0.MP0_SMN_C2PMSG_81), 0, "the sOS runs");
}

/// A temporary directory holding `files`, unique to `name`.
fn dir_with(name: &str, files: &[(&str, Vec<u8>)]) -> PathBuf {
    let d = std::env::temp_dir().join(format!("mockgpu-psp-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    for (n, b) in files {
        std::fs::write(d.join(n), b).unwrap();
    }
    d
}

#[test]
fn a_firmware_directory_replaces_the_synthetic_files() {
    // An sOS file built here from the header layout, with no debug driver, and no
    // other file.
    let parts = vec![
        (psp::PSP_FW_TYPE_PSP_SYS_DRV, vec![0x11; 256]),
        (psp::PSP_FW_TYPE_PSP_SOS, vec![0x22; 512]),
        (psp::PSP_FW_TYPE_PSP_KDB, vec![0x33; 64]),
        (psp::PSP_FW_TYPE_PSP_TOC, vec![0x44; 128]),
    ];
    let file = sos_image(&parts);
    let dir = dir_with("sos-only", &[("psp_13_0_0_sos.bin", file.clone())]);
    let g = Gpu::with(MockConfig::pci(1).pci_firmware_dir(&dir));
    let cat = g.m.pci_firmware();
    assert_eq!(cat.problems().len(), 7, "{:?}", cat.problems());
    assert!(cat.problems().iter().any(|p| p.starts_with("smu_13_0_0.bin: ")));
    // Served under the mock's firmware directory instead of the synthetic files.
    let served = g.m.read_file(&Path::new(DIR).join("psp_13_0_0_sos.bin")).unwrap();
    assert_eq!(served, file);
    assert!(!g.m.exists(&Path::new(DIR).join("smu_13_0_0.bin")));

    assert_eq!(g.bl_load(psp::PSP_BL__LOAD_DBGDRV, &[0x55; 64]), STATUS_NO_FIRMWARE);
    // The synthetic sOS's components are not this file's.
    let kdb = &synthetic_sos_part(psp::PSP_FW_TYPE_PSP_KDB);
    assert_eq!(g.bl_load(psp::PSP_BL__LOAD_KEY_DATABASE, kdb), STATUS_BAD_IMAGE);
    boot_sos(&g, &parts);
    assert_ne!(g.r.rd(hw_id::MP0, mp::V13_0_0.MP0_SMN_C2PMSG_81), 0);
    assert_eq!(g.ring_create() & 0x8000_ffff, READY);
    assert_eq!(g.load_toc(&[0x44; 128]), (0, TMR_SIZE));
    // No SMU file: its firmware is refused as unknown.
    assert_eq!(g.load(psp::GFX_FW_TYPE_SMU, &blob(20, 0x300)), STATUS_NO_FIRMWARE);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
#[should_panic(expected = "the PCI configuration is invalid: firmware directory /nonexistent/amdgpu")]
fn a_firmware_directory_that_cannot_be_read_is_refused() {
    let _ = MockSys::new(MockConfig::pci(1).pci_firmware_dir("/nonexistent/amdgpu"));
}

#[test]
fn bootloader_refuses_bad_loads() {
    let g = Gpu::new();
    // The sOS before its system driver, an unknown command, a buffer past VRAM.
    let sos = &synthetic_sos_part(psp::PSP_FW_TYPE_PSP_SOS);
    assert_eq!(g.bl_load(psp::PSP_BL__LOAD_SOSDRV, sos), STATUS_NOT_READY);
    assert_eq!(g.bl_load(0x1234, &[1; 64]), psp::PSP_ERR_UNKNOWN_COMMAND);
    g.r.wr(hw_id::MP0, mp::V13_0_0.MP0_SMN_C2PMSG_36, u32::MAX);
    g.r.wr(hw_id::MP0, mp::V13_0_0.MP0_SMN_C2PMSG_35, psp::PSP_BL__LOAD_SYSDRV);
    assert_eq!(
        g.r.rd(hw_id::MP0, mp::V13_0_0.MP0_SMN_C2PMSG_35),
        READY | STATUS_BAD_PARAMETER
    );
    assert_eq!(g.r.rd(hw_id::MP0, mp::V13_0_0.MP0_SMN_C2PMSG_81), 0, "no sOS");
    // Without a sOS nobody answers the ring registers.
    assert_eq!(g.ring_create(), psp::PSP_RING_TYPE__KM << 16);
    // A ring write pointer with no ring, or hostile pointers, never panics.
    g.r.wr(hw_id::MP0, mp::V13_0_0.MP0_SMN_C2PMSG_67, 0xffff_fff0);
    boot_sos(&g, &synthetic_sos());
    // Any load once the sOS runs.
    let sys = &synthetic_sos_part(psp::PSP_FW_TYPE_PSP_SYS_DRV);
    assert_eq!(g.bl_load(psp::PSP_BL__LOAD_SYSDRV, sys), STATUS_BAD_PARAMETER);
    // A ring outside VRAM or of a bad size.
    g.r.wr(hw_id::MP0, mp::V13_0_0.MP0_SMN_C2PMSG_69, u32::MAX);
    g.r.wr(hw_id::MP0, mp::V13_0_0.MP0_SMN_C2PMSG_70, u32::MAX);
    g.r.wr(hw_id::MP0, mp::V13_0_0.MP0_SMN_C2PMSG_64, psp::PSP_RING_TYPE__KM << 16);
    assert_eq!(
        g.r.rd(hw_id::MP0, mp::V13_0_0.MP0_SMN_C2PMSG_64),
        READY | STATUS_BAD_PARAMETER
    );
    assert_eq!(g.ring_create() & 0xffff, 0);
    // Ring frames of garbage: answered or skipped, never a panic.
    assert!(g.m.pci_write_vram(0, RING, &vec![0xff; RING_SIZE as usize]));
    g.r.wr(hw_id::MP0, mp::V13_0_0.MP0_SMN_C2PMSG_67, RING_SIZE / 4 - 16);
    g.r.wr(hw_id::MP0, mp::V13_0_0.MP0_SMN_C2PMSG_67, 17);
    assert!(g.psp(|p| p.firmware.is_empty()));
}

#[test]
fn hdp_flush_and_indirect_access() {
    let g = Gpu::new();
    g.r.wr(hw_id::NBIF, nbio::V4_3_0.BIF_BX_PF0_GPU_HDP_FLUSH_REQ, 1 << 5);
    assert_eq!(g.r.rd(hw_id::NBIF, nbio::V4_3_0.BIF_BX_PF0_GPU_HDP_FLUSH_DONE), 1 << 5);

    // RSMU index/data: a byte address selects any register, past the BAR included.
    let index = g.r.addr(hw_id::NBIF, nbio::V4_3_0.BIF_BX_PF0_RSMU_INDEX);
    let data = g.r.addr(hw_id::NBIF, nbio::V4_3_0.BIF_BX_PF0_RSMU_DATA);
    let memsize = g.r.addr(hw_id::NBIF, nbio::V4_3_0.RCC_DEV0_EPF0_RCC_CONFIG_MEMSIZE);
    g.r.mmio.write32(index, memsize * 4);
    assert_eq!(g.r.mmio.read32(data), 512);
    let far = 0x0240_2c00 + 0x10; // GC segment 3, past the 1 MiB BAR
    assert!(far >= g.r.mmio.size_dwords());
    g.r.mmio.write32(index, far * 4);
    g.r.mmio.write32(data, 0xabcd);
    assert_eq!(g.r.mmio.read32(data), 0xabcd);
    // The same model: an SMU message through the pair is answered.
    let smu_resp = g.r.addr(hw_id::MP1, mp::V13_0_0.MP1_SMN_C2PMSG_90);
    g.r.mmio
        .write32(index, g.r.addr(hw_id::MP1, mp::V13_0_0.MP1_SMN_C2PMSG_82) * 4);
    g.r.mmio.write32(data, 41);
    g.r.mmio
        .write32(index, g.r.addr(hw_id::MP1, mp::V13_0_0.MP1_SMN_C2PMSG_66) * 4);
    g.r.mmio
        .write32(data, amd_mockgpu::pci::regs::generated::smu::PPSMC_MSG_TestMessage);
    assert_eq!(g.r.mmio.read32(smu_resp), 1);
    assert_eq!(g.r.rd(hw_id::MP1, mp::V13_0_0.MP1_SMN_C2PMSG_82), 42);
    // Unknown registers read their reset value; an index past everything reads 0.
    g.r.mmio.write32(index, u32::MAX);
    assert_eq!(g.r.mmio.read32(data), 0);
}

/// The installed firmware, where Debian's `firmware-amd-graphics` is present: the
/// mock's catalogue cuts every type from it, the sOS boots from components this file
/// reads itself, every image loads, and wrong cuts of each fail.
#[test]
fn installed_firmware_is_catalogued_and_checked() {
    let installed = amd_mockgpu::pci::catalogue::installed_dir();
    let Ok(dir) = installed.inspect_err(|why| eprintln!("skipped: {why}")) else {
        return;
    };
    let g = Gpu::with(MockConfig::pci(1).pci_firmware_dir(&dir));
    assert_eq!(g.m.pci_firmware().problems(), &[] as &[String]);
    // The 7900 XTX's files (the directory may hold a gfx1201's too).
    let cat =
        g.m.pci_firmware()
            .subset(&amd_regs::firmware::FirmwareFiles::navi31().all());
    assert_eq!(cat.problems(), &[] as &[String]);
    let mut types: Vec<u32> = IMAGES.iter().map(|i| i.0).collect();
    types.sort();
    assert_eq!(cat.image_types(), types, "every type tinygrad 0.10.1 loads");

    let sos = std::fs::read(dir.join("psp_13_0_0_sos.bin")).unwrap();
    let comps = sos_components(&sos).expect("a v2.0 sOS header");
    boot_sos(&g, &comps);
    assert_ne!(g.r.rd(hw_id::MP0, mp::V13_0_0.MP0_SMN_C2PMSG_81), 0);
    assert!(g.psp(|p| p.bootloader.iter().all(|b| b.status == 0)));
    assert_eq!(g.ring_create() & 0x8000_ffff, READY);
    let toc = &comps.iter().find(|c| c.0 == psp::PSP_FW_TYPE_PSP_TOC).unwrap().1;
    assert_eq!(g.load_toc(toc), (0, TMR_SIZE));
    let images: Vec<(u32, Vec<u8>)> = IMAGES.iter().map(|&(t, _, _)| (t, cat.images(t)[0].to_vec())).collect();
    for (i, (t, img)) in images.iter().enumerate() {
        assert_eq!(g.load(*t, img), 0, "type {t:#x}");
        if i == 0 {
            assert_eq!(g.setup_tmr(), 0);
        }
    }
    // Wrong cuts of the real images.
    let files: Vec<Vec<u8>> = cat.files().map(|(_, b)| b.to_vec()).collect();
    for (i, (t, img)) in images.iter().enumerate() {
        let file = files
            .iter()
            .find(|f| f.windows(img.len()).any(|w| w == img.as_slice()))
            .unwrap();
        let other = &images[(i + 1) % images.len()].1;
        for (what, bad) in wrong_cuts(file, img, other) {
            if bad != *img && !cat.images(*t).contains(&bad.as_slice()) {
                assert_eq!(g.load(*t, &bad), STATUS_BAD_IMAGE, "type {t:#x}: {what}");
            }
        }
    }
    assert_eq!(g.psp(|p| p.firmware.len()), images.len());
}

/// Random values in every PSP, SMU and NBIO register the model knows, over random
/// ring and command memory: statuses or silence, never a panic.
#[test]
fn random_register_values_never_panic() {
    let g = Gpu::new();
    boot_sos(&g, &synthetic_sos());
    let mut next = common::xorshift64(0x9e37_79b9_7f4a_7c15);
    let garbage: Vec<u8> = (0..RING_SIZE as usize + 0x2000)
        .map(|i| (i as u8).wrapping_mul(37))
        .collect();
    assert!(g.m.pci_write_vram(0, CMD, &garbage));
    let targets = [
        (hw_id::MP0, mp::V13_0_0.MP0_SMN_C2PMSG_35),
        (hw_id::MP0, mp::V13_0_0.MP0_SMN_C2PMSG_36),
        (hw_id::MP0, mp::V13_0_0.MP0_SMN_C2PMSG_64),
        (hw_id::MP0, mp::V13_0_0.MP0_SMN_C2PMSG_67),
        (hw_id::MP0, mp::V13_0_0.MP0_SMN_C2PMSG_69),
        (hw_id::MP0, mp::V13_0_0.MP0_SMN_C2PMSG_70),
        (hw_id::MP0, mp::V13_0_0.MP0_SMN_C2PMSG_71),
        (hw_id::MP0, mp::V13_0_0.MP0_SMN_C2PMSG_81),
        (hw_id::MP1, mp::V13_0_0.MP1_SMN_C2PMSG_66),
        (hw_id::MP1, mp::V13_0_0.MP1_SMN_C2PMSG_82),
        (hw_id::NBIF, nbio::V4_3_0.BIF_BX_PF0_RSMU_INDEX),
        (hw_id::NBIF, nbio::V4_3_0.BIF_BX_PF0_RSMU_DATA),
        (hw_id::NBIF, nbio::V4_3_0.BIF_BX_PF0_GPU_HDP_FLUSH_REQ),
    ];
    for i in 0..20_000u32 {
        let r = next();
        let (hw, reg) = targets[(r % targets.len() as u64) as usize];
        let v = match i % 4 {
            // Mostly plausible values so the ring is created and walked.
            0 => (r >> 32) as u32,
            1 if reg == mp::V13_0_0.MP0_SMN_C2PMSG_71 => RING_SIZE,
            1 if reg == mp::V13_0_0.MP0_SMN_C2PMSG_69 => g.mc(RING) as u32,
            1 if reg == mp::V13_0_0.MP0_SMN_C2PMSG_70 => (g.mc(RING) >> 32) as u32,
            1 if reg == mp::V13_0_0.MP0_SMN_C2PMSG_64 => psp::PSP_RING_TYPE__KM << 16,
            _ => ((r >> 40) as u32) & 0xfff0,
        };
        g.r.wr(hw, reg, v);
        let _ = g.r.rd(hw, reg);
    }
}

#[test]
fn an_injected_command_failure_is_answered_with_its_status() {
    let g = Gpu::new();
    boot_sos(&g, &synthetic_sos());
    assert_eq!(g.ring_create() & 0x8000_ffff, READY);
    let fail = psp::TEE_ERROR_CANCEL & psp::GFX_CMD_STATUS_MASK;
    assert!(g.m.pci_inject(
        0,
        PciFault::PspCommand {
            cmd_id: Some(psp::GFX_CMD_ID_SETUP_TMR),
            status: fail,
        }
    ));
    // Another command is not the one injected: it runs.
    assert_eq!(g.load(psp::GFX_FW_TYPE_SMU, &blob(20, 0x300)), 0);
    let t = g.mc(TMR);
    let tmr = [t as u32, (t >> 32) as u32, TMR_SIZE, 2, TMR as u32, (TMR >> 32) as u32];
    let (st, fence, _) = g.submit(psp::GFX_CMD_ID_SETUP_TMR, &tmr);
    assert_eq!(
        (st, fence),
        (fail, 16),
        "the status in the response, the fence as usual"
    );
    // Not executed: there is no TMR, so an IP firmware is refused for it.
    let rlc = blob(66, 0x100);
    assert_eq!(g.load(psp::GFX_FW_TYPE_RLC_G, &rlc), STATUS_NOT_READY);
    // One shot: the retry succeeds.
    assert_eq!(g.submit(psp::GFX_CMD_ID_SETUP_TMR, &tmr).0, 0);
    assert_eq!(g.load(psp::GFX_FW_TYPE_RLC_G, &rlc), 0);
    let cmds = g.psp(|p| p.commands.clone());
    assert_eq!(
        cmds.iter().map(|c| (c.cmd_id, c.status)).collect::<Vec<_>>(),
        [
            (psp::GFX_CMD_ID_LOAD_IP_FW, 0),
            (psp::GFX_CMD_ID_SETUP_TMR, fail),
            (psp::GFX_CMD_ID_LOAD_IP_FW, STATUS_NOT_READY),
            (psp::GFX_CMD_ID_SETUP_TMR, 0),
            (psp::GFX_CMD_ID_LOAD_IP_FW, 0),
        ]
    );
    // Any command, then cleared before it fires.
    assert!(g.m.pci_inject(
        0,
        PciFault::PspCommand {
            cmd_id: None,
            status: fail
        }
    ));
    assert!(g.m.clear_injections());
    assert_eq!(g.submit(psp::GFX_CMD_ID_AUTOLOAD_RLC, &[]).0, 0);
}
