"""Times a 256x256 float matmul on tinygrad's AMD backend (compiled once, then three
runs), for comparing the mock under the interposer with tinygrad's own mock."""
import time
from tinygrad import Device, Tensor

a, b = Tensor.rand(256, 256).realize(), Tensor.rand(256, 256).realize()
(a @ b).realize()
Device[Device.DEFAULT].synchronize()
t = time.perf_counter()
for _ in range(3): (a @ b).realize()
Device[Device.DEFAULT].synchronize()
print(f"speed: matmul 256x256 {(time.perf_counter() - t) / 3 * 1e3:.1f} ms per run")
