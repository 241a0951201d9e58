# hpctrain - build, test, install.
#
#   make            build bin/hpctrain and the programs it execs: bin/hpctrain-train,
#                   bin/hpctrain-doctor and bin/hpctrain-report
#   make deps       install missing Debian packages (apt-get, needs root)
#   make check      deps + build + every test (unit, ASan/UBSan, CLI, docs, fuzz corpus)
#   make demo       the most complete real job this version can run
#   make bench      benchmarks (ratios against a peer run side by side)
#   make fuzz       run the spec parser fuzzer (FUZZ_SECONDS=60)
#   make install    PREFIX=/usr/local DESTDIR=
#
# Flags come from pkg-config and are expanded lazily, so `make check`
# can install the packages first and build in a sub-make afterwards.
# CFLAGS is the builder's (a packager's -O1 -g, say); what the build
# itself needs rides in HPT_CFLAGS, set per object by DIR/build.mk, so a
# command-line CFLAGS= drops nothing.  Warnings are errors where
# WERROR=1: `make check` (so CI) sets it; a user's plain build does not.

PREFIX     ?= /usr/local
DESTDIR    ?=
CC         ?= gcc
CLANG      ?= clang
CFLAGS     ?= -O2 -g
WERROR     ?= 0
VERSION    := 0.1.0$(shell git rev-parse --short=12 HEAD 2>/dev/null | sed 's/^/+g/')

.DEFAULT_GOAL := all

OBJ = build/obj
SAN = build/san

obj = $(patsubst %.c,$(OBJ)/%.o,$(1))
san = $(patsubst %.c,$(SAN)/%.o,$(1))

# Each part of the tree describes itself in DIR/build.mk: sources that go
# into bin/hpctrain (HPCTRAIN_SRC), pkg-config packages (HPCTRAIN_PKGS),
# unit tests (UNIT_TESTS, UNIT_SRC_<test>, UNIT_LIBS_<test>), Debian packages (DEBIAN_PKGS;
# BENCH_PKGS for the benchmarks' peers, which only `make bench` installs),
# extra programs and benchmarks.  common/build.mk comes first: it defines
# SPEC_CORE, which trainer/build.mk expands in prerequisites as it is
# read.
HPCTRAIN_SRC  =
HPCTRAIN_PKGS =
UNIT_TESTS    =
DEBIAN_PKGS   = build-essential pkg-config git libcmocka-dev bats jq mandoc groff-base \
                clang libclang-rt-14-dev python3
BENCH_PKGS    =
BENCH_TARGETS =
TEST_BINS     =
include common/build.mk
include $(filter-out common/build.mk,$(wildcard */build.mk))

PKG_CFLAGS  = $(shell pkg-config --cflags $(HPCTRAIN_PKGS))
PKG_LIBS    = $(shell pkg-config --libs $(HPCTRAIN_PKGS))
WARN        = -Wall -Wextra $(if $(filter 1,$(WERROR)),-Werror) -Wshadow -Wstrict-prototypes -Wformat=2
HPT_CFLAGS  =
ALL_CFLAGS  = -std=gnu11 $(WARN) $(CFLAGS) $(HPT_CFLAGS) -I. -D_GNU_SOURCE \
              -DHPT_VERSION='"$(VERSION)"' $(PKG_CFLAGS)
SAN_FLAGS   = -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all


all: bin/hpctrain bin/hpctrain-train bin/hpctrain-doctor bin/hpctrain-report

bin/hpctrain: $(call obj,$(HPCTRAIN_SRC))
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $^ $(PKG_LIBS)

$(OBJ)/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -MMD -MP -c -o $@ $<

$(SAN)/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(SAN_FLAGS) -MMD -MP -c -o $@ $<

# One binary per unit test, plain and sanitized.
define unit_rules
build/tests/$(1): $(OBJ)/tests/unit/$(1).o $(call obj,$(UNIT_SRC_$(1)))
	@mkdir -p $$(@D)
	$$(CC) $$(CFLAGS) -o $$@ $$^ $$(PKG_LIBS) $$(shell pkg-config --libs cmocka) $$(UNIT_LIBS_$(1)) -lm
build/tests-san/$(1): $(SAN)/tests/unit/$(1).o $(call san,$(UNIT_SRC_$(1)))
	@mkdir -p $$(@D)
	$$(CC) $$(CFLAGS) $$(SAN_FLAGS) -o $$@ $$^ $$(PKG_LIBS) $$(shell pkg-config --libs cmocka) $$(UNIT_LIBS_$(1)) -lm
endef
$(foreach t,$(UNIT_TESTS),$(eval $(call unit_rules,$(t))))

UNIT_BINS = $(addprefix build/tests/,$(UNIT_TESTS)) $(addprefix build/tests-san/,$(UNIT_TESTS))

# libFuzzer target: spec parse -> resolve -> re-parse must agree.
build/fuzz/fuzz_spec: tests/fuzz/fuzz_spec.c $(SPEC_CORE)
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

# Cheap checks of the tree itself, before anything is built.
lint:
	@sh tests/lint-layers.sh
	@awk -f tests/lint-bats.awk tests/cli/*.bats tests/cli/*.bash

check:
	@sh tests/deps.sh $(DEBIAN_PKGS)
	@$(MAKE) --no-print-directory lint
	@$(MAKE) --no-print-directory WERROR=1 all test-bins
	@sh tests/run-tests.sh

test-bins: $(UNIT_BINS) $(TEST_BINS) $(if $(shell command -v $(CLANG)),build/fuzz/fuzz_spec)

demo:
	@sh tests/deps.sh $(DEBIAN_PKGS)
	@$(MAKE) --no-print-directory all
	@sh tests/demo.sh

bench:
	@sh tests/deps.sh $(DEBIAN_PKGS) $(BENCH_PKGS)
	@$(MAKE) --no-print-directory all $(BENCH_TARGETS)
	@sh tests/bench.sh

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 \
		$(DESTDIR)$(PREFIX)/share/man/man5 $(DESTDIR)$(PREFIX)/share/hpctrain/templates
	install -m 0755 bin/hpctrain bin/hpctrain-train bin/hpctrain-doctor bin/hpctrain-report $(DESTDIR)$(PREFIX)/bin/
	install -m 0644 man/*.1 $(DESTDIR)$(PREFIX)/share/man/man1/
	install -m 0644 man/*.5 $(DESTDIR)$(PREFIX)/share/man/man5/
	install -m 0644 templates/*.yaml $(DESTDIR)$(PREFIX)/share/hpctrain/templates/

clean:
	rm -rf build bin

.PHONY: all deps lint check test-bins demo bench fuzz install clean
.DELETE_ON_ERROR:

-include $(shell find build -name '*.d' 2>/dev/null)
