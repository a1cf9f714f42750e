// One NFSv4.1 session (RFC 8881 §2.10): its fore channel slot table with the reply cache
// (§2.10.6, SEQUENCE §18.46) and the connections bound to it (§2.10.3.1, BIND_CONN_TO_SESSION
// §18.34) as data.
//
// Owner and lifetime: the ClientTable owns every Session (shared_ptr in its session index and
// in the client record) from CREATE_SESSION until DESTROY_SESSION, DESTROY_CLIENTID, the client
// record's replacement or reaping. A worker holds a shared_ptr only for the duration of one
// COMPOUND (between SEQUENCE and finish()); a session that is destroyed meanwhile is marked dead
// and only that worker's copy keeps the memory alive. A session is never owned by a connection:
// connections are opaque ids bound to it and unbound when they close.
//
// Thread safety: the slot functions (begin, finish, abandon) lock their slot's mutex; the
// bindings and callback parameters the session's mutex (see Slot below). Lock order: the
// client table's lock before a session's locks, never the reverse. A slot is a cache line
// or two (up to 64 of them: 8 KiB for the Linux client's 64 slots, at most
// max_sessions_per_client sessions a client).
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "nfs/v4/state/types.h"

namespace nfsrdmad::nfs::v4::state {

// channel_attrs4 in plain types (§18.36.1).
struct ChannelAttrs {
    uint32_t header_pad_size = 0;
    uint32_t max_request_size = 0;
    uint32_t max_response_size = 0;
    uint32_t max_response_size_cached = 0;
    uint32_t max_operations = 0;
    uint32_t max_requests = 0;
    std::vector<uint32_t> rdma_ird;  // at most one element
    bool operator==(const ChannelAttrs&) const = default;
};

// The encoded COMPOUND reply (results only, never transport framing) a slot keeps.
using CachedReply = std::shared_ptr<const std::vector<uint8_t>>;

// A slot as it was before a new request began on it (Session::abandon).
struct PriorSlot {
    uint32_t seqid = 0;
    bool used = false;
    bool cachethis = false;
    CachedReply reply;
};

struct SlotResult {
    Status status = x4::NFS4_OK;
    bool replay = false;  // status OK and replay: send `reply` as the whole COMPOUND reply
    CachedReply reply;
    uint32_t highest_slotid = 0;         // sr_highest_slotid
    uint32_t target_highest_slotid = 0;  // sr_target_highest_slotid
    PriorSlot prior;                     // a new request: the slot before it began
    bool unbound = false;  // begin(..., fore): that connection is not bound to the fore channel
};

// The backchannel's callback program and the security the server would call back with
// (RFC 8881 §18.36.3: csa_cb_program, csa_sec_parms; BACKCHANNEL_CTL §18.33.3 replaces
// them). Kept with the session for the backchannel; this server sends no callbacks yet.
struct CallbackParams {
    uint32_t program = 0;
    uint32_t flavor = 0;        // AUTH_NONE (0) or AUTH_SYS (1)
    uint32_t uid = 0, gid = 0;  // AUTH_SYS
    // The session whose backchannel it is, and its slots (csr_back_chan_attrs'
    // ca_maxrequests): filled in by ClientTable::callback_of.
    SessionId session{};
    uint32_t back_slots = 1;
};

// From callback_sec_parms4<> to CallbackParams' flavor: the first AUTH_NONE or AUTH_SYS entry;
// an empty list is AUTH_NONE. This server has no RPCSEC_GSS contexts, so a gss_cb_handles4
// entry names a handle that does not exist: NFS4ERR_NOENT (§18.33.3, §18.36.3).
Status choose_callback_security(const std::vector<x4::callback_sec_parms4>& parms,
                                CallbackParams& out);

class Session {
  public:
    Session(const SessionId& id, ClientId client, const ChannelAttrs& fore,
            const ChannelAttrs& back, uint32_t flags, size_t max_connections);

    const SessionId& id() const { return id_; }
    ClientId client() const { return client_; }
    const ChannelAttrs& fore() const { return fore_; }
    const ChannelAttrs& back() const { return back_; }
    uint32_t flags() const { return flags_; }  // csr_flags

    CallbackParams callback() const;
    void set_callback(const CallbackParams& cb);  // BACKCHANNEL_CTL

    // SEQUENCE's slot rules (§2.10.6.1, §18.46.3). A new request (seqid == slot's + 1) leaves
    // the slot in progress until finish(); a replay (seqid == slot's) returns the cached reply,
    // NFS4ERR_RETRY_UNCACHED_REP if the original did not ask to be cached, or NFS4ERR_DELAY
    // while the original is still in progress; anything else is NFS4ERR_SEQ_MISORDERED.
    // With `fore`, first that this connection is bound to the fore channel: if it is not,
    // nothing else is looked at and `unbound` is set (SEQUENCE binds it, or refuses, and
    // begins again). The slot remembers the connection it last found bound, and for which
    // generation of the bindings, so the common SEQUENCE takes only its slot's lock.
    SlotResult begin(uint32_t slotid, uint32_t seqid, uint32_t highest_slotid, bool cachethis,
                     const ConnId* fore = nullptr);

