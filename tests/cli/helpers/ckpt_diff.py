#!/usr/bin/env python3
"""ckpt_diff.py A B - compare the parameters of two hpctrain checkpoints.

Prints "rel L2 max_abs": the relative L2 difference |a-b|/|b| of the
parameter vectors and the largest absolute difference.  The layout is
trainer/ckpt.c's: version at offset 8, nparams at 116, the parameters
after a 140-byte (version 1) or 156-byte (version 2) header."""
import struct
import sys
from array import array


def params(path):
    with open(path, "rb") as f:
        buf = f.read()
    assert buf[:8] == b"HPTCKPT1", path
    version = struct.unpack_from("<I", buf, 8)[0]
    n = struct.unpack_from("<Q", buf, 116)[0]
    off = 140 if version == 1 else 156
    a = array("f")
    a.frombytes(buf[off:off + 4 * n])
    return a


a, b = params(sys.argv[1]), params(sys.argv[2])
assert len(a) == len(b), (len(a), len(b))
d2 = sum((x - y) ** 2 for x, y in zip(a, b))
n2 = sum(y * y for y in b)
mx = max(abs(x - y) for x, y in zip(a, b))
print("%.3e %.3e" % ((d2 / n2) ** 0.5, mx))
