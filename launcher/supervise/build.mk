# launcher/supervise/build.mk - launch --supervise and autopsy: the
# supervisor, liveness files (and what one says a rank is doing),
# stacks through elfutils' libdwfl, and the pure grouping of stacks
# (autopsy.c).

HPCTRAIN_PKGS += libdw
DEBIAN_PKGS   += libdw-dev libelf-dev
# The PyTorch (gloo) clients of supervise.bats and templates/torch-ddp.yaml:
# about 1.5 min of apt-get on a 2-core machine, once.
DEBIAN_PKGS   += python3-torch

UNIT_TESTS += test_autopsy test_liveness test_oom
