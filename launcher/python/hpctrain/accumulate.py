"""accumulate.py - one optimizer step's gradients over a rank's micro-batches.

DDP all-reduces gradients at every backward; inside model.no_sync() it
only accumulates them.  Every micro-batch but the last runs there (the
forward too, as DDP requires), so one all-reduce ends the step whatever
the number of micro-batches.  Each loss is a sum over its samples scaled
by world/global_batch: DDP's mean over ranks then makes the gradient the
global batch's mean, however the samples split among ranks and pieces.
"""
import contextlib


def accumulate(model, micro_batches, loss_sum, global_batch, world):
    """Backward of loss_sum(piece) for each piece; returns this rank's part
    of the global batch's mean loss (a float; all-reduce it for the mean)."""
    total = 0.0
    last = len(micro_batches) - 1
    scale = world / global_batch
    for i, piece in enumerate(micro_batches):
        quiet = model.no_sync() if i < last and hasattr(model, "no_sync") else contextlib.nullcontext()
        with quiet:
            loss = loss_sum(piece) * scale
            loss.backward()
        total += float(loss.detach()) / world
    return total
