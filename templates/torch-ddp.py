#!/usr/bin/python3
# torch-ddp.py - the PyTorch DDP recipe of templates/torch-ddp.yaml: a
# program that trains alike at any world size, resumes, and stops cleanly.
#
# - Samples: global batch k of epoch e holds the same samples at any world
#   size.  The order is a permutation seeded by (seed, epoch) alone; batch k
#   is positions [k*B, (k+1)*B) of it; rank r takes every world-th of them.
# - Global batch: B samples per optimizer step whatever the world size.  A
#   rank splits its share into micro-batches of at most --micro-batch and
#   accumulates their gradients (DDP's no_sync) before one all-reduce, so a
#   job requeued on fewer nodes accumulates more, and steps the same.
# - Checkpoint: rank 0 writes $HPCTRAIN_CHECKPOINT_DIR/ckpt.pt (default
#   checkpoints/ in the run directory) to a temporary file and renames it
#   (os.replace), so a kill leaves the old one whole; a start resumes from it.
# - Preemption: USR2 (the spec's preempt.signal) sets a flag; the ranks agree
#   on it at the next step (an all-reduce of one number), checkpoint, and
#   exit 75, which hpctrain requeues.
# - Metrics: rank 0 appends step, epoch and summary records to metrics.jsonl
#   in the run directory (METRICS FORMAT in hpctrain-report(1)), so
#   hpctrain status and hpctrain report show the run's progress.  Each step
#   record's batch_hash (the global batch's sample indices, hashed) lets two
#   runs at different world sizes be compared step by step.
#
# hpctrain launch sets RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT
# (env:// initialisation); HPCTRAIN_ATTEMPT, HPCTRAIN_PREV_WORLD_SIZE and
# HPCTRAIN_CHECKPOINT_DIR are read with defaults for a first attempt.
import argparse
import hashlib
import json
import os
import signal
import sys
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP


def env_int(name, default):
    try:
        return int(os.environ.get(name, ""))
    except ValueError:
        return default


def parse_args():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--steps", type=int, default=200, help="optimizer steps in all")
    p.add_argument("--global-batch", type=int, default=64, help="samples per step, any world size")
    p.add_argument("--micro-batch", type=int, default=16, help="most samples per forward")
    p.add_argument("--samples", type=int, default=4096, help="samples in the synthetic set")
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--checkpoint-every", type=int, default=50, help="steps between checkpoints")
    p.add_argument("--step-sleep", type=float, default=0.0, help=argparse.SUPPRESS)
    return p.parse_args()


def global_batch(seed, epoch, k, batch, n):
    """Global sample indices of batch k of epoch: seed, epoch and k alone
    decide them, never the world size."""
    g = torch.Generator().manual_seed(seed * 1000003 + epoch)
    perm = torch.randperm(n, generator=g)
    return perm[k * batch:(k + 1) * batch]


def dataset(n):
    """A fixed regression set: y = x.w + noise, the same on every rank."""
    g = torch.Generator().manual_seed(1234)
    x = torch.randn(n, 16, generator=g)
    w = torch.randn(16, 1, generator=g)
    return x, x @ w + 0.1 * torch.randn(n, 1, generator=g)


