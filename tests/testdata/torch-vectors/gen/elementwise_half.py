# Generates ../elementwise_half.json (category elementwise_ops): the activations, exp, erf, pow, rsqrt, softmax and log_softmax on
# bfloat16 and float16 inputs. PyTorch 2.14.1 CPU, ATEN_CPU_CAPABILITY=avx2, one thread.
# Run: /work/shared/oracle/py.sh /tmp/elementwise_half.py /tmp/elementwise_half.json (copy this file into the root).
import json, sys

import torch

torch.set_num_threads(1)
g = torch.Generator().manual_seed(20261205)


def tens(t):
    t = t.detach().contiguous().reshape(-1)
    return {"dtype": str(t.dtype).replace("torch.", ""), "shape": None,
            "bits_hex": "".join("%04x" % (v & 0xffff) for v in t.view(torch.int16).tolist())}


cases = []
x32 = torch.randn(203, generator=g) * 3
x32[[5, 50, 100, 190, 200]] = torch.tensor([0.0, -0.0, float("inf"), float("-inf"), -20.0])
for dt in [torch.bfloat16, torch.float16]:
    x = x32.to(dt)
    tag = str(dt).replace("torch.", "")
    for name, op, args, kwargs, f, xin in [
        ("sigmoid", "aten.sigmoid.default", [], {}, torch.sigmoid, x),
        ("silu", "aten.silu.default", [], {}, torch.nn.functional.silu, x),
        ("gelu", "aten.gelu.default", [], {}, torch.nn.functional.gelu, x),
        ("gelu_tanh", "aten.gelu.default", [], {"approximate": "tanh"}, lambda t: torch.nn.functional.gelu(t, approximate="tanh"), x),
        ("tanh", "aten.tanh.default", [], {}, torch.tanh, x),
        ("exp", "aten.exp.default", [], {}, torch.exp, x),
        ("erf", "aten.erf.default", [], {}, torch.erf, x),
        ("hardswish", "aten.hardswish.default", [], {}, torch.nn.functional.hardswish, x),
        ("pow_1.5", "aten.pow.Tensor_Scalar", [1.5], {}, lambda t: torch.pow(t, 1.5), x.abs()),
        ("rsqrt", "aten.rsqrt.default", [], {}, torch.rsqrt, x.abs()),
    ]:
        y = f(xin)
        i, o = tens(xin), tens(y)
        i["shape"], o["shape"] = [203], [203]
        cases.append({"id": "elementwise_ops/%s/%s_n203/public" % (name, tag), "split": "public", "op": op, "args": args,
                      "kwargs": kwargs, "inputs": [i], "expected": o})
    xs = (torch.randn(2, 20, 19, generator=g) * 3).to(dt)
    for d in [0, 1, 2]:
        for name, op, f in [("softmax", "aten._softmax.default", torch.softmax), ("log_softmax", "aten._log_softmax.default", torch.log_softmax)]:
            i, o = tens(xs), tens(f(xs, d))
            i["shape"], o["shape"] = [2, 20, 19], [2, 20, 19]
            cases.append({"id": "elementwise_ops/%s/%s_2x20x19_d%d/public" % (name, tag, d), "split": "public", "op": op,
                          "args": [d, False], "kwargs": {}, "inputs": [i], "expected": o})

doc = {
    "format": "pt2e-oracle-vectors/1",
    "category": "elementwise_ops",
    "split": "public",
    "torch_version": torch.__version__,
    "torch_build": "Debian sid python3-torch, CPU, ATEN_CPU_CAPABILITY=avx2, torch.set_num_threads(1)",
    "producer": "activations, exp, erf, pow, rsqrt, softmax, log_softmax on bfloat16 and float16 tensors",
    "args": "as elementwise_ops.json",
    "encoding": "bfloat16/float16 tensors as {dtype, shape, bits_hex}: every element's 16-bit pattern as 4 hex digits, concatenated, row-major",
    "n_cases": len(cases),
    "cases": cases,
}
with open(sys.argv[1], "w") as f:
    json.dump(doc, f, separators=(",", ":"))
    f.write("\n")
print(len(cases), "cases")
