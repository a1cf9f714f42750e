// Delegations (RFC 8881 §10.2, §10.4) from raw clients on the daemon's own connections:
// a client whose callback path answers gets a read delegation on a read OPEN and a write
// delegation on a read-write OPEN; another client's GETATTR of a write-delegated file asks
// the holder (CB_GETATTR); another client's conflicting OPEN, or an NFSv3 WRITE, is answered
// NFS4ERR_DELAY / NFS3ERR_JUKEBOX while the server sends CB_RECALL (after CB_SEQUENCE on the
// holder's session) on the holder's connection; the holder opens through the delegation
// (CLAIM_DELEG_CUR_FH) and returns it (DELEGRETURN), and the other call goes through. A holder that
// never answers loses the delegation a lease after the recall: NFS4ERR_DELEG_REVOKED,
// SEQ4_STATUS_RECALLABLE_STATE_REVOKED until FREE_STATEID.
#include "tests/e2e/nfs4_callback_fixture.h"
#include "tests/shared/ofd_lock.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <functional>

namespace nfsrdmad::e2e {
namespace {

constexpr uint32_t kRead = x4::OPEN4_SHARE_ACCESS_READ, kWrite = x4::OPEN4_SHARE_ACCESS_WRITE,
                   kBoth = x4::OPEN4_SHARE_ACCESS_BOTH;
constexpr uint32_t kRevoked = x4::SEQ4_STATUS_RECALLABLE_STATE_REVOKED;

class Nfs4Delegation : public Nfs4CallbackTest {
  protected:
    std::string Yaml() override {
        return "nfsv4: {enabled: true, lease_time: 10, write_delegations: true}\n";
    }
    void SetUp() override {
        Nfs4CallbackTest::SetUp();
        if (HasFatalFailure()) return;
        // The holder: the fixture's own identity, with a backchannel that answers.
        Open(true);
        if (HasFatalFailure()) return;
        wire::Bytes probe = NextCall(*conn_);
        ASSERT_FALSE(probe.empty()) << "no CB_NULL probe";
        AnswerCbNull(*conn_, probe, 0);
        if (HasFatalFailure()) return;
        export_fh_ = ExportHandle();
        ASSERT_FALSE(export_fh_.empty());
        // The probe's answer is taken on a worker: wait until a delegation can be had.
        ASSERT_TRUE(WaitPathsUp(1)) << "the callback path never came up";
        // The other client, without a backchannel, on its own connection.
        other_.conn = Connect();
        ASSERT_NE(other_.conn, nullptr);
        other_.owner = "e2e-nfs4-other-client";
        Swap(other_);
        Establish();
        Swap(other_);
    }

    // Runs of calls put off so far (rpc: deferred).
    uint64_t Deferred() {
        auto v = daemon_->StatsCounter("rpc", "deferred");
        EXPECT_TRUE(v) << "no deferred in the stats dump";
        return v.value_or(0);
    }
    // The call put off since `base` has waited through its timer's short steps (4 ... 64
    // ms): it now waits in a 128 ms one, so that what the holder does next finds it
    // waiting and wakes it (rpc/deferred_wakes.h), however fast this machine answers.
    void WaitInLongStep(uint64_t base) {
        auto v = daemon_->StatsCounterAtLeast("rpc", "deferred", base + 6);
        ASSERT_TRUE(v && *v >= base + 6) << "the call was not put off six times";
    }

    struct Opened {
        x4::nfsstat4 status = x4::NFS4ERR_SERVERFAULT;
        x4::stateid4 open{};
        uint32_t deleg_type = 99;
        x4::stateid4 deleg{};
        uint32_t why = 99;  // ond_why of OPEN_DELEGATE_NONE_EXT
        wire::Bytes fh;
    };
    Opened OpenIn(const std::string& name, uint32_t access, bool create) {
        Opened out;
        Res r = Compound({Sequence(), op_putfh(export_fh_),
                          op_open(view(open_owner_), view(name), create, access), op_getfh()});
        EXPECT_EQ(r.error, "");
        out.status = r.status();
        if (r.status() != x4::NFS4_OK) return out;
        const auto& ok = r.op(2).opopen().resok4();
        out.open = ok.stateid;
        out.deleg_type = ok.delegation.delegation_type();
        if (out.deleg_type == x4::OPEN_DELEGATE_READ) out.deleg = ok.delegation.read().stateid;
        if (out.deleg_type == x4::OPEN_DELEGATE_WRITE) out.deleg = ok.delegation.write().stateid;
        if (out.deleg_type == x4::OPEN_DELEGATE_NONE_EXT)
            out.why = ok.delegation.od_whynone().ond_why();
        auto fh = r.op(3).opgetfh().resok4().object;
        out.fh.assign(fh.begin(), fh.end());
        return out;
    }
    // As the other client: one COMPOUND after SEQUENCE.
    Res AsOther(std::vector<x4::nfs_argop4> ops) {
        Swap(other_);
        ops.insert(ops.begin(), Sequence());
        Res r = Compound(std::move(ops));
        Swap(other_);
        return r;
    }
    // As the other client, sent and not waited for (ReplyToOther): its answer may come
    // after the holder's.
    void SendAsOther(std::vector<x4::nfs_argop4> ops) {
        Swap(other_);
        ops.insert(ops.begin(), Sequence());
        wire::Bytes args = Encode(std::move(ops));
        Swap(other_);
        std::string why;
        ASSERT_TRUE(other_.conn->SendRecord(
            wire::EncodeCall(wire::RootCall(++xid_, 100003, 4, 1, std::move(args))), &why))
            << why;
    }
    Res ReplyToOther() {
        wire::Bytes rec;
        std::string why;
        if (other_.conn->RecvRecord(&rec, 10000, &why) != wire::Conn::Recv::kOk) {
            Res r;
            r.error = "receive: " + why;
            return r;
        }
        return ResOf(wire::ParseReply(rec));
    }
    static x4::nfs_argop4 DelegReturn(const x4::stateid4& sid) {
        x4::nfs_argop4 op(x4::OP_DELEGRETURN);
        op.opdelegreturn().deleg_stateid = sid;
        return op;
    }
    // The holder's answer to CB_SEQUENCE + CB_GETATTR: `status`, and on NFS4_OK its change and
    // size (§20.1.3).
    void AnswerCbGetattr(wire::Conn& c, const CbCall& call, x4::nfsstat4 status, uint64_t change,
                         uint64_t size) {
        wire::XdrOut vals;
        vals.u64(change).u64(size);
        const wire::Bytes attrs = vals.take();
        AnswerCb(c, call, status, [&](const x4::nfs_cb_argop4& op, x4::nfs_cb_resop4& r) {
            if (op.argop() != x4::OP_CB_GETATTR) return;
            r.opcbgetattr().set_status(status);
            if (status != x4::NFS4_OK) return;
            auto& f = r.opcbgetattr().resok4().obj_attributes;
            f.attrmask = {(1u << x4::FATTR4_CHANGE) | (1u << x4::FATTR4_SIZE)};
            f.attr_vals = attrs;
        });
    }
    // The CB_COMPOUND must be CB_SEQUENCE on our session, then CB_RECALL of `deleg` of `fh`.
    void ExpectRecall(const CbCall& cb, const x4::stateid4& deleg, const wire::Bytes& fh) {
        ASSERT_EQ(cb.args.argarray.size(), 2u);
        EXPECT_EQ(cb.args.minorversion, 1u);
        ASSERT_EQ(cb.args.argarray[0].argop(), x4::OP_CB_SEQUENCE);
        const auto& seq = cb.args.argarray[0].opcbsequence();
        EXPECT_EQ(seq.csa_sessionid, session_);
        EXPECT_EQ(seq.csa_slotid, 0u);
        EXPECT_GE(seq.csa_sequenceid, 1u);
        ASSERT_EQ(cb.args.argarray[1].argop(), x4::OP_CB_RECALL);
        const auto& rc = cb.args.argarray[1].opcbrecall();
        EXPECT_EQ(rc.stateid.other, deleg.other);
        EXPECT_EQ(wire::Bytes(rc.fh.begin(), rc.fh.end()), fh);
    }

