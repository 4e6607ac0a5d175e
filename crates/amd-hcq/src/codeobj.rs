//! Reading an AMDGPU code object (`.hsaco`, an ELF shared object): the loadable image,
//! its relocations, a kernel's descriptor (`<name>.kd`) and its argument metadata
//! (`NT_AMDGPU_METADATA`, MessagePack). Input is untrusted: every offset and size is
//! checked, and malformed files are errors that say what is wrong.

use goblin::elf::Elf;
use goblin::elf::program_header::PT_LOAD;

use crate::msgpack::{self, Value};
use crate::{HcqError, Result};

/// `NT_AMDGPU_METADATA`
const NT_AMDGPU_METADATA: u32 = 32;
/// `R_AMDGPU_RELATIVE64`
const R_AMDGPU_RELATIVE64: u32 = 13;
/// Largest image accepted.
const MAX_IMAGE: u64 = 256 << 20;

fn bad(msg: impl Into<String>) -> HcqError {
    HcqError::CodeObject { msg: msg.into() }
}

/// The kernel descriptor, defined with the AQL packets whose `kernel_object` points at
/// it (the mock's command processor reads the same type).
pub use amd_packets::aql::KernelDescriptor;

/// What an argument is, from its `.value_kind`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArgKind {
    /// `global_buffer`: a buffer address (8 bytes).
    Buffer,
    /// `by_value`: a value the caller passes.
    Value,
    /// `hidden_*`: filled in by the runtime (the name without `hidden_`).
    Hidden(String),
}

/// One kernel argument from the metadata.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgInfo {
    /// `.name`, where given.
    pub name: Option<String>,
    /// `.offset` in the kernarg segment.
    pub offset: u32,
    /// `.size`.
    pub size: u32,
    /// What it is.
    pub kind: ArgKind,
    /// `.type_name` (`float`, `uint*`, …), where given.
    pub type_name: Option<String>,
    /// The scalar type `type_name` names, if it names one (read once, when the code
    /// object is parsed, not at each launch).
    pub scalar: Option<crate::ScalarType>,
}

/// One kernel of a code object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelInfo {
    /// Name.
    pub name: String,
    /// Offset of the descriptor in the image.
    pub descriptor_offset: u64,
    /// The descriptor.
    pub descriptor: KernelDescriptor,
    /// Arguments, in order.
    pub args: Vec<ArgInfo>,
    /// `.kernarg_segment_align` (16 where absent).
    pub kernarg_align: u32,
    /// `.wavefront_size` (from the descriptor where absent).
    pub wavefront_size: u32,
    /// `.max_flat_workgroup_size` (1024 where absent).
    pub max_workgroup_size: u32,
}

/// A code object read into memory.
#[derive(Debug, Clone, PartialEq)]
pub struct CodeObject {
    /// The loadable image (PT_LOAD segments at their virtual addresses).
    pub image: Vec<u8>,
    /// `R_AMDGPU_RELATIVE64` relocations: (image offset, addend), to add the load
    /// address to.
    pub relocs: Vec<(u64, i64)>,
    /// `amdhsa.target`, e.g. `amdgcn-amd-amdhsa--gfx1100`.
    pub target: Option<String>,
    /// Where the `.text` section (the kernels' code) lies in [`image`](Self::image),
    /// where the file names one inside it.
    pub text: Option<std::ops::Range<usize>>,
    metadata: Option<Value>,
    symbols: Vec<(String, u64)>,
}

/// How many bytes a 64-bit little-endian ELF's header says the file holds at least:
/// its own 64, and the ends of the program and section header tables (`None` when
/// the header itself is cut short).
fn described_size(b: &[u8]) -> Option<u64> {
    let u16_at = |o: usize| Some(u16::from_le_bytes(b.get(o..o + 2)?.try_into().ok()?) as u64);
    let u64_at = |o: usize| Some(u64::from_le_bytes(b.get(o..o + 8)?.try_into().ok()?));
    if b.len() < 64 {
        return Some(64);
    }
    let ph = u64_at(0x20)?.saturating_add(u16_at(0x36)?.saturating_mul(u16_at(0x38)?));
    let sh = u64_at(0x28)?.saturating_add(u16_at(0x3a)?.saturating_mul(u16_at(0x3c)?));
    Some(64.max(ph).max(sh))
}

