// owner / owner_group strings (RFC 8881 §5.9): names where the name service has one,
// numbers otherwise; both accepted back; other domains and unknown names refused.
#include <gtest/gtest.h>

#include <map>

#include "nfs/v4/id_map.h"

using namespace nfsrdmad;
using namespace nfsrdmad::nfs::v4;
namespace x4 = xdr::nfs4;

namespace {

class FakeNames : public NameService {
  public:
    std::map<uint32_t, std::string> users{{0, "root"}, {1000, "alice"}};
    std::map<uint32_t, std::string> groups{{0, "root"}, {100, "users"}};
    mutable int lookups = 0;  // id -> name calls
    std::optional<std::string> user_name(uint32_t uid) const override {
        ++lookups;
        return find(users, uid);
    }
    std::optional<std::string> group_name(uint32_t gid) const override {
        ++lookups;
        return find(groups, gid);
    }
    std::optional<uint32_t> user_id(const std::string& n) const override { return rfind(users, n); }
    std::optional<uint32_t> group_id(const std::string& n) const override {
        return rfind(groups, n);
    }

  private:
    static std::optional<std::string> find(const std::map<uint32_t, std::string>& m, uint32_t id) {
        auto it = m.find(id);
        if (it == m.end()) return std::nullopt;
        return it->second;
    }
    static std::optional<uint32_t> rfind(const std::map<uint32_t, std::string>& m,
                                         const std::string& n) {
        for (auto& [id, name] : m)
            if (name == n) return id;
        return std::nullopt;
    }
};

}  // namespace

TEST(IdMap, NamedIdsGoOutAsNameAtDomainOthersAsNumbers) {
    FakeNames names;
    IdMap m("example.org", names);
    EXPECT_EQ(m.owner(1000), "alice@example.org");
    EXPECT_EQ(m.owner(4321), "4321");
    EXPECT_EQ(m.owner_group(100), "users@example.org");
    EXPECT_EQ(m.owner_group(7), "7");
}

TEST(IdMap, NamesNumbersAndBareNamesComeBack) {
    FakeNames names;
    IdMap m("example.org", names);
    EXPECT_EQ(m.uid_of("alice@example.org").id, 1000u);
    EXPECT_EQ(m.uid_of("alice@EXAMPLE.org").status, x4::NFS4_OK);
    EXPECT_EQ(m.uid_of("4321").id, 4321u);
    EXPECT_EQ(m.uid_of("0").id, 0u);
    EXPECT_EQ(m.uid_of("alice").id, 1000u);
    EXPECT_EQ(m.gid_of("users@example.org").id, 100u);
    EXPECT_EQ(m.gid_of("100").id, 100u);
    // The same round trip for every id the fake knows, and for unnamed ones.
    for (uint32_t uid : {0u, 1000u, 4321u, 4294967295u}) EXPECT_EQ(m.uid_of(m.owner(uid)).id, uid);
}

TEST(IdMap, WhatCannotBeMappedIsBadOwner) {
    FakeNames names;
    IdMap m("example.org", names);
    for (const char* s : {"alice@other.org", "bob@example.org", "", "@example.org", "bob", "12a",
                          "-1", "4294967296", "007", "alice@", " 1000"})
        EXPECT_EQ(m.uid_of(s).status, x4::NFS4ERR_BADOWNER) << '"' << s << '"';
    EXPECT_EQ(m.gid_of("alice@example.org").status, x4::NFS4ERR_BADOWNER);  // a user, not a group
    EXPECT_EQ(m.uid_of(std::string_view("alice\0x@example.org", 19)).status, x4::NFS4ERR_BADOWNER);
}

TEST(IdMap, TheSystemNameServiceKnowsRoot) {
    IdMap m("example.org");
    EXPECT_EQ(m.owner(0), "root@example.org");
    EXPECT_EQ(m.uid_of("root@example.org").id, 0u);
    EXPECT_EQ(m.gid_of("root@example.org").id, 0u);
}

// Unset in the YAML, the domain is the one the client's nfsidmap would pick on this host:
// idmapd.conf's [General] Domain, else the canonical host name's DNS domain, else
// localdomain. A mismatch shows every owner as nobody on the client.
TEST(IdDomain, IdmapdConfGeneralDomainComesFirst) {
    auto d = id_domain_from(
        "# comment\n[Mapping]\nDomain = wrong.example\n\n[ general ]\n"
        "Verbosity = 0\n  domain =  Lab.Example.org  \n; Domain = later.example\n",
        "server.vmtest.test");
    EXPECT_EQ(d.domain, "Lab.Example.org");
    EXPECT_EQ(d.source, "idmapd.conf");
}

