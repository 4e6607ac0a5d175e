//! The commands.

use std::fmt::Write as _;

use amd_hcq::{BufferKind, CodeObject, Device, Iface, KernArgs, LaunchDims, Platform, Program, ScalarType};
use amd_isa::rdna3::Inst;
use amd_packets::{GfxTarget, PacketError, pm4, sdma};

/// What went wrong: the user's command line (exit 2, with the usage) or the work.
pub enum Error {
    Usage(String),
    Failed(String),
}

type Result<T> = std::result::Result<T, Error>;

fn failed(e: impl std::fmt::Display) -> Error {
    Error::Failed(e.to_string())
}

fn usage(msg: impl Into<String>) -> Error {
    Error::Usage(msg.into())
}

pub const USAGE: &str = "usage:
  hcq info                          the GPUs, their transport and properties
  hcq disasm FILE                   a code object's kernels, descriptors, arguments and code
  hcq decode [--sdma] [--target gfx1100|gfx1201|gfx1030|gfx942] [FILE]
                                    PM4 (or SDMA) dwords in hex from FILE or stdin
                                    (0x optional; spaces, commas or lines; # comments)
  hcq run FILE KERNEL --grid X[,Y,Z] --block X[,Y,Z] [--arg ARG]...
                                    runs a kernel; ARG is TYPE:VALUE for a value
                                    (u8 i8 u16 i16 u32 i32 u64 i64 f32 f64) or
                                    buf:TYPE:N[=FILL] for a buffer of N values filled
                                    with FILL (a number, or iota for 0, 1, 2, ...;
                                    zeros by default), printed after the run;
                                    HCQ_PROFILE=FILE writes a Perfetto trace of it

The GPU is the first AMD GPU through /dev/kfd, or the mock GPU where there is none
(AMD_IFACE=KFD or AMD_IFACE=MOCK forces one).";

pub fn run(args: &[String]) -> Result<()> {
    match args.first().map(String::as_str) {
        Some("info") => info(&args[1..]),
        Some("disasm") => disasm(&args[1..]),
        Some("decode") => decode(&args[1..]),
        Some("run") => run_kernel(&args[1..]),
        Some("-h" | "--help" | "help") => {
            println!("{USAGE}");
            Ok(())
        }
        Some(other) => Err(usage(format!("no command {other:?}"))),
        None => Err(usage("a command is needed")),
    }
}

fn open() -> Result<(Platform, &'static str)> {
    let p = Platform::open().map_err(failed)?;
    let name = match p.iface() {
        Iface::Kfd => "KFD",
        Iface::Mock => "the mock GPU",
        Iface::Pci => "PCI (driverless)",
        Iface::MockPci => "PCI (driverless) on the mock GPU",
    };
    Ok((p, name))
}

fn info(args: &[String]) -> Result<()> {
    if let Some(a) = args.first() {
        return Err(usage(format!("info takes no argument, got {a:?}")));
    }
    let (p, transport) = open()?;
    println!(
        "transport: {transport}{}",
        if p.iface() == Iface::Mock {
            " (no AMD GPU through /dev/kfd, or AMD_IFACE=MOCK)"
        } else {
            ""
        }
    );
    println!("GPUs: {}", p.device_count());
    for i in 0..p.device_count() {
        let dev = p.device(i).map_err(failed)?;
        let props = dev.props();
        let free = match dev.iface().kfd() {
            Some(k) => k
                .kfd_device()
                .available_memory()
                .map(|b| format!("{} MiB", b >> 20))
                .unwrap_or_else(|e| format!("unknown ({e})")),
            None => "unknown (driverless)".to_string(),
        };
        println!("GPU {i}: {}", props.arch);
        println!("  gfx_target_version  {}", props.gfx_version);
        println!("  packet family       {:?}", props.target);
        println!("  compute units       {}", props.cu_count);
        println!("  SIMDs per CU        {}", props.simd_per_cu);
        println!("  waves per SIMD      {}", props.max_waves_per_simd);
        println!("  LDS per workgroup   {} KiB", props.lds_size / 1024);
        println!("  scratch slots/CU    {}", props.scratch_slots_per_cu);
        println!("  shader arrays       {}", props.array_count);
        println!("  free VRAM           {free}");
        println!("  gpu_id              {}", props.gpu_id);
    }
    Ok(())
}

fn read_file(path: &str) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|e| failed(format!("{path}: {e}")))
}

