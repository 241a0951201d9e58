# launcher/slurm/build.mk - Slurm: a job spec as a batch script and its
# options (render, pure), a job state word as status shows it (slurm_state,
# pure), libslurm's errno as an exit status (slurm_errno,
# pure), and libslurm (slurm.c: submit, query, cancel).
# Debian 12's libslurm-dev has no slurm.pc: launcher/slurm/slurm.pc
# stands in, by path.

SLURM_PC   := $(if $(shell $(PKG_CONFIG) --exists slurm 2>/dev/null && echo y),slurm,launcher/slurm/slurm.pc)

HPCTRAIN_PKGS += $(SLURM_PC)
# The launch, submit and doctor tests run under a real local Slurm
# (tests/cluster/).
DEBIAN_PKGS   += slurm-wlm slurmctld slurmd slurm-client munge libslurm-dev libpmix-dev \
                 openmpi-bin libopenmpi-dev iproute2 util-linux
# environment.modules is tested against Debian's Lmod (tests/cli/environment.bats).
DEBIAN_PKGS   += lmod

UNIT_TESTS += test_render test_slurm_state test_slurm_errno test_hostlist

# A throw-away local Slurm (tests/cluster/up.sh): MODE=single|multi|netns,
# BASE=/tmp/hpctrain-cluster.  `eval $(make -s cluster-up)` sets SLURM_CONF.
CLUSTER_BASE ?= /tmp/hpctrain-cluster
cluster-up:
	@BASE=$(CLUSTER_BASE) bash tests/cluster/up.sh
cluster-down:
	@BASE=$(CLUSTER_BASE) bash tests/cluster/down.sh
.PHONY: cluster-up cluster-down
