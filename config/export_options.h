// Every option word of exports(5) (nfs-utils) and what nfsrdmad does with it: served,
// accepted because it is what nfsrdmad always does, or refused with the reason. One
// table for --export, `nfsrdmad import-exports` and the README's table (a unit test
// checks the README lists every word).
#pragma once

#include <span>
#include <string_view>

namespace nfsrdmad::config {

enum class OptionSupport {
    Implemented,  // changes what the export does (rw, root_squash, fsid=N, ...)
    Default,      // nfsrdmad always behaves so: accepted, nothing to change (sync)
    Refused,      // not served; `note` says why and what to do instead
};

struct ExportOptionInfo {
    std::string_view word;  // as in exports(5), without "=value"
    OptionSupport support;
    std::string_view note;  // one sentence: how it maps, or why it is refused
};

std::span<const ExportOptionInfo> export_option_table();
// nullptr: not an exports(5) word at all.
const ExportOptionInfo* find_export_option(std::string_view word);

}  // namespace nfsrdmad::config