fn disasm(args: &[String]) -> Result<()> {
    let [path] = args else {
        return Err(usage("disasm takes one FILE"));
    };
    let elf = read_file(path)?;
    let co = CodeObject::parse(&elf).map_err(|e| failed(format!("{path}: {e}")))?;
    println!("{path}: target {}", co.target.as_deref().unwrap_or("(none)"));
    let names = co.kernel_names();
    let mut entries = Vec::new();
    for name in &names {
        let k = co.kernel(name).map_err(failed)?;
        let entry = (k.descriptor_offset as i64).checked_add(k.descriptor.entry_offset);
        entries.push(entry.and_then(|e| usize::try_from(e).ok()));
    }
    for (name, entry) in names.iter().zip(&entries) {
        let k = co.kernel(name).map_err(failed)?;
        let d = k.descriptor;
        println!();
        println!("kernel {name}");
        println!("  descriptor at {:#x}, code at {}", k.descriptor_offset, hex(*entry));
        println!(
            "  group segment {} B, private segment {} B, kernarg segment {} B (align {})",
            d.group_segment_size, d.private_segment_size, d.kernarg_size, k.kernarg_align
        );
        println!(
            "  rsrc1 {:#010x} rsrc2 {:#010x} rsrc3 {:#010x} properties {:#06x}, wave{}, at most {} work-items",
            d.rsrc1, d.rsrc2, d.rsrc3, d.properties, k.wavefront_size, k.max_workgroup_size
        );
        for (i, a) in k.args.iter().enumerate() {
            println!(
                "  arg {i}: {:?} {} at {} ({} B){}",
                a.kind,
                a.name.as_deref().unwrap_or("-"),
                a.offset,
                a.size,
                a.type_name.as_deref().map(|t| format!(" {t}")).unwrap_or_default()
            );
        }
        let Some(start) = *entry else { continue };
        // The code runs to the next kernel's entry or the end of the text section (of
        // the image, where the file names no text section).
        let text_end = co.text.as_ref().map_or(co.image.len(), |t| t.end);
        let end = entries
            .iter()
            .flatten()
            .copied()
            .filter(|&e| e > start)
            .min()
            .unwrap_or(text_end)
            .min(text_end);
        let Some(code) = co.image.get(start..end) else {
            println!("  (code outside the image)");
            continue;
        };
        let words: Vec<u32> = code
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        // gfx12 code in RDNA4's encodings (`amdgcn-amd-amdhsa--gfx1201`), gfx940–gfx942
        // in CDNA3's, the rest RDNA3's.
        let target = co.target.as_deref().unwrap_or("");
        let rdna4 = target.contains("--gfx12");
        let cdna3 = target.contains("--gfx94");
        let mut at = 0;
        while at < words.len() {
            // s_code_end fills the end of the text section.
            if words[at] == 0xbf9f_0000 {
                break;
            }
            let decoded = if rdna4 {
                amd_isa::rdna4::Inst::decode(&words[at..]).map(|i| (i.size, i.text()))
            } else if cdna3 {
                amd_isa::cdna3::Inst::decode(&words[at..]).map(|i| (i.size, i.llvm().to_string()))
            } else {
                Inst::decode(&words[at..]).map(|i| (i.size, i.llvm().to_string()))
            };
            match decoded {
                Ok((size, text)) => {
                    let n = (size.max(1) as usize).min(words.len() - at);
                    let raw: Vec<String> = words[at..at + n].iter().map(|w| format!("{w:08x}")).collect();
                    println!("  {:8x}: {:<56} // {}", start + 4 * at, text, raw.join(" "));
                    at += n;
                }
                Err(e) => {
                    println!("  {:8x}: {:08x} ({e})", start + 4 * at, words[at]);
                    at += 1;
                }
            }
        }
    }
    Ok(())
}

