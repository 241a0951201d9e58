#!/usr/bin/env python3
"""throttle.py PID STOP_MS RUN_MS - slow a process from outside, as a
busy neighbour would: SIGSTOP for STOP_MS, SIGCONT for RUN_MS, over and
over until the process is gone (then exit 0).  For tests that need a
slow rank without touching its code (no cpulimit, no writable cgroup v2
on these machines).  SIGCONT on any exit, so nothing is left stopped."""
import os
import signal
import sys
import time

pid, stop_s, run_s = int(sys.argv[1]), float(sys.argv[2]) / 1e3, float(sys.argv[3]) / 1e3


def resume(*_):
    try:
        os.kill(pid, signal.SIGCONT)
    except ProcessLookupError:
        pass
    sys.exit(0)


signal.signal(signal.SIGTERM, resume)
signal.signal(signal.SIGINT, resume)
try:
    while True:
        os.kill(pid, signal.SIGSTOP)
        time.sleep(stop_s)
        os.kill(pid, signal.SIGCONT)
        time.sleep(run_s)
except ProcessLookupError:
    pass
finally:
    resume()