    wire::Bytes export_fh_;
    Identity other_;
    std::string open_owner_ = "holder-open-owner";
};

// pynfs DELEG26 / DELEG28: a file created and written through a read-write open, closed,
// then opened for reading is delegated for reading, although the descriptor cache still
// holds the writable descriptor the first open used (the kernel grants no read lease beside
// it: the read-only open gets a descriptor of its own).
TEST_F(Nfs4Delegation, AFileWrittenAndClosedIsDelegatedToItsNextReader) {
    // The writer declines a delegation: a plain read-write open, whose descriptor the
    // cache keeps after the CLOSE.
    Opened w = OpenIn("written-then-read", kBoth | x4::OPEN4_SHARE_ACCESS_WANT_NO_DELEG, true);
    ASSERT_EQ(w.status, x4::NFS4_OK);
    ASSERT_NE(w.deleg_type, x4::OPEN_DELEGATE_WRITE);
    const std::string data = "written first";
    ASSERT_EQ(Compound({Sequence(), op_putfh(w.fh), op_write(w.open, 0, view(data))}).status(),
              x4::NFS4_OK);
    ASSERT_EQ(Compound({Sequence(), op_putfh(w.fh), op_close(w.open)}).status(), x4::NFS4_OK);
    Opened r = OpenIn("written-then-read", kRead, false);
    ASSERT_EQ(r.status, x4::NFS4_OK);
    EXPECT_EQ(r.deleg_type, x4::OPEN_DELEGATE_READ) << "no read delegation after a write";
    if (r.deleg_type == x4::OPEN_DELEGATE_READ) {
        Res rd = Compound({Sequence(), op_putfh(r.fh), op_read(r.deleg, 0, 100)});
        ASSERT_EQ(rd.status(), x4::NFS4_OK);
        const auto& got = rd.op(2).opread().resok4().data;
        EXPECT_EQ(std::string(got.begin(), got.end()), data);
        EXPECT_EQ(Compound({Sequence(), op_putfh(r.fh), DelegReturn(r.deleg)}).status(),
                  x4::NFS4_OK);
    }
    EXPECT_EQ(Compound({Sequence(), op_putfh(r.fh), op_close(r.open)}).status(), x4::NFS4_OK);
}

// §18.16.3: a client that holds a delegation of a file and asks for one of the other type
// is told the server does not upgrade or downgrade (WND4_NOT_SUPP_UPGRADE / _DOWNGRADE),
// not that the file is contended.
TEST_F(Nfs4Delegation, AskingForTheOtherTypeOfAHeldDelegationIsNotSuppUpgradeOrDowngrade) {
    Opened r = OpenIn("updown", kBoth | x4::OPEN4_SHARE_ACCESS_WANT_NO_DELEG, true);
    ASSERT_EQ(r.status, x4::NFS4_OK);
    ASSERT_EQ(Compound({Sequence(), op_putfh(r.fh), op_close(r.open)}).status(), x4::NFS4_OK);
    Opened rd = OpenIn("updown", kRead | x4::OPEN4_SHARE_ACCESS_WANT_READ_DELEG, false);
    ASSERT_EQ(rd.status, x4::NFS4_OK);
    ASSERT_EQ(rd.deleg_type, x4::OPEN_DELEGATE_READ);
    // A read open asking for a write delegation (a write open would break the read
    // delegation's own file lease first: NFS4ERR_DELAY).
    Opened up = OpenIn("updown", kRead | x4::OPEN4_SHARE_ACCESS_WANT_WRITE_DELEG, false);
    ASSERT_EQ(up.status, x4::NFS4_OK);
    EXPECT_EQ(up.deleg_type, x4::OPEN_DELEGATE_NONE_EXT);
    EXPECT_EQ(up.why, x4::WND4_NOT_SUPP_UPGRADE);
    EXPECT_EQ(Compound({Sequence(), op_putfh(rd.fh), DelegReturn(rd.deleg)}).status(), x4::NFS4_OK);
    // Now a write delegation, and a read one asked for.
    Opened w = OpenIn("updown2", kBoth | x4::OPEN4_SHARE_ACCESS_WANT_WRITE_DELEG, true);
    ASSERT_EQ(w.status, x4::NFS4_OK);
    ASSERT_EQ(w.deleg_type, x4::OPEN_DELEGATE_WRITE);
    Opened down = OpenIn("updown2", kRead | x4::OPEN4_SHARE_ACCESS_WANT_READ_DELEG, false);
    ASSERT_EQ(down.status, x4::NFS4_OK);
    EXPECT_EQ(down.deleg_type, x4::OPEN_DELEGATE_NONE_EXT);
    EXPECT_EQ(down.why, x4::WND4_NOT_SUPP_DOWNGRADE);
    EXPECT_EQ(Compound({Sequence(), op_putfh(w.fh), DelegReturn(w.deleg)}).status(), x4::NFS4_OK);
}

TEST_F(Nfs4Delegation, AReadDelegationIsRecalledByAnotherClientsOpenAndReturned) {
    Opened o = OpenIn("shared", kRead, true);
    ASSERT_EQ(o.status, x4::NFS4_OK);
    ASSERT_EQ(o.deleg_type, x4::OPEN_DELEGATE_READ) << "no read delegation for a lone reader";
    // I/O through the delegation stateid: reading works, writing is not what it allows.
    Res rd = Compound({Sequence(), op_putfh(o.fh), op_read(o.deleg, 0, 16)});
    EXPECT_EQ(rd.status(), x4::NFS4_OK);
    const std::string data = "abc";
    Res wr = Compound({Sequence(), op_putfh(o.fh), op_write(o.deleg, 0, view(data))});
    EXPECT_EQ(wr.status(), x4::NFS4ERR_OPENMODE);

    // Another client opens it for writing: not until the delegation is back.
    Res b1 =
        AsOther({op_putfh(export_fh_), op_open(view(other_.owner), view("shared"), false, kWrite)});
    EXPECT_EQ(b1.status(), x4::NFS4ERR_DELAY);
    CbCall cb;
    ASSERT_TRUE(NextCbCompound(*conn_, cb));
    ExpectRecall(cb, o.deleg, o.fh);
    if (HasFatalFailure()) return;
    EXPECT_EQ(cb.args.argarray[0].opcbsequence().csa_sequenceid, 1u) << "a slot starts at 1";
    AnswerCbCompound(*conn_, cb, x4::NFS4_OK);
    if (HasFatalFailure()) return;
    Res b2 =
        AsOther({op_putfh(export_fh_), op_open(view(other_.owner), view("shared"), false, kWrite)});
    EXPECT_EQ(b2.status(), x4::NFS4ERR_DELAY) << "opened before the delegation came back";
    EXPECT_TRUE(NextCall(*conn_, 300).empty()) << "a recall sent twice";

    // What a holder does on a recall: its local opens through the delegation, then return.
    x4::nfs_argop4 claim = op_open(view(open_owner_), view("shared"), false, kRead);
    claim.opopen().claim.set_claim(x4::CLAIM_DELEG_CUR_FH);
    claim.opopen().claim.oc_delegate_stateid() = o.deleg;
    Res c = Compound({Sequence(), op_putfh(o.fh), claim});
    ASSERT_EQ(c.status(), x4::NFS4_OK) << "CLAIM_DELEG_CUR_FH while the recall is under way";
    EXPECT_EQ(c.op(2).opopen().resok4().delegation.delegation_type(), x4::OPEN_DELEGATE_NONE);
    Res ret = Compound({Sequence(), op_putfh(o.fh), DelegReturn(o.deleg)});
    EXPECT_EQ(ret.status(), x4::NFS4_OK);
    Res again = Compound({Sequence(), op_putfh(o.fh), DelegReturn(o.deleg)});
    EXPECT_EQ(again.status(), x4::NFS4ERR_BAD_STATEID) << "returned twice";

    Res b3 =
        AsOther({op_putfh(export_fh_), op_open(view(other_.owner), view("shared"), false, kWrite)});
    ASSERT_EQ(b3.status(), x4::NFS4_OK) << "the returned delegation still in the way";
    Res b4 = AsOther({op_putfh(export_fh_), op_lookup(view("shared")),
                      op_close(b3.op(2).opopen().resok4().stateid)});
    ASSERT_EQ(b4.status(), x4::NFS4_OK);
    // The other client is gone from the file, but right after a conflict the file gets no
    // delegation (the cooldown); another file does.
    Opened o2 = OpenIn("shared", kRead, false);
    ASSERT_EQ(o2.status, x4::NFS4_OK);
    EXPECT_EQ(o2.deleg_type, x4::OPEN_DELEGATE_NONE) << "granted in the cooldown";
    Opened o3 = OpenIn("unshared", kRead, true);
    ASSERT_EQ(o3.status, x4::NFS4_OK);
    EXPECT_EQ(o3.deleg_type, x4::OPEN_DELEGATE_READ);
}

TEST_F(Nfs4Delegation, AWriteDelegationNotReturnedIsRevokedAfterALease) {
    Opened o = OpenIn("mine", kBoth, true);
    ASSERT_EQ(o.status, x4::NFS4_OK);
    ASSERT_EQ(o.deleg_type, x4::OPEN_DELEGATE_WRITE) << "no write delegation for a lone writer";
    const std::string data = "written through the delegation";
    Res wr = Compound({Sequence(), op_putfh(o.fh), op_write(o.deleg, 0, view(data))});
    EXPECT_EQ(wr.status(), x4::NFS4_OK);

    // Another client opens it for reading: the holder may have writes the file lacks.
    const std::string name = "mine";
    Res g1 = AsOther({op_putfh(export_fh_), op_open(view(other_.owner), view(name), false, kRead)});
    EXPECT_EQ(g1.status(), x4::NFS4ERR_DELAY);
    CbCall cb;
    ASSERT_TRUE(NextCbCompound(*conn_, cb));
    ExpectRecall(cb, o.deleg, o.fh);
    if (HasFatalFailure()) return;
    // No answer, no return. The holder keeps its lease; a lease (10 s) after the recall the
    // delegation is revoked, not before.
    const auto recalled = std::chrono::steady_clock::now();
    bool revoked = false;
    for (int i = 0; i < 80 && !revoked; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(250));
        revoked = (Flags() & kRevoked) != 0;
    }
    ASSERT_TRUE(revoked) << "SEQ4_STATUS_RECALLABLE_STATE_REVOKED never set";
    EXPECT_GE(std::chrono::steady_clock::now() - recalled, std::chrono::seconds(9))
        << "revoked before a lease had passed";
    Res g2 = AsOther({op_putfh(o.fh), op_getattr({x4::FATTR4_SIZE})});
    EXPECT_EQ(g2.status(), x4::NFS4_OK) << "the revoked delegation still in the way";
    EXPECT_TRUE(NextCall(*conn_, 300).empty()) << "a call about a revoked delegation";

