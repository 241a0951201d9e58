#!/usr/bin/env python3
"""ckpt_diff.py [--state] A B - compare the parameters of two hpctrain
checkpoints, or with --state their batch-norm running statistics.

Prints "rel L2 max_abs": the relative L2 difference |a-b|/|b| of the
vectors and the largest absolute difference.  The layout is
trainer/model/ckpt.c's: version at offset 8, nparams at 116, nstate at 124,
the parameters after a 140-byte (version 1) or 156-byte (version 2)
header, or a 212-byte one (version 3), the state right after them."""
import struct
import sys
from array import array


def vector(path, state):
    with open(path, "rb") as f:
        buf = f.read()
    assert buf[:8] == b"HPTCKPT1", path
    version = struct.unpack_from("<I", buf, 8)[0]
    n, ns = struct.unpack_from("<QQ", buf, 116)
    off = {1: 140, 2: 156}.get(version, 212)
    if state:
        off, n = off + 4 * n, ns
    a = array("f")
    a.frombytes(buf[off:off + 4 * n])
    return a


args = sys.argv[1:]
state = args[:1] == ["--state"]
if state:
    args = args[1:]
a, b = vector(args[0], state), vector(args[1], state)
assert len(a) == len(b) and len(b) > 0, (len(a), len(b))
d2 = sum((x - y) ** 2 for x, y in zip(a, b))
n2 = sum(y * y for y in b)
mx = max(abs(x - y) for x, y in zip(a, b))
print("%.3e %.3e" % ((d2 / n2) ** 0.5, mx))
