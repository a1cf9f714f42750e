// The NFSv4.1 COMPOUND engine (RFC 8881 §16.2, §2.10.6.4, §18.46.3): order rules,
// filehandle requirements, undecodable and illegal operations, the reply budget,
// replays, with stand-in operations.
#include <gtest/gtest.h>

#include "nfs/v4/compound.h"
#include "nfs/v4/op_table.h"
#include "tests/unit/xdr_bytes.h"

using namespace nfsrdmad;
using namespace nfsrdmad::nfs::v4;
using xdr::testing::be;

namespace {

struct Counters {
    int putrootfh = 0, getfh = 0, sequence = 0, big = 0, exchange_id = 0;
};
Counters* counters = nullptr;

WireHandle handle(std::vector<uint8_t> bytes) {
    return *WireHandle::from(bytes);
}

template <class Args>
bool decode_args(xdr::Decoder& d, Args& a) {
    return x4::xdr_decode(d, a);
}

OpResult putrootfh(Compound& c, xdr::Decoder&, xdr::Encoder& res) {
    ++counters->putrootfh;
    c.current_fh = handle({1, 2, 3});
    encode_status_only(res, x4::NFS4_OK);
    return {};
}

OpResult getfh(Compound& c, xdr::Decoder&, xdr::Encoder& res) {
    ++counters->getfh;
    x4::GETFH4res r(x4::NFS4_OK);
    r.resok4().object = c.current_fh->data();
    x4::xdr_encode(res, r);
    return {};
}

// SEQUENCE stand-in: slot 99 is a retransmission; the sequence id sets the reply limit.
const std::vector<uint8_t> kReplay = be({0, 0, 0});  // an empty COMPOUND4res
OpResult sequence(Compound& c, xdr::Decoder& args, xdr::Encoder& res) {
    ++counters->sequence;
    x4::SEQUENCE4args a;
    if (!decode_args(args, a)) return OpResult::bad_xdr();
    if (a.sa_slotid == 99) {
        c.replay = kReplay;
        return {};
    }
    c.max_response = a.sa_sequenceid;
    if (a.sa_cachethis) c.max_cached = a.sa_highest_slotid;
    x4::SEQUENCE4res r(x4::NFS4_OK);
    r.sr_resok4().sr_sessionid = a.sa_sessionid;
    r.sr_resok4().sr_sequenceid = a.sa_sequenceid;
    x4::xdr_encode(res, r);
    return {};
}

// READ stand-in: a result of `count` bytes of data.
OpResult big_read(Compound&, xdr::Decoder& args, xdr::Encoder& res) {
    ++counters->big;
    x4::READ4args a;
    if (!decode_args(args, a)) return OpResult::bad_xdr();
    std::vector<uint8_t> data(a.count, 0x42);
    x4::READ4res r(x4::NFS4_OK);
    r.resok4().eof = false;
    r.resok4().data = data;
    x4::xdr_encode(res, r);
    return {};
}

OpResult exchange_id(Compound&, xdr::Decoder& args, xdr::Encoder& res) {
    ++counters->exchange_id;
    x4::EXCHANGE_ID4args a;
    if (!decode_args(args, a)) return OpResult::bad_xdr();
    encode_status_only(res, x4::NFS4ERR_DELAY);  // just so it is seen to run
    return {x4::NFS4ERR_DELAY};
}

// SETATTR's result has a bitmap even on failure.
void setattr_error(xdr::Encoder& res, x4::nfsstat4 st) {
    x4::SETATTR4res r;
    r.status = st;
    x4::xdr_encode(res, r);
}
OpResult setattr(Compound&, xdr::Decoder& args, xdr::Encoder& res) {
    x4::SETATTR4args a;
    if (!decode_args(args, a)) return OpResult::bad_xdr();
    setattr_error(res, x4::NFS4_OK);
    return {};
}

OpTable table() {
    OpTable t;
    install_not_supported(t);
    t.set(x4::OP_PUTROOTFH, {"PUTROOTFH", putrootfh, encode_status_only});
    t.set(x4::OP_GETFH, {"GETFH", getfh, encode_status_only, true});
    t.set(x4::OP_SEQUENCE, {"SEQUENCE", sequence, encode_status_only});
    t.set(x4::OP_READ, {"READ", big_read, encode_status_only, true});
    t.set(x4::OP_EXCHANGE_ID, {"EXCHANGE_ID", exchange_id, encode_status_only});
    t.set(x4::OP_SETATTR, {"SETATTR", setattr, setattr_error, true});
    return t;
}

x4::nfs_argop4 seq(uint32_t limit = 1 << 20, uint32_t slot = 0, bool cachethis = false,
                   uint32_t cache_limit = 0) {
    x4::nfs_argop4 op(x4::OP_SEQUENCE);
    op.opsequence().sa_sequenceid = limit;
    op.opsequence().sa_slotid = slot;
    op.opsequence().sa_cachethis = cachethis;
    op.opsequence().sa_highest_slotid = cache_limit;
    return op;
}
x4::nfs_argop4 op(x4::nfs_opnum4 n) {
    return x4::nfs_argop4(n);
}
x4::nfs_argop4 read(uint32_t count) {
    x4::nfs_argop4 o(x4::OP_READ);
    o.opread().count = count;
    return o;
}

std::vector<uint8_t> compound(std::vector<x4::nfs_argop4> ops, uint32_t minorversion = 1) {
    x4::COMPOUND4args a;
    static const uint8_t tag[] = {'t', 'a', 'g'};
    a.tag = tag;
    a.minorversion = minorversion;
    a.argarray = std::move(ops);
    return xdr::testing::encode(a);
}

// The operation count of a COMPOUND4args made by compound(): after the tag ("tag": a
// length word and 4 bytes) and the minor version.
void set_count(std::vector<uint8_t>& call, uint32_t count) {
    auto w = be({count});
    std::copy(w.begin(), w.end(), call.begin() + 12);
}

struct CompoundTest : ::testing::Test {
    CompoundTest() { counters = &n; }
    ~CompoundTest() override { counters = nullptr; }

