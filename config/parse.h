// String-level parsers shared by the YAML loader and the command-line overrides.
// Each returns nullopt on failure and, if `why` is non-null, stores a reason there.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "config/config.h"

namespace nfsrdmad::config {

// "*", "10.0.0.0/8", "10.0.0.0/255.0.0.0", "192.168.1.5", "fe80::/10", "::1",
// "host.example.com", "*.lab.example.com". Rejects host bits set below the prefix.
std::optional<ClientMatch> parse_client_match(std::string_view text, std::string* why);

// "ADDR:PORT" with IPv6 in brackets: "0.0.0.0:2049", "[::1]:2049".
std::optional<TcpListener> parse_listener(std::string_view text, std::string* why);

// An IPv4 or IPv6 literal (no brackets), returned in canonical form.
std::optional<std::string> canonical_ip(std::string_view text, std::string* why);

// Absolute path; collapses "//" and drops a trailing '/'; rejects "." and "..".
std::optional<std::string> normalize_export_path(std::string_view text, std::string* why);

// Decimal integer in [lo, hi]; no sign, no spaces.
std::optional<uint64_t> parse_uint(std::string_view text, uint64_t lo, uint64_t hi,
                                   std::string* why);

std::optional<Access> parse_access(std::string_view text);  // ro | rw
std::optional<Squash> parse_squash(std::string_view text);  // none | root | all
std::optional<SecFlavor> parse_sec(std::string_view text);  // none | sys | krb5 | krb5i | krb5p
bool is_log_level(std::string_view text);

// Accepted words, for error messages.
inline constexpr std::string_view kSecWords = "none, sys, krb5, krb5i, krb5p";
inline constexpr std::string_view kLogLevelWords = "trace, debug, info, warn, error, critical, off";

std::string_view to_string(Access a);
std::string_view to_string(Squash s);
std::string_view to_string(SecFlavor f);
std::string to_string(const TcpListener& l);  // "0.0.0.0:2049", "[::1]:2049"

}  // namespace nfsrdmad::config
