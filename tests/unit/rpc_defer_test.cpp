// Calls put off (rpc::Outcome::Later, rpc::Deferral): a call held up by something that
// clears by itself (an NFSv4.1 delegation being recalled) is run again by its transport a
// little later instead of being answered with a wait-and-retry status at once: the delays
// double, the last run answers, a bound limits calls put off at once, an RPCSEC_GSS-free
// flavor is needed, the duplicate request cache does not take a run put off for a
// retransmission in progress, and NFSv3 puts off exactly the calls a delegation holds up.
#include "tests/unit/nfs3_calls_util.h"
#include "xdr/rpc_prot.h"

using namespace nfsrdmad;
using namespace nfsrdmad::testing;
namespace x = xdr::rpc;

namespace {

constexpr uint32_t kHeldUp = 10008;  // as NFS3ERR_JUKEBOX

// Program 400201: proc 0 (idempotent) and proc 1 (not) answer kHeldUp and Later while
// `hold`, else 7; proc 2 answers kHeldUp and Later always.
class Program : public rpc::Program {
  public:
    uint32_t number() const override { return 400201; }
    std::vector<uint32_t> versions() const override { return {1}; }
    rpc::ProcedureInfo procedure(uint32_t, uint32_t proc) const override {
        rpc::ProcedureInfo i{proc <= 2, proc != 1, "p"};
        i.status_first = true;
        return i;
    }
    rpc::Outcome call(rpc::CallContext& ctx) override {
        ++calls;
        if (ctx.may_defer) ++deferrable;
        if (hold || ctx.header.proc == 2) {
            ctx.res.put_u32(kHeldUp);
            return rpc::Outcome::later();
        }
        ctx.res.put_u32(7);
        return rpc::Outcome::ok();
    }
    bool hold = true;
    int calls = 0, deferrable = 0;
};

struct Defer : OneProgram<Program> {
    std::vector<uint8_t> message(uint32_t proc, uint32_t flavor = 1) {
        return call(++xid, 400201, 1, proc, {}, flavor);
    }
    std::optional<rpc::Reply> dispatch(const std::vector<uint8_t>& bytes, rpc::Deferral* defer) {
        rpc::Message m;
        m.bytes = bytes;
        return d.dispatch(m, peer, alloc, nullptr, defer);
    }
};

}  // namespace

TEST_F(Defer, AHeldUpCallIsPutOffThenAnsweredWhenItRunsAgain) {
    const auto bytes = message(0);
    rpc::Deferral defer;
    EXPECT_FALSE(dispatch(bytes, &defer));
    EXPECT_EQ(defer.after, rpc::Dispatcher::kFirstDeferral);
    EXPECT_EQ(defer.attempt, 1u);
    EXPECT_EQ(d.counters().deferred.load(), 1u);
    EXPECT_EQ(d.deferred_now(), 1u);
    EXPECT_EQ(d.counters().calls.load(), 1u);
    EXPECT_EQ(recorded(), 0u);  // counted when answered
    prog->hold = false;
    auto r = dispatch(bytes, &defer);
    ASSERT_TRUE(r);
    EXPECT_EQ(defer.after.count(), 0);
    EXPECT_EQ(word_at(r->bytes, 24), 7u);
    EXPECT_EQ(d.counters().calls.load(), 1u);  // one call, run twice
    EXPECT_EQ(recorded(), 1u);
    // Its place under the bound is the transport's until it lets go of the call.
    EXPECT_EQ(d.deferred_now(), 1u);
    defer = {};
    EXPECT_EQ(d.deferred_now(), 0u);
}

