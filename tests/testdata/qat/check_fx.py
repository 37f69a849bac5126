"""Loads fxquant's prepare-qat outputs, trains them with train.py's loop, and compares with torchao's run."""
import copy, json, sys
import torch
import torchao.quantization.pt2e.quantize_pt2e  # noqa: F401
sys.path.insert(0, "/tmp/qat")
from train import MODELS, train, example
fx, ref, out = sys.argv[1:4]
res = {}
for name in MODELS:
    rec = {}
    fxp = torch.export.load(f"{fx}/{name}.fxquant_prepared.pt2")
    tap = torch.export.load(f"{ref}/{name}.torchao_prepared.pt2")
    m, tm = fxp.module(), tap.module()
    sd, tsd = m.state_dict(), tm.state_dict()
    rec["loads"] = True
    rec["same_state_keys_as_torchao"] = sorted(sd) == sorted(tsd)
    rec["initial_state_equal_bitwise"] = all(torch.equal(sd[k], tsd[k]) and sd[k].dtype == tsd[k].dtype for k in tsd)
    with torch.no_grad():  # on copies: the forward updates the fake quantizers' state; same dropout seed
        x = example(name)[0]
        torch.manual_seed(5)
        y = copy.deepcopy(m)(x)
        torch.manual_seed(5)
        rec["forward_equal_bitwise_before_training"] = torch.equal(y, copy.deepcopy(tm)(x))
    losses = train(name, m)
    tlosses = train(name, tm)
    rec["losses"] = losses
    rec["torchao_losses"] = tlosses
    rec["losses_equal"] = losses == tlosses
    sd, tsd = m.state_dict(), tm.state_dict()
    rec["trained_state_equal_bitwise"] = all(torch.equal(sd[k], tsd[k]) for k in tsd)
    rec["trained_min_max"] = {k: v.flatten().tolist() for k, v in sd.items() if k.endswith(("min_val", "max_val"))}
    torch.export.save(torch.export.export(m, example(name)), f"{fx}/{name}.fxquant_trained.pt2")
    res[name] = rec
    print(name, rec)
with open(out, "w") as f:
    json.dump(res, f, indent=1)
