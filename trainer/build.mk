# trainer/build.mk - the bundled trainer, bin/hpctrain-train, by concern:
#
#   trainer/          the commands (main.c, cmd_train.c, cmd_data.c) and one
#                     rank's training loop (train*.c) with its metrics
#   trainer/model/    layers, the model, mixed precision, the optimizer,
#                     checkpoints and resuming them
#   trainer/cpu/      the CPU backend (oneDNN) and its kernels' tuning
#   trainer/kernels/  the plain and fast kernels, pure
#   trainer/cuda/     the CUDA backend, the device model, NCCL, and the GPU
#                     decisions free of CUDA (gpu_plan.c)
#   trainer/comm/     data parallelism over MPI and the stall watchdog
#   trainer/data/     data sets, their index and shards
#
# A separate executable (hpctrain train execs it), so the login-node CLI
# never links oneDNN, OpenMP or zlib: bin/hpctrain takes nothing from
# trainer's archives.
# oneDNN has no pkg-config file: -ldnnl.  Trainer objects build with
# OpenMP; the flag is set per object pattern, so the CLI's objects are
# untouched.

# Built only with nvcc, so kept out of trainer/cuda's archive (which holds
# their *_none.c stand-ins): the device model and NCCL data parallelism.
NOT_IN_LIB   += trainer/cuda/model_cuda.c trainer/cuda/comm_cuda.c
TRAIN_LIBS    = -ldnnl -lz -fopenmp -lm

DEBIAN_PKGS   += libdnnl-dev zlib1g-dev dataset-fashion-mnist
TEST_BINS     += bin/hpctrain-train

comma := ,
# -O2 in GCC 12 vectorises only loops of known trip count ("very cheap"
# cost model); the trainer's element-wise loops need the -O3 model.
$(OBJ)/trainer/%.o: HPT_CFLAGS += -fopenmp -fvect-cost-model=dynamic
$(SAN)/trainer/%.o: HPT_CFLAGS += -fopenmp -fvect-cost-model=dynamic
# conv1pool.c's vector helpers are static and inlined: GCC's note that
# 32- and 64-byte vectors pass differently with AVX concerns no call here.
$(OBJ)/trainer/kernels/conv1pool.o $(SAN)/trainer/kernels/conv1pool.o: HPT_CFLAGS += -Wno-psabi

# bin/hpctrain-train is linked below the CUDA section, which picks its objects.

# Unit tests: they need oneDNN, zlib and OpenMP, added per test since
# the Makefile links PKG_LIBS only.
TRAIN_TESTS   = test_kernels test_backend test_torch test_trainer test_amp
UNIT_TESTS   += test_tune $(TRAIN_TESTS)
$(foreach t,$(TRAIN_TESTS),$(eval UNIT_LIBS_$(t) = $$(TRAIN_LIBS)))

# Benchmarks (make bench): the measured fp32 peak beside the trainer, and
# the PyTorch peer of tests/bench/train_vs_torch.sh as Debian's users run
# it: on OpenBLAS, not the reference BLAS that libblas.so.3 is by default.
BENCH_PKGS    += python3-torch libopenblas0-pthread
BENCH_TARGETS += build/bench/bench_peak
build/bench/bench_peak: $(OBJ)/trainer/kernels/bench_peak.o $(LIBS)
	@mkdir -p $(@D)
	$(LINK) -o $@ $< $(LINK_LIBS) $(PKG_LIBS) $(TRAIN_LIBS)
# bf16 against fp32 steps, interleaved in one process.
BENCH_TARGETS += build/bench/bench_amp
build/bench/bench_amp: $(OBJ)/trainer/bench_amp.o $(LIBS)
	@mkdir -p $(@D)
	$(LINK) -o $@ $< $(LINK_LIBS) $(PKG_LIBS) $(TRAIN_LIBS)

