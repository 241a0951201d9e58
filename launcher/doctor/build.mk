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
# file rewritten under a lock (ledger_file.c); submit and rerun read it,
# and leave out its nodes in cooldown and --exclude's (exclude.c).

DOCTOR_LIBS  = -ldnnl -fopenmp $(shell $(PKG_CONFIG) --libs ompi munge)
DEBIAN_PKGS += libmunge-dev libdnnl-dev libopenmpi-dev

$(OBJ)/launcher/doctor/doctor_probe.o $(SAN)/launcher/doctor/doctor_probe.o: HPT_CFLAGS += $(shell $(PKG_CONFIG) --cflags ompi munge)

UNIT_TESTS += test_ledger test_doctor test_preflight test_lost
