# Records torchao's prepared and converted graphs for the quantizer configs
# of this folder (NAME.CASE.config.json), with the project's oracle
# (PyTorch 2.14.1, torchao 36027d82d1ad):
#   /work/shared/oracle/py.sh gen.py DIR
# where DIR is this folder inside the oracle root. Each config is read here
# and turned into the torchao calls it stands for (XNNPACKQuantizer's
# set_global / set_module_name / set_module_type / set_operator_type,
# EmbeddingQuantizer, ComposableQuantizer for more than one quantizer), and
# run on NAME's float program (../zoo or ../pt2e) with its recorded
# calibration batches: prepare_pt2e, one call per batch, convert_pt2e
# (fold_quantize=True). Written per case:
#   NAME.CASE.prepared.graph.txt   the prepared GraphModule (../pt2e listing format)
#   NAME.CASE.converted.graph.txt  the converted GraphModule
#   NAME.CASE.expected.json        annotations after annotate, observers after
#                                  calibration (a HistogramObserver's bins as the
#                                  sha256 of their float32 little-endian bytes),
#                                  the converted graph's get_attrs (convert's own
#                                  tensors in full, the model's float parameters
#                                  by shape), outputs on the eval inputs, or the
#                                  error torchao raised.
# Float32 tensors are {"shape", "dtype", "hex"} (bit patterns), others
# {"shape", "dtype", "values"}. Calibration and eval inputs are those of
# NAME.outputs.json in ../zoo or ../pt2e (named by "inputs").
import hashlib, importlib, json, os, struct, sys
import torch
import torchao.quantization.pt2e.quantize_pt2e as qp
from torchao.quantization.pt2e.quantizer.embedding_quantizer import EmbeddingQuantizer
from torchao.quantization.pt2e.quantizer.composable_quantizer import ComposableQuantizer
from torchao.quantization.pt2e.quantizer import QuantizationSpec, SharedQuantizationSpec, DerivedQuantizationSpec, FixedQParamsQuantizationSpec
from torchao.testing.pt2e._xnnpack_quantizer import XNNPACKQuantizer, get_symmetric_quantization_config

torch.set_num_threads(1)
DIR = sys.argv[1]
SRC = {"bert_encoder": "../zoo", "cnn": "../pt2e", "mlp": "../pt2e", "gru": ".", "emb_mlp": "."}


class Ref:
    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return "%" + self.name


def listing(gm):
    lines = []
    for n in gm.graph.nodes:
        args = torch.fx.node.map_arg(tuple(n.args), lambda a: Ref(a.name))
        kwargs = torch.fx.node.map_arg(dict(n.kwargs), lambda a: Ref(a.name))
        lines.append(f"{n.name} | {n.op} | {n.target} | {args!r} | {kwargs!r}")
    return "\n".join(lines) + "\n"


def T(t):
    t = t.detach().contiguous()
    rec = {"shape": list(t.shape), "dtype": str(t.dtype).replace("torch.", "")}
    flat = t.reshape(-1)
    if t.dtype == torch.float32:
        rec["hex"] = ["%08x" % struct.unpack("<I", struct.pack("<f", v))[0] for v in flat.tolist()]
    else:
        rec["values"] = flat.tolist()
    return rec


def from_T(rec):
    if "hex" in rec:
        vals = [struct.unpack("<f", bytes.fromhex(h)[::-1])[0] for h in rec["hex"]]
        return torch.tensor(vals, dtype=torch.float32).reshape(rec["shape"])
    return torch.tensor(rec["values"], dtype=getattr(torch, rec["dtype"])).reshape(rec["shape"])


def config(rec):
    if rec is None:
        return None
    kw = dict(rec)
    fn = kw.pop("function")
    assert fn == "get_symmetric_quantization_config", fn
    return get_symmetric_quantization_config(**kw)


def resolve_type(name):
    mod, _, cls = name.rpartition(".")
    return getattr(importlib.import_module(mod), cls)


def resolve_op(name):
    parts = name.split(".")
    op = getattr(getattr(torch.ops, parts[0]), parts[1])  # an OpOverloadPacket
    return getattr(op, parts[2]) if len(parts) == 3 else op


