"""Runs `cargo xtask oracle` cases through tinygrad's RDNA3 emulator.

tinygrad's emulator (test/mockgpu/amd/emu.py in tinygrad's current tree) compiles each
instruction's pseudocode from AMD's ISA manual into a small CPU kernel; it is an
independent executable reading of the ISA, used here as the reference the interpreter
is compared with. Nothing of it runs in the test command.

usage: python3 tinygrad_emu.py CASES OUT   (TINYGRAD_DIR: a checkout of tinygrad's tree;
ORACLE_ARCH: rdna3, the default, or rdna4)

CASES holds records of little-endian u32s:
  id, nwords, words[4], mode, scc, window_lo, window_hi, reloc, sgpr[128], vgpr[48][32],
  lds[1024] (its first 4 KiB), global[1024] (the 4 KiB window at window_hi:window_lo)
OUT gets, per case:
  id, status (0 ran, 1 error), scc, sgpr[128], vgpr[48][32], lds[1024], global[1024],
  msg_len, msg (utf-8, padded to 4)
The window lives at another address here: the registers reloc names (1: v16:v17 in
every lane, 2: s10:s11) are moved to it before the instruction and back after; reloc 3
makes the window the lanes' scratch memory instead (128 bytes each, SCRATCH_STRIDE).
The emulator runs without its DAZ/FTZ context: every denormal is kept, as MODE 0xf0.
"""
import ctypes, os, struct, sys

VGPRS = 48
HEADER = 11
LDS_WORDS = 2048
GLOBAL_BYTES = 4096
RECORD = 4 * (HEADER + 128 + VGPRS * 32 + LDS_WORDS)

def move(st, reloc, delta):
  """Adds delta (mod 2^64) to the address registers reloc names."""
  if reloc == 1:
    base = st.vgpr_buf._buf.va_addr
    lo = (ctypes.c_uint32 * 32).from_address(base + 16 * 32 * 4)
    hi = (ctypes.c_uint32 * 32).from_address(base + 17 * 32 * 4)
    for lane in range(32):
      a = ((hi[lane] << 32 | lo[lane]) + delta) % (1 << 64)
      lo[lane], hi[lane] = a & 0xffffffff, a >> 32
  elif reloc == 2:
    a = ((st._read_sgpr(11) << 32 | st._read_sgpr(10)) + delta) % (1 << 64)
    st._write_sgpr(10, a & 0xffffffff)
    st._write_sgpr(11, a >> 32)

def main():
  tg = os.environ.get("TINYGRAD_DIR")
  if not tg: sys.exit("TINYGRAD_DIR must name a checkout of tinygrad's tree")
  sys.path.insert(0, tg)
  from test.mockgpu.amd import emu
  cases, out_path = sys.argv[1], sys.argv[2]
  arch = os.environ.get("ORACLE_ARCH", "rdna3")
  data = open(cases, "rb").read()
  if len(data) % RECORD: sys.exit(f"{cases}: {len(data)} bytes is not a whole number of {RECORD}-byte records")
  st = emu.WaveState(32)
  lds = (ctypes.c_uint8 * 65536)()
  code = (ctypes.c_char * 32)()
  glob = (ctypes.c_uint8 * GLOBAL_BYTES)()
  vgpr_bytes = VGPRS * 32 * 4
  out = open(out_path, "wb")
  for off in range(0, len(data), RECORD):
    rec = struct.unpack_from(f"<{RECORD // 4}I", data, off)
    cid, nwords = rec[0], rec[1]
    words = rec[2:2 + nwords]
    scc = rec[7]
    sgprs = rec[HEADER:HEADER + 128]
    vgprs = data[off + 4 * (HEADER + 128):off + 4 * (HEADER + 128) + vgpr_bytes]
    window = data[off + 4 * (HEADER + 128) + vgpr_bytes:off + RECORD]
    ctypes.memmove(code, struct.pack(f"<{len(words)}I", *words) + b"\0" * (32 - 4 * len(words)), 32)
    ctypes.memset(lds, 0, 65536)
    lds_bytes = 4 * LDS_WORDS - GLOBAL_BYTES
    ctypes.memmove(lds, window[:lds_bytes], lds_bytes)
    ctypes.memmove(glob, window[lds_bytes:], GLOBAL_BYTES)
    delta = (ctypes.addressof(glob) - (rec[8] | rec[9] << 32)) % (1 << 64)
    reloc = rec[10]
    for i, v in enumerate(sgprs): st._write_sgpr(i, v)
    st._write_sgpr(emu.SCC.offset, scc)
    ctypes.memmove(st.vgpr_buf._buf.va_addr, vgprs, vgpr_bytes)
    move(st, reloc, delta)
    st.pc = ctypes.addressof(code)
    msg = b""
    try:
      (prg, runtime) = emu._get_runner(bytes(code)[:4 * len(words) + 4], arch)
      scratch = 0
      if reloc == 3:
        st._write_sgpr(emu.SCRATCH_STRIDE_IDX, GLOBAL_BYTES // 32)
        scratch = ctypes.addressof(glob)
      bufs = [ctypes.c_uint64(st.sgpr_buf._buf.va_addr), ctypes.c_uint64(st.vgpr_buf._buf.va_addr), ctypes.c_uint64(0),
              ctypes.c_uint64(ctypes.addressof(lds)), ctypes.c_uint64(scratch), ctypes.c_uint64(st.vgpr_buf._buf.va_addr)]
      runtime.fxn(*[bufs[g] for g in prg.arg.globals])
      status = 0
    except Exception as e:
      status, msg = 1, f"{type(e).__name__}: {e}".encode()[:4000]
    move(st, reloc, (1 << 64) - delta)
    out.write(struct.pack("<3I", cid, status, st._read_sgpr(emu.SCC.offset) & 1))
    out.write(struct.pack("<128I", *(st._read_sgpr(i) for i in range(128))))
    out.write(ctypes.string_at(st.vgpr_buf._buf.va_addr, vgpr_bytes))
    out.write(ctypes.string_at(ctypes.addressof(lds), 4 * LDS_WORDS - GLOBAL_BYTES))
    out.write(ctypes.string_at(ctypes.addressof(glob), GLOBAL_BYTES))
    msg += b"\0" * (-len(msg) % 4)
    out.write(struct.pack("<I", len(msg)) + msg)
  out.close()

if __name__ == "__main__": main()
