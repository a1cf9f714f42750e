// compound.h — the NFSv4.1 COMPOUND procedure (RFC 8881 §16.2, §2.10.6).
//
// A COMPOUND is decoded whole before anything runs, as the Linux server does: an
// operation number that cannot be read makes the call GARBAGE_ARGS and nothing runs;
// an unknown operation number becomes OP_ILLEGAL and arguments that do not decode
// become BADXDR, each at its place, after the operations before it ran.
//
// Then the operations run in order. Each result is encoded as its operation finishes,
// straight into the reply (COMPOUND4res: status, tag, resarray); the first failure
// ends the COMPOUND and its status is the COMPOUND's (§16.2.3). Around the operations
// the engine enforces what the RFC says of all of them:
//   * minor version (§16.2.3): only 1; anything else is MINOR_VERS_MISMATCH with an
//     empty resarray;
//   * order: SEQUENCE only first (§18.46.3: SEQUENCE_POS); EXCHANGE_ID (§18.35.3),
//     CREATE_SESSION (§18.36.3), DESTROY_SESSION (§18.37.3), BIND_CONN_TO_SESSION
//     (§18.34.3) and DESTROY_CLIENTID (§18.50.3) may come without SEQUENCE but then
//     alone (NOT_ONLY_OP); anything else first is OP_NOT_IN_SESSION (§18.46.3);
//   * the current and saved filehandles (§16.2.3.1.1): NOFILEHANDLE for an operation
//     that needs one and has none;
//   * the reply budget (§2.10.6.4): a result that would take the reply past
//     the session's ca_maxresponsesize is replaced by REP_TOO_BIG, or past
//     ca_maxresponsesize_cached when the client asked to cache it by
//     REP_TOO_BIG_TO_CACHE.
// SEQUENCE itself (the slot table) is an operation like the others; it sets the budget
// and may ask for a replay of the slot's cached reply or for the reply to be kept.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "nfs/vfs/handle.h"
#include "transport/rpc/latency_clock.h"
#include "transport/rpc/op_stats.h"
#include "xdr/nfs4_prot.h"
#include "xdr/runtime/xdr.h"

namespace nfsrdmad::nfs::v4 {

namespace x4 = xdr::nfs4;

// A filehandle of this server as the wire carries it (nfs_fh4): every one is at most
// vfs::kMaxHandleSize bytes, pseudo handles included, and is held inline, so the current
// and saved filehandles and their resolutions copy it without allocating. PUTFH takes
// nothing longer (NFS4ERR_BADHANDLE).
using WireHandle = vfs::FileHandle;

// Limits of the engine itself, whatever a session allows.
inline constexpr size_t kMaxTagBytes = 1024;             // NFS4_OPAQUE_LIMIT
inline constexpr size_t kMaxDecodedOps = 128;            // beyond any ca_maxoperations we grant
inline constexpr size_t kDefaultMaxResponse = 1u << 20;  // before a session says otherwise

// What one COMPOUND carries from operation to operation, and what the procedures
// running it need to know about the request as a whole.
class Request;

struct Compound {
    // The request this COMPOUND belongs to (request.h); null in engine-only tests.
    Request* rq = nullptr;

    // RFC 8881 §16.2.3.1.1: the current and saved filehandles.
    std::optional<WireHandle> current_fh, saved_fh;
    // RFC 8881 §16.2.3.1.2: the current stateid, and the one SAVEFH saved with its fh.
    std::optional<x4::stateid4> current_stateid, saved_stateid;

    size_t op_index = 0;       // of the operation running
    uint32_t opnum = 0;        // the operation running (OP_*)
    // The operations that decode, in order: found before the first runs.
    std::span<const uint32_t> opnums() const { return {opnum_at.data(), decoded_ops}; }
    // The first decoded_ops are set, and only they are read: not zeroed for every COMPOUND.
    std::array<uint32_t, kMaxDecodedOps> opnum_at;
    size_t decoded_ops = 0;
    size_t op_count = 0;       // operations in the request
    size_t request_bytes = 0;  // the RPC call as encoded (SEQUENCE: ca_maxrequestsize)

