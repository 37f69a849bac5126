"""torchao's convert with the reference representation of the trained QAT programs (after gen.py):

    py.sh gen_ref.py QATDIR OUT

For NAME in convbnrelu, mlp: torchao's prepared GraphModule (prepare_qat_pt2e of NAME.float.pt2) given the state of
NAME.trained.pt2 (load_state_dict, strict), move_exported_model_to_eval, convert_pt2e(use_reference_representation=True),
re-exported and saved as NAME.torchao_converted_ref.pt2.
"""
import sys
import torch
import torchao.quantization.pt2e.quantize_pt2e as qp
from torchao.quantization.pt2e import move_exported_model_to_eval
from torchao.testing.pt2e._xnnpack_quantizer import XNNPACKQuantizer, get_symmetric_quantization_config

torch.set_num_threads(1)
qat, out = sys.argv[1:3]
sys.path.insert(0, qat)
from train import example  # noqa: E402

for name in ["convbnrelu", "mlp"]:
    ex = example(name)
    q = XNNPACKQuantizer().set_global(get_symmetric_quantization_config(is_qat=True))
    prepared = qp.prepare_qat_pt2e(torch.export.load(f"{qat}/{name}.float.pt2").module(), q)
    prepared.load_state_dict(torch.export.load(f"{qat}/{name}.trained.pt2").module().state_dict(), strict=True)
    move_exported_model_to_eval(prepared)
    converted = qp.convert_pt2e(prepared, use_reference_representation=True)
    torch.export.save(torch.export.export(converted, ex), f"{out}/{name}.torchao_converted_ref.pt2")
    print(name, [str(n.target) for n in converted.graph.nodes if n.op == "call_function"][:40])
