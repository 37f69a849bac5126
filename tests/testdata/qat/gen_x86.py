"""X86InductorQuantizer QAT fixtures (NAME_x86.*), with the oracle, after

    fxquant prepare-qat --quantizer x86-inductor NAME.float.pt2 -o FX/NAME_x86.fxquant_prepared.pt2   (NAME = convbnrelu, mlp)
    fxquant prepare-qat --quantizer x86-inductor --presize=false NAME.float.pt2 -o FX/NAME_x86.fxquant_prepared_torchao_shapes.pt2
    py.sh gen_x86.py QATDIR FX OUT

torchao: prepare_qat_pt2e(X86InductorQuantizer().set_global(get_default_x86_inductor_quantization_config(is_qat=True)))
of NAME.float.pt2, re-exported (NAME_x86.torchao_prepared.pt2); that GraphModule trained in memory with train.py's
loop (the weights are per channel, so a loaded program cannot train: recorded), then move_exported_model_to_eval +
convert_pt2e(fold_quantize=True), re-exported (NAME_x86.torchao_converted.pt2). fxquant: its presized prepared
program loaded, compared with torchao's before training (state, forward), trained with the same loop, compared
(losses, trained state) and re-exported (NAME_x86.fxquant_trained.pt2). Record: NAME_x86 in x86_train.json.
"""
import copy, json, sys
import torch
import torchao.quantization.pt2e.quantize_pt2e as qp
from torchao.quantization.pt2e import move_exported_model_to_eval
from torchao.quantization.pt2e.quantizer.x86_inductor_quantizer import (
    X86InductorQuantizer, get_default_x86_inductor_quantization_config)

torch.set_num_threads(1)
qat, fx, out = sys.argv[1:4]
sys.path.insert(0, qat)
from train import train, example  # noqa: E402


def try_train(name, path):
    try:
        train(name, torch.export.load(path).module())
        return "trained"
    except Exception as e:  # noqa: BLE001
        return f"{type(e).__name__}: {e}"


res = {}
for name in ["convbnrelu", "mlp"]:
    rec = {}
    ex = example(name)
    fl = torch.export.load(f"{qat}/{name}.float.pt2")
    q = X86InductorQuantizer().set_global(get_default_x86_inductor_quantization_config(is_qat=True))
    prepared = qp.prepare_qat_pt2e(fl.module(), q)
    rec["prepared_listing"] = [f"{n.name} | {n.op} | {n.target} | {n.args} | {n.kwargs}" for n in prepared.graph.nodes]
    torch.export.save(torch.export.export(prepared, ex), f"{out}/{name}_x86.torchao_prepared.pt2")
    rec["torchao_prepared_loaded_training"] = try_train(name, f"{out}/{name}_x86.torchao_prepared.pt2")
    rec["fxquant_torchao_shapes_loaded_training"] = try_train(name, f"{fx}/{name}_x86.fxquant_prepared_torchao_shapes.pt2")

    m = torch.export.load(f"{fx}/{name}_x86.fxquant_prepared.pt2").module()
    sd, tsd = m.state_dict(), prepared.state_dict()
    rec["same_state_keys"] = sorted(sd) == sorted(tsd)
    # Presized: the per-channel fake quantizers' buffers have the channel count where torchao's are empty / [1].
    rec["initial_state_differing_keys"] = sorted(k for k in tsd if not (
        sd[k].dtype == tsd[k].dtype and sd[k].shape == tsd[k].shape and torch.equal(sd[k], tsd[k])))
    with torch.no_grad():  # on copies: the forward updates the fake quantizers' state; same dropout seed
        torch.manual_seed(5)
        y = copy.deepcopy(m)(ex[0])
        torch.manual_seed(5)
        rec["forward_equal_bitwise_before_training"] = torch.equal(y, copy.deepcopy(prepared)(ex[0]))

    rec["torchao_in_memory_losses"] = train(name, prepared)
    rec["fxquant_losses"] = train(name, m)
    rec["losses_equal"] = rec["torchao_in_memory_losses"] == rec["fxquant_losses"]
    sd, tsd = m.state_dict(), prepared.state_dict()
    rec["trained_state_equal_bitwise"] = sorted(sd) == sorted(tsd) and all(
        torch.equal(sd[k], tsd[k]) and sd[k].dtype == tsd[k].dtype for k in tsd)
    torch.export.save(torch.export.export(m, ex), f"{out}/{name}_x86.fxquant_trained.pt2")

    move_exported_model_to_eval(prepared)
    converted = qp.convert_pt2e(prepared, fold_quantize=True)
    torch.export.save(torch.export.export(converted, ex), f"{out}/{name}_x86.torchao_converted.pt2")
    rec["converted_listing"] = [f"{n.name} | {n.op} | {n.target} | {n.args} | {n.kwargs}" for n in converted.graph.nodes]
    with torch.no_grad():
        y = converted(ex[0])
    rec["input_shape"], rec["input"] = list(ex[0].shape), ex[0].flatten().tolist()
    rec["torchao_output_shape"], rec["torchao_output"] = list(y.shape), y.flatten().tolist()
    res[f"{name}_x86"] = rec
    print(name, json.dumps({k: v for k, v in rec.items() if "listing" not in k and k not in ("input", "torchao_output")}, indent=1))
with open(f"{out}/x86_train.json", "w") as f:
    json.dump(res, f, indent=1)