    // Runs the COMPOUND; decodes the reply (which must decode whole).
    CompoundOutcome run(const std::vector<uint8_t>& call) {
        reply.clear();
        xdr::Decoder d(call);
        xdr::Encoder e(reply);
        CompoundOutcome o = run_compound(ops, c, d, e);
        if (o == CompoundOutcome::Done) {
            xdr::Decoder rd(reply);
            EXPECT_TRUE(x4::xdr_decode(rd, res));
            EXPECT_EQ(rd.remaining(), 0u);
        }
        return o;
    }
    std::vector<x4::nfs_opnum4> opnums() const {
        std::vector<x4::nfs_opnum4> v;
        for (auto& r : res.resarray) v.push_back(r.resop());
        return v;
    }

    OpTable ops = table();
    Compound c;
    Counters n;
    std::vector<uint8_t> reply;
    x4::COMPOUND4res res;
};

}  // namespace

TEST_F(CompoundTest, OtherMinorVersionsGetMismatchAndNoResults) {
    for (uint32_t mv : {0u, 2u, 7u}) {
        ASSERT_EQ(run(compound({seq(), op(x4::OP_PUTROOTFH)}, mv)), CompoundOutcome::Done);
        EXPECT_EQ(res.status, x4::NFS4ERR_MINOR_VERS_MISMATCH);
        EXPECT_TRUE(res.resarray.empty());
        EXPECT_EQ(std::string(res.tag.begin(), res.tag.end()), "tag");
    }
    EXPECT_EQ(n.sequence + n.putrootfh, 0);
}

TEST_F(CompoundTest, AnEmptyCompoundSucceeds) {
    ASSERT_EQ(run(compound({})), CompoundOutcome::Done);
    EXPECT_EQ(res.status, x4::NFS4_OK);
    EXPECT_TRUE(res.resarray.empty());
}

TEST_F(CompoundTest, SequenceThenOperationsRunInOrder) {
    ASSERT_EQ(run(compound({seq(), op(x4::OP_PUTROOTFH), op(x4::OP_GETFH)})),
              CompoundOutcome::Done);
    EXPECT_EQ(res.status, x4::NFS4_OK);
    ASSERT_EQ(opnums(),
              (std::vector<x4::nfs_opnum4>{x4::OP_SEQUENCE, x4::OP_PUTROOTFH, x4::OP_GETFH}));
    auto fh = res.resarray[2].opgetfh().resok4().object;
    EXPECT_EQ(std::vector<uint8_t>(fh.begin(), fh.end()), (std::vector<uint8_t>{1, 2, 3}));
    EXPECT_EQ(std::string(res.tag.begin(), res.tag.end()), "tag");
}

