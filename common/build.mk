# common/build.mk - the base every part leans on (byte buffers,
# diagnostics, exit statuses, file I/O, option parsing, environment
# variables, the version, the trainer's data record read back, flat
# documents compared and line diffs for hpctrain diff) and the job spec
# (common/spec/: its own archive).

HPCTRAIN_PKGS += yaml-0.1 jansson libcrypto
DEBIAN_PKGS   += libyaml-dev libjansson-dev libssl-dev zlib1g-dev

UNIT_TESTS += test_spec test_spec_stage test_template test_sweep test_ynode test_suggest test_diag test_sbuf \
              test_fileio test_envvar test_statkey test_flatdoc test_linediff test_straggler test_jsonb
