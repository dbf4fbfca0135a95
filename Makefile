# Entry points. `make demo` tunes this machine; `make check` runs every test.
BUILD ?= build
ASAN_BUILD ?= build-asan
JOBS ?= 2
# Unity builds (CMake's CMAKE_UNITY_BUILD): the sources of a target are compiled in batches of
# 16 per translation unit (CMakeLists.txt), so the headers and template instances they share
# (nlohmann/json, cpp-httplib, CLI11, spdlog, Eigen, GoogleTest) are parsed and compiled once per
# batch instead of once per file: about a third less CPU for a full build (docs/architecture.md,
# "Tests"). UNITY=OFF
# compiles file by file (an incremental build after editing one file is then shorter).
UNITY ?= ON
# A test that fails is run once more before it counts as failed: the MPI and Slurm tests time
# real processes on a 2-core machine; a consistent failure still fails.
CTEST_ARGS ?= --output-on-failure --timeout 900 --repeat until-pass:2
COLLTUNE = $(BUILD)/cli/colltune

.PHONY: all deps deps-test build demo check check-unit check-slurm check-asan check-fuzz \
        asan-configure build-asan fault-suite load-suite install deb deps-node clean

all: build

deps:
	@scripts/install-deps build

# What the tests need on top: a Slurm to start, Chromium for the dashboard tests.
deps-test:
	@scripts/install-deps build slurm web

build: deps
	@cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_UNITY_BUILD=$(UNITY) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

# Install the binary, benchmark, tracer, dashboard, man pages, completion, systemd units and
# examples under PREFIX (DESTDIR honoured); docs/install.md. `make deb` builds the .deb instead.
PREFIX ?= /usr/local
install: build
	@cmake --install $(BUILD) --prefix $(PREFIX)

deb: deps-node build
	@cd $(BUILD) && cpack -G DEB

# The .deb carries the dashboard: node and npm to build it.
deps-node:
	@scripts/install-deps build node

# Tune bcast, allreduce, reduce and gather at 4 ranks on this machine with the local backend,
# then write and verify colltune-rules.conf and colltune-report.json.
demo: build
	$(COLLTUNE) tune --backend local --collectives bcast,allreduce,reduce,gather --np 4 \
	  --sizes 4:1M --strategy bo --budget 20 --iterations 100 --warmup 10 \
	  --db colltune-demo.db --rules-out colltune-rules.conf --report-out colltune-report.json

# Every test: unit and integration tests on the real Open MPI, then the Slurm tests on a
# single-node dev cluster started and stopped here.
check: check-unit check-slurm

# deps-test first: node is then here when the build runs, so the dashboard is built and packaged
# (the install test checks the .deb serves it).
# Two at a time (the machine's 2 cores; ranks oversubscribe either way), except the fault suite,
# whose tests time kills and locks and run alone. The tests get a temp folder of their own,
# which must be empty when they are done (scripts/run-leaving-nothing): a test or a killed run
# that leaves files behind fails the check.
check-unit: deps-test build
	scripts/run-leaving-nothing ctest --test-dir $(BUILD) $(CTEST_ARGS) -LE "slurm|faults" -j 2
	scripts/run-leaving-nothing ctest --test-dir $(BUILD) $(CTEST_ARGS) -L faults -j 1

check-slurm: build deps-test
	@scripts/run-slurm-tests $(BUILD)

# Unit tests under AddressSanitizer and UBSan: the test programs that run in-process (no MPI
# jobs, no child colltune processes), so every report is about our code. The longest first, so
# the two slots end close together: server_tests (here about 250 s, most of it whole-cluster
# campaigns interrupted and resumed; here they interrupt a sample of the points make check
# tries all of, tests/server/whole_cluster_test.cpp, kSanitized) as two jobs of half its tests
# each (NAME@N, scripts/run-asan-tests), then optimizer_tests (74 s), then the others (60 s
# together).
ASAN_TESTS = server_tests@2 optimizer_tests rules_tests core_tests osu_tests runner_sim_tests \
             slurm_tests http_api_tests daemon_unit_tests sentinel_tests fingerprint_tests \
             osu_bench_unit_tests http_front_door_tests
ASAN_TARGETS = $(foreach t,$(ASAN_TESTS),$(firstword $(subst @, ,$(t))))
# The libFuzzer targets (fuzz/). One clang tree serves both: the sanitizer build of the tests
# with COLLTUNE_FUZZ=ON, where the parsers' libraries are also compiled for libFuzzer's coverage
# (-fsanitize=fuzzer-no-link), so the fuzzers are five more programs of it, not a third build.
FUZZERS = osu_output_fuzzer rules_fuzzer campaign_spec_fuzzer daemon_config_fuzzer ompi_info_fuzzer
# Debug info at -g1 (functions and line tables, no local variables or types): the sanitizers'
# stack traces keep every frame, inlined ones included, with file and line; the build takes a
# third less CPU than at -g. Configure with -DCOLLTUNE_SANITIZE=ON yourself for a build to debug.
ASAN_CONFIGURE = cmake -S . -B $(ASAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Debug \
  -DCOLLTUNE_SANITIZE=ON -DCOLLTUNE_FUZZ=ON -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_UNITY_BUILD=$(UNITY) -DCMAKE_CXX_FLAGS_DEBUG=-g1 -DCMAKE_C_FLAGS_DEBUG=-g1
asan-configure:
	@scripts/install-deps build fuzz
	@$(ASAN_CONFIGURE) >/dev/null

# The sanitizer tree's test programs and fuzzers, nothing run (.ci/run builds it at nice 19 while
# the unit and Slurm tests run, in the time they leave the cores idle).
build-asan: asan-configure
	@cmake --build $(ASAN_BUILD) -j $(JOBS) --target $(ASAN_TARGETS) $(FUZZERS)

check-asan: asan-configure
	@cmake --build $(ASAN_BUILD) -j $(JOBS) --target $(ASAN_TARGETS)
	@JOBS=$(JOBS) scripts/run-asan-tests $(ASAN_BUILD) $(ASAN_TESTS)

# The fuzzers for FUZZ_SECONDS each, two at a time on 2 cores (JOBS); fails on any crash. They come
# from the sanitizer tree above (after check-asan only their five sources are left to compile).
# docs/reliability/fuzzing.md reports the long runs (10+ minutes per target).
FUZZ_SECONDS ?= 60
check-fuzz: asan-configure
	@cmake --build $(ASAN_BUILD) -j $(JOBS) --target $(FUZZERS)
	@BUILD_DIR=$(abspath $(ASAN_BUILD)) NO_BUILD=1 FUZZERS="$(FUZZERS)" JOBS=$(JOBS) \
	  scripts/run-fuzzers $(FUZZ_SECONDS)

# The full fault suite with its table (docs/reliability/faults.md); `make check` runs the
# short form through ctest (label faults).
fault-suite: build deps-test
	@scripts/fault-suite --build $(BUILD)

# Daemon load and soak figures (docs/reliability/load.md): ~15 minutes.
load-suite: build
	@scripts/install-deps bench
	@BUILD=$(abspath $(BUILD)) bench/daemon/load-suite.sh all

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) build-fuzz