# Data parallelism: comm.c talks MPI; its pure part (16-bit packing) is
# in comm_pack.c, which test_comm links without MPI.  Open MPI's flags
# come from pkg-config (ompi.pc; mpicc --showme says the same).
TRAIN_LIBS   += $(shell $(PKG_CONFIG) --libs ompi)
DEBIAN_PKGS  += libopenmpi-dev openmpi-bin
$(OBJ)/trainer/comm/comm.o $(OBJ)/trainer/comm/watchdog.o $(OBJ)/trainer/comm/straggle.o \
$(SAN)/trainer/comm/comm.o $(SAN)/trainer/comm/watchdog.o $(SAN)/trainer/comm/straggle.o: \
	HPT_CFLAGS += $(shell $(PKG_CONFIG) --cflags ompi)
UNIT_TESTS   += test_comm test_late_ranks

# The CUDA path's pure decisions (gpu_plan.c), tested in every build:
# they need no GPU, no CUDA and no MPI.
UNIT_TESTS   += test_gpu_plan test_resume
# Which checkpoint a resume takes, pruning and retiring (pure).
UNIT_TESTS   += test_ckpt_pick

# ---- CUDA backend -------------------------------------------
# Built whenever nvcc is found (/usr/local/cuda/bin/nvcc, else PATH);
# `make CUDA=0` skips it.  With nvcc, bin/hpctrain-train and
# build/tests/test_cuda link the CUDA backend, the device model
# (model_cuda.c) and NCCL data parallelism (comm_cuda.c); such a trainer
# still runs where there is no GPU or no driver (be_cuda_device_count()
# is 0: train.device auto stays on the CPU, cuda fails with status 5)
# and test_cuda skips ("skipped: no GPU").  Without nvcc both build
# against trainer/cuda's *_none.c: a CPU-only trainer, a skipping test_cuda.
#
# Without nvcc the trainer links trainer/cuda's *_none.c instead
# (no device; the device model and NCCL refuse): they sit in trainer/
# cuda's archive, and a CUDA binary names the real objects ahead of the
# archives, so the linker never takes them there.  Every other object
# is compiled once, whichever backend the binary gets.
# build/cuda-config changes when the choice does (CUDA=0 after a CUDA
# build, or back), so the binaries whose object lists differ relink.
# Not sanitized: ASan and the CUDA driver's address-space reservations
# do not mix.
CUDA     ?= 1
NVCC     ?= $(firstword $(wildcard /usr/local/cuda/bin/nvcc) $(shell command -v nvcc 2>/dev/null))
ifeq ($(CUDA),0)
NVCC     :=
endif
CUDA_HOME     = $(patsubst %/bin/nvcc,%,$(NVCC))
CUDA_ARCHS   ?= -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=[sm_90,compute_90]
MPI_CFLAGS    = $(shell mpicc --showme:compile 2>/dev/null)
MPI_LIBS      = $(shell mpicc --showme:link 2>/dev/null)
# --fmad=false: no a*b+c contracted into one rounding, so the element-wise
# kernels (optimizer, batch-norm statistics) round as the C kernels do.
# The builder's CPPFLAGS and CFLAGS reach the host compiler one by one
# (-Xcompiler=FLAG), so a packager's hardening covers the .cu files too.
# nvcc splits an -Xcompiler value at commas, so a flag holding one
# (-Wp,-D_FORTIFY_SOURCE=2, -fsanitize=address,undefined) goes double-quoted.
NVCC_FLAGS    = -O2 -std=c++17 $(CUDA_ARCHS) --fmad=false -I. -DHAVE_CUDA -DOMPI_SKIP_MPICXX \
                $(MPI_CFLAGS) -Xcompiler -Wall,-Wextra$(if $(filter 1,$(WERROR)),$(comma)-Werror) -Wno-deprecated-declarations \
                $(foreach f,$(CPPFLAGS) $(CFLAGS),$(if $(findstring $(comma),$(f)),'-Xcompiler="$(f)"',-Xcompiler=$(f)))
CUDA_LIBS     = -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 -lcudnn -lcublasLt \
                -lnccl -lcudart $(MPI_LIBS) -lstdc++
TEST_BINS    += build/tests/test_cuda

build/cuda-config: cuda-config-force
	@mkdir -p $(@D)
	@echo 'NVCC=$(NVCC)' | cmp -s - $@ || echo 'NVCC=$(NVCC)' >$@
cuda-config-force:
.PHONY: cuda-config-force