TEST_F(CompoundTest, AnOperationOtherThanSequenceFirstIsNotInSession) {
    ASSERT_EQ(run(compound({op(x4::OP_PUTROOTFH), op(x4::OP_GETFH)})), CompoundOutcome::Done);
    EXPECT_EQ(res.status, x4::NFS4ERR_OP_NOT_IN_SESSION);
    ASSERT_EQ(opnums(), std::vector<x4::nfs_opnum4>{x4::OP_PUTROOTFH});
    EXPECT_EQ(n.putrootfh, 0);
}

TEST_F(CompoundTest, SessionlessOperationsMustBeAlone) {
    ASSERT_EQ(run(compound({op(x4::OP_EXCHANGE_ID)})), CompoundOutcome::Done);
    EXPECT_EQ(res.status, x4::NFS4ERR_DELAY);  // it ran
    EXPECT_EQ(n.exchange_id, 1);
    ASSERT_EQ(run(compound({op(x4::OP_EXCHANGE_ID), op(x4::OP_PUTROOTFH)})), CompoundOutcome::Done);
    EXPECT_EQ(res.status, x4::NFS4ERR_NOT_ONLY_OP);
    EXPECT_EQ(opnums(), std::vector<x4::nfs_opnum4>{x4::OP_EXCHANGE_ID});
    EXPECT_EQ(n.exchange_id, 1);
}

TEST_F(CompoundTest, SequenceAnywhereButFirstIsMisplaced) {
    ASSERT_EQ(run(compound({seq(), op(x4::OP_PUTROOTFH), seq()})), CompoundOutcome::Done);
    EXPECT_EQ(res.status, x4::NFS4ERR_SEQUENCE_POS);
    EXPECT_EQ(res.resarray.size(), 3u);
    EXPECT_EQ(n.sequence, 1);
}

TEST_F(CompoundTest, NoCurrentFilehandle) {
    ASSERT_EQ(run(compound({seq(), op(x4::OP_GETFH)})), CompoundOutcome::Done);
    EXPECT_EQ(res.status, x4::NFS4ERR_NOFILEHANDLE);
    EXPECT_EQ(res.resarray.size(), 2u);
    EXPECT_EQ(n.getfh, 0);
    // An error result keeps its operation's shape: SETATTR4res carries attrsset.
    ASSERT_EQ(run(compound({seq(), op(x4::OP_SETATTR)})), CompoundOutcome::Done);
    EXPECT_EQ(res.status, x4::NFS4ERR_NOFILEHANDLE);
    EXPECT_EQ(res.resarray[1].opsetattr().status, x4::NFS4ERR_NOFILEHANDLE);
}

TEST_F(CompoundTest, UnknownOperationIsIllegalAfterTheOnesBeforeRan) {
    for (uint32_t bad : {0u, 2u, 59u, 10044u, 0xffffffffu}) {
        auto call = compound({seq(), op(x4::OP_PUTROOTFH)});
        set_count(call, 3);  // and append the bad operation number
        auto tail = be({bad, 0, 0});
        call.insert(call.end(), tail.begin(), tail.end());
        ASSERT_EQ(run(call), CompoundOutcome::Done) << bad;
        EXPECT_EQ(res.status, x4::NFS4ERR_OP_ILLEGAL);
        ASSERT_EQ(opnums(),
                  (std::vector<x4::nfs_opnum4>{x4::OP_SEQUENCE, x4::OP_PUTROOTFH, x4::OP_ILLEGAL}));
        EXPECT_EQ(res.resarray[2].opillegal().status, x4::NFS4ERR_OP_ILLEGAL);
    }
    EXPECT_EQ(n.putrootfh, 5);
}

TEST_F(CompoundTest, ArgumentsThatDoNotDecodeAreBadXdrInPlace) {
    auto call = compound({seq(), op(x4::OP_PUTROOTFH)});
    set_count(call, 3);
    auto tail = be({x4::OP_READ, 1});  // READ4args cut short
    call.insert(call.end(), tail.begin(), tail.end());
    ASSERT_EQ(run(call), CompoundOutcome::Done);
    EXPECT_EQ(res.status, x4::NFS4ERR_BADXDR);
    ASSERT_EQ(opnums(),
              (std::vector<x4::nfs_opnum4>{x4::OP_SEQUENCE, x4::OP_PUTROOTFH, x4::OP_READ}));
    EXPECT_EQ(n.putrootfh, 1);
    EXPECT_EQ(n.big, 0);
}