def quantizer(cfg):
    qs = []
    for e in cfg["quantizers"]:
        if e["quantizer"] == "embedding":
            qs.append(EmbeddingQuantizer())
            continue
        assert e["quantizer"] == "xnnpack"
        q = XNNPACKQuantizer()
        if "set_global" in e:
            q.set_global(config(e["set_global"]))
        for k, v in e.get("set_module_name", {}).items():
            q.set_module_name(k, config(v))
        for k, v in e.get("set_module_type", {}).items():
            q.set_module_type(resolve_type(k), config(v))
        for k, v in e.get("set_operator_type", {}).items():
            q.set_operator_type(resolve_op(k), config(v))
        qs.append(q)
    return qs[0] if len(qs) == 1 else ComposableQuantizer(qs)


def spec_text(s):
    if s is None:
        return None
    if isinstance(s, QuantizationSpec):
        ctr = s.observer_or_fake_quant_ctr
        cls = ctr.p.func.__name__ if hasattr(ctr, "p") else type(ctr).__name__
        return (f"QuantizationSpec(dtype={s.dtype}, qscheme={s.qscheme}, quant_min={s.quant_min}, "
                f"quant_max={s.quant_max}, ch_axis={s.ch_axis}, is_dynamic={s.is_dynamic}, observer={cls})")
    if isinstance(s, SharedQuantizationSpec):
        e = s.edge_or_node
        return f"SharedQuantizationSpec(({e[0].name}, {e[1].name}))" if isinstance(e, tuple) else f"SharedQuantizationSpec({e.name})"
    return type(s).__name__


def annotations(gm):
    out = []
    for n in gm.graph.nodes:
        a = n.meta.get("quantization_annotation")
        if a is None:
            continue
        out.append({"node": n.name,
                    "inputs": [[k.name, spec_text(v)] for k, v in a.input_qspec_map.items()],
                    "output": spec_text(a.output_qspec), "annotated": bool(a._annotated)})
    return out


def observer(o):
    rec = {"class": type(o).__name__}
    for k in ("min_val", "max_val"):
        if hasattr(o, k):
            rec[k] = T(getattr(o, k))
    if hasattr(o, "histogram"):
        # The bin counts as float32 little-endian bytes, hashed: 2048 bins per
        # observer would make these files large.
        h = o.histogram.detach().to(torch.float32).contiguous()
        rec["histogram_sha256"] = hashlib.sha256(struct.pack("<%df" % h.numel(), *h.tolist())).hexdigest()
        rec["bins"] = o.bins
    try:
        s, z = o.calculate_qparams()
        rec["scale"], rec["zero_point"] = T(s), T(z)
    except Exception as e:
        rec["calculate_qparams_error"] = str(e)
    return rec


def attr(m, target):
    for p in target.split("."):
        m = getattr(m, p)
    return m


def inputs(stem):
    d = json.load(open(os.path.join(DIR, SRC[stem], stem + ".outputs.json")))["inputs"]
    return [[from_T(x)] if isinstance(x, dict) else [from_T(y) for y in x] for x in d["calibration"]], \
           [[from_T(x)] if isinstance(x, dict) else [from_T(y) for y in x] for x in d["eval"]], d


def run_case(stem, case):
    cfg = json.load(open(os.path.join(DIR, f"{stem}.{case}.config.json")))
    calib, evals, raw = inputs(stem)
    ep = torch.export.load(os.path.join(DIR, SRC[stem], stem + ".float.pt2"))
    rec = {"format": "fxquant-quantcfg-expected/1", "model": stem, "case": case,
           "torch": torch.__version__, "inputs": SRC[stem] + "/" + stem + ".outputs.json"}
    q = quantizer(cfg)
    # The annotations alone, on a copy: transform_for_annotation then annotate.
    try:
        gm = q.transform_for_annotation(ep.module())
        q.annotate(gm)
        rec["annotations"] = annotations(gm)
    except Exception as e:
        rec["error"] = f"{type(e).__name__}: {e}"
        return rec
    q = quantizer(cfg)
    prepared = qp.prepare_pt2e(ep.module(), q)
    with open(os.path.join(DIR, f"{stem}.{case}.prepared.graph.txt"), "w") as f:
        f.write(listing(prepared))
    with torch.no_grad():
        for b in calib:
            prepared(*b)
    rec["observers"] = {n.target: observer(attr(prepared, n.target)) for n in prepared.graph.nodes
                        if n.op == "call_module" and n.target.startswith("activation_post_process_")}
    converted = qp.convert_pt2e(prepared, fold_quantize=True)
    with open(os.path.join(DIR, f"{stem}.{case}.converted.graph.txt"), "w") as f:
        f.write(listing(converted))
    rec["get_attrs"] = {}
    for n in converted.graph.nodes:
        if n.op == "get_attr":
            v = attr(converted, n.target)
            if n.target.startswith("_"):  # created by convert: folded weights, qparams
                t = T(v)
            else:  # a float parameter of the model, unchanged
                t = {"shape": list(v.shape), "dtype": str(v.dtype).replace("torch.", "")}
            t["target"] = n.target
            rec["get_attrs"][n.name] = t
    with torch.no_grad():
        outs = []
        for b in evals:
            y = converted(*b)
            ys = y if isinstance(y, (tuple, list)) else (y,)
            outs.append([T(v) for v in ys])
    rec["outputs"] = outs
    return rec


