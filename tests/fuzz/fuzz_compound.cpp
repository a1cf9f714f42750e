// libFuzzer target: the NFSv4.1 COMPOUND engine (nfs/v4/compound.h) on hostile
// COMPOUND4args, with stand-in operations (SEQUENCE that sets a reply limit and may
// replay, PUTROOTFH, GETFH, READ of any size) and the NOTSUPP ones. Whatever the input:
// GARBAGE_ARGS, or a reply that decodes whole as COMPOUND4res, with no more results
// than operations sent (all of them when it succeeded), and within the reply limit
// when it succeeded.
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "nfs/v4/compound.h"
#include "nfs/v4/op_table.h"

using namespace nfsrdmad;
using namespace nfsrdmad::nfs::v4;

namespace {

const std::vector<uint8_t> kReplay = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};

OpResult sequence(Compound& c, xdr::Decoder& args, xdr::Encoder& res) {
    x4::SEQUENCE4args a;
    if (!x4::xdr_decode(args, a)) return OpResult::bad_xdr();
    if (a.sa_slotid == 7) {
        c.replay = kReplay;
        return {};
    }
    c.max_response = 64 + (a.sa_sequenceid & 0xffff);
    if (a.sa_cachethis) c.max_cached = 64 + (a.sa_highest_slotid & 0xfff);
    x4::SEQUENCE4res r(x4::NFS4_OK);
    x4::xdr_encode(res, r);
    return {};
}

OpResult putrootfh(Compound& c, xdr::Decoder&, xdr::Encoder& res) {
    const uint8_t bytes[] = {9, 9};
    c.current_fh = *WireHandle::from(bytes);
    encode_status_only(res, x4::NFS4_OK);
    return {};
}

OpResult getfh(Compound& c, xdr::Decoder&, xdr::Encoder& res) {
    x4::GETFH4res r(x4::NFS4_OK);
    r.resok4().object = c.current_fh->data();
    x4::xdr_encode(res, r);
    return {};
}

OpResult read(Compound&, xdr::Decoder& args, xdr::Encoder& res) {
    x4::READ4args a;
    if (!x4::xdr_decode(args, a)) return OpResult::bad_xdr();
    std::vector<uint8_t> data(a.count % 4096, 0x5a);
    x4::READ4res r(x4::NFS4_OK);
    r.resok4().data = data;
    x4::xdr_encode(res, r);
    return {};
}

const OpTable& table() {
    static const OpTable t = [] {
        OpTable t;
        install_not_supported(t);
        t.set(x4::OP_SEQUENCE, {"SEQUENCE", sequence, encode_status_only});
        t.set(x4::OP_PUTROOTFH, {"PUTROOTFH", putrootfh, encode_status_only});
        t.set(x4::OP_GETFH, {"GETFH", getfh, encode_status_only, true});
        t.set(x4::OP_READ, {"READ", read, encode_status_only, true});
        return t;
    }();
    return t;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    xdr::Decoder args({data, size});
    std::vector<uint8_t> reply;
    xdr::Encoder res(reply);
    Compound c;
    if (run_compound(table(), c, args, res) == CompoundOutcome::Garbage) return 0;
    if (c.replay) {
        if (reply != kReplay) abort();
        return 0;
    }
    x4::COMPOUND4res r;
    xdr::Decoder d(reply);
    if (!x4::xdr_decode(d, r) || d.remaining() != 0) abort();
    // The operation count is the third word after the tag in the call.
    xdr::Decoder head({data, size});
    head.get_opaque(xdr::kUnbounded);
    head.get_u32();
    uint32_t sent = head.get_u32();
    if (r.resarray.size() > sent) abort();
    if (r.status == x4::NFS4_OK && r.resarray.size() != sent) abort();
    // Past the limit only with a failed last result (REP_TOO_BIG in place of one too big;
    // OP_ILLEGAL, BADXDR... cost their few bytes whatever the limit; so does the tag).
    if (c.max_response && reply.size() > c.max_response && r.status == x4::NFS4_OK) abort();
    return 0;
}
