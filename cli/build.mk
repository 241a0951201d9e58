# cli/build.mk - the commands, and the four login-node programs linked
# from their entry points and the archives:
#
#   bin/hpctrain          main.c: the command table and every command but three
#   bin/hpctrain-doctor   doctor_main.c: doctor, which links MPI, oneDNN and munge
#   bin/hpctrain-report   report_main.c: report, which links cairo
#   bin/hpctrain-stage    stage_main.c: stage, which links MPI
# `hpctrain doctor`, `hpctrain report` and `hpctrain stage` exec the last
# three, so the login-node binary links none of MPI, oneDNN, munge or
# cairo: a member of an archive that needs one of them and were taken
# into bin/hpctrain would fail its link.

TEST_BINS += bin/hpctrain-doctor bin/hpctrain-report bin/hpctrain-stage

$(OBJ)/cli/cmd_doctor.o $(SAN)/cli/cmd_doctor.o: HPT_CFLAGS += $(shell $(PKG_CONFIG) --cflags ompi munge)
$(OBJ)/cli/cmd_stage.o $(SAN)/cli/cmd_stage.o: HPT_CFLAGS += $(shell $(PKG_CONFIG) --cflags ompi)

# stacks.c (launcher/supervise) demangles C++ frames with libstdc++'s
# __cxa_demangle.
bin/hpctrain: $(OBJ)/cli/main.o $(LIBS)
	@mkdir -p $(@D)
	$(LINK) -o $@ $< $(LINK_LIBS) $(PKG_LIBS) -lstdc++ -lm

bin/hpctrain-doctor: $(OBJ)/cli/doctor_main.o $(LIBS)
	@mkdir -p $(@D)
	$(LINK) -o $@ $< $(LINK_LIBS) $(PKG_LIBS) $(DOCTOR_LIBS)

bin/hpctrain-report: $(OBJ)/cli/report_main.o $(LIBS)
	@mkdir -p $(@D)
	$(LINK) -o $@ $< $(LINK_LIBS) $(PKG_LIBS) $(REPORT_LIBS)

bin/hpctrain-stage: $(OBJ)/cli/stage_main.o $(LIBS)
	@mkdir -p $(@D)
	$(LINK) -o $@ $< $(LINK_LIBS) $(PKG_LIBS) $(shell $(PKG_CONFIG) --libs ompi)