# The backend's files: its context and memory, then one file per op.
CUDA_BACKEND = trainer/cuda/backend_cuda.cu trainer/cuda/cuda_gemm.cu trainer/cuda/cuda_conv.cu \
               trainer/cuda/cuda_pool.cu trainer/cuda/cuda_batchnorm.cu trainer/cuda/cuda_pointwise.cu \
               trainer/cuda/cuda_nccl.cu
CUDA_BACKEND_OBJ = $(patsubst %.cu,$(OBJ)/%.o,$(CUDA_BACKEND))
$(CUDA_BACKEND_OBJ): $(OBJ)/%.o: %.cu trainer/cuda/cuda_internal.cuh trainer/cuda/backend_cuda.h \
                     trainer/cpu/backend.h trainer/cuda/gpu_plan.h
	@mkdir -p $(@D)
	$(NVCC) $(NVCC_FLAGS) -c -o $@ $<

ifneq ($(NVCC),)
# The backend, the device model and NCCL data parallelism: linked as
# objects ahead of the archives, so that none of the *_none.o is taken.
TRAIN_CUDA_OBJ   = $(CUDA_BACKEND_OBJ) $(OBJ)/trainer/cuda/model_cuda.o
TRAIN_BIN_OBJ    = $(TRAIN_CUDA_OBJ) $(OBJ)/trainer/cuda/comm_cuda.o
TRAIN_BIN_LIBS   = $(CUDA_LIBS)
$(OBJ)/trainer/cuda/comm_cuda.o: HPT_CFLAGS += $(shell $(PKG_CONFIG) --cflags ompi)

build/tests/test_cuda: $(OBJ)/tests/unit/test_cuda_gpu.o $(TRAIN_CUDA_OBJ) $(LIBS) build/cuda-config
	@mkdir -p $(@D)
	$(LINK) -o $@ $< $(TRAIN_CUDA_OBJ) $(LINK_LIBS) $(PKG_LIBS) $(TRAIN_LIBS) $(CUDA_LIBS) \
		$(shell $(PKG_CONFIG) --libs cmocka) -lm
$(OBJ)/tests/unit/test_cuda_gpu.o: tests/unit/test_cuda.c
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(MPI_CFLAGS) -fopenmp -DHAVE_CUDA -MMD -MP -c -o $@ $<

# The GPU's measured GEMM peak per precision, for tests/bench/gpu_bench.sh.
BENCH_TARGETS += build/bench/bench_cuda_peak
build/bench/bench_cuda_peak: $(OBJ)/trainer/cuda/bench_cuda_peak.o $(TRAIN_CUDA_OBJ) $(LIBS)
	@mkdir -p $(@D)
	$(LINK) -o $@ $< $(TRAIN_CUDA_OBJ) $(LINK_LIBS) $(PKG_LIBS) $(TRAIN_LIBS) $(CUDA_LIBS)
else
TRAIN_BIN_OBJ  =
TRAIN_BIN_LIBS =
build/tests/test_cuda: $(OBJ)/tests/unit/test_cuda.o $(LIBS) build/cuda-config
	@mkdir -p $(@D)
	$(LINK) -o $@ $< $(LINK_LIBS) $(PKG_LIBS) $(TRAIN_LIBS) \
		$(shell $(PKG_CONFIG) --libs cmocka) -lm
endif

bin/hpctrain-train: $(OBJ)/trainer/main.o $(TRAIN_BIN_OBJ) $(LIBS) build/cuda-config
	@mkdir -p $(@D)
	$(LINK) -o $@ $< $(TRAIN_BIN_OBJ) $(LINK_LIBS) $(PKG_LIBS) $(TRAIN_LIBS) $(TRAIN_BIN_LIBS)

BENCH_TARGETS += build/bench/bench_comm
$(OBJ)/trainer/comm/bench_comm.o: HPT_CFLAGS += $(shell $(PKG_CONFIG) --cflags ompi)
build/bench/bench_comm: $(OBJ)/trainer/comm/bench_comm.o $(LIBS)
	@mkdir -p $(@D)
	$(LINK) -o $@ $< $(LINK_LIBS) $(PKG_LIBS) $(TRAIN_LIBS)
