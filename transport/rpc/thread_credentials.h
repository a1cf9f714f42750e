// Whether the calling thread still has the kernel credentials it was created with.
//
// A thread that changes its fsuid, fsgid or supplementary groups (nfs/vfs/identity.h, to
// act as a caller) gets a new struct cred for good: switching back builds yet another. The
// kernel refuses rdma_cm and uverbs write(2) commands (Soft-RoCE's send doorbell among
// them) from a thread whose credentials are not those that opened the device file
// (ib_safe_file_access). A thread that never changed them may act for an RDMA reactor
// (engine::Reactor::run_if_asleep); one that did must hand its work to the reactor.
// This holds because the daemon's threads share the credentials of the process that
// opened the devices: no thread that creates others, and none before the devices are
// open, switches identity (the rdma VM group's kernel log check would show otherwise).
#pragma once

namespace nfsrdmad::rpc {

namespace detail {
inline thread_local bool t_credentials_changed = false;
}

// Called before any call that may change this thread's credentials (even one that then
// fails or changes nothing: the flag only ever errs on the safe side).
inline void note_credentials_changing() {
    detail::t_credentials_changed = true;
}

inline bool credentials_unchanged() {
    return !detail::t_credentials_changed;
}

}  // namespace nfsrdmad::rpc
