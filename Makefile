# nfsrdmad — the two commands: `make run` and `make test`.
#
#   make run     installs what is missing, builds Release, serves ./run/export over
#                NFSv3/TCP on port 2049 (MOUNT on 20048) in the foreground
#   make test    installs what is missing, builds Release and an ASan+UBSan build,
#                runs every test (unit, end-to-end, sanitizer)

SHELL      := /bin/bash
BUILD      ?= build
ASAN_BUILD ?= build-asan
JOBS       ?= $(shell nproc)
EXPORT_DIR ?= $(CURDIR)/run/export
STATE_DIR  ?= $(CURDIR)/run/state
NFS_PORT   ?= 2049
MOUNT_PORT ?= 20048
CTEST_ARGS ?=

.PHONY: all deps build build-asan run test test-unit test-e2e test-asan clean format

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

run: build
	@mkdir -p $(EXPORT_DIR) $(STATE_DIR)
	@scripts/ensure-rpcbind.sh
	@echo "Serving $(EXPORT_DIR): mount -t nfs -o vers=3,proto=tcp,port=$(NFS_PORT),mountport=$(MOUNT_PORT) $$(hostname):$(EXPORT_DIR) /mnt"
	$(BUILD)/daemon/nfsrdmad --foreground --config config/examples/dev.yaml \
	    --state-dir $(STATE_DIR) --tcp 0.0.0.0:$(NFS_PORT) --mount-port $(MOUNT_PORT) \
	    --export '$(EXPORT_DIR)=rw,no_root_squash,insecure'

test: build build-asan
	@scripts/run-tests.sh $(BUILD) $(ASAN_BUILD) $(CTEST_ARGS)

test-unit: build
	cd $(BUILD) && ctest -L unit --output-on-failure

test-e2e: build
	cd $(BUILD) && ctest -L e2e --output-on-failure

clean:
	rm -rf $(BUILD) $(ASAN_BUILD)

format:
	clang-format -i $$(git ls-files '*.cpp' '*.h')
