"""env.py - the variables hpctrain launch sets for a rank, as one object.

Read once, checked, typed.  Outside hpctrain (a program started by hand)
every field has the value of a first attempt on one rank, so the same
program runs either way.  A variable that is set but malformed is an
error naming it, never a silent default: a wrong rank trains wrong.
"""
import dataclasses
import os

DATA_PREFIX = "HPCTRAIN_DATA_"


@dataclasses.dataclass(frozen=True)
class Env:
    rank: int               # RANK
    world_size: int         # WORLD_SIZE
    local_rank: int         # LOCAL_RANK
    local_world_size: int   # LOCAL_WORLD_SIZE
    node_rank: int          # NODE_RANK
    attempt: int            # HPCTRAIN_ATTEMPT: 1 first; a requeue keeps it
    restart: int            # SLURM_RESTART_COUNT: requeues of this attempt's job
    prev_world_size: int    # HPCTRAIN_PREV_WORLD_SIZE: the checkpoints' size, 0 fresh
    checkpoint_dir: str     # HPCTRAIN_CHECKPOINT_DIR, default "checkpoints"
    data: dict              # staged entry NAME -> its path on this node
    heartbeat: str          # HPCTRAIN_HEARTBEAT, or "" when none
    preempt_signal: str     # HPCTRAIN_PREEMPT_SIGNAL (USR2, TERM, INT)
    launched: bool          # whether hpctrain launch set these (HPCTRAIN_RANK)
    run_dir: str = ""       # HPCTRAIN_RUN_DIR: set when the program runs in its code
                            # snapshot (HPCTRAIN_CODE_DIR), not in the run directory

    @property
    def resized(self):
        """Whether this attempt goes on from checkpoints of another size."""
        return self.prev_world_size not in (0, self.world_size)


def _int(environ, name, default, least=0):
    text = environ.get(name)
    if text is None or text == "":
        return default
    try:
        value = int(text, 10)
    except ValueError:
        value = None
    if value is None or value < least:
        raise ValueError(f"hpctrain: {name}={text!r} is not a whole number >= {least}")
    return value


def env(environ=None):
    """The rank's Env, from environ (default os.environ)."""
    e = os.environ if environ is None else environ
    world = _int(e, "WORLD_SIZE", 1, least=1)
    rank = _int(e, "RANK", 0)
    if rank >= world:
        raise ValueError(f"hpctrain: RANK={rank} is not below WORLD_SIZE={world}")
    return Env(rank=rank, world_size=world,
               local_rank=_int(e, "LOCAL_RANK", 0),
               local_world_size=_int(e, "LOCAL_WORLD_SIZE", 1, least=1),
               node_rank=_int(e, "NODE_RANK", 0),
               attempt=_int(e, "HPCTRAIN_ATTEMPT", 1, least=1),
               restart=_int(e, "SLURM_RESTART_COUNT", 0),
               prev_world_size=_int(e, "HPCTRAIN_PREV_WORLD_SIZE", 0),
               checkpoint_dir=e.get("HPCTRAIN_CHECKPOINT_DIR") or "checkpoints",
               data={k[len(DATA_PREFIX):]: v for k, v in e.items()
                     if k.startswith(DATA_PREFIX) and len(k) > len(DATA_PREFIX)},
               heartbeat=e.get("HPCTRAIN_HEARTBEAT", ""),
               preempt_signal=e.get("HPCTRAIN_PREEMPT_SIGNAL") or "USR2",
               launched="HPCTRAIN_RANK" in e,
               run_dir=e.get("HPCTRAIN_RUN_DIR") or "")
