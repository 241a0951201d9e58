# launcher/build.mk - running ranks (launch).

# launch: rank discovery, environment, binding.
LAUNCH_CORE  = launcher/rank.c launcher/envplan.c
LAUNCH_SHELL = launcher/rank_pmix.c launcher/bind.c cli/cmd_launch.c
HPCTRAIN_SRC  += $(LAUNCH_CORE) $(LAUNCH_SHELL)
HPCTRAIN_PKGS += pmix
DEBIAN_PKGS   += libpmix-dev openmpi-bin libopenmpi-dev
# The launch tests run ranks under a real local Slurm (tests/cluster/).
DEBIAN_PKGS   += slurm-wlm slurmctld slurmd slurm-client munge iproute2 util-linux

UNIT_TESTS += test_launch
UNIT_SRC_test_launch = $(LAUNCH_CORE) $(TOPO_CORE) $(TOPO_SHELL) $(SPEC_CORE)
