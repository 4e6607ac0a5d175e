//! `cargo xtask fuzz-seeds`: writes small seed corpora for the cargo-fuzz targets into
//! `fuzz/corpus/<target>/` (not committed): the committed code objects, their
//! instruction bytes, encoded PM4 and SDMA streams, `properties` files, and the mock
//! PCI GPU's synthetic firmware files and IP discovery table.

use std::path::{Path, PathBuf};

use amd_packets::GfxTarget;
use amd_packets::pm4::recipes::{self, Dispatch, Signal};
use amd_packets::pm4::{DispatchInitiator, EventType, EventWrite, IndirectBuffer, Nop, ReleaseMem, WaitRegMem};
use amd_packets::sdma::{ConstFill, CopyLinear, Fence, GcrReq, Indirect, PollRegmem, SdmaNop, Timestamp, Trap};

use crate::{Result, kernels, workspace_root};

/// The address of byte `offset` of `mock_rings`'s buffer, as markers it relocates
/// (`fuzz/src/lib.rs`: `0xb0f0xxxx` is the low half plus xxxx, `0x0000b0f1` the high
/// half).
const fn buf(offset: u16) -> u64 {
    (0xb0f1 << 32) | (0xb0f0_0000 | offset as u64)
}

/// The same for the VRAM buffer the mock's sanitizer watches (`0xb0f2xxxx`,
/// `0x0000b0f3`).
const fn vram(offset: u16) -> u64 {
    (0xb0f3 << 32) | (0xb0f2_0000 | offset as u64)
}

/// A gfx1100's `properties` (the mock's 7900 XTX, abridged) and a gfx1030's.
const PROPERTIES: [(&str, &str); 2] = [
    (
        "gfx1100",
        "cpu_cores_count 0\nsimd_count 192\nmax_waves_per_simd 16\nlds_size_in_kb 64\nwave_front_size 32\n\
         array_count 12\nsimd_arrays_per_engine 2\ncu_per_simd_array 8\nsimd_per_cu 2\nmax_slots_scratch_cu 32\n\
         gfx_target_version 110000\nvendor_id 4098\ndevice_id 29772\nlocation_id 34304\ndomain 0\n\
         drm_render_minor 128\nnum_sdma_engines 2\nnum_sdma_xgmi_engines 0\nnum_sdma_queues_per_engine 6\n\
         num_cp_queues 8\nmax_engine_clk_fcompute 2482\nunique_id 11673270660693242239\nnum_xcc 1\n",
    ),
    (
        "gfx1030",
        "simd_count 160\nmax_waves_per_simd 16\nlds_size_in_kb 64\narray_count 8\nsimd_arrays_per_engine 2\n\
         simd_per_cu 2\nmax_slots_scratch_cu 32\ngfx_target_version 100300\ndrm_render_minor 129\n",
    ),
];

fn pm4_stream(t: GfxTarget) -> Result<Vec<u32>> {
    let mut b = Vec::new();
    recipes::memory_barrier(t, &mut b);
    ReleaseMem::timestamp(buf(0x10)).encode(t, &mut b);
    Signal {
        address: buf(0),
        value: 1,
        event: None,
    }
    .encode(t, &mut b);
    WaitRegMem::memory_ge(buf(0), 1).encode(t, &mut b);
    EventWrite::new(EventType::new(4)?, 4).encode(t, &mut b);
    let user = [0xb0f0_0100, 0xb0f1];
    Dispatch {
        code_addr: buf(0x1000),
        rsrc1: 0x40af_0080,
        rsrc2: 0x9e,
        rsrc3: 0,
        tmpring_size: 0,
        scratch_base: 0,
        user_data: &user,
        block: [32, 1, 1],
        grid: [1, 1, 1],
        initiator: DispatchInitiator::DEFAULT,
    }
    .encode(t, &mut b)?;
    IndirectBuffer::new(buf(0x200), 4)?.encode(t, &mut b);
    // Into the VRAM the sanitizer watches.
    ReleaseMem::timestamp(vram(0x20)).encode(t, &mut b);
    Nop::new(3)?.encode(t, &mut b);
    Ok(b)
}

