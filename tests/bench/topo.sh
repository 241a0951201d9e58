#!/bin/sh
# topo.sh - load + plan time per fixture topology, and one cluster of
# 8,192 nodes x 8 GPUs planned once per distinct topology from node_topo
# already in memory (budget: 1 s; loading each node's own is not in it),
# against planning every node (the peer, in the same run).
set -eu
cd "$(dirname "$0")/../.."
build/bench/bench_plan tests/fixtures
