# Generates ../elementwise_extra.json (category elementwise_ops, like elementwise_ops.json): torch.erf, pow with
# exponents PyTorch sends to Sleef/glibc powf, and activations on strided (non-dense) inputs, whose every element
# takes ATen's scalar loop. PyTorch 2.14.1 CPU, ATEN_CPU_CAPABILITY=avx2, one thread.
# Run: /work/shared/oracle/py.sh /tmp/elementwise_extra.py /tmp/elementwise_extra.json (copy this file into the root).
import json, sys

import torch

torch.set_num_threads(1)
g = torch.Generator().manual_seed(20261204)
SPECIALS = [0.0, -0.0, float("inf"), float("-inf"), float("nan"), 1e-45, -3e-39, 3e38, -3e38, 88.72, -104.5, 1.0, -1.0,
            0.5, 9.0, -9.0, 4.0, -4.0, 1e-7]


def tens(t):
    t = t.detach().contiguous().reshape(-1).to(torch.float32) if t.dim() else t.detach().reshape(1)
    return "".join("%08x" % (v & 0xffffffff) for v in t.view(torch.int32).tolist())


def mixed(n, scale=3.0):
    x = torch.randn(n, generator=g) * scale
    if n > 1:
        pos = torch.randperm(n, generator=g)[: min(n // 3 + 1, len(SPECIALS))]
        x[pos] = torch.tensor(SPECIALS)[torch.randperm(len(SPECIALS), generator=g)[: len(pos)]]
    return x.float()


cases = []


def add(cid, op, args, x, out, view=""):
    c = {"id": cid, "split": "public", "op": op, "args": args, "kwargs": {},
         "inputs": [{"dtype": "float32", "shape": list(x.shape), "bits_hex": tens(x)}],
         "expected": {"dtype": "float32", "shape": list(out.shape), "bits_hex": tens(out)}}
    if view:
        c["input_view"] = view
    cases.append(c)


for n in [7, 17, 1000]:
    x = mixed(n)
    add("elementwise_ops/erf/n%d/public" % n, "aten.erf.default", [], x, torch.erf(x))
for e in [-1.5, 0.3, 2.5]:
    x = mixed(1000).abs() * 0.8
    x[::7] = -x[::7]
    add("elementwise_ops/pow_%g/n1000/public" % e, "aten.pow.Tensor_Scalar", [e], x, torch.pow(x, e))
# Strided input: inputs[0][::2] (input_view "s2"), a non-dense view.
base = mixed(602)
xs = base[::2]
for name, op, args, f in [
    ("gelu", "aten.gelu.default", [], torch.nn.functional.gelu),
    ("sigmoid", "aten.sigmoid.default", [], torch.sigmoid),
    ("silu", "aten.silu.default", [], torch.nn.functional.silu),
    ("tanh", "aten.tanh.default", [], torch.tanh),
    ("exp", "aten.exp.default", [], torch.exp),
    ("erf", "aten.erf.default", [], torch.erf),
    ("hardswish", "aten.hardswish.default", [], torch.nn.functional.hardswish),
]:
    add("elementwise_ops/%s/strided_301/public" % name, op, args, base, f(xs), view="s2")
x = torch.randn(6, 19, generator=g) * 3
add("elementwise_ops/softmax/transposed_19x6_d0/public", "aten._softmax.default", [0, False], x, torch.softmax(x.t(), 0), view="t")

doc = {
    "format": "pt2e-oracle-vectors/1",
    "category": "elementwise_ops",
    "split": "public",
    "torch_version": torch.__version__,
    "torch_build": "Debian sid python3-torch, CPU, ATEN_CPU_CAPABILITY=avx2, torch.set_num_threads(1)",
    "producer": "torch.erf, torch.pow, activations on views",
    "args": "as elementwise_ops.json; input_view \"s2\" means the op ran on inputs[0][::2], \"t\" on inputs[0].t()",
    "encoding": "float32 tensors as {dtype, shape, bits_hex}: every element's IEEE-754 binary32 pattern as 8 hex digits, concatenated, row-major",
    "n_cases": len(cases),
    "cases": cases,
}
with open(sys.argv[1], "w") as f:
    json.dump(doc, f, separators=(",", ":"))
    f.write("\n")
print(len(cases), "cases")
