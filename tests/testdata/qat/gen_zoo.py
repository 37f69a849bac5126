"""torchao's QAT prepare of zoo models, graphs only (after gen.py), with the oracle:

    py.sh gen_zoo.py ZOODIR OUT

For each NAME: prepare_qat_pt2e(torch.export.load(ZOODIR/NAME.float.pt2).module(), XNNPACK is_qat=True) re-exported
with torch.export.export(prepared, (x,)) (x: a random batch of 2) and saved; only the archive's program JSON
(models/model.json: graph and signature, no weights) is kept, gzipped, as NAME.qat_prepared.model.json.gz.
The zoo programs were exported in eval mode; torchao's QAT annotation and fusion match their batch norms all the same
(pattern matching with ignore_literals=True).
"""
import gzip, io, json, sys, zipfile
import torch
import torchao.quantization.pt2e.quantize_pt2e as qp
from torchao.testing.pt2e._xnnpack_quantizer import XNNPACKQuantizer, get_symmetric_quantization_config

torch.set_num_threads(1)
zoo, out = sys.argv[1:3]
for name in ["mnasnet0_5", "mobilenet_v3_large"]:
    ep = torch.export.load(f"{zoo}/{name}.float.pt2")
    # batch 2: the fold simulation puts batch norms in training mode, which needs more than one value per
    # channel (mnasnet's last blocks are 1x1)
    x = torch.randn((2,) + tuple(ep.example_inputs[0][0].shape[1:]), generator=torch.Generator().manual_seed(0))
    q = XNNPACKQuantizer().set_global(get_symmetric_quantization_config(is_qat=True))
    prepared = qp.prepare_qat_pt2e(ep.module(), q)
    # the module's input guard pins batch 1; the re-exports of gen.py drop it all the same
    for n in list(prepared.graph.nodes):
        if n.op == "call_module" and n.target == "_guards_fn":
            prepared.graph.erase_node(n)
    prepared.recompile()
    pep = torch.export.export(prepared, (x,))
    buf = io.BytesIO()
    torch.export.save(pep, buf)
    with zipfile.ZipFile(io.BytesIO(buf.getvalue())) as z:
        model = [n for n in z.namelist() if n.endswith("models/model.json")][0]
        data = z.read(model)
    with open(f"{out}/{name}.qat_prepared.model.json.gz", "wb") as f:
        f.write(gzip.compress(data, mtime=0))
    fq = sum(1 for n in pep.graph.nodes if n.target == torch.ops.aten.fused_moving_avg_obs_fake_quant.default)
    print(name, len(data), "bytes json,", fq, "fake quants")
