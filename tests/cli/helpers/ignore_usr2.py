#!/usr/bin/python3
# ignore_usr2.py - ignores SIGUSR2 and waits; a restarted run ends at once.
# For tests/cli/supervise.bats.
import os
import signal
import time

if int(os.environ.get("SLURM_RESTART_COUNT", "0")) > 0:
    print("restarted", flush=True)
    raise SystemExit(0)
signal.signal(signal.SIGUSR2, signal.SIG_IGN)
print("ignoring USR2", flush=True)
while True:
    time.sleep(0.2)
