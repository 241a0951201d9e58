# launcher/doctor/build.mk - hpctrain doctor and the node ledger.
#
# The grading (doctor_grade, pure) and the verdict drawn from it: failed
# nodes and ledger events (doctor_verdict, pure), the node checks below an
# injectable root (doctor_check), what doctor reads of its environment
# (doctor_env), the run written into the ledger (doctor_record), the
# preflight's record and resubmission (doctor_preflight), and the
# measurements and exchange between nodes (doctor_probe: MPI,
# oneDNN's sgemm, libmunge) with the code that runs them on each node
# (doctor_self) and across nodes (doctor_exchange), the job's container
# probed on each node (doctor_container; graded by the pure
# doctor_container_grade), which only
# bin/hpctrain-doctor links.  The ledger: nodes that failed doctor, per
# cluster, with their cooldowns and GEMM scores (ledger.c, pure), in a
# file rewritten under a lock (ledger_file.c); submit and rerun read it.

DOCTOR_CORE  = launcher/doctor/doctor_grade.c launcher/doctor/doctor_verdict.c \
               launcher/doctor/doctor_container_grade.c
DOCTOR_SHELL = launcher/doctor/doctor_check.c launcher/doctor/doctor_env.c \
               launcher/doctor/doctor_record.c launcher/doctor/doctor_preflight.c
DOCTOR_PROBE = launcher/doctor/doctor_probe.c launcher/doctor/doctor_self.c \
               launcher/doctor/doctor_exchange.c launcher/doctor/doctor_container.c
LEDGER_CORE  = launcher/doctor/ledger.c
LEDGER_SHELL = launcher/doctor/ledger_file.c
# What submit and rerun leave out: --exclude and the ledger's nodes in
# cooldown on this cluster (reads Slurm's configuration for its name).
EXCLUDE_SRC  = launcher/doctor/exclude.c
DOCTOR_LIBS  = -ldnnl -fopenmp $(shell $(PKG_CONFIG) --libs ompi munge)
DEBIAN_PKGS += libmunge-dev libdnnl-dev libopenmpi-dev

$(OBJ)/launcher/doctor/doctor_probe.o: HPT_CFLAGS += $(shell $(PKG_CONFIG) --cflags ompi munge)

UNIT_TESTS += test_ledger test_doctor test_preflight test_lost
UNIT_SRC_test_lost = launcher/doctor/lost.c common/sbuf.c
UNIT_SRC_test_ledger = $(LEDGER_CORE) $(LEDGER_SHELL) common/fileio.c common/sbuf.c
UNIT_SRC_test_doctor = $(DOCTOR_CORE) $(DOCTOR_SHELL) $(LEDGER_CORE) $(LEDGER_SHELL) $(RANK_CORE) \
                       $(TOPO_CORE) $(TOPO_SHELL) $(SLURM_CORE) $(SLURM_SHELL) $(SPEC_CORE) \
                       launcher/runs/rundir.c common/fileio.c common/jsonfile.c
UNIT_SRC_test_preflight = launcher/doctor/doctor_preflight.c launcher/runs/rundir.c $(SLURM_CORE) \
                          $(SLURM_SHELL) $(SPEC_CORE) common/fileio.c common/jsonfile.c
