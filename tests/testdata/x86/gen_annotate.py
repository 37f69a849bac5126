"""Record X86InductorQuantizer.annotate alone (no prepare, so no batch-norm folding) on small models.

Made with the project's oracle (PyTorch 2.14.1 + torchao):

    ../shared/oracle/py.sh gen_annotate.py OUT_DIR

For each model below, writes OUT_DIR/NAME.float.pt2 (torch.export.export(model.eval(), (x,)),
torch.export.save) and, in OUT_DIR/annotate.json, per configuration the annotations
quantizer.annotate(torch.export.load(...).module()) leaves (gen.py's layout), or the error it raised.
"""
import json
import os
import sys

import torch
import torch.nn as nn

out_dir = sys.argv[1]
sys.argv = sys.argv[:1]
import gen  # noqa: E402
from torchao.quantization.pt2e.quantizer.x86_inductor_quantizer import (  # noqa: E402
    X86InductorQuantizer,
    get_default_x86_inductor_quantization_config as cfg,
)

torch.manual_seed(23)


class ConvBN(nn.Module):
    """conv+bn+relu, conv+bn+add+relu, conv+bn+add, conv+bn+hardswish, conv+bn."""

    def __init__(self):
        super().__init__()
        c = lambda: nn.Conv2d(4, 4, 3, padding=1)  # noqa: E731
        self.conv1, self.bn1, self.relu1 = c(), nn.BatchNorm2d(4), nn.ReLU()
        self.conv2, self.bn2, self.relu2 = c(), nn.BatchNorm2d(4), nn.ReLU()
        self.conv3, self.bn3 = c(), nn.BatchNorm2d(4)
        self.conv4, self.bn4, self.hs = c(), nn.BatchNorm2d(4), nn.Hardswish()
        self.conv5, self.bn5 = c(), nn.BatchNorm2d(4)

    def forward(self, x):
        x = self.relu1(self.bn1(self.conv1(x)))
        x = self.relu2(self.bn2(self.conv2(x)) + x)
        x = self.bn3(self.conv3(x)) + x
        x = self.hs(self.bn4(self.conv4(x)))
        return self.bn5(self.conv5(x))


class SharedReLU(nn.Module):
    """One nn.ReLU called after two convolutions: its partition has two outputs."""

    def __init__(self):
        super().__init__()
        self.conv1, self.conv2, self.relu = nn.Conv2d(4, 4, 1), nn.Conv2d(4, 4, 1), nn.ReLU()

    def forward(self, x):
        return self.relu(self.conv2(self.relu(self.conv1(x))))


def annotations(m):
    ann = {}
    for n in m.graph.nodes:
        a = n.meta.get("quantization_annotation")
        if a is not None:
            ann[n.name] = [[[k.name, gen.spec(v)] for k, v in a.input_qspec_map.items()], gen.spec(a.output_qspec),
                           bool(getattr(a, "_is_output_of_quantized_pattern", False))]
    return ann


CASES = [
    ("convbn", "qat", lambda: X86InductorQuantizer().set_global(cfg(is_qat=True))),
    ("convbn", "ptq_unfolded", lambda: X86InductorQuantizer().set_global(cfg())),
    ("shared_relu", "static", lambda: X86InductorQuantizer().set_global(cfg())),
]


def main():
    models = {"convbn": ConvBN(), "shared_relu": SharedReLU()}
    res = {"format": "fxquant-x86-annotate/1", "torch": torch.__version__, "cases": {}}
    for name, m in models.items():
        ep = torch.export.export(m.eval(), (torch.randn(1, 4, 6, 6),))
        torch.export.save(ep, os.path.join(out_dir, name + ".float.pt2"))
    for name, case, make in CASES:
        m = torch.export.load(os.path.join(out_dir, name + ".float.pt2")).module()
        try:
            make().annotate(m)
            rec = {"annotations": annotations(m)}
        except Exception as e:
            rec = {"error": "%s: %s" % (type(e).__name__, e)}
        res["cases"][name + "/" + case] = rec
    with open(os.path.join(out_dir, "annotate.json"), "w") as fh:
        json.dump(res, fh, separators=(",", ":"), sort_keys=True)
        fh.write("\n")


main()
