#!/usr/bin/python3
"""bench_cnn.py - the PyTorch peer of hpctrain's cnn benchmark.

Trains hpctrain's cnn (conv 3x3 32, pool, conv 3x3 64, pool, linear 128,
linear 10, ReLUs) on Fashion-MNIST with SGD (momentum 0.9, lr 0.05),
batch B, for S steps at T threads: the same model, data and normalisation
as `hpctrain train`, run the way PyTorch's users run it at their best:

- on a tuned BLAS.  The linear layers' GEMMs go to the BLAS that torch
  loaded; netlib's reference libblas.so.3 (a fresh Debian's default) runs
  them at a few GFLOP/s.  After a matmul, the library that holds the
  sgemm_ torch calls is looked up in /proc/self/maps and printed; on the
  reference BLAS (or none) the measurement has failed: this prints
  "blas reference PATH" and exits 1.
- in both memory formats, contiguous (NCHW) and channels_last, each from
  the same seed for S steps; the faster one is the result.
- OpenBLAS gets T threads too (OPENBLAS_NUM_THREADS): torch's thread
  count does not reach it.

Timing is hpctrain train's: a step runs from taking its batch out of the
shuffled training set to the end of the optimizer update, and the first
W steps (oneDNN's JIT, the allocator warming up) are not counted.

    /usr/bin/python3 tests/torch/bench_cnn.py STEPS BATCH THREADS WARMUP

Prints
    blas NAME DETAIL
    format contiguous samples_per_s X
    format channels_last samples_per_s Y
    samples_per_s Z format F
"""
import ctypes
import gzip
import os
import sys
import time

steps, batch, threads, warmup = (int(a) for a in sys.argv[1:5])
if not 0 <= warmup < steps:
    sys.exit("bench_cnn.py: need 0 <= WARMUP < STEPS")
# read by OpenBLAS when it is loaded, below
os.environ["OPENBLAS_NUM_THREADS"] = str(threads)

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

TUNED = (("openblas", "OpenBLAS"), ("mkl", "MKL"), ("blis", "BLIS"), ("atlas", "ATLAS"))


def mappings():
    """(start, end, path) of each file mapped into this process."""
    out = []
    with open("/proc/self/maps") as f:
        for line in f:
            p = line.split(maxsplit=5)
            if len(p) == 6:
                lo, hi = (int(v, 16) for v in p[0].split("-"))
                out.append((lo, hi, p[5].strip()))
    return out


def sgemm_library(maps):
    """The file whose sgemm_ torch's GEMMs call: the dynamic linker looks
    in the global scope first, then in libtorch_cpu's own dependencies
    (several BLAS may be mapped: Debian's liblapack.so.3 can bring
    OpenBLAS in while libblas.so.3 is netlib's)."""
    torch_cpu = [p for _, _, p in maps if "libtorch_cpu" in p]
    for scope in [None] + torch_cpu[:1]:
        try:
            addr = ctypes.cast(ctypes.CDLL(scope).sgemm_, ctypes.c_void_p).value
        except (OSError, AttributeError):
            continue
        return next((p for lo, hi, p in maps if lo <= addr < hi), None)
    return None


def openblas_detail(path):
    try:
        lib = ctypes.CDLL(path)
        lib.openblas_get_config.restype = ctypes.c_char_p
        lib.openblas_get_corename.restype = ctypes.c_char_p
        return "%s, %s kernels, %d thread(s)" % (
            lib.openblas_get_config().decode().split(" ")[1],
            lib.openblas_get_corename().decode(), lib.openblas_get_num_threads())
    except (OSError, AttributeError, IndexError):
        return path


def loaded_blas():
    """(name, detail) of the BLAS torch's GEMMs run on, after one ran:
    name "reference" for netlib's, "none" when none is found."""
    a = torch.ones(64, 64)
    (a @ a).sum().item()
    path = sgemm_library(mappings())
    if path is None:
        return "none", "no sgemm_ in this process"
    for key, name in TUNED:
        if key in path.lower():
            return name, openblas_detail(path) if name == "OpenBLAS" else path
    # pip's wheels link MKL into libtorch_cpu itself
    if "libtorch_cpu" in path and "BLAS_INFO=mkl" in torch.__config__.show():
        return "MKL", "linked into " + path
    return "reference", path


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


def train(x, y, fmt):
    """Samples/s of steps WARMUP.. in memory format fmt."""
    torch.manual_seed(0)
    model = CNN().to(memory_format=fmt)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    perm = torch.randperm(x.shape[0])
    spe = x.shape[0] // batch
    busy = 0.0
    for s in range(steps):
        t0 = time.perf_counter()
        idx = perm[(s % spe) * batch:(s % spe + 1) * batch]
        xb, yb = x[idx].contiguous(memory_format=fmt), y[idx]
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(xb), yb)
        loss.backward()
        opt.step()
        if s >= warmup:
            busy += time.perf_counter() - t0
    return (steps - warmup) * batch / busy


def main():
    torch.set_num_threads(threads)
    name, detail = loaded_blas()
    if name in ("reference", "none"):
        print("blas %s %s" % (name, detail))
        sys.exit(1)
    print("blas %s %s" % (name, detail))
    d = "/usr/share/datasets/fashion-mnist"
    with gzip.open(d + "/train-images-idx3-ubyte.gz") as f:
        x = np.frombuffer(f.read(), np.uint8, offset=16).reshape(-1, 1, 28, 28)
    with gzip.open(d + "/train-labels-idx1-ubyte.gz") as f:
        y = np.frombuffer(f.read(), np.uint8, offset=8)
    x = torch.from_numpy(x.astype(np.float32) / 255.0)
    x = (x - x.mean()) / x.std()
    y = torch.from_numpy(y.astype(np.int64))
    best = None
    for label, fmt in (("contiguous", torch.contiguous_format),
                       ("channels_last", torch.channels_last)):
        sps = train(x, y, fmt)
        print("format %s samples_per_s %.1f" % (label, sps), flush=True)
        if best is None or sps > best[0]:
            best = (sps, label)
    print("samples_per_s %.1f format %s" % best)


main()
