#!/usr/bin/env bash
# What `cmake --install` (and so `make deb`) puts where, from a built tree:
#  - prefix /usr (the package): /usr/sbin/nfsrdmad, the unit in /lib/systemd/system with
#    ExecStart=/usr/sbin/nfsrdmad --config /etc/nfsrdmad/nfsrdmad.yaml, the configuration that
#    exports nothing at /etc/nfsrdmad/nfsrdmad.yaml (check-config accepts it), both man
#    pages (they render without a warning), README and the examples;
#  - prefix /usr/local: every path follows the prefix (PREFIX/etc, PREFIX/lib/systemd/system);
#  - an existing configuration file is never overwritten;
#  - the unit: `systemd-analyze verify` clean and `systemd-analyze security` exposure at most
#    6.0 (9.6 UNSAFE before the hardening, 5.7 with it).
# Usage: bash tests/package/install_test.sh BUILD_DIR
set -uo pipefail

BUILD=$(cd "${1:?usage: install_test.sh BUILD_DIR}" && pwd)
BIN="$BUILD/daemon/nfsrdmad"
[ -x "$BIN" ] || { echo "install_test: FATAL: $BIN is not built" >&2; exit 2; }
for tool in cmake systemd-analyze man; do
    command -v "$tool" >/dev/null || { echo "install_test: FATAL: $tool missing" >&2; exit 2; }
done
WORK=$(mktemp -d /tmp/nfsrdmad-install-XXXXXX)
trap 'rm -rf "$WORK"' EXIT

passed=0 failed=0
check() {  # DESC CMD...
    local desc=$1; shift
    if "$@"; then echo "PASS: $desc"; passed=$((passed + 1))
    else echo "FAIL: $desc"; failed=$((failed + 1)); fi
}
install_to() {  # DESTDIR PREFIX
    DESTDIR="$1" cmake --install "$BUILD" --prefix "$2" >"$WORK/install.log" 2>&1 \
        || { cat "$WORK/install.log"; return 1; }
}
has_line() { grep -qxF "$2" "$1" || { echo "  $1 has no line: $2"; return 1; }; }

U="$WORK/usr"
check "install with prefix /usr" install_to "$U" /usr
for f in usr/sbin/nfsrdmad lib/systemd/system/nfsrdmad.service etc/nfsrdmad/nfsrdmad.yaml \
         usr/share/man/man8/nfsrdmad.8 usr/share/man/man5/nfsrdmad.yaml.5 \
         usr/share/doc/nfsrdmad/README.md usr/share/doc/nfsrdmad/examples/nfsrdmad.yaml \
         usr/share/doc/nfsrdmad/examples/grafana-dashboard.json; do
    check "/usr: $f" test -f "$U/$f"
done
check "/usr: nothing under usr/etc or usr/lib/systemd" \
    test ! -e "$U/usr/etc" -a ! -e "$U/usr/lib/systemd"
UNIT="$U/lib/systemd/system/nfsrdmad.service"
check "unit: ExecStart from the prefix" \
    has_line "$UNIT" "ExecStart=/usr/sbin/nfsrdmad --config /etc/nfsrdmad/nfsrdmad.yaml"
check "unit: ExecReload checks the file first" \
    has_line "$UNIT" "ExecReload=/usr/sbin/nfsrdmad check-config /etc/nfsrdmad/nfsrdmad.yaml"
check "unit: no template word left" bash -c "! grep -n '@' '$UNIT'"
check "the shipped configuration is valid" "$BIN" check-config "$U/etc/nfsrdmad/nfsrdmad.yaml"
check "the shipped configuration exports nothing" has_line "$U/etc/nfsrdmad/nfsrdmad.yaml" "exports: []"
man_clean() {  # PAGE: renders, and man's own checks say nothing
    local out
    out=$(LC_ALL=C.UTF-8 MANROFFSEQ='' MANWIDTH=80 man --warnings -E UTF-8 -l "$1" 2>&1 >/dev/null)
    [ -z "$out" ] || { echo "$out"; return 1; }
    LC_ALL=C.UTF-8 man -l "$1" 2>/dev/null | grep -q "$2"
}
check "man nfsrdmad(8) renders without warnings" man_clean "$U/usr/share/man/man8/nfsrdmad.8" "check-config"
check "man nfsrdmad.yaml(5) renders without warnings" man_clean "$U/usr/share/man/man5/nfsrdmad.yaml.5" "mount_port"

echo "# an edited configuration" >"$WORK/edited"
cp "$WORK/edited" "$U/etc/nfsrdmad/nfsrdmad.yaml"
check "install again" install_to "$U" /usr
check "an existing configuration is kept" cmp -s "$WORK/edited" "$U/etc/nfsrdmad/nfsrdmad.yaml"

L="$WORK/local"
check "install with prefix /usr/local" install_to "$L" /usr/local
check "/usr/local: the unit under the prefix" test -f "$L/usr/local/lib/systemd/system/nfsrdmad.service"
check "/usr/local: the configuration under the prefix" test -f "$L/usr/local/etc/nfsrdmad/nfsrdmad.yaml"
check "/usr/local: nothing outside the prefix" bash -c "[ \"\$(ls '$L')\" = usr ] && [ \"\$(ls '$L/usr')\" = local ]"
check "/usr/local: ExecStart from the prefix" has_line "$L/usr/local/lib/systemd/system/nfsrdmad.service" \
    "ExecStart=/usr/local/sbin/nfsrdmad --config /usr/local/etc/nfsrdmad/nfsrdmad.yaml"

# systemd-analyze verify needs ExecStart's binary to exist: the built one stands in.
unit_checks() {
    local unit="$WORK/nfsrdmad.service" out score
    sed "s|/usr/sbin/nfsrdmad|$BIN|g" "$UNIT" >"$unit"
    # Documentation=man:... is checked with man(1): the installed pages are the ones.
    out="$(MANPATH="$U/usr/share/man" systemd-analyze verify "$unit" 2>&1)" || { echo "$out"; return 1; }
    [[ -z "$out" ]] || { echo "$out"; return 1; }
    score="$(systemd-analyze security --offline=yes "$unit" 2>&1 | sed -n 's/.*exposure level for .*: \([0-9.]*\) .*/\1/p')"
    echo "  exposure $score"
    [[ -n "$score" ]] && awk -v s="$score" 'BEGIN {exit !(s <= 6.0)}'
}
check "unit: verify is clean, security exposure at most 6.0" unit_checks

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
