# topology/build.mk - hwloc probing, path classes and the binding planner.

HPCTRAIN_PKGS += hwloc
DEBIAN_PKGS   += libhwloc-dev hwloc

UNIT_TESTS += test_probe test_bitmap test_pathclass test_show test_topo test_plan test_cpufeat

BENCH_TARGETS += build/bench/bench_plan
build/bench/bench_plan: $(OBJ)/topology/bench_plan.o $(LIBS)
	@mkdir -p $(@D)
	$(LINK) -o $@ $< $(LINK_LIBS) $(PKG_LIBS)