def save_checkpoint(path, state):
    """Write to a temporary file beside path, then rename: all or nothing."""
    tmp = f"{path}.tmp.{os.getpid()}"
    with open(tmp, "wb") as f:
        torch.save(state, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


class Metrics:
    """Rank 0's records in metrics.jsonl; the other ranks write none."""

    def __init__(self, on):
        self.f = open("metrics.jsonl", "a") if on else None

    def log(self, **rec):
        if self.f:
            self.f.write(json.dumps(rec) + "\n")
            self.f.flush()


def main():
    a = parse_args()
    torch.set_num_threads(1)
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    attempt = env_int("HPCTRAIN_ATTEMPT", 1)
    # 0 on a first attempt; a requeue of the same attempt keeps it: the
    # checkpoint says best what ran before
    prev_world = env_int("HPCTRAIN_PREV_WORLD_SIZE", 0) or world
    ckpt_dir = os.environ.get("HPCTRAIN_CHECKPOINT_DIR") or "checkpoints"
    ckpt = os.path.join(ckpt_dir, "ckpt.pt")
    heartbeat = os.environ.get("HPCTRAIN_HEARTBEAT")
    if a.global_batch < world:
        sys.exit(f"torch-ddp: global batch {a.global_batch} is smaller than {world} ranks")

    stop = False

    def on_signal(signum, frame):
        nonlocal stop
        stop = True  # Slurm and hpctrain may both send it: a flag bears two

    signal.signal(signal.SIGUSR2, on_signal)

    torch.manual_seed(a.seed)
    model = DDP(torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.Tanh(), torch.nn.Linear(32, 1)))
    opt = torch.optim.SGD(model.parameters(), lr=a.lr, momentum=0.9)
    step = 0
    if os.path.exists(ckpt):
        state = torch.load(ckpt, map_location="cpu")
        model.module.load_state_dict(state["model"])
        opt.load_state_dict(state["optim"])
        step = state["step"]
        prev_world = state.get("world_size", prev_world)
    x, y = dataset(a.samples)
    per_epoch = a.samples // a.global_batch
    share = len(range(rank, a.global_batch, world))
    accum = -(-share // a.micro_batch)
    if rank == 0:
        print(f"torch-ddp: attempt {attempt}, {world} ranks (was {prev_world}), step {step} of "
              f"{a.steps}; {accum} micro-batches of at most {a.micro_batch} per rank and step",
              flush=True)
    metrics = Metrics(rank == 0)

    def checkpoint():
        if rank == 0:
            os.makedirs(ckpt_dir, mode=0o700, exist_ok=True)
            save_checkpoint(ckpt, {"model": model.module.state_dict(), "optim": opt.state_dict(),
                                   "step": step, "world_size": world})
        dist.barrier()  # nobody exits before the checkpoint is whole

    t_start, n_start = time.time(), step
    loss_sum = 0.0
    while step < a.steps:
        flag = torch.tensor([1.0 if stop else 0.0])
        dist.all_reduce(flag, op=dist.ReduceOp.MAX)  # every rank stops at the same step
        if flag.item():
            checkpoint()
            if rank == 0:
                print(f"torch-ddp: preempted; checkpointed at step {step}", flush=True)
            dist.destroy_process_group()
            sys.exit(75)
        t0 = time.time()
        epoch, k = divmod(step, per_epoch)
        batch = global_batch(a.seed, epoch, k, a.global_batch, a.samples)
        mine = batch[rank::world]
        opt.zero_grad(set_to_none=True)
        step_loss = torch.zeros(1)
        for i, idx in enumerate(mine.split(a.micro_batch)):
            # sum over the global batch, so DDP's mean over ranks times
            # world is the global batch's mean, however the samples split
            loss = F.mse_loss(model(x[idx]), y[idx], reduction="sum") * world / a.global_batch
            if i < accum - 1:
                with model.no_sync():
                    loss.backward()
            else:
                loss.backward()
            step_loss += loss.detach() / world
        opt.step()
        dist.all_reduce(step_loss)
        step += 1
        loss_sum += step_loss.item()
        if a.step_sleep:
            time.sleep(a.step_sleep)
        if heartbeat:
            with open(heartbeat, "a"):
                os.utime(heartbeat)
        ms = (time.time() - t0) * 1000
        metrics.log(event="step", step=step, total_steps=a.steps, epoch=epoch, loss=step_loss.item(),
                    lr=a.lr, step_ms=ms, samples_per_s=a.global_batch / max(ms / 1000, 1e-9),
                    attempt=attempt, world_size=world, global_batch=a.global_batch,
                    batch_hash=hashlib.sha256(batch.numpy().tobytes()).hexdigest()[:16])
        if step % per_epoch == 0:
            metrics.log(event="epoch", epoch=epoch + 1, steps=step, train_loss=loss_sum / per_epoch)
            loss_sum = 0.0
        if step % a.checkpoint_every == 0 and step < a.steps:
            checkpoint()
    checkpoint()
    elapsed = max(time.time() - t_start, 1e-9)
    metrics.log(event="summary", steps=step, ranks=world,
                mean_samples_per_s=(step - n_start) * a.global_batch / elapsed)
    if rank == 0:
        print(f"torch-ddp: done, {step} steps, last loss {step_loss.item():.4f}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
