# Generates vectors.json: PyTorch 2.14.1 CPU results (ATEN_CPU_CAPABILITY=avx2,
# one thread) for the structural, reduction, normalisation and attention
# kernels. Run inside the oracle: /work/shared/oracle/py.sh gen_vectors.py OUT.
#
# Inputs are not stored: every input tensor is filled by hashfill(seed, n),
# an integer hash mapped to floats k/2^22 - 2 in [-2, 2), exact in float32,
# which the Go test recomputes. Outputs are stored as float32 bit patterns
# (8 hex digits each, concatenated), with their shape and strides.
import json, sys
import torch
import torch.nn.functional as F

torch.set_num_threads(1)
M = 0xFFFFFFFF


def hashfill(seed, shape, lo=-2.0, span=4.0):
    n = 1
    for s in shape:
        n *= s
    vals = []
    for i in range(n):
        h = (seed * 0x9E3779B1 + i * 0x85EBCA77 + 0x165667B1) & M
        h ^= h >> 15
        h = (h * 0x2C1B3C6D) & M
        h ^= h >> 12
        h = (h * 0x297A2D39) & M
        h ^= h >> 15
        vals.append((h >> 8) / float(1 << 24) * span + lo)
    return torch.tensor(vals, dtype=torch.float32).reshape(shape)


def hexs(t):
    t = t.detach().contiguous().to(torch.float32)
    return t.view(torch.int32).flatten().numpy().astype("<u4").tobytes().hex()


def rec(t):
    return {"shape": list(t.shape), "strides": list(t.stride()), "hex": "".join(
        "%08x" % v for v in t.detach().contiguous().view(torch.int32).flatten().numpy().astype("uint32").tolist())}


cases = []


def add(op, params, inputs, out):
    cases.append({"op": op, "params": params, "inputs": inputs, "out": rec(out)})


def inp(seed, shape, layout=None, lo=-2.0, span=4.0):
    """An input spec and its tensor. layout "tBHLE" makes a [B,H,L,E]
    tensor stored as [B,L,H,E] (view + transpose, llama's q/k/v)."""
    spec = {"seed": seed, "shape": shape, "lo": lo, "span": span}
    if layout == "tBHLE":
        B, H, L, E = shape
        t = hashfill(seed, [B, L, H, E], lo, span).transpose(1, 2)
        spec["layout"] = layout
    else:
        t = hashfill(seed, shape, lo, span)
    return spec, t


# scaled_dot_product_attention
sdpa = [
    # name, q shape, kv len, Ev, layout, kwargs
    ("llama_causal", [1, 4, 16, 16], 16, "tBHLE", dict(is_causal=True)),
    ("bert", [1, 4, 16, 8], 16, None, {}),
    ("odd_fmask2d", [2, 3, 7, 5], 9, None, dict(mask=("f", [7, 9]))),
    ("odd_bmask4d", [2, 3, 7, 5], 9, None, dict(mask=("b", [2, 1, 7, 9]))),
    ("scale", [1, 2, 9, 12], 11, None, dict(scale=0.3)),
    ("causal_rect", [1, 2, 5, 8], 13, None, dict(is_causal=True)),
    ("two_kv_blocks", [1, 1, 200, 8], 520, None, {}),
    ("causal_long", [1, 1, 520, 4], 520, None, dict(is_causal=True)),
    ("masked_row", [1, 1, 4, 8], 6, None, dict(mask=("b0", [4, 6]))),
    ("three_d", [3, 5, 8], 7, None, {}),
]
for si, (name, qs, S, layout, kw) in enumerate(sdpa):
    ks = list(qs)
    ks[-2] = S
    sq, q = inp(100 + 3 * si, qs, layout)
    sk, k = inp(101 + 3 * si, ks, layout)
    sv, v = inp(102 + 3 * si, ks, layout)
    params = {"name": name, "is_causal": kw.get("is_causal", False)}
    args = {}
    ins = [sq, sk, sv]
    if "scale" in kw:
        params["scale"] = kw["scale"]
        args["scale"] = kw["scale"]
    if "mask" in kw:
        kind, ms = kw["mask"]
        sm, m = inp(900 + si, ms)
        if kind == "b":
            m = m > -1.0
            params["mask"] = "bool_gt_-1"
        elif kind == "b0":
            m = m > -1.0
            m[1, :] = False
            params["mask"] = "bool_gt_-1_row1_false"
        else:
            params["mask"] = "float"
        ins.append(sm)
        args["attn_mask"] = m
    o = F.scaled_dot_product_attention(q, k, v, is_causal=params["is_causal"], **args)
    add("sdpa", params, ins, o)

