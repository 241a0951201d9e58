#!/usr/bin/python3
# stall.py - three ranks of torch.distributed (gloo); rank 1 never reaches
# the all_reduce that the others wait in.  For tests/cli/supervise.bats.
import os
import time

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
x = torch.ones(4)
print(f"rank {dist.get_rank()} ready", flush=True)
if dist.get_rank() == 1:
    time.sleep(3600)
dist.all_reduce(x)
