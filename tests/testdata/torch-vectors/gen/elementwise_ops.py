# Generates ../elementwise_ops.json: PyTorch 2.14.1 CPU (ATEN_CPU_CAPABILITY=avx2, one thread) outputs of the
# elementwise, activation and softmax kernels on inputs that exercise ATen's vector bodies and scalar tails.
# Run: /work/shared/oracle/py.sh /tmp/elementwise_ops.py /tmp/elementwise_ops.json (copy this file into the root).
import json, struct, sys

import torch

torch.set_num_threads(1)
g = torch.Generator().manual_seed(20261203)

SPECIALS = [0.0, -0.0, float("inf"), float("-inf"), float("nan"), 1e-45, -1e-45, 1e-40, -3e-39, 1.1754944e-38,
            3e38, -3e38, 88.72, 88.73, -87.33, -103.0, -104.5, 100.0, 1e-7, -1e-7, 0.5, -0.5, 1.0, -1.0,
            3.0, -3.0, 6.0, -6.0, 8.66, -8.67, 9.0, 20.0, -20.0, 50.0, -50.0, 1e-20, -2.5, 2.5, 0.1, -0.1]


def hexbits32(t):
    t = t.detach().contiguous().reshape(-1).to(torch.float32)
    return "".join("%08x" % (v & 0xffffffff) for v in t.view(torch.int32).tolist())


def tens(t):
    return {"dtype": "float32", "shape": list(t.shape), "bits_hex": hexbits32(t)}


