# launcher/rank/build.mk - one rank of a job: who it is (Slurm, Open MPI,
# PMIx), its environment, its binding, and the contract it is checked
# against.

RANK_CORE  = launcher/rank/rank.c launcher/rank/envplan.c launcher/rank/env_list.c \
             launcher/rank/policy.c launcher/rank/contract.c
RANK_SHELL = launcher/rank/rank_pmix.c launcher/rank/bind.c launcher/rank/contract_got.c

HPCTRAIN_PKGS += pmix
DEBIAN_PKGS   += libpmix-dev openmpi-bin libopenmpi-dev

UNIT_TESTS += test_launch test_contract
UNIT_SRC_test_launch   = $(RANK_CORE) $(TOPO_CORE) $(TOPO_SHELL) $(SPEC_CORE) common/fileio.c
UNIT_SRC_test_contract = $(RANK_CORE) $(TOPO_CORE) $(TOPO_SHELL) $(SPEC_CORE) common/fileio.c