# sum / mean over dims
red = [
    ([1, 16, 32], [-1], True), ([1, 16, 32], [1], False), ([1, 64, 8, 8], [2, 3], True),
    ([1, 64, 8, 8], [2, 3], False), ([2, 3, 5, 7], [1, 3], False), ([2, 3, 5, 7], [0, 2], True),
    ([300], [0], False), ([4, 1000], [1], False), ([1000, 4], [0], False), ([3, 17, 33], [], False),
    ([1, 1280, 1, 1], [-1, -2], True), ([2, 96, 9, 9], [2, 3], True), ([5, 70, 3], [1], False),
    ([4, 9, 130], [0, 2], False), ([1, 576, 4, 4], [2, 3], True), ([7, 300], [0, 1], False),
]
for ri, (shape, dims, keep) in enumerate(red):
    s, x = inp(300 + ri, shape)
    for opn in ("sum", "mean"):
        f = torch.sum if opn == "sum" else torch.mean
        o = f(x, dims, keepdim=keep) if dims else f(x)
        add(opn, {"dims": dims, "keepdim": keep, "all": not dims}, [s], o)

# layer_norm
for li, (shape, w) in enumerate([([1, 16, 32], 32), ([2, 5, 64], 64), ([4, 100], 100), ([3, 256], 256),
                                  ([2, 384], 384), ([2, 768], 768), ([2, 1000], 1000), ([1, 7, 257], 257)]):
    s, x = inp(500 + li, shape)
    sw, wt = inp(600 + li, [w], 0.5, 1.0)
    sb, b = inp(700 + li, [w], -0.2, 0.4)
    o = F.layer_norm(x, [w], wt, b, 1e-5)
    add("layer_norm", {"eps": 1e-5}, [s, sw, sb], o)

# pooling and friends on odd sizes
for pi, (shape, osz) in enumerate([([1, 8, 7, 7], [1, 1]), ([1, 4, 7, 7], [3, 3]), ([2, 3, 10, 9], [4, 5]), ([1, 2, 5, 5], [7, 7])]):
    s, x = inp(800 + pi, shape)
    add("adaptive_avg_pool2d", {"output_size": osz}, [s], F.adaptive_avg_pool2d(x, osz))
for pi, (shape, k, st, p, ceil) in enumerate([([1, 4, 9, 9], 3, 2, 1, False), ([1, 3, 8, 7], 3, 2, 0, True), ([2, 2, 6, 6], 2, 2, 0, False)]):
    s, x = inp(850 + pi, shape)
    add("max_pool2d", {"k": k, "s": st, "p": p, "ceil": ceil}, [s], F.max_pool2d(x, k, st, p, ceil_mode=ceil))
    add("avg_pool2d", {"k": k, "s": st, "p": p, "ceil": ceil}, [s], F.avg_pool2d(x, k, st, p, ceil_mode=ceil))

json.dump({"format": "fxquant-struct-vectors/1", "torch": torch.__version__,
           "capability": torch.backends.cpu.get_cpu_capability(), "threads": torch.get_num_threads(),
           "cases": cases}, open(sys.argv[1], "w"), separators=(",", ":"))
print(len(cases), "cases")
