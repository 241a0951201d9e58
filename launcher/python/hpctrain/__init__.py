"""hpctrain - a program's side of hpctrain's contract (hpctrain-program(7)).

A program that hpctrain launch starts learns its rank, its attempt and
where its checkpoints and staged data are from the environment; it keeps
its global batch whatever the world size, checkpoints atomically, stops
at a step boundary with exit status 75 on the preemption signal, and
logs step records to metrics.jsonl.  This package does each in a call:

    e = hpctrain.env()                      # rank, world, attempt, dirs
    batches = hpctrain.GlobalBatches(n, 64, seed=1)
    state = hpctrain.load()                 # the newest whole checkpoint
    stop = hpctrain.Preemption()
    ...
    if stop.requested(): hpctrain.save(state); stop.exit()

Pure Python over the documented contract: the standard library, and torch
only in what handles tensors (imported when called).
"""
from hpctrain.accumulate import accumulate
from hpctrain.checkpoint import load, save
from hpctrain.env import Env, env
from hpctrain.metrics import Metrics
from hpctrain.preempt import EXIT_PREEMPTED, Preemption
from hpctrain.sampler import GlobalBatches

__all__ = ["Env", "env", "GlobalBatches", "accumulate", "save", "load", "Preemption",
           "EXIT_PREEMPTED", "Metrics"]
