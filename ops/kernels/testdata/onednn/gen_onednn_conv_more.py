"""Generate onednn_conv_more_avx2.json: conv1d and padding="same" convolutions
and 1x1 kernels at batch 16, through PyTorch 2.14.1 + oneDNN 3.12.1 (avx2).

    py.sh gen_onednn_conv_more.py OUT.json

Same data as gen_onednn_conv.py (xorshift32 from the case's seed: input,
weight, then bias; each value ((u >> 8) * 2**-23) - 1). "padding" is a list
of ints or the string "same"; inputs are 3-D for conv1d.
"""
import base64, json, os, subprocess, sys

import torch
import torch.nn.functional as F

torch.set_num_threads(1)

CASES = [
    dict(input=[1, 8, 30], weight=[8, 1, 5], stride=[1], padding=[2], dilation=[1], groups=8, bias=True),
    dict(input=[2, 16, 30], weight=[16, 8, 3], stride=[1], padding=[1], dilation=[1], groups=2, bias=True),
    dict(input=[2, 12, 20], weight=[24, 1, 3], stride=[2], padding=[1], dilation=[1], groups=12, bias=False),
    dict(input=[1, 8, 10, 10], weight=[8, 1, 4, 4], stride=[1, 1], padding="same", dilation=[1, 1], groups=8, bias=True),
    dict(input=[2, 8, 9, 9], weight=[16, 8, 2, 2], stride=[1, 1], padding="same", dilation=[1, 1], groups=1, bias=True),
    dict(input=[16, 32, 3, 3], weight=[16, 32, 1, 1], stride=[1, 1], padding=[0, 0], dilation=[1, 1], groups=1, bias=True),
    dict(input=[16, 136, 2, 2], weight=[8, 136, 1, 1], stride=[1, 1], padding=[0, 0], dilation=[1, 1], groups=1, bias=False),
]


def xs_values(seed, n):
    x = seed & 0xFFFFFFFF or 1
    out = []
    for _ in range(n):
        x ^= (x << 13) & 0xFFFFFFFF
        x ^= x >> 17
        x ^= (x << 5) & 0xFFFFFFFF
        out.append((x >> 8) * 2.0**-23 - 1.0)
    return out


def prod(v):
    p = 1
    for d in v:
        p *= d
    return p


def run(i, cs):
    n_in, n_w = prod(cs["input"]), prod(cs["weight"])
    vals = xs_values(5000 + i, n_in + n_w + cs["weight"][0])
    x = torch.tensor(vals[:n_in], dtype=torch.float32).reshape(cs["input"])
    w = torch.tensor(vals[n_in:n_in + n_w], dtype=torch.float32).reshape(cs["weight"])
    b = torch.tensor(vals[n_in + n_w:], dtype=torch.float32) if cs["bias"] else None
    conv = F.conv1d if len(cs["input"]) == 3 else F.conv2d
    with torch.no_grad():
        return conv(x, w, b, cs["stride"], cs["padding"], cs["dilation"], cs["groups"]).contiguous()


def main():
    if sys.argv[1] == "--child":
        outs = []
        for i, cs in enumerate(CASES):
            print("CASE %d" % i, flush=True)
            y = run(i, cs)
            outs.append(dict(shape=list(y.shape), out=base64.b64encode(y.numpy().astype("<f4").tobytes()).decode()))
            print("END %d" % i, flush=True)
        json.dump(outs, open(sys.argv[2], "w"))
        return
    tmp = "/tmp/onednn_more.out.json"
    log = subprocess.run([sys.executable, __file__, "--child", tmp], env=dict(os.environ, ONEDNN_VERBOSE="1"),
                         capture_output=True, text=True, check=True).stdout
    outs = json.load(open(tmp))
    cur, impls = None, {}
    for line in log.splitlines():
        if line.startswith("CASE "):
            cur = int(line.split()[1])
        elif line.startswith("END "):
            cur = None
        elif cur is not None and ",exec,cpu,convolution," in line:
            impls[cur] = line.split(",")[6]
    cases = []
    for i, cs in enumerate(CASES):
        cs = dict(cs, model="more", seed=5000 + i, impl=impls.get(i, "native"))
        cs.update(outs[i])
        cases.append(cs)
    json.dump({"format": "fxquant-onednn-conv/1", "torch": torch.__version__, "onednn": "3.12.1", "cpu_isa": "avx2",
               "threads": 1, "cases": cases}, open(sys.argv[1], "w"), separators=(",", ":"))


main()
