# One-thread PyTorch 2.14 / torchao timings for the shapes of fxquant's kernel
# and observer benchmarks (ops/kernels/kquant_bench_test.go,
# observers/bench_test.go). Run: /work/shared/oracle/py.sh torch_bench.py
# Prints one line per case: name, median wall and CPU (process) time of 7
# runs, GB/s from the CPU time (float32 bytes of the large side, as the Go
# benchmarks count them). The machine is shared: compare CPU times.
import time, statistics, torch
import torchao.quantization.pt2e.quantize_pt2e  # noqa: F401 registers quantized_decomposed
from torchao.quantization.quant_primitives import quantize_affine, dequantize_affine
from torchao.quantization.pt2e import HistogramObserver

torch.set_num_threads(1)
torch.manual_seed(0)
qd = torch.ops.quantized_decomposed

def bench(name, fn, nbytes, reps=7, setup=None):
    if setup: setup()
    fn()
    ts, cs = [], []
    for _ in range(reps):
        if setup: setup()
        t, c = time.perf_counter(), time.process_time()
        fn()
        cs.append(time.process_time() - c); ts.append(time.perf_counter() - t)
    m, mc = statistics.median(ts), statistics.median(cs)
    gbs = f"{nbytes/mc/1e9:.3f} GB/s" if nbytes else ""
    print(f"{name}\twall {m*1e3:.3f} ms\tcpu {mc*1e3:.3f} ms\t{gbs}", flush=True)

N = 1 << 24
x = torch.randn(N)
bench("quantize_per_tensor/16M", lambda: qd.quantize_per_tensor(x, 0.02, 3, -128, 127, torch.int8), 4*N)
q = qd.quantize_per_tensor(x, 0.02, 3, -128, 127, torch.int8)
bench("dequantize_per_tensor/16M", lambda: qd.dequantize_per_tensor(q, 0.02, 3, -128, 127, torch.int8), 4*N)
x2 = x.view(4096, 4096)
sc = torch.rand(4096) * 0.01 + 0.01
zp = torch.randint(-5, 5, (4096,), dtype=torch.int64)
bench("quantize_per_channel/4096x4096", lambda: qd.quantize_per_channel(x2, sc, zp, 0, -128, 127, torch.int8), 4*N)
qc = qd.quantize_per_channel(x2, sc, zp, 0, -128, 127, torch.int8)
bench("dequantize_per_channel/4096x4096", lambda: qd.dequantize_per_channel(qc, sc, zp, 0, -128, 127, torch.int8), 4*N)
s8 = sc.view(4096, 1); z8 = zp.to(torch.int32).view(4096, 1)
bench("quantize_affine/int8-row", lambda: quantize_affine(x2, (1, 4096), s8, z8, torch.int8, -128, 127), 4*N)
qa = quantize_affine(x2, (1, 4096), s8, z8, torch.int8, -128, 127)
bench("dequantize_affine/int8-row", lambda: dequantize_affine(qa, (1, 4096), s8, z8, torch.int8, -128, 127), 4*N)
s4 = torch.rand(4096, 128) * 0.01 + 0.01; z4 = torch.zeros(4096, 128, dtype=torch.int32)
bench("quantize_affine/int4-g32", lambda: quantize_affine(x2, (1, 32), s4, z4, torch.int8, -8, 7), 4*N)
q4 = quantize_affine(x2, (1, 32), s4, z4, torch.int8, -8, 7)
bench("dequantize_affine/int4-g32", lambda: dequantize_affine(q4, (1, 32), s4, z4, torch.int8, -8, 7), 4*N)
del x, x2, q, qc, qa, q4

xl = torch.randn(64, 128, 512); w = torch.randn(512); b = torch.randn(512)
bench("layer_norm/64x128x512", lambda: torch.ops.aten.native_layer_norm(xl, [512], w, b, 1e-5), 4*xl.numel())
bench("softmax/64x128x512", lambda: torch.softmax(xl, -1), 4*xl.numel())
xp = torch.randn(8, 64, 112, 112)
bench("max_pool2d/8x64x112x112-k3s2p1", lambda: torch.ops.aten.max_pool2d_with_indices(xp, [3, 3], [2, 2], [1, 1]), 4*xp.numel())
xa = torch.randn(8, 64, 56, 56)
bench("avg_pool2d/8x64x56x56-k3s2p1", lambda: torch.ops.aten.avg_pool2d(xa, [3, 3], [2, 2], [1, 1]), 4*xa.numel())
xg = torch.randn(8, 512, 7, 7)
bench("adaptive_avg_pool2d/8x512x7x7-1", lambda: torch.ops.aten.adaptive_avg_pool2d(xg, [1, 1]), 4*xg.numel())

xh = torch.randn(1 << 20)
o = HistogramObserver(dtype=torch.qint8); o(xh)
bench("histogram/observe-same/1M", lambda: o(xh), 4*xh.numel())
st = {}
def fresh():
    st['o'] = HistogramObserver(dtype=torch.qint8); st['o'](xh)
xw = xh * 2
bench("histogram/observe-widen/1M", lambda: st['o'](xw), 4*xh.numel(), setup=fresh)
bench("histogram/qparams/1M", lambda: o.calculate_qparams(), 0)
