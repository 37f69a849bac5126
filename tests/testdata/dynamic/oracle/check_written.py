# Loads programs fxquant wrote from dynamic-shape programs in real PyTorch
# 2.14.1 (the project's oracle) and runs them at several batch sizes.
#   py.sh check_written.py OUTPUTS.json MODE=WRITTEN.pt2 ...
# MODE is a key of OUTPUTS.json (float, static, dynamic): the recorded
# outputs on its eval inputs are what the written program must give, bit
# for bit. The calibration inputs (other batch sizes) must run, and a batch
# outside the range constraint must be refused.
import json, struct, sys
import torch
import torchao.quantization.pt2e  # noqa: F401  registers quantized_decomposed ops

torch.set_num_threads(1)


def tensor(rec):
    vals = [struct.unpack("<f", bytes.fromhex(h)[::-1])[0] for h in rec["hex"]]
    return torch.tensor(vals, dtype=torch.float32).reshape(rec["shape"])


data = json.load(open(sys.argv[1]))
evals = [tensor(r) for r in data["inputs"]["eval"]]
calib = [tensor(r) for r in data["inputs"]["calibration"]]
ok_all = True
for arg in sys.argv[2:]:
    mode, path = arg.split("=", 1)
    ep = torch.export.load(path)
    name = path.rsplit("/", 1)[-1]
    x = [n for n in ep.graph.nodes if n.op == "placeholder" and n.name == "x"][0]
    print(f"{name}: mode {mode}")
    print(f"  range_constraints {dict((str(k), (int(v.lower), int(v.upper))) for k, v in ep.range_constraints.items())}")
    print(f"  x: {list(x.meta['val'].shape)}")
    qd = sum(1 for n in ep.graph.nodes if "quantize" in str(n.target))
    print(f"  q/dq/choose_qparams nodes: {qd}")
    m = ep.module()
    with torch.no_grad():
        for i, (xi, want) in enumerate(zip(evals, data[mode]["outputs"])):
            y = m(xi)
            same = torch.equal(y, tensor(want))
            ok_all &= same
            diff = (y - tensor(want)).abs().max().item()
            print(f"  eval {i} batch {xi.shape[0]}: bit-exact vs recorded {mode} outputs: {same} (max abs diff {diff:g})")
        sizes = []
        for xi in calib:
            y = m(xi)
            sizes.append(f"{xi.shape[0]}->{list(y.shape)}")
        print(f"  calibration batches run: {', '.join(sizes)}")
        try:
            m(torch.zeros(65, 16))
            print("  batch 65: accepted (unexpected)")
            ok_all = False
        except Exception as e:
            print(f"  batch 65: refused ({type(e).__name__})")
print("all ok" if ok_all else "FAILED")
