"""Record torchao's X86InductorQuantizer flow on every zoo model.

Made with the project's oracle (PyTorch 2.14.1 + torchao, AVX2 kernels, one thread):

    ../shared/oracle/py.sh gen.py ZOO_DIR OUT.json

(py.sh runs inside its root: copy tests/testdata/zoo and this script there.)
For each NAME.float.pt2 of ZOO_DIR and each mode (static, dynamic):

    quantizer = X86InductorQuantizer().set_global(
        get_default_x86_inductor_quantization_config(is_dynamic=(mode == "dynamic")))
    prepared = prepare_pt2e(torch.export.load(NAME.float.pt2).module(), quantizer)
    for x in calibration batches of NAME.outputs.json: prepared(x)   # under no_grad
    converted = convert_pt2e(prepared)                                # fold_quantize=True

and records, compactly (no weights):
  annotations: per annotated node of the prepared graph, its input specs
      [[input, spec], ...], its output spec and _is_output_of_quantized_pattern.
      A spec is null, "q:DTYPE[:pc][:dyn]" (a QuantizationSpec) or
      "s:A>B" / "s:A" (a SharedQuantizationSpec of edge A->B or of node A).
  observers: per observer of the prepared graph, in graph order,
      [name, observer class, input node, [user nodes]].
  converted: every node of the converted graph, [name, target, args]: target is
      an index into the file's "targets" list of "OP TARGET" strings, except for
      get_attr nodes, where it is the string "get_attr TARGET"; args are left out
      when there are none. For quantized_decomposed ops and getitem the args are
      JSON (a node is "%name", a dtype "torch.uint8", other objects "<type>");
      for every other node they are only the nodes it reads, in order ("%name"),
      to keep the file small (its other arguments are the float program's).
  attrs: per get_attr node read by a quantized_decomposed op (folded weights,
      per-channel scales and zero points), [dtype, shape, the first 16 hex
      digits of the sha256 of the tensor's little-endian bytes].
An "error" key holds torchao's exception when a stage failed. When a model's dynamic
constants equal its static ones (the weights are quantized alike), the dynamic record has
"attrs_as": "static" instead of its own "attrs".
"""
import hashlib
import json
import os
import sys
import traceback

import torch
import torchao.quantization.pt2e.quantize_pt2e as qp
from torchao.quantization.pt2e.quantizer import QuantizationSpec, SharedQuantizationSpec
from torchao.quantization.pt2e.quantizer.x86_inductor_quantizer import (
    X86InductorQuantizer,
    get_default_x86_inductor_quantization_config,
)

torch.set_num_threads(1)
TARGETS = {}


def tensor(t):
    import struct
    if t["dtype"] == "float32" and "hex" in t:
        vals = [struct.unpack(">f", bytes.fromhex(h))[0] for h in t["hex"]]
        return torch.tensor(vals, dtype=torch.float32).reshape(t["shape"])
    return torch.tensor(t["values"], dtype=getattr(torch, t["dtype"])).reshape(t["shape"])


def spec(s):
    if s is None:
        return None
    if isinstance(s, SharedQuantizationSpec):
        e = s.edge_or_node
        if isinstance(e, tuple):
            return "s:%s>%s" % (e[0].name, e[1].name)
        return "s:" + e.name
    if isinstance(s, QuantizationSpec):
        out = "q:" + str(s.dtype).replace("torch.", "")
        if s.qscheme in (torch.per_channel_symmetric, torch.per_channel_affine):
            out += ":pc"
        if s.is_dynamic:
            out += ":dyn"
        return out
    return "<%s>" % type(s).__name__


def arg(a):
    if isinstance(a, torch.fx.Node):
        return "%" + a.name
    if isinstance(a, (list, tuple)):
        return [arg(x) for x in a]
    if a is None or isinstance(a, (bool, int, float, str)):
        return a
    if isinstance(a, torch.dtype):
        return str(a)
    return "<%s>" % type(a).__name__


def target(n):
    if n.op == "call_function":
        t = n.target
        if isinstance(t, torch._ops.OpOverload):
            return "%s.%s.%s" % (t.namespace, t._opname, t._overloadname)
        if isinstance(t, torch._ops.OpOverloadPacket):
            return "%s.%s" % (t._qualified_op_name.replace("::", "."), "<packet>")
        return getattr(t, "__module__", "") + "." + getattr(t, "__name__", str(t))
    return str(n.target)


