#!/usr/bin/python3
"""make_fixtures.py - PyTorch reference values for the trainer's unit tests.

Writes tests/fixtures/torch/*.bin, read by tests/unit/test_torch.c.  Run it
again (Debian's python3-torch, CPU) to regenerate them:

    /usr/bin/python3 tests/torch/make_fixtures.py

Each file is a sequence of records, little-endian:
    u32 name length, name (ASCII), u32 ndim, u32 dims[ndim], float32 data
Tensors are written in PyTorch's layouts (activations NCHW), except where a
name ends in "_nhwc" (the trainer's activation layout).  Everything is
float32 and deterministic (fixed seeds, one thread).
"""
import os
import struct

import torch
import torch.nn as nn
import torch.nn.functional as F

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "torch")
torch.set_num_threads(1)


def write(name, records):
    with open(os.path.join(OUT, name), "wb") as f:
        for key, t in records:
            t = t.detach().contiguous().to(torch.float32)
            k = key.encode()
            f.write(struct.pack("<I", len(k)) + k)
            f.write(struct.pack("<I", t.dim()) + struct.pack("<%dI" % t.dim(), *t.shape))
            f.write(t.numpy().astype("<f4").tobytes())


def nhwc(t):
    return t.permute(0, 2, 3, 1)


class CNN(nn.Module):
    """The benchmark cnn (hpctrain's model cnn), on H x W inputs."""

    def __init__(self, hw):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 32, 3, padding=1)
        self.conv2 = nn.Conv2d(32, 64, 3, padding=1)
        self.fc1 = nn.Linear(64 * (hw // 4) * (hw // 4), 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return self.fc2(F.relu(self.fc1(torch.flatten(x, 1))))


def params(m):
    return [(n, p) for n, p in m.named_parameters()]


def cnn_case():
    torch.manual_seed(6)
    n, hw = 8, 8
    model = CNN(hw)
    x = torch.randn(n, 1, hw, hw)
    y = torch.randint(0, 10, (n,))
    rec = [("x_nhwc", nhwc(x)), ("labels", y.float())]
    rec += [("init." + k, v.clone()) for k, v in params(model)]
    logits = model(x)
    loss = F.cross_entropy(logits, y)
    loss.backward()
    rec += [("logits", logits), ("loss", loss.reshape(1))]
    rec += [("grad." + k, v.grad.clone()) for k, v in params(model)]
    for name, make in (("sgd", lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9,
                                                          weight_decay=1e-4)),
                       ("nesterov", lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9,
                                                               nesterov=True)),
                       ("adamw", lambda p: torch.optim.AdamW(p, lr=1e-3, weight_decay=0.01))):
        m = CNN(hw)
        with torch.no_grad():
            for (k, p), (_, p0) in zip(params(m), [(k, v) for k, v in rec if k.startswith("init.")]):
                p.copy_(p0)
        opt = make(m.parameters())
        losses = []
        for _ in range(5):
            opt.zero_grad()
            l = F.cross_entropy(m(x), y)
            losses.append(l.item())
            l.backward()
            opt.step()
        rec.append((name + ".losses", torch.tensor(losses)))
        rec += [(name + "." + k, v.clone()) for k, v in params(m)]
    write("cnn.bin", rec)


def batchnorm_case():
    torch.manual_seed(7)
    bn = nn.BatchNorm2d(3)
    with torch.no_grad():
        bn.weight.uniform_(0.5, 1.5)
        bn.bias.uniform_(-0.5, 0.5)
    x = torch.randn(4, 3, 5, 5, requires_grad=True)
    dy = torch.randn(4, 3, 5, 5)
    y = bn(x)
    y.backward(dy)
    bn.eval()
    y_eval = bn(x)
    write("batchnorm.bin", [("x_nhwc", nhwc(x)), ("dy_nhwc", nhwc(dy)), ("gamma", bn.weight),
                            ("beta", bn.bias), ("y_nhwc", nhwc(y)), ("dx_nhwc", nhwc(x.grad)),
                            ("dgamma", bn.weight.grad), ("dbeta", bn.bias.grad),
                            ("running_mean", bn.running_mean), ("running_var", bn.running_var),
                            ("y_eval_nhwc", nhwc(y_eval))])


def conv_case():
    torch.manual_seed(8)
    conv = nn.Conv2d(5, 7, 3, stride=2, padding=1)
    x = torch.randn(3, 5, 9, 9, requires_grad=True)
    y = conv(x)
    dy = torch.randn_like(y)
    y.backward(dy)
    write("conv_s2.bin", [("x_nhwc", nhwc(x)), ("w", conv.weight), ("b", conv.bias),
                          ("y_nhwc", nhwc(y)), ("dy_nhwc", nhwc(dy)), ("dx_nhwc", nhwc(x.grad)),
                          ("dw", conv.weight.grad), ("db", conv.bias.grad)])


def pool_case():
    torch.manual_seed(9)
    x = torch.randn(2, 4, 8, 8, requires_grad=True)
    y = F.avg_pool2d(F.max_pool2d(x, 2), 4)
    dy = torch.randn_like(y)
    y.backward(dy)
    write("pool.bin", [("x_nhwc", nhwc(x)), ("y_nhwc", nhwc(y)), ("dy_nhwc", nhwc(dy)),
                       ("dx_nhwc", nhwc(x.grad))])


def loss_case():
    torch.manual_seed(10)
    z1 = (3 * torch.randn(16, 1)).requires_grad_()
    t1 = torch.randint(0, 2, (16, 1)).float()
    l1 = F.binary_cross_entropy_with_logits(z1, t1)
    l1.backward()
    zm = (3 * torch.randn(8, 5)).requires_grad_()
    tm = torch.randint(0, 2, (8, 5)).float()
    lm = F.binary_cross_entropy_with_logits(zm, tm)
    lm.backward()
    zc = (3 * torch.randn(8, 6)).requires_grad_()
    yc = torch.randint(0, 6, (8,))
    lc = F.cross_entropy(zc, yc)
    lc.backward()
    write("loss.bin", [("bce.z", z1), ("bce.t", t1), ("bce.loss", l1.reshape(1)),
                       ("bce.dz", z1.grad), ("multi.z", zm), ("multi.t", tm),
                       ("multi.loss", lm.reshape(1)), ("multi.dz", zm.grad),
                       ("xent.z", zc), ("xent.labels", yc.float()),
                       ("xent.loss", lc.reshape(1)), ("xent.dz", zc.grad)])


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    cnn_case()
    batchnorm_case()
    conv_case()
    pool_case()
    loss_case()
