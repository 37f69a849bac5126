# Generates layout.json: the memory layout (strides) PyTorch 2.14.1 gives the
# results of elementwise ops on non-contiguous inputs, and a Llama attention
# block's chain from the projections to the view after attention. Run in the
# oracle like gen_vectors.py (same hashfill inputs, same record format):
#   /work/shared/oracle/py.sh /tmp/gen_layout.py /tmp/layout.json
import json, sys
import torch

torch.set_num_threads(1)
exec(open(__file__.replace("gen_layout.py", "gen_vectors.py")).read().split("# scaled_dot_product_attention")[0])

calls = []


def call(target, ins, args, outs):
    if not isinstance(outs, (list, tuple)):
        outs = [outs]
    calls.append({"target": target, "inputs": ins, "args": args, "outs": [rec(o) for o in outs]})


A = torch.ops.aten
s0, x0 = inp(3000, [2, 6, 5])
s1, x1 = inp(3001, [5, 6])
sp = dict(s0, transpose=[1, 2])
xt = x0.transpose(1, 2)
call("aten.mul.Tensor", [sp, s1], [{"t": 0}, {"t": 1}], A.mul.Tensor(xt, x1))
s3, x3 = inp(3003, [5, 2, 6])
call("aten.add.Tensor", [sp, dict(s3, transpose=[0, 1])], [{"t": 0}, {"t": 1}], A.add.Tensor(xt, x3.transpose(0, 1)))
call("aten.sub.Tensor", [sp, s1], [{"t": 1}, {"t": 0}], A.sub.Tensor(x1, xt))
call("aten.mul.Tensor", [sp], [{"t": 0}, -1.0], A.mul.Tensor(xt, -1.0))
call("aten.relu.default", [sp], [{"t": 0}], A.relu.default(xt))
# Convolutions on a channels-last input (ConvNeXt's depthwise conv after
# the permute back from [N, H, W, C]) or weight give channels-last results.
sc4, xc4 = inp(3020, [1, 6, 5, 8])
xcl = xc4.permute(0, 3, 1, 2)
scw, cw = inp(3021, [8, 1, 3, 3], -0.5, 1.0)
call("aten.conv2d.default", [dict(sc4, permute=[0, 3, 1, 2]), scw], [{"t": 0}, {"t": 1}, None, [1, 1], [1, 1], [1, 1], 8],
     A.conv2d.default(xcl, cw, None, [1, 1], [1, 1], [1, 1], 8))
scx, xcx = inp(3022, [1, 4, 5, 5])
scw2, cw2 = inp(3023, [3, 3, 3, 4], -0.5, 1.0)
call("aten.conv2d.default", [scx, dict(scw2, permute=[0, 3, 1, 2])], [{"t": 0}, {"t": 1}],
     A.conv2d.default(xcx, cw2.permute(0, 3, 1, 2)))
# group_norm keeps a channels-last input's layout (its values take another
# summation order there, which the kernels do not reproduce).
sgn, xgn = inp(3030, [1, 5, 5, 48])
sgw, gw = inp(3031, [48], 0.5, 1.0)
sgb, gb = inp(3032, [48], -0.2, 0.4)
call("aten.group_norm.default", [dict(sgn, permute=[0, 3, 1, 2]), sgw, sgb], [{"t": 0}, 8, {"t": 1}, {"t": 2}, 1e-5, True],
     A.group_norm.default(xgn.permute(0, 3, 1, 2), 8, gw, gb, 1e-5, True))
