"""Generates the QAT fixtures in this folder with PyTorch 2.14.1 + torchao (the project's oracle).

    /work/shared/oracle/py.sh /tmp/qat/gen.py /tmp/qat/out      (files copied in and out of the chroot)

Per model NAME (seeded, trained with the same fixed steps as train.py):
  NAME.float.pt2             torch.export.export(model.train(), ex): the input of `fxquant prepare-qat`
  NAME.torchao_prepared.pt2  torch.export.export(prepare_qat_pt2e(float.module(), XNNPACK is_qat=True), ex):
                             the trainable form (fake quants are aten.fused_moving_avg_obs_fake_quant with
                             their FakeQuantize/observer state as buffers)
  NAME.trained.pt2           torchao_prepared.pt2 loaded (torch.export.load(...).module()), trained by train.py's
                             loop, re-exported
  NAME.torchao_converted.pt2 torchao's prepared GraphModule given the trained state (load_state_dict, strict),
                             move_exported_model_to_eval, convert_pt2e (fold_quantize=True), re-exported
  NAME.torchao.json          losses, the trained fake-quant state and torchao's convert qparams, for the README
"""
import json, os, sys
import torch, torch.nn as nn
import torchao.quantization.pt2e.quantize_pt2e as qp
from torchao.quantization.pt2e import move_exported_model_to_eval
from torchao.testing.pt2e._xnnpack_quantizer import XNNPACKQuantizer, get_symmetric_quantization_config

torch.set_num_threads(1)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from train import MODELS, build, example, train  # noqa: E402

out = sys.argv[1]
os.makedirs(out, exist_ok=True)


def listing(gm):
    return [f"{n.name} | {n.op} | {n.target} | {n.args} | {n.kwargs}" for n in gm.graph.nodes]


for name, cfg in MODELS.items():
    model = build(name)
    ex = example(name)
    ep = torch.export.export(model, ex)
    torch.export.save(ep, f"{out}/{name}.float.pt2")
    q = XNNPACKQuantizer().set_global(get_symmetric_quantization_config(is_per_channel=cfg["per_channel"], is_qat=True))
    prepared = qp.prepare_qat_pt2e(ep.module(), q)
    pep = torch.export.export(prepared, ex)
    torch.export.save(pep, f"{out}/{name}.torchao_prepared.pt2")
    trainable = torch.export.load(f"{out}/{name}.torchao_prepared.pt2").module()
    losses = train(name, trainable)
    tep = torch.export.export(trainable, ex)
    torch.export.save(tep, f"{out}/{name}.trained.pt2")
    state = {k: v.detach().clone() for k, v in trainable.state_dict().items()}
    prepared.load_state_dict(state, strict=True)
    move_exported_model_to_eval(prepared)
    eval_listing = listing(prepared)
    converted = qp.convert_pt2e(prepared, fold_quantize=True)
    conv_listing = listing(converted)
    cep = torch.export.export(converted, ex)
    torch.export.save(cep, f"{out}/{name}.torchao_converted.pt2")
    with torch.no_grad():
        y = converted(*ex)
    rec = {
        "losses": losses,
        "fake_quant_state": {k: v.flatten().tolist() for k, v in state.items() if "activation_post_process" in k},
        "prepared_eval_listing": eval_listing,
        "converted_listing": conv_listing,
        "converted_output_on_example": y.flatten().tolist(),
    }
    with open(f"{out}/{name}.torchao.json", "w") as f:
        json.dump(rec, f, indent=1)
    print(name, "losses", losses)
    print("\n".join(conv_listing))
