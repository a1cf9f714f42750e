// nfs4_ops_util.h — runs NFSv4.1 COMPOUNDs against Nfs4Program in-process, over a fresh
// export (VfsFixture: BASE/export, as root, on a file system with persistent handles).
// No transport: the fixture builds the CallContext a transport would, so what is tested
// is exactly the bytes a client would send and get back.
//
//   Nfs4OpsFixture: establish() runs EXCHANGE_ID + CREATE_SESSION; seq({ops}) sends
//   SEQUENCE + ops on slot 0 with the next seqid; raw({ops}) sends ops as they are.
//   A Reply holds the decoded COMPOUND4res (views into bytes it keeps).
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>

#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "nfs/v4/nfs4_program.h"
#include "tests/shared/nfs4_ops.h"
#include "tests/unit/vfs_test_util.h"
#include "transport/rpc/program.h"
#include "xdr/nfs4_prot.h"

namespace nfsrdmad::nfs::v4::testing {

namespace x4 = xdr::nfs4;

class HeapPayload final : public rpc::PayloadBuffer {
  public:
    explicit HeapPayload(size_t n) : b_(n) {}
    uint8_t* data() override { return b_.data(); }
    size_t capacity() const override { return b_.size(); }

  private:
    std::vector<uint8_t> b_;
};

class HeapAllocator final : public rpc::PayloadAllocator {
  public:
    std::unique_ptr<rpc::PayloadBuffer> allocate(size_t n) override {
        if (none) return nullptr;
        return std::make_unique<HeapPayload>(n);
    }
    bool none = false;  // every buffer in flight (RDMA's registered pool)
};

struct Reply {
    rpc::Outcome::Kind kind = rpc::Outcome::Success;
    bool declined = false;                        // with WouldBlock: before any work
    std::shared_ptr<std::vector<uint8_t>> bytes;  // the COMPOUND4res, inline part
    x4::COMPOUND4res res;                         // decoded from `bytes`
    bool decoded = false;
    // Externally placed payloads (READ data), in order.
    std::vector<std::vector<uint8_t>> payloads;

    x4::nfsstat4 status() const { return res.status; }
    size_t count() const { return res.resarray.size(); }
    const x4::nfs_resop4& op(size_t i) const { return res.resarray.at(i); }
};

using namespace nfsrdmad::test_nfs4;  // op_putfh(), op_open(), ... (tests/shared/nfs4_ops.h)

class Nfs4OpsFixture : public vfs::testing::VfsFixture {
  protected:
    // A subclass's changes to the export's one client rule.
    virtual void adjust_rule(vfs::ClientRule&) {}
    void SetUp() override {
        VfsFixture::SetUp();
        // The export as a client sees it: read-write, no root squashing, any port.
        vfs::ClientRule rule;
        rule.read_write = true;
        rule.squash = vfs::ClientRule::None;
        rule.secure = false;
        adjust_rule(rule);
        std::string why;
        auto t = vfs::ExportTable::create({vfs::ExportSpec{export_dir_, 0, {rule}}}, key_, &why);
        ASSERT_TRUE(t.ok()) << why;
        table_ = *t;
        exp_ = table_->exports().at(0);
        registry_ = std::make_shared<vfs::ExportRegistry>(table_);
        program_ = std::make_unique<Nfs4Program>(registry_, options());
        peer_.conn = rpc::next_connection_id();
        peer_.text = "127.0.0.1:700";
        peer_.addr.ss_family = AF_INET;
        auto* in = reinterpret_cast<sockaddr_in*>(&peer_.addr);
        in->sin_port = htons(700);
        in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        peer_.len = sizeof(sockaddr_in);
    }
    void TearDown() override {
        program_.reset();
        registry_.reset();
        VfsFixture::TearDown();
    }
    virtual Options options() const { return {}; }

    // The credential calls go out with: AUTH_SYS root unless changed.
    rpc::Credential cred{vfs::kAuthSys, {0, "test", 0, 0, {}}, {}};

    // One COMPOUND with exactly these operations.
    Reply raw(std::vector<x4::nfs_argop4> ops, uint32_t minorversion = 1) {
        x4::COMPOUND4args a;
        a.minorversion = minorversion;
        a.argarray = std::move(ops);
        std::vector<uint8_t> args;
        xdr::Encoder e(args);
        x4::xdr_encode(e, a);
        return call_bytes(args);
    }