TEST_F(CompoundTest, AnArrayShorterThanItsCountIsGarbageAndNothingRuns) {
    auto call = compound({seq(), op(x4::OP_PUTROOTFH)});
    set_count(call, 3);  // claims three operations, holds two
    EXPECT_EQ(run(call), CompoundOutcome::Garbage);
    EXPECT_EQ(n.sequence + n.putrootfh, 0);
    EXPECT_EQ(run(be({3})), CompoundOutcome::Garbage);  // header cut short
}

TEST_F(CompoundTest, AResultPastTheSessionLimitIsRepTooBig) {
    // The stand-in SEQUENCE sets the limit to its sequence id: 200 bytes.
    ASSERT_EQ(run(compound({seq(200), op(x4::OP_PUTROOTFH), read(40), read(400), read(1)})),
              CompoundOutcome::Done);
    EXPECT_EQ(res.status, x4::NFS4ERR_REP_TOO_BIG);
    ASSERT_EQ(res.resarray.size(), 4u);
    EXPECT_EQ(res.resarray[2].opread().status(), x4::NFS4_OK);
    EXPECT_EQ(res.resarray[3].opread().status(), x4::NFS4ERR_REP_TOO_BIG);
    EXPECT_EQ(n.big, 2);
    EXPECT_LE(reply.size(), 200u);
}

TEST_F(CompoundTest, AResultPastTheCachedLimitIsRepTooBigToCache) {
    // 16 bytes of header, 44 of SEQUENCE, 8 of PUTROOTFH, 56 of the first READ: 124.
    ASSERT_EQ(
        run(compound({seq(1 << 20, 0, true, 160), op(x4::OP_PUTROOTFH), read(40), read(100)})),
        CompoundOutcome::Done);
    EXPECT_EQ(res.status, x4::NFS4ERR_REP_TOO_BIG_TO_CACHE);
    EXPECT_EQ(res.resarray[2].opread().status(), x4::NFS4_OK);
    EXPECT_EQ(res.resarray[3].opread().status(), x4::NFS4ERR_REP_TOO_BIG_TO_CACHE);
}

TEST_F(CompoundTest, AReplayReplacesTheWholeReply) {
    ASSERT_EQ(run(compound({seq(1 << 20, 99), op(x4::OP_PUTROOTFH)})), CompoundOutcome::Done);
    EXPECT_EQ(reply, kReplay);
    EXPECT_EQ(n.putrootfh, 0);
}

TEST_F(CompoundTest, TheFinishedReplyIsHandedOnWhole) {
    std::vector<uint8_t> kept;
    c.on_finish = [&](std::span<const uint8_t> r) { kept.assign(r.begin(), r.end()); };
    ASSERT_EQ(run(compound({seq(), op(x4::OP_PUTROOTFH), op(x4::OP_GETFH)})),
              CompoundOutcome::Done);
    EXPECT_EQ(kept, reply);
}

TEST_F(CompoundTest, FourZeroOnlyAndOptionalOperationsAreNotSupported) {
    for (auto o : {x4::OP_OPEN_CONFIRM, x4::OP_RENEW, x4::OP_SETCLIENTID, x4::OP_LAYOUTGET,
                   x4::OP_WANT_DELEGATION, x4::OP_OPENATTR, x4::OP_RELEASE_LOCKOWNER}) {
        auto a = op(o);
        if (o == x4::OP_LAYOUTGET) {  // enums whose zero is no value
            a.oplayoutget().loga_layout_type = x4::LAYOUT4_NFSV4_1_FILES;
            a.oplayoutget().loga_iomode = x4::LAYOUTIOMODE4_READ;
        }
        if (o == x4::OP_WANT_DELEGATION) a.opwant_delegation().wda_claim.set_dc_claim(x4::CLAIM_FH);
        ASSERT_EQ(run(compound({seq(), a})), CompoundOutcome::Done) << o;
        EXPECT_EQ(res.status, x4::NFS4ERR_NOTSUPP) << o;
        EXPECT_EQ(res.resarray.size(), 2u);
    }
}

TEST_F(CompoundTest, MoreOperationsThanTheEngineDecodesStopThere) {
    std::vector<x4::nfs_argop4> many{seq()};
    for (size_t i = 1; i < kMaxDecodedOps + 5; ++i) many.push_back(op(x4::OP_PUTROOTFH));
    ASSERT_EQ(run(compound(many)), CompoundOutcome::Done);
    EXPECT_EQ(res.status, x4::NFS4ERR_TOO_MANY_OPS);
    EXPECT_EQ(res.resarray.size(), kMaxDecodedOps + 1);
    EXPECT_EQ(size_t(n.putrootfh), kMaxDecodedOps - 1);
}

