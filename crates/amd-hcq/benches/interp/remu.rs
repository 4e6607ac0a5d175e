//! remu (github:Qazalin/remu), loaded from a library the user built, as a reference.
//! The benchmark's only unsafe code besides the shared host-state probe
//! (`common/host.rs`).

use std::ffi::{CString, c_char, c_void};

/// `run_asm(code, code_bytes, gx, gy, gz, lx, ly, lz, kernargs) -> status`
type RunAsm = unsafe extern "C" fn(*const c_char, u32, u32, u32, u32, u32, u32, u32, *const u64) -> i32;

pub struct Remu {
    run_asm: RunAsm,
}

impl Remu {
    /// Loads `path` (a `libremu.so`) and finds `run_asm`.
    pub fn load(path: &str) -> Result<Remu, String> {
        let c = CString::new(path).map_err(|e| e.to_string())?;
        // SAFETY: `c` is a NUL-terminated path; dlopen has no other preconditions. The
        // handle is never closed, so the function pointer below stays valid.
        let lib = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        if lib.is_null() {
            return Err(format!("dlopen {path} failed"));
        }
        // SAFETY: `lib` is a live handle and the symbol name is NUL-terminated.
        let sym: *mut c_void = unsafe { libc::dlsym(lib, c"run_asm".as_ptr()) };
        if sym.is_null() {
            return Err(format!("{path} has no run_asm"));
        }
        // SAFETY: remu exports `run_asm` with exactly the `RunAsm` signature
        // (src/lib.rs of its repository).
        let run_asm = unsafe { std::mem::transmute::<*mut c_void, RunAsm>(sym) };
        Ok(Remu { run_asm })
    }

    /// Runs `code` (from the kernel's entry) on a grid. The kernel reads and writes
    /// host memory through the pointers in `kernargs`.
    pub fn run(&self, code: &[u32], grid: [u32; 3], block: [u32; 3], kernargs: &[u64]) -> i32 {
        // SAFETY: `code` and `kernargs` outlive the call; the caller keeps every buffer
        // the kernargs point to alive and large enough for the kernel's accesses.
        unsafe {
            (self.run_asm)(
                code.as_ptr().cast(),
                (code.len() * 4) as u32,
                grid[0],
                grid[1],
                grid[2],
                block[0],
                block[1],
                block[2],
                kernargs.as_ptr(),
            )
        }
    }
}
