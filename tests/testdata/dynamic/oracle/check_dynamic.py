# Loads programs fxquant quantized and wrote from the dynamic programs of
# this folder (NAME.pt2, calibrated by `fxquant run --calibration-data` on
# the inputs of NAME.io.json) in real PyTorch 2.14.1 (the project's oracle):
#   py.sh check_dynamic.py NAME.io.json WRITTEN.pt2 ...
# With DUMP set in the environment, PyTorch's outputs of each written
# program are saved to WRITTEN.outputs.json (float32 as hex bit patterns).
# Each written program must load, keep its symbolic input sizes and range
# constraints, run at every recorded input size (its outputs differ from
# the float outputs by quantization noise only), and refuse an input one
# past the range.
import json, math, os, struct, sys
import torch
import torchao.quantization.pt2e  # noqa: F401  registers quantized_decomposed ops

torch.set_num_threads(1)


def tensor(rec):
    vals = [struct.unpack("<f", bytes.fromhex(h)[::-1])[0] for h in rec["hex"]]
    return torch.tensor(vals, dtype=torch.float32).reshape(rec["shape"])


io = json.load(open(sys.argv[1]))
ok_all = True
for path in sys.argv[2:]:
    ep = torch.export.load(path)
    print(path.rsplit("/", 1)[-1])
    print(f"  range_constraints {dict((str(k), (int(v.lower), int(v.upper))) for k, v in ep.range_constraints.items())}")
    x = [n for n in ep.graph.nodes if n.op == "placeholder" and n.name == "x"][0]
    print(f"  x: {list(x.meta['val'].shape)}")
    ops = sorted({str(n.target) for n in ep.graph.nodes if n.op == "call_function"})
    print(f"  quantize ops: {sum(1 for n in ep.graph.nodes if 'quantize' in str(n.target))}; sym ops: {[o for o in ops if 'sym' in o or 'operator' in o]}")
    m = ep.module()
    dump = []
    with torch.no_grad():
        for c in io["cases"]:
            xi = tensor(c["input"])
            ys = m(xi)
            ys = ys if isinstance(ys, tuple) else (ys,)
            dump.append({"input_shape": list(xi.shape), "outputs": [
                {"shape": list(y.shape), "dtype": "float32",
                 "hex": ["%08x" % struct.unpack("<I", struct.pack("<f", v))[0] for v in y.reshape(-1).tolist()]} for y in ys]})
            for j, (y, want) in enumerate(zip(ys, c["outputs"])):
                w = tensor(want)
                same_shape = list(y.shape) == list(w.shape)
                ok_all &= same_shape
                noise = (y - w).pow(2).sum().item()
                sqnr = 10 * math.log10(w.pow(2).sum().item() / noise) if noise > 0 else math.inf
                ok_all &= sqnr > 20
                print(f"  input {list(xi.shape)} output {j}: shape {list(y.shape)} (float {list(w.shape)}), SQNR vs float {sqnr:.1f} dB")
        if os.environ.get("DUMP"):
            with open(path[: -len(".pt2")] + ".outputs.json", "w") as f:
                json.dump({"program": path.rsplit("/", 1)[-1], "torch": torch.__version__, "cases": dump}, f, indent=1)
        hi = max(int(v.upper) for v in ep.range_constraints.values())
        shape = list(tensor(io["cases"][0]["input"]).shape)
        shape[0] = hi + 1
        try:
            m(torch.zeros(shape))
            print(f"  input {shape}: accepted (unexpected)")
            ok_all = False
        except Exception as e:
            print(f"  input {shape}: refused ({type(e).__name__})")
print("all ok" if ok_all else "FAILED")
