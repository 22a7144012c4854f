# halo — top-level build. `make` builds build/libhalo.a and bin/halo; see `make help`.
#
# The CUDA back end is built when nvcc is found (CUDA=0 skips it) as a shared object,
# lib/halo/libhalo_cuda.so, that bin/halo loads with dlopen only when a run asks for a GPU
# (docs/model.md): a CPU run does not map the CUDA libraries. The CPU path is always built.
# Every target that needs the Debian dependencies runs `deps` first, so `make test` and
# `make demo` work as the first command on a fresh machine.

CC      ?= gcc
ifeq ($(origin CC),default)
CC      := gcc
endif
BUILD   ?= build
PREFIX  ?= /usr/local
WERROR  ?= 0
SAN     ?=

NVCC    ?= $(shell command -v nvcc 2>/dev/null || ls /usr/local/cuda/bin/nvcc 2>/dev/null)
ifeq ($(NVCC),)
CUDA    ?= 0
else
CUDA    ?= 1
endif
CUDA_HOME ?= $(patsubst %/bin/nvcc,%,$(NVCC))

MPI_CFLAGS := $(shell mpicc --showme:compile 2>/dev/null)
MPI_LIBS   := $(shell mpicc --showme:link 2>/dev/null)
LUA_CFLAGS := $(shell pkg-config --cflags lua5.4 2>/dev/null)
LUA_LIBS   := $(shell pkg-config --libs lua5.4 2>/dev/null || echo -llua5.4)

WARN    := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wno-unused-parameter
ifeq ($(WERROR),1)
WARN    += -Werror
endif
CFLAGS  ?= -O2 -g
CFLAGS  += -std=gnu11 $(WARN) -pthread -fno-strict-aliasing -Iruntime -MMD -MP $(SAN)
CFLAGS  += $(MPI_CFLAGS) $(LUA_CFLAGS) -DHALO_VERSION=\"$(VERSION)\" -DHALO_ROOT=\"$(CURDIR)\"
# PT-Scotch (comm/ptscotch.c): bin/halo links Debian's 64-bit SCOTCH_Num build, so that a
# graph's 2E may pass 2^31; bin/halo-ptscotch32 is the same program linked to the 32-bit build
# (half the memory), which `halo partition --method ptscotch` runs for graphs that fit it
# (docs/partition.md). halo prints Scotch's errors itself (no -lptscotcherr)
MULTIARCH     := $(shell $(CC) -print-multiarch 2>/dev/null)
SCOTCH_LIBDIR ?= /usr/lib/$(MULTIARCH)/scotch-int64
SCOTCH_CFLAGS ?= -I/usr/include/scotch-int64
SCOTCH_LIBS   := -L$(SCOTCH_LIBDIR) -Wl,-rpath,$(SCOTCH_LIBDIR) -lptscotch -lscotch
SCOTCH32_LIBDIR ?= /usr/lib/$(MULTIARCH)/scotch-int32
SCOTCH32_CFLAGS ?= -I/usr/include/scotch-int32
SCOTCH32_LIBS := -L$(SCOTCH32_LIBDIR) -Wl,-rpath,$(SCOTCH32_LIBDIR) -lptscotch -lscotch
LDLIBS  := $(MPI_LIBS) $(LUA_LIBS) -lmetis $(SCOTCH_LIBS) -lopenblas -lz -lm -lpthread -ldl
# executables export their symbols: the CUDA back end (and the tests' fake one) call halo_errorf,
# halo_calloc, ... of the program that loads them
LDFLAGS += $(SAN) -Wl,--export-dynamic

VERSION := 0.1.0

LIB_SRC := $(filter-out runtime/cli/%,$(wildcard runtime/*/*.c))
CLI_SRC := $(wildcard runtime/cli/*.c)
CU_SRC  := $(wildcard runtime/*/*.cu)
ifeq ($(CUDA),1)
CFLAGS  += -DHALO_HAVE_CUDA=1
CUDA_LIBS := -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 -lcublas -lcudart -lstdc++
NVFLAGS ?= -O2 -g -std=c++17 -Iruntime -arch=sm_90 -gencode arch=compute_90,code=sm_90 \
           -gencode arch=compute_80,code=sm_80 -Xcompiler -Wall,-fPIC
CU_OBJ  := $(CU_SRC:%.cu=$(BUILD)/%.o)
CUDA_SO := lib/halo/libhalo_cuda.so
else
CU_OBJ  :=
CUDA_SO :=
endif
# the tests' stand-in for the CUDA back end (CPU memory, fault injection; tests/fake/)
FAKE_SO := $(BUILD)/tests/libhalo_fakegpu.so

LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/%.o)
CLI_OBJ := $(CLI_SRC:%.c=$(BUILD)/%.o)
LIB     := $(BUILD)/libhalo.a
BIN     := bin/halo
PTS32_BIN := $(BIN)-ptscotch32
PTS32_OBJ := $(BUILD)/runtime/comm/ptscotch32.o

