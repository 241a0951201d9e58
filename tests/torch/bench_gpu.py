#!/usr/bin/python3
"""bench_gpu.py - the PyTorch peer of tests/bench/gpu_bench.sh.

Trains hpctrain's cnn, hepcnn or resnet-small on the first GPU with SGD
(momentum 0.9, lr 0.01), batch B, for S steps, at fp32, bf16 or fp16,
the way PyTorch's users run it at their best:

- channels_last and torch.backends.cudnn.benchmark;
- bf16 and fp16 under torch.autocast, fp16 with a GradScaler;
- fp32 without TF32 (matmul and cuDNN), as hpctrain's fp32 runs;
- the whole training set already on the GPU (a real loader could only
  be slower), batches taken by index; hep-synthetic is random images
  of its shape made on the GPU once, since only the shape matters here;
- eager mode (no torch.compile, no CUDA graphs): the configuration is
  printed next to the figure.

The timed steps are those after the first W; the clock stops after a
device synchronisation, so the GPU's queue is drained.

    python3 tests/torch/bench_gpu.py MODEL PRECISION BATCH STEPS WARMUP [DATA_DIR]

Prints one line:
    samples_per_s X config "..."
"""
import gzip
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

model_name, prec = sys.argv[1], sys.argv[2]
batch, steps, warmup = (int(a) for a in sys.argv[3:6])
data_dir = sys.argv[6] if len(sys.argv) > 6 else "/usr/share/datasets/fashion-mnist"
if not 0 <= warmup < steps:
    sys.exit("bench_gpu.py: need 0 <= WARMUP < STEPS")
if not torch.cuda.is_available():
    print("skipped: no GPU")
    sys.exit(0)


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 32, 3, padding=1)
        self.conv2 = nn.Conv2d(32, 64, 3, padding=1)
        self.fc1 = nn.Linear(3136, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, v):
        v = F.max_pool2d(F.relu(self.conv1(v)), 2)
        v = F.max_pool2d(F.relu(self.conv2(v)), 2)
        return self.fc2(F.relu(self.fc1(torch.flatten(v, 1))))


class HepCNN(nn.Module):
    """Four conv 3x3 + ReLU + max-pool 2 (16, 32, 64, 128 filters),
    linear 128, dropout 0.25, one logit."""

    def __init__(self):
        super().__init__()
        c = [1, 16, 32, 64, 128]
        self.convs = nn.ModuleList(nn.Conv2d(c[i], c[i + 1], 3, padding=1) for i in range(4))
        self.fc1 = nn.Linear(128 * 4 * 4, 128)
        self.fc2 = nn.Linear(128, 1)

    def forward(self, v):
        for conv in self.convs:
            v = F.max_pool2d(F.relu(conv(v)), 2)
        v = F.dropout(F.relu(self.fc1(torch.flatten(v, 1))), 0.25, self.training)
        return self.fc2(v)


class Block(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.c1 = nn.Conv2d(cin, cout, 3, stride, 1)
        self.b1 = nn.BatchNorm2d(cout)
        self.c2 = nn.Conv2d(cout, cout, 3, 1, 1)
        self.b2 = nn.BatchNorm2d(cout)
        self.sc = None
        if stride != 1 or cin != cout:
            self.sc = nn.Sequential(nn.Conv2d(cin, cout, 1, stride), nn.BatchNorm2d(cout))

    def forward(self, v):
        y = self.b2(self.c2(F.relu(self.b1(self.c1(v)))))
        return F.relu(y + (self.sc(v) if self.sc is not None else v))


class ResNetSmall(nn.Module):
    """hpctrain's resnet-small: conv 16 + BN + ReLU, six basic blocks
    (16, 16, 32/2, 32, 64/2, 64), global average pool, linear 10."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(1, 16, 3, 1, 1), nn.BatchNorm2d(16), nn.ReLU())
        spec = [(16, 16, 1), (16, 16, 1), (16, 32, 2), (32, 32, 1), (32, 64, 2), (64, 64, 1)]
        self.blocks = nn.Sequential(*(Block(a, b, s) for a, b, s in spec))
        self.fc = nn.Linear(64, 10)

    def forward(self, v):
        v = self.blocks(self.stem(v))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(v, 1), 1))


def fashion_mnist(dev):
    def idx(name, offset):
        with gzip.open("%s/%s" % (data_dir, name)) as f:
            return torch.frombuffer(bytearray(f.read()), dtype=torch.uint8)[offset:]

    x = idx("train-images-idx3-ubyte.gz", 16).view(-1, 1, 28, 28).to(dev).float() / 255.0
    x = (x - x.mean()) / x.std()
    y = idx("train-labels-idx1-ubyte.gz", 8).to(dev).long()
    return x, y


def main():
    dev = torch.device("cuda", 0)
    torch.backends.cudnn.benchmark = True
    tf32 = prec != "fp32"
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32
    torch.manual_seed(0)
    if model_name == "hepcnn":
        n = max(batch * 8, 4096)
        x = torch.randn(n, 1, 64, 64, device=dev)
        y = (torch.rand(n, 1, device=dev) < 0.5).float()
        model, loss_fn = HepCNN(), F.binary_cross_entropy_with_logits
    else:
        x, y = fashion_mnist(dev)
        model = CNN() if model_name == "cnn" else ResNetSmall()
        loss_fn = F.cross_entropy
    model = model.to(dev, memory_format=torch.channels_last)
    x = x.contiguous(memory_format=torch.channels_last)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(prec)
    scaler = torch.amp.GradScaler("cuda", enabled=prec == "fp16")
    perm = torch.randperm(x.shape[0], device=dev)
    per_epoch = x.shape[0] // batch
    t0 = None
    for s in range(steps):
        if s == warmup:
            torch.cuda.synchronize()
            t0 = time.perf_counter()
        i = perm[(s % per_epoch) * batch:(s % per_epoch + 1) * batch]
        xb, yb = x[i], y[i]
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=dtype or torch.bfloat16, enabled=dtype is not None):
            loss = loss_fn(model(xb), yb)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
    torch.cuda.synchronize()
    sps = (steps - warmup) * batch / (time.perf_counter() - t0)
    print('samples_per_s %.1f config "torch %s, eager, channels_last, cudnn.benchmark, %s%s"' %
          (sps, torch.__version__, "autocast " + prec if dtype else "fp32 without TF32",
           ", GradScaler" if prec == "fp16" else ""))


main()
