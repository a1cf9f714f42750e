// `nfsrdmad import-exports /etc/exports`: an exports(5) file turned into the `exports:`
// section of nfsrdmad.yaml. Options nfsrdmad always follows (sync, no_subtree_check ...)
// disappear; options it refuses (async, crossmnt ...) are dropped with a warning that
// says why (export_options.h); lines it cannot read are errors, and then no YAML is made.
// Pure: text in, text out; the YAML it makes loads back through load_string.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"

namespace nfsrdmad::config {

struct ImportResult {
    std::string yaml;             // empty when there are errors
    std::vector<Error> errors;    // FILE:LINE: what cannot be read
    std::vector<Error> warnings;  // FILE:LINE: what was dropped, and why
};

ImportResult import_exports(std::string_view text, const std::string& file);

}  // namespace nfsrdmad::config
