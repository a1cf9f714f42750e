// SEQUENCE (RFC 8881 §18.46): the first operation of every COMPOUND in a session.
// The slot table (exactly-once semantics, §2.10.6) is the session's (state/session.cpp);
// here the COMPOUND learns its limits from the session's fore channel and hands the
// slot its reply when the COMPOUND is done.
//
//   new request (seqid = slot + 1)   runs; on_finish gives the slot the encoded reply
//                                    (kept if sa_cachethis) and frees it
//   retransmission (seqid = slot)    the cached reply goes out instead (Compound::replay)
//   otherwise                        SEQ_MISORDERED, BADSESSION, BADSLOT, TOO_MANY_OPS,
//                                    REQ_TOO_BIG ... nothing runs and the slot is as it was
#include <cstring>

#include "nfs/v4/ops.h"
#include "nfs/v4/request.h"

namespace nfsrdmad::nfs::v4 {

namespace {

// The READ data in a cached COMPOUND4res, each copied into a payload buffer of this call
// (Compound::replay_payloads). The copy is of the slot's cache, which already paid one
// (compound.cpp whole_reply) and which ca_maxresponsesize_cached bounds. No buffer free:
// what is left goes inline.
std::vector<Compound::ReplayPayload> replay_payloads(Request& rq,
                                                     const std::vector<uint8_t>& cached) {
    std::vector<Compound::ReplayPayload> out;
    xdr::Decoder d(cached);
    x4::COMPOUND4res res;
    if (!x4::xdr_decode(d, res)) return out;
    for (const auto& op : res.resarray) {
        if (op.resop() != x4::OP_READ || op.opread().status() != x4::NFS4_OK) continue;
        std::span<const uint8_t> data = op.opread().resok4().data;
        if (data.empty()) continue;
        rpc::PayloadBuffer* buf = rq.ctx.payload_buffer(data.size());
        if (!buf) break;
        std::memcpy(buf->data(), data.data(), data.size());
        const size_t at = static_cast<size_t>(data.data() - cached.data());
        out.push_back({at - 4, {buf->data(), data.size()}});
    }
    return out;
}

}  // namespace

OpResult op_sequence(Compound& c, xdr::Decoder& args, xdr::Encoder& res) {
    Request& rq = *c.rq;
    x4::SEQUENCE4args a;
    if (!rq.decode(args, a)) return OpResult::bad_xdr();

    state::SequenceArgs sa;
    sa.sessionid = a.sa_sessionid;
    sa.seqid = a.sa_sequenceid;
    sa.slotid = a.sa_slotid;
    sa.highest_slotid = a.sa_highest_slotid;
    sa.cachethis = a.sa_cachethis;
    sa.conn = rq.conn();
    sa.op_count = c.op_count;
    sa.request_bytes = c.request_bytes;
    state::SequenceResult r = rq.svc.clients.sequence(sa);
    if (r.status != x4::NFS4_OK) {
        encode_status_only(res, r.status);
        return {r.status};
    }
    if (r.replay) {
        c.replay = *r.reply;
        c.replay_payloads = replay_payloads(rq, *c.replay);
        return {};
    }

    // Moved, not copied: every COMPOUND of a session counts on its one reference count,
    // from whichever core runs it (the table's copy is the only increment per COMPOUND).
    rq.session = std::move(r.session);
    rq.clientid = r.clientid;
    rq.slot = a.sa_slotid;
    const state::ChannelAttrs& fore = rq.session->fore();
    c.max_response = fore.max_response_size;
    if (a.sa_cachethis) c.max_cached = fore.max_response_size_cached;
    // The engine keeps a cached reply within ca_maxresponsesize_cached by turning the
    // operation that overflows it into REP_TOO_BIG_TO_CACHE; when even that reply is larger
    // (a tiny limit, a long tag) nothing is kept, the slot is freed, and a retransmission
    // gets RETRY_UNCACHED_REP (§2.10.6.1.3) rather than finding the slot busy for ever.
    // The session is kept alive by rq.session, which nothing else sets, for as long as the
    // COMPOUND runs. A pointer and two words fit std::function without an allocation.
    c.on_finish = [session = rq.session.get(), slot = a.sa_slotid,
                   seqid = a.sa_sequenceid](std::span<const uint8_t> reply) {
        if (session->finish(slot, seqid, reply) == x4::NFS4ERR_REP_TOO_BIG_TO_CACHE)
            session->finish(slot, seqid, std::nullopt);
    };
    // Tried on a reactor (Compound::nowait), the COMPOUND may be given up and run again by a
    // worker, or put off (Compound::may_defer) and run again later: the slot then goes back
    // to what it was, so that run begins it anew.
    if (c.nowait || c.may_defer) {
        rq.slot_seqid = a.sa_sequenceid;
        rq.slot_prior = std::move(r.prior);
        c.on_abandon = [&rq] { rq.session->abandon(rq.slot, rq.slot_seqid, rq.slot_prior); };
    }

    x4::SEQUENCE4resok ok;
    ok.sr_sessionid = a.sa_sessionid;
    ok.sr_sequenceid = a.sa_sequenceid;
    ok.sr_slotid = a.sa_slotid;
    ok.sr_highest_slotid = r.highest_slotid;
    ok.sr_target_highest_slotid = r.target_highest_slotid;
    ok.sr_status_flags =
        r.status_flags |
        rq.svc.callbacks.status_flags(r.clientid, a.sa_sessionid, rq.session->callback_memo());
    // SEQUENCE4res (RFC 5662): NFS4_OK, then the resok arm, stored in place (its size is
    // fixed), without building the union.
    res.put_u32(x4::NFS4_OK);
    x4::xdr_encode(res, ok);
    return {};
}

}  // namespace nfsrdmad::nfs::v4
