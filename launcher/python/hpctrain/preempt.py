"""preempt.py - stop at a step boundary when the job is to be preempted.

hpctrain sends the spec's preempt.signal (HPCTRAIN_PREEMPT_SIGNAL, USR2
by default) before the time limit and when Slurm preempts the job; under
Slurm a rank may get it twice, and not every rank at the same moment.
The handler only sets a flag.  requested(), called by every rank at the
same step, agrees on it (an all-reduce of one number when
torch.distributed is initialised), so all ranks checkpoint at one step;
then exit() ends with 75, which requeues the job, and the next attempt
resumes from that checkpoint.
"""
import signal
import sys

from hpctrain.env import env

EXIT_PREEMPTED = 75


class Preemption:
    def __init__(self, signals=None):
        names = signals or (env().preempt_signal,)
        self.flag = False
        for name in names:
            signum = getattr(signal, "SIG" + name.upper().removeprefix("SIG"), None)
            if not isinstance(signum, signal.Signals):
                raise ValueError(f"hpctrain: {name!r} names no signal")
            signal.signal(signum, self._on_signal)

    def _on_signal(self, signum, frame):
        self.flag = True  # a flag bears being set twice; nothing else is safe here

    def requested(self):
        """Whether any rank got the signal; a collective when distributed."""
        try:
            import torch
            import torch.distributed as dist
        except ImportError:
            return self.flag
        if not (dist.is_available() and dist.is_initialized()):
            return self.flag
        agreed = torch.tensor([1.0 if self.flag else 0.0])
        dist.all_reduce(agreed, op=dist.ReduceOp.MAX)
        return bool(agreed.item())

    def exit(self):
        """Leave the process group and exit 75: requeue and resume."""
        try:
            import torch.distributed as dist
            if dist.is_available() and dist.is_initialized():
                dist.destroy_process_group()
        except ImportError:
            pass
        sys.exit(EXIT_PREEMPTED)
