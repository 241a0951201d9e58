"""metrics.py - the step, epoch and summary records hpctrain reads.

Rank 0 appends JSON lines to metrics.jsonl in the attempt's run directory
(HPCTRAIN_RUN_DIR when the program runs in its code snapshot, else the
working directory), the format hpctrain-program(7) documents, so
status shows progress and time left, report draws the run and plan
learns from it.  Every rank calls step(): the other ranks write nothing
but touch the heartbeat file, which is how the supervisor sees a rank
that prints nothing still making progress.
"""
import json
import os
import time

from hpctrain.env import env


class Metrics:
    def __init__(self, path=None, environ=None):
        e = env(environ)
        if path is None:
            path = os.path.join(e.run_dir, "metrics.jsonl") if e.run_dir else "metrics.jsonl"
        self.rank, self.world, self.attempt, self.restart, self.heartbeat = (
            e.rank, e.world_size, e.attempt, e.restart, e.heartbeat)
        self.file = open(path, "a", encoding="utf-8") if self.rank == 0 else None
        self.started = time.monotonic()
        self.samples = 0

    def write(self, record):
        if self.file:
            self.file.write(json.dumps(record, allow_nan=False) + "\n")
            self.file.flush()

    def step(self, step, loss, step_ms, global_batch, total_steps=None, **more):
        """Step record: samples_per_s is per rank; global_batch and
        world_size tell plan how the work splits among ranks, attempt,
        restart and world_size tell report where the run broke off."""
        self.samples += global_batch
        rec = {"event": "step", "step": step, "loss": loss, "step_ms": step_ms,
               "samples_per_s": global_batch / self.world / max(step_ms / 1000, 1e-9),
               "global_batch": global_batch, "world_size": self.world, "attempt": self.attempt,
               "restart": self.restart}
        if total_steps is not None:
            rec["total_steps"] = total_steps
        rec.update(more)
        self.write(rec)
        if self.heartbeat:
            with open(self.heartbeat, "a"):
                os.utime(self.heartbeat)

    def resume(self, checkpoint_step, load_s):
        """Before the first step of a start that loaded a checkpoint: the
        step it was written at and the seconds its load took, which a
        recovery's figures in hpctrain status read (the steps trained
        again, the load's share of the time lost)."""
        self.write({"event": "resume", "checkpoint_step": checkpoint_step, "load_s": load_s})

    def epoch(self, epoch, steps, **more):
        self.write({"event": "epoch", "epoch": epoch, "steps": steps, **more})

    def summary(self, steps, **more):
        """The run's end: global samples per second over this attempt."""
        elapsed = max(time.monotonic() - self.started, 1e-9)
        self.write({"event": "summary", "steps": steps, "ranks": self.world,
                    "global_samples_per_s": self.samples / elapsed, **more})

    def close(self):
        if self.file:
            self.file.close()
            self.file = None
