# launcher/rank/build.mk - one rank of a job: who it is (Slurm, Open MPI,
# PMIx), its environment, its binding, the contract it is checked
# against, and whether its node's CPU runs train.precision natively.

RANK_CORE  = launcher/rank/rank.c launcher/rank/envplan.c launcher/rank/env_list.c \
             launcher/rank/policy.c launcher/rank/contract.c launcher/rank/precision.c
RANK_SHELL = launcher/rank/rank_discover.c launcher/rank/bind.c launcher/rank/contract_got.c \
             launcher/rank/contract_inside.c
# Where the staged data is on the node: apart from RANK_CORE, since it
# links the stage engine's paths (launcher/stage), which only launch needs.
RANK_DATA  = launcher/rank/data_env.c launcher/rank/data_env_local.c

HPCTRAIN_PKGS += pmix
DEBIAN_PKGS   += libpmix-dev openmpi-bin libopenmpi-dev

UNIT_TESTS += test_launch test_contract test_precision
UNIT_SRC_test_launch   = $(RANK_CORE) $(TOPO_CORE) $(TOPO_SHELL) $(SPEC_CORE) common/fileio.c
UNIT_SRC_test_contract = $(RANK_CORE) $(TOPO_CORE) $(TOPO_SHELL) $(SPEC_CORE) common/fileio.c

# The contract read from a process by its PID: this test's own.
UNIT_TESTS += test_contract_inside
UNIT_SRC_test_contract_inside = $(RANK_CORE) $(TOPO_CORE) $(TOPO_SHELL) $(SPEC_CORE) \
                                launcher/rank/contract_inside.c launcher/rank/contract_got.c \
                                common/fileio.c
UNIT_SRC_test_precision = launcher/rank/precision.c topology/cpufeat.c $(SPEC_CORE)
