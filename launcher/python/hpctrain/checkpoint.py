"""checkpoint.py - a checkpoint written whole or not at all, verified when read.

Rank 0 writes NAME (default ckpt.pt) in the checkpoint directory
(HPCTRAIN_CHECKPOINT_DIR, whose choice follows the fresh/resume rule of
hpctrain-program(7)): into a temporary file beside it, fsync'd, then
renamed into place, after the previous one is renamed NAME.prev.  A rank
killed at any moment leaves one whole file or the other.  Each file
opens with a line that carries its length and SHA-256: a file that does
not match (torn by a full disk, flipped on a bad device) is passed over
for the one before it, said on stderr.  The state itself is the caller's:
store what a resume at another world size needs (the unwrapped model's
state_dict, the optimizer's, the step), and nothing tied to a rank.
"""
import contextlib
import hashlib
import io
import os
import pickle
import stat
import sys
import tempfile

from hpctrain.env import env

MAGIC = b"HPCTRAIN-CHECKPOINT 1"


def _dist():
    try:
        import torch.distributed as dist
    except ImportError:
        return None
    return dist if dist.is_available() and dist.is_initialized() else None


def _encode(state):
    buf = io.BytesIO()
    try:
        import torch
        torch.save(state, buf)
        kind = b"torch"
    except ImportError:
        pickle.dump(state, buf, protocol=pickle.HIGHEST_PROTOCOL)
        kind = b"pickle"
    body = buf.getvalue()
    head = b"%s %s %d %s\n" % (MAGIC, kind, len(body), hashlib.sha256(body).hexdigest().encode())
    return head + body


def _decode(data, map_location):
    head, sep, body = data.partition(b"\n")
    fields = head.split(b" ")
    if not sep or len(fields) != 5 or b" ".join(fields[:2]) != MAGIC:
        raise ValueError("not an hpctrain checkpoint")
    kind, length, digest = fields[2], fields[3], fields[4].decode("ascii", "replace")
    if not length.isdigit() or int(length) != len(body):
        raise ValueError(f"{len(body)} bytes where its header says {length.decode()}: torn")
    if hashlib.sha256(body).hexdigest() != digest:
        raise ValueError("its SHA-256 is not the one it was written with: damaged")
    if kind == b"torch":
        import torch
        return torch.load(io.BytesIO(body), map_location=map_location)
    if kind == b"pickle":
        return pickle.loads(body)
    raise ValueError(f"written by an unknown serializer {kind!r}")


def save(state, directory=None, name="ckpt.pt", rank=None):
    """Rank 0 writes state; every rank then waits until it is whole (when
    torch.distributed is initialised, a barrier), so none exits before."""
    directory = directory or env().checkpoint_dir
    rank = env().rank if rank is None else rank
    if rank == 0:
        os.makedirs(directory, mode=0o700, exist_ok=True)
        path = os.path.join(directory, name)
        fd, tmp = tempfile.mkstemp(prefix=f".{name}.", dir=directory)  # 0600
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(_encode(state))
                f.flush()
                os.fsync(f.fileno())
            if os.path.exists(path):
                os.replace(path, path + ".prev")
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        dfd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(dfd)  # the renames outlive a crash of the node
        finally:
            os.close(dfd)
    d = _dist()
    if d:
        d.barrier()


def _read_regular(path):
    """The bytes of path if it is a regular file; a FIFO, a device or a
    link is refused without blocking on it."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ValueError("not a regular file")
        return f.read()


def load(directory=None, name="ckpt.pt", map_location="cpu"):
    """The newest checkpoint that verifies, or None when there is none.  A
    directory holding checkpoints none of which verifies is an error: a
    silent fresh start would overwrite what might yet be recovered."""
    directory = directory or env().checkpoint_dir
    tried = []
    for path in (os.path.join(directory, name), os.path.join(directory, name + ".prev")):
        try:
            data = _read_regular(path)
        except FileNotFoundError:
            continue
        except (OSError, ValueError) as err:
            tried.append(f"{path}: {err}")
            continue
        try:
            state = _decode(data, map_location)
        except Exception as err:  # a damaged body can fail inside the unpickler
            tried.append(f"{path}: {err}")
            print(f"hpctrain: passing over the checkpoint {path}: {err}", file=sys.stderr)
            continue
        return state
    if tried:
        raise RuntimeError("hpctrain: no checkpoint verifies: " + "; ".join(tried))
    return None
