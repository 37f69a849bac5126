"""Generate onednn_conv_avx2.json: PyTorch's convolution backend choice and
oneDNN's float32 results for the convolutions of the zoo CNNs and more shapes.

Run inside the oracle (PyTorch 2.14.1, Debian, oneDNN 3.12.1):
    py.sh gen_onednn_conv.py ZOO_DIR OUT.json
ZOO_DIR holds the zoo's NAME.float.pt2. The script re-runs itself with
ONEDNN_VERBOSE=1 to learn which oneDNN implementation ran for each case.
Data come from xorshift32 (seed per case): input, then weight, then bias,
each value ((u >> 8) * 2**-23) - 1, exactly representable in float32.
"""
import base64, json, os, random, struct, subprocess, sys

import torch
import torch.nn.functional as F

torch.set_num_threads(1)
ZOO = ["mobilenet_v3_large", "mnasnet0_5", "regnet_x_400mf", "shufflenet_v2_x1_0"]


def xs_values(seed, n):
    x = seed & 0xFFFFFFFF or 1
    out = []
    for _ in range(n):
        x ^= (x << 13) & 0xFFFFFFFF
        x ^= x >> 17
        x ^= (x << 5) & 0xFFFFFFFF
        out.append((x >> 8) * 2.0**-23 - 1.0)
    return out, x


def zoo_convs(zoo_dir):
    convs = []
    for name in ZOO:
        ep = torch.export.load(os.path.join(zoo_dir, name + ".float.pt2"))
        gm = ep.module()
        seen = []

        class Rec(torch.fx.Interpreter):
            def call_function(self, target, args, kwargs):
                if target is torch.ops.aten.conv2d.default:
                    a = list(args) + [None] * (7 - len(args))
                    x, w, b = a[0], a[1], a[2]
                    stride = a[3] if a[3] is not None else [1, 1]
                    pad = a[4] if a[4] is not None else [0, 0]
                    dil = a[5] if a[5] is not None else [1, 1]
                    g = a[6] if a[6] is not None else 1
                    seen.append(dict(model=name, input=list(x.shape), weight=list(w.shape),
                                     stride=list(stride), padding=list(pad), dilation=list(dil),
                                     groups=g, bias=b is not None))
                return super().call_function(target, args, kwargs)

        x = torch.randn(1, 3, 32, 32)
        with torch.no_grad():
            Rec(gm).run(x)
        convs += seen
    return convs


def backend(inp, w, stride, pad, dil, groups, bias):
    x = torch.zeros(inp)
    wt = torch.zeros(w)
    b = torch.zeros(w[0]) if bias else None
    nd = len(inp) - 2
    return str(torch._C._select_conv_backend(x, wt, b, stride, pad, dil, False, [0] * nd, groups, None)).split(".")[-1]


