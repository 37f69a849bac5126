"""Record torchao's X86InductorQuantizer under several configurations on a small model.

Made with the project's oracle (PyTorch 2.14.1 + torchao, AVX2 kernels, one thread):

    ../shared/oracle/py.sh gen_configs.py OUT_DIR

writes OUT_DIR/x86_mix.float.pt2 (torch.export.save of the model below, exported with
torch.export.export(model.eval(), (batches[0],))) and OUT_DIR/configs.json: the 4
calibration batches (float32 bit patterns as hex) and, per configuration, what gen.py
records (annotations, observers, converted graph, constants; same layout), plus the
warnings torchao gave while the quantizer was configured.
"""
import json
import os
import struct
import sys
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.argv, out_dir = sys.argv[:1], sys.argv[1]
import gen  # noqa: E402  the recorder of gen.py (gen.main only runs with arguments)
from torchao.quantization.pt2e.quantizer.x86_inductor_quantizer import (  # noqa: E402
    X86InductorQuantizer,
    get_default_x86_inductor_quantization_config as cfg,
)

torch.manual_seed(17)


class Mix(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.relu1 = nn.ReLU()
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1)
        self.relu2 = nn.ReLU()
        self.conv3 = nn.Conv2d(8, 8, 1)
        self.pool = nn.MaxPool2d(2)
        self.conv4 = nn.Conv2d(8, 8, 1)
        self.hswish = nn.Hardswish()
        self.avg = nn.AvgPool2d(2)
        self.gap = nn.AdaptiveAvgPool2d(1)
        self.fc1 = nn.Linear(16, 16)
        self.frelu = nn.ReLU()
        self.fc2 = nn.Linear(16, 16)
        self.fc3 = nn.Linear(16, 4)

    def forward(self, x):
        x1 = self.relu1(self.conv1(x))
        x2 = self.relu2(self.conv2(x1) + x1)
        x3 = x2 + self.conv3(x2)
        p = self.pool(x3)
        c = torch.cat([p, self.hswish(self.conv4(p))], 1)
        g = self.gap(self.avg(c))
        f = torch.flatten(g, 1)
        h = self.frelu(self.fc1(f))
        h2 = self.fc2(h) + h
        return self.fc3(h2 * h)


def hexs(t):
    return [struct.pack(">f", v).hex() for v in t.flatten().tolist()]


CASES = {
    "static": lambda q: q.set_global(cfg()),
    "dynamic": lambda q: q.set_global(cfg(is_dynamic=True)),
    "reduce_range": lambda q: q.set_global(cfg(reduce_range=True)),
    "global_module_conv2_none": lambda q: q.set_global(cfg()).set_module_name_qconfig("conv2", None),
    "module_fc1_only": lambda q: q.set_module_name_qconfig("fc1", cfg()),
    "module_type_linear_only": lambda q: q.set_module_type_qconfig(nn.Linear, cfg()),
    "global_conv2d_fn_none": lambda q: q.set_global(cfg()).set_function_type_qconfig(F.conv2d, None),
    "global_maxpool_type_none": lambda q: q.set_global(cfg()).set_module_type_qconfig(nn.MaxPool2d, None),
    "global_static_module_dynamic_skipped": lambda q: q.set_global(cfg()).set_module_name_qconfig("fc1", cfg(is_dynamic=True)),
    "module_type_relu_warns": lambda q: q.set_global(cfg()).set_module_type_qconfig(nn.ReLU, None),
}


def main():
    model = Mix().eval()
    batches = [torch.randn(2, 3, 8, 8) for _ in range(4)]
    ep = torch.export.export(model, (batches[0],))
    path = os.path.join(out_dir, "x86_mix.float.pt2")
    torch.export.save(ep, path)
    outs = {"inputs": {"calibration": [{"shape": list(b.shape), "dtype": "float32", "hex": hexs(b)} for b in batches]}}
    res = {"format": "fxquant-x86-configs/2", "torch": torch.__version__, "batches": outs["inputs"]["calibration"], "cases": {}}
    for name, setup in CASES.items():
        print(name, file=sys.stderr, flush=True)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            q = setup(X86InductorQuantizer())
        rec = gen.run_with(path, outs, q)
        rec["warnings"] = [str(x.message) for x in w]
        res["cases"][name] = rec
    res["targets"] = list(gen.TARGETS)
    with open(os.path.join(out_dir, "configs.json"), "w") as fh:
        json.dump(res, fh, separators=(",", ":"), sort_keys=True)
        fh.write("\n")


main()
