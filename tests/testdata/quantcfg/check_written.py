# Loads programs `fxquant run -o` wrote from this folder's models in real
# PyTorch 2.14.1 (the project's oracle) and compares their outputs on the
# eval inputs with torchao's converted model on the same config:
#   fxquant run emb_mlp.float.pt2 --quantizer embedding+xnnpack-static --calibration-data emb_mlp.outputs.json -o W/emb.pt2
#   fxquant run emb_mlp.float.pt2 --quantizer-config emb_mlp.mixed.config.json --calibration-data emb_mlp.outputs.json -o W/mixed.pt2
#   fxquant run gru.float.pt2 --calibration-data gru.outputs.json -o W/gru.pt2
#   py.sh check_written.py DIR W/emb.pt2:emb_mlp.embedding_static W/mixed.pt2:emb_mlp.mixed W/gru.pt2:gru.static
# (xnnpack-static is the per-channel static config of those cases). Same
# qparams run by the same PyTorch give the same bits, so every output must
# equal torchao's exactly.
import json, os, struct, sys
import torch
import torchao.quantization.pt2e  # noqa: F401  registers quantized_decomposed ops

torch.set_num_threads(1)
DIR = sys.argv[1]


def from_T(rec):
    if "hex" in rec:
        vals = [struct.unpack("<f", bytes.fromhex(h)[::-1])[0] for h in rec["hex"]]
        return torch.tensor(vals, dtype=torch.float32).reshape(rec["shape"])
    return torch.tensor(rec["values"], dtype=getattr(torch, rec["dtype"])).reshape(rec["shape"])


ok_all = True
for arg in sys.argv[2:]:
    path, case = arg.split(":")
    exp = json.load(open(os.path.join(DIR, case + ".expected.json")))
    ins = json.load(open(os.path.join(DIR, exp["inputs"])))["inputs"]["eval"]
    m = torch.export.load(path).module()
    with torch.no_grad():
        for i, x in enumerate(ins):
            xs = [from_T(x)] if isinstance(x, dict) else [from_T(y) for y in x]
            ys = m(*xs)
            ys = ys if isinstance(ys, (tuple, list)) else (ys,)
            for j, (y, w) in enumerate(zip(ys, exp["outputs"][i])):
                same = torch.equal(y.contiguous(), from_T(w))
                ok_all &= same
                print(f"{case} eval {i} output {j}: {'equal to torchao' if same else 'DIFFERS, max diff %g' % (y - from_T(w)).abs().max()}")
print("all ok" if ok_all else "FAILED")
