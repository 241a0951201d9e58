# trainer/build.mk - the bundled trainer, bin/hpctrain-train.
#
# A separate executable (hpctrain train execs it), so the login-node CLI
# never links oneDNN, OpenMP or zlib: nothing here goes into HPCTRAIN_SRC.
# oneDNN has no pkg-config file: -ldnnl.  Trainer objects build with
# OpenMP; the flag is set per object pattern, so the CLI's objects are
# untouched.

TRAIN_KERNELS = trainer/kernels/geom.c trainer/kernels/conv_ref.c trainer/kernels/pool_ref.c \
                trainer/kernels/linear_ref.c trainer/kernels/pointwise_f32.c \
                trainer/kernels/pointwise_f64.c
# The trainer's cores and shells (everything but main and the commands),
# which the unit tests link as well.
TRAIN_LIB     = $(TRAIN_KERNELS) trainer/backend_cpu.c trainer/layer.c trainer/model.c \
                trainer/data.c trainer/data_idx.c trainer/data_shard.c trainer/optim.c \
                trainer/ckpt.c trainer/metrics.c trainer/train.c \
                $(SPEC_CORE) cli/fileio.c
TRAIN_SRC     = $(TRAIN_LIB) trainer/main.c trainer/cmd_train.c trainer/cmd_data.c \
                cli/opt.c cli/template_dir.c
TRAIN_LIBS    = -ldnnl -lz -fopenmp -lm

DEBIAN_PKGS   += libdnnl-dev zlib1g-dev dataset-fashion-mnist
TEST_BINS     += bin/hpctrain-train

$(OBJ)/trainer/%.o: CFLAGS += -fopenmp
$(SAN)/trainer/%.o: CFLAGS += -fopenmp

bin/hpctrain-train: $(call obj,$(TRAIN_SRC))
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $^ $(PKG_LIBS) $(TRAIN_LIBS)

# Unit tests: cores linked directly; they need oneDNN, zlib and OpenMP,
# added per target since the Makefile links PKG_LIBS only.
TRAIN_TESTS   = test_kernels test_backend test_torch test_trainer
UNIT_TESTS   += $(TRAIN_TESTS)
UNIT_SRC_test_kernels = $(TRAIN_LIB)
UNIT_SRC_test_backend = $(TRAIN_LIB)
UNIT_SRC_test_torch   = $(TRAIN_LIB)
UNIT_SRC_test_trainer = $(TRAIN_LIB)
$(foreach t,$(TRAIN_TESTS),$(eval build/tests/$(t) build/tests-san/$(t): PKG_LIBS += $(TRAIN_LIBS)))

# Benchmarks (make bench): the measured fp32 peak beside the trainer.
BENCH_TARGETS += build/bench/bench_peak
build/bench/bench_peak: $(call obj,trainer/kernels/bench_peak.c $(TRAIN_LIB))
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $^ $(PKG_LIBS) $(TRAIN_LIBS)