    x4::nfs_argop4 test(x4::OP_TEST_STATEID);
    test.optest_stateid().ts_stateids.push_back(o.deleg);
    Res t = Compound({Sequence(), test});
    ASSERT_EQ(t.status(), x4::NFS4_OK);
    ASSERT_EQ(t.op(1).optest_stateid().tsr_resok4().tsr_status_codes.size(), 1u);
    EXPECT_EQ(t.op(1).optest_stateid().tsr_resok4().tsr_status_codes[0], x4::NFS4ERR_DELEG_REVOKED);
    Res rd = Compound({Sequence(), op_putfh(o.fh), op_read(o.deleg, 0, 16)});
    EXPECT_EQ(rd.status(), x4::NFS4ERR_DELEG_REVOKED);
    Res ret = Compound({Sequence(), op_putfh(o.fh), DelegReturn(o.deleg)});
    EXPECT_EQ(ret.status(), x4::NFS4ERR_DELEG_REVOKED);
    x4::nfs_argop4 fr(x4::OP_FREE_STATEID);
    fr.opfree_stateid().fsa_stateid = o.deleg;
    Res f = Compound({Sequence(), fr});
    EXPECT_EQ(f.status(), x4::NFS4_OK);
    EXPECT_EQ(Flags() & kRevoked, 0u) << "still flagged after FREE_STATEID";
    // The open stands: its stateid still reads what was written.
    Res rd2 = Compound({Sequence(), op_putfh(o.fh), op_read(o.open, 0, 64)});
    ASSERT_EQ(rd2.status(), x4::NFS4_OK);
    const auto& got = rd2.op(2).opread().resok4().data;
    EXPECT_EQ(std::string(got.begin(), got.end()), data);
}

// GETATTR's change and size (asked in that order: bits 3 and 4, §5.6), from op `i`.
std::pair<uint64_t, uint64_t> ChangeAndSize(const Res& r, size_t i) {
    const auto& f = r.op(i).opgetattr().resok4().obj_attributes;
    xdr::Decoder d(f.attr_vals);
    const uint64_t change = d.get_u64(), size = d.get_u64();
    EXPECT_TRUE(d.ok() && d.remaining() == 0) << "not change and size";
    return {change, size};
}

// §10.4.3: another client's GETATTR of a write-delegated file asks the holder (CB_GETATTR
// of change and size) instead of recalling; until the answer is in, NFS4ERR_DELAY. A holder
// that answers the change it was granted with and the file's size holds no changes: the
// file's own attributes. One that answers another change has changes: its size is reported,
// and the change attribute moves. A holder that cannot answer is recalled.
TEST_F(Nfs4Delegation, AnotherClientsGetattrAsksTheWriteDelegationsHolder) {
    const std::initializer_list<uint32_t> kChangeSize = {x4::FATTR4_CHANGE, x4::FATTR4_SIZE};
    const std::string data = "flushed";
    auto expect_cb_getattr = [&](const CbCall& cb, const wire::Bytes& fh) {
        ASSERT_EQ(cb.args.argarray.size(), 2u);
        ASSERT_EQ(cb.args.argarray[0].argop(), x4::OP_CB_SEQUENCE);
        EXPECT_EQ(cb.args.argarray[0].opcbsequence().csa_sessionid, session_);
        ASSERT_EQ(cb.args.argarray[1].argop(), x4::OP_CB_GETATTR);
        const auto& g = cb.args.argarray[1].opcbgetattr();
        EXPECT_EQ(wire::Bytes(g.fh.begin(), g.fh.end()), fh);
        ASSERT_EQ(g.attr_request.size(), 1u);
        EXPECT_EQ(g.attr_request[0], (1u << x4::FATTR4_CHANGE) | (1u << x4::FATTR4_SIZE));
    };

    // The other client's GETATTR once the answer is in (it is taken on a worker).
    auto answered = [&](const wire::Bytes& fh) {
        Res r;
        for (int i = 0; i < 100; ++i) {
            r = AsOther({op_putfh(fh), op_getattr(kChangeSize)});
            if (r.status() != x4::NFS4ERR_DELAY) break;
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        return r;
    };

    // A holder without changes: the change attribute it was granted with.
    Opened a = OpenIn("clean", kBoth, true);
    ASSERT_EQ(a.status, x4::NFS4_OK);
    ASSERT_EQ(a.deleg_type, x4::OPEN_DELEGATE_WRITE);
    Res granted = Compound({Sequence(), op_putfh(a.fh), op_getattr(kChangeSize)});
    ASSERT_EQ(granted.status(), x4::NFS4_OK);
    const uint64_t sc = ChangeAndSize(granted, 2).first;
    ASSERT_EQ(Compound({Sequence(), op_putfh(a.fh), op_write(a.deleg, 0, view(data))}).status(),
              x4::NFS4_OK);
    Res after = Compound({Sequence(), op_putfh(a.fh), op_getattr(kChangeSize)});
    ASSERT_EQ(after.status(), x4::NFS4_OK);
    const auto [written_change, written_size] = ChangeAndSize(after, 2);
    EXPECT_EQ(written_size, data.size());
    EXPECT_EQ(AsOther({op_putfh(a.fh), op_getattr(kChangeSize)}).status(), x4::NFS4ERR_DELAY);
    CbCall cb;
    ASSERT_TRUE(NextCbCompound(*conn_, cb));
    expect_cb_getattr(cb, a.fh);
    if (HasFatalFailure()) return;
    EXPECT_EQ(AsOther({op_putfh(a.fh), op_getattr(kChangeSize)}).status(), x4::NFS4ERR_DELAY)
        << "answered before the holder did";
    EXPECT_TRUE(NextCall(*conn_, 200).empty()) << "CB_GETATTR sent twice";
    AnswerCbGetattr(*conn_, cb, x4::NFS4_OK, sc, data.size());
    if (HasFatalFailure()) return;
    Res clean = answered(a.fh);
    ASSERT_EQ(clean.status(), x4::NFS4_OK);
    EXPECT_EQ(ChangeAndSize(clean, 2), std::make_pair(written_change, written_size))
        << "a holder without changes changed the file's attributes";

    // A holder with changes (the Linux client answers sc + 1) and a bigger size.
    Opened b = OpenIn("dirty", kBoth, true);
    ASSERT_EQ(b.status, x4::NFS4_OK);
    ASSERT_EQ(b.deleg_type, x4::OPEN_DELEGATE_WRITE);
    Res before = Compound({Sequence(), op_putfh(b.fh), op_getattr(kChangeSize)});
    ASSERT_EQ(before.status(), x4::NFS4_OK);
    const uint64_t sc_b = ChangeAndSize(before, 2).first;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // a ctime tick
    EXPECT_EQ(AsOther({op_putfh(b.fh), op_getattr(kChangeSize)}).status(), x4::NFS4ERR_DELAY);
    ASSERT_TRUE(NextCbCompound(*conn_, cb));
    expect_cb_getattr(cb, b.fh);
    if (HasFatalFailure()) return;
    AnswerCbGetattr(*conn_, cb, x4::NFS4_OK, sc_b + 1, 65536);
    if (HasFatalFailure()) return;
    Res dirty = answered(b.fh);
    ASSERT_EQ(dirty.status(), x4::NFS4_OK);
    const auto [dirty_change, dirty_size] = ChangeAndSize(dirty, 2);
    EXPECT_EQ(dirty_size, 65536u) << "not the holder's size";
    EXPECT_GT(dirty_change, sc_b) << "the change attribute did not move";
    struct stat st {};
    ASSERT_EQ(::stat(disk("dirty").c_str(), &st), 0);
    EXPECT_EQ(st.st_size, 0) << "the holder's size was written to the file";
    // NFSv3's GETATTR (RFC 1813 §3.3.1) gets the same answer: fattr3's size after ftype,
    // mode, nlink, uid and gid.
    auto v3 = Connect();
    ASSERT_NE(v3, nullptr);
    wire::XdrOut ga;
    ga.opaque(b.fh);
    wire::Reply g3 = RpcCall(*v3, 100003, 3, 1, ga.take());
    ASSERT_EQ(g3.accept_stat, wire::kSuccess);
    wire::XdrIn in3(g3.results);
    uint32_t status3 = 99, skip = 0;
    uint64_t size3 = 0;
    ASSERT_TRUE(in3.u32(&status3) && in3.u32(&skip) && in3.u32(&skip) && in3.u32(&skip) &&
                in3.u32(&skip) && in3.u32(&skip) && in3.u64(&size3));
    EXPECT_EQ(status3, 0u);
    EXPECT_EQ(size3, 65536u) << "NFSv3 did not get the holder's size";
    EXPECT_TRUE(NextCall(*conn_, 300).empty()) << "recalled although the holder answered";
    // The holder's own GETATTR asks nobody.
    EXPECT_EQ(Compound({Sequence(), op_putfh(b.fh), op_getattr(kChangeSize)}).status(),
              x4::NFS4_OK);

    // A holder that cannot answer (BADHANDLE: it does not know the file): recalled.
    Opened c = OpenIn("unanswered", kBoth, true);
    ASSERT_EQ(c.deleg_type, x4::OPEN_DELEGATE_WRITE);
    EXPECT_EQ(AsOther({op_putfh(c.fh), op_getattr(kChangeSize)}).status(), x4::NFS4ERR_DELAY);
    ASSERT_TRUE(NextCbCompound(*conn_, cb));
    expect_cb_getattr(cb, c.fh);
    if (HasFatalFailure()) return;
    AnswerCbGetattr(*conn_, cb, x4::NFS4ERR_BADHANDLE, 0, 0);
    if (HasFatalFailure()) return;
    CbCall recall;
    ASSERT_TRUE(NextCbCompound(*conn_, recall)) << "a failed CB_GETATTR did not recall";
    ExpectRecall(recall, c.deleg, c.fh);
    if (HasFatalFailure()) return;
    AnswerCbCompound(*conn_, recall, x4::NFS4_OK);
    EXPECT_EQ(Compound({Sequence(), op_putfh(c.fh), DelegReturn(c.deleg)}).status(), x4::NFS4_OK);
    EXPECT_EQ(AsOther({op_putfh(c.fh), op_getattr(kChangeSize)}).status(), x4::NFS4_OK);
}

// While the holder does not settle it (here: the test answers nothing while it waits for
// the v3 reply), the call is answered NFS3ERR_JUKEBOX after a second of runs put off.
TEST_F(Nfs4Delegation, AnNfsv3WriteIsJukeboxUntilTheDelegationIsReturned) {
    Opened o = OpenIn("v3", kRead, true);
    ASSERT_EQ(o.status, x4::NFS4_OK);
    ASSERT_EQ(o.deleg_type, x4::OPEN_DELEGATE_READ);
    // NFSPROC3_WRITE (RFC 1813 §3.3.7) of the same file handle on a connection of its own.
    auto v3 = Connect();
    ASSERT_NE(v3, nullptr);
    auto write3 = [&] {
        wire::XdrOut a;
        a.opaque(o.fh).u64(0).u32(4).u32(2 /* FILE_SYNC */).str("v3v3");
        wire::Reply r = RpcCall(*v3, 100003, 3, 7, a.take());
        EXPECT_EQ(r.parse_error, "");
        EXPECT_EQ(r.accept_stat, wire::kSuccess);
        uint32_t status = 99;
        wire::XdrIn in(r.results);
        EXPECT_TRUE(in.u32(&status));
        return status;
    };
    EXPECT_EQ(write3(), 10008u) << "NFS3ERR_JUKEBOX";
    CbCall cb;
    ASSERT_TRUE(NextCbCompound(*conn_, cb));
    ExpectRecall(cb, o.deleg, o.fh);
    if (HasFatalFailure()) return;
    AnswerCbCompound(*conn_, cb, x4::NFS4_OK);
    EXPECT_EQ(write3(), 10008u) << "written before the delegation came back";
    Res ret = Compound({Sequence(), op_putfh(o.fh), DelegReturn(o.deleg)});
    EXPECT_EQ(ret.status(), x4::NFS4_OK);
    EXPECT_EQ(write3(), 0u) << "the returned delegation still in the way";
}

// An NFSv3 call a delegation holds up is not answered NFS3ERR_JUKEBOX while the holder
// can settle it soon (the Linux client waits 5 s after a JUKEBOX): the server runs the call
// again a little later (rpc::Outcome::Later), and it is answered once the holder has
// answered CB_GETATTR (GETATTR) or returned the delegation (WRITE).
TEST_F(Nfs4Delegation, AnNfsv3CallHeldUpByADelegationIsAnsweredOnceTheHolderIsDone) {
    Opened o = OpenIn("v3wait", kBoth, true);
    ASSERT_EQ(o.status, x4::NFS4_OK);
    ASSERT_EQ(o.deleg_type, x4::OPEN_DELEGATE_WRITE);
    const std::initializer_list<uint32_t> kChangeSize = {x4::FATTR4_CHANGE, x4::FATTR4_SIZE};
    Res granted = Compound({Sequence(), op_putfh(o.fh), op_getattr(kChangeSize)});
    ASSERT_EQ(granted.status(), x4::NFS4_OK);
    const uint64_t sc = ChangeAndSize(granted, 2).first;  // no changes held: sc back
    const auto woken0 = daemon_->StatsCounter("rpc", "deferred_woken");
    ASSERT_TRUE(woken0) << "no deferred_woken in the stats dump";
    auto v3 = Connect();
    ASSERT_NE(v3, nullptr);
    std::string why;
    // Sent, not waited for: its answer comes after the holder's.
    auto send3 = [&](uint32_t proc, wire::Bytes args) {
        return v3->SendRecord(
            wire::EncodeCall(wire::RootCall(++xid_, 100003, 3, proc, std::move(args))), &why);
    };
    auto status3 = [&]() -> uint32_t {
        wire::Bytes rec;
        if (v3->RecvRecord(&rec, 10000, &why) != wire::Conn::Recv::kOk) return 99;
        wire::Reply r = wire::ParseReply(rec);
        EXPECT_EQ(r.accept_stat, wire::kSuccess);
        uint32_t status = 99;
        wire::XdrIn in(r.results);
        EXPECT_TRUE(in.u32(&status));
        return status;
    };

    // NFSPROC3_GETATTR (RFC 1813 §3.3.1): the holder is asked, and answers.
    wire::XdrOut ga;
    ga.opaque(o.fh);
    uint64_t base = Deferred();
    ASSERT_TRUE(send3(1, ga.take())) << why;
    CbCall cb;
    ASSERT_TRUE(NextCbCompound(*conn_, cb));
    ASSERT_EQ(cb.args.argarray.size(), 2u);
    ASSERT_EQ(cb.args.argarray[1].argop(), x4::OP_CB_GETATTR);
    WaitInLongStep(base);
    if (HasFatalFailure()) return;
    AnswerCbGetattr(*conn_, cb, x4::NFS4_OK, sc, 0);
    if (HasFatalFailure()) return;
    EXPECT_EQ(status3(), 0u) << "not answered once the holder had (10008: NFS3ERR_JUKEBOX)";

    // NFSPROC3_WRITE (RFC 1813 §3.3.7) of `d`'s file: the delegation is recalled, the
    // holder returns it, and the WRITE is answered.
    auto write_recalled = [&](const Opened& d) {
        wire::XdrOut wa;
        wa.opaque(d.fh).u64(0).u32(4).u32(2 /* FILE_SYNC */).str("v3v3");
        const uint64_t base = Deferred();
        ASSERT_TRUE(send3(7, wa.take())) << why;
        CbCall recall;
        ASSERT_TRUE(NextCbCompound(*conn_, recall));
        ExpectRecall(recall, d.deleg, d.fh);
        WaitInLongStep(base);
        if (HasFatalFailure()) return;
        AnswerCbCompound(*conn_, recall, x4::NFS4_OK);
        EXPECT_EQ(Compound({Sequence(), op_putfh(d.fh), DelegReturn(d.deleg)}).status(),
                  x4::NFS4_OK);
        EXPECT_EQ(status3(), 0u) << "not answered once the delegation was back (10008: JUKEBOX)";
    };
    write_recalled(o);
    if (HasFatalFailure()) return;
    struct stat st {};
    ASSERT_EQ(::stat(disk("v3wait").c_str(), &st), 0);
    EXPECT_EQ(st.st_size, 4) << "the v3 WRITE did not reach the file";

    // A read delegation's file lease: the WRITE's open for writing breaks it, which recalls.
    Opened r = OpenIn("v3wait-read", kRead, true);
    ASSERT_EQ(r.status, x4::NFS4_OK);
    ASSERT_EQ(r.deleg_type, x4::OPEN_DELEGATE_READ);
    write_recalled(r);
    if (HasFatalFailure()) return;
    // Each call ran again when the holder answered or returned (rpc/deferred_wakes.h), not
    // at its next timer, 128 ms later. (Counted over the three: a holder's answer that
    // came while the call's timer was running it finds it in no step to cut short.)
    const auto woken = daemon_->StatsCounter("rpc", "deferred_woken");
    ASSERT_TRUE(woken);
    EXPECT_GE(*woken - *woken0, 2u) << "calls put off were not woken by the holder's answer";
}

// RFC 8881 §10.4.1: another client's COMPOUND that a delegation holds up is not answered
// NFS4ERR_DELAY while the holder can settle it soon (the Linux client would retry after
// 100 ms, then longer): the server puts it off and runs it again whole (its SEQUENCE slot as
// it was), and answers once the holder has returned the delegation (OPEN for writing, REMOVE)
// or answered CB_GETATTR (GETATTR).
TEST_F(Nfs4Delegation, AnotherClientsCompoundHeldUpByADelegationIsAnsweredOnceTheHolderIsDone) {
    // `op` of the other client (after PUTFH of the export) recalls `d`; the holder returns
    // it; then the other client's answer.
    auto recalled = [&](const Opened& d, x4::nfs_argop4 op) {
        const uint64_t base = Deferred();
        SendAsOther({op_putfh(export_fh_), std::move(op)});
        Res none;
        if (HasFatalFailure()) return none;
        CbCall cb;
        EXPECT_TRUE(NextCbCompound(*conn_, cb));
        ExpectRecall(cb, d.deleg, d.fh);
        WaitInLongStep(base);
        if (HasFatalFailure()) return none;
        AnswerCbCompound(*conn_, cb, x4::NFS4_OK);
        EXPECT_EQ(Compound({Sequence(), op_putfh(d.fh), DelegReturn(d.deleg)}).status(),
                  x4::NFS4_OK);
        return ReplyToOther();
    };
    const auto woken0 = daemon_->StatsCounter("rpc", "deferred_woken");
    ASSERT_TRUE(woken0) << "no deferred_woken in the stats dump";
    Opened o = OpenIn("v4wait", kRead, true);
    ASSERT_EQ(o.status, x4::NFS4_OK);
    ASSERT_EQ(o.deleg_type, x4::OPEN_DELEGATE_READ);
    Res b = recalled(o, op_open(view(other_.owner), view("v4wait"), false, kWrite));
    ASSERT_EQ(b.error, "");
    EXPECT_EQ(b.status(), x4::NFS4_OK) << "not answered once the delegation was back (10008: "
                                          "NFS4ERR_DELAY, not put off)";
    // The slot went on as for one request: the other client's next SEQUENCE is in order.
    EXPECT_EQ(AsOther({op_putfh(export_fh_)}).status(), x4::NFS4_OK);

    // GETATTR of a write-delegated file: CB_GETATTR, answered by the holder.
    Opened w = OpenIn("v4attr", kBoth, true);
    ASSERT_EQ(w.status, x4::NFS4_OK);
    ASSERT_EQ(w.deleg_type, x4::OPEN_DELEGATE_WRITE);
    const std::initializer_list<uint32_t> kChangeSize = {x4::FATTR4_CHANGE, x4::FATTR4_SIZE};
    Res granted = Compound({Sequence(), op_putfh(w.fh), op_getattr(kChangeSize)});
    ASSERT_EQ(granted.status(), x4::NFS4_OK);
    const uint64_t sc = ChangeAndSize(granted, 2).first;
    const uint64_t base = Deferred();
    SendAsOther({op_putfh(w.fh), op_getattr(kChangeSize)});
    if (HasFatalFailure()) return;
    CbCall cb;
    ASSERT_TRUE(NextCbCompound(*conn_, cb));
    ASSERT_EQ(cb.args.argarray.size(), 2u);
    ASSERT_EQ(cb.args.argarray[1].argop(), x4::OP_CB_GETATTR);
    WaitInLongStep(base);
    if (HasFatalFailure()) return;
    AnswerCbGetattr(*conn_, cb, x4::NFS4_OK, sc, 0);
    if (HasFatalFailure()) return;
    Res g = ReplyToOther();
    ASSERT_EQ(g.error, "");
    EXPECT_EQ(g.status(), x4::NFS4_OK) << "not answered once the holder had";

    // REMOVE of a read-delegated file.
    Opened r = OpenIn("v4gone", kRead, true);
    ASSERT_EQ(r.status, x4::NFS4_OK);
    ASSERT_EQ(r.deleg_type, x4::OPEN_DELEGATE_READ);
    Res rm = recalled(r, op_remove(view("v4gone")));
    ASSERT_EQ(rm.error, "");
    EXPECT_EQ(rm.status(), x4::NFS4_OK) << "not answered once the delegation was back";
    struct stat st {};
    EXPECT_NE(::stat(disk("v4gone").c_str(), &st), 0) << "the REMOVE did not reach the file";
    const auto woken = daemon_->StatsCounter("rpc", "deferred_woken");
    ASSERT_TRUE(woken);
    EXPECT_GE(*woken - *woken0, 2u) << "COMPOUNDs put off were not woken by the holder's answer";
}

TEST_F(Nfs4Delegation, ATruncatingOpenWaitsAndARefusedRecallIsSentAgain) {
    Opened o = OpenIn("trunc", kBoth, true);
    ASSERT_EQ(o.status, x4::NFS4_OK);
    ASSERT_EQ(o.deleg_type, x4::OPEN_DELEGATE_WRITE);
    const std::string data = "kept";
    ASSERT_EQ(Compound({Sequence(), op_putfh(o.fh), op_write(o.deleg, 0, view(data))}).status(),
              x4::NFS4_OK);
    // The other client's OPEN(CREATE, UNCHECKED4, size 0) of the existing file: not applied
    // while the delegation is out.
    static const uint8_t kZero[8] = {};
    const std::string name = "trunc";  // the op holds a view of it
    x4::nfs_argop4 trunc = op_open(view(other_.owner), view(name), true, kWrite);
    trunc.opopen().openhow.how().createattrs().attrmask = {1u << x4::FATTR4_SIZE};
    trunc.opopen().openhow.how().createattrs().attr_vals = kZero;
    EXPECT_EQ(AsOther({op_putfh(export_fh_), trunc}).status(), x4::NFS4ERR_DELAY);
    struct stat st {};
    ASSERT_EQ(::stat(disk("trunc").c_str(), &st), 0);
    EXPECT_EQ(st.st_size, 4) << "truncated under the write delegation";
    // The holder answers the recall NFS4ERR_BAD_STATEID (as a client does when the CB_RECALL
    // overtakes the OPEN reply): it comes again, on the slot's next sequence id.
    CbCall cb;
    ASSERT_TRUE(NextCbCompound(*conn_, cb));
    ExpectRecall(cb, o.deleg, o.fh);
    if (HasFatalFailure()) return;
    const uint32_t seq = cb.args.argarray[0].opcbsequence().csa_sequenceid;
    AnswerCbCompound(*conn_, cb, x4::NFS4ERR_BAD_STATEID);
    if (HasFatalFailure()) return;
    CbCall again;
    ASSERT_TRUE(NextCbCompound(*conn_, again, 6000)) << "the refused recall was not sent again";
    ExpectRecall(again, o.deleg, o.fh);
    EXPECT_EQ(again.args.argarray[0].opcbsequence().csa_sequenceid, seq + 1);
    AnswerCbCompound(*conn_, again, x4::NFS4_OK);
    ASSERT_EQ(Compound({Sequence(), op_putfh(o.fh), DelegReturn(o.deleg)}).status(), x4::NFS4_OK);
    EXPECT_EQ(AsOther({op_putfh(export_fh_), trunc}).status(), x4::NFS4_OK);
    ASSERT_EQ(::stat(disk("trunc").c_str(), &st), 0);
    EXPECT_EQ(st.st_size, 0);
}

TEST_F(Nfs4Delegation, AnotherClientsReadOpenRecallsAWriteDelegation) {
    Opened o = OpenIn("rw", kBoth, true);
    ASSERT_EQ(o.status, x4::NFS4_OK);
    ASSERT_EQ(o.deleg_type, x4::OPEN_DELEGATE_WRITE);
    Res b = AsOther({op_putfh(export_fh_), op_open(view(other_.owner), view("rw"), false, kRead)});
    EXPECT_EQ(b.status(), x4::NFS4ERR_DELAY);
    CbCall cb;
    ASSERT_TRUE(NextCbCompound(*conn_, cb));
    ExpectRecall(cb, o.deleg, o.fh);
}

TEST_F(Nfs4Delegation, ALocalWriterOnTheServerRecallsAReadDelegation) {
    Opened o = OpenIn("local", kRead, true);
    ASSERT_EQ(o.status, x4::NFS4_OK);
    ASSERT_EQ(o.deleg_type, x4::OPEN_DELEGATE_READ);
    // A process on the server opens the file for writing: the kernel holds it in open(2)
    // (the delegation's file lease) and the daemon recalls the delegation.
    std::atomic<bool> opened{false};
    std::thread local([&] {
        int fd = ::open(disk("local").c_str(), O_WRONLY);
        opened = fd >= 0;
        if (fd >= 0) ::close(fd);
    });
    CbCall cb;
    const bool recalled = NextCbCompound(*conn_, cb);
    EXPECT_FALSE(opened.load()) << "the local writer did not wait for the delegation";
    if (recalled) {
        ExpectRecall(cb, o.deleg, o.fh);
        AnswerCbCompound(*conn_, cb, x4::NFS4_OK);
        EXPECT_EQ(Compound({Sequence(), op_putfh(o.fh), DelegReturn(o.deleg)}).status(),
                  x4::NFS4_OK);
    }
    local.join();
    EXPECT_TRUE(opened.load());
}

// A delegation of a file removed on the server (a local `rm`: no lease break, the kernel
// nfsd would have recalled it first) is not returned by the Linux client: its DELEGRETURN
// COMPOUND asks GETATTR first, which is NFS4ERR_STALE. The delegation ends with its file
// and does not keep DESTROY_CLIENTID busy (§18.50.3), or the client's umount asks ten
// times, a second apart. A delegation of a file still there does.
TEST_F(Nfs4Delegation, ADelegationOfAFileRemovedOnTheServerDoesNotKeepTheClientBusy) {
    Opened kept = OpenIn("kept", kRead, true), gone = OpenIn("gone", kRead, true);
    ASSERT_EQ(kept.deleg_type, x4::OPEN_DELEGATE_READ);
    ASSERT_EQ(gone.deleg_type, x4::OPEN_DELEGATE_READ);
    for (const Opened* o : {&kept, &gone})
        ASSERT_EQ(Compound({Sequence(), op_putfh(o->fh), op_close(o->open)}).status(), x4::NFS4_OK);
    ASSERT_EQ(::unlink(disk("gone").c_str()), 0);
    Res ret = Compound({Sequence(), op_putfh(gone.fh),
                        op_getattr({x4::FATTR4_CHANGE, x4::FATTR4_SIZE}), DelegReturn(gone.deleg)});
    EXPECT_EQ(ret.status(), x4::NFS4ERR_STALE);
    EXPECT_EQ(ret.count(), 3u) << "DELEGRETURN ran after a GETATTR that failed";

    x4::nfs_argop4 destroy_session(x4::OP_DESTROY_SESSION);
    destroy_session.opdestroy_session().dsa_sessionid = session_;
    ASSERT_EQ(Compound({destroy_session}).status(), x4::NFS4_OK);
    x4::nfs_argop4 destroy_client(x4::OP_DESTROY_CLIENTID);
    destroy_client.opdestroy_clientid().dca_clientid = clientid_;
    EXPECT_EQ(Compound({destroy_client}).status(), x4::NFS4ERR_CLIENTID_BUSY)
        << "the delegation of a file still there no longer counts";
    ASSERT_EQ(::unlink(disk("kept").c_str()), 0);
    EXPECT_EQ(Compound({destroy_client}).status(), x4::NFS4_OK)
        << "delegations of removed files keep the client ID busy";
}

// A delegation of a file removed on the server ends (its descriptor closes, the file's
// space is freed) and the holder is told with one CB_RECALL; the DELEGRETURN that follows
// finds no delegation. The file watch sees the unlink at once; without one, the sweep
// finds the file gone within a second.
TEST_F(Nfs4Delegation, ALocalRmOnTheServerEndsTheDelegationWithARecall) {
    Opened o = OpenIn("rm-local", kRead, true);
    ASSERT_EQ(o.deleg_type, x4::OPEN_DELEGATE_READ);
    ASSERT_EQ(Compound({Sequence(), op_putfh(o.fh), op_close(o.open)}).status(), x4::NFS4_OK);
    ASSERT_EQ(::unlink(disk("rm-local").c_str()), 0);
    CbCall cb;
    ASSERT_TRUE(NextCbCompound(*conn_, cb, 5000)) << "no CB_RECALL after the file was removed";
    ExpectRecall(cb, o.deleg, o.fh);
    AnswerCbCompound(*conn_, cb, x4::NFS4_OK);
    EXPECT_EQ(Compound({Sequence(), op_putfh(o.fh), DelegReturn(o.deleg)}).status(),
              x4::NFS4ERR_BAD_STATEID);
    EXPECT_TRUE(NextCall(*conn_, 1500).empty()) << "the recall was sent again";
}

// What a file lease does not see (vfs/file_watch.h): a local chmod, rename, link or
// utimes on the server recalls the delegation of the file, read or write, within
// moments (the sweep never would: the file is not removed), and the holder's
// DELEGRETURN finds it.
TEST_F(Nfs4Delegation, ALocalChmodRenameLinkOrUtimesOnTheServerRecallsTheDelegation) {
    struct Case {
        const char* name;
        uint32_t access;
        std::function<int(const std::string&)> change;
    };
    const std::vector<Case> cases = {
        {"chmod", kRead, [](const std::string& p) { return ::chmod(p.c_str(), 0600); }},
        {"rename", kRead,
         [](const std::string& p) { return ::rename(p.c_str(), (p + ".moved").c_str()); }},
        {"link", kRead, [](const std::string& p) { return ::link(p.c_str(), (p + ".2").c_str()); }},
        {"utimes", kRead,
         [](const std::string& p) {
             const timespec t[2] = {{0, UTIME_OMIT}, {1, 0}};  // the mtime alone
             return ::utimensat(AT_FDCWD, p.c_str(), t, 0);
         }},
        {"chown-write", kBoth, [](const std::string& p) { return ::chown(p.c_str(), 1234, 1234); }},
    };
    for (const Case& c : cases) {
        SCOPED_TRACE(c.name);
        const std::string rel = std::string("watched-") + c.name;
        Opened o = OpenIn(rel, c.access, true);
        ASSERT_EQ(o.status, x4::NFS4_OK);
        ASSERT_NE(o.deleg_type, x4::OPEN_DELEGATE_NONE);
        ASSERT_EQ(c.change(disk(rel)), 0) << std::strerror(errno);
        CbCall cb;
        ASSERT_TRUE(NextCbCompound(*conn_, cb, 3000)) << "no CB_RECALL after a local change";
        ExpectRecall(cb, o.deleg, o.fh);
        AnswerCbCompound(*conn_, cb, x4::NFS4_OK);
        EXPECT_EQ(Compound({Sequence(), op_putfh(o.fh), DelegReturn(o.deleg)}).status(),
                  x4::NFS4_OK);
        EXPECT_EQ(Compound({Sequence(), op_putfh(o.fh), op_close(o.open)}).status(), x4::NFS4_OK);
    }
}

TEST_F(Nfs4Delegation, ALocalReaderOnTheServerRecallsAWriteDelegationAndSeesTheHoldersData) {
    Opened o = OpenIn("wlocal", kBoth, true);
    ASSERT_EQ(o.status, x4::NFS4_OK);
    ASSERT_EQ(o.deleg_type, x4::OPEN_DELEGATE_WRITE);
    // The holder's own WRITE, truncating SETATTR, chmod and COMMIT go through the lease's
    // description: none of them breaks it (no recall comes, nothing waits).
    const std::string data = "held data";
    wire::XdrOut size;
    size.u64(4);
    const wire::Bytes size_val = size.take();
    x4::nfs_argop4 trunc(x4::OP_SETATTR);
    trunc.opsetattr().stateid = o.open;
    trunc.opsetattr().obj_attributes.attrmask = {1u << x4::FATTR4_SIZE};
    trunc.opsetattr().obj_attributes.attr_vals = size_val;
    wire::XdrOut mode;
    mode.u32(0640);
    const wire::Bytes mode_val = mode.take();
    x4::nfs_argop4 chmod(x4::OP_SETATTR);
    chmod.opsetattr().obj_attributes.attrmask = {0, 1u << (x4::FATTR4_MODE - 32)};
    chmod.opsetattr().obj_attributes.attr_vals = mode_val;
    x4::nfs_argop4 commit(x4::OP_COMMIT);
    Res r = Compound(
        {Sequence(), op_putfh(o.fh), op_write(o.deleg, 0, view(data)), trunc, chmod, commit});
    ASSERT_EQ(r.status(), x4::NFS4_OK) << "the holder's own calls under its write delegation";
    EXPECT_TRUE(NextCall(*conn_, 500).empty()) << "the holder's own calls recalled its delegation";
    struct stat st {};
    ASSERT_EQ(::stat(disk("wlocal").c_str(), &st), 0);
    EXPECT_EQ(st.st_size, 4);
    EXPECT_EQ(st.st_mode & 0777, 0640u);
    // A process on the server opens the file, only to read: the kernel holds it in open(2)
    // (the delegation's write lease) and the daemon recalls the delegation.
    std::atomic<bool> opened{false};
    std::string seen;
    std::thread local([&] {
        int fd = ::open(disk("wlocal").c_str(), O_RDONLY);
        opened = fd >= 0;
        if (fd < 0) return;
        char buf[64];
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n > 0) seen.assign(buf, static_cast<size_t>(n));
        ::close(fd);
    });
    CbCall cb;
    const bool recalled = NextCbCompound(*conn_, cb);
    EXPECT_FALSE(opened.load()) << "the local reader did not wait for the write delegation";
    if (recalled) {
        ExpectRecall(cb, o.deleg, o.fh);
        AnswerCbCompound(*conn_, cb, x4::NFS4_OK);
        // What the holder flushes before it gives the delegation back.
        const std::string more = "HELD";
        EXPECT_EQ(Compound({Sequence(), op_putfh(o.fh), op_write(o.deleg, 0, view(more))}).status(),
                  x4::NFS4_OK);
        EXPECT_EQ(Compound({Sequence(), op_putfh(o.fh), DelegReturn(o.deleg)}).status(),
                  x4::NFS4_OK);
    }
    local.join();
    EXPECT_TRUE(opened.load());
    EXPECT_EQ(seen, "HELD");
}

// A local process opens a write-delegated file and wants a lock on it; the holder, as the
// Linux client does, sends the lock it kept to itself while it gives the delegation back.
// The lock is mirrored onto the leased description (no open, so the lease holds): the
// local process gets in only after DELEGRETURN, and then finds the client's lock there.
TEST_F(Nfs4Delegation, TheHoldersLockSentDuringTheRecallIsOnTheFileBeforeALocalOpenerGetsIn) {
    Opened o = OpenIn("wlock", kBoth, true);
    ASSERT_EQ(o.status, x4::NFS4_OK);
    ASSERT_EQ(o.deleg_type, x4::OPEN_DELEGATE_WRITE);
    std::atomic<bool> opened{false};
    std::atomic<int> lock_errno{-1};
    std::thread local([&] {
        int fd = ::open(disk("wlock").c_str(), O_RDWR);
        opened = fd >= 0;
        if (fd < 0) return;
        struct flock fl = test_os::write_lock_range(0, 10);
        lock_errno = ::fcntl(fd, F_OFD_SETLK, &fl) == 0 ? 0 : errno;
        ::close(fd);
    });
    CbCall cb;
    const bool recalled = NextCbCompound(*conn_, cb);
    EXPECT_TRUE(recalled) << "the local open did not recall the write delegation";
    if (recalled) {
        ExpectRecall(cb, o.deleg, o.fh);
        AnswerCbCompound(*conn_, cb, x4::NFS4_OK);
        const std::string lock_owner = "holder-lock-owner";
        Res r = Compound({Sequence(), op_putfh(o.fh),
                          op_lock_new(x4::WRITE_LT, 0, 10, o.open, clientid_, view(lock_owner))});
        EXPECT_EQ(r.status(), x4::NFS4_OK) << "the holder's LOCK during the recall";
        EXPECT_TRUE(NextCall(*conn_, 300).empty()) << "a second recall";
        EXPECT_FALSE(opened.load()) << "the LOCK let the local opener in before DELEGRETURN";
        EXPECT_EQ(Compound({Sequence(), op_putfh(o.fh), DelegReturn(o.deleg)}).status(),
                  x4::NFS4_OK);
    }
    local.join();
    EXPECT_TRUE(opened.load());
    EXPECT_EQ(lock_errno.load(), EAGAIN) << "the local process locked before the client's lock";
}

// The holder opens its write-delegated file again (as the Linux client does after a
// CLOSE): nothing new is granted, and nothing recalled (no lock probe drops the lease).
// Another client's LOCKT then recalls it (its holder may hold locks it has not sent):
// NFS4ERR_DELAY until it is back, then the test's answer.
TEST_F(Nfs4Delegation, AnotherClientsLocktRecallsAWriteDelegationTheHoldersReopenDoesNot) {
    Opened o = OpenIn("wreopen", kBoth, true);
    ASSERT_EQ(o.status, x4::NFS4_OK);
    ASSERT_EQ(o.deleg_type, x4::OPEN_DELEGATE_WRITE);
    Opened again = OpenIn("wreopen", kBoth, false);
    ASSERT_EQ(again.status, x4::NFS4_OK);
    EXPECT_EQ(again.deleg_type, x4::OPEN_DELEGATE_NONE);
    EXPECT_TRUE(NextCall(*conn_, 500).empty()) << "the holder's own OPEN recalled its delegation";

    const std::string lock_owner = "other-lock-owner";
    auto lockt = [&] {
        Swap(other_);
        Res r = Compound({Sequence(), op_putfh(o.fh),
                          op_lockt(x4::READ_LT, 0, 10, clientid_, view(lock_owner))});
        Swap(other_);
        return r.status();
    };
    EXPECT_EQ(lockt(), x4::NFS4ERR_DELAY);
    CbCall cb;
    ASSERT_TRUE(NextCbCompound(*conn_, cb));
    ExpectRecall(cb, o.deleg, o.fh);
    AnswerCbCompound(*conn_, cb, x4::NFS4_OK);
    EXPECT_EQ(lockt(), x4::NFS4ERR_DELAY) << "answered while the delegation is out";
    ASSERT_EQ(Compound({Sequence(), op_putfh(o.fh), DelegReturn(o.deleg)}).status(), x4::NFS4_OK);
    EXPECT_EQ(lockt(), x4::NFS4_OK);
}

// A table bound of 16 delegations (half of engine.fd_cache): at three quarters of it the
// server asks the client holding them to give half back (CB_RECALL_ANY, §20.6), once in a
// while, not every sweep.
class Nfs4RecallAny : public Nfs4Delegation {
  protected:
    std::string Yaml() override {
        return "nfsv4: {enabled: true, lease_time: 10}\nengine: {fd_cache: 32}\n";
    }
};

TEST_F(Nfs4RecallAny, AFullTableAsksTheHolderToReturnSome) {
    std::vector<Opened> held;
    for (int i = 0; i < 12; ++i) {
        Opened o = OpenIn("many" + std::to_string(i), kRead, true);
        ASSERT_EQ(o.status, x4::NFS4_OK);
        ASSERT_EQ(o.deleg_type, x4::OPEN_DELEGATE_READ) << "file " << i;
        held.push_back(o);
    }
    CbCall cb;
    ASSERT_TRUE(NextCbCompound(*conn_, cb, 4000)) << "no CB_RECALL_ANY with 12 of 16 held";
    ASSERT_EQ(cb.args.argarray.size(), 2u);
    EXPECT_EQ(cb.args.argarray[0].argop(), x4::OP_CB_SEQUENCE);
    ASSERT_EQ(cb.args.argarray[1].argop(), x4::OP_CB_RECALL_ANY);
    const auto& ra = cb.args.argarray[1].opcbrecall_any();
    EXPECT_EQ(ra.craa_objects_to_keep, 6u);
    ASSERT_EQ(ra.craa_type_mask.size(), 1u);
    EXPECT_EQ(ra.craa_type_mask[0],
              (1u << x4::RCA4_TYPE_MASK_RDATA_DLG) | (1u << x4::RCA4_TYPE_MASK_WDATA_DLG));
    AnswerCbCompound(*conn_, cb, x4::NFS4_OK);
    if (HasFatalFailure()) return;
    EXPECT_TRUE(NextCall(*conn_, 2500).empty()) << "CB_RECALL_ANY again at once";
    // What a client does: returns the ones it does not need.
    for (int i = 0; i < 6; ++i)
        EXPECT_EQ(Compound({Sequence(), op_putfh(held[i].fh), DelegReturn(held[i].deleg)}).status(),
                  x4::NFS4_OK);
}

// `nfsv4: {delegations: false}`: none is granted, whatever the client wants.
class Nfs4NoDelegation : public Nfs4Delegation {
  protected:
    std::string Yaml() override {
        return "nfsv4: {enabled: true, lease_time: 10, delegations: false}\n";
    }
};

TEST_F(Nfs4NoDelegation, TurnedOffNoneIsGranted) {
    Opened o = OpenIn("plain", kRead | x4::OPEN4_SHARE_ACCESS_WANT_READ_DELEG, true);
    ASSERT_EQ(o.status, x4::NFS4_OK);
    EXPECT_EQ(o.deleg_type, x4::OPEN_DELEGATE_NONE_EXT);
    Opened w = OpenIn("plain2", kBoth, true);
    ASSERT_EQ(w.status, x4::NFS4_OK);
    EXPECT_EQ(w.deleg_type, x4::OPEN_DELEGATE_NONE);
}

}  // namespace
}  // namespace nfsrdmad::e2e
