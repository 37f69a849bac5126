"""torchao's numeric debugger on programs fxquant quantized and wrote.

fxquant writes a node's numeric debug handle into meta["custom"] as
torchao's generate_numeric_debug_handle does. This script loads such a
program in PyTorch and runs torchao's debugger on it, keyed by those handles
as torchao keyed it before from_node replaced handles (torchao commit
809af2e6): _extract_node_source_debug_info is replaced by one that returns
the node's handle, so prepare_for_propagation_comparison logs every node
with a handle and compare_results matches float and quantized nodes by it.
Made with the project's oracle, from the module root:

    go run ./cmd/fxquant run tests/testdata/pt2e/NAME.float.pt2 \\
        --calibration-data tests/testdata/pt2e/NAME.outputs.json \\
        -o tests/testdata/numdebug/NAME.fxquant.pt2        (NAME = mlp, cnn)
    mkdir -p /opt/torch-oracle/tmp/numdebug && cp -r tests /opt/torch-oracle/tmp/numdebug/
    ../shared/oracle/py.sh /tmp/numdebug/tests/testdata/numdebug/check_fxquant.py /tmp/numdebug
    cp /opt/torch-oracle/tmp/numdebug/out/*.fxquant.expected.json tests/testdata/numdebug/

NAME.fxquant.expected.json has, per handle, the float and quantized node
names and torchao's SQNR on each of the 2 recorded eval inputs.
"""
import json
import math
import os
import struct
import sys

import torch
import torchao.quantization.pt2e.quantize_pt2e  # noqa: F401  registers quantized_decomposed ops
from torchao.quantization.pt2e import _numeric_debugger as nd
from torchao.quantization.pt2e import (
    compare_results,
    extract_results_from_loggers,
    generate_numeric_debug_handle,
    prepare_for_propagation_comparison,
)

torch.set_num_threads(1)
root = sys.argv[1]
testdata = os.path.join(root, "tests", "testdata")
out = os.path.join(root, "out")
os.makedirs(out, exist_ok=True)


def by_handle(node):
    if node.op in ("placeholder", "output"):
        return None
    h = node.meta.get(nd.CUSTOM_KEY, {}).get(nd.NUMERIC_DEBUG_HANDLE_KEY)
    return None if h is None else nd.NodeSourceDebugInfo(name=str(h), graph_id=0)


nd._extract_node_source_debug_info = by_handle


def tensor(t):
    if t["dtype"] == "float32" and "hex" in t:
        vals = [struct.unpack(">f", bytes.fromhex(h))[0] for h in t["hex"]]
        return torch.tensor(vals, dtype=torch.float32).reshape(t["shape"])
    return torch.tensor(t["values"], dtype=getattr(torch, t["dtype"])).reshape(t["shape"])


def num(x):
    x = float(x)
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return "nan" if math.isnan(x) else x


for stem in ["mlp", "cnn"]:
    outs = json.load(open(os.path.join(testdata, "pt2e", stem + ".outputs.json")))
    evals = [tensor(t) for t in outs["inputs"]["eval"]]
    ep = torch.export.load(os.path.join(testdata, "pt2e", stem + ".float.pt2"))
    generate_numeric_debug_handle(ep)
    q = torch.export.load(os.path.join(testdata, "numdebug", stem + ".fxquant.pt2"))
    float_log = prepare_for_propagation_comparison(ep.module())
    quant_log = prepare_for_propagation_comparison(q.module())
    with torch.no_grad():
        for x in evals:
            float_log(x)
            quant_log(x)
    cmp = compare_results(extract_results_from_loggers(float_log), extract_results_from_loggers(quant_log))
    rows = [{"handle": int(info.name), "float_node": s.ref_node_name, "quant_node": s.actual_node_name,
             "sqnr": [num(r.sqnr) for r in s.results]} for info, s in cmp.items()]
    rows.sort(key=lambda r: r["handle"])
    with open(os.path.join(out, stem + ".fxquant.expected.json"), "w") as f:
        json.dump({"model": stem, "program": "numdebug/" + stem + ".fxquant.pt2", "results": rows}, f, indent=1)
        f.write("\n")
    print(stem, len(rows), "handles compared", flush=True)
