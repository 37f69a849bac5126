"""Runs the converted programs on the example input (after gen.py, check_fx.py and gen_pc.py):

    fxquant convert-qat NAME.fxquant_trained.pt2 -o FX/NAME.fxquant_converted.pt2   (NAME = convbnrelu, mlp, convbnrelu_pc)
    py.sh io.py QATDIR FX converted_io.json

records the example input, torchao's converted program's output on it, and whether the program fxquant's
convert-qat wrote loads in PyTorch and computes the same output bit for bit.
"""
import json, sys
import torch
import torchao.quantization.pt2e.quantize_pt2e  # noqa: F401

torch.set_num_threads(1)
qat, fx, out = sys.argv[1:4]
sys.path.insert(0, qat)
from train import example  # noqa: E402

rec = {}
for name in ["convbnrelu", "mlp", "convbnrelu_pc"]:
    x = example(name.removesuffix("_pc"))[0]
    with torch.no_grad():
        ref = torch.export.load(f"{qat}/{name}.torchao_converted.pt2").module()(x)
        got = torch.export.load(f"{fx}/{name}.fxquant_converted.pt2").module()(x)
    rec[name] = {"input_shape": list(x.shape), "input": x.flatten().tolist(),
                 "torchao_output_shape": list(ref.shape), "torchao_output": ref.flatten().tolist(),
                 "fxquant_written_output_equal_bitwise": bool(torch.equal(got, ref))}
    print(name, rec[name]["fxquant_written_output_equal_bitwise"])
with open(out, "w") as f:
    json.dump(rec, f)
