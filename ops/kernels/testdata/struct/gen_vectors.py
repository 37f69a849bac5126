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


# more layer_norm widths, as real encoders have them (rows with an offset
# and a large scale too)
for li, (rows, w, affine) in enumerate([(17, 128, True), (5, 192, True), (6, 384, True), (6, 384, False), (3, 512, True),
                                         (6, 768, True), (4, 1024, True), (3, 3072, True), (3, 1000, False)]):
    s, x = inp(1500 + li, [rows, w])
    x[1] *= 100.0
    x[2] += 50.0
    params = {"eps": 1e-5, "rows_scaled": True}
    if affine:
        sw, wt = inp(1600 + li, [w], 0.5, 1.0)
        sb, b = inp(1700 + li, [w], -0.2, 0.4)
        ins = [s, sw, sb]
    else:
        wt = b = None
        ins = [s]
    add("layer_norm", params, ins, F.layer_norm(x.clone(), [w], wt, b, 1e-5))

# mean over the spatial dims as CNN heads and squeeze-excitation blocks do
for mi, (shape, dims, keep) in enumerate([([1, 960, 2, 2], [2, 3], True), ([1, 1024, 1, 1], [2, 3], False),
                                          ([1, 232, 4, 4], [-1, -2], True), ([2, 40, 7, 7], [2, 3], True)]):
    s, x = inp(1800 + mi, shape)
    add("mean", {"dims": dims, "keepdim": keep, "all": False}, [s], torch.mean(x, dims, keepdim=keep))

# calls through the op registry: target, arguments ({"t": k} is input k),
# and every result with its strides
calls = []


def call(target, ins, args, outs):
    if not isinstance(outs, (list, tuple)):
        outs = [outs]
    calls.append({"target": target, "inputs": ins, "args": args, "outs": [rec(o) for o in outs]})


A = torch.ops.aten
s0, x0 = inp(2000, [2, 6, 5])
call("aten.chunk.default", [s0], [{"t": 0}, 4, 1], A.chunk.default(x0, 4, 1))
call("aten.chunk.default", [s0], [{"t": 0}, 3, -1], A.chunk.default(x0, 3, -1))
call("aten.split.Tensor", [s0], [{"t": 0}, 4, 1], A.split.Tensor(x0, 4, 1))
call("aten.split_with_sizes.default", [s0], [{"t": 0}, [1, 0, 5], 1], A.split_with_sizes.default(x0, [1, 0, 5], 1))
call("aten.unbind.int", [s0], [{"t": 0}, 2], A.unbind.int(x0, 2))
call("aten.unflatten.int", [s0], [{"t": 0}, 1, [2, -1]], A.unflatten.int(x0, 1, [2, -1]))
s1, x1 = inp(2001, [2, 6, 5])
s2, x2 = inp(2002, [2, 6, 5])
call("aten.stack.default", [s0, s1, s2], [[{"t": 0}, {"t": 1}, {"t": 2}], 1], A.stack.default([x0, x1, x2], 1))
call("aten.stack.default", [s0, s1], [[{"t": 0}, {"t": 1}], -1], A.stack.default([x0, x1], -1))
call("aten.cat.default", [s0, s1], [[{"t": 0}, {"t": 1}], -1], A.cat.default([x0, x1], -1))
call("aten.select.int", [s0], [{"t": 0}, 1, -2], A.select.int(x0, 1, -2))
call("aten.slice.Tensor", [s0], [{"t": 0}, 2, 3, 9223372036854775807, 1], A.slice.Tensor(x0, 2, 3, 9223372036854775807, 1))
call("aten.slice.Tensor", [s0], [{"t": 0}, 1, 1, -1, 2], A.slice.Tensor(x0, 1, 1, -1, 2))
call("aten.permute.default", [s0], [{"t": 0}, [2, 0, 1]], A.permute.default(x0, [2, 0, 1]))
call("aten.transpose.int", [s0], [{"t": 0}, 0, 2], A.transpose.int(x0, 0, 2))
call("aten.unsqueeze.default", [s0], [{"t": 0}, -1], A.unsqueeze.default(x0, -1))
call("aten.unsqueeze.default", [s0], [{"t": 0}, 1], A.unsqueeze.default(x0, 1))
call("aten.flatten.using_ints", [s0], [{"t": 0}, 1, 2], A.flatten.using_ints(x0, 1, 2))
call("aten.expand.default", [s0], [{"t": 0}, [3, -1, -1, -1]], A.expand.default(x0, [3, -1, -1, -1]))
xt = x0.transpose(1, 2)
call("aten.clone.default", [dict(s0, transpose=[1, 2])], [{"t": 0}], A.clone.default(xt))
call("aten.contiguous.default", [dict(s0, transpose=[1, 2])], [{"t": 0}], A.contiguous.default(xt))
call("aten.reshape.default", [dict(s0, transpose=[1, 2])], [{"t": 0}, [2, 30]], A.reshape.default(xt, [2, 30]))
call("aten.view.default", [dict(s0, transpose=[0, 1])], [{"t": 0}, [3, 2, 2, 5]], A.view.default(x0.transpose(0, 1), [3, 2, 2, 5]))
sq, xq = inp(2003, [2, 1, 3, 1])
call("aten.squeeze.dims", [sq], [{"t": 0}, [1, 3]], A.squeeze.dims(xq, [1, 3]))
call("aten.squeeze.dim", [sq], [{"t": 0}, -1], A.squeeze.dim(xq, -1))
call("aten.squeeze.default", [sq], [{"t": 0}], A.squeeze.default(xq))
# A Llama block's attention output: transpose back and view without a copy.
sq4 = inp(2004, [1, 4, 16, 16], "tBHLE")
sk4 = inp(2005, [1, 4, 16, 16], "tBHLE")
sv4 = inp(2006, [1, 4, 16, 16], "tBHLE")
o = A.scaled_dot_product_attention.default(sq4[1], sk4[1], sv4[1], None, 0.0, True)
call("aten.scaled_dot_product_attention.default", [sq4[0], sk4[0], sv4[0]], [{"t": 0}, {"t": 1}, {"t": 2}, None, 0.0, True], o)
# embedding, norms, pooling and transposed convolution
sw_, w_ = inp(2010, [11, 6])
idx = torch.tensor([[3, 0, 10], [7, 7, 1]])
call("aten.embedding.default", [sw_, {"ints": idx.flatten().tolist(), "shape": [2, 3]}], [{"t": 0}, {"t": 1}], A.embedding.default(w_, idx))
sg, xg = inp(2011, [2, 32, 5, 5])
sgw, gw = inp(2012, [32], 0.5, 1.0)
sgb, gb = inp(2013, [32], -0.2, 0.4)
call("aten.group_norm.default", [sg, sgw, sgb], [{"t": 0}, 8, {"t": 1}, {"t": 2}, 1e-5, True], A.group_norm.default(xg, 8, gw, gb, 1e-5, True))
sg2, xg2 = inp(2014, [1, 6, 9, 7])
call("aten.group_norm.default", [sg2], [{"t": 0}, 3, None, None, 1e-5, True], A.group_norm.default(xg2, 3, None, None, 1e-5, True))
sbx, bx = inp(2015, [2, 16, 5, 5])
srm, rm = inp(2016, [16], -0.5, 1.0)
srv, rv = inp(2017, [16], 0.5, 1.0)
call("aten._native_batch_norm_legit_no_training.default", [sbx, sgw, sgb, srm, srv] if False else [sbx, srm, srv, srm, srv],
     [{"t": 0}, {"t": 1}, {"t": 2}, {"t": 3}, {"t": 4}, 0.1, 1e-5],
     A._native_batch_norm_legit_no_training.default(bx, rm, rv, rm, rv, 0.1, 1e-5)[0])
