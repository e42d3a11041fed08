# The two commands of the README. Everything else is CMake.
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=
MAKEFLAGS += --no-print-directory

.PHONY: setup build demo test test-long bench clean

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

bench: build
	cmake --build $(BUILD) -j $(JOBS) --target steer_benchmarks

clean:
	rm -rf $(BUILD)