    // The COMPOUND's argument bytes as given (malformed input).
    Reply call_bytes(const std::vector<uint8_t>& args) {
        rpc::CallHeader h;
        h.xid = ++xid_;
        h.prog = x4::NFS4_PROGRAM;
        h.vers = 4;
        h.proc = x4::NFSPROC4_COMPOUND;
        h.cred = cred;
        h.peer = &peer_;
        xdr::Decoder d(args);
        auto out = std::make_shared<std::vector<uint8_t>>();
        xdr::Encoder e(*out);
        std::vector<std::unique_ptr<rpc::PayloadBuffer>> payloads;
        rpc::CallContext ctx(h, d, e, alloc_, payloads);
        ctx.nowait = nowait_;
        Reply r;
        const rpc::Outcome outcome = program_->call(ctx);
        r.kind = outcome.kind;
        r.declined = outcome.declined;
        // The wire form: out-of-line payloads (READ data) back where the inline
        // encoding left room for them.
        auto wire = std::make_shared<std::vector<uint8_t>>();
        size_t from = 0;
        for (const auto& ext : e.externals()) {
            r.payloads.emplace_back(ext.data.begin(), ext.data.end());
            wire->insert(wire->end(), out->begin() + from, out->begin() + ext.offset);
            wire->insert(wire->end(), ext.data.begin(), ext.data.end());
            from = ext.offset;
        }
        wire->insert(wire->end(), out->begin() + from, out->end());
        out = wire;
        r.bytes = out;
        kept_.push_back(out);
        xdr::Decoder rd(*out);
        r.decoded = r.kind == rpc::Outcome::Success && x4::xdr_decode(rd, r.res);
        return r;
    }

    // EXCHANGE_ID + CREATE_SESSION with `owner`; the session seq() uses from then on.
    void establish(const std::string& owner = "test-client") {
        owner_ = owner;
        Reply r1 =
            raw({op_exchange_id({reinterpret_cast<const uint8_t*>(owner_.data()), owner_.size()})});
        ASSERT_TRUE(r1.decoded);
        ASSERT_EQ(r1.status(), x4::NFS4_OK);
        const auto& er = r1.op(0).opexchange_id().eir_resok4();
        clientid_ = er.eir_clientid;

        Reply r2 = raw({op_create_session(clientid_, er.eir_sequenceid)});
        ASSERT_TRUE(r2.decoded);
        ASSERT_EQ(r2.status(), x4::NFS4_OK);
        sessionid_ = r2.op(0).opcreate_session().csr_resok4().csr_sessionid;
        seqid_ = 0;
        // As the Linux client: RECLAIM_COMPLETE before any OPEN (§18.51.3), unless the test
        // reclaims (reclaim_complete_ false).
        if (reclaim_complete_) {
            Reply r3 = seq({op_reclaim_complete()});
            ASSERT_TRUE(r3.decoded);
            // COMPLETE_ALREADY: another session of a client that sent it.
            ASSERT_TRUE(r3.status() == x4::NFS4_OK || r3.status() == x4::NFS4ERR_COMPLETE_ALREADY)
                << r3.status();
        }
    }
    bool reclaim_complete_ = true;

    x4::nfs_argop4 sequence_op(bool cachethis = false, uint32_t slot = 0) {
        x4::nfs_argop4 op(x4::OP_SEQUENCE);
        auto& s = op.opsequence();
        s.sa_sessionid = sessionid_;
        s.sa_sequenceid = ++seqid_;
        s.sa_slotid = slot;
        s.sa_highest_slotid = slot;
        s.sa_cachethis = cachethis;
        return op;
    }

    // SEQUENCE (slot 0, next seqid) + ops.
    Reply seq(std::vector<x4::nfs_argop4> ops, bool cachethis = false) {
        ops.insert(ops.begin(), sequence_op(cachethis));
        return raw(std::move(ops));
    }

    // Keeps strings alive for the views argument structures hold.
    std::span<const uint8_t> keep(const std::string& s) {
        auto& k = strings_.emplace_back(s);
        return {reinterpret_cast<const uint8_t*>(k.data()), k.size()};
    }

    std::shared_ptr<vfs::ExportRegistry> registry_;
    std::unique_ptr<Nfs4Program> program_;
    rpc::Peer peer_;
    HeapAllocator alloc_;
    bool nowait_ = false;  // calls as a reactor tries them (rpc::CallContext::nowait)
    uint32_t xid_ = 0;
    std::string owner_;
    uint64_t clientid_ = 0;
    x4::sessionid4 sessionid_{};
    uint32_t seqid_ = 0;
    std::deque<std::shared_ptr<std::vector<uint8_t>>> kept_;
    std::deque<std::string> strings_;
};

}  // namespace nfsrdmad::nfs::v4::testing
