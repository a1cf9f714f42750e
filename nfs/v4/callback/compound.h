// compound.h — the CB_COMPOUND calls this server makes (RFC 8881 §19.2), pure: encode the
// arguments, decode the results. Every NFSv4.1 CB_COMPOUND starts with CB_SEQUENCE
// (§20.9), which names the session and the backchannel slot the call uses.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "nfs/v4/state/stateid.h"
#include "nfs/v4/state/types.h"
#include "xdr/nfs4_prot.h"

namespace nfsrdmad::nfs::v4 {

namespace x4 = xdr::nfs4;

// The operations after CB_SEQUENCE, XDR-encoded nfs_cb_argop4s.
struct CbOps {
    uint32_t count = 0;
    std::vector<uint8_t> xdr;
    const char* what = "";  // for the log: "CB_RECALL"
};

// CB_RECALL (§20.2) of the delegation `stateid` of the file `fh`.
CbOps cb_recall(const state::Stateid& stateid, bool truncate, std::span<const uint8_t> fh);

// CB_GETATTR (§20.1) of the change and size of the file `fh` (§10.4.3: the only
// attributes the server can reliably query of a write delegation's holder).
CbOps cb_getattr(std::span<const uint8_t> fh);

// CB_RECALL_ANY (§20.6): keep at most `keep` of the delegations named by `type_mask`
// (RCA4_TYPE_MASK_* bits), return the rest.
CbOps cb_recall_any(uint32_t keep, uint32_t type_mask);

// The slot a call goes on (§20.9.3: csa_sequenceid is the slot's next).
struct CbSlot {
    state::SessionId session{};
    uint32_t slot = 0, seqid = 0, highest_slot = 0;
};

// CB_COMPOUND4args: no tag, minor version 1, CB_SEQUENCE on `slot`, then `ops`.
std::vector<uint8_t> encode_cb_compound(const CbSlot& slot, const CbOps& ops);

struct CbReply {
    x4::nfsstat4 status = x4::NFS4ERR_SERVERFAULT;  // the compound's
    // CB_SEQUENCE's status; NFS4ERR_SERVERFAULT when the reply has none.
    x4::nfsstat4 sequence = x4::NFS4ERR_SERVERFAULT;
    std::vector<x4::nfsstat4> ops;  // the statuses of the operations after CB_SEQUENCE
    // CB_GETATTR's answer, when it succeeded and carried change and size.
    struct Attrs {
        uint64_t change = 0, size = 0;
    };
    std::optional<Attrs> getattr;
};
// False: the results are not a CB_COMPOUND4res.
bool decode_cb_compound(std::span<const uint8_t> results, CbReply& out);

}  // namespace nfsrdmad::nfs::v4
