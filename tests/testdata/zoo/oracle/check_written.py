"""Load the programs fxquant writes for the zoo models in real PyTorch and
compare their outputs with torchao's converted outputs.

Made with the project's oracle (PyTorch 2.14.1 + torchao, AVX2 kernels, one
thread):

    FXQUANT_ZOO_WRITE=/tmp/zoo-written go test ./tests -run TestZooQuantized
    ../shared/oracle/py.sh tests/testdata/zoo/oracle/check_written.py /tmp/zoo-written \
        > tests/testdata/zoo/oracle/check_written.txt

(py.sh runs inside its root: copy the directory and this folder's parent
there, or pass paths the root sees.) For each NAME.MODE.fxquant.pt2 it
prints, per eval input, how many output elements PyTorch computes bit-equal
to fxquant's interpreter on the same program (NAME.MODE.fxquant.json) and to
torchao's recorded converted outputs, the largest absolute differences, and the
largest activation scale (the fixtures' rule allows 4 steps of it).
"""
import json
import os
import struct
import sys

import torch
import torchao.quantization.pt2e.quantize_pt2e  # noqa: F401  registers quantized_decomposed and torchao ops

torch.set_num_threads(1)
here = os.path.dirname(os.path.abspath(__file__))
zoo = os.path.dirname(here)


def tensor(t):
    if t["dtype"] == "float32" and "hex" in t:
        vals = [struct.unpack(">f", bytes.fromhex(h))[0] for h in t["hex"]]
        return torch.tensor(vals, dtype=torch.float32).reshape(t["shape"])
    return torch.tensor(t["values"], dtype=getattr(torch, t["dtype"])).reshape(t["shape"])


def max_scale(ep):
    m = 0.0
    for n in ep.graph.nodes:
        if n.op == "call_function" and "quantize_per_tensor" in str(n.target) and "dequantize" not in str(n.target):
            if isinstance(n.args[1], float):
                m = max(m, n.args[1])
    return m


d = sys.argv[1]
for f in sorted(os.listdir(d)):
    if not f.endswith(".fxquant.pt2"):
        continue
    stem, mode = f.split(".")[:2]
    outs = json.load(open(os.path.join(zoo, stem + ".outputs.json")))
    ep = torch.export.load(os.path.join(d, f))
    fx = json.load(open(os.path.join(d, f.replace(".pt2", ".json"))))
    m = ep.module()
    s = max_scale(ep)
    for i, x in enumerate(outs["inputs"]["eval"]):
        with torch.no_grad():
            y = m(tensor(x))
        want = tensor(outs[mode]["outputs"][i])
        eq = int((y.view(torch.int32) == want.view(torch.int32)).sum())
        diff = float((y - want).abs().max())
        mine = torch.tensor([struct.unpack(">f", bytes.fromhex(h))[0] for h in fx["outputs_hex"][i]]).reshape(y.shape)
        eq_fx = int((y.view(torch.int32) == mine.view(torch.int32)).sum())
        diff_fx = float((y - mine).abs().max())
        print(f"{stem}.{mode} eval {i}: PyTorch on fxquant's program vs fxquant: {eq_fx}/{y.numel()} bit-equal, "
              f"max |diff| {diff_fx:.3g}; vs torchao's recorded outputs: {eq}/{want.numel()} bit-equal, max |diff| {diff:.3g}; "
              f"max activation scale {s:.3g}")
