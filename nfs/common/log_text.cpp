#include "nfs/common/log_text.h"

namespace nfsrdmad::nfs {

std::string log_text(std::string_view s, size_t max) {
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out;
    out.reserve(std::min(s.size(), max) + 8);
    for (size_t i = 0; i < s.size() && i < max; ++i) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (c >= 0x20 && c < 0x7f && c != '\\') {
            out += static_cast<char>(c);
        } else {
            out += "\\x";
            out += kHex[c >> 4];
            out += kHex[c & 15];
        }
    }
    if (s.size() > max) out += "...";
    return out;
}

}  // namespace nfsrdmad::nfs
