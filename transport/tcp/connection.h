// One client's TCP connection: reads records on its reactor, runs each call on the
// worker pool, and writes replies back in whatever order they finish. The worker that
// ran a call writes its reply itself when nothing is queued before it and the socket
// takes it whole (issue 13: no hop back to the reactor, which only queues what a full
// socket left over, splices READ data from pipes, and reads). Sockets check no
// credentials on write, so a worker's switched fsuid does not matter here (unlike the
// RDMA verbs, which must stay on the reactor). It also carries calls from this server
// to the client (the NFSv4.1 backchannel, RFC 8881 §2.10.3.1,
// rpc/back_channel.h): a call goes out between replies, and a REPLY record read is
// matched to it by XID on the reactor, before any dispatch.
#pragma once

#include <atomic>
#include <chrono>
#include <deque>
#include <map>
#include <memory>
#include <mutex>

#include "transport/engine/reactor.h"
#include "transport/engine/unique_fd.h"
#include "transport/engine/worker_pool.h"
#include "transport/rpc/back_channel.h"
#include "transport/rpc/call.h"
#include "transport/rpc/dispatcher.h"
#include "transport/tcp/record_marking.h"
#include "transport/tcp/reply_pieces.h"

namespace nfsrdmad::tcp {

struct TcpCounters {
    // Counted on every call, by whichever thread has the connection: striped (stripes.h).
    rpc::StripedCounter records, bytes_in, bytes_out, payload_spliced_bytes, payload_copied_bytes,
        worker_replies, reactor_calls;
    // payload_spliced_bytes: READ data moved file->pipe->socket; payload_copied_bytes: READ
    // data sent from memory (writev); worker_replies: replies written whole by the worker
    // that ran the call (no hop to the reactor); reactor_calls: calls answered on the
    // loop's thread, no worker woken (rpc::Dispatcher::dispatch_nowait).
    std::atomic<uint64_t> accepted{0}, closed{0}, oversize_records{0};
    std::atomic<uint64_t> rejected{0};               // over tcp.max_connections: closed at once
    std::atomic<uint64_t> idle_closed{0};            // closed after tcp.idle_timeout
    std::atomic<uint64_t> accept_errors{0};          // EMFILE/ENFILE and the like
    // Bytes of incoming records moved when a record's buffer grew (RecordAssembler): what
    // was read of a long record before the rest arrived, and records in many fragments.
    std::atomic<uint64_t> record_moved_bytes{0};
    std::atomic<uint64_t> back_calls{0};             // calls to clients (backchannel) sent
    std::atomic<uint64_t> back_failed{0};            // ... unanswered, timed out or refused
    std::atomic<uint64_t> stray_replies{0};          // REPLY records matching no call: dropped
};

struct ConnectionServices {
    rpc::Dispatcher& dispatcher;
    engine::WorkerPool& workers;
    rpc::PayloadAllocator& payloads;
    TcpCounters& counters;
    size_t max_record;
    size_t
        max_in_flight;  // calls running or replies unsent, per connection, before we stop reading
    std::shared_ptr<BufferCache> buffers;  // record buffers
    // Closed when no call arrives and no reply is pending for this long; 0: never.
    std::chrono::milliseconds idle_timeout{0};
    // Where the connection registers as a backchannel (null: it carries no calls).
    std::shared_ptr<rpc::ChannelRegistry> channels;
    size_t max_back_calls = 64;  // backchannel calls awaiting a reply, per connection
    // Calls that need no disk are answered on the loop's thread (Connection::submit)...
    bool reactor_calls = false;
    // ... with this payload memory lent to them (dispatch_nowait's, required): a small READ
    // from the page cache goes into it (preadv2 RWF_NOWAIT) and out in the reply's writev,
    // as a worker's would, without a pipe (a worker splices only READs of 64 KiB and more).
    rpc::PayloadAllocator* loop_payloads = nullptr;
};

class Connection : public std::enable_shared_from_this<Connection>, public rpc::CallChannel {
  public:
    Connection(engine::UniqueFd fd, rpc::Peer peer, engine::Reactor& reactor,
               ConnectionServices services);
    ~Connection();

    void start();  // on the reactor thread
    void close();  // on the reactor thread
    // Any thread: no call running and no reply waiting to be written.
    bool idle() const { return in_flight_ == 0 && queued_ == 0; }
    const rpc::Peer& peer() const { return peer_; }

    // rpc::CallChannel, any thread: the call goes out from the reactor.
    bool send_call(uint32_t xid, std::vector<uint8_t> message, std::chrono::milliseconds timeout,
                   rpc::PendingCalls::Done done) override;