TEST_F(Defer, TheDelaysDoubleAndTheLastRunAnswersTheHoldUp) {
    const auto bytes = message(0);
    rpc::Deferral defer;
    std::chrono::milliseconds total{0};
    for (unsigned i = 0; i < rpc::Dispatcher::kDeferAttempts; ++i) {
        ASSERT_FALSE(dispatch(bytes, &defer)) << "run " << i;
        EXPECT_EQ(defer.after, rpc::Dispatcher::kFirstDeferral * (1u << i));
        total += defer.after;
    }
    EXPECT_EQ(total.count(), 1020);
    auto r = dispatch(bytes, &defer);
    ASSERT_TRUE(r) << "never answered";
    EXPECT_EQ(accept_stat(*r), uint32_t(x::SUCCESS));
    EXPECT_EQ(word_at(r->bytes, 24), kHeldUp);
    EXPECT_EQ(prog->calls, int(rpc::Dispatcher::kDeferAttempts) + 1);
    EXPECT_EQ(prog->deferrable, int(rpc::Dispatcher::kDeferAttempts));  // not the last run
    EXPECT_EQ(d.counters().deferred.load(), rpc::Dispatcher::kDeferAttempts);
    EXPECT_EQ(d.counters().defer_gave_up.load(), 1u);
    EXPECT_EQ(d.counters().system_errors.load(), 0u);
    EXPECT_EQ(recorded(), 1u);
}

TEST_F(Defer, WithoutATransportThatRunsItAgainTheHoldUpIsAnsweredAtOnce) {
    auto r = dispatch(message(0), nullptr);  // UDP, a test client
    ASSERT_TRUE(r);
    EXPECT_EQ(word_at(r->bytes, 24), kHeldUp);
    EXPECT_EQ(prog->deferrable, 0);
    EXPECT_EQ(d.counters().deferred.load(), 0u);
    // AUTH_NONE keeps no state either: put off.
    rpc::Deferral defer;
    EXPECT_FALSE(dispatch(message(0, 0), &defer));
}

TEST_F(Defer, CallsPutOffAtOnceAreBounded) {
    std::vector<rpc::Deferral> waiting(rpc::Dispatcher::kMaxDeferred);
    for (auto& w : waiting) ASSERT_FALSE(dispatch(message(2), &w));
    EXPECT_EQ(d.deferred_now(), rpc::Dispatcher::kMaxDeferred);
    // One more is answered now, its status as the procedure gave it.
    rpc::Deferral more;
    auto r = dispatch(message(2), &more);
    ASSERT_TRUE(r);
    EXPECT_EQ(word_at(r->bytes, 24), kHeldUp);
    EXPECT_EQ(d.counters().defer_full.load(), 1u);
    EXPECT_EQ(d.counters().defer_gave_up.load(), 0u);
    EXPECT_FALSE(more.slot);
    // A call already waiting keeps its place when it is put off again.
    const auto again = message(2);
    EXPECT_FALSE(dispatch(again, &waiting[0]));
    EXPECT_EQ(d.counters().defer_full.load(), 1u);
    // Places come back as calls are let go of (answered, or their connection gone).
    waiting.pop_back();
    rpc::Deferral last;
    EXPECT_FALSE(dispatch(message(2), &last));
    EXPECT_EQ(d.deferred_now(), rpc::Dispatcher::kMaxDeferred);
    waiting.clear();
    last = {};
    EXPECT_EQ(d.deferred_now(), 0u);
}

TEST_F(Defer, ANonIdempotentCallPutOffIsNotTakenForOneInProgress) {
    const auto bytes = message(1);
    rpc::Deferral defer;
    EXPECT_FALSE(dispatch(bytes, &defer));
    // Run again, it runs (the cache entry was let go), and is put off again.
    EXPECT_FALSE(dispatch(bytes, &defer));
    EXPECT_EQ(prog->calls, 2);
    prog->hold = false;
    auto r = dispatch(bytes, &defer);
    ASSERT_TRUE(r);
    EXPECT_EQ(word_at(r->bytes, 24), 7u);
    // A retransmission after the answer is a replay of it, not a third run.
    auto replay = dispatch(bytes, nullptr);
    ASSERT_TRUE(replay);
    EXPECT_EQ(word_at(replay->bytes, 24), 7u);
    EXPECT_EQ(prog->calls, 3);
    EXPECT_EQ(d.counters().cache_replays.load(), 1u);
}