fn hex(v: Option<usize>) -> String {
    v.map(|v| format!("{v:#x}")).unwrap_or_else(|| "(out of range)".into())
}

fn decode(args: &[String]) -> Result<()> {
    let mut sdma_stream = false;
    let mut target = GfxTarget::Gfx11;
    let mut file = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--sdma" => sdma_stream = true,
            "--target" => {
                const TARGETS: &str = "gfx1100, gfx1201, gfx1030 or gfx942";
                let t = it.next().ok_or_else(|| usage(format!("--target needs {TARGETS}")))?;
                target = match t.as_str() {
                    "gfx1100" | "gfx11" => GfxTarget::Gfx11,
                    "gfx1030" | "gfx103" => GfxTarget::Gfx103,
                    "gfx1200" | "gfx1201" | "gfx12" => GfxTarget::Gfx12,
                    "gfx940" | "gfx941" | "gfx942" | "gfx94" => GfxTarget::Gfx94,
                    other => return Err(usage(format!("no target {other:?} ({TARGETS})"))),
                };
            }
            f if f.starts_with('-') && f != "-" => return Err(usage(format!("no option {f:?}"))),
            f => {
                if file.replace(f.to_string()).is_some() {
                    return Err(usage("decode takes one FILE"));
                }
            }
        }
    }
    let text = match file.as_deref() {
        None | Some("-") => {
            let mut s = String::new();
            std::io::Read::read_to_string(&mut std::io::stdin(), &mut s).map_err(failed)?;
            s
        }
        Some(f) => String::from_utf8(read_file(f)?).map_err(|_| failed(format!("{f}: not text")))?,
    };
    let words = parse_dwords(&text)?;
    let (out, err) = if sdma_stream {
        listing(sdma::decode(target, &words))
    } else {
        listing(pm4::decode(target, &words))
    };
    print!("{out}");
    match err {
        Some(e) => Err(failed(e)),
        None => Ok(()),
    }
}

/// A decoded stream's packets, one a line with its dword offset, and the error that
/// ended it, if one did.
fn listing<P: std::fmt::Display>(
    stream: impl Iterator<Item = std::result::Result<(usize, P), PacketError>>,
) -> (String, Option<PacketError>) {
    let mut out = String::new();
    for item in stream {
        match item {
            Ok((at, p)) => {
                // Writing into a String cannot fail.
                let _ = writeln!(out, "{at:6}: {p}");
            }
            Err(e) => return (out, Some(e)),
        }
    }
    (out, None)
}

/// Dwords written in hex: `0x` optional, separated by spaces, commas or new lines,
/// `#` to the end of a line a comment.
fn parse_dwords(text: &str) -> Result<Vec<u32>> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("");
        for tok in line.split([' ', '\t', ',']).filter(|t| !t.is_empty()) {
            let digits = tok.strip_prefix("0x").or_else(|| tok.strip_prefix("0X")).unwrap_or(tok);
            let v = u32::from_str_radix(digits, 16)
                .map_err(|_| failed(format!("line {}: {tok:?} is not a 32-bit hex dword", n + 1)))?;
            out.push(v);
        }
    }
    Ok(out)
}

/// A `--arg` of `hcq run`.
enum RunArg {
    Value(ScalarType, String),
    Buffer {
        ty: ScalarType,
        n: usize,
        fill: Option<String>,
    },
}

fn scalar_type(s: &str) -> Result<ScalarType> {
    Ok(match s {
        "u8" => ScalarType::U8,
        "i8" => ScalarType::I8,
        "u16" => ScalarType::U16,
        "i16" => ScalarType::I16,
        "u32" => ScalarType::U32,
        "i32" => ScalarType::I32,
        "u64" => ScalarType::U64,
        "i64" => ScalarType::I64,
        "f32" => ScalarType::F32,
        "f64" => ScalarType::F64,
        other => {
            return Err(usage(format!(
                "no type {other:?} (u8 i8 u16 i16 u32 i32 u64 i64 f32 f64)"
            )));
        }
    })
}

