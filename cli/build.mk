# cli/build.mk - the commands, and the three login-node programs linked
# from them and every folder's parts.  Read last (see the Makefile), so
# every part's variables are set when these rules are read.
#
#   bin/hpctrain          the command table and every command but two
#   bin/hpctrain-doctor   doctor, which links MPI, oneDNN and munge
#   bin/hpctrain-report   report, which links cairo
#   bin/hpctrain-stage    stage, which links MPI
# `hpctrain doctor`, `hpctrain report` and `hpctrain stage` exec the last
# three, so the login-node binary links none of MPI, oneDNN, munge or cairo.

CLI_MAIN   = cli/main.c cli/json_print.c cli/cmd_validate.c cli/cmd_template.c cli/cmd_topo.c \
             cli/image_pin.c cli/data_pin.c
CLI_LAUNCH = cli/cmd_launch.c cli/launch_contract.c cli/launch_container.c cli/cmd_autopsy.c
CLI_SUBMIT = cli/cmd_submit.c cli/submit_report.c cli/submit_sweep.c cli/cmd_status.c \
             cli/status_watch.c cli/ticker.c cli/cmd_cancel.c cli/cmd_logs.c cli/cmd_rerun.c \
             cli/cmd_plan.c cli/plan_shapes.c cli/plan_calibrate.c
CLI_DOCTOR = cli/cmd_doctor.c cli/doctor_lost.c cli/doctor_main.c cli/json_print.c
CLI_STAGE  = cli/cmd_stage.c cli/stage_main.c cli/json_print.c cli/stage_job.c
CLI_REPORT = cli/cmd_report.c cli/report_out.c cli/report_sweep.c cli/report_stage.c \
             cli/report_main.c cli/json_print.c

HPCTRAIN_SRC = $(CLI_MAIN) $(CLI_LAUNCH) $(CLI_SUBMIT) $(SPEC_CORE) $(SPEC_SHELL) \
               $(TOPO_CORE) $(TOPO_SHELL) $(RANK_CORE) $(RANK_SHELL) $(SUPERVISE_CORE) \
               $(SUPERVISE_SHELL) $(SLURM_CORE) $(SLURM_SHELL) $(RUNS_CORE) $(RUNS_SHELL) \
               $(LEDGER_CORE) $(LEDGER_SHELL) $(EXCLUDE_SRC) $(CONTAINER_CORE) \
               $(CONTAINER_SHELL) $(RANK_DATA) $(STAGE_CORE) $(STAGE_SHELL) $(SHAPE_CORE) \
               $(SHAPE_SHELL)
DOCTOR_SRC   = $(CLI_DOCTOR) $(DOCTOR_CORE) $(DOCTOR_SHELL) $(DOCTOR_PROBE) $(LEDGER_CORE) \
               $(LEDGER_SHELL) $(RANK_CORE) $(TOPO_CORE) $(TOPO_SHELL) $(SPEC_CORE) \
               $(SPEC_SHELL) $(SLURM_CORE) $(SLURM_SHELL) launcher/runs/rundir.c \
               $(CONTAINER_CORE) $(CONTAINER_SHELL) $(STAGE_CORE) $(EXCLUDE_SRC) \
               launcher/runs/resize.c launcher/doctor/lost.c launcher/supervise/liveness.c
REPORT_SRC   = $(CLI_REPORT) $(REPORT_CORE) $(REPORT_SHELL) $(SPEC_CORE) $(SPEC_SHELL) $(SLURM_CORE) \
               $(SLURM_SHELL) launcher/runs/runref.c launcher/runs/runref_job.c \
               launcher/runs/sweep_record.c launcher/runs/rundir.c launcher/runs/stage_summary.c \
               launcher/runs/stage_summary_load.c $(SHAPE_CORE) \
               launcher/shape/shape_history.c
STAGE_SRC    = $(CLI_STAGE) $(STAGE_CORE) $(STAGE_SHELL) $(STAGE_MPI) $(SPEC_CORE) $(SPEC_SHELL) \
               launcher/doctor/doctor_record.c launcher/doctor/doctor_env.c $(LEDGER_CORE) \
               $(LEDGER_SHELL) $(SLURM_CORE) $(SLURM_SHELL)

TEST_BINS += bin/hpctrain-doctor bin/hpctrain-report bin/hpctrain-stage

$(OBJ)/cli/cmd_doctor.o: HPT_CFLAGS += $(shell $(PKG_CONFIG) --cflags ompi munge)
$(OBJ)/cli/cmd_stage.o: HPT_CFLAGS += $(shell $(PKG_CONFIG) --cflags ompi)

bin/hpctrain: $(call obj,$(HPCTRAIN_SRC))
	@mkdir -p $(@D)
	$(LINK) -o $@ $^ $(PKG_LIBS) -lm

bin/hpctrain-doctor: $(call obj,$(sort $(DOCTOR_SRC)))
	@mkdir -p $(@D)
	$(LINK) -o $@ $^ $(PKG_LIBS) $(DOCTOR_LIBS)

bin/hpctrain-report: $(call obj,$(sort $(REPORT_SRC)))
	@mkdir -p $(@D)
	$(LINK) -o $@ $^ $(PKG_LIBS) $(shell $(PKG_CONFIG) --libs cairo) -lm

bin/hpctrain-stage: $(call obj,$(sort $(STAGE_SRC)))
	@mkdir -p $(@D)
	$(LINK) -o $@ $^ $(PKG_LIBS) $(shell $(PKG_CONFIG) --libs ompi)
