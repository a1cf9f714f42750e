#include "nfs/nlm/request.h"

#include <sys/stat.h>

#include "xdr/rpc_prot.h"

namespace nfsrdmad::nfs::nlm {

x::nlm4_stats Request::file(std::span<const uint8_t> fh, File& out) {
    auto ref = table->find_by_handle(fh);
    if (!ref) return x::NLM4_STALE_FH;
    ctx.report.export_slot = ref->exp->spec().stats_slot;  // counted under it
    Caller who;
    switch (authorize(*ref->exp, ctx.header, who)) {
        case Verdict::Ok:
            break;
        case Verdict::WeakAuth:
            rejected_ = rpc::Outcome::auth(xdr::rpc::AUTH_TOOWEAK);
            return x::NLM4_FAILED;
        case Verdict::NotAllowed:
        case Verdict::InsecurePort:
            return x::NLM4_FAILED;
    }
    auto node = vfs::ExportTable::open(*ref);
    if (!node) return node.error() == ESTALE ? x::NLM4_STALE_FH : x::NLM4_FAILED;
    struct stat st {};
    if (::fstat(node->fd.get(), &st) != 0) return x::NLM4_FAILED;
    if (!S_ISREG(st.st_mode)) return x::NLM4_FAILED;  // only files have locks
    out.key = vs::FileKey::of(ref->decoded);
    out.node = std::move(*node);
    return x::NLM4_GRANTED;
}

std::optional<uint64_t> Request::host(std::string_view caller_name) {
    auto id = svc.host_id(caller_name, ctx.header.peer ? peer_host(*ctx.header.peer) : "");
    if (id) pinned_.push_back(*id);
    return id;
}

x::nlm4_stats Request::owner(const x::nlm4_lock& l, vs::StateOwner& out, bool known_host) {
    std::optional<uint64_t> id;
    if (known_host) {
        id = svc.hosts.find(l.caller_name, ctx.header.peer ? peer_host(*ctx.header.peer) : "")
                 .value_or(0);
    } else {
        id = host(l.caller_name);
        if (!id) return x::NLM4_DENIED_NOLOCKS;
    }
    auto o = vs::StateOwner::nlm(*id, static_cast<uint32_t>(l.svid), l.oh);
    if (!o) return x::NLM4_FAILED;  // cannot happen: oh is at most MAXNETOBJ_SZ
    out = std::move(*o);
    return x::NLM4_GRANTED;
}

x::nlm4_holder holder_of(const vs::Conflict& c) {
    x::nlm4_holder h;
    h.exclusive = c.lock.type == vs::LockType::Write;
    h.l_offset = c.lock.range.first;
    h.l_len = c.lock.range.nlm_length();
    if (c.owner && c.owner->client().protocol == vs::Protocol::Nlm) {
        const std::string& b = c.owner->bytes();
        if (b.size() >= 4) {
            const auto* p = reinterpret_cast<const uint8_t*>(b.data());
            h.svid = static_cast<int32_t>(uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 |
                                          uint32_t(p[2]) << 8 | p[3]);
            h.oh = std::span<const uint8_t>(p + 4, b.size() - 4);
        }
    }
    return h;
}

bool within_offsets(const x::nlm4_lock& l) {
    constexpr uint64_t kMax = INT64_MAX;  // the largest file offset (off_t)
    return l.l_offset <= kMax && (l.l_len == 0 || l.l_len - 1 <= kMax - l.l_offset);
}

vs::Lock lock_of(const x::nlm4_lock& l, bool exclusive) {
    return vs::Lock{vs::ByteRange::from_nlm(l.l_offset, l.l_len),
                    exclusive ? vs::LockType::Write : vs::LockType::Read};
}

x::nlm4_stats stat_of_errno(int err) {
    return err == ENOLCK ? x::NLM4_DENIED_NOLOCKS : x::NLM4_FAILED;
}

}  // namespace nfsrdmad::nfs::nlm
