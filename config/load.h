// Loads and validates the YAML configuration. Pure: checks syntax and values only,
// never the filesystem (except reading the file itself) or the network.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"

namespace nfsrdmad::config {

struct LoadResult {
    std::optional<Config> config;  // nullopt if there is any error
    std::vector<Error> errors;     // all problems found, in document order per section
};

// An unreadable file gives one Error with line 0.
LoadResult load_file(const std::string& path);

// `name_for_errors` is used as Error::file.
LoadResult load_string(std::string_view yaml, const std::string& name_for_errors);

}  // namespace nfsrdmad::config
