"""Per-channel QAT fixtures (convbnrelu_pc.*), after gen.py, with the oracle:

    fxquant prepare-qat convbnrelu.float.pt2 --per-channel -o FX/convbnrelu_pc.fxquant_prepared.pt2
    fxquant prepare-qat convbnrelu.float.pt2 --per-channel --presize=false -o FX/convbnrelu_pc.fxquant_prepared_torchao_shapes.pt2
    py.sh gen_pc.py QATDIR FX OUT

torchao: prepare_qat_pt2e(is_per_channel=True, is_qat=True) of convbnrelu.float.pt2, re-exported
(convbnrelu_pc.torchao_prepared.pt2); torchao's prepared GraphModule trained in memory with train.py's loop
(a loaded program cannot train: recorded below), then move_exported_model_to_eval + convert_pt2e, re-exported
(convbnrelu_pc.torchao_converted.pt2). fxquant: its presized program loaded, trained with the same loop,
compared with torchao's in-memory run and re-exported (convbnrelu_pc.fxquant_trained.pt2).
"""
import copy, json, sys
import torch
import torchao.quantization.pt2e.quantize_pt2e as qp
from torchao.quantization.pt2e import move_exported_model_to_eval
from torchao.testing.pt2e._xnnpack_quantizer import XNNPACKQuantizer, get_symmetric_quantization_config

torch.set_num_threads(1)
qat, fx, out = sys.argv[1:4]
sys.path.insert(0, qat)
from train import train, example  # noqa: E402

name = "convbnrelu"
ex = example(name)
rec = {}


def try_train(path):
    try:
        train(name, torch.export.load(path).module())
        return "trained"
    except Exception as e:  # noqa: BLE001
        return f"{type(e).__name__}: {e}"


fl = torch.export.load(f"{qat}/{name}.float.pt2")
q = XNNPACKQuantizer().set_global(get_symmetric_quantization_config(is_per_channel=True, is_qat=True))
prepared = qp.prepare_qat_pt2e(fl.module(), q)
torch.export.save(torch.export.export(prepared, ex), f"{out}/{name}_pc.torchao_prepared.pt2")
rec["torchao_prepared_loaded_training"] = try_train(f"{out}/{name}_pc.torchao_prepared.pt2")
rec["fxquant_torchao_shapes_loaded_training"] = try_train(f"{fx}/{name}_pc.fxquant_prepared_torchao_shapes.pt2")

rec["torchao_in_memory_losses"] = train(name, prepared)
tsd = {k: v.detach().clone() for k, v in prepared.state_dict().items()}

m = torch.export.load(f"{fx}/{name}_pc.fxquant_prepared.pt2").module()
rec["fxquant_presized_losses"] = train(name, m)
sd = m.state_dict()
rec["same_state_keys"] = sorted(sd) == sorted(tsd)
rec["trained_state_equal_bitwise"] = rec["same_state_keys"] and all(
    torch.equal(sd[k], tsd[k]) and sd[k].dtype == tsd[k].dtype for k in tsd)
rec["losses_equal"] = rec["torchao_in_memory_losses"] == rec["fxquant_presized_losses"]
torch.export.save(torch.export.export(m, ex), f"{out}/{name}_pc.fxquant_trained.pt2")

move_exported_model_to_eval(prepared)
converted = qp.convert_pt2e(prepared, fold_quantize=True)
torch.export.save(torch.export.export(converted, ex), f"{out}/{name}_pc.torchao_converted.pt2")
rec["converted_listing"] = [f"{n.name} | {n.op} | {n.target} | {n.args} | {n.kwargs}" for n in converted.graph.nodes]
with open(f"{out}/{name}_pc.json", "w") as f:
    json.dump(rec, f, indent=1)
print(json.dumps({k: v for k, v in rec.items() if k != "converted_listing"}, indent=1))
