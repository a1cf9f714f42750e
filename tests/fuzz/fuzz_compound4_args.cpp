// libFuzzer target: the NFSv4.1 COMPOUND4args decoder generated from RFC 5662's
// nfs4_prot.x (every nfs_argop4 arm, open_claim4, createhow4, bitmaps, bounded arrays
// and opaques). Whatever decodes must re-encode, and the re-encoding must decode to a
// value that encodes to the same bytes again (RFC 4506: one encoding per value).
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "xdr/nfs4_prot.h"

using namespace nfsrdmad;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
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
