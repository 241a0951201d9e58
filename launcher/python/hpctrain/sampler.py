"""sampler.py - which samples each optimizer step trains on, at any world size.

Global batch k of epoch e holds the same samples whatever the world size:
the order is a permutation seeded by (seed, epoch) alone, batch k is its
positions [k*B, (k+1)*B), and rank r of W takes every W-th of them.  A
step number is all a resume needs, so a run requeued mid-epoch on fewer
ranks trains on exactly the samples it would have.  A rank splits its
share into micro-batches for gradient accumulation, which holds the
global batch (hpctrain.accumulate).  Pure: no I/O, no torch.
"""
import hashlib
import random
import struct


class GlobalBatches:
    def __init__(self, num_samples, global_batch, seed=0):
        if global_batch < 1 or num_samples < global_batch:
            raise ValueError(f"hpctrain: a global batch of {global_batch} needs 1 to "
                             f"{num_samples} samples (the data set's size)")
        self.num_samples, self.global_batch, self.seed = num_samples, global_batch, seed
        self.steps_per_epoch = num_samples // global_batch  # the last partial batch is dropped
        self._epoch, self._order = None, None

    def position(self, step):
        """(epoch, batch within the epoch) of step, counted from 0."""
        return divmod(step, self.steps_per_epoch)

    def _permutation(self, epoch):
        if epoch != self._epoch:
            order = list(range(self.num_samples))
            random.Random(self.seed * 1000003 + epoch).shuffle(order)
            self._epoch, self._order = epoch, order
        return self._order

    def indices(self, step):
        """The global batch of step: sample indices, the same at any world size."""
        epoch, k = self.position(step)
        return self._permutation(epoch)[k * self.global_batch:(k + 1) * self.global_batch]

    def shard(self, step, rank, world):
        """Rank's share of step's global batch."""
        if world > self.global_batch or not 0 <= rank < world:
            raise ValueError(f"hpctrain: rank {rank} of {world} has no share of a global "
                             f"batch of {self.global_batch}")
        return self.indices(step)[rank::world]

    def micro_batches(self, step, rank, world, micro_batch):
        """Rank's share in pieces of at most micro_batch samples."""
        mine = self.shard(step, rank, world)
        return [mine[i:i + micro_batch] for i in range(0, len(mine), max(1, micro_batch))]

    def batch_hash(self, step):
        """16 hex digits naming step's global batch, to compare runs step by step."""
        idx = self.indices(step)
        return hashlib.sha256(struct.pack(f"<{len(idx)}q", *idx)).hexdigest()[:16]