namespace {

// With stats and the call's clock, the first operation's time runs from the call's start
// (here 2 s ago: it lands in the 2.5 s bucket), each next one from the previous one's end
// (short), and the clock comes back with the last reading, the call's end.
TEST_F(CompoundTest, OperationsAreTimedFromTheCallsStartAndGiveTheLastReadingBack) {
    auto stats = make_op_stats();
    const rpc::latency::Ticks start = rpc::latency::now() - rpc::latency::ticks_of_ns(2000000000u);
    rpc::latency::Ticks clock = start;
    std::vector<uint8_t> call = compound({seq(), op(x4::OP_PUTROOTFH), op(x4::OP_GETFH)});
    reply.clear();
    xdr::Decoder d(call);
    xdr::Encoder e(reply);
    ASSERT_EQ(run_compound(ops, c, d, e, stats.get(), &clock), CompoundOutcome::Done);
    EXPECT_GE(rpc::latency::elapsed_ns(start, clock), 2000000000u - 1000000u);
    EXPECT_LE(clock, rpc::latency::now());
    const auto snap = stats->snapshot();
    uint64_t calls = 0;
    for (const auto& o : snap.ops) {
        calls += o.calls;
        if (o.name == "SEQUENCE")
            EXPECT_GE(o.seconds, 2.0);  // from the call's start
        else
            EXPECT_LT(o.seconds, 1.0);  // from the previous operation's end
    }
    EXPECT_EQ(calls, 3u);
}

// A nowait COMPOUND's pre-flight hands each operation its own arguments (found by the scan
// before anything runs, not read past again), and says no for the whole COMPOUND when one
// operation says no: then nothing of it runs.
std::vector<uint32_t>* read_counts_seen = nullptr;
bool read_may_nowait(Compound&, xdr::Decoder args) {
    x4::READ4args a;
    if (!x4::xdr_decode(args, a)) return false;
    read_counts_seen->push_back(a.count);
    return a.count != 13;
}

struct NowaitCompoundTest : CompoundTest {
    NowaitCompoundTest() {
        read_counts_seen = &seen;
        ops.set(x4::OP_READ, {"READ", big_read, encode_status_only, true, false, read_may_nowait});
        fresh();
    }
    ~NowaitCompoundTest() override { read_counts_seen = nullptr; }
    void fresh() {  // a new COMPOUND, tried nowait
        c = Compound{};
        c.nowait = true;
    }
    std::vector<uint32_t> seen;  // READ's count, as each pre-flight decoded it
};

TEST_F(NowaitCompoundTest, APreflightSeesEachOperationsOwnArguments) {
    EXPECT_EQ(run(compound({seq(), op(x4::OP_PUTROOTFH), read(5), read(7)})),
              CompoundOutcome::Done);
    EXPECT_EQ(seen, (std::vector<uint32_t>{5, 7}));
    EXPECT_EQ(n.big, 2);

    seen.clear();
    fresh();
    EXPECT_EQ(run(compound({seq(), op(x4::OP_PUTROOTFH), read(5), read(13)})),
              CompoundOutcome::Declined);
    EXPECT_EQ(seen, (std::vector<uint32_t>{5, 13}));
    EXPECT_EQ(n.sequence, 1);  // the first COMPOUND's only
}

// One that carries RPC-over-RDMA read chunks (WRITE data: never nowait) is left to a worker
// before any pre-flight: its arguments cannot be reached without reading what precedes them.
TEST_F(NowaitCompoundTest, ANowaitCompoundWithReadChunksIsDeclinedUnread) {
    const std::vector<uint8_t> call = compound({seq(), op(x4::OP_PUTROOTFH), read(5)});
    const std::vector<uint8_t> data(8, 0x42);
    const xdr::ReadChunk chunk{call.size() + 64, data};
    xdr::Decoder d(call);
    d.set_read_chunks({&chunk, 1});
    reply.clear();
    xdr::Encoder e(reply);
    EXPECT_EQ(run_compound(ops, c, d, e), CompoundOutcome::Declined);
    EXPECT_TRUE(seen.empty());
    EXPECT_EQ(n.sequence, 0);
    EXPECT_EQ(n.big, 0);
}

// A COMPOUND that a delegation holds up (Compound::held_up: the operation answered
// NFS4ERR_DELAY before changing anything) is put off when only SEQUENCE and operations
// without effects ran before it: given up as if never run (SEQUENCE's on_abandon, no result
// handed to the slot, nothing counted), for the transport to run again.
bool remove_held = true;  // the REMOVE stand-in's DELAY is a delegation's
OpResult held_remove(Compound& c, xdr::Decoder& args, xdr::Encoder& res) {
    x4::REMOVE4args a;
    if (!decode_args(args, a)) return OpResult::bad_xdr();
    if (remove_held) c.held_up = true;
    encode_status_only(res, x4::NFS4ERR_DELAY);
    return {x4::NFS4ERR_DELAY};
}

struct PutOffCompoundTest : CompoundTest {
    PutOffCompoundTest() {
        remove_held = true;
        ops.set(x4::OP_REMOVE, {"REMOVE", held_remove, encode_status_only, true});
        fresh(true);
    }
    // A new COMPOUND of a call the transport can run again; the dispatcher says `granted`.
    void fresh(bool granted) {
        c = Compound{};
        c.may_defer = true;
        c.put_off = [this, granted] {
            ++asked;
            return granted;
        };
        c.on_abandon = [this] { ++abandoned; };
        c.on_finish = [this](std::span<const uint8_t>) { ++finished; };
    }
    CompoundOutcome run_counted(const std::vector<uint8_t>& call) {
        reply.clear();
        xdr::Decoder d(call);
        xdr::Encoder e(reply);
        CompoundOutcome o = run_compound(ops, c, d, e, stats.get());
        if (o == CompoundOutcome::Done) {
            xdr::Decoder rd(reply);
            EXPECT_TRUE(x4::xdr_decode(rd, res));
        }
        return o;
    }
    uint64_t counted() const {
        uint64_t calls = 0;
        for (const auto& o : stats->snapshot().ops) calls += o.calls;
        return calls;
    }
    std::shared_ptr<rpc::OpStats> stats = make_op_stats();
    int asked = 0, abandoned = 0, finished = 0;
};

TEST_F(PutOffCompoundTest, AnOperationADelegationHoldsUpPutsTheCompoundOffAsIfNeverRun) {
    const auto call = compound({seq(), op(x4::OP_PUTROOTFH), op(x4::OP_GETFH), op(x4::OP_REMOVE)});
    EXPECT_EQ(run_counted(call), CompoundOutcome::Later);
    EXPECT_EQ(asked, 1);
    EXPECT_EQ(abandoned, 1);
    EXPECT_EQ(finished, 0);
    EXPECT_EQ(counted(), 0u);
    // The dispatcher says no (its bound is full, or this was the last run): answered DELAY
    // as before, the slot given its reply, every operation counted.
    fresh(false);
    EXPECT_EQ(run_counted(call), CompoundOutcome::Done);
    EXPECT_EQ(res.status, x4::NFS4ERR_DELAY);
    EXPECT_EQ(asked, 2);
    EXPECT_EQ(abandoned, 1);
    EXPECT_EQ(finished, 1);
    EXPECT_EQ(counted(), 4u);
}

TEST_F(PutOffCompoundTest, NotAfterAnOperationWithEffectsNorForAnotherDelay) {
    // SETATTR ran before: the COMPOUND cannot be run again whole.
    EXPECT_EQ(
        run_counted(compound({seq(), op(x4::OP_PUTROOTFH), op(x4::OP_SETATTR), op(x4::OP_REMOVE)})),
        CompoundOutcome::Done);
    EXPECT_EQ(res.status, x4::NFS4ERR_DELAY);
    // A transport that cannot run it again.
    fresh(true);
    c.may_defer = false;
    EXPECT_EQ(run_counted(compound({seq(), op(x4::OP_PUTROOTFH), op(x4::OP_REMOVE)})),
              CompoundOutcome::Done);
    // A DELAY of another cause (a shortage the client should wait out).
    fresh(true);
    remove_held = false;
    EXPECT_EQ(run_counted(compound({seq(), op(x4::OP_PUTROOTFH), op(x4::OP_REMOVE)})),
              CompoundOutcome::Done);
    EXPECT_EQ(res.status, x4::NFS4ERR_DELAY);
    EXPECT_EQ(asked, 0);
    EXPECT_EQ(abandoned, 0);
}

}  // namespace