# Pooling and batch_norm keep a channels-last input's layout too.
spl, xpl = inp(3040, [1, 9, 9, 8])
xplc = xpl.permute(0, 3, 1, 2)
spc = dict(spl, permute=[0, 3, 1, 2])
call("aten.max_pool2d.default", [spc], [{"t": 0}, [3, 3], [2, 2], [1, 1]], A.max_pool2d.default(xplc, [3, 3], [2, 2], [1, 1]))
call("aten.avg_pool2d.default", [spc], [{"t": 0}, [3, 3], [2, 2], [1, 1]], A.avg_pool2d.default(xplc, [3, 3], [2, 2], [1, 1]))
call("aten.adaptive_avg_pool2d.default", [spc], [{"t": 0}, [3, 4]], A.adaptive_avg_pool2d.default(xplc, [3, 4]))
call("aten.adaptive_avg_pool2d.default", [spc], [{"t": 0}, [1, 1]], A.adaptive_avg_pool2d.default(xplc, [1, 1]))
sbm, bm = inp(3041, [8], -0.5, 1.0)
sbv, bv = inp(3042, [8], 0.5, 1.0)
call("aten._native_batch_norm_legit_no_training.default", [spc, sbv, sbm, sbm, sbv], [{"t": 0}, {"t": 1}, {"t": 2}, {"t": 3}, {"t": 4}, 0.1, 1e-5],
     A._native_batch_norm_legit_no_training.default(xplc, bv, bm, bm, bv, 0.1, 1e-5)[0])
call("aten.batch_norm.default", [spc, sbv, sbm, sbm, sbv], [{"t": 0}, {"t": 1}, {"t": 2}, {"t": 3}, {"t": 4}, False, 0.1, 1e-5, True],
     A.batch_norm.default(xplc, bv, bm, bm, bv, False, 0.1, 1e-5, True))
# Llama attention: q, k, v projections [1, 16, 64] viewed as heads and
# transposed, rotary embedding (x*cos + rotate_half(x)*sin, rotate_half
# with mul by -1 for neg), causal SDPA, transpose back and view.
chain = {"inputs": [], "steps": []}
sl = [inp(3010 + i, [1, 16, 64]) for i in range(3)]
sc, cos = inp(3013, [16, 16])
ss, sin = inp(3014, [16, 16])
chain["inputs"] = [s for s, _ in sl] + [sc, ss]
vals = [t for _, t in sl] + [cos, sin]


def step(target, args, fn):
    chain["steps"].append({"target": target, "args": args})
    r = fn(*[vals[a["v"]] if isinstance(a, dict) else a for a in args])
    vals.append(r)
    return len(vals) - 1


def rope(x):
    a = step("aten.mul.Tensor", [{"v": x}, {"v": 3}], A.mul.Tensor)
    s1_ = step("aten.slice.Tensor", [{"v": x}, 3, 8, 9223372036854775807, 1], A.slice.Tensor)
    s2_ = step("aten.slice.Tensor", [{"v": x}, 3, 0, 8, 1], A.slice.Tensor)
    n = step("aten.mul.Tensor", [{"v": s1_}, -1.0], A.mul.Tensor)
    c = step("aten.cat.default", [[{"v": n}, {"v": s2_}], -1], lambda l, d: A.cat.default([vals[i["v"]] for i in l], d))
    b = step("aten.mul.Tensor", [{"v": c}, {"v": 4}], A.mul.Tensor)
    return step("aten.add.Tensor", [{"v": a}, {"v": b}], A.add.Tensor)


heads = []
for i in range(3):
    v = step("aten.view.default", [{"v": i}, [1, 16, 4, 16]], A.view.default)
    heads.append(step("aten.transpose.int", [{"v": v}, 1, 2], A.transpose.int))
q, k = rope(heads[0]), rope(heads[1])
o = step("aten.scaled_dot_product_attention.default", [{"v": q}, {"v": k}, {"v": heads[2]}, None, 0.0, True], A.scaled_dot_product_attention.default)
t = step("aten.transpose.int", [{"v": o}, 1, 2], A.transpose.int)
step("aten.view.default", [{"v": t}, [1, 16, 64]], A.view.default)
chain["outs"] = [rec(vals[i]) for i in range(5, len(vals))]
for r in chain["outs"][:-1]:
    del r["hex"]  # intermediate results: shape and strides only
json.dump({"format": "fxquant-struct-layout/1", "torch": torch.__version__,
           "capability": torch.backends.cpu.get_cpu_capability(), "calls": calls, "llama_chain": chain},
          open(sys.argv[1], "w"), separators=(",", ":"))
print(len(calls), "calls,", len(chain["steps"]), "chain steps")
