"""A small tinygrad program for the interposer: a matmul, a reduction and an
elementwise chain through `Tensor` on tinygrad's AMD backend (AMD=1), checked
against plain Python arithmetic."""
import math, random, sys, time
from tinygrad import Device, Tensor

random.seed(1)
n = 48
a = [[random.uniform(-1, 1) for _ in range(n)] for _ in range(n)]
b = [[random.uniform(-1, 1) for _ in range(n)] for _ in range(n)]
start = time.perf_counter()
ta, tb = Tensor(a), Tensor(b)
c = (ta @ tb).tolist()
rows = ta.sum(axis=1).tolist()
top = ta.max().item()
chain = ((ta * 2 + tb).relu().sqrt()).tolist()
took = time.perf_counter() - start

def close(x, y, tol=1e-4): return abs(x - y) <= tol * max(1.0, abs(y))
bad = []
for i in range(n):
  for j in range(n):
    want = sum(a[i][k] * b[k][j] for k in range(n))
    if not close(c[i][j], want): bad.append(("matmul", i, j, c[i][j], want))
    w2 = math.sqrt(max(0.0, 2 * a[i][j] + b[i][j]))
    if not close(chain[i][j], w2): bad.append(("chain", i, j, chain[i][j], w2))
  if not close(rows[i], sum(a[i])): bad.append(("sum", i, rows[i], sum(a[i])))
if not close(top, max(max(r) for r in a)): bad.append(("max", top))
if bad:
  print(f"sample: {len(bad)} wrong values, first {bad[:3]}")
  sys.exit(1)
print(f"sample: {n}x{n} matmul, row sums, max and an elementwise chain correct on {Device.DEFAULT} ({took:.2f} s)")
