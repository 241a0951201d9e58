# cli/build.mk - the login-node CLI and the job spec core.

# Pure cores, unit-tested directly; other binaries link them too.
SPEC_CORE  = cli/sbuf.c cli/diag.c cli/suggest.c cli/yamltree.c cli/spec_schema.c cli/spec_scalar.c \
             cli/spec_value.c cli/spec.c cli/spec_emit.c cli/template.c
CLI_SHELL  = cli/opt.c cli/fileio.c cli/template_dir.c cli/specfile.c cli/json_print.c \
             cli/cmd_validate.c cli/cmd_template.c cli/main.c

HPCTRAIN_SRC  += $(SPEC_CORE) $(CLI_SHELL)
HPCTRAIN_PKGS += yaml-0.1 jansson libcrypto
DEBIAN_PKGS   += libyaml-dev libjansson-dev libssl-dev zlib1g-dev

UNIT_TESTS += test_spec test_template test_yamltree test_suggest test_diag test_sbuf
UNIT_SRC_test_spec      = $(SPEC_CORE)
UNIT_SRC_test_template  = $(SPEC_CORE)
UNIT_SRC_test_yamltree  = $(SPEC_CORE)
UNIT_SRC_test_suggest   = cli/suggest.c
UNIT_SRC_test_diag      = cli/diag.c cli/sbuf.c
UNIT_SRC_test_sbuf      = cli/sbuf.c
