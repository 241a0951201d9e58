# common/build.mk - the base every part leans on (byte buffers, diagnostics,
# exit statuses, file I/O, option parsing, environment variables, the
# version, the trainer's data record read back) and the job spec
# (common/spec/).  Read first: the other parts' build.mk expand SPEC_CORE
# as they are read.

# Pure cores, unit-tested directly; every binary links them.
SPEC_CORE  = common/sbuf.c common/diag.c common/suggest.c common/isotime.c common/envvar.c \
             common/data_read.c \
             common/spec/ynode.c common/spec/spec_schema.c common/spec/spec_scalar.c common/spec/spec_value.c \
             common/spec/spec_stage.c \
             common/spec/spec.c common/spec/spec_emit.c common/spec/template.c \
             common/spec/sweep.c
# Their shells: files (and JSON files), options, the template directory, a
# spec file with its overrides; and the version, which only
# common/version.o embeds.
SPEC_SHELL = common/opt.c common/fileio.c common/jsonfile.c common/mpistep.c common/spec/template_dir.c \
             common/spec/specfile.c common/version.c

HPCTRAIN_PKGS += yaml-0.1 jansson libcrypto
DEBIAN_PKGS   += libyaml-dev libjansson-dev libssl-dev zlib1g-dev

UNIT_TESTS += test_spec test_spec_stage test_template test_sweep test_ynode test_suggest test_diag test_sbuf \
              test_fileio test_envvar
UNIT_SRC_test_spec      = $(SPEC_CORE)
UNIT_SRC_test_spec_stage = $(SPEC_CORE)
UNIT_SRC_test_template  = $(SPEC_CORE)
UNIT_SRC_test_sweep     = $(SPEC_CORE)
UNIT_SRC_test_ynode  = $(SPEC_CORE)
UNIT_SRC_test_suggest   = common/suggest.c
UNIT_SRC_test_diag      = common/diag.c common/sbuf.c
UNIT_SRC_test_sbuf      = common/sbuf.c
UNIT_SRC_test_fileio    = common/fileio.c common/jsonfile.c common/sbuf.c
UNIT_SRC_test_envvar    = common/envvar.c common/sbuf.c
