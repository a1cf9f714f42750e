// exports(5) words (config/export_options.h) on the command line, `nfsrdmad import-exports`
// (config/import_exports.h) and the README's table of them.
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "config/export_options.h"
#include "config/import_exports.h"
#include "config/load.h"
#include "config/overrides.h"

namespace nfsrdmad::config {
namespace {

std::string joined(const std::vector<Error>& errors) {
    std::string s;
    for (const auto& e : errors) s += e.str() + "\n";
    return s;
}

// The YAML an import makes, loaded back as nfsrdmad would load it.
Config round_trip(const ImportResult& r) {
    EXPECT_TRUE(r.errors.empty()) << joined(r.errors);
    auto loaded = load_string(r.yaml, "imported.yaml");
    EXPECT_TRUE(loaded.config) << r.yaml << joined(loaded.errors);
    return loaded.config ? *loaded.config : Config{};
}

TEST(ImportExports, ATypicalFileLoadsBackWithTheSameRules) {
    const auto r = import_exports(
        "# the lab's exports\n"
        "/srv/data   10.0.0.0/255.0.0.0(rw,sync,no_subtree_check,no_root_squash) \\\n"
        "            *.lab.example.com(ro,insecure)   # readers\n"
        "\n"
        "/srv/home -rw,sec=krb5p:krb5i 192.168.1.7 192.168.2.0/24(ro,all_squash,anonuid=1000)\n"
        "/srv/pub  *(ro,fsid=7,mp,wdelay)\n",
        "exports");
    EXPECT_TRUE(r.warnings.empty()) << joined(r.warnings);
    const Config c = round_trip(r);
    ASSERT_EQ(c.exports.size(), 3u) << r.yaml;

    const Export& data = c.exports[0];
    EXPECT_EQ(data.path, "/srv/data");
    ASSERT_EQ(data.clients.size(), 2u);
    EXPECT_EQ(data.clients[0].match.kind, ClientMatch::Kind::Cidr);
    EXPECT_EQ(data.clients[0].match.prefix, 8);
    EXPECT_EQ(data.clients[0].access, Access::ReadWrite);
    EXPECT_EQ(data.clients[0].squash, Squash::None);
    EXPECT_TRUE(data.clients[0].secure);
    EXPECT_EQ(data.clients[1].match.kind, ClientMatch::Kind::Hostname);
    EXPECT_EQ(data.clients[1].access, Access::ReadOnly);
    EXPECT_FALSE(data.clients[1].secure);

    // "-OPTS" after the path applies to every client of the line; a client's own win.
    const Export& home = c.exports[1];
    ASSERT_EQ(home.clients.size(), 2u);
    EXPECT_EQ(home.clients[0].access, Access::ReadWrite);
    EXPECT_EQ(home.clients[0].sec, (std::vector<SecFlavor>{SecFlavor::Krb5p, SecFlavor::Krb5i}));
    EXPECT_EQ(home.clients[1].access, Access::ReadOnly);
    EXPECT_EQ(home.clients[1].squash, Squash::All);
    EXPECT_EQ(home.clients[1].anonuid, 1000u);
    EXPECT_EQ(home.clients[1].sec, home.clients[0].sec);

    const Export& pub = c.exports[2];
    EXPECT_EQ(pub.fsid, 7u);
    EXPECT_TRUE(pub.mountpoint);
    EXPECT_EQ(pub.clients.at(0).match.kind, ClientMatch::Kind::Any);
}

TEST(ImportExports, RefusedOptionsAreDroppedWithTheReason) {
    const auto r = import_exports("/srv/a 10.1.0.0/16(rw,async,crossmnt)\n", "exports");
    ASSERT_EQ(r.warnings.size(), 2u) << joined(r.warnings);
    EXPECT_EQ(r.warnings[0].line, 1);
    EXPECT_NE(r.warnings[0].message.find("option 'async' dropped: it would answer before data"),
              std::string::npos)
        << r.warnings[0].message;
    EXPECT_NE(r.warnings[1].message.find("'crossmnt' dropped"), std::string::npos);
    const Config c = round_trip(r);
    ASSERT_EQ(c.exports.size(), 1u);
    EXPECT_EQ(c.exports[0].clients.at(0).access, Access::ReadWrite);
}

TEST(ImportExports, LinesOfOnePathMergeAndUnusableClientsAreDropped) {
    const auto r = import_exports(
        "/srv/a 10.0.0.1(rw)\n"
        "/srv/a 10.0.0.2\n"
        "/srv/b @trusted(rw)\n"
        "\"/srv/with space\" (ro)\n"
        "/srv/oct\\040al\n",
        "exports");
    const Config c = round_trip(r);
    ASSERT_EQ(c.exports.size(), 3u) << r.yaml;
    EXPECT_EQ(c.exports[0].clients.size(), 2u);
    EXPECT_EQ(c.exports[1].path, "/srv/with space");
    EXPECT_EQ(c.exports[2].path, "/srv/oct al");
    // @trusted: a netgroup, dropped; /srv/b then has no client and is not imported.
    // "(ro)" and the bare path: exported to everyone, each with a warning.
    ASSERT_EQ(r.warnings.size(), 4u) << joined(r.warnings);
    EXPECT_NE(joined(r.warnings).find("netgroups are not supported"), std::string::npos);
    EXPECT_NE(joined(r.warnings).find("/srv/b: not imported: no client left"), std::string::npos);
}

TEST(ImportExports, UnreadableLinesAreErrorsAndNoYamlIsMade) {
    auto r = import_exports("srv/relative *(rw)\n/srv/ok *(rw)\n", "exports");
    ASSERT_EQ(r.errors.size(), 1u);
    EXPECT_EQ(r.errors[0].line, 1);
    EXPECT_TRUE(r.yaml.empty());
    r = import_exports("/srv/a *(rw\n", "exports");
    ASSERT_EQ(r.errors.size(), 1u);
    r = import_exports("\"\"\n", "exports");  // quotes and nothing else: no path
    ASSERT_EQ(r.errors.size(), 1u);
    r = import_exports("/srv/a 1.2.3.4(fsid=1) 1.2.3.5(fsid=2)\n", "exports");
    ASSERT_EQ(r.errors.size(), 1u);
    EXPECT_NE(r.errors[0].message.find("fsid 2 differs"), std::string::npos);
}

// Every exports(5) word on the command line: served ones work, default-behaviour ones
// are accepted and change nothing, refused ones say why.
TEST(ExportOptionWords, CommandLineFollowsTheTable) {
    for (const auto& o : export_option_table()) {
        std::string why;
        std::string arg = "/srv/x=" + std::string(o.word);
        if (o.word == "anonuid" || o.word == "anongid" || o.word == "fsid") arg += "=5";
        if (o.word == "sec") arg += "=sys";
        if (o.word == "uuid" || o.word == "refer" || o.word == "replicas") arg += "=x";
        auto e = parse_export_option(arg, &why);
        if (o.support == OptionSupport::Refused) {
            EXPECT_FALSE(e) << o.word;
            EXPECT_NE(why.find(std::string(o.note).substr(0, 20)), std::string::npos)
                << o.word << ": " << why;
        } else {
            EXPECT_TRUE(e) << o.word << ": " << why;
        }
    }
    std::string why;
    auto plain = parse_export_option("/srv/x=sync,no_subtree_check,wdelay", &why);
    ASSERT_TRUE(plain) << why;
    EXPECT_EQ(plain->clients.at(0).access, Access::ReadWrite);  // --export's default
}

// README.md's exports(5) table lists every word of the table.
TEST(ExportOptionWords, ReadmeTableListsEveryWord) {
    std::ifstream in(NFSRDMAD_SOURCE_DIR "/README.md");
    ASSERT_TRUE(in);
    std::stringstream text;
    text << in.rdbuf();
    for (const auto& o : export_option_table())
        EXPECT_NE(text.str().find("| `" + std::string(o.word)), std::string::npos)
            << "README.md has no row for exports(5) option '" << o.word << "'";
}

}  // namespace
}  // namespace nfsrdmad::config