impl CodeObject {
    /// Parses `bytes`.
    pub fn parse(bytes: &[u8]) -> Result<Self> {
        let magic = b"\x7fELF";
        if !magic.starts_with(&bytes[..bytes.len().min(4)]) || bytes.is_empty() {
            return Err(bad("not an ELF file (it does not start with \\x7fELF)"));
        }
        let elf = Elf::parse(bytes).map_err(|e| match described_size(bytes) {
            Some(need) if need > bytes.len() as u64 => bad(format!(
                "truncated: the file has {} bytes, its headers describe at least {need}",
                bytes.len()
            )),
            _ => bad(format!("not a readable ELF file ({e})")),
        })?;
        if elf.header.e_machine != goblin::elf::header::EM_AMDGPU {
            return Err(bad(format!("machine {} is not AMDGPU", elf.header.e_machine)));
        }
        let mut size = 0u64;
        for ph in elf.program_headers.iter().filter(|p| p.p_type == PT_LOAD) {
            let end = ph
                .p_vaddr
                .checked_add(ph.p_memsz)
                .ok_or_else(|| bad("segment address overflows"))?;
            size = size.max(end);
        }
        if size == 0 || size > MAX_IMAGE {
            return Err(bad(format!("loadable image of {size} bytes")));
        }
        let mut image = vec![0u8; size as usize];
        for ph in elf.program_headers.iter().filter(|p| p.p_type == PT_LOAD) {
            if ph.p_filesz > ph.p_memsz {
                return Err(bad("segment file size exceeds its memory size"));
            }
            let src = (ph.p_offset as usize)
                .checked_add(ph.p_filesz as usize)
                .and_then(|end| bytes.get(ph.p_offset as usize..end))
                .ok_or_else(|| bad("segment outside the file"))?;
            let at = ph.p_vaddr as usize;
            image[at..at + src.len()].copy_from_slice(src);
        }
        let mut relocs = Vec::new();
        for r in elf.dynrelas.iter() {
            if r.r_type != R_AMDGPU_RELATIVE64 {
                return Err(bad(format!("relocation type {} is not supported", r.r_type)));
            }
            if r.r_offset.checked_add(8).is_none_or(|e| e > size) {
                return Err(bad(format!("relocation at {:#x} outside the image", r.r_offset)));
            }
            relocs.push((r.r_offset, r.r_addend.unwrap_or(0)));
        }
        let mut symbols = Vec::new();
        for (tab, strs) in [(&elf.dynsyms, &elf.dynstrtab), (&elf.syms, &elf.strtab)] {
            for s in tab.iter() {
                if let Some(n) = strs.get_at(s.st_name).filter(|n| !n.is_empty()) {
                    symbols.push((n.to_string(), s.st_value));
                }
            }
        }
        let text = elf
            .section_headers
            .iter()
            .find(|sh| elf.shdr_strtab.get_at(sh.sh_name) == Some(".text"))
            .and_then(|sh| {
                let start = usize::try_from(sh.sh_addr).ok()?;
                let end = start.checked_add(usize::try_from(sh.sh_size).ok()?)?;
                (end <= image.len()).then_some(start..end)
            });
        let mut metadata = None;
        if let Some(notes) = elf.iter_note_headers(bytes) {
            for n in notes {
                let n = n.map_err(|e| bad(format!("unreadable note ({e})")))?;
                if n.n_type == NT_AMDGPU_METADATA && n.name == "AMDGPU" {
                    metadata = Some(msgpack::decode(n.desc).map_err(|e| bad(format!("metadata: {e}")))?);
                }
            }
        }
        let target = metadata
            .as_ref()
            .and_then(|m| m.get("amdhsa.target"))
            .and_then(Value::as_str)
            .map(String::from);
        Ok(CodeObject {
            image,
            relocs,
            target,
            text,
            metadata,
            symbols,
        })
    }