  private:
    struct Outgoing {
        uint8_t mark[4];
        rpc::Reply reply;
        std::vector<Piece> pieces;  // reply_pieces(): into `mark` and `reply`
        size_t sent = 0;
        size_t total = 0;          // of the pieces
        size_t payload_bytes = 0;  // payload bytes sent from memory
        // READ data waiting in a pipe (rpc::PayloadBuffer::splice_fd): sent by splice.
        bool piped = false;
    };

    enum class Sent { All, Full, Failed };  // written whole; socket full; connection broken

    void on_events(uint32_t ev);
    void on_readable();
    void on_writable();
    Sent write_queued();                        // out_ to the socket; send_mu_ held
    Sent send_piped(Outgoing& o);               // send_mu_ held
    void build(Outgoing& o, rpc::Reply reply);  // the mark and the pieces, o in place
    // On a worker: queues `reply` and writes it at once when nothing was queued before
    // it and it needs no splice. All: written whole (or the connection is gone, and the
    // reply with it). Full: queued, all or what the socket did not take, for the reactor
    // to write (the caller posts it a look). Never Failed: a write error is left for the
    // reactor to find.
    Sent write_from_worker(rpc::Reply& reply);
    void call_done();  // on a worker, after write_from_worker() returned All
    // The call's reply written (or queued for the reactor), then call_done(): on the worker
    // that ran it, or on the loop's thread for a call answered there.
    void answer(std::optional<rpc::Reply>& reply);
    void submit(Record rec);
    // The call on a worker; `defer`: as Dispatcher::dispatch's, kept between runs.
    void run_on_worker(Record rec, std::optional<rpc::DecodedCall> decoded, rpc::Deferral defer);
    // Calls put off (rpc::Outcome::Later), on the reactor thread: each runs again on a
    // worker when its timer fires or a wake-up comes sooner (rpc/deferred_wakes.h); both
    // hold only its key and a weak reference. A connection gone meanwhile drops them (a
    // closed one that still exists runs them, and their answers go nowhere:
    // write_from_worker).
    struct Deferred {
        engine::Reactor::TimerId timer;
        Record rec;
        std::optional<rpc::DecodedCall> decoded;
        rpc::Deferral defer;
        rpc::DeferredWakes::Registration wake;
    };
    std::map<uint64_t, Deferred> deferred_;
    uint64_t next_deferred_ = 0;
    void defer(Record rec, std::optional<rpc::DecodedCall> decoded, rpc::Deferral defer);
    void run_deferred(uint64_t key, bool woken);
    void on_reply(const Record& rec);  // a REPLY record: one of our calls answered, or stray
    void expire_calls();
    void finish(std::vector<rpc::PendingCalls::Finished> f);  // runs the `done`s on a worker
    void queue_reply(rpc::Reply reply);  // on the reactor thread
    void update_interest();
    // Activity: a complete call arrived or a reply went out. Restarts the idle clock
    // (coarse: idle timeouts are minutes, and this runs twice per call).
    void touch() { last_activity_.store(engine::Reactor::coarse_now(), std::memory_order_relaxed); }
    void arm_idle_timer(std::chrono::milliseconds delay);
    void on_idle_timer();
    // Backpressure: a client that sends calls but does not read its replies stops being
    // read from, so neither running calls nor queued replies grow without bound.
    bool saturated() const { return in_flight_ + queued_ >= svc_.max_in_flight; }

    // Writing: out_, the socket's writes and its closing, from the reactor or a worker.
    std::mutex send_mu_;
    engine::UniqueFd fd_;
    rpc::Peer peer_;
    engine::Reactor& reactor_;
    ConnectionServices svc_;
    RecordAssembler assembler_;
    std::deque<Outgoing> out_;
    std::atomic<size_t> in_flight_{0};
    std::atomic<size_t> queued_{0};  // out_.size(), readable from any thread
    uint32_t interest_ = 0;
    bool closed_ = false;
    std::atomic<bool> closing_{false};  // closed_, readable from any thread
    // The reactor stopped reading (saturated): a worker that finishes a call wakes it to
    // look again. A Dekker pair with in_flight_ (update_interest(), call_done()).
    std::atomic<bool> paused_{false};
    rpc::PendingCalls pending_;  // backchannel calls awaiting replies (reactor only)
    std::atomic<engine::Reactor::Clock::time_point> last_activity_;
    engine::Reactor::TimerId idle_timer_;
};

}  // namespace nfsrdmad::tcp
