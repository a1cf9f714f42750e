# nfsrdmad — the two commands: `make run` and `make test`.
#
#   make run     installs what is missing, builds the Release daemon, serves ./run/export over
#                NFSv3 and NFSv4.1 on TCP port 2049 (MOUNT on 20048) in the foreground
#   make test    installs what is missing, builds Release (GCC) and one clang build with
#                ASan+UBSan that also holds the libFuzzer targets (at idle priority, while
#                the VM tests run, and the fuzz tier after them there), runs every test
#                (VM, end-to-end and the bench smoke tests on Release; unit tests under the
#                sanitizers; the end-to-end programs again against the sanitized daemon;
#                fuzz)
#   make deb     builds the Debian package build/deb/nfsrdmad_<version>_<arch>.deb with Debian's
#                build flags and checks it with lintian (packaging/README.md)
#   make fuzz    fuzzes every decoder for FUZZ_SECONDS each; crashes land in
#                tests/fuzz/crashes/<target>/

SHELL      := /bin/bash
BUILD      ?= build
ASAN_BUILD ?= build-asan
FUZZ_BUILD ?= $(ASAN_BUILD)
FUZZ_SECONDS ?= 60
JOBS       ?= $(shell nproc)
EXPORT_DIR ?= $(CURDIR)/run/export
STATE_DIR  ?= $(CURDIR)/run/state
NFS_PORT   ?= 2049
MOUNT_PORT ?= 20048
CTEST_ARGS ?=

.PHONY: all deps build build-asan build-fuzz fuzz run deb test test-unit test-e2e test-asan clean format

all: build

# Debian packages the build and the tests need; apt-get runs only when one is missing.
deps:
	@scripts/install-deps.sh

$(BUILD)/build.ninja $(BUILD)/Makefile:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release

build: deps $(BUILD)/Makefile
	cmake --build $(BUILD) -j $(JOBS)

# The sanitizer build: clang, ASan+UBSan, coverage-instrumented, with the tests AND the
# libFuzzer targets (tests/fuzz) in one tree, so `make test` compiles the sources twice, not
# three times (clang also compiles sanitized code faster than GCC). A build dir configured
# otherwise (an older GCC sanitizer build, other flags) is configured afresh. -O1 as the
# ASan documentation advises, with line tables only (what its reports print): a sixth less
# build time than -O2 -g, the same checks.
ASAN_FLAGS := -O1 -gline-tables-only -DNDEBUG
# ASAN_TARGETS: only these targets (default: all of the tree).
ASAN_TARGETS ?=
build-asan: deps
	@grep -qs '^NFSRDMAD_FUZZ:BOOL=ON' $(ASAN_BUILD)/CMakeCache.txt && \
	  grep -qs '^CMAKE_CXX_FLAGS_RELWITHDEBINFO:STRING=$(ASAN_FLAGS)$$' $(ASAN_BUILD)/CMakeCache.txt || \
	  { rm -rf $(ASAN_BUILD) && \
	  CC=clang CXX=clang++ cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$(ASAN_FLAGS)" -DCMAKE_C_FLAGS_RELWITHDEBINFO="$(ASAN_FLAGS)" \
	    -DNFSRDMAD_SANITIZE=ON -DNFSRDMAD_FUZZ=ON; }
	cmake --build $(ASAN_BUILD) -j $(JOBS) $(if $(ASAN_TARGETS),--target $(ASAN_TARGETS))

# libFuzzer targets (tests/fuzz) live in the sanitizer build.
build-fuzz: build-asan

fuzz: build-fuzz
	@scripts/fuzz.sh $(FUZZ_BUILD) $(FUZZ_SECONDS)

# Only the daemon: serving needs none of the tests.
run: deps $(BUILD)/Makefile
	cmake --build $(BUILD) -j $(JOBS) --target nfsrdmad
	@mkdir -p $(EXPORT_DIR) $(STATE_DIR)
	@scripts/ensure-rpcbind.sh
	@echo "Serving $(EXPORT_DIR): mount -t nfs -o vers=4.1,proto=tcp,port=$(NFS_PORT) $$(hostname):$(EXPORT_DIR) /mnt"
	@echo "  or NFSv3: mount -t nfs -o vers=3,proto=tcp,port=$(NFS_PORT),mountport=$(MOUNT_PORT) $$(hostname):$(EXPORT_DIR) /mnt"
	$(BUILD)/daemon/nfsrdmad --foreground --config config/examples/dev.yaml \
	    --state-dir $(STATE_DIR) --tcp 0.0.0.0:$(NFS_PORT) --mount-port $(MOUNT_PORT) \
	    --export '$(EXPORT_DIR)=rw,no_root_squash,insecure'

# The package, compiled afresh from a copy of the source (packaging/debian/rules).
deb: deps
	scripts/make-deb.sh --lintian $(BUILD)/deb

# Only what the VM tier runs is built before it: the daemon (the package is made from it)
# and the crafted RDMA requester. What the other tiers run is built by scripts/run-tests.sh
# in the background at idle priority while the VM tier runs; the other tiers wait for it.
# (So do not edit the sources while the VM tier runs: the background build would relink the
# daemon under it.) Each test program is compiled once: the end-to-end programs and the
# bench in the Release tree, the unit tests and the fuzz targets in the sanitizer tree (with
# its daemon, which the Release tree's end-to-end programs are run against too).
VM_TARGETS := nfsrdmad rdma_requester
test: deps $(BUILD)/Makefile
	cmake --build $(BUILD) -j $(JOBS) --target $(VM_TARGETS)
	@FUZZ_BUILD=$(FUZZ_BUILD) \
	  RELEASE_BUILD_CMD='cmake --build $(BUILD) -j $(JOBS) --target e2e_tests bench_tests' \
	  ASAN_BUILD_CMD='$(MAKE) --no-print-directory build-asan ASAN_TARGETS="nfsrdmad unit_tests fuzz_targets"' \
	  scripts/run-tests.sh $(BUILD) $(ASAN_BUILD) $(CTEST_ARGS)

test-unit: build
	cd $(BUILD) && ctest -L unit --output-on-failure

test-e2e: build
	cd $(BUILD) && ctest -L e2e --output-on-failure

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD)

format:
	clang-format -i $$(git ls-files '*.cpp' '*.h')
