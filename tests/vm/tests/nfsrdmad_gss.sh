#!/bin/bash
# nfsrdmad_gss.sh - guest test group: RPCSEC_GSS (Kerberos V5) under the Linux kernel client.
#
# A KDC runs in the guest (lib/krb5.sh: realm VMTEST.TEST, /etc/krb5.keytab with
# nfs/<host> and host/<host>); rpc.gssd runs on the client side, which is the same host.
# nfsrdmad listens on TCP 2049 and RDMA 20049 of the Soft-RoCE address, which /etc/hosts
# names $KRB5_HOST; gssd builds every context over TCP 2049, also for proto=rdma mounts.
# Exports: $EXPORT (sec krb5p:krb5i:krb5:sys, no_root_squash) and $STRICT (sec krb5p only,
# root squashed).
#
# Asserts, for sec=krb5, krb5i, krb5p x vers=3, 4.1 x proto=tcp, rdma (12 mounts):
#  - the mount (root: the client's machine credential) uses that flavor and transport;
#  - a user who ran kinit (alice) writes $BIG_MB MiB; the file lands with alice's uid; after
#    a remount (cold cache) alice reads it back with the same md5;
#  - a 5 000-entry directory lists completely;
#  - the client sees alice's file as alice's, and root's chown to alice through the mount
#    lands on the server (v4.1: owners as names in the id domain the daemon found from the
#    host name, as the client's nfsidmap does);
#  - root (the machine principal nfs/<host>) creates a file owned by root (no_root_squash);
#  - a user without a ticket (carol) is refused, and alice still works after that;
#  - over RDMA (RFC 8166 §8.2.2 and how the Linux client applies it): krb5 keeps direct data
#    placement (WRITE data in read chunks, READ data in write chunks); with krb5i and krb5p
#    nothing is DDP-eligible: WRITEs come as RDMA_NOMSG long calls, READ replies through
#    reply chunks, and no write chunk is used;
# then a v4.1 krb5i mount over RDMA negotiates SP4_MACH_CRED (the client's machine
# credential) and keeps its delegations working over the backchannel (recalls for a v3
# mount's write and for local processes: lib/nfs.sh nfs4_delegations);
# and then: $STRICT refuses sec=krb5 and sec=sys mounts for v3 and v4.1; a krb5p mount of it
# works and its root is squashed to 65534; over v4.1 the client's CLOSE and LOCKU, sent with
# its machine credential under krb5i, pass (no open or lock is left behind); the daemon copied no payload outside the
# RPCSEC_GSS wraps (rdma payload_memcpy_bytes 0) and counted the ones inside them
# (rpc inlined_payload_bytes); the daemon exits 0.
# Env: NFSRDMAD_BIN (required), BIG_MB (16), MANY (5000).
source "$VMTEST_LIB/common.sh"
source "$VMTEST_LIB/nfs.sh"
source "$VMTEST_LIB/rxe.sh"
source "$VMTEST_LIB/krb5.sh"

BIG_MB=${BIG_MB:-16}
MANY=${MANY:-5000}
EXPORT=/srv/export
STRICT=/srv/strict
MNT=/mnt/gss
RDMA_PORT=20049
ALICE=2001
CAROL=2003

counter() {  # GROUP NAME: NAME= in the daemon's last "stats: GROUP" line
    grep -o "stats: $1 .*" "$NFSRDMAD_LOG" | tail -1 | tr ' ' '\n' | sed -n "s/^$2=//p"
}
dump_stats() { nfsrdmad_dump; }

gss_opts() {  # PROTO VERS SEC
    local o
    if [ "$1" = rdma ]; then o="proto=rdma,port=$RDMA_PORT"; else o="proto=tcp,port=$NFSRDMAD_PORT"; fi
    o="vers=$2,$o,sec=$3,soft,timeo=300,retrans=2"
    [ "$2" = 3 ] && o="$o,mountport=$NFSRDMAD_MOUNT_PORT,mountproto=tcp,nolock"
    echo "$o"
}

# The mount's sec= as the client reports it
mount_sec() { grep " $1 " /proc/mounts | tail -1 | tr ',' '\n' | sed -n 's/^sec=//p'; }

