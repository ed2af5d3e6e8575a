# Thin wrapper over CMake. `make run` and `make test` each install what is missing, configure,
# build, and run (the quick start and the device listing / every test).
BUILD ?= build
MAKEFLAGS += --no-print-directory
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_FLAGS ?=
CTEST_FLAGS ?=
FUZZ_SECONDS ?= 20

.PHONY: all deps configure build run test test-asan test-tsan test-fuzz test-oclgrind bench format clean

all: build

deps:
	@sh tools/install-deps.sh

# A build folder is configured once, for what its first command needs: `make run` for the quick
# start (no x86-64-v3/v4 copies of the kernels: QUICK_FLAGS), every other target for the whole
# library (FULL_FLAGS); a quick-start folder is widened by the first command that needs more,
# which then compiles the copies and the four files that pick among them, nothing else
# (docs/development.md, "Where the build's time goes"). The quick start keeps the kernel
# sanitizer: turning it on later would recompile every kernel file, whose main copy points at
# its sanitized twin.
QUICK_FLAGS = -DCUBERT_KERNEL_CPU_VARIANTS=none -DCUBERT_KERNEL_SANITIZER=ON
FULL_FLAGS = -DCUBERT_KERNEL_CPU_VARIANTS=all -DCUBERT_KERNEL_SANITIZER=ON
CONFIGURE = cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_FLAGS)
IS_FULL = grep -qx 'CUBERT_KERNEL_CPU_VARIANTS:STRING=all' $(BUILD)/CMakeCache.txt && \
  grep -qE '^CUBERT_KERNEL_SANITIZER:[A-Z]+=ON$$' $(BUILD)/CMakeCache.txt

configure: deps
	@if [ ! -f $(BUILD)/CMakeCache.txt ] || ! { $(IS_FULL); }; then $(CONFIGURE) $(FULL_FLAGS) >/dev/null; fi

build: configure
	@echo "cubert: building the library (every CPU variant, the kernel sanitizer), the tests," \
	  "examples and benchmarks: from a fresh clone about 10 minutes on 2 cores (after make run, 6-7)"
	@cmake --build $(BUILD) -j $(JOBS)

# `make run` builds only what it runs: the library's baseline, the quick start and cubert-info
# (a full build, tests and benchmarks included, is `make build` or `make test`). The quick start
# exits non-zero unless both results verify, which fails `make run`.
run: deps
	@[ -f $(BUILD)/CMakeCache.txt ] || $(CONFIGURE) $(QUICK_FLAGS) >/dev/null
	@echo "cubert: building the library, the quick start and cubert-info: from a fresh clone" \
	  "about 3 minutes on 2 cores"
	@cmake --build $(BUILD) -j $(JOBS) --target quickstart cubert-info
	@echo "cubert: running the quick start (saxpy and a sum over 16M floats on the CPU server)"
	$(abspath $(BUILD))/examples/quickstart
	@echo "cubert: listing the devices"
	$(abspath $(BUILD))/cubert-info

test: build
	@echo "cubert: running every test (about 8 minutes on 2 cores; ctest prints each as it ends)"
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) $(CTEST_FLAGS)

# The whole suite under AddressSanitizer + UndefinedBehaviorSanitizer. (The sanitizer builds skip
# the build-time OpenCL check of kernel files, CUBERT_CHECK_KERNELS, which `make test` has done,
# and the kernels' x86-64-v3/v4 copies, which are the baseline's source for another ISA.)
test-asan: deps
	@cmake -S . -B $(BUILD)-asan -DCMAKE_BUILD_TYPE=Debug -DCUBERT_SANITIZE=address,undefined \
	  -DCUBERT_BUILD_BENCH=OFF -DCUBERT_CHECK_KERNELS=OFF -DCUBERT_KERNEL_CPU_VARIANTS=none \
	  $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD)-asan -j $(JOBS)
	cd $(BUILD)-asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 \
	  LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp:print_suppressions=0 \
	  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	  ctest --output-on-failure -j $(JOBS) $(CTEST_FLAGS)

# The reduced conformance suite on Oclgrind's simulated OpenCL device with its race and
# uninitialised-value checks on (tests/oclgrind.sh); any Oclgrind diagnostic fails it.
test-oclgrind: build
	cd $(BUILD) && CUBERT_OCLGRIND_TESTS=1 ctest --output-on-failure -L oclgrind $(CTEST_FLAGS)

# The stress programs under ThreadSanitizer (Criterion does not run under TSan): only they are built.
test-tsan: deps
	@cmake -S . -B $(BUILD)-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCUBERT_SANITIZE=thread \
	  -DCUBERT_BUILD_BENCH=OFF -DCUBERT_CHECK_KERNELS=OFF -DCUBERT_KERNEL_CPU_VARIANTS=none \
	  $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD)-tsan -j $(JOBS) --target stress_programs
	cd $(BUILD)-tsan && TSAN_OPTIONS=halt_on_error=1:suppressions=$(CURDIR)/tests/tsan.supp \
	  ctest --output-on-failure -L stress $(CTEST_FLAGS)

# The libFuzzer targets of tests/fuzz, built with clang under ASan+UBSan, each run for
# FUZZ_SECONDS (CI runs a few seconds; leave it running longer by hand).
test-fuzz:
	@sh tools/install-deps.sh fuzz
	@cmake -S . -B $(BUILD)-fuzz -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DCUBERT_FUZZ=ON -DCUBERT_SANITIZE=address,undefined -DCUBERT_BUILD_TESTS=OFF \
	  -DCUBERT_BUILD_BENCH=OFF -DCUBERT_CHECK_KERNELS=OFF -DCUBERT_FUZZ_SECONDS=$(FUZZ_SECONDS) \
	  $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD)-fuzz -j $(JOBS)
	cd $(BUILD)-fuzz && ctest --output-on-failure -L fuzz $(CTEST_FLAGS)

# The package round trip (tests/package/run.sh): stages `cmake --install`, builds an
# out-of-tree project against it through find_package and pkg-config, runs it on both servers.
test-package: build
	JOBS=$(JOBS) bash tests/package/run.sh $(BUILD)

# Debian packages libcubert0, libcubert-dev, cubert-tools in $(BUILD) (docs/install.md).
package: build
	cd $(BUILD) && cpack -G DEB

.PHONY: test-package package

# The API reference (docs/api.md): HTML in $(BUILD)/docs/html from the public headers. Fails on
# any undocumented public declaration (Doxygen warnings are errors); prints nothing on success.
docs: deps
	@sh tools/docs.sh $(BUILD)/docs

.PHONY: docs

bench: build
	@echo "benchmarks are in $(BUILD)/bench (see docs/BENCHMARKS.md for the commands)"

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf $(BUILD) $(BUILD)-asan $(BUILD)-tsan $(BUILD)-fuzz
