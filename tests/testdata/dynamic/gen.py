# Generates the dynamic-shape programs of this folder with real PyTorch 2.14.1
# (the project's oracle: /work/shared/oracle/py.sh gen.py OUTDIR).
# Each model is exported with torch.export.Dim ranges, saved with
# torch.export.save, and run eagerly on recorded inputs of several sizes.
# NAME.pt2 is the archive, NAME.io.json the inputs and outputs (float32
# values as hex bit patterns, as in ../zoo/*.outputs.json).
import json, struct, sys, os
import torch
import torch.nn as nn
from torch.export import Dim

torch.set_num_threads(1)
torch.backends.mha.set_fastpath_enabled(False)
out = sys.argv[1]
os.makedirs(out, exist_ok=True)


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 4, 3, padding=1)
        self.conv2 = nn.Conv2d(4, 4, 3, stride=2, padding=1)
        self.fc = nn.Linear(4 * 4 * 4, 5)

    def forward(self, x):
        x = torch.relu(self.conv1(x))
        x = torch.relu(self.conv2(x))
        x = x.reshape(x.size(0), -1)  # a sym_size node and a SymInt argument
        return self.fc(x)


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        layer = nn.TransformerEncoderLayer(d_model=8, nhead=2, dim_feedforward=16, dropout=0.0, batch_first=True)
        self.enc = nn.TransformerEncoder(layer, num_layers=1, enable_nested_tensor=False)
        self.fc = nn.Linear(8, 3)

    def forward(self, x):
        return self.fc(self.enc(x))


class EncoderFlat(nn.Module):
    """Dynamic batch and sequence length; the head flattens tokens (s0*s1)."""

    def __init__(self):
        super().__init__()
        layer = nn.TransformerEncoderLayer(d_model=8, nhead=2, dim_feedforward=16, dropout=0.0, batch_first=True)
        self.enc = nn.TransformerEncoder(layer, num_layers=1, enable_nested_tensor=False)
        self.fc = nn.Linear(8, 3)

    def forward(self, x):
        b, t, d = x.shape
        y = self.enc(x).reshape(b * t, d)
        y = torch.relu(self.fc(y))
        return y.reshape(b, t, 3)


class Exprs(nn.Module):
    """Sizes that are sympy expressions of the batch: Add, Mul, FloorDiv."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        y = self.fc(x)
        z = torch.cat([y, y[:1]], 0)  # s0 + 1 rows
        w = torch.cat([z, z], 0) * 0.5  # 2*s0 + 2 rows
        p = z[::2]  # every other row: a FloorDiv of s0
        return w, p


def hexes(t):
    return ["%08x" % struct.unpack("<I", struct.pack("<f", v))[0] for v in t.detach().reshape(-1).tolist()]


def rec(t):
    return {"shape": list(t.shape), "dtype": "float32", "hex": hexes(t)}


def run(name, seed, model, example, dims, inputs):
    torch.manual_seed(seed)
    m = model().eval()
    g = torch.Generator().manual_seed(seed * 100 + 1)
    ex = torch.randn(*example, generator=g)
    ep = torch.export.export(m, (ex,), dynamic_shapes={"x": dims})
    p = os.path.join(out, name + ".pt2")
    torch.export.save(ep, p)
    loaded = torch.export.load(p).module()
    cases = []
    with torch.no_grad():
        for shape in inputs:
            x = torch.randn(*shape, generator=g)
            y = m(x)
            ys = y if isinstance(y, tuple) else (y,)
            ly = loaded(x)
            ly = ly if isinstance(ly, tuple) else (ly,)
            assert len(ly) == len(ys) and all(torch.equal(a, b) for a, b in zip(ly, ys)), name
            cases.append({"input": rec(x), "outputs": [rec(t) for t in ys]})
    with open(os.path.join(out, name + ".io.json"), "w") as f:
        json.dump({"format": "fxquant-dynamic-io/1", "model": name, "torch": torch.__version__, "seed": seed,
                   "range_constraints": {str(k): [int(v.lower), int(v.upper)] for k, v in ep.range_constraints.items()},
                   "cases": cases}, f, indent=1)
    with open(os.path.join(out, name + ".graph.txt"), "w") as f:
        f.write(str(ep.graph_module.code))
    print(name, os.path.getsize(p), ep.range_constraints)


run("cnn_dynamic_batch", 400, CNN, (2, 3, 8, 8), {0: Dim("batch", min=1, max=16)},
    [(1, 3, 8, 8), (3, 3, 8, 8), (16, 3, 8, 8)])
run("encoder_dynamic_batch", 401, Encoder, (2, 4, 8), {0: Dim("batch", min=1, max=16)},
    [(1, 4, 8), (3, 4, 8), (7, 4, 8)])
run("encoder_dynamic_batch_seq", 402, EncoderFlat, (2, 5, 8),
    {0: Dim("batch", min=1, max=8), 1: Dim("seq", min=2, max=12)},
    [(1, 2, 8), (3, 5, 8), (2, 12, 8)])
run("exprs_dynamic_batch", 403, Exprs, (4, 4), {0: Dim("batch", min=3, max=32)},
    [(3, 4), (6, 4), (32, 4)])


class Derived(nn.Module):
    """A derived dimension: the batch is 2*_b (x is [2*s0, 4])."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        return torch.relu(self.fc(x))


_b = Dim("_b", min=1, max=8)
run("derived_dynamic_batch", 404, Derived, (4, 4), {0: 2 * _b},
    [(2, 4), (6, 4), (16, 4)])
