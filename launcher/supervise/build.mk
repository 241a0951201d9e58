# launcher/supervise/build.mk - launch --supervise and autopsy: the
# supervisor, liveness files (and what one says a rank is doing),
# stacks through elfutils' libdwfl, and the pure grouping of stacks
# (autopsy.c).

SUPERVISE_CORE  = launcher/supervise/autopsy.c
SUPERVISE_SHELL = launcher/supervise/supervise.c launcher/supervise/liveness.c \
                  launcher/supervise/stacks.c launcher/supervise/stackfile.c

HPCTRAIN_PKGS += libdw
DEBIAN_PKGS   += libdw-dev libelf-dev
# The PyTorch (gloo) clients of supervise.bats and templates/torch-ddp.yaml:
# about 1.5 min of apt-get on a 2-core machine, once.
DEBIAN_PKGS   += python3-torch

# stacks.c demangles C++ frames with libstdc++'s __cxa_demangle.
bin/hpctrain: PKG_LIBS += -lstdc++

UNIT_TESTS += test_autopsy test_liveness
UNIT_SRC_test_autopsy  = $(SUPERVISE_CORE) common/sbuf.c
UNIT_SRC_test_liveness = launcher/supervise/liveness.c common/fileio.c common/jsonfile.c \
                         common/sbuf.c
