"""Expected numbers for fxquant's numeric debugger, from torchao's own.

Made with the project's oracle (PyTorch 2.14.1 + torchao, AVX2 kernels, one
thread), from the module root:

    mkdir -p /opt/torch-oracle/tmp/numdebug && cp -r tests /opt/torch-oracle/tmp/numdebug/
    ../shared/oracle/py.sh /tmp/numdebug/tests/testdata/numdebug/gen.py /tmp/numdebug
    cp /opt/torch-oracle/tmp/numdebug/out/* tests/testdata/numdebug/

For each model (the pt2e fixtures mlp, cnn, groupnorm and the zoo's
bert_encoder and mnasnet0_5) it runs torchao's flow on the fixture's float
program: generate_numeric_debug_handle(ep), prepare_pt2e(ep.module(),
XNNPACKQuantizer per-channel symmetric static), the 4 recorded calibration
batches, convert_pt2e(fold_quantize=True); then torchao's numeric debugger:
prepare_for_propagation_comparison on a fresh ep.module() (the float
reference) and on the converted model, both run on the 2 recorded eval
inputs, extract_results_from_loggers, compare_results(ref=float,
actual=quantized). NAME.expected.json lists, per compared node: the float
node's name and numeric debug handle, the quantized node's name, torchao's
per-eval-input SQNR (float32, as compute_sqnr returns it) and the SQNR over
both inputs together (float64 sums, to check fxquant's accumulation).

For mlp and cnn it also saves torchao's programs: NAME.handles.pt2, the float
ExportedProgram after generate_numeric_debug_handle (node
meta["custom"]["numeric_debug_handle"]), and NAME.torchao.pt2, the converted
model re-exported with torch.export.export(converted, (calibration[0],)) and
saved, so fxquant can run torchao's own quantized program.
"""
import json
import math
import os
import struct
import sys

import torch
import torchao.quantization.pt2e.quantize_pt2e  # noqa: F401  registers quantized_decomposed ops
from torchao.quantization.pt2e import (
    compare_results,
    extract_results_from_loggers,
    generate_numeric_debug_handle,
    prepare_for_propagation_comparison,
)
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e
from torchao.testing.pt2e._xnnpack_quantizer import (
    XNNPACKQuantizer,
    get_symmetric_quantization_config,
)

torch.set_num_threads(1)
root = sys.argv[1]
testdata = os.path.join(root, "tests", "testdata")
out = os.path.join(root, "out")
os.makedirs(out, exist_ok=True)

MODELS = [
    ("pt2e", "mlp", True),
    ("pt2e", "cnn", True),
    ("pt2e", "groupnorm", False),
    ("zoo", "bert_encoder", False),
    ("zoo", "mnasnet0_5", False),
]


def tensor(t):
    if t["dtype"] == "float32" and "hex" in t:
        vals = [struct.unpack(">f", bytes.fromhex(h))[0] for h in t["hex"]]
        return torch.tensor(vals, dtype=torch.float32).reshape(t["shape"])
    return torch.tensor(t["values"], dtype=getattr(torch, t["dtype"])).reshape(t["shape"])


def flat(x):
    if isinstance(x, torch.Tensor):
        return [x.detach().to(torch.float32).reshape(-1).double()]
    if isinstance(x, (list, tuple)):
        return [e for v in x for e in flat(v)]
    return []


def num(x):
    x = float(x)
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if math.isnan(x):
        return "nan"
    return x


for folder, stem, keep in MODELS:
    d = os.path.join(testdata, folder)
    outs = json.load(open(os.path.join(d, stem + ".outputs.json")))
    calib = [tensor(t) for t in outs["inputs"]["calibration"]]
    evals = [tensor(t) for t in outs["inputs"]["eval"]]
    ep = torch.export.load(os.path.join(d, stem + ".float.pt2"))
    generate_numeric_debug_handle(ep)
    if keep:
        torch.export.save(ep, os.path.join(out, stem + ".handles.pt2"))
    quantizer = XNNPACKQuantizer().set_global(get_symmetric_quantization_config(is_per_channel=True))
    prepared = prepare_pt2e(ep.module(), quantizer)
    with torch.no_grad():
        for x in calib:
            prepared(x)
    converted = convert_pt2e(prepared, fold_quantize=True)
    float_log = prepare_for_propagation_comparison(ep.module())
    quant_log = prepare_for_propagation_comparison(converted)
    with torch.no_grad():
        for x in evals:
            float_log(x)
            quant_log(x)
    ref = extract_results_from_loggers(float_log)
    act = extract_results_from_loggers(quant_log)
    cmp = compare_results(ref, act)
    handle_of = {n.name: n.meta.get("custom", {}).get("numeric_debug_handle", 0) for n in ep.graph.nodes}
    order = {n.name: i for i, n in enumerate(float_log.graph.nodes)}
    rows = []
    for info, summ in cmp.items():
        ref_stats, act_stats = ref[info][2], act[info][2]
        sig = noise = 0.0
        for a, b in zip(act_stats, ref_stats):
            for x, y in zip(flat(a), flat(b)):
                sig += float((x * x).sum())
                noise += float(((x - y) ** 2).sum())
        total = math.inf if noise == 0 else 10 * math.log10(sig / noise)
        rows.append({
            "float_node": summ.ref_node_name,
            "quant_node": summ.actual_node_name,
            "handle": handle_of.get(summ.ref_node_name, 0),
            "sqnr": [num(r.sqnr) if isinstance(r.sqnr, torch.Tensor) else None for r in summ.results],
            "sqnr_total": num(total),
        })
    rows.sort(key=lambda r: order.get(r["float_node"], 1 << 30))
    with open(os.path.join(out, stem + ".expected.json"), "w") as f:
        json.dump({"model": stem, "source": folder + "/" + stem + ".float.pt2",
                   "eval_inputs": len(evals), "results": rows}, f, indent=1)
        f.write("\n")
    if keep:
        with torch.no_grad():
            reexp = torch.export.export(converted, (calib[0],))
        torch.export.save(reexp, os.path.join(out, stem + ".torchao.pt2"))
    print(stem, len(rows), "compared nodes", flush=True)
