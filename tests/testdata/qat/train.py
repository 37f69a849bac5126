"""The QAT models and the fixed training loop of the fixtures (see gen.py and README.md).

    py.sh train.py NAME PREPARED.pt2 TRAINED.pt2 RESULT.json

loads a prepared QAT program (torchao's re-export, or what `fxquant prepare-qat` wrote), trains it with
the fixed loop below, re-exports and saves it, and records the losses and the trained state.
"""
import json, sys
import torch, torch.nn as nn
import torch.nn.functional as F

torch.set_num_threads(1)

MODELS = {
    # conv(bias)+BN+ReLU, then conv(no bias)+BN: both QAT conv-BN fold patterns.
    "convbnrelu": {"per_channel": False},
    # Per-channel weights (is_per_channel=True) are not here: torchao's per-channel fake quant starts with
    # empty min/max buffers that the op resizes, and a program loaded by torch.export.load cannot resize
    # them ("Trying to resize storage that is not resizable"), see README.md.
    # Linear-ReLU-Dropout-Linear: fake quants without BN, dropout switched by move_exported_model_to_eval
    "mlp": {"per_channel": False},
}
STEPS = 3
LR = 0.05


class ConvBNReLU(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 4, 3)
        self.bn1 = nn.BatchNorm2d(4)
        self.relu = nn.ReLU()
        self.conv2 = nn.Conv2d(4, 4, 3, bias=False)
        self.bn2 = nn.BatchNorm2d(4)

    def forward(self, x):
        return self.bn2(self.conv2(self.relu(self.bn1(self.conv1(x)))))


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.relu = nn.ReLU()
        self.drop = nn.Dropout(0.25)
        self.fc2 = nn.Linear(16, 4)

    def forward(self, x):
        return self.fc2(self.drop(self.relu(self.fc1(x))))


def build(name):
    torch.manual_seed(17)
    m = MLP() if name == "mlp" else ConvBNReLU()
    return m.train()


def example(name):
    g = torch.Generator().manual_seed(1)
    return (torch.randn(4, 8, generator=g),) if name == "mlp" else (torch.randn(2, 3, 8, 8, generator=g),)


def batches(name):
    g = torch.Generator().manual_seed(2)
    out = []
    for _ in range(STEPS):
        if name == "mlp":
            out.append((torch.randn(4, 8, generator=g), torch.randn(4, 4, generator=g)))
        else:
            out.append((torch.randn(2, 3, 8, 8, generator=g), torch.randn(2, 4, 4, 4, generator=g)))
    return out


def train(name, m):
    torch.manual_seed(3)  # dropout masks
    opt = torch.optim.SGD([p for p in m.parameters() if p.requires_grad], lr=LR)
    losses = []
    for x, t in batches(name):
        loss = F.mse_loss(m(x), t)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


if __name__ == "__main__":
    import torchao.quantization.pt2e.quantize_pt2e  # noqa: F401  (quantized_decomposed ops)
    name, src, dst, res = sys.argv[1:5]
    m = torch.export.load(src).module()
    losses = train(name, m)
    torch.export.save(torch.export.export(m, example(name)), dst)
    with open(res, "w") as f:
        json.dump({"losses": losses, "state": {k: v.flatten().tolist() for k, v in m.state_dict().items()}}, f)
    print(name, "losses", losses)
