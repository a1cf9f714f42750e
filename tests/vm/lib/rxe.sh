# rxe.sh - Soft-RoCE (rdma_rxe) in the guest (sourced; bash).
#
#   rxe_setup      rdma_rxe + ib_uverbs + rdma_ucm, a dummy netdev with $RXE_IP, an rxe device
#                  on it, and the RoCEv2 GID that carries $RXE_IP.
#                  Sets RXE_DEV, RXE_NETDEV, RXE_IP, RXE_GID_IDX.
#   rxe_show       device, port state and non-zero GIDs
#
# Traps (see tests/vm/README.md):
#  - rxe cannot sit on `lo`: a dummy netdev with an address is used. The VM has no NIC at all,
#    so this address exists only inside the guest kernel; nothing leaves the VM.
#  - No udev in the guest: ib_uverbs and rdma_ucm are loaded by hand (devtmpfs then creates
#    /dev/infiniband/uverbs0 and rdma_cm).
#  - The IPv4-mapped GID appears a moment after `rdma link add`: poll for it. Verbs tools need
#    its index (-g / -x); rdma_cm users (the NFS client and servers) find it by address.
#  - Two rxe devices in one VM cannot talk to each other; client and server share one device.
source "${VMTEST_LIB:-/vmtest/lib}/common.sh"

RXE_DEV=${RXE_DEV:-rxe0}
RXE_NETDEV=${RXE_NETDEV:-rxenet0}
RXE_IP=${RXE_IP:-10.99.0.1}
RXE_MTU=${RXE_MTU:-1500}

rxe_setup() {
    load_modules rdma_rxe ib_uverbs rdma_ucm || return 1
    if ! ip link show "$RXE_NETDEV" >/dev/null 2>&1; then
        load_modules dummy || return 1
        ip link add "$RXE_NETDEV" type dummy || return 1
    fi
    ip link set "$RXE_NETDEV" mtu "$RXE_MTU" || return 1
    ip addr replace "$RXE_IP/24" dev "$RXE_NETDEV" || return 1
    ip link set "$RXE_NETDEV" up || return 1
    if ! rdma link show "$RXE_DEV/1" >/dev/null 2>&1; then
        rdma link add "$RXE_DEV" type rxe netdev "$RXE_NETDEV" || return 1
    fi
    # the GID table entry of type "RoCE v2" that holds ::ffff:$RXE_IP. (Builtins only: the
    # table has hundreds of slots and every fork+exec costs ~0.1 s under TCG.)
    local want g t i gids=/sys/class/infiniband/$RXE_DEV/ports/1
    want=$(printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' ${RXE_IP//./ })
    RXE_GID_IDX=
    for _ in $(seq 50); do
        for ((i = 0; i < 16; i++)); do
            read -r g < "$gids/gids/$i" 2>/dev/null || continue
            read -r t < "$gids/gid_attrs/types/$i" 2>/dev/null || continue
            if [ "$g" = "$want" ] && [ "$t" = "RoCE v2" ]; then RXE_GID_IDX=$i; break 2; fi
        done
        sleep 0.2
    done
    if [ -z "$RXE_GID_IDX" ]; then
        echo "rxe_setup: no RoCE v2 GID for $RXE_IP on $RXE_DEV after 10 s" >&2
        rxe_show >&2
        return 1
    fi
    [ -c /dev/infiniband/uverbs0 ] || { echo "rxe_setup: /dev/infiniband/uverbs0 missing" >&2; return 1; }
    export RXE_DEV RXE_NETDEV RXE_IP RXE_GID_IDX
    echo "rxe_setup: $RXE_DEV on $RXE_NETDEV ($RXE_IP/24, mtu $RXE_MTU), RoCE v2 GID index $RXE_GID_IDX"
}

rxe_show() {
    local p=/sys/class/infiniband/$RXE_DEV/ports/1 f i g t n
    rdma link show 2>&1 | sed 's/^/  /'
    read -r t < "$p/state"
    echo "  port state: $t, active_mtu: $(ibv_devinfo -d "$RXE_DEV" 2>/dev/null | awk '/active_mtu/{print $2, $3}')"
    for f in "$p"/gids/*; do
        i=${f##*/}
        read -r g < "$f" 2>/dev/null || continue
        [ "$g" = 0000:0000:0000:0000:0000:0000:0000:0000 ] && continue
        read -r t < "$p/gid_attrs/types/$i" 2>/dev/null
        read -r n < "$p/gid_attrs/ndevs/$i" 2>/dev/null
        echo "  gid[$i] $g $t $n"
    done
}
