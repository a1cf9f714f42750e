// The NFSv4.1 client state of one server instance (RFC 8881): client records (§2.4,
// EXCHANGE_ID §18.35, DESTROY_CLIENTID §18.50), sessions (CREATE_SESSION §18.36, SEQUENCE
// §18.46, DESTROY_SESSION §18.37, BIND_CONN_TO_SESSION §18.34), stateids (§8.2, through the
// StateidTable it owns) and leases (§8.3) with courtesy clients.
//
// Owner and lifetime: the daemon owns one ClientTable for the life of the server instance
// (boot epoch). The table owns:
//   - client records, from EXCHANGE_ID until DESTROY_CLIENTID, replacement by a new
//     incarnation (confirmed by CREATE_SESSION), a collision with an idle or expired record,
//     reaping (reap()), or, unconfirmed, one lease without CREATE_SESSION;
//   - sessions (see session.h), from CREATE_SESSION until DESTROY_SESSION or their client
//     record's end;
//   - stateids, from allocation until released, freed or their client record's end.
// Nothing is owned by a connection: connections are opaque ids bound to sessions as data and
// forgotten by connection_closed().
//
// When a record ends with state, the result names it (`purged`) so the caller drops what
// other tables hold for it (byte-range locks, share reservations in nfs/vfs/state).
//
// Thread safety: every public function takes the table lock (SEQUENCE's slot check, O(1),
// runs under it too, inside its slot's lock); Session::finish() after the COMPOUND takes that
// slot's lock only. Lock order: table, then session (session.h: a slot, then its mutex). The table lock is a striped
// reader-writer lock (nfs/vfs/rw_lock.h): SEQUENCE (every COMPOUND of every client),
// check_stateid (every READ and WRITE) and the other const functions take their thread's
// stripe only, so calls on different cores share no line; whatever changes the table takes
// every stripe. Under the shared lock SEQUENCE still renews its client's lease: the two
// fields it writes (Record::expiry, courtesy) are atomics, so two SEQUENCEs of one client
// may do so at once.
#pragma once

#include <atomic>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <shared_mutex>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "nfs/v4/state/limits.h"
#include "nfs/v4/state/session.h"
#include "nfs/v4/state/stateid_table.h"
#include "nfs/v4/state/types.h"
#include "nfs/vfs/rw_lock.h"

namespace nfsrdmad::nfs::v4::state {

struct ExchangeIdArgs {
    Verifier verifier{};    // co_verifier
    std::string ownerid;    // co_ownerid (opaque bytes)
    std::string principal;  // who sent it: "sys:<uid>" now, a GSS principal later
    // The request came with RPCSEC_GSS integrity or privacy: SP4_MACH_CRED needs it (§18.35.3).
    bool integrity_protected = false;
    uint32_t flags = 0;  // eia_flags
    x4::state_protect_how4 how = x4::SP4_NONE;
    OpSet must_enforce;  // spo_must_enforce (SP4_MACH_CRED)
    OpSet must_allow;    // spo_must_allow (SP4_MACH_CRED)
};

struct ExchangeIdResult {
    Status status = x4::NFS4_OK;
    ClientId clientid = 0;    // eir_clientid
    uint32_t sequenceid = 0;  // eir_sequenceid
    uint32_t flags = 0;       // eir_flags
    x4::state_protect_how4 how = x4::SP4_NONE;
    OpSet must_enforce;
    OpSet must_allow;
    std::optional<ClientId> purged;  // a record this call deleted with its state
};

struct CreateSessionArgs {
    ClientId clientid = 0;  // csa_clientid
    uint32_t sequence = 0;  // csa_sequence
    uint32_t flags = 0;     // csa_flags
    ChannelAttrs fore;
    ChannelAttrs back;
    uint32_t cb_program = 0;                            // csa_cb_program
    std::vector<x4::callback_sec_parms4> cb_sec_parms;  // csa_sec_parms
    std::string principal;
    ConnId conn = 0;  // the connection it arrived on: bound to the new session's fore channel
};

struct CreateSessionResult {
    Status status = x4::NFS4_OK;
    SessionId sessionid{};
    uint32_t sequence = 0;  // csr_sequence
    uint32_t flags = 0;     // csr_flags
    ChannelAttrs fore;
    ChannelAttrs back;
    bool replay = false;             // the CREATE_SESSION reply cache answered
    std::optional<ClientId> purged;  // the previous incarnation this confirmation replaced
};

struct SequenceArgs {
    SessionId sessionid{};
    uint32_t seqid = 0;
    uint32_t slotid = 0;
    uint32_t highest_slotid = 0;
    bool cachethis = false;
    ConnId conn = 0;
    // The COMPOUND's operations and its size as encoded: checked against the session's
    // fore channel before the slot is touched (§18.46.3: TOO_MANY_OPS, REQ_TOO_BIG).
    size_t op_count = 0;
    size_t request_bytes = 0;
};

struct SequenceResult : SlotResult {
    uint32_t status_flags = 0;  // sr_status_flags
    ClientId clientid = 0;
    // Status OK and not a replay: the caller runs the COMPOUND, then calls
    // session->finish(slotid, seqid, reply).
    std::shared_ptr<Session> session;
};

class ClientTable {
  public:
    // `epoch` distinguishes this server instance (e.g. its start time in seconds); `seed` feeds
    // the unguessable parts of session ids and stateid generations.
    ClientTable(const Clock& clock, uint32_t epoch, Limits limits = {},
                uint64_t seed = std::random_device{}());

