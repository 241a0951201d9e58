# launcher/build.mk - running ranks (launch) and submitting jobs (submit).

# launch: rank discovery, environment, binding.
LAUNCH_CORE  = launcher/rank/rank.c launcher/rank/envplan.c launcher/rank/policy.c launcher/rank/contract.c
LAUNCH_SHELL = launcher/rank/rank_pmix.c launcher/rank/bind.c launcher/rank/contract_got.c cli/cmd_launch.c
HPCTRAIN_SRC  += $(LAUNCH_CORE) $(LAUNCH_SHELL)
HPCTRAIN_PKGS += pmix
DEBIAN_PKGS   += libpmix-dev openmpi-bin libopenmpi-dev

# launch --supervise and autopsy: the supervisor, liveness files, stacks
# through elfutils' libdwfl, and the pure grouping of stacks (autopsy.c).
SUPERVISE_CORE  = launcher/supervise/autopsy.c
SUPERVISE_SHELL = launcher/supervise/supervise.c launcher/supervise/liveness.c launcher/supervise/stacks.c \
                  launcher/supervise/stackfile.c cli/cmd_autopsy.c
HPCTRAIN_SRC  += $(SUPERVISE_CORE) $(SUPERVISE_SHELL)
HPCTRAIN_PKGS += libdw
DEBIAN_PKGS   += libdw-dev libelf-dev
# The launch tests run ranks under a real local Slurm (tests/cluster/).
DEBIAN_PKGS   += slurm-wlm slurmctld slurmd slurm-client munge iproute2 util-linux

UNIT_TESTS += test_launch test_autopsy test_contract
UNIT_SRC_test_autopsy = $(SUPERVISE_CORE) common/sbuf.c
UNIT_SRC_test_launch = $(LAUNCH_CORE) $(TOPO_CORE) $(TOPO_SHELL) $(SPEC_CORE) common/fileio.c
UNIT_SRC_test_contract = $(LAUNCH_CORE) $(TOPO_CORE) $(TOPO_SHELL) $(SPEC_CORE) common/fileio.c

# The node ledger: nodes that failed `hpctrain doctor`, per cluster, with
# their cooldowns and GEMM scores (ledger.c, pure), in a file rewritten
# under a lock (ledger_file.c).
LEDGER_CORE  = launcher/doctor/ledger.c
LEDGER_SHELL = launcher/doctor/ledger_file.c
HPCTRAIN_SRC += $(LEDGER_CORE) $(LEDGER_SHELL)

UNIT_TESTS += test_ledger
UNIT_SRC_test_ledger = $(LEDGER_CORE) $(LEDGER_SHELL) common/fileio.c common/sbuf.c

# submit: batch scripts (render, pure), run records, Slurm through libslurm,
# and the commands submit/status/cancel/logs/rerun.  Debian 12's
# libslurm-dev has no slurm.pc: launcher/slurm/slurm.pc stands in, by path.
SUBMIT_CORE  = launcher/slurm/render.c launcher/slurm/render_array.c
SUBMIT_SHELL = launcher/runs/rundir.c launcher/runs/runref.c launcher/runs/runref_job.c launcher/runs/progress.c launcher/runs/sweep_record.c launcher/slurm/slurm.c launcher/runs/attempt.c cli/cmd_submit.c cli/submit_sweep.c \
               cli/cmd_status.c cli/status_watch.c cli/cmd_cancel.c cli/cmd_logs.c cli/cmd_rerun.c
SLURM_PC    := $(if $(shell pkg-config --exists slurm 2>/dev/null && echo y),slurm,launcher/slurm/slurm.pc)
HPCTRAIN_SRC  += $(SUBMIT_CORE) $(SUBMIT_SHELL)
HPCTRAIN_PKGS += $(SLURM_PC)
DEBIAN_PKGS   += slurm-wlm slurmctld slurmd slurm-client munge libslurm-dev libpmix-dev \
                 openmpi-bin libopenmpi-dev iproute2

UNIT_TESTS += test_render test_rundir test_progress
UNIT_SRC_test_render = $(SUBMIT_CORE) $(SPEC_CORE)
UNIT_SRC_test_rundir = launcher/runs/rundir.c launcher/runs/runref.c launcher/runs/sweep_record.c common/fileio.c common/sbuf.c
UNIT_SRC_test_progress = launcher/runs/progress.c common/sbuf.c

