#!/bin/sh
# whoami.sh - what a launched rank sees: one line of KEY=value pairs.
cpus=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)
slice_cpus=$(printf '%s' "$HPCTRAIN_SLICE" | sed 's/.*"cpus":"\([^"]*\)".*/\1/')
echo "rank=$RANK local=$LOCAL_RANK world=$WORLD_SIZE lws=$LOCAL_WORLD_SIZE node=$NODE_RANK" \
	"master=$MASTER_ADDR:$MASTER_PORT cpus=$cpus slice=$slice_cpus omp=$OMP_NUM_THREADS" \
	"cvd=${CUDA_VISIBLE_DEVICES-unset} host=$(hostname)"
