# launcher/stage/build.mk - staging data sets to node-local storage: a
# data set's manifest and its hash (stage_manifest, pure), where things
# are on a node (stage_path, pure), the chain an entry flows along
# (stage_plan, pure), a step's entries and record (stage_job, pure); the
# cached scan of a source (stage_scan), the node cache with its locks
# (stage_cache) and eviction (stage_evict), the one read of a source
# (stage_source) and a node's verified copy (stage_sink); and the step
# across nodes over MPI (stage_mpi), which only bin/hpctrain-stage links.

$(OBJ)/launcher/stage/stage_mpi.o $(SAN)/launcher/stage/stage_mpi.o: HPT_CFLAGS += $(shell $(PKG_CONFIG) --cflags ompi)
UNIT_TESTS += test_stage_manifest test_stage_path test_stage_plan test_stage_cache
