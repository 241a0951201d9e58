# launcher/rank/build.mk - one rank of a job: who it is (Slurm, Open MPI,
# PMIx), its environment, its binding, the contract it is checked
# against, where the staged data is on its node, and whether its node's
# CPU runs train.precision natively.

HPCTRAIN_PKGS += pmix
DEBIAN_PKGS   += libpmix-dev openmpi-bin libopenmpi-dev

UNIT_TESTS += test_launch test_contract test_precision test_contract_inside
