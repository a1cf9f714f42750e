// libFuzzer target: every generated XDR decoder of a procedure (RFC 1813 NFSv3 and
// MOUNT, XNFS NLM v4, from xdrgen's proc_codecs() tables), arguments and results. The first input
// byte picks the procedure and direction; the rest is its XDR body. Whatever decodes
// must re-encode, and the re-encoding must decode to the same bytes again (RFC 4506:
// one canonical encoding per value).
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "xdr/mount_prot.h"
#include "xdr/nfs3_prot.h"
#include "xdr/nlm_prot.h"

using namespace nfsrdmad;

namespace {

using Codec = bool (*)(std::span<const uint8_t>, std::vector<uint8_t>&);

std::vector<Codec> all_codecs() {
    std::vector<Codec> v;
    for (auto table :
         {xdr::nfs3::proc_codecs(), xdr::mount::proc_codecs(), xdr::nlm::proc_codecs()})
        for (const auto& pc : table) {
            if (pc.args) v.push_back(pc.args);
            if (pc.res) v.push_back(pc.res);
        }
    return v;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static const std::vector<Codec> codecs = all_codecs();
    if (size < 1) return 0;
    Codec codec = codecs[data[0] % codecs.size()];
    std::vector<uint8_t> once, twice;
    if (!codec({data + 1, size - 1}, once)) return 0;
    if (!codec(once, twice)) abort();
    if (once != twice) abort();
    return 0;
}