def extra_cases():
    c = []
    def add(inp, w, stride=(1, 1), pad=(0, 0), dil=(1, 1), groups=1, bias=False, tag=""):
        c.append(dict(model="extra" + tag, input=list(inp), weight=list(w), stride=list(stride), padding=list(pad),
                      dilation=list(dil), groups=groups, bias=bias))
    # depthwise: bias, batch, strides, dilation, odd channel counts, widths around ur_w
    add([1, 16, 9, 9], [16, 1, 3, 3], pad=(1, 1), groups=16, bias=True)
    add([2, 24, 7, 11], [24, 1, 3, 3], stride=(2, 2), pad=(1, 1), groups=24, bias=True)
    add([1, 13, 10, 10], [13, 1, 5, 5], pad=(2, 2), groups=13, bias=True)
    add([1, 32, 12, 12], [32, 1, 3, 3], pad=(2, 2), dil=(2, 2), groups=32)
    add([1, 8, 5, 17], [8, 1, 7, 7], pad=(3, 3), groups=8, bias=True)
    add([1, 40, 1, 1], [40, 1, 5, 5], pad=(2, 2), groups=40, bias=True)
    add([1, 40, 2, 2], [40, 1, 5, 5], stride=(2, 2), pad=(2, 2), groups=40, bias=True)
    add([1, 24, 3, 3], [24, 1, 5, 5], pad=(2, 2), groups=24, bias=True)
    add([1, 16, 6, 6], [32, 1, 3, 3], pad=(1, 1), groups=16, bias=True)  # channel multiplier 2
    # grouped, several channels per group
    add([1, 32, 6, 6], [32, 16, 3, 3], pad=(1, 1), groups=2, bias=True)
    add([1, 64, 5, 5], [64, 32, 3, 3], pad=(1, 1), groups=2, bias=True)
    add([1, 48, 6, 6], [48, 8, 3, 3], pad=(1, 1), groups=6, bias=True)
    add([1, 24, 6, 6], [24, 4, 3, 3], pad=(1, 1), groups=6)
    add([1, 30, 5, 5], [30, 10, 3, 3], pad=(1, 1), groups=3, bias=True)
    add([2, 32, 8, 8], [64, 16, 3, 3], stride=(2, 2), pad=(1, 1), groups=2, bias=True)
    add([1, 64, 4, 4], [64, 16, 1, 1], groups=4, bias=True)
    # groups = 1 through oneDNN: batch > 1, big inputs, big kernels
    add([2, 16, 8, 8], [16, 16, 3, 3], pad=(1, 1), bias=True)
    add([2, 32, 6, 6], [48, 32, 1, 1], bias=True)
    add([1, 32, 30, 30], [16, 32, 3, 3], pad=(1, 1))
    add([1, 64, 20, 20], [32, 64, 1, 1], stride=(2, 2))
    add([1, 3, 100, 100], [8, 3, 3, 3], stride=(2, 2), pad=(1, 1), bias=True)
    add([1, 8, 12, 12], [16, 8, 5, 5], pad=(2, 2), bias=True)
    add([2, 5, 7, 7], [6, 5, 3, 3], pad=(1, 1), bias=True)
    add([2, 48, 5, 5], [20, 48, 3, 3], bias=True)
    # gemm: jit_dw refuses (left padding beyond its unroll), one or more
    # output channels per group, row and column remainders, K blocks
    add([1, 8, 10, 10], [8, 1, 7, 7], pad=(6, 6), groups=8, bias=True)
    add([1, 6, 12, 12], [6, 1, 11, 11], pad=(5, 5), groups=6)
    add([1, 12, 6, 6], [9, 4, 3, 3], pad=(1, 1), groups=3, bias=True)
    add([1, 24, 5, 5], [16, 12, 3, 3], pad=(1, 1), groups=2, bias=True)
    add([1, 60, 4, 4], [20, 30, 3, 3], pad=(1, 1), groups=2, bias=True)
    add([1, 8, 4, 6], [8, 2, 3, 3], pad=(1, 1), groups=4)
    add([1, 12, 1, 1], [12, 3, 3, 3], pad=(1, 1), groups=4, bias=True)
    add([1, 12, 6, 6], [4, 3, 3, 3], pad=(1, 1), groups=4, bias=True)
    add([1, 20, 9, 9], [35, 4, 3, 3], pad=(1, 1), groups=5, bias=True)
    # jit and jit_1x1: several input-channel blocks, padded channels
    add([2, 32, 5, 5], [32, 8, 1, 1], groups=4, bias=True)
    add([1, 48, 5, 5], [16, 24, 3, 3], pad=(1, 1), groups=2, bias=True)
    add([2, 20, 6, 6], [8, 20, 3, 3], pad=(1, 1), bias=True)
    add([1, 96, 12, 12], [16, 96, 1, 1], stride=(2, 2), bias=True)
    # native cases for reference
    add([1, 16, 8, 8], [8, 16, 3, 3], pad=(1, 1), bias=True)
    add([1, 16, 8, 8], [8, 16, 1, 1], bias=True)
    return c


def run_case(i, cs):
    n_in = 1
    for d in cs["input"]:
        n_in *= d
    n_w = 1
    for d in cs["weight"]:
        n_w *= d
    vals, _ = xs_values(1000 + i, n_in + n_w + cs["weight"][0])
    x = torch.tensor(vals[:n_in], dtype=torch.float32).reshape(cs["input"])
    w = torch.tensor(vals[n_in:n_in + n_w], dtype=torch.float32).reshape(cs["weight"])
    b = torch.tensor(vals[n_in + n_w:], dtype=torch.float32) if cs["bias"] else None
    with torch.no_grad():
        y = F.conv2d(x, w, b, cs["stride"], cs["padding"], cs["dilation"], cs["groups"])
    return y.contiguous()


