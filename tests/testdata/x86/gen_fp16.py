"""Record torchao's X86InductorQuantizer with get_x86_inductor_linear_dynamic_fp16_config on nn.Linear.

Made with the project's oracle (PyTorch 2.14.1 + torchao, AVX2 kernels, one thread):

    ../shared/oracle/py.sh gen_fp16.py ZOO_DIR OUT.json

For mlp_dynamic_batch and bert_encoder of ZOO_DIR, with
X86InductorQuantizer().set_module_type_qconfig(torch.nn.Linear, get_x86_inductor_linear_dynamic_fp16_config()),
records what gen.py records (annotations, observers, converted graph), flow included.
"""
import json
import os
import sys

import torch

zoo, out = sys.argv[1], sys.argv[2]
sys.argv = sys.argv[:1]
import gen  # noqa: E402
from torchao.quantization.pt2e.quantizer.x86_inductor_quantizer import (  # noqa: E402
    X86InductorQuantizer,
    get_x86_inductor_linear_dynamic_fp16_config,
)

res = {"format": "fxquant-x86-fp16/1", "torch": torch.__version__, "cases": {}}
for stem in ("mlp_dynamic_batch", "bert_encoder"):
    outs = json.load(open(os.path.join(zoo, stem + ".outputs.json")))
    q = X86InductorQuantizer().set_module_type_qconfig(torch.nn.Linear, get_x86_inductor_linear_dynamic_fp16_config())
    res["cases"][stem] = gen.run_with(os.path.join(zoo, stem + ".float.pt2"), outs, q)
res["targets"] = list(gen.TARGETS)
with open(out, "w") as fh:
    json.dump(res, fh, separators=(",", ":"), sort_keys=True)
    fh.write("\n")
