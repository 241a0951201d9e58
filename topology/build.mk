# topology/build.mk - hwloc probing, path classes and the binding planner.

TOPO_CORE  = topology/bitmap.c topology/topo.c topology/pathclass.c topology/plan.c \
             topology/plan_nic.c topology/plan_policy.c topology/show.c topology/show_json.c \
             topology/cpufeat.c
TOPO_SHELL = topology/probe.c topology/probe_conv.c topology/probe_pci.c topology/probe_live.c

HPCTRAIN_PKGS += hwloc
DEBIAN_PKGS   += libhwloc-dev hwloc

# probe.c reads /proc/cpuinfo with common/fileio.c, which bin/hpctrain has already.
UNIT_TESTS += test_probe test_bitmap test_pathclass test_show test_topo test_plan test_cpufeat
TOPO_TEST_SRC = $(TOPO_CORE) $(TOPO_SHELL) common/sbuf.c common/diag.c common/fileio.c
UNIT_SRC_test_probe     = $(TOPO_TEST_SRC)
UNIT_SRC_test_bitmap    = $(TOPO_TEST_SRC)
UNIT_SRC_test_pathclass = $(TOPO_TEST_SRC)
UNIT_SRC_test_show      = $(TOPO_TEST_SRC)
UNIT_SRC_test_topo      = $(TOPO_TEST_SRC)
UNIT_SRC_test_plan      = $(TOPO_TEST_SRC)
UNIT_SRC_test_cpufeat = topology/cpufeat.c common/sbuf.c

BENCH_TARGETS += build/bench/bench_plan
build/bench/bench_plan: $(call obj,topology/bench_plan.c $(TOPO_CORE) $(TOPO_SHELL) common/sbuf.c common/diag.c common/fileio.c)
	@mkdir -p $(@D)
	$(LINK) -o $@ $^ $(PKG_LIBS)