sa, xa = inp(2018, [1, 3, 11, 9])
for osz in ([1, 1], [2, 3], [5, 4], [11, 9], [13, 10]):
    call("aten.adaptive_avg_pool2d.default", [sa], [{"t": 0}, osz], A.adaptive_avg_pool2d.default(xa, osz))
call("aten.max_pool2d.default", [sa], [{"t": 0}, [3, 3], [2, 2], [1, 1], [1, 1], True], A.max_pool2d.default(xa, [3, 3], [2, 2], [1, 1], [1, 1], True))
call("aten.avg_pool2d.default", [sa], [{"t": 0}, [3, 2], [2, 1], [1, 0], False, False, None], A.avg_pool2d.default(xa, [3, 2], [2, 1], [1, 0], False, False, None))
for ci, (xs, ws, st, pd, op, g, dl, bias) in enumerate([
        ([1, 4, 5, 5], [4, 3, 3, 3], [2, 2], [1, 1], [1, 1], 1, [1, 1], True),
        ([2, 4, 4, 3], [4, 2, 2, 2], [2, 2], [0, 0], [0, 0], 2, [1, 1], False),
        ([1, 8, 6, 6], [8, 8, 4, 4], [2, 2], [1, 1], [0, 0], 1, [1, 1], True),
        ([1, 3, 5, 4], [3, 5, 3, 2], [1, 2], [0, 1], [0, 1], 1, [2, 1], True)]):
    sx, x = inp(2100 + 3 * ci, xs)
    sw2, w2 = inp(2101 + 3 * ci, ws, -0.5, 1.0)
    ins = [sx, sw2]
    args = [{"t": 0}, {"t": 1}, None, st, pd, op, g, dl]
    b2 = None
    if bias:
        sb2, b2 = inp(2102 + 3 * ci, [ws[1] * g], -0.2, 0.4)
        ins.append(sb2)
        args[2] = {"t": 2}
    call("aten.conv_transpose2d.input", ins, args, A.conv_transpose2d.input(x, w2, b2, st, pd, op, g, dl))

json.dump({"format": "fxquant-struct-vectors/1", "torch": torch.__version__,
           "capability": torch.backends.cpu.get_cpu_capability(), "threads": torch.get_num_threads(),
           "cases": cases, "calls": calls}, open(sys.argv[1], "w"), separators=(",", ":"))
print(len(cases), "cases,", len(calls), "calls")
