#include "nfs/v4/compound.h"

#include "nfs/v4/op_table.h"

namespace nfsrdmad::nfs::v4 {

void encode_status_only(xdr::Encoder& res, x4::nfsstat4 status) {
    res.put_u32(static_cast<uint32_t>(status));
}

namespace {

// Operations that may open a COMPOUND without SEQUENCE, if they are alone in it.
bool sessionless(uint32_t opnum) {
    switch (opnum) {
        case x4::OP_EXCHANGE_ID:           // §18.35.3
        case x4::OP_CREATE_SESSION:        // §18.36.3
        case x4::OP_DESTROY_SESSION:       // §18.37.3
        case x4::OP_BIND_CONN_TO_SESSION:  // §18.34.3
        case x4::OP_DESTROY_CLIENTID:      // §18.50.3
            return true;
        default:
            return false;
    }
}

// How far the arguments decode, found before anything runs.
struct Scan {
    enum Stop { None, Garbage, Illegal, BadXdr, TooMany } stop = None;
    size_t at = 0;  // the operation where it stops
};

// Records the numbers of the operations that decode (Compound::opnums), and where the
// arguments of each of the first kNowaitOps start (`args_at`: offsets in `d`), so that a
// nowait COMPOUND's pre-flight need not read past the operations again.
Scan scan(const OpTable& ops, xdr::Decoder d, size_t count, Compound& c,
          std::array<size_t, kNowaitOps>& args_at) {
    Scan s;
    size_t n = std::min(count, kMaxDecodedOps);
    c.decoded_ops = 0;
    for (size_t i = 0; i < n; ++i) {
        xdr::Decoder at = d;
        uint32_t opnum = d.get_u32();
        if (!d.ok()) return {Scan::Garbage, i};
        if (!ops.find(opnum)) return {Scan::Illegal, i};
        if (i < kNowaitOps) args_at[i] = d.offset();
        // Read past, not decoded: each operation decodes its own arguments when it runs.
        if (!x4::xdr_skip(at, std::type_identity<x4::nfs_argop4>{})) return {Scan::BadXdr, i};
        d = at;
        c.opnum_at[c.decoded_ops++] = opnum;
    }
    // Beyond what any session allows: SEQUENCE answers TOO_MANY_OPS first (§2.10.6.4)
    // and a COMPOUND without one stops at its first operation; this is a backstop.
    if (count > n) s = {Scan::TooMany, n};
    return s;
}

// The reply's size as sent, out-of-line payload (READ data) included.
size_t reply_bytes(const xdr::Encoder& res, size_t start) {
    size_t n = res.size() - start;
    for (const auto& ext : res.externals())
        if (ext.offset >= start) n += ext.data.size();
    return n;
}

// The reply as a retransmission must get it again: the inline bytes from `start` with
// the out-of-line payloads (READ data) put back where they stand in the XDR stream.
// Only a reply the slot caches pays for this copy, and ca_maxresponsesize_cached
// bounds it.
std::vector<uint8_t> whole_reply(const xdr::Encoder& res, size_t start) {
    std::span<const uint8_t> in = res.written();
    std::vector<uint8_t> out;
    out.reserve(reply_bytes(res, start));
    size_t at = start;
    for (const auto& ext : res.externals()) {
        if (ext.offset < start) continue;
        out.insert(out.end(), in.begin() + at, in.begin() + ext.offset);
        out.insert(out.end(), ext.data.begin(), ext.data.end());
        at = ext.offset;  // the pad bytes are inline
    }
    out.insert(out.end(), in.begin() + at, in.end());
    return out;
}

}  // namespace

std::shared_ptr<rpc::OpStats> make_op_stats() {
    std::vector<std::string> names(x4::OP_RECLAIM_COMPLETE + 1);
    for (uint32_t op = x4::OP_ACCESS; op < names.size(); ++op)
        if (const char* n = x4::enum_name(static_cast<x4::nfs_opnum4>(op)))
            names[op] = n + 3;  // without "OP_"
    // READ and WRITE bytes count in COMPOUND's table (the call's report), not here.
    return std::make_shared<rpc::OpStats>("nfs", "4.1", std::move(names), nfsstat4_name, false);
}

const char* nfsstat4_name(uint32_t status) {
    return x4::enum_name(static_cast<x4::nfsstat4>(status));
}

namespace {

// Counts one operation when it goes out of scope, with the status it ended with and the
// time since `mark`, which it then moves to now: one operation's end is the next one's
// start, so a COMPOUND of n operations reads the clock n + 1 times, not 2n.
// A nowait COMPOUND's counts wait until it is known to stand (it may be given up): they
// are made when this goes out of scope, after every operation's OpTimer, unless given_up.
struct HeldCounts {
    struct One {
        uint32_t opnum, status;
        uint64_t ns;
    };
    rpc::OpStats* stats = nullptr;
    bool given_up = false;
    std::array<One, kNowaitOps> ops;  // [0, n) are set: nothing to zero on every COMPOUND
    size_t n = 0;
    ~HeldCounts() {
        if (given_up || !stats) return;
        for (size_t i = 0; i < n; ++i) stats->record(ops[i].opnum, ops[i].status, ops[i].ns);
    }
};

class OpTimer {
  public:
    OpTimer(rpc::OpStats* stats, uint32_t opnum, const x4::nfsstat4& status,
            rpc::latency::Ticks& mark, HeldCounts* held)
        : stats_(stats), opnum_(opnum), status_(status), mark_(mark), held_(held) {}
    ~OpTimer() {
        if (!stats_) return;
        const rpc::latency::Ticks now = rpc::latency::now();
        const uint64_t ns = rpc::latency::elapsed_ns(mark_, now);
        mark_ = now;
        if (held_ && held_->n < held_->ops.size())
            held_->ops[held_->n++] = {opnum_, static_cast<uint32_t>(status_), ns};
        else
            stats_->record(opnum_, static_cast<uint32_t>(status_), ns);
    }
    OpTimer(const OpTimer&) = delete;
    OpTimer& operator=(const OpTimer&) = delete;

