#!/usr/bin/env bash
# Installs the Debian packages nfsrdmad needs to build and test, only those missing.
set -euo pipefail

packages=(
  build-essential cmake pkg-config python3
  libspdlog-dev libcli11-dev libyaml-cpp-dev libtirpc-dev libgtest-dev
  libibverbs-dev librdmacm-dev liburing-dev
  libnfs-dev libnfs-utils rpcbind nfs-common
  libkrb5-dev krb5-kdc krb5-admin-server krb5-user   # RPCSEC_GSS; the tests run a KDC of their own
  libblkid-dev     # filesystem UUIDs for the exports' fsids (nfs/vfs/fs_identity.h)
  libsodium-dev    # SipHash-2-4: the file-handle MAC (nfs/vfs/siphash.h)
  libsystemd-dev   # Type=notify, the watchdog and journald priorities (daemon/service_manager.h)
  systemd          # tests: systemd-analyze verify and security on the unit (tools_test.sh)
  prometheus-cpp-dev   # the metrics endpoint (daemon/metrics.h); brings libcurl4-openssl-dev
  nlohmann-json3-dev   # the control socket's JSON (daemon/control_answers.h, nfsrdmad stats)
  python3-prometheus-client   # tests: /metrics read by Prometheus' own parser (tools_test.sh)
  debhelper lintian man-db    # make deb, and the package's tests (tests/package)
  libbenchmark-dev valgrind strace   # bench/host: Google Benchmark, callgrind instruction counts, syscalls
  clang libclang-rt-14-dev   # the fuzz build: libclang_rt.fuzzer-x86_64.a (Debian 12)
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "installing: ${missing[*]}"
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
