// RPCSEC_GSS pieces that need no Kerberos (the exchange itself is e2e_rpcsec_gss_test):
// the replay window (RFC 2203 §5.3.3.1) and the credential's XDR (§5.3.1).
#include <gtest/gtest.h>

#include "transport/rpc/auth/gss/contexts.h"
#include "transport/rpc/auth/gss/identity.h"
#include "transport/rpc/auth/gss/seq_window.h"
#include "xdr/rpcsec_gss_prot.h"

namespace nfsrdmad::rpc::gss {
namespace {

using V = SeqWindow::Verdict;

TEST(SeqWindowTest, EachNumberOnceWithinTheWindow) {
    SeqWindow w(8);
    EXPECT_EQ(w.accept(0), V::New);
    EXPECT_EQ(w.accept(0), V::Replay);
    EXPECT_EQ(w.accept(3), V::New);
    EXPECT_EQ(w.accept(1), V::New);  // late, still inside
    EXPECT_EQ(w.accept(1), V::Replay);
    EXPECT_EQ(w.accept(2), V::New);
    EXPECT_EQ(w.accept(3), V::Replay);
}

TEST(SeqWindowTest, TheWindowMovesUpAndForgetsWhatFallsOut) {
    SeqWindow w(8);
    EXPECT_EQ(w.accept(10), V::New);
    EXPECT_EQ(w.accept(2), V::TooOld);   // 10 - 2 = 8: out
    EXPECT_EQ(w.accept(3), V::New);      // 7 below: the oldest still in
    EXPECT_EQ(w.accept(12), V::New);     // moves by two
    EXPECT_EQ(w.accept(4), V::TooOld);   // fell out with the move
    EXPECT_EQ(w.accept(11), V::New);     // passed over, never seen
    EXPECT_EQ(w.accept(10), V::Replay);  // still inside, seen
    // A jump past the whole window forgets everything below it.
    EXPECT_EQ(w.accept(100), V::New);
    EXPECT_EQ(w.accept(93), V::New);
    EXPECT_EQ(w.accept(92), V::TooOld);
    EXPECT_EQ(w.accept(100), V::Replay);
}

TEST(SeqWindowTest, SlotsReusedAfterAMoveAreUnseen) {
    SeqWindow w(4);
    for (uint32_t s = 0; s < 4; ++s) EXPECT_EQ(w.accept(s), V::New);
    // 4..6 take the slots of 0..2: they must not look seen.
    EXPECT_EQ(w.accept(6), V::New);
    EXPECT_EQ(w.accept(4), V::New);
    EXPECT_EQ(w.accept(5), V::New);
    EXPECT_EQ(w.accept(3), V::Replay);  // still inside, seen before the move
    EXPECT_EQ(w.accept(2), V::TooOld);
}

TEST(SeqWindowTest, TheFullRangeOfNumbers) {
    SeqWindow w(4096);
    EXPECT_EQ(w.accept(0x80000000u), V::New);  // MAXSEQ itself
    EXPECT_EQ(w.accept(0x80000000u - 4095), V::New);
    EXPECT_EQ(w.accept(0x80000000u - 4096), V::TooOld);
    EXPECT_EQ(w.size(), 4096u);
}

TEST(RpcsecGssXdrTest, CredentialRoundTripAndRefusals) {
    namespace g = xdr::rpcsec_gss;
    const uint8_t handle[] = {1, 2, 3, 4, 5};
    g::rpc_gss_cred_t c(g::RPCSEC_GSS_VERS_1);
    c.vers_1().gss_proc = g::RPCSEC_GSS_DATA;
    c.vers_1().seq_num = 7;
    c.vers_1().service = g::rpc_gss_svc_integrity;
    c.vers_1().handle = handle;
    std::vector<uint8_t> out;
    xdr::Encoder e(out);
    g::xdr_encode(e, c);
    const std::vector<uint8_t> want = {0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 7, 0, 0,
                                       0, 2, 0, 0, 0, 5, 1, 2, 3, 4, 5, 0, 0, 0};
    EXPECT_EQ(out, want);
    xdr::Decoder d(out);
    g::rpc_gss_cred_t back;
    ASSERT_TRUE(g::xdr_decode(d, back));
    EXPECT_EQ(back.vers_1().seq_num, 7u);
    EXPECT_EQ(back.vers_1().handle.size(), 5u);

    std::vector<uint8_t> v2 = want;
    v2[3] = 2;  // version 2 does not exist
    xdr::Decoder d2(v2);
    EXPECT_FALSE(g::xdr_decode(d2, back));
    std::vector<uint8_t> svc = want;
    svc[15] = 4;  // no such service
    xdr::Decoder d3(svc);
    EXPECT_FALSE(g::xdr_decode(d3, back));
}

// The table's bounds: each makes room by letting go of the context that expires first
// among those it counts; handles are random and never repeat.
TEST(ContextTableTest, BoundsInAllPerPrincipalAndWhileIncomplete) {
    ContextTable t({/*max=*/4, /*per_principal=*/2, /*incomplete=*/1});
    const auto now = Clock::now();
    auto make = [] { return std::make_shared<Context>(64); };
    auto at = [&](int s) { return now + std::chrono::seconds(100 + s); };

    auto i1 = t.insert(make(), at(1), {}, false);
    auto i2 = t.insert(make(), at(2), {}, false);  // the one incomplete slot: i1 goes
    EXPECT_EQ(i1.size(), 16u);
    EXPECT_NE(i1, i2);
    EXPECT_FALSE(t.find(i1));
    EXPECT_TRUE(t.find(i2));

    auto a1 = t.insert(make(), at(30), "a@R", true);
    auto a2 = t.insert(make(), at(10), "a@R", true);
    auto a3 = t.insert(make(), at(20), "a@R", true);  // a's two: a2 (expires first) goes
    EXPECT_TRUE(t.find(a1));
    EXPECT_FALSE(t.find(a2));
    EXPECT_TRUE(t.find(a3));
    EXPECT_EQ(t.size(), 3u);

    // An incomplete context completes: counted for its principal from then on.
    ASSERT_TRUE(t.complete(i2, at(40), "b@R"));
    auto b2 = t.insert(make(), at(50), "b@R", true);
    EXPECT_EQ(t.size(), 4u);
    auto c1 = t.insert(make(), at(60), "c@R", true);  // full: the first to expire (a3) goes
    EXPECT_FALSE(t.find(a3));
    EXPECT_TRUE(t.find(a1) && t.find(i2) && t.find(b2) && t.find(c1));
    EXPECT_EQ(t.size(), 4u);

    t.erase(c1);
    EXPECT_FALSE(t.find(c1));
    auto gone = t.insert(make(), now - std::chrono::seconds(1), "d@R", true);
    EXPECT_FALSE(t.find(gone)) << "an expired context is found";
    EXPECT_EQ(t.size(), 3u);
}

TEST(GssIdentityTest, MachinePrincipalsAreHostOrNfsOfTheDefaultRealm) {
    EXPECT_TRUE(is_machine_principal("nfs/client.example.com@EXAMPLE.COM", "EXAMPLE.COM"));
    EXPECT_TRUE(is_machine_principal("host/client@EXAMPLE.COM", "EXAMPLE.COM"));
    EXPECT_FALSE(is_machine_principal("nfs/client@OTHER.ORG", "EXAMPLE.COM")) << "another realm";
    EXPECT_FALSE(is_machine_principal("nfs/client@EXAMPLE.COM", "")) << "no default realm";
    EXPECT_FALSE(is_machine_principal("alice@EXAMPLE.COM", "EXAMPLE.COM"));
    EXPECT_FALSE(is_machine_principal("root/client@EXAMPLE.COM", "EXAMPLE.COM"));
    EXPECT_FALSE(is_machine_principal("nfs/a/b@EXAMPLE.COM", "EXAMPLE.COM")) << "3 components";
    EXPECT_FALSE(is_machine_principal("nfs/@EXAMPLE.COM", "EXAMPLE.COM")) << "no host";
    EXPECT_FALSE(is_machine_principal("nfs\\/x@EXAMPLE.COM", "EXAMPLE.COM")) << "quoted slash";
    EXPECT_FALSE(is_machine_principal("nfs/client", "EXAMPLE.COM")) << "no realm";
}

TEST(GssIdentityTest, LocalUserElseRootForMachinesElseAnonymous) {
    // A local user comes from NSS (root exists on every system).
    auto root_user = identity_for("admin@EXAMPLE.COM", "root", "EXAMPLE.COM");
    ASSERT_TRUE(root_user.has_value());
    EXPECT_EQ(root_user->uid, 0u);
    EXPECT_FALSE(identity_for("x@EXAMPLE.COM", "no-such-user-nfsrdmad", "EXAMPLE.COM"))
        << "a local name NSS does not know: anonymous";
    auto machine = identity_for("host/client@EXAMPLE.COM", "", "EXAMPLE.COM");
    ASSERT_TRUE(machine.has_value());
    EXPECT_EQ(machine->uid, 0u);
    EXPECT_EQ(machine->gid, 0u);
    EXPECT_TRUE(machine->gids.empty());
    EXPECT_FALSE(identity_for("host/client@OTHER.ORG", "", "EXAMPLE.COM"));
    EXPECT_FALSE(identity_for("bob@EXAMPLE.COM", "", "EXAMPLE.COM"));
}

}  // namespace
}  // namespace nfsrdmad::rpc::gss