TEST(IdDomain, ElseTheHostsDnsDomain) {
    // No [General] Domain (commented out, or in another section): the host's.
    for (const char* conf :
         {"", "[General]\n#Domain = local.domain.edu\n", "[Translation]\nDomain = x.example\n"}) {
        auto d = id_domain_from(conf, "nfs-server.vmtest.test");
        EXPECT_EQ(d.domain, "vmtest.test") << conf;
        EXPECT_EQ(d.source, "host name nfs-server.vmtest.test") << conf;
        EXPECT_EQ(d.warning, "") << conf;
    }
    // A Domain that is no domain name is passed over with a warning for the log.
    for (const char* conf : {"[General]\nDomain =\n", "[General]\nDomain = a b\n",
                             "[General]\nDomain = \"\"\n", "[General]\nDomain = x@y\n"}) {
        auto d = id_domain_from(conf, "nfs-server.vmtest.test");
        EXPECT_EQ(d.domain, "vmtest.test") << conf;
        EXPECT_NE(d.warning, "") << conf;
    }
    EXPECT_EQ(id_domain_from("", "a.b.example.").domain, "b.example");
}

// As nfs-utils' conffile reads a value: quotes go, a comment after an unquoted value goes,
// the last of two settings counts.
TEST(IdDomain, ValuesAreReadAsNfsUtilsReadsThem) {
    const char* host = "h.other.example";
    auto domain = [&](const char* conf) { return id_domain_from(conf, host).domain; };
    EXPECT_EQ(domain("[General]\nDomain = \"lab.example\"\n"), "lab.example");
    EXPECT_EQ(domain("[General]\nDomain='lab.example' # x\n"), "lab.example");
    EXPECT_EQ(domain("[General]\nDomain = lab.example # site\n"), "lab.example");
    EXPECT_EQ(domain("[General]\nDomain = lab.example;x\n"), "lab.example");
    EXPECT_EQ(domain("[General]\nDomain = a.example\nDomain = b.example\n"), "b.example");
    EXPECT_EQ(domain("[General]\nDomain = a.example\n[Mapping]\nDomain = b.example\n"),
              "a.example");
}

TEST(IdDomain, ElseLocaldomain) {
    for (const char* host : {"", "nfs-server", "nfs-server.", "dot.@"})
        EXPECT_EQ(id_domain_from("[General]\n", host).domain, "localdomain") << host;
}

class ManualClock : public nfs::v4::state::Clock {
  public:
    nfs::v4::state::Time t{};
    nfs::v4::state::Time now() const override { return t; }
};

// Every READDIR entry and GETATTR asks for an owner and a group: answers are kept
// (IdMap::kTtl for names, kMissTtl for ids without one), so the name service is asked
// once per id in that time.
TEST(IdMap, OwnerStringsAreCachedForTheirTtl) {
    FakeNames names;
    ManualClock clock;
    IdMap m("example.org", names, &clock);
    for (int i = 0; i < 1000; ++i) {
        ASSERT_EQ(m.owner(1000), "alice@example.org");
        ASSERT_EQ(m.owner_group(100), "users@example.org");
        ASSERT_EQ(m.owner(4321), "4321");  // no name: remembered too
    }
    EXPECT_EQ(names.lookups, 3);
    // A user added in the name service shows after kMissTtl (an id without a name, or a
    // name service that failed, is asked again soon); one renamed, after kTtl.
    names.users[1000] = "alicia";
    names.users[4321] = "dave";
    clock.t += IdMap::kMissTtl - std::chrono::seconds(1);
    EXPECT_EQ(m.owner(4321), "4321");
    clock.t += std::chrono::seconds(1);
    EXPECT_EQ(m.owner(4321), "dave@example.org");
    EXPECT_EQ(names.lookups, 4);
    clock.t += IdMap::kTtl - IdMap::kMissTtl - std::chrono::seconds(1);
    EXPECT_EQ(m.owner(1000), "alice@example.org");
    clock.t += std::chrono::seconds(1);
    EXPECT_EQ(m.owner(1000), "alicia@example.org");
    EXPECT_EQ(names.lookups, 5);
    // Uids and gids are cached apart: gid 1000 is not uid 1000.
    EXPECT_EQ(m.owner_group(1000), "1000");
}

TEST(IdMap, TheCacheIsBounded) {
    FakeNames names;
    ManualClock clock;
    IdMap m("example.org", names, &clock);
    for (uint32_t id = 0; id < 3 * IdMap::kMaxCached; ++id) m.owner(100000 + id);
    EXPECT_EQ(names.lookups, int(3 * IdMap::kMaxCached));
    // past the bound the cache starts over: still correct, still answering
    EXPECT_EQ(m.owner(1000), "alice@example.org");
    int before = names.lookups;
    EXPECT_EQ(m.owner(1000), "alice@example.org");
    EXPECT_EQ(names.lookups, before);
}
