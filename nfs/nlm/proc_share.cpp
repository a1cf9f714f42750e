// NLMPROC4_SHARE and NLMPROC4_UNSHARE (XNFS NLM v4): DOS-style share reservations,
// fsh4_access / fsh4_mode, in the share table (share_table.h). The owner is the host
// and the oh. NLM4_DENIED on a conflict, with another host's share or with an NFSv4.1
// open's share reservation (and NFSv4.1's OPEN is denied by NLM shares: the daemon wires
// both ways), NLM4_DENIED_GRACE_PERIOD for a new share during grace.
#include "nfs/nlm/request.h"

namespace nfsrdmad::nfs::nlm {

namespace {

struct Share {
    File file;
    vs::StateOwner owner;
};

x::nlm4_stats share_of(Request& rq, const x::nlm4_share& s, Share& out) {
    if (auto st = rq.file(s.fh, out.file); st != x::NLM4_GRANTED) return st;
    auto host = rq.host(s.caller_name);
    if (!host) return x::NLM4_DENIED_NOLOCKS;
    auto o = vs::StateOwner::nlm(*host, 0, s.oh);
    if (!o) return x::NLM4_FAILED;
    out.owner = std::move(*o);
    return x::NLM4_GRANTED;
}

}  // namespace

rpc::Outcome proc_share(Request& rq) {
    x::nlm4_shareargs a;
    if (!rq.decode(a)) return rpc::Outcome::garbage();
    x::nlm4_shareres res;
    res.cookie = a.cookie;
    res.sequence = 0;
    auto answer = [&](x::nlm4_stats s) {
        res.stat = s;
        return rq.reply(res);
    };
    if (rq.svc.in_grace() && !a.reclaim) return answer(x::NLM4_DENIED_GRACE_PERIOD);
    Share sh;
    if (auto st = share_of(rq, a.share, sh); st != x::NLM4_GRANTED) return answer(st);
    // A holder of an NFSv4.1 delegation opens the file without asking: recalled first.
    if (rq.delegated(sh.file, a.share.mode != 0 || (a.share.access & 2)))
        return rq.held_up(answer(x::NLM4_DENIED_GRACE_PERIOD));
    vs::ShareBits want{static_cast<uint8_t>(a.share.access), static_cast<uint8_t>(a.share.mode)};
    // NFSv4.1's opens of the file reserve shares too (one model, RFC 8881 §9.7): what this
    // host already holds here is its own and adds to what it asks.
    std::unique_lock<std::mutex> admission;
    if (rq.svc.options.share_admission)
        admission = rq.svc.options.share_admission(sh.file.node.handle);
    if (rq.svc.options.foreign_shares && want.access <= vs::kShareBoth &&
        want.deny <= vs::kShareBoth) {
        vs::ShareBits all = want;
        if (auto held = rq.svc.shares.held(sh.file.key, sh.owner)) {
            all.access |= held->access;
            all.deny |= held->deny;
        }
        if (rq.svc.options.foreign_shares(sh.file.node.handle, all.access, all.deny))
            return answer(x::NLM4_DENIED);
    }
    auto r = rq.svc.shares.open(sh.file.key, sh.owner, want);
    if (!r) return answer(stat_of_errno(r.error()));
    return answer(r->denied ? x::NLM4_DENIED : x::NLM4_GRANTED);
}

rpc::Outcome proc_unshare(Request& rq) {
    x::nlm4_shareargs a;
    if (!rq.decode(a)) return rpc::Outcome::garbage();
    x::nlm4_shareres res;
    res.cookie = a.cookie;
    res.sequence = 0;
    auto answer = [&](x::nlm4_stats s) {
        res.stat = s;
        return rq.reply(res);
    };
    if (rq.svc.in_grace()) return answer(x::NLM4_DENIED_GRACE_PERIOD);
    Share sh;
    if (auto st = share_of(rq, a.share, sh); st != x::NLM4_GRANTED) return answer(st);
    (void)rq.svc.shares.close(sh.file.key, sh.owner);
    return answer(x::NLM4_GRANTED);
}

}  // namespace nfsrdmad::nfs::nlm