no_ticket_refused() {  # DIR: carol (no ticket) cannot list DIR
    if as_user $CAROL ls "$1" > /dev/null 2> /tmp/carol.err; then
        echo "carol, who has no ticket, listed $1" >&2
        return 1
    fi
    echo "  refused: $(head -1 /tmp/carol.err)"
}

one_mount() {  # PROTO VERS SEC
    local proto=$1 vers=$2 sec=$3 l="$1 v$2 $3" o t0 before_nomsg before_wc before_rc before_rdc
    o=$(gss_opts "$proto" "$vers" "$sec")
    check "$l: mount" nfs_mount "$KRB5_HOST:$EXPORT" "$MNT" "$o" 120 || {
        tail -15 "$VMTEST_OUT/gssd.log" | sed 's/^/  gssd: /'; tail -15 "$NFSRDMAD_LOG" | sed 's/^/  nfsrdmad: /'
        return 1; }
    check "$l: transport" assert_mount_transport "$MNT" "$proto"
    check_eq "$l: flavor (/proc/mounts sec=)" "$sec" "$(mount_sec "$MNT")"
    if [ "$proto" = rdma ]; then
        dump_stats
        before_nomsg=$(counter rdma calls_nomsg); before_rc=$(counter rdma read_chunks)
        before_wc=$(counter rdma write_chunks); before_rdc=$(counter rdma reply_chunks)
    fi
    t0=$(now)
    check "$l: alice writes $BIG_MB MiB" as_user $ALICE dd if=/tmp/big of="$MNT/alice/big" bs=1M conv=fsync status=none
    note "write: $(since "$t0") s"
    check_eq "$l: alice's file has her uid on the server" $ALICE "$(stat -c %u "$EXPORT/alice/big")"
    check "$l: root (machine credential) creates a file" touch "$MNT/by-root"
    check_eq "$l: root's file is root's (no_root_squash)" 0 "$(stat -c %u "$EXPORT/by-root" 2>&1)"
    rm -f "$EXPORT/by-root"
    nfs_umount "$MNT"
    check "$l: remount" nfs_mount "$KRB5_HOST:$EXPORT" "$MNT" "$o" 120 || return 1
    t0=$(now)
    check_eq "$l: alice reads it back (md5)" "$BIG_MD5" "$(as_user $ALICE md5sum "$MNT/alice/big" | cut -d' ' -f1)"
    note "read: $(since "$t0") s"
    t0=$(now)
    check_eq "$l: $MANY-entry listing (ls -l)" "$MANY" "$(as_user $ALICE ls -l "$MNT/many" | grep -c '^-')"
    note "listing: $(since "$t0") s"
    check "$l: a user without a ticket is refused" no_ticket_refused "$MNT/many"
    check "$l: alice still works" as_user $ALICE stat "$MNT/alice/big"
    # v3 owners travel as numbers; v4.1 owners as name@domain (RFC 8881 §5.9), which the
    # client maps back only in its own id domain, found by the daemon as the client's
    # nfsidmap does (else: nobody, and the chown is refused)
    check_eq "$l: the client sees alice's file as alice's" alice "$(stat -c %U "$MNT/alice/big")"
    check "$l: root chowns a file to alice through the mount" chown_through_mount
    if [ "$proto" = rdma ]; then
        dump_stats
        local nomsg=$(($(counter rdma calls_nomsg) - before_nomsg)) rc=$(($(counter rdma read_chunks) - before_rc))
        local wc=$(($(counter rdma write_chunks) - before_wc)) rdc=$(($(counter rdma reply_chunks) - before_rdc))
        note "rdma: nomsg=$nomsg read_chunks=$rc write_chunks=$wc reply_chunks=$rdc"
        if [ "$sec" = krb5 ]; then
            check "$l: WRITE data placed directly (read chunks)" test "$rc" -ge "$BIG_MB"
            check "$l: READ data placed directly (write chunks)" test "$wc" -ge "$BIG_MB"
        else
            check "$l: WRITEs are RDMA_NOMSG long calls (no DDP)" test "$nomsg" -ge "$BIG_MB"
            check "$l: READ replies come back in reply chunks" test "$rdc" -ge "$BIG_MB"
            check_eq "$l: no write chunk (no DDP)" 0 "$wc"
        fi
    fi
    # removed through the mount: the daemon's descriptor cache lets go of it (a local rm
    # would leave its blocks held by the cached descriptor until evicted)
    check "$l: alice removes her file" as_user $ALICE rm "$MNT/alice/big"
    nfs_umount "$MNT"
}

