# nfsrdmad — the two commands: `make run` and `make test`.
#
#   make run     installs what is missing, builds Release, serves ./run/export over
#                NFSv3/TCP on port 2049 (MOUNT on 20048) in the foreground
#   make test    installs what is missing, builds Release, an ASan+UBSan build and the
#                clang libFuzzer build, runs every test (unit, end-to-end, sanitizer, fuzz)
#   make fuzz    fuzzes every decoder for FUZZ_SECONDS each; crashes land in
#                tests/fuzz/crashes/<target>/

SHELL      := /bin/bash
BUILD      ?= build
ASAN_BUILD ?= build-asan
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 60
JOBS       ?= $(shell nproc)
EXPORT_DIR ?= $(CURDIR)/run/export
STATE_DIR  ?= $(CURDIR)/run/state
NFS_PORT   ?= 2049
MOUNT_PORT ?= 20048
CTEST_ARGS ?=

.PHONY: all deps build build-asan build-fuzz fuzz run test test-unit test-e2e test-asan clean format

all: build

# Debian packages the build and the tests need; apt-get runs only when one is missing.
deps:
	@scripts/install-deps.sh

$(BUILD)/build.ninja $(BUILD)/Makefile:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release

build: deps $(BUILD)/Makefile
	cmake --build $(BUILD) -j $(JOBS)

build-asan: deps
	@test -f $(ASAN_BUILD)/Makefile || cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNFSRDMAD_SANITIZE=ON
	cmake --build $(ASAN_BUILD) -j $(JOBS)

# libFuzzer targets (tests/fuzz): clang only, in a build dir of their own.
build-fuzz: deps
	@test -f $(FUZZ_BUILD)/Makefile || CC=clang CXX=clang++ cmake -S . -B $(FUZZ_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNFSRDMAD_FUZZ=ON
	cmake --build $(FUZZ_BUILD) -j $(JOBS) --target fuzz_targets

fuzz: build-fuzz
	@scripts/fuzz.sh $(FUZZ_BUILD) $(FUZZ_SECONDS)

run: build
	@mkdir -p $(EXPORT_DIR) $(STATE_DIR)
	@scripts/ensure-rpcbind.sh
	@echo "Serving $(EXPORT_DIR): mount -t nfs -o vers=3,proto=tcp,port=$(NFS_PORT),mountport=$(MOUNT_PORT) $$(hostname):$(EXPORT_DIR) /mnt"
	$(BUILD)/daemon/nfsrdmad --foreground --config config/examples/dev.yaml \
	    --state-dir $(STATE_DIR) --tcp 0.0.0.0:$(NFS_PORT) --mount-port $(MOUNT_PORT) \
	    --export '$(EXPORT_DIR)=rw,no_root_squash,insecure'

test: build build-asan build-fuzz
	@FUZZ_BUILD=$(FUZZ_BUILD) scripts/run-tests.sh $(BUILD) $(ASAN_BUILD) $(CTEST_ARGS)

test-unit: build
	cd $(BUILD) && ctest -L unit --output-on-failure

test-e2e: build
	cd $(BUILD) && ctest -L e2e --output-on-failure

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD)

format:
	clang-format -i $$(git ls-files '*.cpp' '*.h')
