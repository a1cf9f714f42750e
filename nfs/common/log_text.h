// Client-supplied text (paths, names) made safe to log: a client must not be able to
// forge log lines or flood the log through the strings it sends.
#pragma once

#include <string>
#include <string_view>

namespace nfsrdmad::nfs {

// `s` with every byte outside printable ASCII (and the backslash) written as \xNN, cut
// to `max` input bytes with "..." after.
std::string log_text(std::string_view s, size_t max = 256);

}  // namespace nfsrdmad::nfs
