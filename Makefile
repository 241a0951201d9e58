# hpctrain - build, test, install.
#
#   make            build bin/hpctrain and the programs it execs: bin/hpctrain-train,
#                   bin/hpctrain-doctor, bin/hpctrain-report and bin/hpctrain-stage
#   make deps       install missing Debian packages (apt-get, needs root)
#   make check      deps + build + every test (unit, ASan/UBSan, CLI, docs, fuzz corpus)
#   make demo       the most complete real job this version can run
#   make bench      benchmarks (ratios against a peer run side by side)
#   make fuzz       run the spec parser fuzzer (FUZZ_SECONDS=60)
#   make install    PREFIX=/usr/local DESTDIR= (BINDIR, DATADIR, MANDIR)
#   make uninstall  the same variables: removes what install put there
#
# Flags come from $(PKG_CONFIG) and are expanded lazily, so `make check`
# can install the packages first and build in a sub-make afterwards.
# CFLAGS, CPPFLAGS and LDFLAGS are the builder's (a packager's hardening
# flags, say: `make $$(dpkg-buildflags --export=cmdline)`), passed to
# every compile and link; what the build itself needs rides in
# HPT_CFLAGS, set per object by DIR/build.mk, so a command-line CFLAGS=
# drops nothing.  Warnings are errors where WERROR=1: `make check` (so
# CI) sets it; a user's plain build does not.

PREFIX      ?= /usr/local
BINDIR      ?= $(PREFIX)/bin
DATAROOTDIR ?= $(PREFIX)/share
DATADIR     ?= $(DATAROOTDIR)
MANDIR      ?= $(DATAROOTDIR)/man
DESTDIR     ?=
CC          ?= gcc
CLANG       ?= clang
PKG_CONFIG  ?= pkg-config
CFLAGS      ?= -O2 -g
CPPFLAGS    ?=
LDFLAGS     ?=
WERROR      ?= 0
# make check builds with this many jobs (HPT_TEST_JOBS=N runs its suites
# N at a time: tests/run-tests.sh).
NPROC       ?= $(shell nproc 2>/dev/null || echo 2)
VERSION     := 0.1.0$(shell git rev-parse --short=12 HEAD 2>/dev/null | sed 's/^/+g/')
# Where `make install` puts the templates; hpctrain also looks beside
# its executable (../share/hpctrain/templates), so a moved tree works.
TEMPLATEDIR  = $(DATADIR)/hpctrain/templates
# Where `make install` puts the Python module (import hpctrain): a
# directory on Debian's python3 path, /usr/lib/python3/dist-packages for
# a package (PREFIX=/usr), /usr/local/lib/python3.X/dist-packages for a
# local install; launch also finds it beside its executable.
PYTHONDIR   ?= $(if $(filter /usr,$(PREFIX)),/usr/lib/python3/dist-packages,$(PREFIX)/lib/$(PYTHON_VERSION)/dist-packages)
PYTHON_VERSION = $(shell /usr/bin/python3 -c 'import sys; print("python%d.%d" % sys.version_info[:2])' 2>/dev/null || echo python3)
PYMODULE     = $(notdir $(wildcard launcher/python/hpctrain/*.py))

.DEFAULT_GOAL := all

OBJ = build/obj
SAN = build/san

obj = $(patsubst %.c,$(OBJ)/%.o,$(1))
san = $(patsubst %.c,$(SAN)/%.o,$(1))

# Per-folder archives, as git links libgit.a: every folder of sources
# builds one static archive of all its .c files, build/lib/<folder>.a
# with / as _ (common/spec -> build/lib/common_spec.a), and its
# sanitized twin under build/san-lib/.  Programs, unit tests and
# benchmarks link their own object and the archives, and the linker
# takes only the members they need: nothing lists objects by hand, and a
# file moved between folders needs no build change.  What stays out of
# the archives is each program's entry point (main.c, *_main.c), each
# benchmark (bench_*.c) and whatever a build.mk adds to NOT_IN_LIB
# (files built only for CUDA); tests/lint-build.sh checks that a
# build.mk builds each of them.  tests/lint-layers.sh checks the
# archives' links against the layers, as it checks includes.
SRC_ROOTS = cli common launcher topology trainer
LIB_DIRS  = $(sort $(patsubst %/,%,$(dir $(wildcard $(addsuffix /*.c,$(SRC_ROOTS)) \
            $(addsuffix /*/*.c,$(SRC_ROOTS)) $(addsuffix /*/*/*.c,$(SRC_ROOTS))))))
