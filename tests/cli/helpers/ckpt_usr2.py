#!/usr/bin/python3
# ckpt_usr2.py - counts steps, checkpoints on SIGUSR2 and exits 75; on a
# restart, resumes from the checkpoint.  For tests/cli/supervise.bats.
import os
import signal
import sys
import tempfile
import time

ckpt = "ckpt.txt"
step = int(open(ckpt).read()) if os.path.exists(ckpt) else 0
if step:
    print(f"resumed from step {step}", flush=True)
stop = False


def on_usr2(signum, frame):
    global stop
    stop = True


signal.signal(signal.SIGUSR2, on_usr2)
while step < 40:
    if stop:
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(ckpt)))
        with os.fdopen(fd, "w") as f:
            f.write(str(step))
        os.replace(tmp, ckpt)
        print(f"checkpointed at step {step}", flush=True)
        sys.exit(75)
    step += 1
    print(f"step {step}", flush=True)
    time.sleep(0.1 if os.path.exists(ckpt) else 0.5)
print("done", flush=True)
