"""Record the outputs of torchao's X86InductorQuantizer programs on the zoo's first eval input.

Made with the project's oracle (PyTorch 2.14.1 + torchao, AVX2 kernels, one thread):

    ../shared/oracle/py.sh gen_outputs.py ZOO_DIR OUT.json

For each NAME.float.pt2 of ZOO_DIR and each mode (static, dynamic) it runs the flow of gen.py
(prepare_pt2e, the recorded calibration batches, convert_pt2e) and records the converted
module's output on inputs.eval[0] of NAME.outputs.json under no_grad: shape and float32 bit
patterns (hex). For llama_tiny ([1, 16, 128]) only the first 2 tokens (256 values) are kept,
to keep the file small.
"""
import json
import os
import struct
import sys

import torch
import torchao.quantization.pt2e.quantize_pt2e as qp
from torchao.quantization.pt2e.quantizer.x86_inductor_quantizer import (
    X86InductorQuantizer,
    get_default_x86_inductor_quantization_config,
)

torch.set_num_threads(1)


def tensor(t):
    if t["dtype"] == "float32" and "hex" in t:
        vals = [struct.unpack(">f", bytes.fromhex(h))[0] for h in t["hex"]]
        return torch.tensor(vals, dtype=torch.float32).reshape(t["shape"])
    return torch.tensor(t["values"], dtype=getattr(torch, t["dtype"])).reshape(t["shape"])


def main():
    zoo, out = sys.argv[1], sys.argv[2]
    res = {"format": "fxquant-x86-outputs/1", "torch": torch.__version__, "models": {}}
    for f in sorted(os.listdir(zoo)):
        if not f.endswith(".float.pt2"):
            continue
        stem = f[: -len(".float.pt2")]
        outs = json.load(open(os.path.join(zoo, stem + ".outputs.json")))
        res["models"][stem] = {}
        for mode in ("static", "dynamic"):
            print(stem, mode, file=sys.stderr, flush=True)
            q = X86InductorQuantizer().set_global(get_default_x86_inductor_quantization_config(is_dynamic=(mode == "dynamic")))
            prepared = qp.prepare_pt2e(torch.export.load(os.path.join(zoo, f)).module(), q)
            with torch.no_grad():
                for x in outs["inputs"]["calibration"]:
                    prepared(tensor(x))
            conv = qp.convert_pt2e(prepared)
            with torch.no_grad():
                y = conv(tensor(outs["inputs"]["eval"][0]))
            shape = list(y.shape)
            flat = y.flatten()
            if stem == "llama_tiny":
                flat = flat[:256]
            res["models"][stem][mode] = {"shape": shape, "hex": [struct.pack(">f", v).hex() for v in flat.tolist()]}
    with open(out, "w") as fh:
        json.dump(res, fh, separators=(",", ":"), sort_keys=True)
        fh.write("\n")


main()