chown_through_mount() {  # (uses $MNT, $EXPORT): v4.1 sends the new owner as a name
    touch "$MNT/by-root" && chown alice "$MNT/by-root" || return 1
    local u
    u=$(stat -c %u "$EXPORT/by-root")
    rm -f "$MNT/by-root"
    [ "$u" = "$ALICE" ] || { echo "owner on the server is $u, not $ALICE" >&2; return 1; }
}

mount_refused() {  # SRC OPTS
    if timeout -k 5 60 mount -t nfs -o "$2" "$1" "$MNT" 2> /tmp/mount.err; then
        echo "mount $1 with $2 succeeded" >&2
        nfs_umount "$MNT"
        return 1
    fi
    echo "  refused: $(tail -1 /tmp/mount.err)"
}

# ------------------------------------------------------------------------------ main
step "setup"
check "rxe device up" rxe_setup || { vm_summary; exit 1; }
check "export on ext4" make_ext4 "$EXPORT" 400 || { vm_summary; exit 1; }
check "strict export on ext4" make_ext4 "$STRICT" 64 || { vm_summary; exit 1; }
nfs_client_modules
load_modules rpcrdma
check "Kerberos realm and KDC" krb5_realm_start "$RXE_IP" || { vm_summary; exit 1; }
check "user alice (uid $ALICE) with a keytab" krb5_user_add alice $ALICE
check "user carol (uid $CAROL), no ticket" krb5_user_add carol $CAROL
check "alice runs kinit" krb5_kinit alice $ALICE
check "rpc.gssd" gssd_start || { vm_summary; exit 1; }
check "rpcbind" rpcbind_start
mkdir -p "$EXPORT/alice" "$EXPORT/many" && chown $ALICE:$ALICE "$EXPORT/alice"
chmod 1777 "$STRICT"
(cd "$EXPORT/many" && seq -f 'f%05g' "$MANY" | xargs touch)
head -c $((BIG_MB << 20)) /dev/urandom > /tmp/big
BIG_MD5=$(md5sum < /tmp/big | cut -d' ' -f1)

step "nfsrdmad with Kerberos exports"
NFSRDMAD_ADDR=$RXE_IP
NFSRDMAD_EXPORT_OPTS="rw,no_root_squash,sec=krb5p:krb5i:krb5:sys"
check "nfsrdmad starts" nfsrdmad_start "$EXPORT" --export "$STRICT=rw,sec=krb5p" \
    --rdma "$RXE_IP:$RDMA_PORT" || { vm_summary; exit 1; }
check "listening on the rxe device" wait_for 20 grep -q "rdma: listening on $RXE_IP:$RDMA_PORT" "$NFSRDMAD_LOG"
check "RPCSEC_GSS is on" grep -q "rpcsec_gss: on" "$NFSRDMAD_LOG"
# no nfsv4.domain and no idmapd.conf Domain: the DNS domain of the canonical host name,
# which is what the client's nfsidmap takes too
check "NFSv4 id domain ${KRB5_HOST#*.} (from the host name)" \
    grep -q "id domain ${KRB5_HOST#*.} (host name $KRB5_HOST)" "$NFSRDMAD_LOG"
check "no keytab warning (nfs/$KRB5_HOST is in it)" bash -c "! grep -q 'rpcsec_gss: kerberos.keytab' '$NFSRDMAD_LOG'"

for proto in tcp rdma; do
    for vers in 3 4.1; do
        for sec in krb5 krb5i krb5p; do
            step "$proto v$vers sec=$sec"
            one_mount "$proto" "$vers" "$sec"
        done
    done
done

