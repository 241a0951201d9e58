#!/bin/sh
# dp_comm.sh - gradient exchange of trainer/comm/comm.c on 2 local ranks:
# the cnn's gradients bucketed vs one allreduce per tensor (blocking, and
# non-blocking as Horovod/DDP issue them without fusion), and an
# nccl-tests style busbw table of a comm.c bucket vs raw MPI_Allreduce
# over sizes, side by side in one run (build/bench/bench_comm).
# Goals: buckets >= 3x per-tensor; bucket busbw >= 90% of raw.
set -eu
cd "$(dirname "$0")/../.."
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
[ -x build/bench/bench_comm ] || make -s build/bench/bench_comm
mpirun --bind-to core -np 2 build/bench/bench_comm
