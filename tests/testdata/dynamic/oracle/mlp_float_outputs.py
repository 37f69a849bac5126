# Float outputs of the zoo's mlp_dynamic_batch at its calibration batch
# sizes (8, 1, 5, 32), which ../zoo/mlp_dynamic_batch.outputs.json records
# only as inputs; computed by PyTorch 2.14.1 (the project's oracle) from the
# saved archive:
#   py.sh mlp_float_outputs.py ../../zoo/mlp_dynamic_batch.float.pt2 ../../zoo/mlp_dynamic_batch.outputs.json OUT.json
import json, struct, sys
import torch

torch.set_num_threads(1)


def tensor(rec):
    vals = [struct.unpack("<f", bytes.fromhex(h)[::-1])[0] for h in rec["hex"]]
    return torch.tensor(vals, dtype=torch.float32).reshape(rec["shape"])


m = torch.export.load(sys.argv[1]).module()
data = json.load(open(sys.argv[2]))
out = []
with torch.no_grad():
    for rec in data["inputs"]["calibration"]:
        y = m(tensor(rec))
        out.append({"shape": list(y.shape), "dtype": "float32",
                    "hex": ["%08x" % struct.unpack("<I", struct.pack("<f", v))[0] for v in y.reshape(-1).tolist()]})
json.dump({"model": "mlp_dynamic_batch", "torch": torch.__version__, "calibration_outputs": out}, open(sys.argv[3], "w"), indent=1)
print([o["shape"] for o in out])
