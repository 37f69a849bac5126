# One-thread PyTorch 2.14 timings (ATen's AVX2 kernels) for the shapes of
# BenchmarkKNorm and BenchmarkKPool (ops/kernels/kquant_bench_test.go):
# layer_norm, softmax, log_softmax, max/avg/adaptive_avg pooling, each
# allocating its output and (the "into" lines, for BenchmarkKNormInto /
# BenchmarkKPoolInto) through the out= variant into preallocated tensors.
# Run: /work/shared/oracle/py.sh norm_pool_bench.py [reps]
# Prints per case the median wall and process-CPU time of reps runs and
# GB/s from the CPU time (float32 bytes of the input, as the Go benchmarks
# count them). The machine is shared: compare CPU times, and run this
# between rounds of the Go benchmarks.
import sys, time, statistics, torch

torch.set_num_threads(1)
torch.manual_seed(0)
reps = int(sys.argv[1]) if len(sys.argv) > 1 else 15


def bench(name, fn, nbytes):
    fn()
    ts, cs = [], []
    for _ in range(reps):
        t, c = time.perf_counter(), time.process_time()
        fn()
        cs.append(time.process_time() - c)
        ts.append(time.perf_counter() - t)
    m, mc = statistics.median(ts), statistics.median(cs)
    print(f"{name}\twall {m*1e3:.3f} ms\tcpu {mc*1e3:.3f} ms\t{nbytes/mc/1e9:.3f} GB/s", flush=True)


with torch.no_grad():
    print(f"torch {torch.__version__}, threads {torch.get_num_threads()}, "
          f"cpu capability {torch.backends.cpu.get_cpu_capability()}", flush=True)
    xl = torch.randn(64, 128, 512); w = torch.randn(512); b = torch.randn(512)
    bench("layer_norm/64x128x512", lambda: torch.ops.aten.native_layer_norm(xl, [512], w, b, 1e-5), 4*xl.numel())
    bench("softmax/64x128x512", lambda: torch.softmax(xl, -1), 4*xl.numel())
    bench("log_softmax/64x128x512", lambda: torch.log_softmax(xl, -1), 4*xl.numel())
    xc = torch.randn(8, 64, 56, 56)
    bench("softmax_dim1/8x64x56x56", lambda: torch.softmax(xc, 1), 4*xc.numel())
    bench("log_softmax_dim1/8x64x56x56", lambda: torch.log_softmax(xc, 1), 4*xc.numel())
    xp = torch.randn(8, 64, 112, 112)
    bench("max_pool2d/8x64x112x112-k3s2p1", lambda: torch.ops.aten.max_pool2d_with_indices(xp, [3, 3], [2, 2], [1, 1]), 4*xp.numel())
    xa = torch.randn(8, 64, 56, 56)
    bench("avg_pool2d/8x64x56x56-k3s2p1", lambda: torch.ops.aten.avg_pool2d(xa, [3, 3], [2, 2], [1, 1]), 4*xa.numel())
    xg = torch.randn(8, 512, 7, 7)
    bench("adaptive_avg_pool2d/8x512x7x7-1", lambda: torch.ops.aten.adaptive_avg_pool2d(xg, [1, 1]), 4*xg.numel())

    # out= variants: the kernels without the output allocation
    y, m1, r1 = torch.empty_like(xl), torch.empty(64, 128, 1), torch.empty(64, 128, 1)
    bench("into layer_norm/64x128x512", lambda: torch.ops.aten.native_layer_norm.out(xl, [512], w, b, 1e-5, out0=y, out1=m1, out2=r1), 4*xl.numel())
    bench("into softmax/64x128x512", lambda: torch.ops.aten._softmax.out(xl, -1, False, out=y), 4*xl.numel())
    bench("into log_softmax/64x128x512", lambda: torch.ops.aten._log_softmax.out(xl, -1, False, out=y), 4*xl.numel())
    ym, im = torch.empty(8, 64, 56, 56), torch.empty(8, 64, 56, 56, dtype=torch.int64)
    bench("into max_pool2d/8x64x112x112-k3s2p1", lambda: torch.ops.aten.max_pool2d_with_indices.out(xp, [3, 3], [2, 2], [1, 1], [1, 1], False, out=ym, indices=im), 4*xp.numel())
    ya = torch.empty(8, 64, 28, 28)
    bench("into avg_pool2d/8x64x56x56-k3s2p1", lambda: torch.ops.aten.avg_pool2d.out(xa, [3, 3], [2, 2], [1, 1], False, True, None, out=ya), 4*xa.numel())
    yg = torch.empty(8, 512, 1, 1)
    bench("into adaptive_avg_pool2d/8x512x7x7-1", lambda: torch.mean(xg, (-1, -2), keepdim=True, out=yg), 4*xg.numel())