    ExchangeIdResult exchange_id(const ExchangeIdArgs& a);
    CreateSessionResult create_session(const CreateSessionArgs& a);
    SequenceResult sequence(const SequenceArgs& a);
    // `own_slot`: the slot of the SEQUENCE this COMPOUND began with, if it names this session.
    Status destroy_session(const SessionId& id, ConnId conn, const std::string& principal,
                           std::optional<uint32_t> own_slot);
    Status destroy_clientid(ClientId id, const std::string& principal);
    struct BindResult {
        Status status = x4::NFS4_OK;
        x4::channel_dir_from_server4 dir = x4::CDFS4_FORE;
    };
    // The callback program and security of a session that has a backchannel
    // (CONN_BACK_CHAN granted); nullopt: unknown session, or none.
    std::optional<CallbackParams> callback_of(const SessionId& id) const;
    std::optional<ClientId> client_of(const SessionId& id) const;
    BindResult bind_conn_to_session(const SessionId& id, ConnId conn,
                                    x4::channel_dir_from_client4 dir, const std::string& principal);
    void connection_closed(ConnId conn);

    // SP4_MACH_CRED (§2.10.8.3, §18.35.3): an operation in the client's spo_must_enforce from
    // another principal than the machine credential is NFS4ERR_WRONG_CRED.
    Status check_mach_cred(ClientId id, uint32_t op, const std::string& principal) const;
    // SP4_MACH_CRED (§18.35.3): one of `ops` is in the client's spo_must_allow and
    // `principal` is its machine credential.
    bool mach_allowed(ClientId id, std::span<const uint32_t> ops,
                      const std::string& principal) const;

    // Stateids of a client (see StateidTable), plus the lease: a stateid of a client whose
    // lease has expired (a courtesy client not yet renewed) is NFS4ERR_EXPIRED.
    StateidTable::Result new_stateid(ClientId id, StateKind kind);
    StateidTable::Result check_stateid(ClientId id, const Stateid& s, KindMask kinds) const;
    StateidTable::Result bump_stateid(ClientId id, const Stateid& s);
    Status release_stateid(ClientId id, const Stateid& s);
    Status free_stateid(ClientId id, const Stateid& s, bool holds_locks);
    std::vector<Status> test_stateids(ClientId id, std::span<const Stateid> ids) const;
    Status revoke_stateid(const Stateid& s, Status reason);

    // Leases (§8.3). The daemon's timer calls expired_clients(): confirmed clients whose lease
    // has run out become courtesy clients and are returned; unconfirmed records older than a
    // lease are dropped (§18.35.4: "SHOULD be removed"). A courtesy client keeps its state
    // until someone conflicts with it: the caller asks may_reap() and reap()s it; a SEQUENCE
    // from it before that renews the lease and it is an ordinary client again.
    std::vector<ClientId> expired_clients();
    bool may_reap(ClientId id) const;
    bool courtesy(ClientId id) const;  // expired_clients() found it expired, not renewed since
    bool reap(ClientId id);            // only an expired client; false otherwise
    // The courtesy clients with the time their lease ended, longest expired first (the lease
    // sweep reaps the ones past Limits::courtesy_leases, or the oldest when the table fills).
    std::vector<std::pair<ClientId, Time>> courtesy_clients() const;
    // The earliest lease end (confirmed) or record end (unconfirmed) among records that are
    // not courtesy clients: when the sweep has something to do next.
    std::optional<Time> next_expiry() const;

    // Status bits other layers own (SEQ4_STATUS_CB_PATH_DOWN, ..._CB_GSS_CONTEXTS_*,
    // ..._BACKCHANNEL_FAULT): SEQUENCE reports them with its own.
    void set_external_status_flags(ClientId id, uint32_t flags);