lib_of    = build/lib/$(subst /,_,$(1)).a
san_lib_of = build/san-lib/$(subst /,_,$(1)).a
LIBS      = $(foreach d,$(LIB_DIRS),$(call lib_of,$(d)))
SAN_LIBS  = $(foreach d,$(LIB_DIRS),$(call san_lib_of,$(d)))
NOT_IN_LIB = $(filter %/main.c %_main.c,$(wildcard $(addsuffix /*.c,$(SRC_ROOTS)))) \
             $(wildcard $(addsuffix /bench_*.c,$(LIB_DIRS)))
lib_src   = $(filter-out $(NOT_IN_LIB),$(wildcard $(1)/*.c))
# The archives as one group: they call each other in both directions
# (the layers' rule is about folders, not archive order).
LINK_LIBS     = -Wl,--start-group $(LIBS) -Wl,--end-group
LINK_SAN_LIBS = -Wl,--start-group $(SAN_LIBS) -Wl,--end-group

# Each folder describes the rest in DIR/build.mk: pkg-config packages
# (HPCTRAIN_PKGS), per-object flags, unit tests (UNIT_TESTS, and
# UNIT_LIBS_<test> for the libraries a test needs beyond PKG_LIBS),
# Debian packages (DEBIAN_PKGS; BENCH_PKGS for the benchmarks' peers,
# which only `make bench` installs), its programs and benchmarks.
HPCTRAIN_PKGS =
UNIT_TESTS    =
DEBIAN_PKGS   = build-essential pkg-config git libcmocka-dev bats jq mandoc groff-base \
                clang libclang-rt-14-dev python3
BENCH_PKGS    =
BENCH_TARGETS =
TEST_BINS     =
BUILD_MK      = $(sort $(wildcard */build.mk */*/build.mk))
include $(BUILD_MK)

PKG_CFLAGS  = $(shell $(PKG_CONFIG) --cflags $(HPCTRAIN_PKGS))
PKG_LIBS    = $(shell $(PKG_CONFIG) --libs $(HPCTRAIN_PKGS))
WARN        = -Wall -Wextra $(if $(filter 1,$(WERROR)),-Werror) -Wshadow -Wstrict-prototypes -Wformat=2
HPT_CFLAGS  =
ALL_CFLAGS  = -std=gnu11 $(WARN) $(CPPFLAGS) $(CFLAGS) $(HPT_CFLAGS) -I. -D_GNU_SOURCE $(PKG_CFLAGS)
SAN_FLAGS   = -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
# Every program and test links with the builder's flags.
LINK        = $(CC) $(CFLAGS) $(LDFLAGS)

all: bin/hpctrain bin/hpctrain-train bin/hpctrain-doctor bin/hpctrain-report bin/hpctrain-stage

$(OBJ)/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -MMD -MP -c -o $@ $<

$(SAN)/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(SAN_FLAGS) -MMD -MP -c -o $@ $<

# What the programs embed of this build: the version names the commit,
# and the template directory the install.  Each stamp file is rewritten
# only when its text changes, so a new commit (or another DATADIR)
# recompiles the one object that embeds it, and relinks, without a
# `make clean`; nothing else is rebuilt.
build/version.stamp: stamp-force
	@mkdir -p $(@D)
	@echo '$(VERSION)' | cmp -s - $@ || echo '$(VERSION)' >$@
build/paths.stamp: stamp-force
	@mkdir -p $(@D)
	@printf '%s\n' '$(TEMPLATEDIR)' '$(PYTHONDIR)' | cmp -s - $@ || \
		printf '%s\n' '$(TEMPLATEDIR)' '$(PYTHONDIR)' >$@
stamp-force:
$(OBJ)/common/version.o $(SAN)/common/version.o: build/version.stamp
$(OBJ)/common/version.o $(SAN)/common/version.o: HPT_CFLAGS += -DHPT_VERSION='"$(VERSION)"'
$(OBJ)/common/spec/template_dir.o $(SAN)/common/spec/template_dir.o: build/paths.stamp
$(OBJ)/common/spec/template_dir.o $(SAN)/common/spec/template_dir.o: \
	HPT_CFLAGS += -DHPT_TEMPLATE_DIR='"$(TEMPLATEDIR)"'
$(OBJ)/launcher/runs/program_module.o $(SAN)/launcher/runs/program_module.o: build/paths.stamp
$(OBJ)/launcher/runs/program_module.o $(SAN)/launcher/runs/program_module.o: \
	HPT_CFLAGS += -DHPT_PYTHON_DIR='"$(PYTHONDIR)"'

define lib_rules
$(call lib_of,$(1)): $(call obj,$(call lib_src,$(1)))
	@mkdir -p $$(@D)
	@rm -f $$@
	$$(AR) rcs $$@ $$^
$(call san_lib_of,$(1)): $(call san,$(call lib_src,$(1)))
	@mkdir -p $$(@D)
	@rm -f $$@
	$$(AR) rcs $$@ $$^
endef
$(foreach d,$(LIB_DIRS),$(eval $(call lib_rules,$(d))))

# One binary per unit test, plain and sanitized: its own object and the
# archives.
define unit_rules
build/tests/$(1): $(OBJ)/tests/unit/$(1).o $(LIBS)
	@mkdir -p $$(@D)
	$$(LINK) -o $$@ $$< $$(LINK_LIBS) $$(PKG_LIBS) $$(shell $$(PKG_CONFIG) --libs cmocka) $$(UNIT_LIBS_$(1)) -lm
build/tests-san/$(1): $(SAN)/tests/unit/$(1).o $(SAN_LIBS)
	@mkdir -p $$(@D)
	$$(LINK) $$(SAN_FLAGS) -o $$@ $$< $$(LINK_SAN_LIBS) $$(PKG_LIBS) $$(shell $$(PKG_CONFIG) --libs cmocka) $$(UNIT_LIBS_$(1)) -lm
endef
$(foreach t,$(UNIT_TESTS),$(eval $(call unit_rules,$(t))))

PLAIN_UNIT_BINS = $(addprefix build/tests/,$(UNIT_TESTS))
SAN_UNIT_BINS = $(addprefix build/tests-san/,$(UNIT_TESTS))

# libFuzzer target: spec parse -> resolve -> re-parse must agree.
# It compiles the spec and the base it stands on from source, since
# libFuzzer instruments what it covers.
FUZZ_SRC = $(call lib_src,common) $(call lib_src,common/spec)
build/fuzz/fuzz_spec: tests/fuzz/fuzz_spec.c $(FUZZ_SRC)
	@mkdir -p $(@D)
	$(CLANG) -std=gnu11 -g -O1 -I. -D_GNU_SOURCE $(PKG_CFLAGS) \
		-fsanitize=fuzzer,address,undefined -o $@ $^ $(PKG_LIBS)

FUZZ_SECONDS ?= 60
fuzz: build/fuzz/fuzz_spec
	@mkdir -p build/fuzz/corpus
	build/fuzz/fuzz_spec -max_total_time=$(FUZZ_SECONDS) -max_len=4096 \
		-dict=tests/fuzz/spec.dict build/fuzz/corpus tests/fuzz/corpus

deps:
	@sh tests/deps.sh $(DEBIAN_PKGS)

# Cheap checks of the tree itself, before anything is built; `make check`
# runs lint-layers.sh once more on the built archives, for their links.
lint:
	@sh tests/lint-layers.sh
	@sh tests/lint-build.sh
	@sh tests/lint-cli.sh
	@sh tests/lint-open.sh
	@sh tests/lint-encode.sh
	@awk -f tests/lint-bats.awk tests/cli/*.bats tests/cli/*.bash

check:
	@sh tests/deps.sh $(DEBIAN_PKGS)
	@$(MAKE) --no-print-directory lint
	@$(MAKE) --no-print-directory -j$(NPROC) WERROR=1 all plain-test-bins
	@sh tests/lint-layers.sh
	@HPT_SAN_MAKE='$(MAKE) --no-print-directory WERROR=1' bash tests/run-tests.sh

# The sanitized unit tests are built by the suite's unit lane
# (tests/run-tests.sh), beside the suites that wait on Slurm, not before
# every suite.
test-bins: plain-test-bins san-test-bins
plain-test-bins: $(PLAIN_UNIT_BINS) $(TEST_BINS) $(if $(shell command -v $(CLANG)),build/fuzz/fuzz_spec)
san-test-bins: $(SAN_UNIT_BINS)

demo:
	@sh tests/deps.sh $(DEBIAN_PKGS)
	@$(MAKE) --no-print-directory all
	@sh tests/demo.sh

# A directory image of this build's trainer for templates/fmnist-container.yaml:
# make train-image IMAGE=/scratch/me/hpctrain-image (an absolute path).
train-image: all
	@test -n "$(IMAGE)" || { echo "make train-image: give IMAGE=DIR" >&2; exit 2; }
	@sh tests/cli/helpers/mktrainimage.sh "$(IMAGE)" bin
	@echo "train-image: $(abspath $(IMAGE)); hpctrain submit fmnist-container --set params.image=$(abspath $(IMAGE))"

bench:
	@sh tests/deps.sh $(DEBIAN_PKGS) $(BENCH_PKGS)
	@$(MAKE) --no-print-directory all $(BENCH_TARGETS)
	@sh tests/bench.sh

PROGRAMS = hpctrain hpctrain-train hpctrain-doctor hpctrain-report hpctrain-stage
MAN1     = $(notdir $(wildcard man/*.1))
MAN5     = $(notdir $(wildcard man/*.5))
MAN7     = $(notdir $(wildcard man/*.7))
# A template's own files (torch-ddp.py) go beside it.
TEMPLATES = $(notdir $(wildcard templates/*.yaml templates/*.py))

install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5 \
		$(DESTDIR)$(MANDIR)/man7 \
		$(DESTDIR)$(TEMPLATEDIR) $(DESTDIR)$(PYTHONDIR)/hpctrain
	install -m 0755 $(addprefix bin/,$(PROGRAMS)) $(DESTDIR)$(BINDIR)/
	install -m 0644 $(addprefix man/,$(MAN1)) $(DESTDIR)$(MANDIR)/man1/
	install -m 0644 $(addprefix man/,$(MAN5)) $(DESTDIR)$(MANDIR)/man5/
	install -m 0644 $(addprefix man/,$(MAN7)) $(DESTDIR)$(MANDIR)/man7/
	install -m 0644 $(addprefix templates/,$(TEMPLATES)) $(DESTDIR)$(TEMPLATEDIR)/
	install -m 0644 $(addprefix launcher/python/hpctrain/,$(PYMODULE)) $(DESTDIR)$(PYTHONDIR)/hpctrain/
	@# torch-ddp.yaml names its script where the default PREFIX puts it
	sed -i 's|/usr/local/share/hpctrain/templates/|$(TEMPLATEDIR)/|' \
		$(DESTDIR)$(TEMPLATEDIR)/torch-ddp.yaml

# Removes only the files install wrote, then the template directory if
# that leaves it empty; shared directories (bin, man1) stay.
uninstall:
	rm -f $(addprefix $(DESTDIR)$(BINDIR)/,$(PROGRAMS)) \
		$(addprefix $(DESTDIR)$(MANDIR)/man1/,$(MAN1)) \
		$(addprefix $(DESTDIR)$(MANDIR)/man5/,$(MAN5)) \
		$(addprefix $(DESTDIR)$(MANDIR)/man7/,$(MAN7)) \
		$(addprefix $(DESTDIR)$(TEMPLATEDIR)/,$(TEMPLATES)) \
		$(addprefix $(DESTDIR)$(PYTHONDIR)/hpctrain/,$(PYMODULE))
	-rm -rf $(DESTDIR)$(PYTHONDIR)/hpctrain/__pycache__
	-rmdir $(DESTDIR)$(PYTHONDIR)/hpctrain 2>/dev/null
	-rmdir $(DESTDIR)$(TEMPLATEDIR) $(DESTDIR)$(DATADIR)/hpctrain 2>/dev/null

clean:
	rm -rf build bin

.PHONY: all deps lint check test-bins plain-test-bins san-test-bins demo train-image bench fuzz install uninstall clean stamp-force
.DELETE_ON_ERROR:

# Only the compilers' files: container images cached under build/images
# hold directories named *.d (etc/rc2.d) and files of their own.
-include $(shell find build -path build/images -prune -o -name '*.d' -type f -print 2>/dev/null)