def full_args(n):
    t = target(n)
    return t.startswith("quantized_decomposed.") or t == "_operator.getitem"


def node_refs(a):
    if isinstance(a, torch.fx.Node):
        return [a]
    if isinstance(a, (list, tuple)):
        return [x for e in a for x in node_refs(e)]
    return []


def digest(t):
    t = t.detach().contiguous()
    b = t.view(torch.uint8).numpy().tobytes() if t.numel() else b""
    return hashlib.sha256(b).hexdigest()[:16]


def run(path, outs, mode):
    q = X86InductorQuantizer().set_global(get_default_x86_inductor_quantization_config(is_dynamic=(mode == "dynamic")))
    return run_with(path, outs, q)


def run_with(path, outs, q):
    rec = {}
    ep = torch.export.load(path)
    m = ep.module()
    try:
        prepared = qp.prepare_pt2e(m, q)
    except Exception as e:
        rec["error"] = "prepare: %s: %s" % (type(e).__name__, e)
        traceback.print_exc()
        return rec
    ann = {}
    for n in prepared.graph.nodes:
        a = n.meta.get("quantization_annotation")
        if a is None:
            continue
        ann[n.name] = [[[k.name, spec(v)] for k, v in a.input_qspec_map.items()], spec(a.output_qspec),
                       bool(getattr(a, "_is_output_of_quantized_pattern", False))]
    rec["annotations"] = ann
    obs = []
    for n in prepared.graph.nodes:
        if n.op == "call_module" and n.target.startswith("activation_post_process_"):
            mod = getattr(prepared, n.target)
            obs.append([n.name, type(mod).__name__, n.args[0].name, [u.name for u in n.users]])
    rec["observers"] = obs
    with torch.no_grad():
        for x in outs["inputs"]["calibration"]:
            prepared(tensor(x))
    try:
        conv = qp.convert_pt2e(prepared)
    except Exception as e:
        rec["error"] = "convert: %s: %s" % (type(e).__name__, e)
        traceback.print_exc()
        return rec
    rec["converted"] = []
    for n in conv.graph.nodes:
        if n.op == "get_attr":
            row = [n.name, "get_attr " + str(n.target)]
        else:
            key = n.op + " " + target(n)
            if key not in TARGETS:
                TARGETS[key] = len(TARGETS)
            row = [n.name, TARGETS[key]]
        if n.args:
            if full_args(n):
                row.append(arg(list(n.args)))
            else:
                row.append(["%" + x.name for x in node_refs(n.args)])
        rec["converted"].append(row)
    attrs = {}
    for n in conv.graph.nodes:
        if n.op == "get_attr" and any(target(u).startswith("quantized_decomposed.") for u in n.users):
            v = conv
            for p in n.target.split("."):
                v = getattr(v, p)
            if isinstance(v, torch.Tensor):
                attrs[n.name] = [str(v.dtype).replace("torch.", ""), list(v.shape), digest(v)]
    rec["attrs"] = attrs
    return rec


def main():
    zoo, out = sys.argv[1], sys.argv[2]
    only = sys.argv[3:]
    res = {"format": "fxquant-x86-expected/2", "torch": torch.__version__, "models": {}}
    for f in sorted(os.listdir(zoo)):
        if not f.endswith(".float.pt2"):
            continue
        stem = f[: -len(".float.pt2")]
        if only and stem not in only:
            continue
        outs = json.load(open(os.path.join(zoo, stem + ".outputs.json")))
        res["models"][stem] = {}
        for mode in ("static", "dynamic"):
            print(stem, mode, file=sys.stderr, flush=True)
            res["models"][stem][mode] = run(os.path.join(zoo, f), outs, mode)
        st, dy = res["models"][stem]["static"], res["models"][stem]["dynamic"]
        if "attrs" in st and dy.get("attrs") == st["attrs"]:
            del dy["attrs"]
            dy["attrs_as"] = "static"
    res["targets"] = list(TARGETS)
    with open(out, "w") as fh:
        json.dump(res, fh, separators=(",", ":"), sort_keys=True)
        fh.write("\n")


if __name__ == "__main__":
    main()
