#!/usr/bin/python3
"""bench_cnn.py - the PyTorch peer of hpctrain's cnn benchmark.

Trains the issue-6 cnn on Fashion-MNIST with SGD (momentum 0.9, lr 0.05),
batch B, for S steps at T threads, and prints "samples_per_s X".  Used by
tests/bench/train_vs_torch.sh; the same model, data and normalisation as
`hpctrain train` so the two are compared like for like.

    /usr/bin/python3 tests/torch/bench_cnn.py STEPS BATCH THREADS
"""
import gzip
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

steps, batch, threads = (int(a) for a in sys.argv[1:4])
torch.set_num_threads(threads)
torch.manual_seed(0)
D = "/usr/share/datasets/fashion-mnist"
with gzip.open(D + "/train-images-idx3-ubyte.gz") as f:
    x = np.frombuffer(f.read(), np.uint8, offset=16).reshape(-1, 1, 28, 28)
with gzip.open(D + "/train-labels-idx1-ubyte.gz") as f:
    y = np.frombuffer(f.read(), np.uint8, offset=8)
x = torch.from_numpy(x.astype(np.float32) / 255.0)
x = (x - x.mean()) / x.std()
y = torch.from_numpy(y.astype(np.int64))


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


model = CNN()
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
perm = torch.randperm(x.shape[0])
spe = x.shape[0] // batch
busy = 0.0
for s in range(steps):
    idx = perm[(s % spe) * batch:(s % spe + 1) * batch]
    xb, yb = x[idx], y[idx]
    t0 = time.perf_counter()
    opt.zero_grad()
    loss = F.cross_entropy(model(xb), yb)
    loss.backward()
    opt.step()
    busy += time.perf_counter() - t0
print("samples_per_s %.1f" % (steps * batch / busy))
