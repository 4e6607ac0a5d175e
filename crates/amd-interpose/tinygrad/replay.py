"""Times tinygrad's graph replay on its AMD backend, for comparing with
`cargo xtask bench graph`: a TinyJit function of 11 kernels (a chain of 10 elementwise
steps, each made its own kernel, and the one tinygrad makes to put the variable in
memory) whose input buffer and one variable change at each call, as the benchmark's
graph of 11 launches changes buffers and counts. tinygrad runs the captured
kernels as one HCQGraph (one bound list per engine, replayed with new values); each
replay here starts with the engines idle (the device synchronized, then the host busy
for 50 us, as the benchmark's idle replays are). Prints the median CPU time of the
replay itself (HCQGraph.__call__) and of the whole jitted call, and checks results."""
import statistics, sys, time
from tinygrad import Device, Tensor, TinyJit, Variable
from tinygrad.runtime.graph.hcq import HCQGraph
from tinygrad.runtime.support.hcq import HWQueue

RUNS = int(sys.argv[1]) if len(sys.argv) > 1 else 300
N = 256

replays: list[int] = []
submits: list[int] = []
graphs: dict[int, int] = {}
in_replay = False
original, original_submit = HCQGraph.__call__, HWQueue.submit


def timed(self, *args, **kwargs):
  global in_replay
  in_replay = True
  t = time.perf_counter_ns()
  r = original(self, *args, **kwargs)
  replays.append(time.perf_counter_ns() - t)
  in_replay = False
  graphs[id(self)] = len(self.jit_cache)
  return r


def timed_submit(self, *args, **kwargs):
  if not in_replay:
    return original_submit(self, *args, **kwargs)
  t = time.perf_counter_ns()
  r = original_submit(self, *args, **kwargs)
  submits.append(time.perf_counter_ns() - t)
  return r


HCQGraph.__call__, HWQueue.submit = timed, timed_submit


@TinyJit
def step(x: Tensor, k: Variable) -> Tensor:
  for i in range(10):
    x = (x + (k if i == 0 else i)).contiguous()
  return x.realize()


dev = Device[Device.DEFAULT]
inputs = [Tensor.full((N,), float(j)).contiguous().realize() for j in range(5)]
calls: list[int] = []
for r in range(RUNS):
  j, kv = r % len(inputs), 1 + r % 7
  dev.synchronize()
  spin = time.perf_counter_ns() + 50_000
  while time.perf_counter_ns() < spin:
    pass
  t = time.perf_counter_ns()
  out = step(inputs[j], Variable("k", 1, 7).bind(kv))
  calls.append(time.perf_counter_ns() - t)
  # The steps add k, then 1..9: 45 + k.
  got = out.tolist()
  want = float(j) + kv + 45
  if any(g != want for g in got):
    sys.exit(f"replay: run {r} gave {got[:4]}..., expected {want}")

if list(graphs.values()) != [11] or len(replays) < RUNS // 2:
  sys.exit(f"replay: expected one HCQGraph of 11 kernels replayed at each call, saw graphs of "
           f"{list(graphs.values())} kernels, {len(replays)} replays")
us = lambda ns: statistics.median(ns) / 1e3
print(f"replay: {us(replays):.2f} us median HCQGraph replay, of which {us(submits):.2f} us submitting its "
      f"bound queue; {us(calls[3:]):.2f} us the whole jitted call ({len(replays)} replays of 11 kernels, engines idle)")