def child(spec):
    cases = json.load(open(spec))
    outs = []
    for i, cs in enumerate(cases):
        print("CASE %d" % i, flush=True)
        y = run_case(i, cs)
        outs.append(dict(shape=list(y.shape), out=base64.b64encode(y.numpy().astype("<f4").tobytes()).decode()))
        print("END %d" % i, flush=True)
    json.dump(outs, open(spec + ".out", "w"))


def main():
    if sys.argv[1] == "--child":
        child(sys.argv[2])
        return
    zoo_dir, out = sys.argv[1], sys.argv[2]
    convs = zoo_convs(zoo_dir)
    print("zoo convolutions:", len(convs), file=sys.stderr)
    uniq, seen = [], set()
    for cs in convs:
        key = json.dumps({k: v for k, v in cs.items() if k != "model"}, sort_keys=True)
        if key not in seen:
            seen.add(key)
            uniq.append(cs)
    cases = uniq + extra_cases()
    for cs in cases:
        cs["backend"] = backend(cs["input"], cs["weight"], cs["stride"], cs["padding"], cs["dilation"], cs["groups"], cs["bias"])
    spec = "/tmp/onednn_cases.json"
    json.dump(cases, open(spec, "w"))
    env = dict(os.environ, ONEDNN_VERBOSE="1")
    log = subprocess.run([sys.executable, __file__, "--child", spec], env=env, capture_output=True, text=True, check=True).stdout
    outs = json.load(open(spec + ".out"))
    cur, impls = None, {}
    for line in log.splitlines():
        if line.startswith("CASE "):
            cur = int(line.split()[1])
        elif line.startswith("END "):
            cur = None
        elif cur is not None and ",exec,cpu,convolution," in line:
            impls[cur] = line.split(",")[6]
    for i, cs in enumerate(cases):
        cs["impl"] = impls.get(i, "native")
        cs["seed"] = 1000 + i
        cs.update(outs[i])
        if cs["impl"] == "native" and not cs["model"].startswith("extra"):
            del cs["out"]  # ATen's native kernel: the shape and backend are what count here
    # The rule table: PyTorch's backend for many shapes (no data).
    rng = random.Random(7)
    rule = []
    for _ in range(400):
        nd = 2 if rng.random() < 0.85 else 1
        n = rng.choice([1, 1, 1, 2, 15, 16, 17])
        g = rng.choice([1, 1, 1, 2, 4, 3])
        dw = rng.random() < 0.25
        c = rng.choice([1, 3, 4, 8, 16, 24, 32, 64]) * (1 if dw else g)
        if dw:
            g = c
        o = c if dw else rng.choice([1, 4, 8, 16, 32]) * g
        k = [rng.choice([1, 1, 3, 3, 4, 5, 7]) for _ in range(nd)]
        sp = [rng.choice([1, 4, 8, 16, 20, 32, 40, 64, 100]) for _ in range(nd)]
        sp = [max(a, b) for a, b in zip(sp, k)]
        stride = [rng.choice([1, 1, 1, 2]) for _ in range(nd)]
        dil = [rng.choice([1, 1, 1, 1, 2]) for _ in range(nd)]
        sp = [max(a, d * (kk - 1) + 1) for a, d, kk in zip(sp, dil, k)]
        pad = [rng.choice([0, kk // 2]) for kk in k]
        inp = [n, c] + sp
        w = [o, c // g] + k
        rule.append(dict(input=inp, weight=w, stride=stride, padding=pad, dilation=dil, groups=g, bias=False,
                         backend=backend(inp, w, stride, pad, dil, g, False)))
    # thresholds of use_mkldnn's size rule: C*H*W around 20480
    for c, h, wd in [(5, 64, 64), (20, 32, 32), (5, 64, 65), (21, 32, 32), (80, 16, 16), (81, 16, 16)]:
        for k in (1, 3, 4):
            inp, w = [1, c, h, wd], [8, c, k, k]
            rule.append(dict(input=inp, weight=w, stride=[1, 1], padding=[0, 0], dilation=[1, 1], groups=1, bias=False,
                             backend=backend(inp, w, [1, 1], [0, 0], [1, 1], 1, False)))
    doc = {
        "format": "fxquant-onednn-conv/1",
        "torch": torch.__version__,
        "onednn": "3.12.1",
        "cpu_isa": "avx2",
        "threads": torch.get_num_threads(),
        "zoo_count": {m: sum(1 for cs in convs if cs["model"] == m) for m in ZOO},
        "cases": cases,
        "rule": rule,
    }
    json.dump(doc, open(out, "w"), separators=(",", ":"))


main()
