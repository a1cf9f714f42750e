# krb5.sh - a Kerberos realm inside the guest, for RPCSEC_GSS with the kernel client (sourced;
# bash). Client and server are one host here, as they are one VM.
#
#   krb5_realm_start ADDR      names this host $KRB5_HOST (hostname, /etc/hosts: ADDR), writes
#                              /etc/krb5.conf, creates the realm $KRB5_REALM in /tmp/krb5kdc and
#                              starts krb5kdc on 127.0.0.1:88; /etc/krb5.keytab gets
#                              nfs/$KRB5_HOST (the server's key, and the client's machine
#                              credential, as gssd picks it) and host/$KRB5_HOST
#   krb5_user_add NAME UID     a local user NAME (uid and gid UID) and a principal NAME with a
#                              keytab /tmp/krb5-NAME.keytab that NAME can read
#   krb5_kinit NAME UID        NAME's ticket in /tmp/krb5cc_UID, where gssd looks for it
#   krb5_kdestroy UID          that ticket gone
#   as_user UID CMD...         CMD run with uid and gid UID and no supplementary groups
#   gssd_start / gssd_stop     rpc_pipefs mounted at /run/rpc_pipefs and rpc.gssd -f on it
#                              (log: $VMTEST_OUT/gssd.log)
#
# Traps:
#  - gssd takes the server's name from the mount's source (nfs.conf avoid-dns), so mounts name
#    the server $KRB5_HOST, never an address.
#  - gssd builds every context over TCP to port 2049 of the server, also for proto=rdma mounts
#    (it rewrites rdma to tcp and 20049 to 2049): the daemon must listen on TCP 2049 at the
#    address the RDMA mount uses.
#  - The kernel's GSS code is auth_rpcgss + rpcsec_gss_krb5; gssd needs rpc_pipefs mounted.
source "${VMTEST_LIB:-/vmtest/lib}/common.sh"

KRB5_REALM=${KRB5_REALM:-VMTEST.TEST}
KRB5_HOST=${KRB5_HOST:-nfs-server.vmtest.test}
KRB5_DIR=/tmp/krb5kdc
GSSD_PID=
KDC_PID=

krb5_realm_start() {
    local addr=$1 ka="kadmin.local -r $KRB5_REALM -q"
    need_cmd krb5kdc kdb5_util kadmin.local kinit klist rpc.gssd setpriv || return 1
    hostname "${KRB5_HOST%%.*}" || return 1
    printf '127.0.0.1 localhost\n%s %s %s\n' "$addr" "$KRB5_HOST" "${KRB5_HOST%%.*}" > /etc/hosts
    cat > /etc/krb5.conf <<EOF
[libdefaults]
 default_realm = $KRB5_REALM
 dns_lookup_kdc = false
 dns_lookup_realm = false
 rdns = false
 dns_canonicalize_hostname = false
 udp_preference_limit = 1
[realms]
 $KRB5_REALM = {
  kdc = 127.0.0.1:88
 }
[domain_realm]
 .${KRB5_HOST#*.} = $KRB5_REALM
 $KRB5_HOST = $KRB5_REALM
EOF
    rm -rf "$KRB5_DIR"; mkdir -p "$KRB5_DIR"
    cat > "$KRB5_DIR/kdc.conf" <<EOF
[kdcdefaults]
 kdc_ports = 88
 kdc_tcp_ports = 88
[realms]
 $KRB5_REALM = {
  database_name = $KRB5_DIR/principal
  key_stash_file = $KRB5_DIR/stash
  acl_file = $KRB5_DIR/kadm5.acl
  max_life = 10h
 }
[logging]
 kdc = FILE:$VMTEST_OUT/krb5kdc.log
EOF
    export KRB5_KDC_PROFILE=$KRB5_DIR/kdc.conf
    kdb5_util create -s -r "$KRB5_REALM" -P master > "$KRB5_DIR/setup.log" 2>&1 || { cat "$KRB5_DIR/setup.log" >&2; return 1; }
    rm -f /etc/krb5.keytab
    { $ka "addprinc -randkey nfs/$KRB5_HOST" && $ka "addprinc -randkey host/$KRB5_HOST" &&
      $ka "ktadd -k /etc/krb5.keytab nfs/$KRB5_HOST host/$KRB5_HOST"; } >> "$KRB5_DIR/setup.log" 2>&1 \
        || { cat "$KRB5_DIR/setup.log" >&2; return 1; }
    krb5kdc -n > /dev/null 2>&1 &
    KDC_PID=$!
    wait_for 20 bash -c "(exec 3<>/dev/tcp/127.0.0.1/88) 2>/dev/null" || { echo "krb5kdc does not listen on 127.0.0.1:88" >&2; return 1; }
    klist -k /etc/krb5.keytab | sed 's/^/    /'
}

krb5_user_add() {
    local name=$1 uid=$2
    grep -q "^$name:" /etc/passwd || echo "$name:x:$uid:$uid::/tmp:/bin/sh" >> /etc/passwd
    grep -q "^$name:" /etc/group || echo "$name:x:$uid:" >> /etc/group
    { kadmin.local -r "$KRB5_REALM" -q "addprinc -randkey $name" &&
      kadmin.local -r "$KRB5_REALM" -q "ktadd -k /tmp/krb5-$name.keytab $name"; } >> "$KRB5_DIR/setup.log" 2>&1 || return 1
    chown "$uid:$uid" "/tmp/krb5-$name.keytab"
}

as_user() { local uid=$1; shift; setpriv --reuid="$uid" --regid="$uid" --clear-groups "$@"; }

krb5_kinit() {
    local name=$1 uid=$2
    as_user "$uid" env KRB5CCNAME="FILE:/tmp/krb5cc_$uid" kinit -k -t "/tmp/krb5-$name.keytab" "$name" || return 1
    as_user "$uid" env KRB5CCNAME="FILE:/tmp/krb5cc_$uid" klist | sed 's/^/    /'
}

krb5_kdestroy() { rm -f "/tmp/krb5cc_$1"; }

gssd_start() {
    load_modules auth_rpcgss rpcsec_gss_krb5 || return 1
    mkdir -p /run/rpc_pipefs
    mountpoint -q /run/rpc_pipefs || mount -t rpc_pipefs rpc_pipefs /run/rpc_pipefs || return 1
    rpc.gssd -f -vvv -p /run/rpc_pipefs > "$VMTEST_OUT/gssd.log" 2>&1 &
    GSSD_PID=$!
    sleep 1
    kill -0 "$GSSD_PID" 2>/dev/null || { echo "rpc.gssd exited:" >&2; tail -20 "$VMTEST_OUT/gssd.log" >&2; return 1; }
}

gssd_stop() {
    [ -n "$GSSD_PID" ] && kill "$GSSD_PID" 2>/dev/null
    GSSD_PID=
    [ -n "$KDC_PID" ] && kill "$KDC_PID" 2>/dev/null
    KDC_PID=
    return 0
}
