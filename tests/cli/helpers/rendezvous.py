#!/usr/bin/env python3
"""rendezvous.py - a PyTorch-style program that only reads RANK, WORLD_SIZE,
MASTER_ADDR and MASTER_PORT, as torch.distributed's env:// init does.

Rank 0 listens on MASTER_ADDR:MASTER_PORT; every other rank connects and
sends its rank and world size; rank 0 checks it heard from each rank once,
all agreeing on the world size, and prints "rendezvous ok N".  A rank that
got other values than its peers cannot meet them, so this fails loudly.
"""
import os
import socket
import sys
import time

rank = int(os.environ["RANK"])
world = int(os.environ["WORLD_SIZE"])
addr = os.environ["MASTER_ADDR"]
port = int(os.environ["MASTER_PORT"])

if rank == 0:
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("", port))
    srv.listen(world)
    srv.settimeout(30)
    seen = {0}
    while len(seen) < world:
        conn, _ = srv.accept()
        r, w = conn.recv(64).decode().split()
        conn.close()
        if int(w) != world or int(r) in seen:
            sys.exit(f"rank {r} says world {w}; rank 0 says {world}")
        seen.add(int(r))
    print(f"rendezvous ok {world}")
else:
    deadline = time.time() + 30
    while True:
        try:
            c = socket.create_connection((addr, port), timeout=5)
            break
        except OSError:
            if time.time() > deadline:
                raise
            time.sleep(0.05)
    c.sendall(f"{rank} {world}".encode())
    c.close()