step "NFSv4.1 on krb5i over RDMA: SP4_MACH_CRED and the backchannel"
# The client's lease operations use its machine credential with krb5i, whatever the mount's
# sec=, and ask for SP4_MACH_CRED (falling back to SP4_NONE silently if refused); its
# callbacks go over the backchannel with AUTH_SYS, as it asks in CREATE_SESSION.
M3=/mnt/gss-v3
if check "v4.1 krb5i mount over RDMA" nfs_mount "$KRB5_HOST:$EXPORT" "$MNT" "$(gss_opts rdma 4.1 krb5i)" 120 &&
    check "v3 krb5p mount over TCP beside it" nfs_mount "$KRB5_HOST:$EXPORT" "$M3" "$(gss_opts tcp 3 krb5p)" 120; then
    dump_stats
    check "the client's state is protected by SP4_MACH_CRED (daemon: nfs4 mach_cred)" \
        test "$(counter nfs4 mach_cred)" -ge 1
    nfs4_delegations "$MNT" "$M3" "$EXPORT" "krb5i over rdma" krb5p
fi
nfs_umount "$M3"; nfs_umount "$MNT"

step "an export that allows krb5p only"
for vers in 3 4.1; do
    for sec in krb5 sys; do
        check "v$vers: sec=$sec is refused" mount_refused "$KRB5_HOST:$STRICT" "$(gss_opts tcp $vers $sec)"
    done
    if check "v$vers: sec=krb5p mounts" nfs_mount "$KRB5_HOST:$STRICT" "$MNT" "$(gss_opts rdma $vers krb5p)" 120; then
        check "v$vers: alice creates a file" as_user $ALICE touch "$MNT/alice-$vers"
        check_eq "v$vers: with her uid" $ALICE "$(stat -c %u "$STRICT/alice-$vers" 2>&1)"
        check "v$vers: root creates a file" touch "$MNT/root-$vers"
        check_eq "v$vers: root is squashed (root_squash)" 65534 "$(stat -c %u "$STRICT/root-$vers" 2>&1)"
        if [ "$vers" = 4.1 ]; then
            # The client's CLOSE and LOCKU go with its machine credential under krb5i
            # (SP4_MACH_CRED's spo_must_allow), which this export does not list: they
            # must pass all the same, or the open and the lock stay on the server.
            check "v$vers: alice locks and unlocks a file" as_user $ALICE python3 -c 'import fcntl, sys
f = open(sys.argv[1], "r+")
fcntl.lockf(f, fcntl.LOCK_EX)
fcntl.lockf(f, fcntl.LOCK_UN)
f.close()' "$MNT/alice-$vers"
            check "v$vers: a local process locks it after that" python3 -c 'import fcntl, sys
fcntl.lockf(open(sys.argv[1], "r+"), fcntl.LOCK_EX | fcntl.LOCK_NB)' "$STRICT/alice-$vers"
        fi
        nfs_umount "$MNT"
        if [ "$vers" = 4.1 ]; then
            sleep 1; dump_stats
            check_eq "v$vers: no open left on the server after the umount (CLOSE passed)" 0 "$(counter nfs4 opens)"
            check_eq "v$vers: no lock left on the server (LOCKU passed)" 0 "$(counter nfs4 locked_files)"
        fi
    fi
done

step "counters and shutdown"
dump_stats
grep "stats: rpc \|stats: rdma " "$NFSRDMAD_LOG" | tail -2 | sed 's/^/    /'
check_eq "no payload copied outside the wraps (rdma payload_memcpy_bytes)" 0 "$(counter rdma payload_memcpy_bytes)"
check "payload copied into the krb5i/krb5p wraps is counted (rpc inlined_payload_bytes)" \
    test "$(counter rpc inlined_payload_bytes)" -ge $((4 * BIG_MB << 20))
check "krb5i/krb5p WRITE arguments went through the unwrap (rpc unwrapped_bytes)" \
    test "$(counter rpc unwrapped_bytes)" -ge $((8 * BIG_MB << 20))
check "contexts were built (gssd log)" grep -q "creating context" "$VMTEST_OUT/gssd.log"
check "no ucma 'changed security contexts' in the kernel log" bash -c '! dmesg | grep -q "changed security contexts"'
check "nfsrdmad exits 0 on SIGTERM" nfsrdmad_stop
gssd_stop
vm_summary
