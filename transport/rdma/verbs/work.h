// The work records of a connection (connection.h): each posted work request that
// completes is tracked by one, which owns its buffers until the completion (or the
// flush after a QP error) arrives. Shared by the receive, read and send halves only.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "transport/rdma/protocol/call_plan.h"
#include "transport/rdma/protocol/header.h"
#include "transport/rdma/verbs/connection.h"
#include "transport/rdma/verbs/memory_pool.h"
#include "transport/rpc/call.h"
#include "transport/rpc/message.h"

namespace nfsrdmad::rdma::verbs {

// A posted work request and what it keeps alive until it completes. Receives are not
// here: they belong to the device's shared receive queue until one completes.
struct Connection::Work {
    // WritePart: the signaled last Write of a part of a reply posted ahead of its Send
    // (send_queue.h); it owns nothing (the reply's record does), it frees slots.
    enum Kind { Read, Reply, WritePart } kind;
    explicit Work(Kind k) : kind(k) {}
    virtual ~Work() = default;
    BufferPtr buffer;    // Reply: the send buffer
    uint32_t slots =
        1;  // send queue slots its completion frees (a reply: the Writes posted with it)
};

// One call, from its receive until its reply is sent.
struct Connection::CallWork {
    TransportHeader header;
    CallPlan plan;
    BufferPtr received;  // holds the inline RPC message
    BufferPtr message;   // RDMA_NOMSG: the pulled call
    BufferPtr payload;   // the pulled DDP items (CallPlan::items says where each is)
    // A call with a write chunk (READ, READLINK): the payload buffer its reply fills,
    // reserved on the reactor before it runs, so a worker never waits for one.
    bool wants_reply_payload = false;
    BufferPtr reply_payload;
    uint32_t reads_left = 0;
    bool failed = false;
    // The RPC header as the reactor decoded it, when it left the call to a worker
    // (rpc::Dispatcher::dispatch_nowait's `left`): the worker does not decode it again.
    std::optional<rpc::DecodedCall> decoded;
    // A call put off (rpc::Outcome::Later) and run again: kept between its runs.
    rpc::Deferral deferral;
};

// A work record for RDMA Reads of one call.
struct ReadRecord : Connection::Work {
    ReadRecord() : Work(Read) {}
    std::shared_ptr<Connection::CallWork> call;
    uint32_t bytes = 0;  // taken from the device's ReadBudget, given back on completion
    MrPtr sink;          // iWARP: this Read's own sink registration (read_sink_access())
};

// A work record for a reply's Send (and the Writes chained before it).
struct ReplyRecord : Connection::Work {
    ReplyRecord() : Work(Reply) {}
    std::vector<BufferPtr> staging;
    std::vector<std::unique_ptr<rpc::PayloadBuffer>> payloads;  // what the Writes send from
    std::shared_ptr<Connection::CallWork> call;                 // keeps the received message alive
    bool holds_credit = true;
};

// A reply built (gathered, staged) and being posted in parts, because its chain is longer
// than the send queue (send_queue.h). Only the oldest reply can be one: replies go in
// order, and it stays at the front of starved_replies_ until its Send is posted.
struct Connection::ReplyInProgress {
    std::unique_ptr<ReplyRecord> rec;        // the Send's: staging, send buffer, payloads
    std::vector<ibv_send_wr> wrs;            // the Writes, then the Send, chained
    std::vector<std::vector<ibv_sge>> sges;  // their gather lists (wrs point into them)
    size_t posted = 0;                       // Writes already posted
};

}  // namespace nfsrdmad::rdma::verbs
