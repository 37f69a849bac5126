"""fxquant's prepare-qat of two zoo CNNs, trained in PyTorch beside torchao's prepared model (after gen_zoo.py):

    fxquant prepare-qat ../zoo/NAME.float.pt2 -o FX/NAME.fxquant_prepared.pt2    (NAME = mnasnet0_5, mobilenet_v3_large)
    py.sh zoo_train.py ZOODIR FX zoo_train.json

torchao's prepared model is re-exported (with a batch of 2), saved and loaded, as fxquant's program is. Both
modules get their `_guards_fn` (batch 1) removed and train 2 SGD steps (lr 0.01, MSE to a random target) on a
random batch of 2 (train-mode batch norms on 1x1 maps need more than one value per channel). Recorded: the state
keys (and those only one side has), the initial forward, the losses and the trained state on the common keys,
fxquant's against torchao's, bit for bit, and as a control torchao's program loaded a second time and trained the
same way against the first (on mnasnet0_5 two runs of torchao's own program already end with different parameters
after the second step: PyTorch's training is not bit-reproducible there).
"""
import copy, io, json, sys
import torch
import torch.nn.functional as F
import torchao.quantization.pt2e.quantize_pt2e as qp
from torchao.testing.pt2e._xnnpack_quantizer import XNNPACKQuantizer, get_symmetric_quantization_config

torch.set_num_threads(1)
zoo, fx, out = sys.argv[1:4]


def unguard(m):
    for n in list(m.graph.nodes):
        if n.op == "call_module" and n.target == "_guards_fn":
            m.graph.erase_node(n)
    m.recompile()
    return m


def train(m, x, t):
    opt = torch.optim.SGD([p for p in m.parameters() if p.requires_grad], lr=0.01)
    losses = []
    for _ in range(2):
        loss = F.mse_loss(m(x), t)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


rec = {}
for name in ["mnasnet0_5", "mobilenet_v3_large"]:
    ep = torch.export.load(f"{zoo}/{name}.float.pt2")
    q = XNNPACKQuantizer().set_global(get_symmetric_quantization_config(is_qat=True))
    g = torch.Generator().manual_seed(0)
    x = torch.randn((2,) + tuple(ep.example_inputs[0][0].shape[1:]), generator=g)
    t = torch.randn(2, 10, generator=g)
    # torchao's prepared model in the trainable form: re-exported, saved, loaded (as fxquant's is)
    buf = io.BytesIO()
    torch.export.save(torch.export.export(unguard(qp.prepare_qat_pt2e(ep.module(), q)), (x,)), buf)
    buf.seek(0)
    ta = unguard(torch.export.load(buf).module())
    buf.seek(0)
    control = unguard(torch.export.load(buf).module())  # torchao's program loaded twice: PyTorch's own variation
    fm = unguard(torch.export.load(f"{fx}/{name}.fxquant_prepared.pt2").module())
    fk, tk = set(fm.state_dict()), set(ta.state_dict())
    r = {"same_state_keys": fk == tk, "only_fxquant_keys": sorted(fk - tk), "only_torchao_keys": sorted(tk - fk)}
    with torch.no_grad():
        r["forward_equal_bitwise"] = bool(torch.equal(copy.deepcopy(fm)(x), copy.deepcopy(ta)(x)))
    r["fxquant_losses"] = train(fm, x, t)
    r["torchao_losses"] = train(ta, x, t)
    r["control_losses"] = train(control, x, t)
    sd, tsd = fm.state_dict(), ta.state_dict()
    common = sorted(fk & tk)
    r["common_keys"] = len(common)
    r["trained_state_equal_bitwise_on_common_keys"] = all(torch.equal(sd[k], tsd[k]) for k in common)
    r["keys_differing_fxquant_vs_torchao"] = sum(not torch.equal(sd[k], tsd[k]) for k in common)
    csd = control.state_dict()
    r["keys_differing_torchao_vs_torchao_control"] = sum(not torch.equal(csd[k], tsd[k]) for k in tsd)
    rec[name] = r
    print(name, r)
with open(out, "w") as f:
    json.dump(rec, f, indent=1)
