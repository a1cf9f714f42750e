// Calls put off (rpc::Outcome::Later, rpc::Deferral): a call held up by something that
// clears by itself (an NFSv4.1 delegation being recalled) is run again by its transport a
// little later instead of being answered with a wait-and-retry status at once: the delays
// double up to a longest, the last run answers, a bound limits calls put off at once, a flavor with
// state (RPCSEC_GSS) is not asked again and keeps its decrypted arguments within a bound of their
// own, the duplicate request cache does not take a run put off for a retransmission in
// progress, and NFSv3 puts off exactly the calls a delegation holds up.
#include <atomic>
#include <chrono>
#include <set>
#include <thread>

#include "tests/unit/nfs3_calls_util.h"
#include "xdr/rpc_prot.h"

using namespace nfsrdmad;
using namespace nfsrdmad::testing;
namespace x = xdr::rpc;

namespace {

constexpr uint32_t kHeldUp = 10008;  // as NFS3ERR_JUKEBOX

// Program 400201: proc 0 (idempotent) and proc 1 (not) answer kHeldUp and Later while
// `hold`, else 7; proc 2 answers kHeldUp and Later always; proc 3 as proc 0, but answers
// the first word of its arguments instead of 7; proc 4 asks to be put off
// (CallContext::put_off) before it answers, as a procedure that must undo what it began.
class Program : public rpc::Program {
  public:
    uint32_t number() const override { return 400201; }
    std::vector<uint32_t> versions() const override { return {1}; }
    rpc::ProcedureInfo procedure(uint32_t, uint32_t proc) const override {
        rpc::ProcedureInfo i{proc <= 4, proc != 1, "p"};
        i.status_first = true;
        return i;
    }
    rpc::Outcome call(rpc::CallContext& ctx) override {
        ++calls;
        if (ctx.may_defer) ++deferrable;
        if (ctx.header.proc == 4) {
            if (ctx.put_off()) {
                ++undone;  // what it began is undone here
                return rpc::Outcome::later();
            }
            ctx.res.put_u32(kHeldUp);
            return rpc::Outcome::later();
        }
        if (hold || ctx.header.proc == 2) {
            ctx.res.put_u32(kHeldUp);
            return rpc::Outcome::later();
        }
        if (ctx.header.proc == 3) {
            const uint32_t v = ctx.args.get_u32();
            if (!ctx.args.ok()) return rpc::Outcome::garbage();
            ctx.res.put_u32(v);
        } else {
            ctx.res.put_u32(7);
        }
        return rpc::Outcome::ok();
    }
    bool hold = true;
    int calls = 0, deferrable = 0, undone = 0;
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

TEST_F(Defer, TheDelaysDoubleUpToTheLongestAndTheLastRunAnswersTheHoldUp) {
    const auto bytes = message(0);
    rpc::Deferral defer;
    std::chrono::milliseconds total{0};
    for (unsigned i = 0; i < rpc::Dispatcher::kDeferAttempts; ++i) {
        ASSERT_FALSE(dispatch(bytes, &defer)) << "run " << i;
        EXPECT_EQ(defer.after, std::min(rpc::Dispatcher::kFirstDeferral * (1u << i),
                                        rpc::Dispatcher::kLongestDeferral));
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

// A wake-up (rpc/deferred_wakes.h) runs a call before its timer: if it is still held up
// (another file's delegation ended), the run is not one of its kDeferAttempts and it waits
// the step its timer was on again, for the timer alone; its time is still counted from its
// first put-off.
TEST_F(Defer, AWokenRunUsesUpNoRunAndWaitsItsStepAgain) {
    const auto bytes = message(0);
    rpc::Deferral defer;
    ASSERT_FALSE(dispatch(bytes, &defer));
    EXPECT_TRUE(defer.wakeable);
    ASSERT_FALSE(dispatch(bytes, &defer));
    EXPECT_EQ(defer.attempt, 2u);
    EXPECT_EQ(defer.after, rpc::Dispatcher::kFirstDeferral * 2);
    EXPECT_TRUE(defer.wakeable);
    const auto until = defer.until;
    for (int i = 0; i < 40; ++i) {
        defer.woken = true;
        ASSERT_FALSE(dispatch(bytes, &defer)) << "woken run " << i;
        EXPECT_EQ(defer.attempt, 2u);
        // What is left of the step it was woken in (no more).
        EXPECT_LE(defer.after, rpc::Dispatcher::kFirstDeferral * 2);
        EXPECT_GE(defer.after.count(), 1);
        EXPECT_FALSE(defer.woken);
        EXPECT_EQ(defer.until, until);
        // Its timer runs it next, not another wake-up.
        EXPECT_FALSE(defer.wakeable);
    }
    // Woken late in its step, it waits only the rest of it.
    defer.due = std::chrono::steady_clock::now() + std::chrono::milliseconds(2);
    defer.woken = true;
    ASSERT_FALSE(dispatch(bytes, &defer));
    EXPECT_LE(defer.after.count(), 2);
    ASSERT_FALSE(dispatch(bytes, &defer));  // the timer's run takes the next step
    EXPECT_EQ(defer.attempt, 3u);
    EXPECT_EQ(defer.after, rpc::Dispatcher::kFirstDeferral * 4);
    EXPECT_TRUE(defer.wakeable);
    EXPECT_EQ(d.counters().defer_gave_up.load(), 0u);
    prog->hold = false;
    auto r = dispatch(bytes, &defer);
    ASSERT_TRUE(r);
    EXPECT_EQ(word_at(r->bytes, 24), 7u);
    EXPECT_EQ(d.counters().calls.load(), 1u);
}

// Woken in its last step, a call is still put off: the timer's last run is the one that
// answers.
TEST_F(Defer, AWokenRunInTheLastStepIsPutOffStill) {
    const auto bytes = message(0);
    rpc::Deferral defer;
    for (unsigned i = 0; i < rpc::Dispatcher::kDeferAttempts; ++i)
        ASSERT_FALSE(dispatch(bytes, &defer)) << "run " << i;
    defer.woken = true;
    ASSERT_FALSE(dispatch(bytes, &defer)) << "a wake-up used up the last run";
    EXPECT_EQ(d.counters().defer_gave_up.load(), 0u);
    auto r = dispatch(bytes, &defer);  // the timer's
    ASSERT_TRUE(r);
    EXPECT_EQ(word_at(r->bytes, 24), kHeldUp);
    EXPECT_EQ(d.counters().defer_gave_up.load(), 1u);
}

// A run notes the wake-ups so far, so that its transport can tell one that came while it
// ran (before the call was registered to be woken) and run it again at once.
TEST_F(Defer, ARunNotesTheWakeUpsBeforeIt) {
    const auto bytes = message(0);
    rpc::Deferral defer;
    const auto& wakes = d.deferred_wakes();
    wakes->wake_all();
    wakes->wake_all();
    ASSERT_FALSE(dispatch(bytes, &defer));
    EXPECT_EQ(defer.wakes_seen, wakes->generation());
    wakes->wake_all();
    EXPECT_NE(defer.wakes_seen, wakes->generation());
}

TEST_F(Defer, ACallGivesUpOnceItsTimeIsUpWhateverRunsItHasLeft) {
    const auto bytes = message(0);
    rpc::Deferral defer;
    ASSERT_FALSE(dispatch(bytes, &defer));
    EXPECT_GE(defer.until - std::chrono::steady_clock::now(),
              rpc::Dispatcher::kDeferBudget - std::chrono::milliseconds(100));
    EXPECT_EQ(rpc::Dispatcher::kDeferBudget.count(), 1020);
    // Near its end, the step is cut to what is left.
    defer.until = std::chrono::steady_clock::now() + std::chrono::milliseconds(2);
    ASSERT_FALSE(dispatch(bytes, &defer));
    EXPECT_GE(defer.after.count(), 1);
    EXPECT_LE(defer.after.count(), 2);
    // Past it, the run answers the hold-up, woken or not.
    defer.until = std::chrono::steady_clock::now() - std::chrono::milliseconds(1);
    defer.woken = true;
    auto r = dispatch(bytes, &defer);
    ASSERT_TRUE(r) << "put off past its time";
    EXPECT_EQ(word_at(r->bytes, 24), kHeldUp);
    EXPECT_EQ(d.counters().defer_gave_up.load(), 1u);
    EXPECT_EQ(prog->deferrable, 2);
}

TEST(DeferredWakes, EachWakerRunsOnceAndOnlyWhileItsCallWaits) {
    auto wakes = std::make_shared<rpc::DeferredWakes>();
    int a = 0, b = 0, c = 0;
    wakes->wake_all();  // none: nothing to do
    auto ra = wakes->add([&] { ++a; });
    auto rb = wakes->add([&] { ++b; });
    {
        auto rc = wakes->add([&] { ++c; });
        EXPECT_EQ(wakes->size(), 3u);
    }  // that call ran (its timer) or went with its connection
    EXPECT_EQ(wakes->size(), 2u);
    wakes->wake_all();
    EXPECT_EQ(a, 1);
    EXPECT_EQ(b, 1);
    EXPECT_EQ(c, 0);
    EXPECT_EQ(wakes->size(), 0u);
    EXPECT_EQ(wakes->generation(), 2u);  // the first, with none to wake, counts too
    wakes->wake_all();  // each at most once
    EXPECT_EQ(a + b, 2);
    // A registration moved keeps its waker; one ended after the wake-up is harmless, and
    // one that outlives the table too.
    auto rd = wakes->add([&] { ++c; });
    rpc::DeferredWakes::Registration moved = std::move(rd);
    rd.reset();
    EXPECT_EQ(wakes->size(), 1u);
    ra.reset();
    wakes.reset();
    moved.reset();
    EXPECT_EQ(c, 0);
}

// At shutdown (daemon.cpp, before the reactors stop): once close() returns no waker runs,
// none is taken in, and a wake_all() already running its wakers is waited for.
TEST(DeferredWakes, ClosedNoWakerRunsAndNoneIsTakenIn) {
    auto wakes = std::make_shared<rpc::DeferredWakes>();
    int a = 0, b = 0;
    auto ra = wakes->add([&] { ++a; });
    wakes->close();
    EXPECT_EQ(wakes->size(), 0u);
    wakes->wake_all();
    EXPECT_EQ(a, 0);
    EXPECT_EQ(wakes->generation(), 0u);  // a transport sees nothing to run again for
    auto rb = wakes->add([&] { ++b; });  // an empty registration: the timer runs the call
    EXPECT_EQ(wakes->size(), 0u);
    wakes->wake_all();
    EXPECT_EQ(b, 0);
    ra.reset();
    rb.reset();

    // close() while a wake_all() runs a waker: it returns only after that waker.
    auto w2 = std::make_shared<rpc::DeferredWakes>();
    std::atomic<bool> started{false}, release{false}, waker_done{false}, closed{false};
    auto r = w2->add([&] {
        started = true;
        while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
        waker_done = true;
    });
    std::thread waking([&] { w2->wake_all(); });
    while (!started) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    std::thread closing([&] {
        w2->close();
        closed = true;
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_FALSE(closed.load()) << "close() returned while a waker ran";
    release = true;
    waking.join();
    closing.join();
    EXPECT_TRUE(waker_done.load());
    EXPECT_TRUE(closed.load());
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

// A procedure that must undo what it began (NFSv4.1's SEQUENCE slot) asks first; the answer
// is the dispatcher's, under the same bound, and a call it is given is put off whatever else.
TEST_F(Defer, AProcedureMayAskToBePutOffBeforeItAnswers) {
    rpc::Deferral defer;
    EXPECT_FALSE(dispatch(message(4), &defer));
    EXPECT_EQ(prog->undone, 1);
    EXPECT_EQ(defer.after, rpc::Dispatcher::kFirstDeferral);
    EXPECT_EQ(d.counters().deferred.load(), 1u);
    EXPECT_EQ(d.deferred_now(), 1u);
    // No transport to run it again: the procedure is told no, and answers.
    auto r = dispatch(message(4), nullptr);
    ASSERT_TRUE(r);
    EXPECT_EQ(word_at(r->bytes, 24), kHeldUp);
    // The bound full: no as well.
    std::vector<rpc::Deferral> waiting(rpc::Dispatcher::kMaxDeferred - 1);
    for (auto& w : waiting) ASSERT_FALSE(dispatch(message(2), &w));
    rpc::Deferral more;
    r = dispatch(message(4), &more);
    ASSERT_TRUE(r);
    EXPECT_EQ(word_at(r->bytes, 24), kHeldUp);
    EXPECT_EQ(d.counters().defer_full.load(), 1u);
    EXPECT_EQ(prog->undone, 1);
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

// Flavor 9, a stand-in for RPCSEC_GSS's state: the credential is [seq][service]; a sequence
// number seen before is a replay and dropped (RFC 2203 §5.3.3.1); service 0 leaves the
// arguments as received, 1 (as integrity) checks that they begin with the sequence number
// and reads them in place after it, 2 (as privacy) "decrypts" them (each byte ^ 0xff) into
// the dispatcher's storage. The reply verifier is the sequence number; results of 1 and 2
// are followed by it.
class Windowed : public rpc::AuthFlavor {
  public:
    struct Call {
        uint32_t seq, service;
    };
    uint32_t number() const override { return 9; }
    Result accept(const rpc::RawAuth& raw, rpc::CallAuth& out) const override {
        ++accepts;
        xdr::Decoder d(raw.cred);
        const uint32_t seq = d.get_u32(), service = d.get_u32();
        if (!d.ok() || service > 2) return {Verdict::Reject, x::AUTH_BADCRED};
        if (!seen.insert(seq).second) return {Verdict::Drop, 0};
        out.cred.flavor = 9;
        out.cred.sys.uid = 1000;
        out.context = std::make_shared<Call>(Call{seq, service});
        return {};
    }
    static const Call& of(const rpc::CallAuth& a) { return *static_cast<Call*>(a.context.get()); }
    // A call whose sequence number is in `gone` was accepted under what has gone since (as
    // an RPCSEC_GSS context destroyed while the call was put off).
    Result still_stands(const rpc::CallAuth& a) const override {
        if (gone.count(of(a).seq)) return {Verdict::Reject, x::RPCSEC_GSS_CREDPROBLEM};
        return {};
    }
    rpc::OpaqueAuth reply_verifier(const rpc::CallAuth& a) const override {
        std::vector<uint8_t> v;
        put(v, of(a).seq);
        return {9, v};
    }
    bool protects(const rpc::CallAuth& a) const override { return of(a).service != 0; }
    bool unwrap_arguments(const rpc::CallAuth& a, std::span<const uint8_t> in,
                          std::vector<uint8_t>& storage,
                          std::span<const uint8_t>& out) const override {
        ++unwraps;
        switch (of(a).service) {
            case 1:
                if (in.size() < 4 || word_at({in.begin(), in.begin() + 4}, 0) != of(a).seq)
                    return false;
                out = in.subspan(4);
                return true;
            case 2:
                storage.assign(in.begin(), in.end());
                for (auto& b : storage) b ^= 0xff;
                out = storage;
                return true;
            default:
                out = in;
                return true;
        }
    }
    bool wrap_results(const rpc::CallAuth& a, std::vector<uint8_t>& reply, size_t) const override {
        if (of(a).service != 0) put(reply, of(a).seq);
        return true;
    }
    mutable std::set<uint32_t> seen;
    std::set<uint32_t> gone;
    mutable int accepts = 0, unwraps = 0;
};

struct DeferGss : Defer {
    DeferGss() {
        auto f = std::make_unique<Windowed>();
        flavor = f.get();
        d.auth().add(std::move(f));
    }
    // Procedure 3's call under flavor 9, its one argument word `arg` (and `pad` bytes more).
    std::vector<uint8_t> message(uint32_t seq, uint32_t service, uint32_t arg, size_t pad = 0) {
        std::vector<uint8_t> b;
        for (uint32_t w : {++xid, 0u, 2u, 400201u, 1u, 3u, 9u, 8u, seq, service, 0u, 0u}) put(b, w);
        std::vector<uint8_t> args;
        if (service == 1) put(args, seq);
        put(args, service == 2 ? ~arg : arg);
        args.resize(args.size() + pad, service == 2 ? 0xff : 0);
        b.insert(b.end(), args.begin(), args.end());
        return b;
    }
    Windowed* flavor = nullptr;
};

}  // namespace

// A call put off under RPCSEC_GSS runs again without the auth stage: its sequence number was
// taken on the first run, and the same message asked again is a replay. Its arguments (as
// received, checked in place, or decrypted) and its reply verifier come from that run.
TEST_F(DeferGss, ACallPutOffKeepsWhatTheFlavorAcceptedAndIsNotAskedAgain) {
    for (uint32_t service : {0u, 1u, 2u}) {
        SCOPED_TRACE("service " + std::to_string(service));
        prog->hold = true;
        const uint32_t seq = 100 + service;
        const auto bytes = message(seq, service, 4242);
        rpc::Deferral defer;
        EXPECT_FALSE(dispatch(bytes, &defer));
        ASSERT_TRUE(defer.kept);
        EXPECT_EQ(defer.after, rpc::Dispatcher::kFirstDeferral);
        // Only decrypted arguments are kept in memory of their own.
        EXPECT_EQ(d.kept_bytes(), service == 2 ? 4u : 0u);
        const int accepts = flavor->accepts, unwraps = flavor->unwraps;
        // The same message through the auth stage again is a replay: dropped.
        rpc::Deferral fresh;
        EXPECT_FALSE(dispatch(bytes, &fresh));
        EXPECT_EQ(fresh.after.count(), 0);
        EXPECT_FALSE(fresh.kept);
        const int calls = prog->calls;
        EXPECT_EQ(flavor->accepts, accepts + 1);
        // The transport's run: put off again, then answered; neither asks the flavor.
        EXPECT_FALSE(dispatch(bytes, &defer));
        EXPECT_EQ(defer.after, rpc::Dispatcher::kFirstDeferral * 2);
        prog->hold = false;
        auto r = dispatch(bytes, &defer);
        ASSERT_TRUE(r);
        EXPECT_EQ(prog->calls, calls + 2);
        EXPECT_EQ(flavor->accepts, accepts + 1);
        EXPECT_EQ(flavor->unwraps, unwraps);
        // xid, REPLY, MSG_ACCEPTED, the verifier [9][4][seq], SUCCESS, the result, the wrap.
        EXPECT_EQ(word_at(r->bytes, 12), 9u);
        EXPECT_EQ(word_at(r->bytes, 20), seq);
        EXPECT_EQ(word_at(r->bytes, 24), uint32_t(x::SUCCESS));
        EXPECT_EQ(word_at(r->bytes, 28), 4242u);
        EXPECT_EQ(r->bytes.size(), service == 0 ? 32u : 36u);
        if (service != 0) {
            EXPECT_EQ(word_at(r->bytes, 32), seq);
        }
        defer = {};
        EXPECT_EQ(d.kept_bytes(), 0u);
        EXPECT_EQ(d.deferred_now(), 0u);
    }
    EXPECT_EQ(d.counters().dropped.load(), 3u);
    EXPECT_EQ(d.counters().deferred.load(), 6u);
}

// What the call was accepted under went while it was put off (its RPCSEC_GSS context
// destroyed or expired): the later run is refused as a new call on it would be, not run.
TEST_F(DeferGss, ACallWhoseContextWentMeanwhileIsRefusedNotRun) {
    const auto bytes = message(7, 2, 1);
    rpc::Deferral defer;
    EXPECT_FALSE(dispatch(bytes, &defer));
    ASSERT_TRUE(defer.kept);
    const int calls = prog->calls;
    prog->hold = false;
    flavor->gone.insert(7);
    auto r = dispatch(bytes, &defer);
    ASSERT_TRUE(r);
    EXPECT_EQ(word_at(r->bytes, 8), uint32_t(x::MSG_DENIED));
    EXPECT_EQ(word_at(r->bytes, 12), uint32_t(x::AUTH_ERROR));
    EXPECT_EQ(word_at(r->bytes, 16), uint32_t(x::RPCSEC_GSS_CREDPROBLEM));
    EXPECT_EQ(prog->calls, calls);
    EXPECT_EQ(d.counters().auth_errors.load(), 1u);
}

// Decrypted arguments put off are bounded in bytes (Dispatcher::kMaxKeptBytes) as well as
// in calls: past it a call is answered now, and the bytes come back as calls are let go of.
TEST_F(DeferGss, DecryptedArgumentsKeptAreBounded) {
    constexpr size_t kArgs = size_t(4) << 20;  // with its first word
    constexpr size_t kFit = rpc::Dispatcher::kMaxKeptBytes / kArgs;
    std::vector<rpc::Deferral> waiting(kFit);
    uint32_t seq = 1;
    for (auto& w : waiting) ASSERT_FALSE(dispatch(message(seq++, 2, 1, kArgs - 4), &w));
    EXPECT_EQ(d.kept_bytes(), kFit * kArgs);
    rpc::Deferral more;
    auto r = dispatch(message(seq++, 2, 1, kArgs - 4), &more);
    ASSERT_TRUE(r);
    EXPECT_EQ(word_at(r->bytes, 28), kHeldUp);
    EXPECT_EQ(d.counters().defer_full.load(), 1u);
    EXPECT_FALSE(more.slot);
    EXPECT_FALSE(more.kept);
    EXPECT_EQ(d.deferred_now(), kFit);
    // Arguments that stay where they were received count nothing.
    rpc::Deferral in_place;
    EXPECT_FALSE(dispatch(message(seq++, 1, 1, kArgs - 4), &in_place));
    EXPECT_EQ(d.kept_bytes(), kFit * kArgs);
    waiting.pop_back();
    EXPECT_FALSE(dispatch(message(seq++, 2, 1, kArgs - 4), &more));
    waiting.clear();
    more = {};
    EXPECT_EQ(d.kept_bytes(), 0u);
    in_place = {};
    EXPECT_EQ(d.deferred_now(), 0u);
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
