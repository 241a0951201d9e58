# hpctrain - build, test, install.
#
#   make            build bin/hpctrain
#   make deps       install missing Debian packages (apt-get, needs root)
#   make check      deps + build + every test (unit, ASan/UBSan, CLI, docs, fuzz corpus)
#   make demo       the most complete real job this version can run
#   make bench      benchmarks (ratios against a peer run side by side)
#   make fuzz       run the spec parser fuzzer (FUZZ_SECONDS=60)
#   make install    PREFIX=/usr/local DESTDIR=
#
# Flags come from pkg-config and are expanded lazily, so `make check`
# can install the packages first and build in a sub-make afterwards.

PREFIX     ?= /usr/local
DESTDIR    ?=
CC         ?= gcc
CLANG      ?= clang
CFLAGS     ?= -O2 -g
VERSION    := 0.1.0$(shell git rev-parse --short=12 HEAD 2>/dev/null | sed 's/^/+g/')

PKGS        = yaml-0.1 jansson libcrypto
PKG_CFLAGS  = $(shell pkg-config --cflags $(PKGS))
PKG_LIBS    = $(shell pkg-config --libs $(PKGS))
WARN        = -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wformat=2
ALL_CFLAGS  = -std=gnu11 $(WARN) $(CFLAGS) -I. -D_GNU_SOURCE -DHPT_VERSION='"$(VERSION)"' $(PKG_CFLAGS)
SAN_FLAGS   = -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all

# Pure cores (unit-tested directly) and the shell around them.
SPEC_CORE  = cli/sbuf.c cli/diag.c cli/suggest.c cli/yamltree.c cli/spec_schema.c \
             cli/spec_value.c cli/spec.c cli/spec_emit.c cli/template.c
CLI_SHELL  = cli/opt.c cli/fileio.c cli/template_dir.c \
             cli/cmd_validate.c cli/cmd_template.c cli/main.c
HPCTRAIN_SRC = $(SPEC_CORE) $(CLI_SHELL)

UNIT_TESTS = test_spec test_template test_yamltree test_suggest test_diag
UNIT_SRC_test_spec      = $(SPEC_CORE)
UNIT_SRC_test_template  = $(SPEC_CORE)
UNIT_SRC_test_yamltree  = $(SPEC_CORE)
UNIT_SRC_test_suggest   = cli/suggest.c
UNIT_SRC_test_diag      = cli/diag.c cli/sbuf.c

OBJ = build/obj
SAN = build/san

obj = $(patsubst %.c,$(OBJ)/%.o,$(1))
san = $(patsubst %.c,$(SAN)/%.o,$(1))

all: bin/hpctrain

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
	$$(CC) $$(CFLAGS) -o $$@ $$^ $$(PKG_LIBS) $$(shell pkg-config --libs cmocka)
build/tests-san/$(1): $(SAN)/tests/unit/$(1).o $(call san,$(UNIT_SRC_$(1)))
	@mkdir -p $$(@D)
	$$(CC) $$(CFLAGS) $$(SAN_FLAGS) -o $$@ $$^ $$(PKG_LIBS) $$(shell pkg-config --libs cmocka)
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
	@sh tests/deps.sh

check:
	@sh tests/deps.sh
	@$(MAKE) --no-print-directory all test-bins
	@sh tests/run-tests.sh

test-bins: $(UNIT_BINS) $(if $(shell command -v $(CLANG)),build/fuzz/fuzz_spec)

demo:
	@sh tests/deps.sh
	@$(MAKE) --no-print-directory all
	@sh tests/demo.sh

bench: all
	@echo "bench: no benchmarks yet in this version"

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 \
		$(DESTDIR)$(PREFIX)/share/man/man5 $(DESTDIR)$(PREFIX)/share/hpctrain/templates
	install -m 0755 bin/hpctrain $(DESTDIR)$(PREFIX)/bin/
	install -m 0644 man/*.1 $(DESTDIR)$(PREFIX)/share/man/man1/
	install -m 0644 man/*.5 $(DESTDIR)$(PREFIX)/share/man/man5/
	install -m 0644 templates/*.yaml $(DESTDIR)$(PREFIX)/share/hpctrain/templates/

clean:
	rm -rf build bin

.PHONY: all deps check test-bins demo bench fuzz install clean
.DELETE_ON_ERROR:

-include $(shell find build -name '*.d' 2>/dev/null)