fn sdma_stream(t: GfxTarget) -> Result<Vec<u32>> {
    let mut b = Vec::new();
    CopyLinear::new(buf(0x200), buf(0x100), 64)?.encode(t, &mut b);
    ConstFill::new(buf(0x300), 0xdead_beef, 64)?.encode(t, &mut b);
    // Into and out of the VRAM the sanitizer watches (its shadow moves with copies).
    CopyLinear::new(vram(0x100), buf(0x100), 64)?.encode(t, &mut b);
    ConstFill::new(vram(0x200), 7, 32)?.encode(t, &mut b);
    CopyLinear::new(buf(0x500), vram(0x0f0), 64)?.encode(t, &mut b);
    Fence::new_on(t, buf(0), 1).encode(t, &mut b);
    Trap::new(0)?.encode(t, &mut b);
    PollRegmem::memory_ge(buf(0), 1).encode(t, &mut b);
    Timestamp::new(buf(0x10))?.encode(t, &mut b);
    // SDMA 4 (gfx9) has no GCR_REQ.
    if !t.is_gfx9() {
        GcrReq::all(0).encode(t, &mut b);
    }
    SdmaNop::new(Indirect::padding_at(b.len()).max(1))?.encode(t, &mut b);
    Indirect::new(buf(0x400), 8)?.encode(t, &mut b);
    SdmaNop::new(2)?.encode(t, &mut b);
    Ok(b)
}

