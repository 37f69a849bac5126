# Times torchao's whole PT2E flow on a 500-layer MLP, one thread:
# load, prepare_pt2e, calibrate 4 batches, convert_pt2e, export, save.
# Run in the oracle (../shared/oracle/py.sh), as flow.sh does:
#   mlp500_flow.py [LAYERS [ROUNDS [DIR]]]
# It exports DIR/mlpLAYERS.float.pt2 first if it is missing (the program
# fxquant times too), then prints one line per round.
import time, sys, os
import torch
torch.set_num_threads(1)
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e, convert_pt2e
from torchao.testing.pt2e._xnnpack_quantizer import XNNPACKQuantizer, get_symmetric_quantization_config

def mlp(n):
    layers = []
    for i in range(n):
        fi = 32 if i == 0 else 64
        fo = 16 if i == n - 1 else 64
        layers += [torch.nn.Linear(fi, fo), torch.nn.ReLU()]
    return torch.nn.Sequential(*layers)

torch.manual_seed(0)
n = int(sys.argv[1]) if len(sys.argv) > 1 else 500
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
m = mlp(n).eval()
x = torch.randn(4, 32)
d = sys.argv[3] if len(sys.argv) > 3 else "/tmp/flow"
path = f"{d}/mlp{n}.float.pt2"
if not os.path.exists(path):
    torch.export.save(torch.export.export(m, (x,)), path)
batches = [torch.randn(4, 32) for _ in range(4)]
for r in range(rounds):
    t0 = time.perf_counter(); c0 = time.process_time()
    ep = torch.export.load(path)
    gm = ep.module()
    q = XNNPACKQuantizer().set_global(get_symmetric_quantization_config(is_per_channel=True))
    pm = prepare_pt2e(gm, q)
    for b in batches:
        pm(b)
    cm = convert_pt2e(pm)
    out = torch.export.export(cm, (x,))
    torch.export.save(out, f"{d}/mlp{n}.torchao.pt2")
    t1 = time.perf_counter(); c1 = time.process_time()
    print(f"round {r}: torchao flow wall {t1-t0:.3f} s cpu {c1-c0:.3f} s", flush=True)
