"""Command streams tinygrad 0.14.0 builds for one target, on its own mock GPU.

`capture`: run by `cargo xtask golden-capture` once per target with
DEV=MOCK+AMD:LLVM:<arch> (tinygrad's mock GPU), printing that target's streams as
JSON; `merge A.json B.json …`: the captures as golden/tinygrad-0.14.0-streams.json.
Every input is a fixed synthetic value (no address of the run appears), so the streams
are the same from run to run and a reimplementation given the same inputs can compare
dword for dword.
"""
import json, sys, types

def merge(paths):
  targets = [json.load(open(p)) for p in paths]
  json.dump({"doc": {
    "what": "Command streams tinygrad 0.14.0 (tinygrad/runtime/ops_amd.py AMDComputeQueue / AMDCopyQueue) builds for each target, "
            "on its own mock GPU (DEV=MOCK+AMD:LLVM:<arch>), for dword-for-dword comparison.",
    "how": "xtask/capture/tinygrad_0_14_streams.py, run by `cargo xtask golden-capture`. Signals are tinygrad AMDSignals over fixed "
           "synthetic addresses ('inputs'); a timeline signal's owner gives the event mailbox and id. Copies of at most 4 MiB only "
           "(tinygrad 0.14 splits at 1 GiB, tinygrad 0.10.1 and amd-hcq at 4 MiB).",
    "mock_note": "tinygrad's mock calls its RDNA4 GPU gfx1200 (GC 12.0.0); gfx1200 and gfx1201 share the gfx12 packet formats.",
  }, "targets": targets}, sys.stdout, indent=1)

if sys.argv[1:2] == ["merge"]:
  merge(sys.argv[2:])
  sys.exit(0)

from tinygrad import Device
from tinygrad.runtime.ops_amd import AMDComputeQueue, AMDCopyQueue, AMDSignal
from tinygrad.runtime.support.hcq import HCQBuffer

SYN = {
  "sig_base": 0x7ff000001000, "tl_sig_base": 0x7ff000001010, "queue_event_mailbox_ptr": 0x7ff000100010,
  "queue_event_id": 2, "dst": 0x7f1000000000, "src": 0x7f2000000000,
}

dev = Device["AMD"]
owner = types.SimpleNamespace(queue_event_mailbox_ptr=SYN["queue_event_mailbox_ptr"],
                              queue_event=types.SimpleNamespace(event_id=SYN["queue_event_id"]), is_am=lambda: False)

def signal(base, timeline=False):
  s = AMDSignal(base_buf=HCQBuffer(base, 16), virt=True)
  s.owner, s.is_timeline = (owner, True) if timeline else (None, False)
  return s

def buf(addr, size): return HCQBuffer(addr, size)

def words(q): return [f"{int(d) & 0xffffffff:#010x}" for d in q._q]

cases = {}
def case(name, q, **extra):
  cases[name] = {"dwords": words(q), **({"internal_cmd_sizes": list(q.internal_cmd_sizes)} if hasattr(q, "internal_cmd_sizes") else {}), **extra}

sig, tl = signal(SYN["sig_base"]), signal(SYN["tl_sig_base"], timeline=True)
case("compute.wait", AMDComputeQueue(dev).wait(sig, 5))
case("compute.signal", AMDComputeQueue(dev).signal(sig, 7))
case("compute.signal_timeline", AMDComputeQueue(dev).signal(tl, 7))
case("compute.timestamp", AMDComputeQueue(dev).timestamp(sig))
case("compute.memory_barrier", AMDComputeQueue(dev).memory_barrier())
for size in (0x1, 0x1000, 0x400000):
  case(f"copy.copy_{size:#x}", AMDCopyQueue(dev).copy(buf(SYN["dst"], size), buf(SYN["src"], size), size))
case("copy.signal", AMDCopyQueue(dev).signal(sig, 7))
case("copy.signal_timeline", AMDCopyQueue(dev).signal(tl, 7))
case("copy.wait", AMDCopyQueue(dev).wait(sig, 5))
case("copy.timestamp", AMDCopyQueue(dev).timestamp(sig))

json.dump({"arch": dev.arch, "target": list(dev.target), "gfx_target_version": dev.iface.props["gfx_target_version"],
           "ip_versions": {str(k): list(v) for k, v in dev.iface.ip_versions.items()}, "inputs": SYN, "cases": cases},
          sys.stdout, indent=1)