    // Ends the request begin() started on the slot. With cachethis, `reply` is kept for replays;
    // one larger than ca_maxresponsesize_cached is NFS4ERR_REP_TOO_BIG_TO_CACHE and the slot
    // stays in progress: the caller encodes that error as the reply and finishes again
    // (§2.10.6.4). Without cachethis nothing is kept. nullopt: the request produced no reply
    // (the worker failed); a replay then gets NFS4ERR_RETRY_UNCACHED_REP. A finish that does
    // not match an in-progress request returns NFS4ERR_SERVERFAULT (a caller bug).
    Status finish(uint32_t slotid, uint32_t seqid, std::optional<std::span<const uint8_t>> reply);

    // Undoes begin() of a new request that will run again later, as if it had not arrived
    // (a COMPOUND tried on a reactor that would block: Compound::on_abandon): the slot gets
    // `prior` back, its cached reply included, so the same request begins anew. Nothing is
    // done unless that request (seqid) is the one in progress on the slot.
    void abandon(uint32_t slotid, uint32_t seqid, const PriorSlot& prior);

    // The server's wish for fewer slots (sr_target_highest_slotid, §18.46.3); clamped to the
    // table.
    void set_target_highest_slotid(uint32_t target);

    // DESTROY_SESSION (§18.37): marks the session dead unless a slot other than `own` (the
    // slot of the SEQUENCE in the same COMPOUND, if it names this session) is in progress; then
    // it is NFS4ERR_DELAY and nothing changes. Every slot's lock is held while it looks and
    // marks: no request can begin in between.
    Status try_destroy(std::optional<uint32_t> own);
    size_t cached_bytes() const;
    bool in_progress() const;  // a request is between begin() and finish() on some slot

    // Connection binding (§18.34): dir is channel_dir_from_client4; returns the
    // channel_dir_from_server4 granted, or the bound's error (a bounded number of connections).
    // `rebind` (BIND_CONN_TO_SESSION itself): a connection already bound keeps its binding,
    // and a request that would change it is NFS4ERR_INVAL (§18.34.3).
    Status bind(ConnId conn, x4::channel_dir_from_client4 dir, x4::channel_dir_from_server4& out,
                bool rebind = false);
    bool bound(ConnId conn) const;  // in either direction
    bool unbind(ConnId conn);       // the connection closed; true if it was bound
    size_t connections() const;

    void mark_dead();  // destroyed whatever runs: begin() answers NFS4ERR_BADSESSION from now on
    bool dead() const;

    // Kept for SEQUENCE by whoever knows the session's callback path (CallbackPaths::
    // status_flags): this session's flags and when they were read. Opaque here.
    std::atomic<uint64_t>& callback_memo() const { return callback_memo_; }

  private:
    // Locking: each slot has its own mutex, so requests of one client on different slots
    // (one mount's parallel calls, run by several threads) share no lock; a line of its own,
    // so they share no line either. mu_ guards the bindings and the callback parameters.
    // Order: a slot, then mu_ (begin() looks a binding up holding its slot; try_destroy()
    // takes every slot, then mu_); nothing takes a slot holding mu_.
    struct alignas(64) Slot {
        mutable std::mutex mu;
        uint32_t seqid = 0;  // a new session's slots start at 0: the first request is 1
        bool used = false;   // a request ever began on it
        bool in_progress = false;
        bool cachethis = false;
        CachedReply reply;  // null: no cached reply
        // The connection begin() last found bound to the fore channel, at generation
        // bound_gen of the bindings (conns_gen_); 0: none yet.
        ConnId bound_conn = 0;
        uint64_t bound_gen = 0;
    };

    uint32_t highest_slotid() const { return static_cast<uint32_t>(slots_.size() - 1); }
    bool fore_bound(ConnId conn) const;  // mu_ held: bound to the fore channel (or both)
    void bindings_changed() { conns_gen_.fetch_add(1, std::memory_order_release); }  // mu_ held

    const SessionId id_;
    const ClientId client_;
    const ChannelAttrs fore_;
    const ChannelAttrs back_;
    const uint32_t flags_;
    const size_t max_connections_;

    std::vector<Slot> slots_;  // fore_.max_requests slots, made once (a Slot does not move)
    std::atomic<uint32_t> target_highest_slotid_;
    std::atomic<bool> dead_{false};  // set with every slot's lock held (or for good: mark_dead)
    mutable std::mutex mu_;
    std::unordered_map<ConnId, x4::channel_dir_from_server4> conns_;
    std::atomic<uint64_t> conns_gen_{1};  // moved by every change of conns_ (under mu_)
    CallbackParams callback_;
    mutable std::atomic<uint64_t> callback_memo_{0};
};

}  // namespace nfsrdmad::nfs::v4::state
