// Unit tests for config/: YAML loading, validation errors, command-line overrides.
#include <arpa/inet.h>
#include <sys/socket.h>

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "config/load.h"
#include "config/overrides.h"
#include "config/parse.h"

#ifndef NFSRDMAD_SOURCE_DIR
#define NFSRDMAD_SOURCE_DIR "."
#endif

namespace nfsrdmad::config {
namespace {

LoadResult load(std::string_view yaml) {
    return load_string(yaml, "t.yaml");
}

std::vector<std::string> messages(const std::vector<Error>& errors) {
    std::vector<std::string> out;
    for (const auto& e : errors) out.push_back(e.str());
    return out;
}

// Loads `yaml` expecting exactly one error; returns it as "FILE:LINE:COL: message".
std::string one_error(std::string_view yaml) {
    auto r = load(yaml);
    EXPECT_FALSE(r.config.has_value());
    EXPECT_EQ(r.errors.size(), 1u) << ::testing::PrintToString(messages(r.errors));
    return r.errors.empty() ? "" : r.errors[0].str();
}

// Loads `yaml` expecting success.
Config good(std::string_view yaml) {
    auto r = load(yaml);
    EXPECT_TRUE(r.errors.empty()) << ::testing::PrintToString(messages(r.errors));
    if (r.config) return std::move(*r.config);
    return {};
}

std::array<uint8_t, 16> ip(int family, const char* text) {
    std::array<uint8_t, 16> a{};
    EXPECT_EQ(inet_pton(family, text, a.data()), 1);
    return a;
}

void expect_listener(const TcpListener& l, const std::string& addr, uint16_t port) {
    EXPECT_EQ(l.address, addr);
    EXPECT_EQ(l.port, port);
}

using Sec = std::vector<SecFlavor>;
using Kind = ClientMatch::Kind;

// ---- example files ---------------------------------------------------------------

TEST(ConfigExample, FullExampleParses) {
    auto r = load_file(NFSRDMAD_SOURCE_DIR "/config/examples/nfsrdmad.yaml");
    ASSERT_TRUE(r.errors.empty()) << ::testing::PrintToString(messages(r.errors));
    ASSERT_TRUE(r.config);
    const Config& c = *r.config;

    ASSERT_EQ(c.tcp.size(), 3u);
    expect_listener(c.tcp[0], "0.0.0.0", 2049);
    expect_listener(c.tcp[1], "::", 2049);
    expect_listener(c.tcp[2], "127.0.0.1", 12049);
    EXPECT_EQ(c.mount_port, 20048);
    ASSERT_TRUE(c.metrics);
    expect_listener(*c.metrics, "127.0.0.1", 9420);
    EXPECT_EQ(c.max_record_size, 1114112u);
    EXPECT_EQ(c.engine_threads, 0u);
    EXPECT_EQ(c.workers, 16u);
    EXPECT_EQ(c.log_level, "info");
    EXPECT_EQ(c.state_dir, "/var/lib/nfsrdmad");
    ASSERT_EQ(c.rdma.size(), 1u);
    expect_listener(c.rdma[0], "0.0.0.0", 20049);
    EXPECT_EQ(c.engine_mode, EngineMode::Adaptive);
    EXPECT_EQ(c.spin_us, 50u);
    EXPECT_EQ(c.fd_cache, 0u);
    EXPECT_EQ(c.rdma_tuning.credits, 128u);
    EXPECT_EQ(c.rdma_tuning.inline_size, 4096u);
    EXPECT_EQ(c.rdma_tuning.max_payload_buffers, 256u);
    EXPECT_EQ(c.rdma_tuning.max_read_bytes, 0u) << "0: the payload pool's bytes";
    EXPECT_FALSE(c.rdma_tuning.huge_pages);
    EXPECT_EQ(c.rdma_tuning.send_timeout, 60u);

    ASSERT_EQ(c.exports.size(), 2u);
    const Export& data = c.exports[0];
    EXPECT_EQ(data.path, "/srv/data");
    EXPECT_EQ(data.fsid, 1u);
    ASSERT_EQ(data.clients.size(), 4u);

    const ClientRule& host7 = data.clients[0];  // mapping overriding access and squash
    EXPECT_EQ(host7.match.kind, Kind::Cidr);
    EXPECT_EQ(host7.match.family, AF_INET);
    EXPECT_EQ(host7.match.addr, ip(AF_INET, "192.168.1.7"));
    EXPECT_EQ(host7.match.prefix, 32);
    EXPECT_EQ(host7.match.text, "192.168.1.7");
    EXPECT_EQ(host7.access, Access::ReadOnly);
    EXPECT_EQ(host7.squash, Squash::None);
    EXPECT_EQ(host7.anonuid, 65534u);
    EXPECT_EQ(host7.sec, Sec{SecFlavor::Sys});

    const ClientRule& net10 = data.clients[1];  // plain string: export defaults
    EXPECT_EQ(net10.match.kind, Kind::Cidr);
    EXPECT_EQ(net10.match.addr, ip(AF_INET, "10.0.0.0"));
    EXPECT_EQ(net10.match.prefix, 8);
    EXPECT_EQ(net10.access, Access::ReadWrite);
    EXPECT_EQ(net10.squash, Squash::Root);
    EXPECT_EQ(net10.anongid, 65534u);
    EXPECT_EQ(net10.sec, Sec{SecFlavor::Sys});

    const ClientRule& lab = data.clients[2];
    EXPECT_EQ(lab.match.kind, Kind::Hostname);
    EXPECT_EQ(lab.match.hostname, "*.lab.example.com");
    EXPECT_EQ(lab.access, Access::ReadWrite);

    const ClientRule& v6 = data.clients[3];
    EXPECT_EQ(v6.match.kind, Kind::Cidr);
    EXPECT_EQ(v6.match.family, AF_INET6);
    EXPECT_EQ(v6.match.addr, ip(AF_INET6, "fe80::"));
    EXPECT_EQ(v6.match.prefix, 10);
    EXPECT_EQ(v6.sec, (Sec{SecFlavor::Krb5p, SecFlavor::Krb5i}));
    EXPECT_EQ(v6.access, Access::ReadWrite);

    const Export& pub = c.exports[1];
    EXPECT_EQ(pub.path, "/srv/public");
    EXPECT_EQ(pub.fsid, 2u);
    ASSERT_EQ(pub.clients.size(), 1u);
    EXPECT_EQ(pub.clients[0].match.kind, Kind::Any);
    EXPECT_EQ(pub.clients[0].match.text, "*");
    EXPECT_EQ(pub.clients[0].access, Access::ReadOnly);
    EXPECT_EQ(pub.clients[0].squash, Squash::Root);
}

TEST(ConfigExample, DevConfigParses) {
    auto r = load_file(NFSRDMAD_SOURCE_DIR "/config/examples/dev.yaml");
    ASSERT_TRUE(r.errors.empty()) << ::testing::PrintToString(messages(r.errors));
    ASSERT_TRUE(r.config);
    ASSERT_EQ(r.config->tcp.size(), 1u);
    expect_listener(r.config->tcp[0], "0.0.0.0", 2049);
    EXPECT_EQ(r.config->mount_port, 20048);
    EXPECT_EQ(r.config->state_dir, "./run/state");
    EXPECT_TRUE(r.config->exports.empty());
}

TEST(ConfigExample, UnreadableFileHasNoPosition) {
    auto r = load_file("/nonexistent/nfsrdmad.yaml");
    EXPECT_FALSE(r.config);
    ASSERT_EQ(r.errors.size(), 1u);
    EXPECT_EQ(r.errors[0].line, 0);
    EXPECT_EQ(r.errors[0].file, "/nonexistent/nfsrdmad.yaml");
    EXPECT_EQ(r.errors[0].str(),
              "/nonexistent/nfsrdmad.yaml: cannot read file: No such file or directory");

    auto dir = load_file(NFSRDMAD_SOURCE_DIR "/config");
    ASSERT_EQ(dir.errors.size(), 1u);
    EXPECT_EQ(dir.errors[0].message, "cannot read file: is a directory");
}

// ---- defaults -------------------------------------------------------------------

TEST(ConfigDefaults, EmptyDocumentGivesDefaults) {
    for (std::string_view yaml : {"", "# only a comment\n", "{}\n"}) {
        Config c = good(yaml);
        ASSERT_EQ(c.tcp.size(), 1u);
        expect_listener(c.tcp[0], "0.0.0.0", 2049);
        EXPECT_EQ(c.mount_port, 20048);
        EXPECT_EQ(c.engine_threads, 0u);
        EXPECT_EQ(c.workers, 16u);
        EXPECT_EQ(c.log_level, "info");
        EXPECT_EQ(c.state_dir, "/var/lib/nfsrdmad");
        EXPECT_EQ(c.max_record_size, 1114112u);
        EXPECT_TRUE(c.exports.empty());
    }
}

TEST(ConfigDefaults, EmptySectionsAreAllowed) {
    Config c = good("listeners:\nengine:\nlogging:\nexports:\n");
    EXPECT_EQ(c.tcp.size(), 1u);
    EXPECT_EQ(c.workers, 16u);
    EXPECT_TRUE(c.exports.empty());
}

TEST(ConfigValues, ReactorCalls) {
    EXPECT_TRUE(good("engine:\n  workers: 4\n").reactor_calls);  // on by default
    EXPECT_FALSE(good("engine:\n  reactor_calls: false\n").reactor_calls);
    EXPECT_EQ(one_error("engine:\n  reactor_calls: 3\n").find("t.yaml:2:18: "), 0u);
    config::Config running, next;
    next.reactor_calls = false;
    EXPECT_EQ(restart_only_changes(running, next), std::vector<std::string>{"engine"});
}

TEST(ConfigValues, FdCacheOverride) {
    EXPECT_EQ(good("engine:\n  fd_cache: 5000\n").fd_cache, 5000u);
    EXPECT_EQ(good("engine:\n  workers: 4\n").fd_cache, 0u);  // 0: sized from the limit
    EXPECT_EQ(one_error("engine:\n  fd_cache: 2000000\n").find("t.yaml:2:13: "), 0u);
}

TEST(ConfigDefaults, ExportDefaultsLikeExports5) {
    Config c = good("exports:\n  - path: /srv\n");
    ASSERT_EQ(c.exports.size(), 1u);
    EXPECT_FALSE(c.exports[0].fsid);
    ASSERT_EQ(c.exports[0].clients.size(), 1u);
    const ClientRule& r = c.exports[0].clients[0];
    EXPECT_EQ(r.match.kind, Kind::Any);
    EXPECT_EQ(r.access, Access::ReadOnly);
    EXPECT_EQ(r.squash, Squash::Root);
    EXPECT_EQ(r.anonuid, 65534u);
    EXPECT_EQ(r.anongid, 65534u);
    EXPECT_EQ(r.sec, Sec{SecFlavor::Sys});
    EXPECT_TRUE(r.secure) << "exports(5): secure is the default";
}

TEST(ConfigDefaults, SecureAndInsecureInYaml) {
    Config c = good(
        "exports:\n"
        "  - path: /srv\n"
        "    secure: false\n"
        "    clients:\n"
        "      - 10.0.0.0/8\n"
        "      - {match: 192.168.0.0/16, secure: true}\n"
        "  - path: /data\n");
    ASSERT_EQ(c.exports.size(), 2u);
    EXPECT_FALSE(c.exports[0].clients.at(0).secure) << "inherits the export's secure: false";
    EXPECT_TRUE(c.exports[0].clients.at(1).secure);
    EXPECT_TRUE(c.exports[1].clients.at(0).secure);
}

TEST(ConfigDefaults, ClientMappingOverridesOnlyWhatItSays) {
    Config c = good(
        "exports:\n"
        "  - path: /srv\n"
        "    access: rw\n"
        "    anonuid: 1000\n"
        "    clients:\n"
        "      - match: 10.1.0.0/16\n"
        "        squash: all\n"
        "        anongid: 7\n"
        "        sec: [none, sys]\n");
    const ClientRule& r = c.exports.at(0).clients.at(0);
    EXPECT_EQ(r.access, Access::ReadWrite);
    EXPECT_EQ(r.squash, Squash::All);
    EXPECT_EQ(r.anonuid, 1000u);
    EXPECT_EQ(r.anongid, 7u);
    EXPECT_EQ(r.sec, (Sec{SecFlavor::None, SecFlavor::Sys}));
}

TEST(ConfigDefaults, ExportKeysAfterClientsStillApply) {
    Config c = good(
        "exports:\n"
        "  - clients: [10.0.0.1]\n"
        "    access: rw\n"
        "    path: /srv\n");
    EXPECT_EQ(c.exports.at(0).clients.at(0).access, Access::ReadWrite);
}

TEST(ConfigDefaults, ExportPathIsNormalised) {
    Config c = good("exports:\n  - path: //srv//data/\n  - path: /\n");
    EXPECT_EQ(c.exports.at(0).path, "/srv/data");
    EXPECT_EQ(c.exports.at(1).path, "/");
}

// ---- validation errors, with exact positions ----------------------------------------

TEST(ConfigErrors, UnknownKeyInExport) {
    EXPECT_EQ(one_error("exports:\n"
                        "  - path: /srv\n"
                        "    acess: rw\n"),
              "t.yaml:3:5: unknown key 'acess' in export (expected one of: path, fsid, mountpoint, "
              "access, squash, anonuid, anongid, sec, secure, options, clients)");
}

TEST(ConfigErrors, UnknownKeyAtTopLevelAndInSections) {
    EXPECT_EQ(one_error("state_dir: /x\nexport: []\n"),
              "t.yaml:2:1: unknown key 'export' at top level (expected one of: listeners, engine, "
              "logging, state_dir, exports, rdma, tcp, nfsv4, locks, kerberos, metrics)");
    EXPECT_EQ(
        one_error("engine:\n  thread: 2\n"),
        "t.yaml:2:3: unknown key 'thread' in engine (expected one of: threads, workers, mode, "
        "spin_us, fd_cache, reactor_calls)");
    EXPECT_EQ(
        one_error("exports:\n  - path: /a\n    clients:\n      - match: '*'\n        rw: 1\n"),
        "t.yaml:5:9: unknown key 'rw' in client (expected one of: match, access, squash, "
        "anonuid, anongid, sec, secure, options)");
}

TEST(ConfigErrors, BadCidr) {
    EXPECT_EQ(one_error("exports:\n"
                        "  - path: /srv\n"
                        "    clients:\n"
                        "      - 10.0.0.0/33\n"),
              "t.yaml:4:9: bad client '10.0.0.0/33': bad prefix length: 33 is out of range (0-32)");
}

TEST(ConfigErrors, BadClientMatches) {
    auto err = [](const std::string& client) {
        return one_error("exports:\n  - path: /srv\n    clients: [\"" + client + "\"]\n");
    };
    EXPECT_EQ(
        err("fe80::/129"),
        "t.yaml:3:15: bad client 'fe80::/129': bad prefix length: 129 is out of range (0-128)");
    EXPECT_EQ(err("10.0.0.1/8"),
              "t.yaml:3:15: bad client '10.0.0.1/8': host bits are set (did you mean 10.0.0.0/8?)");
    EXPECT_EQ(err("10.0.0.256"), "t.yaml:3:15: bad client '10.0.0.256': invalid IPv4 address");
    EXPECT_EQ(err("fe80::1::2"), "t.yaml:3:15: bad client 'fe80::1::2': invalid IPv6 address");
    EXPECT_EQ(err("10.0.0.0/255.0.255.0"),
              "t.yaml:3:15: bad client '10.0.0.0/255.0.255.0': invalid netmask '255.0.255.0'");
    EXPECT_EQ(err("bad_host.com"),
              "t.yaml:3:15: bad client 'bad_host.com': invalid character '_' in hostname");
    EXPECT_EQ(err("a..b"),
              "t.yaml:3:15: bad client 'a..b': invalid hostname (empty label, label over 63 "
              "characters, or label starting or ending with '-')");
    EXPECT_EQ(err("@netgroup"), "t.yaml:3:15: bad client '@netgroup': netgroups are not supported");
}

TEST(ConfigErrors, BadPorts) {
    EXPECT_EQ(one_error("listeners:\n"
                        "  tcp:\n"
                        "    - 0.0.0.0:70000\n"),
              "t.yaml:3:7: bad TCP listener '0.0.0.0:70000': bad port: 70000 is out of range "
              "(1-65535)");
    EXPECT_EQ(one_error("listeners:\n  tcp:\n    - address: 0.0.0.0\n      port: 0\n"),
              "t.yaml:4:13: bad port: 0 is out of range (1-65535)");
    EXPECT_EQ(one_error("listeners:\n  mount_port: 65536\n"),
              "t.yaml:2:15: bad 'mount_port': 65536 is out of range (1-65535)");
    EXPECT_EQ(one_error("listeners:\n  mount_port: -1\n"),
              "t.yaml:2:15: bad 'mount_port': '-1' is not an integer (1-65535)");
}

TEST(ConfigErrors, WrongTypes) {
    EXPECT_EQ(one_error("engine:\n  - threads: 4\n"),
              "t.yaml:2:3: expected a mapping for 'engine', got a list");
    EXPECT_EQ(one_error("exports:\n  path: /srv\n"),
              "t.yaml:2:3: expected a list for 'exports', got a mapping");
    EXPECT_EQ(one_error("engine:\n  workers: [1]\n"),
              "t.yaml:2:12: expected a value for 'workers', got a list");
    EXPECT_EQ(one_error("- a\n- b\n"),
              "t.yaml:1:1: expected a mapping for the top level, got a list");
    EXPECT_EQ(one_error("exports:\n  - /srv\n"),
              "t.yaml:2:5: expected a mapping for an export, got a scalar");
    EXPECT_EQ(one_error("exports:\n  - path: /srv\n    sec: sys\n"),
              "t.yaml:3:10: expected a list for 'sec', got a scalar");
}

TEST(ConfigErrors, EmptyValueIsReportedAtItsKey) {
    // yaml-cpp marks a null value at the next token; we point at the key instead.
    EXPECT_EQ(one_error("state_dir:\nengine:\n  workers: 2\n"),
              "t.yaml:1:1: expected a value for 'state_dir', got nothing");
    EXPECT_EQ(one_error("engine:\n  workers:\nstate_dir: /x\n"),
              "t.yaml:2:3: expected a value for 'workers', got nothing");
}

TEST(ConfigErrors, YamlSyntaxErrors) {
    EXPECT_EQ(one_error("state_dir: /x: y\n"), "t.yaml:1:14: YAML syntax error: illegal map value");
    EXPECT_EQ(one_error("engine:\n  threads: 1\n workers: 2\n"),
              "t.yaml:3:2: YAML syntax error: end of map not found");
}

// Found by tests/fuzz/fuzz_config: yaml-cpp 0.7 alone never finishes these (it builds
// nodes until memory runs out); the loader reports a syntax error instead.
TEST(ConfigErrors, RunawayYamlIsASyntaxError) {
    EXPECT_EQ(one_error(" ,\n"),
              "t.yaml:1:2: YAML syntax error: the document does not parse to an end");
    auto r = load("listeners:\n  tcp: [127.0.0.1:2049]\n ,# a comment\n");
    EXPECT_FALSE(r.config);
    ASSERT_FALSE(r.errors.empty());
    EXPECT_NE(r.errors[0].message.find("YAML syntax error"), std::string::npos);
}

TEST(ConfigErrors, UnquotedBracketedIpv6IsASyntaxError) {
    // A YAML flow sequence, not a string: the example file tells users to quote it.
    auto r = load("listeners:\n  tcp:\n    - [::]:2049\n");
    EXPECT_FALSE(r.config);
    ASSERT_EQ(r.errors.size(), 1u);
    EXPECT_NE(r.errors[0].message.find("YAML syntax error"), std::string::npos);
}

TEST(ConfigErrors, OneDocumentOnly) {
    EXPECT_EQ(one_error("state_dir: /a\n---\nstate_dir: /b\n"),
              "t.yaml:3:1: expected a single YAML document");
    EXPECT_EQ(good("state_dir: /a\n---\n").state_dir, "/a");  // a trailing empty one is fine
}

TEST(ConfigErrors, MultipleErrorsAreCollected) {
    auto r = load(
        "listeners:\n"
        "  tcp: [0.0.0.0:1, 1.2.3:5]\n"
        "  max_record_size: 1000\n"
        "engine:\n"
        "  workers: 0\n"
        "logging:\n"
        "  level: verbose\n"
        "exports:\n"
        "  - path: relative/dir\n"
        "    squash: some\n"
        "  - path: /ok\n"
        "    clients: []\n");
    EXPECT_FALSE(r.config);
    EXPECT_EQ(messages(r.errors),
              (std::vector<std::string>{
                  "t.yaml:2:20: bad TCP listener '1.2.3:5': invalid IP address '1.2.3'",
                  "t.yaml:3:20: bad 'max_record_size': 1000 is out of range (65536-67108864)",
                  "t.yaml:5:12: bad 'workers': 0 is out of range (1-1024)",
                  "t.yaml:7:10: unknown log level 'verbose' (expected one of: trace, debug, info, "
                  "warn, error, critical, off)",
                  "t.yaml:9:11: bad export path 'relative/dir': export path must be absolute",
                  "t.yaml:10:13: bad squash 'some' (expected one of: none, root, all)",
                  "t.yaml:12:14: 'clients' must list at least one client",
              }));
}

TEST(ConfigErrors, DuplicatePathsAndFsids) {
    auto r = load(
        "exports:\n"
        "  - path: /srv/a\n"
        "    fsid: 5\n"
        "  - path: /srv/a/\n"
        "    fsid: 5\n");
    EXPECT_EQ(messages(r.errors),
              (std::vector<std::string>{
                  "t.yaml:4:11: duplicate export path '/srv/a' (first at line 2)",
                  "t.yaml:5:11: duplicate fsid 5 (first at line 3)",
              }));
}

TEST(ConfigErrors, PathRules) {
    EXPECT_EQ(
        one_error("exports:\n  - path: /srv/../etc\n"),
        "t.yaml:2:11: bad export path '/srv/../etc': export path must not contain '.' or '..'");
    EXPECT_EQ(one_error("exports:\n  - fsid: 1\n"), "t.yaml:2:5: export has no 'path'");
    EXPECT_EQ(one_error("state_dir: ''\n"), "t.yaml:1:12: 'state_dir' must not be empty");
}

TEST(ConfigErrors, EngineLimits) {
    EXPECT_EQ(one_error("engine:\n  threads: 1025\n"),
              "t.yaml:2:12: bad 'threads': 1025 is out of range (0-1024)");
    EXPECT_EQ(one_error("engine:\n  workers: 1025\n"),
              "t.yaml:2:12: bad 'workers': 1025 is out of range (1-1024)");
    Config c = good("engine:\n  threads: 1024\n  workers: 1\n");
    EXPECT_EQ(c.engine_threads, 1024u);
    EXPECT_EQ(c.workers, 1u);
}

TEST(ConfigErrors, RecordSizeLimits) {
    EXPECT_EQ(good("listeners:\n  max_record_size: 65536\n").max_record_size, 65536u);
    EXPECT_EQ(good("listeners:\n  max_record_size: 67108864\n").max_record_size, 67108864u);
    EXPECT_EQ(one_error("listeners:\n  max_record_size: 67108865\n"),
              "t.yaml:2:20: bad 'max_record_size': 67108865 is out of range (65536-67108864)");
}

TEST(ConfigErrors, BadRdmaListener) {
    EXPECT_EQ(
        one_error("listeners:\n  rdma:\n    - 0.0.0.0:99999\n"),
        "t.yaml:3:7: bad RDMA listener '0.0.0.0:99999': bad port: 99999 is out of range (1-65535)");
}

TEST(ConfigErrors, DuplicateKeys) {
    EXPECT_EQ(one_error("engine:\n  workers: 2\n  workers: 3\n"),
              "t.yaml:3:3: duplicate key 'workers' in engine");
}

TEST(ConfigErrors, MountPortClashesWithTcpListener) {
    EXPECT_EQ(one_error("listeners:\n  tcp: [0.0.0.0:2049]\n  mount_port: 2049\n"),
              "t.yaml:3:15: mount_port 2049 is also used by TCP listener 0.0.0.0:2049");
    // Default tcp listener.
    EXPECT_EQ(one_error("listeners:\n  mount_port: 2049\n"),
              "t.yaml:2:15: mount_port 2049 is also used by TCP listener 0.0.0.0:2049");
    // No mount_port key: reported at the listener.
    EXPECT_EQ(one_error("listeners:\n  tcp:\n    - 0.0.0.0:20048\n"),
              "t.yaml:3:7: mount_port 20048 is also used by TCP listener 0.0.0.0:20048");
}

TEST(ConfigErrors, SecurityAndClientLists) {
    EXPECT_EQ(one_error("exports:\n  - path: /a\n    sec: [sys, krb6]\n"),
              "t.yaml:3:16: unknown security flavor 'krb6' (expected one of: none, sys, krb5, "
              "krb5i, krb5p)");
    EXPECT_EQ(one_error("exports:\n  - path: /a\n    sec: []\n"),
              "t.yaml:3:10: 'sec' must list at least one flavor");
    EXPECT_EQ(one_error("exports:\n  - path: /a\n    clients: [10.0.0.0/8, 10.0.0.0/255.0.0.0]\n"),
              "t.yaml:3:27: duplicate client '10.0.0.0/255.0.0.0' (same as '10.0.0.0/8')");
    EXPECT_EQ(one_error("exports:\n  - path: /a\n    clients:\n      - access: rw\n"),
              "t.yaml:4:9: client has no 'match'");
    EXPECT_EQ(one_error("exports:\n  - path: /a\n    access: write\n"),
              "t.yaml:3:13: bad access 'write' (expected one of: ro, rw)");
}

TEST(ConfigErrors, ErrorStrFormat) {
    Error e{"f.yaml", 7, 13, "boom"};
    EXPECT_EQ(e.str(), "f.yaml:7:13: boom");
    EXPECT_EQ((Error{"command line", 0, 0, "boom"}).str(), "command line: boom");
}

// ---- listeners ------------------------------------------------------------------

TEST(ConfigListeners, Ipv6AndMappingForms) {
    Config c = good(
        "listeners:\n"
        "  tcp:\n"
        "    - \"[::1]:2049\"\n"
        "    - \"[FE80:0:0::1]:3049\"\n"
        "    - {address: \"::\", port: 4049}\n"
        "    - address: 10.0.0.1\n"
        "      port: 5049\n");
    ASSERT_EQ(c.tcp.size(), 4u);
    expect_listener(c.tcp[0], "::1", 2049);
    expect_listener(c.tcp[1], "fe80::1", 3049);  // canonical form
    expect_listener(c.tcp[2], "::", 4049);
    expect_listener(c.tcp[3], "10.0.0.1", 5049);
}

TEST(ConfigListeners, BadListeners) {
    auto err = [](const std::string& l) {
        return one_error("listeners:\n  tcp: [\"" + l + "\"]\n");
    };
    EXPECT_EQ(err("::1:2049"),
              "t.yaml:2:9: bad TCP listener '::1:2049': write IPv6 addresses in brackets, e.g. "
              "[::]:2049");
    EXPECT_EQ(err("[10.0.0.1]:2049"),
              "t.yaml:2:9: bad TCP listener '[10.0.0.1]:2049': invalid IPv6 address '10.0.0.1'");
    EXPECT_EQ(err("[::1]2049"),
              "t.yaml:2:9: bad TCP listener '[::1]2049': expected [IPV6]:PORT, e.g. [::]:2049");
    EXPECT_EQ(err("2049"),
              "t.yaml:2:9: bad TCP listener '2049': expected ADDR:PORT, e.g. 0.0.0.0:2049");
    EXPECT_EQ(err("localhost:2049"),
              "t.yaml:2:9: bad TCP listener 'localhost:2049': invalid IP address 'localhost'");
    EXPECT_EQ(one_error("listeners:\n  tcp: []\n"),
              "t.yaml:2:8: 'tcp' must list at least one listener");
    EXPECT_EQ(one_error("listeners:\n  tcp:\n    - port: 1\n"),
              "t.yaml:3:7: TCP listener is missing 'address'");
    EXPECT_EQ(one_error("listeners:\n  tcp: [\"[::]:1\", \"[0::0]:1\"]\n"),
              "t.yaml:2:19: duplicate TCP listener [::]:1");
}

// ---- parse_client_match directly ---------------------------------------------------------

TEST(ConfigClientMatch, Forms) {
    std::string why;
    auto any = parse_client_match("*", &why);
    ASSERT_TRUE(any);
    EXPECT_EQ(any->kind, Kind::Any);

    auto v6 = parse_client_match("::1", &why);
    ASSERT_TRUE(v6);
    EXPECT_EQ(v6->family, AF_INET6);
    EXPECT_EQ(v6->prefix, 128);
    EXPECT_EQ(v6->addr, ip(AF_INET6, "::1"));

    auto mask = parse_client_match("172.16.0.0/255.240.0.0", &why);
    ASSERT_TRUE(mask);
    EXPECT_EQ(mask->prefix, 12);
    EXPECT_EQ(mask->addr, ip(AF_INET, "172.16.0.0"));

    auto zero = parse_client_match("0.0.0.0/0", &why);
    ASSERT_TRUE(zero);
    EXPECT_EQ(zero->prefix, 0);

    auto host = parse_client_match("Web?.Example.COM", &why);
    ASSERT_TRUE(host);
    EXPECT_EQ(host->kind, Kind::Hostname);
    EXPECT_EQ(host->hostname, "web?.example.com");
    EXPECT_EQ(host->text, "Web?.Example.COM");

    EXPECT_FALSE(parse_client_match("", &why));
    EXPECT_EQ(why, "empty client");
    EXPECT_FALSE(parse_client_match("[::1]", &why));
    EXPECT_FALSE(parse_client_match("-bad.example.com", &why));
    EXPECT_FALSE(parse_client_match("10.0.0.0/", &why));
    EXPECT_FALSE(parse_client_match("2001:db8::1/64", &why));  // host bits
    EXPECT_EQ(why, "host bits are set (did you mean 2001:db8::/64?)");
    EXPECT_TRUE(parse_client_match("1.2.3.4", nullptr));  // `why` is optional
}

// ---- overrides --------------------------------------------------------------------

TEST(ConfigOverrides, BareExportIsReadWriteRootSquashAnyClient) {
    Config c;
    Overrides o;
    o.exports = {"/srv/x/"};
    EXPECT_TRUE(apply_overrides(c, o).empty());
    ASSERT_EQ(c.exports.size(), 1u);
    EXPECT_EQ(c.exports[0].path, "/srv/x");
    EXPECT_FALSE(c.exports[0].fsid);
    ASSERT_EQ(c.exports[0].clients.size(), 1u);
    const ClientRule& r = c.exports[0].clients[0];
    EXPECT_EQ(r.match.kind, Kind::Any);
    EXPECT_EQ(r.match.text, "*");
    EXPECT_EQ(r.access, Access::ReadWrite);
    EXPECT_EQ(r.squash, Squash::Root);
    EXPECT_EQ(r.sec, Sec{SecFlavor::Sys});
    EXPECT_TRUE(r.secure);
}

TEST(ConfigOverrides, SecureAndInsecureOptions) {
    std::string why;
    auto ins = parse_export_option("/srv/x=rw,insecure", &why);
    ASSERT_TRUE(ins) << why;
    EXPECT_FALSE(ins->clients.at(0).secure);
    auto sec = parse_export_option("/srv/x=secure,ro", &why);
    ASSERT_TRUE(sec) << why;
    EXPECT_TRUE(sec->clients.at(0).secure);
    EXPECT_FALSE(parse_export_option("/srv/x=secure,insecure", &why));
    EXPECT_EQ(why, "option 'insecure' conflicts with earlier 'secure'");
    EXPECT_FALSE(parse_export_option("/srv/x=insecure=1", &why));
    EXPECT_EQ(why, "option 'insecure' takes no value");
}

// exports(5) `mp` on the command line, `mountpoint:` in YAML; off unless asked.
TEST(ConfigOverrides, MountPointGuard) {
    std::string why;
    auto mp = parse_export_option("/srv/x=rw,mp", &why);
    ASSERT_TRUE(mp) << why;
    EXPECT_TRUE(mp->mountpoint);
    auto plain = parse_export_option("/srv/x=rw", &why);
    ASSERT_TRUE(plain) << why;
    EXPECT_FALSE(plain->mountpoint);
    EXPECT_FALSE(parse_export_option("/srv/x=mp=/srv", &why));
    EXPECT_EQ(why, "option 'mp' takes no value");

    auto r = load_string("exports:\n  - path: /srv/a\n    mountpoint: true\n  - path: /srv/b\n",
                         "t.yaml");
    ASSERT_TRUE(r.config);
    EXPECT_TRUE(r.config->exports.at(0).mountpoint);
    EXPECT_FALSE(r.config->exports.at(1).mountpoint);
    auto bad = load_string("exports:\n  - path: /srv/a\n    mountpoint: maybe\n", "t.yaml");
    EXPECT_FALSE(bad.config);
}

// The Prometheus endpoint: off unless `metrics: {listen: ...}` or --metrics names an address.
TEST(ConfigMetrics, ListenAddressFromYamlAndCommandLine) {
    EXPECT_FALSE(good("").metrics);
    Config c = good("metrics:\n  listen: 127.0.0.1:9420\n");
    ASSERT_TRUE(c.metrics);
    expect_listener(*c.metrics, "127.0.0.1", 9420);
    Config v6 = good("metrics: {listen: \"[::1]:9420\"}\n");
    ASSERT_TRUE(v6.metrics);
    expect_listener(*v6.metrics, "::1", 9420);
    EXPECT_EQ(one_error("metrics: {listen: 127.0.0.1}\n"),
              "t.yaml:1:19: bad 'listen' in metrics: expected ADDR:PORT, e.g. 0.0.0.0:2049");
    EXPECT_EQ(one_error("metrics: {port: 9420}\n"),
              "t.yaml:1:11: unknown key 'port' in metrics (expected one of: listen)");

    Overrides o;
    o.metrics = "0.0.0.0:9500";
    EXPECT_TRUE(apply_overrides(c, o).empty());
    ASSERT_TRUE(c.metrics);
    expect_listener(*c.metrics, "0.0.0.0", 9500);
    o.metrics = "off";
    EXPECT_TRUE(apply_overrides(c, o).empty());
    EXPECT_FALSE(c.metrics);
    o.metrics = "nowhere";
    EXPECT_EQ(apply_overrides(c, o).size(), 1u);
}

// A reload names each setting it cannot apply; exports and the log level it does apply.
TEST(ConfigReload, RestartOnlyChangesAreNamed) {
    const Config running = good("exports:\n  - path: /srv/a\n");
    EXPECT_TRUE(restart_only_changes(running, running).empty());
    Config next = good(
        "listeners: {tcp: [\"0.0.0.0:3049\"]}\nlogging: {level: debug}\n"
        "engine: {workers: 4}\nexports:\n  - path: /srv/b\n");
    EXPECT_EQ(restart_only_changes(running, next),
              (std::vector<std::string>{"listeners.tcp", "engine"}));
    next = running;
    next.rdma_tuning.credits = 64;
    next.metrics = TcpListener{"127.0.0.1", 9420};
    next.nfs4.lease_time = 30;
    EXPECT_EQ(restart_only_changes(running, next),
              (std::vector<std::string>{"metrics", "rdma", "nfsv4"}));
}

TEST(ConfigTcp, DefaultsAndLimits) {
    Config d = good("");
    EXPECT_EQ(d.tcp_tuning.max_connections, 1024u);
    EXPECT_EQ(d.tcp_tuning.idle_timeout, 360u);
    EXPECT_EQ(d.tcp_tuning.max_pipes, 256u);
    Config c = good("tcp: {max_connections: 10, idle_timeout: 0, max_pipes: 0}\n");
    EXPECT_EQ(c.tcp_tuning.max_connections, 10u);
    EXPECT_EQ(c.tcp_tuning.idle_timeout, 0u);
    EXPECT_EQ(c.tcp_tuning.max_pipes, 0u);
    EXPECT_FALSE(load("tcp: {max_connections: 0}\n").errors.empty());
    EXPECT_FALSE(load("tcp: {idle_timeout: -1}\n").errors.empty());
    EXPECT_FALSE(load("tcp: {bogus: 1}\n").errors.empty());
}

TEST(ConfigNfs4, DefaultsAndLimits) {
    Config d = good("");
    EXPECT_TRUE(d.nfs4.enabled);
    EXPECT_FALSE(good("nfsv4: {enabled: false}\n").nfs4.enabled);
    EXPECT_EQ(d.nfs4.lease_time, 90u);
    EXPECT_EQ(d.nfs4.domain, "");  // found at start (nfs::v4::system_id_domain)
    EXPECT_EQ(d.nfs4.max_clients, 4096u);
    Config c = good("nfsv4: {enabled: true, lease_time: 15, domain: example.org, max_clients: 7}\n");
    EXPECT_TRUE(c.nfs4.enabled);
    EXPECT_EQ(c.nfs4.lease_time, 15u);
    EXPECT_EQ(c.nfs4.domain, "example.org");
    EXPECT_EQ(c.nfs4.max_clients, 7u);
    EXPECT_FALSE(load("nfsv4: {lease_time: 5}\n").errors.empty());
    EXPECT_FALSE(load("nfsv4: {domain: a@b}\n").errors.empty());
    EXPECT_FALSE(load("nfsv4: {domain: \"\"}\n").errors.empty());
    EXPECT_FALSE(load("nfsv4: {enabled: maybe}\n").errors.empty());
    EXPECT_FALSE(load("nfsv4: {bogus: 1}\n").errors.empty());
}

TEST(ConfigKerberos, DefaultsAndLimits) {
    Config d = good("");
    EXPECT_FALSE(d.kerberos.configured);
    EXPECT_EQ(d.kerberos.keytab, "/etc/krb5.keytab");
    EXPECT_EQ(d.kerberos.seq_window, 4096u);
    EXPECT_EQ(d.kerberos.max_contexts, 65536u);
    Config c = good("kerberos: {keytab: /etc/nfs.keytab, seq_window: 128, max_contexts: 10}\n");
    EXPECT_TRUE(c.kerberos.configured);
    EXPECT_EQ(c.kerberos.keytab, "/etc/nfs.keytab");
    EXPECT_EQ(c.kerberos.seq_window, 128u);
    EXPECT_EQ(c.kerberos.max_contexts, 10u);
    EXPECT_TRUE(good("kerberos: {}\n").kerberos.configured);
    EXPECT_FALSE(load("kerberos: {keytab: ''}\n").errors.empty());
    EXPECT_FALSE(load("kerberos: {seq_window: 8}\n").errors.empty());
    EXPECT_FALSE(load("kerberos: {max_contexts: 0}\n").errors.empty());
    EXPECT_FALSE(load("kerberos: {realm: X}\n").errors.empty());
}

TEST(ConfigLocks, DefaultsAndLimits) {
    Config d = good("");
    EXPECT_TRUE(d.locks.local);
    EXPECT_EQ(d.locks.max_files, 4096u);
    EXPECT_EQ(d.locks.max_files_per_client, 512u);
    Config c = good("locks: {local: false, max_files: 10, max_files_per_client: 3}\n");
    EXPECT_FALSE(c.locks.local);
    EXPECT_EQ(c.locks.max_files, 10u);
    EXPECT_EQ(c.locks.max_files_per_client, 3u);
    EXPECT_FALSE(load("locks: {max_files: 0}\n").errors.empty());
    EXPECT_FALSE(load("locks: {max_files: 10, max_files_per_client: 11}\n").errors.empty());
    EXPECT_EQ(d.locks.nsm_name, "");
    EXPECT_EQ(good("locks: {nsm_name: nfs1.example.com}\n").locks.nsm_name, "nfs1.example.com");
    EXPECT_FALSE(load("locks: {nsm_name: 'a b'}\n").errors.empty());
    EXPECT_FALSE(load("locks: {nsm_name: ''}\n").errors.empty());
    EXPECT_FALSE(load("locks: {local: perhaps}\n").errors.empty());
    EXPECT_FALSE(load("locks: {bogus: 1}\n").errors.empty());
}

TEST(ConfigOverrides, ExportWithOptions) {
    std::string why;
    auto e = parse_export_option(
        "/srv/y=ro,all_squash,anonuid=1000,anongid=100,sec=krb5:sys,fsid=9,clients=10.0.0.0/8",
        &why);
    ASSERT_TRUE(e) << why;
    EXPECT_EQ(e->path, "/srv/y");
    EXPECT_EQ(e->fsid, 9u);
    const ClientRule& r = e->clients.at(0);
    EXPECT_EQ(r.access, Access::ReadOnly);
    EXPECT_EQ(r.squash, Squash::All);
    EXPECT_EQ(r.anonuid, 1000u);
    EXPECT_EQ(r.anongid, 100u);
    EXPECT_EQ(r.sec, (Sec{SecFlavor::Krb5, SecFlavor::Sys}));
    EXPECT_EQ(r.match.kind, Kind::Cidr);
    EXPECT_EQ(r.match.prefix, 8);

    auto nrs = parse_export_option("/srv/x=rw,no_root_squash", &why);
    ASSERT_TRUE(nrs) << why;
    EXPECT_EQ(nrs->clients.at(0).squash, Squash::None);
    EXPECT_EQ(nrs->clients.at(0).access, Access::ReadWrite);
}

TEST(ConfigOverrides, BadExportOptions) {
    auto bad = [](std::string_view arg) {
        std::string why;
        EXPECT_FALSE(parse_export_option(arg, &why)) << arg;
        return why;
    };
    EXPECT_EQ(bad("srv/x"), "export path must be absolute");
    EXPECT_EQ(bad("/srv/x="), "missing options after '='");
    EXPECT_EQ(bad("/srv/x=rw,ro"), "option 'ro' conflicts with earlier 'rw'");
    EXPECT_EQ(bad("/srv/x=root_squash,all_squash"),
              "option 'all_squash' conflicts with earlier 'root_squash'");
    EXPECT_EQ(bad("/srv/x=rw=1"), "option 'rw' takes no value");
    EXPECT_EQ(bad("/srv/x=anonuid"), "option 'anonuid' needs a value");
    EXPECT_EQ(bad("/srv/x=anonuid=-5"), "bad anonuid: '-5' is not an integer (0-4294967295)");
    EXPECT_EQ(bad("/srv/x=fsid=4294967296"), "bad fsid: 4294967296 is out of range (0-4294967295)");
    EXPECT_EQ(bad("/srv/x=sec=sys:krb9"),
              "unknown security flavor 'krb9' (expected one of: none, sys, krb5, krb5i, krb5p)");
    EXPECT_EQ(bad("/srv/x=clients=10.0.0.0/40"),
              "bad client '10.0.0.0/40': bad prefix length: 40 is out of range (0-32)");
    EXPECT_EQ(bad("/srv/x=rw,,ro"), "empty export option (stray comma?)");
    EXPECT_EQ(bad("/srv/x=bogus").substr(0, 32), "unknown export option 'bogus' (s");
    EXPECT_EQ(bad("/srv/x=async").substr(0, 58),
              "export option 'async' is not supported: it would answer be");
}

TEST(ConfigOverrides, ListenerAndScalars) {
    Config c;
    Overrides o;
    o.tcp = "[::1]:3049";
    o.mount_port = 3050;
    o.state_dir = "/tmp/state";
    o.log_level = "debug";
    EXPECT_TRUE(apply_overrides(c, o).empty());
    ASSERT_EQ(c.tcp.size(), 1u);
    expect_listener(c.tcp[0], "::1", 3049);
    EXPECT_EQ(c.mount_port, 3050);
    EXPECT_EQ(c.state_dir, "/tmp/state");
    EXPECT_EQ(c.log_level, "debug");
}

TEST(ConfigOverrides, TcpReplacesFileListeners) {
    Config c = good("listeners:\n  tcp: [0.0.0.0:2049, \"[::]:2049\"]\n");
    Overrides o;
    o.tcp = "127.0.0.1:12049";
    EXPECT_TRUE(apply_overrides(c, o).empty());
    ASSERT_EQ(c.tcp.size(), 1u);
    expect_listener(c.tcp[0], "127.0.0.1", 12049);
}

TEST(ConfigOverrides, ErrorsAreCollectedAndConfigUnchanged) {
    Config c = good("exports:\n  - path: /srv/a\n    fsid: 3\n");
    Overrides o;
    o.tcp = "::1:2049";
    o.mount_port = 0;
    o.log_level = "loud";
    o.exports = {"/srv/a", "/srv/b=fsid=3", "/srv/c=bogus", "/srv/d"};
    auto errors = apply_overrides(c, o);
    EXPECT_EQ(messages(errors),
              (std::vector<std::string>{
                  "command line: --tcp ::1:2049: write IPv6 addresses in brackets, e.g. [::]:2049",
                  "command line: --mount-port: port must be 1-65535",
                  "command line: --log-level loud: expected one of: trace, debug, info, warn, "
                  "error, critical, off",
                  "command line: --export /srv/a: '/srv/a' is already exported",
                  "command line: --export /srv/b=fsid=3: fsid 3 is already used by '/srv/a'",
                  "command line: --export /srv/c=bogus: unknown export option 'bogus' (supported: "
                  "rw, ro, root_squash, no_root_squash, all_squash, secure, insecure, anonuid=N, "
                  "anongid=N, sec=FLAVOR[:FLAVOR...], fsid=N, mp, clients=SPEC; and as the "
                  "default behaviour: sync, no_subtree_check, wdelay, no_wdelay, hide, "
                  "no_all_squash, secure_locks, no_acl)",
              }));
    for (const auto& e : errors) {
        EXPECT_EQ(e.file, "command line");
        EXPECT_EQ(e.line, 0);
        EXPECT_EQ(e.column, 0);
    }
    ASSERT_EQ(c.exports.size(), 1u);  // unchanged: /srv/d was not added
    expect_listener(c.tcp.at(0), "0.0.0.0", 2049);
    EXPECT_EQ(c.log_level, "info");
}

TEST(ConfigOverrides, MountPortClash) {
    Config c;
    Overrides o;
    o.mount_port = 2049;
    EXPECT_EQ(messages(apply_overrides(c, o)),
              (std::vector<std::string>{
                  "command line: mount port 2049 is also used by TCP listener 0.0.0.0:2049"}));
    EXPECT_EQ(c.mount_port, 20048);
}

TEST(ConfigOverrides, DuplicateExportOnCommandLine) {
    Config c;
    Overrides o;
    o.exports = {"/srv/x", "/srv//x=ro"};
    auto errors = apply_overrides(c, o);
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_EQ(errors[0].message, "--export /srv//x=ro: '/srv/x' is already exported");
}

}  // namespace

// ---- RDMA ------------------------------------------------------------------------

TEST(ConfigRdma, ListenersTuningAndEngineMode) {
    auto r = load_string(
        "listeners:\n"
        "  rdma: [\"[::1]:20050\", 10.0.0.1:20049]\n"
        "engine:\n"
        "  mode: event\n"
        "rdma:\n"
        "  credits: 32\n"
        "  inline_size: 8192\n"
        "  huge_pages: yes\n"
        "  send_timeout: 5\n",
        "t.yaml");
    ASSERT_TRUE(r.config) << ::testing::PrintToString(messages(r.errors));
    ASSERT_EQ(r.config->rdma.size(), 2u);
    expect_listener(r.config->rdma[0], "::1", 20050);
    EXPECT_EQ(r.config->engine_mode, EngineMode::Event);
    EXPECT_EQ(r.config->rdma_tuning.credits, 32u);
    EXPECT_EQ(r.config->rdma_tuning.inline_size, 8192u);
    EXPECT_TRUE(r.config->rdma_tuning.huge_pages);
    EXPECT_EQ(r.config->rdma_tuning.send_timeout, 5u);
}

TEST(ConfigRdma, ConnectionsAndReceiveBuffers) {
    auto r = load_string("rdma:\n  max_connections: 200\n  receive_buffers: 1024\n", "t.yaml");
    ASSERT_TRUE(r.config) << ::testing::PrintToString(messages(r.errors));
    EXPECT_EQ(r.config->rdma_tuning.max_connections, 200u);
    EXPECT_EQ(r.config->rdma_tuning.receive_buffers, 1024u);
    auto d = load_string("{}", "t.yaml");
    ASSERT_TRUE(d.config);
    EXPECT_EQ(d.config->rdma_tuning.max_connections, 1024u);
    EXPECT_EQ(d.config->rdma_tuning.receive_buffers, 4096u);
    // 256 receive buffers: 64 stay posted, 192 calls in flight, one credit each at least.
    auto bad = load_string("rdma:\n  max_connections: 193\n  receive_buffers: 256\n", "t.yaml");
    EXPECT_FALSE(bad.config);
    EXPECT_EQ(messages(bad.errors),
              (std::vector<std::string>{
                  "t.yaml:2:3: 'max_connections' (193) exceeds the calls 'receive_buffers' can "
                  "hold (192): every connection needs one credit"}));
}

TEST(ConfigRdma, ReadBudgetIsThePoolsOrAtLeast64KiB) {
    auto d = load_string("{}", "t.yaml");
    ASSERT_TRUE(d.config);
    EXPECT_EQ(d.config->rdma_tuning.max_read_bytes, 0u);
    auto r = load_string("rdma:\n  max_read_bytes: 8388608\n", "t.yaml");
    ASSERT_TRUE(r.config) << ::testing::PrintToString(messages(r.errors));
    EXPECT_EQ(r.config->rdma_tuning.max_read_bytes, 8388608u);
    auto z = load_string("rdma:\n  max_read_bytes: 0\n", "t.yaml");
    ASSERT_TRUE(z.config) << ::testing::PrintToString(messages(z.errors));
    EXPECT_EQ(z.config->rdma_tuning.max_read_bytes, 0u);
    auto bad = load_string("rdma:\n  max_read_bytes: 4096\n", "t.yaml");
    EXPECT_FALSE(bad.config);
    EXPECT_EQ(messages(bad.errors),
              (std::vector<std::string>{"t.yaml:2:19: 'max_read_bytes' must be 0 (the payload "
                                        "pool's bytes) or at least 65536"}));
}

TEST(ConfigRdma, EmptyListTurnsRdmaOff) {
    auto r = load_string("listeners:\n  rdma: []\n", "t.yaml");
    ASSERT_TRUE(r.config);
    EXPECT_TRUE(r.config->rdma.empty());
    auto d = load_string("{}", "t.yaml");
    ASSERT_TRUE(d.config);
    ASSERT_EQ(d.config->rdma.size(), 1u) << "RDMA on port 20049 by default";
    expect_listener(d.config->rdma[0], "0.0.0.0", 20049);
}

TEST(ConfigRdma, BadValuesAreErrorsWithPositions) {
    auto r = load_string(
        "rdma:\n"
        "  inline_size: 5000\n"
        "  credits: 0\n"
        "engine:\n"
        "  mode: spin\n",
        "t.yaml");
    EXPECT_FALSE(r.config);
    EXPECT_EQ(messages(r.errors),
              (std::vector<std::string>{
                  "t.yaml:2:16: 'inline_size' must be a multiple of 1024 (RFC 8797)",
                  "t.yaml:3:12: bad 'credits': 0 is out of range (1-1024)",
                  "t.yaml:5:9: unknown engine mode 'spin' (expected one of: event, poll, adaptive)",
              }));
}

TEST(ConfigEngine, EveryModeLoads) {
    for (auto [text, mode] :
         {std::pair{"event", EngineMode::Event}, std::pair{"poll", EngineMode::Poll},
          std::pair{"adaptive", EngineMode::Adaptive}}) {
        auto r = load_string(std::string("engine:\n  mode: ") + text + "\n", "t.yaml");
        ASSERT_TRUE(r.config) << text;
        EXPECT_EQ(r.config->engine_mode, mode) << text;
    }
}

TEST(ConfigRdma, OverrideReplacesOrTurnsOff) {
    Config cfg;
    Overrides o;
    o.rdma = "192.168.1.5:20049";
    ASSERT_TRUE(apply_overrides(cfg, o).empty());
    ASSERT_EQ(cfg.rdma.size(), 1u);
    expect_listener(cfg.rdma[0], "192.168.1.5", 20049);
    o.rdma = "off";
    ASSERT_TRUE(apply_overrides(cfg, o).empty());
    EXPECT_TRUE(cfg.rdma.empty());
    o.rdma = "nonsense";
    EXPECT_FALSE(apply_overrides(cfg, o).empty());
}

// YAML `options`: the command line's exports(5) words, for an export and for one client.
TEST(ConfigExportOptionWords, AnExportTakesTheWordsAsAStringOrAList) {
    auto c = good(R"(
exports:
  - path: /srv/a
    options: rw,no_root_squash,insecure,sec=krb5p:krb5i,anonuid=1000,fsid=7,mp,sync
  - path: /srv/b
    options: [ro, all_squash, no_subtree_check]
)");
    ASSERT_EQ(c.exports.size(), 2u);
    const auto& a = c.exports[0];
    EXPECT_EQ(a.fsid, 7u);
    EXPECT_TRUE(a.mountpoint);
    ASSERT_EQ(a.clients.size(), 1u);
    EXPECT_EQ(a.clients[0].access, Access::ReadWrite);
    EXPECT_EQ(a.clients[0].squash, Squash::None);
    EXPECT_FALSE(a.clients[0].secure);
    EXPECT_EQ(a.clients[0].anonuid, 1000u);
    EXPECT_EQ(a.clients[0].sec, (std::vector<SecFlavor>{SecFlavor::Krb5p, SecFlavor::Krb5i}));
    EXPECT_EQ(c.exports[1].clients[0].access, Access::ReadOnly);
    EXPECT_EQ(c.exports[1].clients[0].squash, Squash::All);
}

TEST(ConfigExportOptionWords, ClientsStartFromTheExportsWordsAndAddTheirOwn) {
    auto c = good(R"(
exports:
  - path: /srv/a
    options: rw,no_root_squash
    clients:
      - 10.0.0.0/8
      - match: "*"
        options: ro,root_squash
)");
    const auto& rules = c.exports[0].clients;
    ASSERT_EQ(rules.size(), 2u);
    EXPECT_EQ(rules[0].access, Access::ReadWrite);
    EXPECT_EQ(rules[0].squash, Squash::None);
    EXPECT_EQ(rules[1].access, Access::ReadOnly);
    EXPECT_EQ(rules[1].squash, Squash::Root);
}

TEST(ConfigExportOptionWords, WrongWordsAreErrorsAtTheKey) {
    EXPECT_EQ(one_error("exports:\n  - path: /a\n    options: rw,subtree_check\n"),
              "t.yaml:3:14: options: export option 'subtree_check' is not supported: handles "
              "carry no parent directory to check, and the check breaks renamed open files; "
              "export the subtree as its own filesystem instead");
    EXPECT_NE(one_error("exports:\n  - path: /a\n    options: rw,bogus\n")
                  .find("unknown export option 'bogus'"),
              std::string::npos);
    EXPECT_EQ(one_error("exports:\n  - path: /a\n    options: rw,ro\n"),
              "t.yaml:3:14: options: option 'ro' conflicts with earlier 'rw'");
    EXPECT_EQ(one_error("exports:\n  - path: /a\n    access: ro\n    options: [rw]\n"),
              "t.yaml:4:14: options: sets access, which 'access' here sets too");
    EXPECT_EQ(one_error("exports:\n  - path: /a\n    mountpoint: true\n    options: mp\n"),
              "t.yaml:4:14: options: sets mountpoint, which 'mountpoint' here sets too");
    EXPECT_EQ(one_error("exports:\n  - path: /a\n    options: clients=*\n"),
              "t.yaml:3:14: options: list an export's clients under 'clients'");
    EXPECT_EQ(one_error("exports:\n  - path: /a\n    clients:\n      - match: '*'\n"
                        "        options: fsid=3\n"),
              "t.yaml:5:18: options: 'fsid' is an export's option, not a client's");
    EXPECT_EQ(one_error("exports:\n  - path: /a\n    fsid: 3\n  - path: /b\n"
                        "    options: fsid=3\n"),
              "t.yaml:5:14: duplicate fsid 3 (first at line 3)");
    EXPECT_EQ(one_error("exports:\n  - path: /a\n    options: {rw: 1}\n"),
              "t.yaml:3:14: expected a value for 'options', got a mapping");
}

}  // namespace nfsrdmad::config
