// NSM upkeep of NLM (nfs/nlm/nsm_notify.h, Services::housekeep): reboot notices sent
// again until each host answers, idle hosts forgotten with SM_UNMON and their record for
// notification dropped. Time is passed in; calls go to a fake CallbackSender whose
// results the test decides.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>

#include <filesystem>

#include "nfs/nlm/nsm_notify.h"
#include "nfs/nlm/services.h"
#include "xdr/runtime/xdr.h"

namespace nfsrdmad::nfs::nlm {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

struct FakeSender : rpc::CallbackSender {
    struct Sent {
        rpc::OutgoingCall call;
        std::function<void(rpc::CallbackResult)> done;
    };
    std::vector<Sent> sent;
    size_t room = 1000;  // calls it takes before refusing (its bound)
    bool call(rpc::OutgoingCall c, std::function<void(rpc::CallbackResult)> done) override {
        if (room == 0) return false;
        --room;
        sent.push_back({std::move(c), std::move(done)});
        return true;
    }
    std::string address(size_t i) const {
        char buf[INET_ADDRSTRLEN] = "";
        inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(&sent[i].call.peer)->sin_addr, buf,
                  sizeof buf);
        return buf;
    }
    // The mon_name a statd call (SM_NOTIFY, SM_MON, SM_UNMON) starts with.
    std::string mon_name(size_t i) const {
        xdr::Decoder d(sent[i].call.args);
        auto s = d.get_string(1024);
        return d.ok() ? std::string(s) : "?";
    }
    void answer(size_t i, bool ok) {
        rpc::CallbackResult r;
        r.ok = ok;
        if (!ok) r.error = "connection refused";
        sent[i].done(std::move(r));
    }
};

TEST(NlmNsm, RebootNoticesAreSentAgainUntilAnswered) {
    const Clock::time_point t0 = Clock::now();
    RebootNotices n({"10.0.0.1", "10.0.0.2", "not an address"}, "server", 7, t0);
    EXPECT_EQ(n.pending(), 2u);  // the unparsable one is dropped
    FakeSender s;
    ASSERT_EQ(n.send_due(s, t0), 2u);
    EXPECT_EQ(s.sent[0].call.prog, 100024u);
    EXPECT_EQ(s.sent[0].call.proc, 6u);  // SM_NOTIFY
    EXPECT_EQ(s.mon_name(0), "server");
    {
        xdr::Decoder d(s.sent[1].call.args);
        (void)d.get_string(1024);
        EXPECT_EQ(d.get_i32(), 7);  // state
    }
    EXPECT_EQ(n.send_due(s, t0 + 1s), 0u) << "sent again while in flight";
    s.answer(0, true);   // 10.0.0.1 heard it
    s.answer(1, false);  // 10.0.0.2 is down
    EXPECT_EQ(n.pending(), 1u);
    // Asked again from 2 s after the failure on, doubling; the retry is due by then.
    const Clock::time_point later = Clock::now() + RebootNotices::kFirstRetry;
    ASSERT_EQ(n.send_due(s, later), 1u);
    EXPECT_EQ(s.address(2), "10.0.0.2");
    // The sender's bound refuses it: it stays owed and goes in a later round.
    s.answer(2, false);
    s.room = 0;
    EXPECT_EQ(n.send_due(s, Clock::now() + 10s), 0u);
    EXPECT_EQ(n.pending(), 1u);
    s.room = 10;
    ASSERT_EQ(n.send_due(s, Clock::now() + 10s), 1u);
    s.answer(3, true);
    EXPECT_EQ(n.pending(), 0u);
    EXPECT_EQ(n.send_due(s, Clock::now() + 60s), 0u);
}

TEST(NlmNsm, RebootNoticesAreGivenUpOnAfterFifteenMinutes) {
    const Clock::time_point t0 = Clock::now();
    RebootNotices n({"10.0.0.3"}, "server", 9, t0);
    FakeSender s;
    ASSERT_EQ(n.send_due(s, t0), 1u);
    s.answer(0, false);
    EXPECT_EQ(n.pending(), 1u);
    EXPECT_EQ(n.send_due(s, t0 + RebootNotices::kGiveUp), 0u);
    EXPECT_EQ(n.pending(), 0u);
}

