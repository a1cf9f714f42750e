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
    std::optional<std::string> user_name(uint32_t uid) const override { return find(users, uid); }
    std::optional<std::string> group_name(uint32_t gid) const override { return find(groups, gid); }
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
