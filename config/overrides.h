// Quick-start command-line overrides, applied on top of a loaded (or default) Config.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"

namespace nfsrdmad::config {

struct Overrides {
    // Each "PATH" or "PATH=OPTS"; OPTS is exports(5)-style, comma separated:
    //   rw | ro, root_squash | no_root_squash | all_squash, anonuid=N, anongid=N,
    //   sec=FLAVOR[:FLAVOR...], fsid=N, clients=SPEC (one client match).
    // Bare PATH means rw, root_squash, clients "*". Appended to cfg.exports.
    std::vector<std::string> exports;
    std::optional<std::string> tcp;  // "ADDR:PORT" or "[V6]:PORT"; replaces cfg.tcp
    std::optional<std::string> rdma;  // likewise for cfg.rdma; "off" turns RDMA off
    std::optional<std::string> metrics;  // likewise for cfg.metrics; "off" turns it off
    std::optional<uint16_t> mount_port;
    std::optional<std::string> state_dir;
    std::optional<std::string> log_level;
};

inline constexpr const char* kOverridesFile = "command line";  // Error::file for overrides

// Applies `o` onto `cfg` and re-checks cross-field rules (duplicate export paths and
// fsids, mount_port clashing with a TCP listener). Returns all errors found (line 0);
// on error `cfg` is left unchanged.
std::vector<Error> apply_overrides(Config& cfg, const Overrides& o);

// Applies one option of an export's own words ("rw", "anonuid" with value "65534", ...:
// the Implemented ones of export_options.h, and "clients") to `exp` and `rule`.
bool apply_export_option(std::string_view name, std::string_view value, Export& exp,
                         ClientRule& rule, std::string* why);

// exports(5) words, comma separated ("rw,no_root_squash,sec=krb5:krb5i"), onto `exp` and
// `rule`, as --export and the YAML key `options` read them: the default-behaviour words
// pass, refused words fail with the reason, two words of one setting conflict. `settings`
// (if given) receives the setting each word set: access, squash, secure, mp, anonuid,
// anongid, sec, fsid or clients.
bool apply_export_options(std::string_view opts, Export& exp, ClientRule& rule, std::string* why,
                          std::vector<std::string>* settings = nullptr);

// One --export argument on its own.
std::optional<Export> parse_export_option(std::string_view arg, std::string* why);

}  // namespace nfsrdmad::config
