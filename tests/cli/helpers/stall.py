#!/usr/bin/python3
# stall.py - three ranks of torch.distributed (gloo); rank 1 never reaches
# the all_reduce that the others wait in.  For tests/cli/supervise.bats.
# Until it is ready a thread says it is starting, once a second: three
# ranks importing torch on a loaded machine may print nothing for longer
# than the stall timeout, and a program that logs its start is not stalled.
import threading
import time


def say_starting():
    while not ready.wait(1):
        print("starting", flush=True)


ready = threading.Event()
threading.Thread(target=say_starting, daemon=True).start()

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

dist.init_process_group("gloo")
x = torch.ones(4)
ready.set()
print(f"rank {dist.get_rank()} ready", flush=True)
if dist.get_rank() == 1:
    time.sleep(3600)
dist.all_reduce(x)
