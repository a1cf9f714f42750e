// libFuzzer target: the NFSv4.1 COMPOUND4args decoder generated from RFC 5662's
// nfs4_prot.x (every nfs_argop4 arm, open_claim4, createhow4, bitmaps, bounded arrays
// and opaques). Whatever decodes must re-encode, and the re-encoding must decode to a
// value that encodes to the same bytes again (RFC 4506: one encoding per value). And
// xdr_skip, with which the COMPOUND engine finds the operations before any runs, accepts
// exactly the operations xdr_decode accepts and ends each where xdr_decode ends it.
#include <cstdint>
#include <cstdlib>
#include <type_traits>
#include <vector>

#include "xdr/nfs4_prot.h"

using namespace nfsrdmad;

namespace {

void skip_agrees_with_decode(const uint8_t* data, size_t size) {
    xdr::Decoder head({data, size});
    head.get_opaque(xdr::kUnbounded);  // tag
    head.get_u32();                    // minorversion
    const uint32_t count = head.get_u32();
    xdr::Decoder skipped = head, decoded = head;
    for (uint32_t i = 0; head.ok() && i < count; ++i) {
        const bool s = xdr::nfs4::xdr_skip(skipped, std::type_identity<xdr::nfs4::nfs_argop4>{});
        xdr::nfs4::nfs_argop4 op;
        const bool d = xdr::nfs4::xdr_decode(decoded, op);
        if (s != d) abort();
        if (!d) break;
        if (skipped.offset() != decoded.offset()) abort();
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    skip_agrees_with_decode(data, size);
    xdr::nfs4::COMPOUND4args args;
    xdr::Decoder d({data, size});
    if (!xdr::nfs4::xdr_decode(d, args)) return 0;
    // An operation's arm is the one its number selects: reading it must not throw.
    for (const auto& op : args.argarray)
        if (op.argop() == xdr::nfs4::OP_SEQUENCE) (void)op.opsequence().sa_slotid;
    std::vector<uint8_t> once, twice;
    {
        xdr::Encoder e(once);
        xdr::nfs4::xdr_encode(e, args);
    }
    if (once.size() != d.offset()) abort();  // the encoding is exactly what was consumed
    xdr::nfs4::COMPOUND4args again;
    xdr::Decoder d2(once);
    if (!xdr::nfs4::xdr_decode(d2, again) || d2.remaining() != 0) abort();
    xdr::Encoder e2(twice);
    xdr::nfs4::xdr_encode(e2, again);
    if (once != twice) abort();
    return 0;
}