    /// Names of the kernels (from the metadata, else from `*.kd` symbols).
    pub fn kernel_names(&self) -> Vec<String> {
        let from_meta: Vec<String> = self
            .metadata
            .as_ref()
            .and_then(|m| m.get("amdhsa.kernels"))
            .and_then(Value::as_array)
            .map(|ks| {
                ks.iter()
                    .filter_map(|k| k.get(".name")?.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default();
        if !from_meta.is_empty() {
            return from_meta;
        }
        self.symbols
            .iter()
            .filter_map(|(n, _)| n.strip_suffix(".kd").map(String::from))
            .collect()
    }

    /// The kernel `name`: its descriptor and metadata.
    pub fn kernel(&self, name: &str) -> Result<KernelInfo> {
        let kd = format!("{name}.kd");
        let &(_, off) = self
            .symbols
            .iter()
            .find(|(n, _)| *n == kd)
            .ok_or_else(|| HcqError::NoKernel {
                name: name.to_string(),
                available: self.kernel_names(),
            })?;
        let bytes: &[u8; KernelDescriptor::BYTES] = (off as usize)
            .checked_add(KernelDescriptor::BYTES)
            .and_then(|end| self.image.get(off as usize..end))
            .and_then(|b| b.try_into().ok())
            .ok_or_else(|| bad(format!("descriptor {kd} outside the image")))?;
        let descriptor = KernelDescriptor::from_bytes(bytes);
        let meta = self
            .metadata
            .as_ref()
            .and_then(|m| m.get("amdhsa.kernels"))
            .and_then(Value::as_array)
            .and_then(|ks| ks.iter().find(|k| k.get(".name").and_then(Value::as_str) == Some(name)));
        let mut args = Vec::new();
        if let Some(list) = meta.and_then(|m| m.get(".args")).and_then(Value::as_array) {
            for (i, a) in list.iter().enumerate() {
                let field = |k: &str| a.get(k).and_then(Value::as_u64).and_then(|v| u32::try_from(v).ok());
                let offset = field(".offset").ok_or_else(|| bad(format!("argument {i} of {name} has no .offset")))?;
                let size = field(".size").ok_or_else(|| bad(format!("argument {i} of {name} has no .size")))?;
                let kind_s = a.get(".value_kind").and_then(Value::as_str).unwrap_or("");
                let kind = match kind_s {
                    "global_buffer" => ArgKind::Buffer,
                    "by_value" => ArgKind::Value,
                    k if k.starts_with("hidden_") => ArgKind::Hidden(k["hidden_".len()..].to_string()),
                    other => {
                        return Err(bad(format!(
                            "argument {i} of {name}: value kind {other:?} is not supported"
                        )));
                    }
                };
                if offset.checked_add(size).is_none_or(|e| e > descriptor.kernarg_size) {
                    return Err(bad(format!(
                        "argument {i} of {name} lies outside the {}-byte kernarg segment",
                        descriptor.kernarg_size
                    )));
                }
                let name = a.get(".name").and_then(Value::as_str).map(String::from);
                let type_name = a.get(".type_name").and_then(Value::as_str).map(String::from);
                let scalar = type_name.as_deref().and_then(crate::ScalarType::from_type_name);
                args.push(ArgInfo {
                    name,
                    offset,
                    size,
                    kind,
                    type_name,
                    scalar,
                });
            }
        }
        let num = |k: &str, d: u32| {
            meta.and_then(|m| m.get(k))
                .and_then(Value::as_u64)
                .and_then(|v| u32::try_from(v).ok())
                .unwrap_or(d)
        };
        let wave_default = if descriptor.has(KernelDescriptor::WAVEFRONT_SIZE32) {
            32
        } else {
            64
        };
        Ok(KernelInfo {
            name: name.to_string(),
            descriptor_offset: off,
            descriptor,
            args,
            kernarg_align: num(".kernarg_segment_align", 16).max(1),
            wavefront_size: num(".wavefront_size", wave_default),
            max_workgroup_size: num(".max_flat_workgroup_size", 1024),
        })
    }
}
