# aten.gru.input cases for ops/kernels.GRU, made with the project's oracle
# (PyTorch 2.14.1, CPU, ATEN_CPU_CAPABILITY=avx2, one thread):
#   /work/shared/oracle/py.sh gen.py OUT.json
# Each case: torch.manual_seed(seed), nn.GRU(in, hidden, num_layers,
# bias, batch_first), x and h0 from torch.randn, then torch.ops.aten.gru.input
# with the module's flat weights in eval mode. Float32 tensors as hex bit
# patterns (8 hex digits, big-endian text of the IEEE bits).
import json, struct, sys
import torch

torch.set_num_threads(1)


def T(t):
    t = t.detach().contiguous()
    return {"shape": list(t.shape), "dtype": "float32",
            "hex": ["%08x" % struct.unpack("<I", struct.pack("<f", v))[0] for v in t.reshape(-1).tolist()]}


cases = []
for seed, (inp, hid, layers, bias, bf, batch, seq) in enumerate([
        (4, 5, 1, True, True, 1, 3),
        (4, 5, 2, True, True, 3, 4),
        (6, 20, 1, True, False, 2, 5),
        (3, 9, 2, False, False, 4, 2),
        (8, 16, 1, True, True, 5, 3)]):
    torch.manual_seed(100 + seed)
    m = torch.nn.GRU(inp, hid, layers, bias=bias, batch_first=bf).eval()
    x = torch.randn(batch, seq, inp) if bf else torch.randn(seq, batch, inp)
    h0 = torch.randn(layers, batch, hid)
    with torch.no_grad():
        out, hy = torch.ops.aten.gru.input(x, h0, m._flat_weights, bias, layers, 0.0, False, False, bf)
        ref, refh = m(x, h0)
    assert torch.equal(out, ref) and torch.equal(hy, refh)
    cases.append({"input_size": inp, "hidden_size": hid, "num_layers": layers, "bias": bias, "batch_first": bf,
                  "input": T(x), "hx": T(h0), "params": [T(p) for p in m._flat_weights],
                  "output": T(out), "hy": T(hy)})
with open(sys.argv[1], "w") as f:
    json.dump({"torch": torch.__version__, "cases": cases}, f, separators=(",", ":"))
    f.write("\n")
print(len(cases), "cases")