fn parse_arg(a: &str) -> Result<RunArg> {
    let parts: Vec<&str> = a.splitn(3, ':').collect();
    match parts.as_slice() {
        ["buf", ty, rest] => {
            let (n, fill) = match rest.split_once('=') {
                Some((n, f)) => (n, Some(f.to_string())),
                None => (*rest, None),
            };
            let n: usize = n
                .parse()
                .ok()
                .filter(|&n| n > 0)
                .ok_or_else(|| usage(format!("--arg {a}: {n:?} is not a count of values")))?;
            Ok(RunArg::Buffer {
                ty: scalar_type(ty)?,
                n,
                fill,
            })
        }
        [ty, v] => Ok(RunArg::Value(scalar_type(ty)?, v.to_string())),
        _ => Err(usage(format!("--arg {a}: TYPE:VALUE or buf:TYPE:N[=FILL]"))),
    }
}

/// `v` as the bits of a `ty` (little-endian, `ty.size()` bytes used).
fn value_bits(ty: ScalarType, v: &str) -> std::result::Result<u64, String> {
    let bad = || format!("{v:?} is not a {ty:?} value");
    Ok(match ty {
        ScalarType::F32 => v.parse::<f32>().map_err(|_| bad())?.to_bits() as u64,
        ScalarType::F64 => v.parse::<f64>().map_err(|_| bad())?.to_bits(),
        ScalarType::F16 => return Err("f16 is not supported here".into()),
        _ => {
            let x: i128 = v.parse().map_err(|_| bad())?;
            let bits = 8 * ty.size();
            let signed = matches!(ty, ScalarType::I8 | ScalarType::I16 | ScalarType::I32 | ScalarType::I64);
            let (lo, hi) = if signed {
                (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
            } else {
                (0, (1i128 << bits) - 1)
            };
            if x < lo || x > hi {
                return Err(format!("{v} does not fit a {ty:?}"));
            }
            (x as u64) & if bits == 64 { u64::MAX } else { (1 << bits) - 1 }
        }
    })
}

fn show(ty: ScalarType, bytes: &[u8]) -> String {
    let mut b = [0u8; 8];
    b[..bytes.len()].copy_from_slice(bytes);
    let v = u64::from_le_bytes(b);
    let sign = |bits: u32| ((v << (64 - bits)) as i64) >> (64 - bits);
    match ty {
        ScalarType::F32 => f32::from_bits(v as u32).to_string(),
        ScalarType::F64 => f64::from_bits(v).to_string(),
        ScalarType::I8 => sign(8).to_string(),
        ScalarType::I16 => sign(16).to_string(),
        ScalarType::I32 => sign(32).to_string(),
        ScalarType::I64 => (v as i64).to_string(),
        _ => v.to_string(),
    }
}

fn dims(s: &str, what: &str) -> Result<[u32; 3]> {
    let parts: Vec<&str> = s.split(',').collect();
    if parts.is_empty() || parts.len() > 3 {
        return Err(usage(format!("{what} takes X[,Y,Z]")));
    }
    let mut d = [1u32; 3];
    for (i, p) in parts.iter().enumerate() {
        d[i] = p
            .trim()
            .parse()
            .ok()
            .filter(|&v| v > 0)
            .ok_or_else(|| usage(format!("{what} {s}: {p:?} is not a size")))?;
    }
    Ok(d)
}

fn run_kernel(args: &[String]) -> Result<()> {
    let (mut file, mut kernel, mut grid, mut block) = (None, None, None, None);
    let mut run_args = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = |name: &str| it.next().cloned().ok_or_else(|| usage(format!("{name} needs a value")));
        match a.as_str() {
            "--grid" => grid = Some(dims(&value("--grid")?, "--grid")?),
            "--block" => block = Some(dims(&value("--block")?, "--block")?),
            "--arg" => run_args.push(parse_arg(&value("--arg")?)?),
            o if o.starts_with("--") => return Err(usage(format!("no option {o:?}"))),
            p if file.is_none() => file = Some(p.to_string()),
            k if kernel.is_none() => kernel = Some(k.to_string()),
            extra => return Err(usage(format!("unexpected {extra:?}"))),
        }
    }
    let (Some(file), Some(kernel)) = (file, kernel) else {
        return Err(usage("run takes FILE KERNEL"));
    };
    let dims = LaunchDims {
        global: grid.ok_or_else(|| usage("run needs --grid"))?,
        local: block.ok_or_else(|| usage("run needs --block"))?,
    };
    let elf = read_file(&file)?;
    let (p, transport) = open()?;
    let dev = p.device(0).map_err(failed)?;
    println!("GPU 0: {}, {transport}", dev.props().arch);
    let prg = Program::load(&dev, &elf, &kernel).map_err(failed)?;
    let (kargs, buffers) = build_args(&dev, &run_args)?;
    let t = prg.enqueue_timed(&kargs, dims).map_err(failed)?;
    println!(
        "kernel {kernel}: grid {:?} × block {:?}, {:.3} us on the GPU",
        dims.global,
        dims.local,
        t.as_secs_f64() * 1e6
    );
    for (i, ty, n, buf) in buffers {
        let size = n * ty.size() as usize;
        let mut out = vec![0u8; size];
        dev.copy_out(&mut out, &buf, 0).map_err(failed)?;
        let shown: Vec<String> = out.chunks(ty.size() as usize).take(16).map(|c| show(ty, c)).collect();
        println!(
            "arg {i}: {ty:?}[{n}] = {}{}",
            shown.join(" "),
            if n > 16 { " …" } else { "" }
        );
    }
    Ok(())
}