  private:
    rpc::OpStats* stats_;
    uint32_t opnum_;
    const x4::nfsstat4& status_;
    rpc::latency::Ticks& mark_;
    HeldCounts* held_;
};

bool nowait_op(uint32_t opnum) {
    switch (opnum) {
        case x4::OP_SEQUENCE:
        case x4::OP_PUTFH:
        case x4::OP_PUTROOTFH:
        case x4::OP_GETFH:
        case x4::OP_GETATTR:
        case x4::OP_ACCESS:
        case x4::OP_LOOKUP:
        case x4::OP_READ:
            return true;
        default:
            return false;
    }
}

// Operations that change nothing (§16.2.3.1.1's filehandles aside): a COMPOUND in which only
// SEQUENCE and these ran before the operation a delegation held up may be put off and run
// again whole (Compound::held_up).
bool without_effects(uint32_t opnum) {
    switch (opnum) {
        case x4::OP_PUTFH:
        case x4::OP_PUTROOTFH:
        case x4::OP_PUTPUBFH:
        case x4::OP_GETFH:
        case x4::OP_SAVEFH:
        case x4::OP_RESTOREFH:
        case x4::OP_LOOKUP:
        case x4::OP_LOOKUPP:
        case x4::OP_GETATTR:
        case x4::OP_ACCESS:
        case x4::OP_VERIFY:
        case x4::OP_NVERIFY:
            return true;
        default:
            return false;
    }
}

// Whether the COMPOUND whose operation `i` a delegation held up may be put off: SEQUENCE
// first, nothing with effects between, and every operation run so far held back from the
// counts (HeldCounts, kNowaitOps of them).
bool may_put_off(const Compound& c, size_t i) {
    if (!c.may_defer || !c.held_up || !c.put_off || i == 0 || i >= kNowaitOps ||
        c.opnum_at[0] != x4::OP_SEQUENCE)
        return false;
    for (size_t k = 1; k < i; ++k)
        if (!without_effects(c.opnum_at[k])) return false;
    return true;
}

// Whether a COMPOUND that decodes whole (`s`) is one to try nowait: SEQUENCE first, at most
// kNowaitOps operations, each of nowait_op's.
bool nowait_compound(const Compound& c, const Scan& s, size_t count) {
    if (s.stop != Scan::None || count == 0 || count > kNowaitOps || c.decoded_ops != count)
        return false;
    if (c.opnum_at[0] != x4::OP_SEQUENCE) return false;
    for (size_t i = 0; i < count; ++i)
        if (!nowait_op(c.opnum_at[i])) return false;
    return true;
}

// A nowait COMPOUND's pre-flight: each operation's OpEntry::may_nowait, over its
// arguments where scan() found them whole (`args_at`, offsets in `d`, the decoder just
// past the operation count; nowait_compound() said every operation decoded and there are
// at most kNowaitOps). A COMPOUND that carries read chunks (RPC-over-RDMA: WRITE data,
// never nowait) is not tried: the arguments are reached without reading what lies before.
bool preflight(const OpTable& ops, Compound& c, const xdr::Decoder& d, size_t count,
               const std::array<size_t, kNowaitOps>& args_at) {
    if (d.unconsumed_chunks() != 0) return false;
    bool go = true;
    for (size_t i = 0; i < count && go; ++i) {
        const OpEntry& op = *ops.find(c.opnum_at[i]);
        xdr::Decoder args = d;
        args.skip_to(args_at[i]);
        c.op_index = i;
        if (op.may_nowait) go = op.may_nowait(c, args);
    }
    c.op_index = 0;
    return go;
}

}  // namespace

CompoundOutcome run_compound(const OpTable& ops, Compound& c, xdr::Decoder& args, xdr::Encoder& res,
                             rpc::OpStats* stats, rpc::latency::Ticks* clock) {
    // COMPOUND4args: tag, minorversion, argarray (RFC 5662).
    auto tag = args.get_opaque(static_cast<uint32_t>(kMaxTagBytes));
    uint32_t minorversion = args.get_u32();
    uint32_t count = args.get_u32();
    if (!args.ok()) return CompoundOutcome::Garbage;

    // COMPOUND4res: status, tag, resarray; status and count are patched at the end.
    const size_t start = res.size();
    res.put_u32(x4::NFS4_OK);
    res.put_opaque(tag);
    const size_t count_at = res.size();
    res.put_u32(0);
    if (minorversion != 1) {
        res.patch_u32(start, x4::NFS4ERR_MINOR_VERS_MISMATCH);
        return CompoundOutcome::Done;
    }
    std::array<size_t, kNowaitOps> args_at;
    Scan s = scan(ops, args, count, c, args_at);
    if (s.stop == Scan::Garbage) return CompoundOutcome::Garbage;
    // Nothing has run: a COMPOUND not to try nowait goes to a worker whole.
    if (c.nowait && (!nowait_compound(c, s, count) || !preflight(ops, c, args, count, args_at)))
        return CompoundOutcome::Declined;
    HeldCounts held;
    held.stats = stats;

    c.op_count = count;
    x4::nfsstat4 status = x4::NFS4_OK;
    uint32_t results = 0;
    // Where the next operation's time starts; the caller's clock gets the last reading back.
    rpc::latency::Ticks mark = 0;
    if (stats) mark = clock ? *clock : rpc::latency::now();
    struct GiveBack {
        rpc::latency::Ticks* clock;
        const rpc::latency::Ticks& mark;
        bool on;
        ~GiveBack() {
            if (on && clock) *clock = mark;
        }
    } give_back{clock, mark, stats != nullptr};
    for (size_t i = 0; i < count && status == x4::NFS4_OK; ++i) {
        c.op_index = i;
        ++results;
        if (s.stop == Scan::Illegal && s.at == i) {
            // RFC 8881 §18.52 ILLEGAL: the result carries OP_ILLEGAL, whatever was sent.
            res.put_u32(x4::OP_ILLEGAL);
            status = x4::NFS4ERR_OP_ILLEGAL;
            encode_status_only(res, status);
            break;
        }
        uint32_t opnum = args.get_u32();
        c.opnum = opnum;
        const OpEntry* found = ops.find(opnum);
        if (s.stop == Scan::TooMany && s.at == i && !found) {
            res.put_u32(x4::OP_ILLEGAL);
            status = x4::NFS4ERR_TOO_MANY_OPS;
            encode_status_only(res, status);
            break;
        }
        const OpEntry& op = *found;
        // A COMPOUND that may be given up or put off counts its operations once it stands.
        OpTimer timer(stats, opnum, status, mark, c.nowait || c.may_defer ? &held : nullptr);
        const size_t op_start = res.size();
        res.put_u32(opnum);
        auto fail = [&](x4::nfsstat4 st) {
            res.truncate(op_start + 4);
            op.encode_error(res, st);
            status = st;
        };
        if (s.stop != Scan::None && s.at == i) {
            fail(s.stop == Scan::BadXdr ? x4::NFS4ERR_BADXDR : x4::NFS4ERR_TOO_MANY_OPS);
            break;
        }
        if (i == 0 && opnum != x4::OP_SEQUENCE) {
            if (!sessionless(opnum)) {
                fail(x4::NFS4ERR_OP_NOT_IN_SESSION);
                break;
            }
            if (count > 1) {
                fail(x4::NFS4ERR_NOT_ONLY_OP);
                break;
            }
        }
        if (i > 0 && opnum == x4::OP_SEQUENCE) {
            fail(x4::NFS4ERR_SEQUENCE_POS);
            break;
        }
        if ((op.needs_fh && !c.current_fh) || (op.needs_saved_fh && !c.saved_fh)) {
            fail(x4::NFS4ERR_NOFILEHANDLE);
            break;
        }
        OpResult r = op.run(c, args, res);
        if (c.would_block) {
            // Given up (nowait): what ran is undone, nothing is counted, a worker runs it.
            if (c.on_abandon) c.on_abandon();
            c.on_finish = nullptr;
            held.given_up = true;
            return CompoundOutcome::WouldBlock;
        }
        if (c.replay) {
            // SEQUENCE found a retransmission: the slot's reply, as first sent (§2.10.6.2).
            res.truncate(start);
            const std::vector<uint8_t>& cached = *c.replay;
            size_t at = 0;
            for (const auto& p : c.replay_payloads) {
                res.put_fixed(cached.data() + at, p.offset - at);  // XDR-aligned: no pad
                res.add_external(p.data);
                res.put_opaque(p.data);
                at = p.offset + 4 + p.data.size() + xdr::pad4(p.data.size());
            }
            res.put_fixed(cached.data() + at, cached.size() - at);
            return CompoundOutcome::Done;
        }
        if (!r.decoded) {
            fail(x4::NFS4ERR_BADXDR);
            break;
        }
        if (r.status == x4::NFS4ERR_DELAY && may_put_off(c, i) && c.put_off()) {
            // Put off: the slot as it was, nothing counted; the transport runs it again.
            if (c.on_abandon) c.on_abandon();
            c.on_finish = nullptr;
            held.given_up = true;
            return CompoundOutcome::Later;
        }
        status = r.status;
        // RFC 8881 §2.10.6.4: a reply larger than the session allows is an error
        // for the operation that made it so; the results before it stand.
        size_t size = reply_bytes(res, start);
        if (size > (c.max_response ? c.max_response : kDefaultMaxResponse))
            fail(x4::NFS4ERR_REP_TOO_BIG);
        else if (c.max_cached && size > *c.max_cached)
            fail(x4::NFS4ERR_REP_TOO_BIG_TO_CACHE);
    }
    res.patch_u32(start, static_cast<uint32_t>(status));
    res.patch_u32(count_at, results);
    if (c.on_finish) {
        const bool payloads = !res.externals().empty() && res.externals().back().offset >= start;
        if (c.max_cached && payloads)
            c.on_finish(whole_reply(res, start));
        else
            c.on_finish(res.written().subspan(start));
    }
    return CompoundOutcome::Done;
}

}  // namespace nfsrdmad::nfs::v4