def make_gru():
    """gru.float.pt2: nn.GRU(4, 5, batch_first=True) called as gru(x, h), seed 7,
    with 4 calibration and 2 eval batches of x [1, 3, 4] and h [1, 1, 5]
    (torch.randn after manual_seed 701 and 702), in gru.outputs.json."""
    path = os.path.join(DIR, "gru.float.pt2")
    if os.path.exists(path):
        return

    class GRUModel(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.gru = torch.nn.GRU(4, 5, batch_first=True)

        def forward(self, x, h):
            return self.gru(x, h)

    torch.manual_seed(7)
    m = GRUModel().eval()
    batches = {}
    for key, seed, n in (("calibration", 701, 4), ("eval", 702, 2)):
        g = torch.Generator().manual_seed(seed)
        batches[key] = [[torch.randn(1, 3, 4, generator=g), torch.randn(1, 1, 5, generator=g)] for _ in range(n)]
    ep = torch.export.export(m, tuple(batches["calibration"][0]))
    torch.export.save(ep, path)
    with open(os.path.join(DIR, "gru.outputs.json"), "w") as f:
        json.dump({"format": "fxquant-pt2e-outputs/1", "model": "gru", "seed": 7,
                   "inputs": {k: [[T(x) for x in b] for b in v] for k, v in batches.items()}}, f, separators=(",", ":"))
        f.write("\n")


def make_emb_mlp():
    """emb_mlp.float.pt2: Embedding(64, 16) -> fc1 Linear(16, 32) -> relu ->
    fc2 Linear(32, 16) + the embedding -> mean over tokens -> head
    Linear(16, 4), seed 11, with 4 calibration and 2 eval batches of [1, 8]
    int64 tokens (torch.randint(0, 64) after manual_seed 1101 and 1102), in
    emb_mlp.outputs.json. No gelu and no convolution: its float results do
    not depend on the CPU's instruction set (bert_encoder's gelu does)."""
    path = os.path.join(DIR, "emb_mlp.float.pt2")
    if os.path.exists(path):
        return

    class EmbMLP(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = torch.nn.Embedding(64, 16)
            self.fc1 = torch.nn.Linear(16, 32)
            self.fc2 = torch.nn.Linear(32, 16)
            self.head = torch.nn.Linear(16, 4)

        def forward(self, tokens):
            e = self.emb(tokens)
            h = torch.relu(self.fc1(e))
            h = self.fc2(h) + e
            return self.head(h.mean(dim=1))

    torch.manual_seed(11)
    m = EmbMLP().eval()
    batches = {}
    for key, seed, n in (("calibration", 1101, 4), ("eval", 1102, 2)):
        g = torch.Generator().manual_seed(seed)
        batches[key] = [torch.randint(0, 64, (1, 8), generator=g) for _ in range(n)]
    ep = torch.export.export(m, (batches["calibration"][0],))
    torch.export.save(ep, path)
    with open(os.path.join(DIR, "emb_mlp.outputs.json"), "w") as f:
        json.dump({"format": "fxquant-pt2e-outputs/1", "model": "emb_mlp", "seed": 11,
                   "inputs": {k: [T(x) for x in v] for k, v in batches.items()}}, f, separators=(",", ":"))
        f.write("\n")


make_gru()
make_emb_mlp()
cases = sorted(f[: -len(".config.json")] for f in os.listdir(DIR) if f.endswith(".config.json"))
for c in cases:
    stem, case = c.split(".", 1)
    rec = run_case(stem, case)
    with open(os.path.join(DIR, f"{c}.expected.json"), "w") as f:
        json.dump(rec, f, separators=(",", ":"))
        f.write("\n")
    print(c, "error: " + rec["error"] if "error" in rec else f"{len(rec['observers'])} observers, {len(rec['get_attrs'])} get_attrs")