type Buffers = Vec<(usize, ScalarType, usize, amd_hcq::Buffer)>;

fn build_args(dev: &Device, run_args: &[RunArg]) -> Result<(KernArgs, Buffers)> {
    let mut kargs = KernArgs::new();
    let mut buffers = Vec::new();
    for (i, a) in run_args.iter().enumerate() {
        match a {
            RunArg::Value(ty, v) => {
                let bits = value_bits(*ty, v).map_err(|e| usage(format!("--arg {i}: {e}")))?;
                kargs = match ty {
                    ScalarType::F32 => kargs.f32(f32::from_bits(bits as u32)),
                    ScalarType::F64 => kargs.f64(f64::from_bits(bits)),
                    ScalarType::U8 => kargs.u8(bits as u8),
                    ScalarType::I8 => kargs.i8(bits as i8),
                    ScalarType::U16 => kargs.u16(bits as u16),
                    ScalarType::I16 => kargs.i16(bits as i16),
                    ScalarType::U32 => kargs.u32(bits as u32),
                    ScalarType::I32 => kargs.i32(bits as i32),
                    ScalarType::U64 => kargs.u64(bits),
                    ScalarType::I64 => kargs.i64(bits as i64),
                    ScalarType::F16 => kargs.f16_bits(bits as u16),
                };
            }
            RunArg::Buffer { ty, n, fill } => {
                let w = ty.size() as usize;
                let bytes = n
                    .checked_mul(w)
                    .filter(|&b| b <= 1 << 34)
                    .ok_or_else(|| usage(format!("--arg {i}: {n} values is too many")))?;
                let mut data = vec![0u8; bytes];
                if let Some(f) = fill {
                    for (k, c) in data.chunks_mut(w).enumerate() {
                        let bits = if f == "iota" {
                            value_bits(*ty, &k.to_string())
                        } else {
                            value_bits(*ty, f)
                        }
                        .map_err(|e| usage(format!("--arg {i}: {e}")))?;
                        c.copy_from_slice(&bits.to_le_bytes()[..w]);
                    }
                }
                let buf = dev.alloc(bytes, BufferKind::Device).map_err(failed)?;
                dev.copy_in(&buf, 0, &data).map_err(failed)?;
                kargs = kargs.buffer(&buf);
                buffers.push((i, *ty, *n, buf));
            }
        }
    }
    Ok((kargs, buffers))
}
