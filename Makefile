# Entry points. `make demo` tunes this machine; `make check` runs every test.
BUILD ?= build
ASAN_BUILD ?= build-asan
JOBS ?= 2
CTEST_ARGS ?= --output-on-failure --timeout 900
COLLTUNE = $(BUILD)/cli/colltune

.PHONY: all deps build demo check check-unit check-slurm check-asan clean

all: build

deps:
	@scripts/install-deps build

build: deps
	@cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

# Tune bcast, allreduce, reduce and gather at 4 ranks on this machine with the local backend,
# then write and verify colltune-rules.conf and colltune-report.json.
demo: build
	$(COLLTUNE) tune --backend local --collectives bcast,allreduce,reduce,gather --np 4 \
	  --sizes 4:1M --strategy random --budget 16 --iterations 100 --warmup 10 \
	  --db colltune-demo.db --rules-out colltune-rules.conf --report-out colltune-report.json

# Every test: unit and integration tests on the real Open MPI, then the Slurm tests on a
# single-node dev cluster started and stopped here.
check: check-unit check-slurm

check-unit: build
	ctest --test-dir $(BUILD) $(CTEST_ARGS) -LE slurm -j 1

check-slurm: build
	@scripts/run-slurm-tests $(BUILD)

# Unit tests under AddressSanitizer and UBSan (integration tests with MPI excluded).
check-asan: deps
	@cmake -S . -B $(ASAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCOLLTUNE_SANITIZE=ON >/dev/null
	@cmake --build $(ASAN_BUILD) -j $(JOBS)
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  ctest --test-dir $(ASAN_BUILD) $(CTEST_ARGS) -LE 'slurm|mpi|integration|web'

clean:
	rm -rf $(BUILD) $(ASAN_BUILD)