class NlmUpkeep : public ::testing::Test {
  protected:
    NlmUpkeep() {
        dir_ = std::filesystem::temp_directory_path() /
               ("nlm_nsm_test." + std::to_string(::getpid()) + "." +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
        std::filesystem::remove_all(dir_);
        std::filesystem::create_directories(dir_);
        auto store = vfs::RecoveryStore::open(dir_, 1, nullptr, vfs::RecoveryStore::kNlmHostsFile);
        EXPECT_TRUE(store);
        Options o;
        o.hosts_store = std::move(*store);
        svc_ = std::make_unique<Services>(nullptr, o);
        svc_->set_callbacks(&sender_);
    }
    ~NlmUpkeep() override { std::filesystem::remove_all(dir_); }

    static rpc::Peer peer(const char* ip) {
        rpc::Peer p;
        auto* in = reinterpret_cast<sockaddr_in*>(&p.addr);
        in->sin_family = AF_INET;
        inet_pton(AF_INET, ip, &in->sin_addr);
        p.len = sizeof *in;
        return p;
    }
    // What the record of hosts to notify holds (as the next boot would read it).
    std::vector<std::string> recorded() {
        auto s = vfs::RecoveryStore::open(dir_, 2, nullptr, vfs::RecoveryStore::kNlmHostsFile);
        EXPECT_TRUE(s);
        return s ? (*s)->previous() : std::vector<std::string>{};
    }
    std::vector<size_t> calls_of(uint32_t proc) const {
        std::vector<size_t> out;
        for (size_t i = 0; i < sender_.sent.size(); ++i)
            if (sender_.sent[i].call.proc == proc) out.push_back(i);
        return out;
    }

    std::filesystem::path dir_;
    FakeSender sender_;
    std::unique_ptr<Services> svc_;
};

// A host that took a monitored lock is watched (SM_MON) and recorded; once it holds
// nothing and has been idle past kHostExpire, the sweep forgets it: SM_UNMON to statd,
// the record dropped. While it holds a lock, or a call has it pinned, it stays.
TEST_F(NlmUpkeep, IdleHostsAreUnmonitoredAndUnrecorded) {
    const Clock::time_point t0 = Clock::now();
    auto id = svc_->host_id("client-a", "10.0.0.7");
    ASSERT_TRUE(id);
    vfs::state::FileKey file;
    file.fsid = 1;
    auto owner = *vfs::state::StateOwner::nlm(*id, 1, {});
    const vfs::state::Lock lk{{0, 9}, vfs::state::LockType::Write};
    ASSERT_TRUE(svc_->locks.lock(file, owner, lk));
    const rpc::Peer p = peer("10.0.0.7");
    svc_->monitor(&p, "client-a", 1);
    ASSERT_EQ(calls_of(2).size(), 1u);  // SM_MON
    EXPECT_EQ(sender_.mon_name(calls_of(2)[0]), "10.0.0.7");  // the address, as lockd
    EXPECT_EQ(recorded(), std::vector<std::string>{"10.0.0.7"});
    svc_->hosts.unpin(*id, t0);

    // Holding a lock: kept however long.
    (void)svc_->housekeep(t0 + Services::kHostExpire + 1s);
    EXPECT_TRUE(svc_->hosts.find("client-a", "10.0.0.7"));
    EXPECT_TRUE(calls_of(3).empty());
    // Unlocked, but used recently: kept.
    ASSERT_TRUE(svc_->locks.unlock(file, owner, lk.range));
    (void)svc_->housekeep(t0 + Services::kHostExpire - 1s);
    EXPECT_TRUE(svc_->hosts.find("client-a", "10.0.0.7"));
    // Idle past kHostExpire: SM_UNMON, forgotten, no longer recorded.
    (void)svc_->housekeep(t0 + Services::kHostExpire + 1s);
    EXPECT_FALSE(svc_->hosts.find("client-a", "10.0.0.7"));
    ASSERT_EQ(calls_of(3).size(), 1u);
    const size_t unmon = calls_of(3)[0];
    EXPECT_EQ(sender_.sent[unmon].call.prog, 100024u);
    EXPECT_EQ(sender_.address(unmon), "127.0.0.1");
    EXPECT_EQ(sender_.mon_name(unmon), "10.0.0.7");
    EXPECT_TRUE(recorded().empty());
    // Back again: monitored again.
    auto again = svc_->host_id("client-a", "10.0.0.7");
    ASSERT_TRUE(again);
    svc_->monitor(&p, "client-a", 1);
    EXPECT_EQ(calls_of(2).size(), 2u);
    svc_->hosts.unpin(*again);
}

// Two machines that give themselves one name (cloned VMs) lock from two addresses with
// byte-identical owners (svid 1, oh "1@localhost", as the Linux client makes them): two
// hosts, so each one's lock keeps the other out (hosts.h). statd watches both addresses;
// one's reboot frees its own locks only, and a LOCK at a new NSM state from one does not
// free the other's.
TEST_F(NlmUpkeep, OneNameFromTwoAddressesIsTwoHosts) {
    const std::vector<uint8_t> oh{'1', '@', 'l', 'o', 'c', 'a', 'l', 'h', 'o', 's', 't'};
    auto a = svc_->host_id("localhost", "10.0.0.1");
    auto b = svc_->host_id("localhost", "10.0.0.2");
    ASSERT_TRUE(a && b);
    ASSERT_NE(*a, *b);
    vfs::state::FileKey file;
    file.fsid = 1;
    const auto owner_a = *vfs::state::StateOwner::nlm(*a, 1, oh);
    const auto owner_b = *vfs::state::StateOwner::nlm(*b, 1, oh);
    const vfs::state::Lock lk{{0, 9}, vfs::state::LockType::Write};
    auto got = svc_->locks.lock(file, owner_a, lk);
    ASSERT_TRUE(got);
    ASSERT_FALSE(got->denied);
    got = svc_->locks.lock(file, owner_b, lk);
    ASSERT_TRUE(got);
    EXPECT_TRUE(got->denied) << "the second machine got the first one's lock";
    const rpc::Peer pa = peer("10.0.0.1"), pb = peer("10.0.0.2");
    svc_->monitor(&pa, "localhost", 1);
    svc_->monitor(&pb, "localhost", 1);
    ASSERT_EQ(calls_of(2).size(), 2u);  // SM_MON of each address
    EXPECT_EQ(sender_.mon_name(calls_of(2)[0]), "10.0.0.1");
    EXPECT_EQ(sender_.mon_name(calls_of(2)[1]), "10.0.0.2");
    // b locks at a new NSM state (it rebooted): its earlier locks would go; a's stay.
    svc_->check_state("localhost", "10.0.0.2", 2);
    EXPECT_EQ(svc_->locks.lock_count(owner_a.client()), 1u);
    // statd: 10.0.0.1 rebooted. a's lock goes, b can lock.
    svc_->nsm_rebooted("10.0.0.1", 5);
    EXPECT_EQ(svc_->locks.lock_count(owner_a.client()), 0u);
    svc_->hosts.unpin(*a);
    svc_->hosts.unpin(*b);
    got = svc_->locks.lock(file, owner_b, lk);
    ASSERT_TRUE(got);
    EXPECT_FALSE(got->denied);
}

// Two names at one address (containers behind one address): statd is asked to watch the
// address once, and told to stop once, when the last of them has gone idle.
TEST_F(NlmUpkeep, OneWatchPerAddressWhateverItsHosts) {
    const Clock::time_point t0 = Clock::now();
    auto a = svc_->host_id("one", "10.0.0.9");
    auto b = svc_->host_id("two", "10.0.0.9");
    ASSERT_TRUE(a && b);
    const rpc::Peer p = peer("10.0.0.9");
    svc_->monitor(&p, "one", 1);
    svc_->monitor(&p, "two", 1);
    ASSERT_EQ(calls_of(2).size(), 1u) << "one SM_MON per address";
    EXPECT_EQ(sender_.mon_name(calls_of(2)[0]), "10.0.0.9");
    vfs::state::FileKey file;
    file.fsid = 1;
    auto owner_b = *vfs::state::StateOwner::nlm(*b, 1, {});
    const vfs::state::Lock lk{{0, 9}, vfs::state::LockType::Write};
    ASSERT_TRUE(svc_->locks.lock(file, owner_b, lk));
    svc_->hosts.unpin(*a, t0);
    svc_->hosts.unpin(*b, t0);
    // "one" goes idle; "two" holds a lock: the address stays watched.
    (void)svc_->housekeep(t0 + Services::kHostExpire + 1s);
    EXPECT_FALSE(svc_->hosts.find("one", "10.0.0.9"));
    EXPECT_TRUE(calls_of(3).empty()) << "SM_UNMON while another host there is watched";
    // "two" lets go: one SM_UNMON of the address.
    ASSERT_TRUE(svc_->locks.unlock(file, owner_b, lk.range));
    (void)svc_->housekeep(t0 + Services::kHostExpire + 1s);
    EXPECT_FALSE(svc_->hosts.find("two", "10.0.0.9"));
    ASSERT_EQ(calls_of(3).size(), 1u);
    EXPECT_EQ(sender_.mon_name(calls_of(3)[0]), "10.0.0.9");
}

// A client on the server's own host shares its statd: the daemon's restart notice to that
// host's address comes back as "10.0.0.1 rebooted" at the daemon's own NSM state (statd
// tells every watcher of the address, the client's lockd's watch of its server too). The
// lock the client just reclaimed stays; a notice at another state frees it.
TEST_F(NlmUpkeep, OurOwnRestartNoticeEchoedBackFreesNothing) {
    const Clock::time_point t0 = Clock::now();
    svc_->set_reboot_notices(
        std::make_unique<RebootNotices>(std::vector<std::string>{"10.0.0.1"}, "server", 1445, t0));
    auto id = svc_->host_id("server", "10.0.0.1");
    ASSERT_TRUE(id);
    vfs::state::FileKey file;
    file.fsid = 1;
    auto owner = *vfs::state::StateOwner::nlm(*id, 1, {});
    const vfs::state::Lock lk{{0, 9}, vfs::state::LockType::Write};
    ASSERT_TRUE(svc_->locks.lock(file, owner, lk));  // reclaimed
    const rpc::Peer p = peer("10.0.0.1");
    svc_->monitor(&p, "server", 3);  // the client's own NSM state
    svc_->hosts.unpin(*id, t0);
    svc_->nsm_rebooted("10.0.0.1", 1445);
    EXPECT_EQ(svc_->locks.lock_count(owner.client()), 1u) << "our own notice freed the lock";
    svc_->nsm_rebooted("10.0.0.1", 5);
    EXPECT_EQ(svc_->locks.lock_count(owner.client()), 0u);
}

// FREE_ALL (or statd's reboot callback) drops the host's record as well: nothing of it
// is left to reclaim.
TEST_F(NlmUpkeep, FreeAllDropsTheRecord) {
    auto id = svc_->host_id("client-b", "10.0.0.8");
    ASSERT_TRUE(id);
    const rpc::Peer p = peer("10.0.0.8");
    svc_->monitor(&p, "client-b", 1);
    svc_->hosts.unpin(*id);
    EXPECT_EQ(recorded(), std::vector<std::string>{"10.0.0.8"});
    (void)svc_->free_all("client-b", "10.0.0.8");
    EXPECT_TRUE(recorded().empty());
}

// The daemon's reboot notices are driven by housekeep: sent again while owed, and the
// upkeep asks to come back soon until none is owed.
TEST_F(NlmUpkeep, HousekeepSendsOwedNotices) {
    svc_->set_reboot_notices(std::make_unique<RebootNotices>(std::vector<std::string>{"10.0.0.9"},
                                                             "server", 3, Clock::now()));
    EXPECT_EQ(svc_->housekeep(), std::chrono::milliseconds(1000));
    ASSERT_EQ(calls_of(6).size(), 1u);
    sender_.answer(calls_of(6)[0], false);
    (void)svc_->housekeep(Clock::now() + RebootNotices::kFirstRetry);
    ASSERT_EQ(calls_of(6).size(), 2u);
    sender_.answer(calls_of(6)[1], true);
    EXPECT_GT(svc_->housekeep(), std::chrono::milliseconds(1000));
    EXPECT_EQ(svc_->reboot_notices_pending(), 0u);
}

}  // namespace
}  // namespace nfsrdmad::nfs::nlm