# A throw-away local Slurm (tests/cluster/up.sh): MODE=single|multi|netns,
# BASE=/tmp/hpctrain-cluster.  `eval $(make -s cluster-up)` sets SLURM_CONF.
CLUSTER_BASE ?= /tmp/hpctrain-cluster
cluster-up:
	@BASE=$(CLUSTER_BASE) bash tests/cluster/up.sh
cluster-down:
	@BASE=$(CLUSTER_BASE) bash tests/cluster/down.sh
.PHONY: cluster-up cluster-down

# doctor: bin/hpctrain-doctor, which `hpctrain doctor` execs.  Node checks
# below an injectable root (doctor_node), the grading (doctor_grade, pure)
# and the measurements and exchange between nodes (doctor_probe: MPI,
# oneDNN's sgemm, libmunge), so the login-node binary links none of those.
# The node ledger (above) goes into both binaries: submit and rerun read it.
LEDGER_SRC   = $(LEDGER_CORE) $(LEDGER_SHELL)
DOCTOR_CORE  = launcher/doctor/doctor_grade.c
DOCTOR_SHELL = launcher/doctor/doctor_node.c launcher/doctor/doctor_probe.c cli/cmd_doctor.c cli/doctor_main.c
DOCTOR_SRC   = $(DOCTOR_CORE) $(DOCTOR_SHELL) $(LEDGER_SRC) $(LAUNCH_CORE) $(TOPO_CORE) $(TOPO_SHELL) \
               $(SPEC_CORE) $(SPEC_SHELL) launcher/slurm/render.c launcher/runs/rundir.c launcher/slurm/slurm.c \
               cli/json_print.c
DOCTOR_LIBS  = -ldnnl -fopenmp $(shell pkg-config --libs ompi munge)
DEBIAN_PKGS  += libmunge-dev libdnnl-dev libopenmpi-dev
TEST_BINS    += bin/hpctrain-doctor
$(OBJ)/launcher/doctor/doctor_probe.o $(OBJ)/cli/cmd_doctor.o: HPT_CFLAGS += $(shell pkg-config --cflags ompi munge)
# TOPO_* come from topology/build.mk, read after this file: expand late.
.SECONDEXPANSION:
bin/hpctrain-doctor: $$(call obj,$$(DOCTOR_SRC))
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $^ $(PKG_LIBS) $(DOCTOR_LIBS)

# report: bin/hpctrain-report, which `hpctrain report` execs, so cairo
# stays out of the login-node binary.  Charts are drawn with cairo's paths
# and text (PLplot's -dev package would pull in Qt, wxWidgets and
# gfortran); metrics.jsonl is parsed apart from the drawing (report_data,
# pure) and the test decodes the PNGs with libpng.
REPORT_CORE  = launcher/report/report_data.c launcher/report/report_chart.c
REPORT_SRC   = $(REPORT_CORE) cli/cmd_report.c cli/report_out.c cli/report_sweep.c \
               cli/report_main.c cli/json_print.c launcher/runs/runref.c \
               launcher/runs/runref_job.c launcher/runs/sweep_record.c launcher/runs/rundir.c launcher/slurm/slurm.c \
               launcher/slurm/render.c $(SPEC_CORE) $(SPEC_SHELL)
DEBIAN_PKGS  += libcairo2-dev libpng-dev
TEST_BINS    += bin/hpctrain-report
$(OBJ)/launcher/report/report_chart.o $(SAN)/launcher/report/report_chart.o: HPT_CFLAGS += $(shell pkg-config --cflags cairo)
bin/hpctrain-report: $$(call obj,$$(REPORT_SRC))
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $^ $(PKG_LIBS) $(shell pkg-config --libs cairo) -lm

UNIT_TESTS += test_report
UNIT_SRC_test_report = $(REPORT_CORE) common/sbuf.c
UNIT_LIBS_test_report = $(shell pkg-config --libs cairo libpng fontconfig) -lm
$(OBJ)/tests/unit/test_report.o $(SAN)/tests/unit/test_report.o: HPT_CFLAGS += $(shell pkg-config --cflags cairo)

UNIT_TESTS += test_doctor
UNIT_SRC_test_doctor = $(DOCTOR_CORE) launcher/doctor/doctor_node.c $(LAUNCH_CORE) $(TOPO_CORE) $(TOPO_SHELL) \
                       $(SPEC_CORE) common/fileio.c