UNIT_SRC  := $(wildcard tests/unit/test_*.c)
UNIT_BIN  := $(UNIT_SRC:%.c=$(BUILD)/%)
MPI_SRC   := $(wildcard tests/mpi/test_*.c)
MPI_BIN   := $(MPI_SRC:%.c=$(BUILD)/%)
BENCH_SRC := $(wildcard bench/bench_*.c)
BENCH_BIN := $(BENCH_SRC:%.c=$(BUILD)/%)
TEST_HELPERS := $(wildcard tests/common/*.c)
TEST_HOBJ := $(TEST_HELPERS:%.c=$(BUILD)/%.o)
BENCH_HELPERS := $(wildcard bench/common/*.c)
BENCH_HOBJ := $(BENCH_HELPERS:%.c=$(BUILD)/%.o)

.SECONDARY:

.PHONY: all deps build test check test-gpu bench demo asan format lint install clean help

all: $(BIN) $(PTS32_BIN) $(CUDA_SO)

help:
	@echo "make            build libhalo, bin/halo and (CUDA=$(CUDA)) lib/halo/libhalo_cuda.so"
	@echo "make deps       install the Debian packages listed in third_party/packages.txt"
	@echo "make test       deps, build, then every test tier; ends with 'N passed, N failed'"
	@echo "make test-gpu   the GPU tests (needs a GPU: HALO_TEST_GPU=1 makes a skip a failure)"
	@echo "make gpu-check  the prepared GPU run, < 10 min, into build/gpu-check (docs/model.md; SKIP without a GPU)"
	@echo "make bench-peers halo beside a real DistDGL on this machine (root, PyPI; optional)"
	@echo "make bench      benchmarks, each a ratio against a reference measured in the same run"
	@echo "make demo       generate, partition and train a small graph end to end"
	@echo "make asan       tests under AddressSanitizer + UndefinedBehaviorSanitizer"
	@echo "make experiments [QUICK=1]  halo sweep on every experiments/*.lua, then make report"
	@echo "make experiments-scale [QUICK=1]  the at-scale figures (experiments/scale/*.lua), then make report"
	@echo "make report     reports/index.md from the figures' meta.json (halo report reports)"
	@echo "make format | lint | install PREFIX=... | clean"

deps:
	@bash third_party/install.sh

build: $(BIN) $(PTS32_BIN) $(CUDA_SO) $(FAKE_SO) $(UNIT_BIN) $(MPI_BIN)

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/%.o: %.cu
	@mkdir -p $(dir $@)
	$(NVCC) $(NVFLAGS) -MMD -MP -MF $(@:.o=.d) -c $< -o $@

# The policy engine's vector methods are plain loops over arrays: -O3 lets GCC vectorise them
# (at -O2 its "very cheap" cost model leaves most of them scalar).
$(BUILD)/runtime/policy/array.o $(BUILD)/runtime/policy/array_elem.o \
$(BUILD)/runtime/policy/array_order.o: CFLAGS += -O3

$(BUILD)/runtime/comm/ptscotch.o: CFLAGS += $(SCOTCH_CFLAGS)

# comm/ptscotch.c again, against the 32-bit SCOTCH_Num build
$(PTS32_OBJ): runtime/comm/ptscotch.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SCOTCH32_CFLAGS) -c $< -o $@

$(LIB): $(LIB_OBJ)
	@mkdir -p $(dir $@)
	@rm -f $@
	ar rcs $@ $^

$(BIN): $(CLI_OBJ) $(LIB)
	@mkdir -p bin
	$(CC) $(LDFLAGS) -o $@ $(CLI_OBJ) $(LIB) $(LDLIBS)

# the same program with the 32-bit comm/ptscotch.o (it comes first, so the archive's is not used)
$(PTS32_BIN): $(PTS32_OBJ) $(CLI_OBJ) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $(PTS32_OBJ) $(CLI_OBJ) $(LIB) \
	    $(subst $(SCOTCH_LIBS),$(SCOTCH32_LIBS),$(LDLIBS))

# The CUDA back end: its own shared object, linked against cuBLAS and the CUDA runtime; halo's
# own functions it calls come from the program that loads it.
$(CUDA_SO): $(CU_OBJ)
	@mkdir -p $(dir $@)
	$(CC) -shared -o $@ $(CU_OBJ) $(CUDA_LIBS)

$(FAKE_SO): tests/fake/fake_gpu.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fPIC -shared -MF $(@:.so=.d) -o $@ $<

-include $(CU_OBJ:%.o=%.d) $(FAKE_SO:%.so=%.d)

# make clean removes the back end too
.PHONY: clean-cuda
clean: clean-cuda
clean-cuda:
	rm -rf lib/halo

$(BUILD)/tests/unit/%: $(BUILD)/tests/unit/%.o $(TEST_HOBJ) $(LIB)
	$(CC) $(LDFLAGS) -o $@ $< $(TEST_HOBJ) $(LIB) $(LDLIBS) -lcmocka

$(BUILD)/tests/mpi/%: $(BUILD)/tests/mpi/%.o $(TEST_HOBJ) $(LIB)
	$(CC) $(LDFLAGS) -o $@ $< $(TEST_HOBJ) $(LIB) $(LDLIBS)

$(BUILD)/bench/%: $(BUILD)/bench/%.o $(BENCH_HOBJ) $(LIB)
	$(CC) $(LDFLAGS) -o $@ $< $(BENCH_HOBJ) $(LIB) $(LDLIBS)

test: deps
	@$(MAKE) --no-print-directory check

check: build
	@BUILD=$(BUILD) HALO_BIN=$(BIN) bash tests/run.sh

test-gpu: deps
	@$(MAKE) --no-print-directory build
	@BUILD=$(BUILD) HALO_BIN=$(BIN) HALO_TEST_GPU=1 bash tests/run.sh gpu

bench: deps
	@$(MAKE) --no-print-directory $(BIN) $(BENCH_BIN)
	@BUILD=$(BUILD) HALO_BIN=$(BIN) bash bench/run.sh

demo: deps
	@$(MAKE) --no-print-directory $(BIN)
	@bash tests/demo.sh

# The prepared run for a GPU machine (< 10 min, everything under $(BUILD)/gpu-check; docs/model.md,
# "What the first GPU run must show"); a SKIP line without a GPU, a FAIL line with HALO_TEST_GPU=1.
.PHONY: gpu-check
gpu-check: deps
	@bash scripts/gpu-check.sh

# halo beside a real DistDGL (dgl 2.1.0 + torch 2.2.1 from PyPI in .venv-peers); optional, root.
.PHONY: bench-peers
bench-peers: deps
	@$(MAKE) --no-print-directory $(BIN)
	@HALO_BIN=$(BIN) bash bench/peers/run.sh

asan: deps
	@$(MAKE) --no-print-directory BUILD=build-asan CUDA=0 \
	    SAN="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined" \
	    check BIN=build-asan/halo

# Experiments (docs/experiments.md): every experiments/*.lua (not subfolders) through halo sweep
# (--quick with QUICK=1), every one even when some fail, then the report; exit 1 if one failed.
.PHONY: experiments report
experiments: deps
	@$(MAKE) --no-print-directory $(BIN)
	@fail=0; for f in experiments/*.lua; do [ -e "$$f" ] || continue; \
	    $(BIN) sweep "$$f" $(if $(filter 1,$(QUICK)),--quick) || fail=1; done; \
	$(MAKE) --no-print-directory report; exit $$fail

# The at-scale set (docs/experiments.md, "At the papers' scale"): experiments/scale/*.lua, the
# graphs at full size (products-like x1, 2.45 M nodes) and the papers' batch sizes and GPU
# counts, simulated; full set about 32 minutes on 2 cores, QUICK=1 about one. Graphs and
# partitions go to the same content-keyed cache as make experiments (reports/.cache).
.PHONY: experiments-scale
experiments-scale: deps
	@$(MAKE) --no-print-directory $(BIN)
	@fail=0; for f in experiments/scale/*.lua; do [ -e "$$f" ] || continue; \
	    $(BIN) sweep "$$f" $(if $(filter 1,$(QUICK)),--quick) || fail=1; done; \
	$(MAKE) --no-print-directory report; exit $$fail

report: $(BIN)
	@mkdir -p reports
	$(BIN) report reports

format:
	clang-format -i $(wildcard runtime/*/*.c runtime/*/*.h runtime/*/*.cu tests/*/*.c bench/*.c)

lint:
	cppcheck --quiet --error-exitcode=1 --enable=warning,portability --inline-suppr \
	    --suppress=missingIncludeSystem --suppress=invalidPointerCast -Iruntime runtime tests bench
	@command -v clang-tidy >/dev/null && clang-tidy --quiet $(LIB_SRC) -- $(CFLAGS) >/dev/null || true

install: $(BIN) $(PTS32_BIN) $(CUDA_SO)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/share/halo
	install -m 755 $(BIN) $(DESTDIR)$(PREFIX)/bin/halo
	install -m 755 $(PTS32_BIN) $(DESTDIR)$(PREFIX)/bin/halo-ptscotch32
	$(if $(CUDA_SO),install -d $(DESTDIR)$(PREFIX)/lib/halo && install -m 755 $(CUDA_SO) $(DESTDIR)$(PREFIX)/lib/halo/)
	install -m 644 $(LIB) $(DESTDIR)$(PREFIX)/lib/libhalo.a
	cp -r lua policies $(DESTDIR)$(PREFIX)/share/halo/
	install -d $(DESTDIR)$(PREFIX)/share/halo/experiments
	cp -r experiments/clusters experiments/labs $(DESTDIR)$(PREFIX)/share/halo/experiments/

clean:
	rm -rf build build-asan bin

-include $(LIB_OBJ:%.o=%.d) $(CLI_OBJ:%.o=%.d) $(PTS32_OBJ:%.o=%.d) $(UNIT_BIN:%=%.d) $(MPI_BIN:%=%.d) $(BENCH_BIN:%=%.d) $(TEST_HOBJ:%.o=%.d) $(BENCH_HOBJ:%.o=%.d)
