# The two commands of the README. Everything else is CMake.
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=
MAKEFLAGS += --no-print-directory

FUZZ_SECONDS ?= 60

.PHONY: setup build demo test test-long test-python sanitize-configure test-sanitize fuzz bench clean

setup:
	./scripts/setup

build: setup
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS) >/dev/null
	cmake --build $(BUILD) -j $(JOBS)

demo: build
	./scripts/demo $(BUILD)

# Every test but those labelled `long` (minutes each; `make test-long`, and CI, run them).
test: build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS) -LE long

test-long: build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS) -L long

# The Python package: pip install . into a fresh virtual environment (reusing $(BUILD), so that
# only the module compiles), then its pytest suite on OpenCL (docs/python.md).
test-python: build
	./scripts/python-test $(BUILD)

# One build under AddressSanitizer and UndefinedBehaviorSanitizer, with clang (for its
# libFuzzer): `make test-sanitize` runs the tests in it (PoCL's own leaks suppressed,
# tests/sanitizer/lsan.supp), `make fuzz` every libFuzzer target of tests/fuzz for
# FUZZ_SECONDS each.
SANITIZE_BUILD ?= build-sanitize
# Line tables are all a sanitizer's report needs (file and line of every frame); full debug
# information makes the objects twice as large and the build slower.
SANITIZE_DEBUG_FLAGS = "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O2 -gline-tables-only -DNDEBUG" \
	"-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -gline-tables-only -DNDEBUG"
sanitize-configure: setup
	cmake -S . -B $(SANITIZE_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang \
	  -DCMAKE_CXX_COMPILER=clang++ -DSTEER_SANITIZE=ON -DSTEER_FUZZ=ON \
	  -DSTEER_BUILD_BENCHMARKS=OFF $(SANITIZE_DEBUG_FLAGS) $(CMAKE_FLAGS) >/dev/null

# intercept_tls_get_addr=0: up to LLVM 16 the runtime's __tls_get_addr interceptor can take a
# dynamic TLS block (PoCL's LLVM has many) that lands 16 bytes into a page for a pre-2.25 glibc
# header, and LeakSanitizer's tracer then dies at exit reading the bogus range it reads there
# ("Tracer caught signal 11"), failing a test that passed.
test-sanitize: sanitize-configure
	cmake --build $(SANITIZE_BUILD) -j $(JOBS)
	ASAN_OPTIONS=intercept_tls_get_addr=0 \
	  LSAN_OPTIONS=suppressions=$(CURDIR)/tests/sanitizer/lsan.supp:print_suppressions=0 \
	  UBSAN_OPTIONS=print_stacktrace=1 ctest --test-dir $(SANITIZE_BUILD) --output-on-failure -j $(JOBS) -LE long

fuzz: sanitize-configure
	cmake --build $(SANITIZE_BUILD) -j $(JOBS) --target steer_fuzz_spec steer_fuzz_expression \
	  steer_fuzz_value_list steer_fuzz_recording steer_fuzz_store
	./scripts/fuzz $(SANITIZE_BUILD) $(FUZZ_SECONDS)

bench: build
	cmake --build $(BUILD) -j $(JOBS) --target steer_benchmarks

clean:
	rm -rf $(BUILD) $(SANITIZE_BUILD)