def mixed(n, scale=4.0, specials=True):
    x = torch.randn(n, generator=g) * scale
    u = (torch.rand(n, generator=g) * 2 - 1) * 30
    pick = torch.rand(n, generator=g) < 0.3
    x = torch.where(pick, u, x)
    if specials and n > 1:
        sp = torch.tensor(SPECIALS, dtype=torch.float32)
        pos = torch.randperm(n, generator=g)[: min(n // 3 + 1, len(SPECIALS))]
        x[pos] = sp[torch.randperm(len(SPECIALS), generator=g)[: len(pos)]]
        if n >= 17:  # a special in the scalar tail (n % 16) and in the last full vector
            x[-1] = SPECIALS[n % len(SPECIALS)]
    return x.to(torch.float32)


LENGTHS = [1, 7, 8, 9, 15, 16, 17, 31, 63, 1000]
cases = []


def add(cid, op, args, inputs, out, **extra):
    kwargs = {}
    if isinstance(args, dict):
        args, kwargs = [], args
    c = {"id": cid, "split": "public", "op": op, "args": args, "kwargs": kwargs, "inputs": [tens(i) for i in inputs], "expected": tens(out)}
    c.update(extra)
    cases.append(c)


UNARY = [
    ("relu", "aten.relu.default", [], lambda x: torch.ops.aten.relu.default(x)),
    ("relu_", "aten.relu_.default", [], lambda x: torch.ops.aten.relu_.default(x.clone())),
    ("hardtanh", "aten.hardtanh.default", [], lambda x: torch.ops.aten.hardtanh.default(x)),
    ("hardtanh_0_6", "aten.hardtanh.default", [0.0, 6.0], lambda x: torch.ops.aten.hardtanh.default(x, 0.0, 6.0)),
    ("hardtanh_", "aten.hardtanh_.default", [0.0, 6.0], lambda x: torch.ops.aten.hardtanh_.default(x.clone(), 0.0, 6.0)),
    ("hardswish", "aten.hardswish.default", [], lambda x: torch.ops.aten.hardswish.default(x)),
    ("hardswish_", "aten.hardswish_.default", [], lambda x: torch.ops.aten.hardswish_.default(x.clone())),
    ("hardsigmoid", "aten.hardsigmoid.default", [], lambda x: torch.ops.aten.hardsigmoid.default(x)),
    ("hardsigmoid_", "aten.hardsigmoid_.default", [], lambda x: torch.ops.aten.hardsigmoid_.default(x.clone())),
    ("silu", "aten.silu.default", [], lambda x: torch.ops.aten.silu.default(x)),
    ("silu_", "aten.silu_.default", [], lambda x: torch.ops.aten.silu_.default(x.clone())),
    ("gelu", "aten.gelu.default", [], lambda x: torch.ops.aten.gelu.default(x)),
    ("gelu_tanh", "aten.gelu.default", {"approximate": "tanh"}, lambda x: torch.ops.aten.gelu.default(x, approximate="tanh")),
    ("gelu_", "aten.gelu_.default", [], lambda x: torch.ops.aten.gelu_.default(x.clone())),
    ("sigmoid", "aten.sigmoid.default", [], lambda x: torch.ops.aten.sigmoid.default(x)),
    ("sigmoid_", "aten.sigmoid_.default", [], lambda x: torch.ops.aten.sigmoid_.default(x.clone())),
    ("tanh", "aten.tanh.default", [], lambda x: torch.ops.aten.tanh.default(x)),
    ("tanh_", "aten.tanh_.default", [], lambda x: torch.ops.aten.tanh_.default(x.clone())),
    ("neg", "aten.neg.default", [], lambda x: torch.ops.aten.neg.default(x)),
    ("exp", "aten.exp.default", [], lambda x: torch.ops.aten.exp.default(x)),
    ("sqrt", "aten.sqrt.default", [], lambda x: torch.ops.aten.sqrt.default(x)),
    ("rsqrt", "aten.rsqrt.default", [], lambda x: torch.ops.aten.rsqrt.default(x)),
    ("pow_2", "aten.pow.Tensor_Scalar", [2], lambda x: torch.ops.aten.pow.Tensor_Scalar(x, 2)),
    ("pow_2f", "aten.pow.Tensor_Scalar", [2.0], lambda x: torch.ops.aten.pow.Tensor_Scalar(x, 2.0)),
    ("pow_0.5", "aten.pow.Tensor_Scalar", [0.5], lambda x: torch.ops.aten.pow.Tensor_Scalar(x, 0.5)),
    ("pow_-1", "aten.pow.Tensor_Scalar", [-1], lambda x: torch.ops.aten.pow.Tensor_Scalar(x, -1)),
    ("pow_3", "aten.pow.Tensor_Scalar", [3], lambda x: torch.ops.aten.pow.Tensor_Scalar(x, 3)),
    ("pow_-2", "aten.pow.Tensor_Scalar", [-2], lambda x: torch.ops.aten.pow.Tensor_Scalar(x, -2)),
    ("pow_-0.5", "aten.pow.Tensor_Scalar", [-0.5], lambda x: torch.ops.aten.pow.Tensor_Scalar(x, -0.5)),
    ("pow_1.5", "aten.pow.Tensor_Scalar", [1.5], lambda x: torch.ops.aten.pow.Tensor_Scalar(x, 1.5)),
    ("clamp_", "aten.clamp_.default", [-1.0, 2.0], lambda x: torch.ops.aten.clamp_.default(x.clone(), -1.0, 2.0)),
    ("clone", "aten.clone.default", [], lambda x: torch.ops.aten.clone.default(x)),
    ("dropout_eval", "aten.dropout.default", [0.5, False], lambda x: torch.ops.aten.dropout.default(x, 0.5, False)),
    ("dropout__eval", "aten.dropout_.default", [0.1, False], lambda x: torch.ops.aten.dropout_.default(x.clone(), 0.1, False)),
]

# The 1000-element inputs only for the transcendental ops (the others are exact IEEE arithmetic).
LONG = {"exp", "sigmoid", "silu", "gelu", "gelu_tanh", "tanh", "pow_1.5"}
xs = {n: mixed(n) for n in LENGTHS}
for name, op, args, f in UNARY:
    for n in LENGTHS:
        if n == 1000 and name not in LONG:
            continue
        x = xs[n]
        add("elementwise_ops/%s/n%d/public" % (name, n), op, args, [x], f(x))
    # a transposed (dense, non-contiguous) input: the kernel walks it in memory order
    base = mixed(63).reshape(9, 7)
    xt = base.t()
    add("elementwise_ops/%s/transposed_7x9/public" % name, op, args, [base], f(xt), input_view="t")

# Softmax families: last dim, middle dim (vectorised across the inner size, scalar tail), first dim.
SM = []
for shape, dim in [([1], 0), ([7], 0), ([8], -1), ([17], -1), ([63], 0), ([1000], 0), ([5, 19], -1), ([5, 19], 0),
                   ([2, 9, 3], 1), ([2, 5, 19], 1), ([3, 4, 40], 1), ([2, 3, 4, 5], 2)]:
    n = 1
    for s in shape:
        n *= s
    x = (torch.randn(n, generator=g) * 3).reshape(shape)
    SM.append((shape, dim, x))
x = torch.tensor([0.0, -0.0, float("inf"), 1.0, 2.0, float("-inf"), 88.0, -100.0, 3.0])
SM.append(([9], 0, x))
SM.append(([3, 3], 1, torch.tensor([[float("-inf")] * 3, [float("nan"), 1.0, 2.0], [1e30, -1e30, 0.0]])))
for shape, dim, x in SM:
    tag = "x".join(map(str, shape)) + "_d%d" % dim
    add("elementwise_ops/softmax/%s/public" % tag, "aten._softmax.default", [dim, False], [x], torch.ops.aten._softmax.default(x, dim, False))
    add("elementwise_ops/softmax_int/%s/public" % tag, "aten.softmax.int", [dim], [x], torch.ops.aten.softmax.int(x, dim))
    add("elementwise_ops/log_softmax/%s/public" % tag, "aten._log_softmax.default", [dim, False], [x], torch.ops.aten._log_softmax.default(x, dim, False))

# In-place binary ops (plain IEEE arithmetic, alpha through an FMA).
for n in [7, 17, 63]:
    a, b = mixed(n), mixed(n)
    add("elementwise_ops/add_/n%d/public" % n, "aten.add_.Tensor", [], [a, b], torch.ops.aten.add_.Tensor(a.clone(), b))
    add("elementwise_ops/add_alpha/n%d/public" % n, "aten.add_.Tensor", {"alpha": 0.3}, [a, b], torch.ops.aten.add_.Tensor(a.clone(), b, alpha=0.3))
    add("elementwise_ops/sub_/n%d/public" % n, "aten.sub_.Tensor", [], [a, b], torch.ops.aten.sub_.Tensor(a.clone(), b))
    add("elementwise_ops/mul_/n%d/public" % n, "aten.mul_.Tensor", [], [a, b], torch.ops.aten.mul_.Tensor(a.clone(), b))
    add("elementwise_ops/div_/n%d/public" % n, "aten.div_.Tensor", [], [a, b], torch.ops.aten.div_.Tensor(a.clone(), b))
    add("elementwise_ops/mul_scalar/n%d/public" % n, "aten.mul_.Scalar", [0.7], [a], torch.ops.aten.mul_.Scalar(a.clone(), 0.7))
    add("elementwise_ops/add_scalar/n%d/public" % n, "aten.add_.Scalar", [1.5, 2], [a], torch.ops.aten.add_.Scalar(a.clone(), 1.5, 2))
m, r = mixed(21).reshape(3, 7), mixed(7)
add("elementwise_ops/add_bcast/3x7/public", "aten.add_.Tensor", [], [m, r], torch.ops.aten.add_.Tensor(m.clone(), r))

doc = {
    "format": "pt2e-oracle-vectors/1",
    "category": "elementwise_ops",
    "split": "public",
    "torch_version": torch.__version__,
    "torch_build": "Debian sid python3-torch, CPU, ATEN_CPU_CAPABILITY=avx2, torch.set_num_threads(1)",
    "producer": "torch.ops.aten.<op>(inputs, *args) (in-place ops on a clone of the input)",
    "args": "args are the op's arguments after the input tensors (kwargs by name); input_view \"t\" means the op ran on inputs[0].t()",
    "encoding": "float32 tensors as {dtype, shape, bits_hex}: bits_hex is every element's IEEE-754 binary32 pattern as 8 hex digits, concatenated, row-major",
    "n_cases": len(cases),
    "cases": cases,
}
with open(sys.argv[1], "w") as f:
    json.dump(doc, f, separators=(",", ":"))
    f.write("\n")
print(len(cases), "cases")