    // Reply limits; SEQUENCE lowers them to the session's channel attributes.
    size_t max_response = 0;           // ca_maxresponsesize; 0: the engine's default
    std::optional<size_t> max_cached;  // ca_maxresponsesize_cached, when sa_cachethis

    // Set by SEQUENCE. A replay: the slot's cached COMPOUND4res goes out instead of
    // anything else. on_finish: called with the whole COMPOUND4res once encoded (the
    // slot keeps it, or only the fact that it completed).
    std::optional<std::vector<uint8_t>> replay;
    // With `replay`: its DDP-eligible opaques (READ data, RFC 8267 §4), each copied into a
    // payload buffer of this call, so the transport places them as it placed the first
    // reply's: over RDMA, through this retransmission's own write chunks (RFC 8166
    // §3.4.6), which may be a new connection's. `offset`: the opaque's length word in
    // `replay`. Empty: the replay goes out as inline bytes.
    struct ReplayPayload {
        size_t offset = 0;
        std::span<const uint8_t> data;
    };
    std::vector<ReplayPayload> replay_payloads;
    std::function<void(std::span<const uint8_t> compound_res)> on_finish;

    // A nowait call (rpc::CallContext::nowait; kNowaitOps): an operation that would block
    // sets would_block (Request::block) and the COMPOUND is given up, as if never run:
    // on_abandon (SEQUENCE's: the slot as it was) undoes what ran, and a worker runs it.
    bool nowait = false;
    bool would_block = false;
    std::function<void()> on_abandon;

    // A call the transport can run again (rpc::CallContext::may_defer). An operation that a
    // delegation holds up answers NFS4ERR_DELAY and sets held_up (Request::delegated) before
    // it changes anything; when only SEQUENCE and operations without effects ran before it,
    // the COMPOUND is put off (put_off(), the dispatcher's say) rather than answered: given
    // up as a nowait one is (on_abandon), and run again whole a little later, so the client
    // is answered once the holder is done instead of retrying on its own clock (the Linux
    // client after 100 ms, then longer).
    bool may_defer = false;
    bool held_up = false;
    std::function<bool()> put_off;
};

// The most operations of a COMPOUND tried nowait, all of them among SEQUENCE (first),
// PUTFH, PUTROOTFH, GETFH, GETATTR, ACCESS, LOOKUP and READ: what the Linux client's
// revalidations, lookups and reads are.
inline constexpr size_t kNowaitOps = 8;

class OpTable;

// WouldBlock: a nowait COMPOUND given up (Compound::would_block); nothing of it stands.
// Declined: a nowait COMPOUND left to a worker before any operation ran (not one to try,
// or an operation's pre-flight said no: OpEntry::may_nowait).
// Later: put off (Compound::held_up); nothing of it stands, the transport runs it again.
enum class CompoundOutcome { Done, Garbage, WouldBlock, Declined, Later };

// Decodes COMPOUND4args from `args` and appends COMPOUND4res to `res`.
// `stats`, when given, counts each operation run: its status and how long it took.
// `clock` (with stats): where the first operation's time starts (the call's start), and on
// return the clock's last reading (the last operation's end); null: read here.
CompoundOutcome run_compound(const OpTable& ops, Compound& c, xdr::Decoder& args, xdr::Encoder& res,
                             rpc::OpStats* stats = nullptr, rpc::latency::Ticks* clock = nullptr);

// A table of the NFSv4.1 operations (RFC 8881 §18) by opnum, with nfsstat4 names.
std::shared_ptr<rpc::OpStats> make_op_stats();
const char* nfsstat4_name(uint32_t status);

}  // namespace nfsrdmad::nfs::v4
