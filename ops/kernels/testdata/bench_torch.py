"""PyTorch's one-thread speed on the shapes of conv_fast_bench_test.go.

Run with the oracle: ../shared/oracle/py.sh bench_torch.py [rounds]
(copy it under the oracle root's /tmp first). Prints, per shape, the best
of `rounds` timings as wall-clock GFLOP/s and process-CPU GFLOP/s (the CPU
figure is the fair one on a loaded machine), and the oneDNN
implementation ONEDNN_VERBOSE names.
"""
import os
import sys
import time

import torch

torch.set_num_threads(1)
torch.manual_seed(0)
rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 5


def bench(name, fn, flops, min_time=0.5):
    fn()
    best_wall, best_cpu = float("inf"), float("inf")
    for _ in range(rounds):
        n = 0
        w0, c0 = time.perf_counter(), time.process_time()
        while True:
            fn()
            n += 1
            w, c = time.perf_counter() - w0, time.process_time() - c0
            if w >= min_time / rounds and n >= 3:
                break
        best_wall, best_cpu = min(best_wall, w / n), min(best_cpu, c / n)
    print(f"{name}: {best_wall*1e3:.3f} ms/op wall, {flops/best_wall/1e9:.2f} GFLOP/s wall, "
          f"{flops/best_cpu/1e9:.2f} GFLOP/s cpu", flush=True)


def conv(name, n, c, hw, o, k, pad, groups):
    x = torch.randn(n, c, hw, hw)
    w = torch.randn(o, c // groups, k, k)
    b = torch.randn(o)
    y = torch.nn.functional.conv2d(x, w, b, padding=pad, groups=groups)
    flops = 2 * y.numel() * (c // groups) * k * k
    with torch.no_grad():
        bench(name, lambda: torch.nn.functional.conv2d(x, w, b, padding=pad, groups=groups), flops)


with torch.no_grad():
    print(f"torch {torch.__version__}, threads {torch.get_num_threads()}, "
          f"ATEN_CPU_CAPABILITY={os.environ.get('ATEN_CPU_CAPABILITY')}, "
          f"cpu capability {torch.backends.cpu.get_cpu_capability()}", flush=True)
    conv("conv2d 3x3 64->64 56x56 b1", 1, 64, 56, 64, 3, 1, 1)
    conv("conv2d 3x3 512->512 7x7 b1", 1, 512, 7, 512, 3, 1, 1)
    conv("depthwise 3x3 64ch 56x56 b1", 1, 64, 56, 64, 3, 1, 64)
    conv("conv2d 1x1 64->256 56x56 b16", 16, 64, 56, 256, 1, 0, 1)
    conv("conv2d 1x1 64->256 56x56 b1 (native)", 1, 64, 56, 256, 1, 0, 1)
    x = torch.randn(64, 1024)
    w = torch.randn(1024, 1024)
    b = torch.randn(1024)
    bench("linear 64x1024x1024", lambda: torch.nn.functional.linear(x, w, b), 2 * 64 * 1024 * 1024)