    uint32_t epoch() const { return epoch_; }
    size_t client_count() const;
    bool confirmed(ClientId id) const;
    // For the daemon's statistics: client records (confirmed or not), sessions, stateids.
    struct Totals {
        size_t clients = 0, sessions = 0, stateids = 0;
        size_t mach_cred = 0;  // clients whose state SP4_MACH_CRED protects
    };
    Totals totals() const;

    // RECLAIM_COMPLETE (RFC 8881 §18.51) with rca_one_fs false: the client has reclaimed
    // what it will. NFS4ERR_COMPLETE_ALREADY the second time; STALE_CLIENTID for a
    // client the table does not know. The grace period asks reclaim_done().
    Status reclaim_complete(ClientId id);
    bool reclaim_done(ClientId id) const;
    // The co_ownerid the client presented (the name its state is recovered under).
    std::optional<std::string> ownerid(ClientId id) const;
    size_t session_count(ClientId id) const;

  private:
    // A field SEQUENCE writes under the shared lock (renew()). Relaxed: the table lock orders
    // it against every writer, and SEQUENCEs racing to renew one lease agree to a few
    // microseconds. Copyable, as a Record is.
    template <class T>
    class Relaxed {
      public:
        Relaxed(T v = T{}) : v_(v) {}
        Relaxed(const Relaxed& o) : v_(o.load()) {}
        Relaxed& operator=(const Relaxed& o) {
            store(o.load());
            return *this;
        }
        T load() const { return v_.load(std::memory_order_relaxed); }
        void store(T v) { v_.store(v, std::memory_order_relaxed); }

      private:
        std::atomic<T> v_;
    };
    struct Record {
        ClientId id = 0;
        std::string ownerid;
        Verifier verifier{};
        std::string principal;
        bool confirmed = false;
        uint32_t flags = 0;  // eir_flags without CONFIRMED_R
        x4::state_protect_how4 how = x4::SP4_NONE;
        OpSet must_enforce;
        OpSet must_allow;
        uint32_t cs_sequence = 0;  // the CREATE_SESSION slot (§18.36.4)
        CreateSessionResult cs_cached;
        Relaxed<Time> expiry;  // lease end (confirmed) or unconfirmed record end
        Relaxed<bool> courtesy{false};
        uint32_t external_flags = 0;
        bool reclaim_complete = false;
        std::vector<SessionId> sessions;
    };
    struct Owner {
        std::optional<ClientId> confirmed;
        std::optional<ClientId> unconfirmed;
    };

    Record* find(ClientId id);
    const Record* find(ClientId id) const;
    Record* live_unconfirmed(std::optional<ClientId> id, Time now);
    bool make_room(Time now);  // a record may be added (bound), after dropping stale ones
    Record& add_record(const ExchangeIdArgs& a, Time now);
    void remove_record(ClientId id);
    bool has_state(const Record& r) const;
    bool enforced(const Record& r, uint32_t op, const std::string& principal) const;
    ExchangeIdResult result_of(const Record& r) const;
    void renew(Record& r, Time now);
    // The lease has run out and no COMPOUND of the client is running (§8.3: the lease "can
    // expire when ... there are no active COMPOUND operations on any such sessions").
    bool expired(const Record& r, Time now) const;
    Status lease_status(ClientId id) const;
    SessionId new_sessionid(ClientId id);

    const Clock& clock_;
    const uint32_t epoch_;
    const Limits limits_;

    mutable vfs::StripedRwLock mu_;
    std::mt19937_64 rng_;
    uint32_t next_client_ = 0;
    uint32_t next_session_ = 0;
    std::unordered_map<ClientId, Record> records_;
    std::unordered_map<std::string, Owner> owners_;
    // By sessionid4. Every SEQUENCE looks its session up here: a hash of the sessionid's
    // session counter and random word (new_sessionid), not a tree of 16-byte compares.
    // Mixed, so that every bit of the result depends on both (the counter's high byte,
    // nearly always 0, would otherwise be the low byte).
    struct SessionIdHash {
        size_t operator()(const SessionId& s) const {
            uint64_t v;
            std::memcpy(&v, s.data() + 8, sizeof v);
            return static_cast<size_t>((v ^ (v >> 29)) * 0x9E3779B97F4A7C15ull >> 7);
        }
    };
    std::unordered_map<SessionId, std::shared_ptr<Session>, SessionIdHash> sessions_;
    StateidTable stateids_;
};

}  // namespace nfsrdmad::nfs::v4::state