namespace {
// NFSv4.1's delegations as NFSv3 sees them: one file, a write delegation being recalled
// (or a CB_GETATTR out) until `returned`.
class Recalling : public nfs::DelegationBreaker {
  public:
    bool any() const override { return !returned; }
    bool conflict(const vfs::FileHandle& file, bool) override { return !returned && file == held; }
    bool write_delegated(const vfs::FileHandle& file) const override {
        return !returned && file == held;
    }
    HeldAttrs held_attrs(const vfs::FileHandle& file) override {
        return {write_delegated(file), std::nullopt};
    }
    vfs::FileHandle held;
    bool returned = false;
};
struct Nfs3Defer : Nfs3Fixture {
    static constexpr uint32_t kWrite = 7;
    std::vector<uint8_t> write_args(const std::string& name) {
        auto a = fh_args(name);
        put(a, 0);
        put(a, 0);  // offset
        put(a, 4);  // count
        put(a, 2);  // FILE_SYNC
        put_opaque(a, std::vector<uint8_t>{'a', 'b', 'c', 'd'});
        return a;
    }
};
}  // namespace

// RFC 1813 §2.6: NFS3ERR_JUKEBOX makes the Linux client wait 5 s. A call a delegation holds
// up is put off instead, and answered once the holder is done; a call held up by anything
// else (here a missing file) is answered as before.
TEST_F(Nfs3Defer, CallsADelegationHoldsUpArePutOffNotAnsweredJukebox) {
    ASSERT_EQ(::chmod((base + "/export/file").c_str(), 0666), 0);  // the caller is uid 1000
    auto recalling = std::make_shared<Recalling>();
    recalling->held = vfs::FileHandle::from(handle("file")).value();
    v3->set_delegations(recalling);
    auto send = [&](uint32_t proc, const std::vector<uint8_t>& args, rpc::Deferral& defer) {
        rpc::Message m;
        const auto bytes = call(++xid, kNfs, 3, proc, args);
        m.bytes = bytes;
        return d.dispatch(m, peer, alloc, nullptr, &defer);
    };
    rpc::Deferral getattr, read, write;
    EXPECT_FALSE(send(kGetattr, fh_args("file"), getattr)) << "GETATTR answered";
    EXPECT_FALSE(send(kRead, read_args("file", 0, 16), read)) << "READ answered";
    const auto w = write_args("file");
    EXPECT_FALSE(send(kWrite, w, write)) << "WRITE answered";
    EXPECT_EQ(d.counters().deferred.load(), 3u);
    // Another file is not held up.
    rpc::Deferral other;
    auto r = send(kGetattr, fh_args("."), other);
    ASSERT_TRUE(r);
    EXPECT_EQ(nfsstat(*r), 0u);
    // Nor is a call that fails for its own reasons.
    r = send(kWrite, write_args("."), other);  // a directory
    ASSERT_TRUE(r);
    EXPECT_NE(nfsstat(*r), 0u);
    EXPECT_NE(nfsstat(*r), 10008u);
    EXPECT_EQ(d.counters().deferred.load(), 3u);
    // The holder is done: each runs again (here as a new message of the same call, which
    // the procedure cannot tell from the transport's rerun) and is answered.
    recalling->returned = true;
    r = send(kGetattr, fh_args("file"), getattr);
    ASSERT_TRUE(r);
    EXPECT_EQ(nfsstat(*r), 0u);
    r = send(kWrite, w, write);
    ASSERT_TRUE(r);
    EXPECT_EQ(nfsstat(*r), 0u);
    r = send(kRead, read_args("file", 0, 16), read);
    ASSERT_TRUE(r);
    EXPECT_EQ(nfsstat(*r), 0u);
}
