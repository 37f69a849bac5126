"""Time torchao's whole PT2E flow on the zoo CNNs at 224x224 and on the encoder.

Issue 15's goal: `fxquant run` faster than torchao's whole flow on every zoo
CNN and the encoder at 224x224 inputs with 32 calibration batches. This
script makes the torchao side of that comparison (speed224.txt has the
table). Run it with the project's oracle (PyTorch 2.14.1 + torchao):

    ../shared/oracle/py.sh /tmp/zoo224/speed224.py export DIR
        builds each CNN as ../README.md describes (seed 200 + i, num_classes=10,
        mobilenet_v3_large with width_mult=0.5, the BatchNorm conditioning),
        exports it at [1, 3, 224, 224] with torch.export.export and saves
        DIR/NAME.float224.pt2 (not committed: 4-21 MB each).
    ../shared/oracle/py.sh /tmp/zoo224/speed224.py time FILE.pt2 THREADS [tokens]
        times torchao's flow on FILE.pt2 in this one process and prints one
        JSON line. THREADS 0 keeps torch's default thread count.

The timed flow: torch.export.load, prepare_pt2e(exported.module(),
XNNPACKQuantizer().set_global(get_symmetric_quantization_config(
is_per_channel=True))), 32 calibration batches under torch.no_grad()
(torch.randn(1, 3, 224, 224), or torch.randint(0, 100, (1, 16)) for the
encoder), convert_pt2e(prepared, fold_quantize=True), then
torch.export.export of the converted model and torch.export.save. Wall
seconds come from time.perf_counter and CPU seconds from time.process_time
(all of the process's threads), both around the flow only: the Python and
torch import (about 10 s here) is not counted.
"""
import json
import os
import sys
import time

import torch
import torchao.quantization.pt2e.quantize_pt2e  # noqa: F401  registers quantized_decomposed before export.load
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e
from torchao.testing.pt2e._xnnpack_quantizer import XNNPACKQuantizer, get_symmetric_quantization_config

CNNS = [  # (stem, builder, seed) as in ../README.md "Models" and "Provenance"
    ("mobilenet_v3_large", lambda tv: tv.models.mobilenet_v3_large(weights=None, num_classes=10, width_mult=0.5), 200),
    ("mnasnet0_5", lambda tv: tv.models.mnasnet0_5(weights=None, num_classes=10), 201),
    ("regnet_x_400mf", lambda tv: tv.models.regnet_x_400mf(weights=None, num_classes=10), 202),
    ("shufflenet_v2_x1_0", lambda tv: tv.models.shufflenet_v2_x1_0(weights=None, num_classes=10), 203),
]
CALIB = 32


def condition(model, seed, shape):
    """The README's conditioning: norm affine params, re-estimated BatchNorm stats."""
    g = torch.Generator().manual_seed(seed + 7)
    for m in model.modules():
        if isinstance(m, torch.nn.Linear) and not m.weight.detach().any():
            m.reset_parameters()
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, (torch.nn.BatchNorm2d, torch.nn.LayerNorm)) and m.weight is not None:
                m.weight.copy_(0.5 + torch.rand(m.weight.shape, generator=g))
                m.bias.copy_(0.2 * torch.randn(m.bias.shape, generator=g))
    bns = [m for m in model.modules() if isinstance(m, torch.nn.BatchNorm2d)]
    moms = [m.momentum for m in bns]
    for m in bns:
        m.reset_running_stats()
        m.momentum = None
    model.train()
    with torch.no_grad():
        for _ in range(4):
            model(torch.randn((8,) + tuple(shape[1:]), generator=g))
    for m, mom in zip(bns, moms):
        m.momentum = mom
    model.eval()


def export_all(out):
    import torchvision as tv

    torch.set_num_threads(1)
    os.makedirs(out, exist_ok=True)
    shape = (1, 3, 224, 224)
    for stem, build, seed in CNNS:
        torch.manual_seed(seed)
        model = build(tv)
        condition(model, seed, shape)
        x = torch.randn(shape, generator=torch.Generator().manual_seed(seed * 100 + 1))
        ep = torch.export.export(model.eval(), (x,))
        path = os.path.join(out, stem + ".float224.pt2")
        torch.export.save(ep, path)
        n = sum(1 for _ in ep.graph.nodes)
        print(json.dumps({"model": stem, "file": path, "bytes": os.path.getsize(path), "nodes": n}), flush=True)


def time_flow(path, threads, tokens):
    if threads > 0:
        torch.set_num_threads(threads)
    g = torch.Generator().manual_seed(1)
    if tokens:
        batches = [torch.randint(0, 100, (1, 16), generator=g) for _ in range(CALIB)]
    else:
        batches = [torch.randn(1, 3, 224, 224, generator=g) for _ in range(CALIB)]
    out = path + ".torchao.pt2"
    steps = {}
    w0, c0 = time.perf_counter(), time.process_time()

    def mark(name, w, c):
        steps[name] = round(time.perf_counter() - w, 4)
        return time.perf_counter(), time.process_time()

    w, c = w0, c0
    ep = torch.export.load(path)
    w, c = mark("load", w, c)
    quantizer = XNNPACKQuantizer().set_global(get_symmetric_quantization_config(is_per_channel=True))
    prepared = prepare_pt2e(ep.module(), quantizer)
    w, c = mark("prepare", w, c)
    with torch.no_grad():
        for x in batches:
            prepared(x)
    w, c = mark("calibrate", w, c)
    converted = convert_pt2e(prepared, fold_quantize=True)
    w, c = mark("convert", w, c)
    ep2 = torch.export.export(converted, (batches[0],))
    w, c = mark("export", w, c)
    torch.export.save(ep2, out)
    w, c = mark("save", w, c)
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    os.remove(out)
    print(json.dumps({"file": os.path.basename(path), "threads": torch.get_num_threads(), "wall_s": round(wall, 3),
                      "cpu_s": round(cpu, 3), "steps_wall_s": steps}), flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "export":
        export_all(sys.argv[2])
    elif sys.argv[1] == "time":
        time_flow(sys.argv[2], int(sys.argv[3]), len(sys.argv) > 4 and sys.argv[4] == "tokens")
    else:
        sys.exit("usage: speed224.py export DIR | time FILE.pt2 THREADS [tokens]")
