#!/usr/bin/python3
# torch-ddp.py - the PyTorch DDP program of templates/torch-ddp.yaml, on the
# hpctrain module (hpctrain-program(7)); copy it, change the model and data.
# Step k's global batch is the same samples at any world size, accumulated
# over micro-batches (one all-reduce a step), so a job requeued on fewer
# ranks steps the same; checkpoints are atomic and verified; the preemption
# signal stops every rank at one step, checkpointed, with exit 75 (requeue);
# rank 0 logs metrics.jsonl for hpctrain status, report and plan.
import argparse
import sys
import time

import hpctrain
import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP


def main():
    p = argparse.ArgumentParser(description="A DDP program on the hpctrain module.")
    for flag, kind, default in (("--steps", int, 200), ("--global-batch", int, 64),
                                ("--micro-batch", int, 16), ("--samples", int, 4096),
                                ("--lr", float, 0.05), ("--seed", int, 1),
                                ("--checkpoint-every", int, 50), ("--step-sleep", float, 0.0)):
        p.add_argument(flag, type=kind, default=default)
    a = p.parse_args()
    torch.set_num_threads(1)
    stop = hpctrain.Preemption()  # before the slow start: a signal then is not lost
    dist.init_process_group("gloo")
    e, rank, world = hpctrain.env(), dist.get_rank(), dist.get_world_size()
    if a.global_batch < world:
        sys.exit(f"torch-ddp: global batch {a.global_batch} is smaller than {world} ranks")
    torch.manual_seed(a.seed)
    model = DDP(torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.Tanh(), torch.nn.Linear(32, 1)))
    opt = torch.optim.SGD(model.parameters(), lr=a.lr, momentum=0.9)
    loaded = time.monotonic()
    step, prev_world, state = 0, e.prev_world_size or world, hpctrain.load()
    loaded = time.monotonic() - loaded
    if state:
        model.module.load_state_dict(state["model"])
        opt.load_state_dict(state["optim"])
        step, prev_world = state["step"], state["world_size"]
    g = torch.Generator().manual_seed(1234)  # data: y = x.w + noise, the same on every rank
    x = torch.randn(a.samples, 16, generator=g)
    y = x @ torch.randn(16, 1, generator=g) + 0.1 * torch.randn(a.samples, 1, generator=g)
    batches, metrics = hpctrain.GlobalBatches(a.samples, a.global_batch, a.seed), hpctrain.Metrics()
    if state:
        metrics.resume(step, loaded)
    pieces = len(batches.micro_batches(step, rank, world, a.micro_batch))
    say = print if rank == 0 else (lambda *_, **__: None)  # rank 0 speaks for all
    say(f"torch-ddp: attempt {e.attempt}, {world} ranks (was {prev_world}), step {step} of "
        f"{a.steps}; {pieces} micro-batches of at most {a.micro_batch} per rank and step", flush=True)

    def checkpoint():
        hpctrain.save({"model": model.module.state_dict(), "optim": opt.state_dict(),
                       "step": step, "world_size": world})

    while step < a.steps:
        if stop.requested():
            checkpoint()
            say(f"torch-ddp: preempted; checkpointed at step {step}", flush=True)
            stop.exit()
        t0 = time.time()
        opt.zero_grad(set_to_none=True)
        loss = torch.tensor([hpctrain.accumulate(
            model, [torch.tensor(i) for i in batches.micro_batches(step, rank, world, a.micro_batch)],
            lambda i: F.mse_loss(model(x[i]), y[i], reduction="sum"), a.global_batch, world)])
        opt.step()
        dist.all_reduce(loss)
        time.sleep(a.step_sleep)
        metrics.step(step + 1, loss.item(), (time.time() - t0) * 1000, a.global_batch, a.steps,
                     epoch=batches.position(step)[0], lr=a.lr, batch_hash=batches.batch_hash(step))
        step += 1
        if step % a.checkpoint_every == 0 and step < a.steps:
            checkpoint()
    checkpoint()
    metrics.summary(step)
    say(f"torch-ddp: done, {step} steps, last loss {loss.item():.4f}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