fn bytes(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// The `.text` section of an ELF64 little-endian file, if it has one.
fn text_section(elf: &[u8]) -> Option<&[u8]> {
    let u16_at = |o: usize| Some(u16::from_le_bytes(elf.get(o..o + 2)?.try_into().ok()?));
    let u32_at = |o: usize| Some(u32::from_le_bytes(elf.get(o..o + 4)?.try_into().ok()?));
    let u64_at = |o: usize| Some(u64::from_le_bytes(elf.get(o..o + 8)?.try_into().ok()?));
    let shoff = usize::try_from(u64_at(0x28)?).ok()?;
    let (entsize, count, strndx) = (u16_at(0x3a)? as usize, u16_at(0x3c)? as usize, u16_at(0x3e)? as usize);
    let header = |i: usize| shoff.checked_add(i.checked_mul(entsize)?);
    let strtab = usize::try_from(u64_at(header(strndx)? + 0x18)?).ok()?;
    (0..count).find_map(|i| {
        let h = header(i)?;
        let name_at = strtab.checked_add(u32_at(h)? as usize)?;
        let name = elf.get(name_at..)?.split(|&c| c == 0).next()?;
        if name != b".text" {
            return None;
        }
        let (off, size) = (
            usize::try_from(u64_at(h + 0x18)?).ok()?,
            usize::try_from(u64_at(h + 0x20)?).ok()?,
        );
        elf.get(off..off.checked_add(size)?)
    })
}

/// The `am_firmware` selector byte of the parser for firmware file `name` (as
/// tinygrad 0.10.1 names them).
fn firmware_selector(name: &str) -> Option<u8> {
    let kinds: [(&str, u8); 8] = [
        ("_sos.", 0),
        ("smu_", 1),
        ("sdma_", 2),
        ("_pfp.", 3),
        ("_me.", 3),
        ("_mec.", 4),
        ("_imu.", 5),
        ("_rlc.", 6),
    ];
    kinds.iter().find(|(part, _)| name.contains(part)).map(|&(_, k)| k)
}

fn write(dir: &Path, name: &str, data: &[u8]) -> Result<()> {
    std::fs::create_dir_all(dir)?;
    std::fs::write(dir.join(name), data)?;
    Ok(())
}

/// Writes the starting inputs; prints how many files each target got.
pub fn run(_args: &[String]) -> Result<()> {
    let corpus: PathBuf = workspace_root().join("fuzz/corpus");
    let dir = |target: &str| corpus.join(target);
    let mut counts = std::collections::BTreeMap::<&str, usize>::new();
    let mut put = |target: &'static str, name: &str, data: &[u8]| -> Result<()> {
        write(&dir(target), name, data)?;
        *counts.entry(target).or_default() += 1;
        Ok(())
    };

    // gfx1100's code objects, then gfx1201's (mock_kernels' control bit 7, and a
    // name of their own in the other corpora).
    for (folder, gfx1201) in [("", 0u8), ("gfx1201", 0x80)] {
        let mut objects: Vec<PathBuf> = std::fs::read_dir(kernels::target_dir(folder))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "hsaco"))
            .collect();
        objects.sort();
        for path in &objects {
            let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("kernel");
            let name = if folder.is_empty() {
                stem.to_string()
            } else {
                format!("{folder}_{stem}")
            };
            let elf = std::fs::read(path)?;
            put("code_object", &name, &elf)?;
            let text = text_section(&elf).ok_or_else(|| format!("{}: no .text section", path.display()))?;
            put("isa_decode", &name, text)?;
            // The control byte picks the RSRC2 of the level it was built at.
            let ctl = if stem.ends_with("_O0") { 1u8 } else { 0 } | gfx1201;
            let mut k = vec![ctl];
            k.extend_from_slice(text);
            put("mock_kernels", &name, &k)?;
        }
    }

    for t in GfxTarget::ALL {
        let (pm4, sdma) = (pm4_stream(t)?, sdma_stream(t)?);
        put("pm4_decode", &format!("stream_{t:?}"), &bytes(&pm4))?;
        put("sdma_decode", &format!("stream_{t:?}"), &bytes(&sdma))?;
        // mock_rings: [control, compute dwords (u16)] + compute stream + SDMA stream.
        // The GPU the stream was encoded for, in the control byte's bits 0..2.
        let gpu = match t {
            GfxTarget::Gfx103 => 1u8,
            GfxTarget::Gfx12 => 2,
            GfxTarget::Gfx94 => 3,
            _ => 0,
        };
        for (pad, tag) in [(0u8, "start"), (60, "wrapping")] {
            let mut seed = vec![gpu | (pad << 2)];
            seed.extend_from_slice(&(pm4.len() as u16).to_le_bytes());
            seed.extend(bytes(&pm4));
            seed.extend(bytes(&sdma));
            put("mock_rings", &format!("{t:?}_{tag}"), &seed)?;
        }
    }

    // mock_aql: a PM4-IB packet (its buffer at 0x1000 of the buffer, its completion
    // signal at 0x20c0), a barrier-AND on the signal at 0x2000, a dispatch of the
    // kernel the target puts at 0x3000 with its arguments at 0x4000, a barrier-value;
    // for gfx1100 and (control byte 1) gfx1201.
    for (t, ctl) in [(GfxTarget::Gfx11, 0u8), (GfxTarget::Gfx12, 1)] {
        use amd_packets::aql::{
            self, Barrier, BarrierValue, Condition, FenceScope, Header, KernelDispatch, PacketType, Pm4Ib,
        };
        let h = |ty| Header::new(ty).barrier().fences(FenceScope::System);
        let mut w: Vec<u32> = Vec::new();
        w.extend(Pm4Ib::new(h(PacketType::VendorSpecific), buf(0x1000), 8, buf(0x20c0))?.to_dwords(t));
        w.extend(
            Barrier {
                header: h(PacketType::BarrierAnd),
                dep_signals: [buf(0x2000), 0, 0, 0, 0],
                completion_signal: buf(0x2040),
            }
            .to_dwords(),
        );
        w.extend(
            KernelDispatch {
                header: h(PacketType::KernelDispatch),
                dimensions: 1,
                workgroup_size: [64, 1, 1],
                grid_size: [256, 1, 1],
                private_segment_size: 0,
                group_segment_size: 0,
                kernel_object: buf(0x3000),
                kernarg_address: buf(0x4000),
                completion_signal: buf(0x2080),
            }
            .to_dwords(),
        );
        w.extend(
            BarrierValue {
                header: h(PacketType::VendorSpecific),
                signal: buf(0x2080),
                value: 0,
                mask: -1,
                cond: Condition::Lt,
                completion_signal: 0,
            }
            .to_dwords(),
        );
        debug_assert_eq!(w.len() % aql::PACKET_DWORDS, 0);
        let mut seed = vec![ctl];
        seed.extend(bytes(&w));
        put("mock_aql", &format!("packets_{t:?}"), &seed)?;
    }

    for (name, text) in PROPERTIES {
        put("sysfs_properties", name, text.as_bytes())?;
    }

    // The mock PCI GPU's synthetic firmware, each file behind the selector byte of its
    // parser (see `fuzz_targets/am_firmware.rs`), and its IP discovery table.
    for (name, body) in amd_mockgpu::pci::firmware::files() {
        let Some(which) = firmware_selector(name) else {
            return Err(format!("no am_firmware parser for the mock's {name}").into());
        };
        let mut seed = vec![which];
        seed.extend_from_slice(&body);
        put("am_firmware", name, &seed)?;
    }
    let table = amd_mockgpu::pci::Discovery::navi31()
        .to_bytes()
        .ok_or("the mock's discovery table does not fit its format")?;
    put("am_discovery", "navi31", &table)?;

    for (target, n) in counts {
        println!("fuzz-seeds: {n} file(s) in fuzz/corpus/{target}");
    }
    Ok(())
}
