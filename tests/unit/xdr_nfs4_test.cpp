// The NFSv4.1 codecs xdrgen generates from RFC 5662's nfs4_prot.x: COMPOUND round trips,
// byte-exact encodings against XDR words written out by hand (RFC 4506), and the inputs a
// decoder must refuse: truncation, a discriminant no arm takes, an array or an opaque past
// its bound.
#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string_view>
#include <type_traits>
#include <variant>  // std::bad_variant_access: a union arm that is not live

#include "xdr/nfs4_prot.h"
#include "tests/unit/xdr_bytes.h"

using namespace nfsrdmad;
namespace x4 = xdr::nfs4;

namespace {

using xdr::testing::be;
using xdr::testing::encode;

std::span<const uint8_t> bytes(std::string_view s) {
    return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

std::string_view text(std::span<const uint8_t> s) {
    return {reinterpret_cast<const char*>(s.data()), s.size()};
}

// Decodes all of `b` (nothing may be left over) into `v`.
template <class T>
bool decode_all(const std::vector<uint8_t>& b, T& v) {
    xdr::Decoder d(b);
    return xdr_decode(d, v) && d.ok() && d.remaining() == 0;
}

// Decoded opaques and strings are views into the bytes decoded: those stay alive for the
// whole test program.
const std::vector<uint8_t>& keep(std::vector<uint8_t> b) {
    static std::deque<std::vector<uint8_t>> kept;
    return kept.emplace_back(std::move(b));
}

// Decode, re-encode: the same bytes (one encoding per value, RFC 4506), and every
// shorter prefix of them fails to decode.
template <class T>
T round_trip(const T& v) {
    const auto& b = keep(encode(v));
    T back;
    EXPECT_TRUE(decode_all(b, back));
    EXPECT_EQ(encode(back), b);
    for (size_t n = 0; n < b.size(); ++n) {
        std::vector<uint8_t> prefix(b.begin(), b.begin() + n);
        xdr::Decoder d(prefix);
        T t;
        EXPECT_FALSE(xdr_decode(d, t)) << "a prefix of " << n << " of " << b.size() << " bytes";
    }
    return back;
}

const x4::sessionid4 kSession = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
const uint8_t kFh[] = {0xde, 0xad, 0xbe, 0xef, 0xca, 0xfe, 0xf0, 0x0d};

x4::nfs_argop4 sequence_op() {
    x4::nfs_argop4 op(x4::OP_SEQUENCE);
    auto& s = op.opsequence();
    s.sa_sessionid = kSession;
    s.sa_sequenceid = 1;
    s.sa_slotid = 0;
    s.sa_highest_slotid = 0;
    s.sa_cachethis = false;
    return op;
}

x4::nfs_argop4 putfh_op() {
    x4::nfs_argop4 op(x4::OP_PUTFH);
    op.opputfh().object = kFh;
    return op;
}

x4::nfs_argop4 getattr_op() {
    x4::nfs_argop4 op(x4::OP_GETATTR);
    // type, change, size, fsid, fileid | mode, numlinks, owner, owner_group, ..., times
    op.opgetattr().attr_request = {0x0010011a, 0x00b0a23a};
    return op;
}

}  // namespace

TEST(XdrNfs4, ConstantsKeepTheirWidth) {
    static_assert(std::is_same_v<decltype(x4::NFS4_UINT64_MAX), const uint64_t>);
    static_assert(std::is_same_v<decltype(x4::NFS4_FHSIZE), const uint32_t>);
    EXPECT_EQ(x4::NFS4_UINT64_MAX, 0xffffffffffffffffull);
    EXPECT_EQ(x4::NFS4_INT64_MAX, 0x7fffffffffffffffull);
    EXPECT_EQ(x4::NFS4_MAXFILEOFF, 0xfffffffffffffffeull);
    EXPECT_EQ(x4::RET4_DURATION_INFINITE, 0xffffffffffffffffull);
    EXPECT_EQ(x4::NFS4_UINT32_MAX, 0xffffffffu);
    EXPECT_EQ(x4::EXCHGID4_FLAG_CONFIRMED_R, 0x80000000u);
    // An enumerator defined by a constant (RFC 5662's layoutreturn_type4).
    EXPECT_EQ(x4::LAYOUTRETURN4_ALL, 3);
    EXPECT_EQ(x4::NFS4_PROGRAM, 100003u);
    EXPECT_EQ(x4::NFS_V4, 4u);
    EXPECT_EQ(x4::NFS4_CALLBACK, 0x40000000u);
}

// SEQUENCE, PUTFH, GETATTR with a two-word bitmap: the COMPOUND a Linux client sends
// first on a session, word by word (RFC 4506 §4.10 opaque, §4.13 arrays, §4.15 unions).
TEST(XdrNfs4, Compound4ArgsIsByteExact) {
    x4::COMPOUND4args a;
    a.tag = bytes("t1");
    a.minorversion = 1;
    a.argarray = {sequence_op(), putfh_op(), getattr_op()};
    const auto want = be({
        2,  0x74310000,                                      // tag "t1", padded
        1,                                                   // minorversion
        3,                                                   // three operations
        53, 0x00010203, 0x04050607, 0x08090a0b, 0x0c0d0e0f,  // SEQUENCE, sessionid[16]
        1,  0,          0,          0,                       // sequenceid, slot, highest, cachethis
        22, 8,          0xdeadbeef, 0xcafef00d,              // PUTFH, nfs_fh4<128>
        9,  2,          0x0010011a, 0x00b0a23a,              // GETATTR, bitmap4<>
    });
    EXPECT_EQ(encode(a), want);
    x4::COMPOUND4args back;
    ASSERT_TRUE(decode_all(want, back));
    EXPECT_EQ(text(back.tag), "t1");
    ASSERT_EQ(back.argarray.size(), 3u);
    EXPECT_EQ(back.argarray[0].argop(), x4::OP_SEQUENCE);
    EXPECT_EQ(back.argarray[0].opsequence().sa_sessionid, kSession);
    EXPECT_EQ(back.argarray[1].opputfh().object.size(), sizeof kFh);
    EXPECT_EQ(back.argarray[1].opputfh().object.data(), want.data() + 4 * 15)
        << "an opaque borrows from the buffer";
    EXPECT_EQ(back.argarray[2].opgetattr().attr_request,
              (std::vector<uint32_t>{0x0010011a, 0x00b0a23a}));
    EXPECT_THROW(back.argarray[2].opputfh(), std::bad_variant_access)
        << "only the arm the discriminant selects is there";
}

TEST(XdrNfs4, Compound4ResIsByteExact) {
    x4::COMPOUND4res r;
    r.status = x4::NFS4_OK;
    r.resarray.resize(3);
    auto& seq = r.resarray[0]
                    .set_resop(x4::OP_SEQUENCE)
                    .opsequence()
                    .set_sr_status(x4::NFS4_OK)
                    .sr_resok4();
    seq.sr_sessionid = kSession;
    seq.sr_sequenceid = 1;
    seq.sr_target_highest_slotid = 63;
    r.resarray[1].set_resop(x4::OP_PUTFH).opputfh().status = x4::NFS4_OK;
    auto& rd = r.resarray[2].set_resop(x4::OP_READ).opread().resok4();
    rd.eof = true;
    rd.data = bytes("hello");
    const auto want = be({
        0,                                                  // status
        0,                                                  // empty tag
        3,                                                  // three results
        53,         0,                                      // SEQUENCE, NFS4_OK
        0x00010203, 0x04050607, 0x08090a0b, 0x0c0d0e0f,     // sessionid
        1,          0,          0,          63,         0,  // seq, slot, highest, target, flags
        22,         0,                                      // PUTFH, NFS4_OK
        25,         0,          1,          5,          0x68656c6c,
        0x6f000000,  // READ, OK, eof, "hello" padded
    });
    EXPECT_EQ(encode(r), want);
    auto back = round_trip(r);
    EXPECT_EQ(back.resarray[2].opread().resok4().eof, true);
    EXPECT_EQ(text(back.resarray[2].opread().resok4().data), "hello");

    // An error result carries nothing but its status (the void default arm).
    x4::nfs_resop4 failed(x4::OP_READ);
    failed.opread().set_status(x4::NFS4ERR_OPENMODE);
    EXPECT_EQ(encode(failed), be({25, 10038}));
    // LOCK's NFS4ERR_DENIED arm: the conflicting lock.
    x4::nfs_resop4 denied(x4::OP_LOCK);
    auto& d = denied.oplock().set_status(x4::NFS4ERR_DENIED).denied();
    d.offset = 0x100000000ull;
    d.length = x4::NFS4_UINT64_MAX;
    d.locktype = x4::WRITE_LT;
    d.owner.clientid = 7;
    d.owner.owner = bytes("o");
    EXPECT_EQ(encode(denied),
              be({12, 10010, 1, 0, 0xffffffff, 0xffffffff, 2, 0, 7, 1, 0x6f000000}));
    round_trip(denied);
}

TEST(XdrNfs4, EveryOpenClaimRoundTrips) {
    const std::string_view name = "file.txt";
    for (int32_t claim = x4::CLAIM_NULL; claim <= x4::CLAIM_DELEG_PREV_FH; ++claim) {
        x4::COMPOUND4args a;
        a.minorversion = 1;
        a.argarray = {sequence_op(), putfh_op()};
        a.argarray.reserve(4);  // the references below outlive the last push_back
        x4::nfs_argop4& op = a.argarray.emplace_back(x4::OP_OPEN);
        x4::OPEN4args& o = op.opopen();
        o.seqid = 0;
        o.share_access = x4::OPEN4_SHARE_ACCESS_BOTH | x4::OPEN4_SHARE_ACCESS_WANT_NO_DELEG;
        o.share_deny = x4::OPEN4_SHARE_DENY_NONE;
        o.owner.clientid = 0x1122334455667788ull;
        o.owner.owner = bytes("open id:1");
        auto& how = o.openhow.set_opentype(x4::OPEN4_CREATE).how();
        auto& both = how.set_mode(x4::EXCLUSIVE4_1).ch_createboth();
        both.cva_verf = {1, 2, 3, 4, 5, 6, 7, 8};
        both.cva_attrs.attrmask = {0, 2};  // mode
        const uint8_t mode[] = {0, 0, 1, 0xa4};
        both.cva_attrs.attr_vals = mode;
        auto& c = o.claim.set_claim(static_cast<x4::open_claim_type4>(claim));
        switch (claim) {
            case x4::CLAIM_NULL:
                c.file() = bytes(name);
                break;
            case x4::CLAIM_PREVIOUS:
                c.delegate_type() = x4::OPEN_DELEGATE_READ;
                break;
            case x4::CLAIM_DELEGATE_CUR:
                c.delegate_cur_info().delegate_stateid.seqid = 3;
                c.delegate_cur_info().file = bytes(name);
                break;
            case x4::CLAIM_DELEGATE_PREV:
                c.file_delegate_prev() = bytes(name);
                break;
            case x4::CLAIM_DELEG_CUR_FH:
                c.oc_delegate_stateid().other[11] = 0x42;
                break;
            default:
                break;  // CLAIM_FH, CLAIM_DELEG_PREV_FH: void
        }
        a.argarray.push_back(getattr_op());
        auto back = round_trip(a);
        ASSERT_EQ(back.argarray.size(), 4u);
        const auto& bo = back.argarray[2].opopen();
        EXPECT_EQ(bo.claim.claim(), claim);
        EXPECT_EQ(bo.openhow.how().mode(), x4::EXCLUSIVE4_1);
        EXPECT_EQ(bo.openhow.how().ch_createboth().cva_verf, both.cva_verf);
        EXPECT_EQ(bo.owner.clientid, 0x1122334455667788ull);
        switch (claim) {
            case x4::CLAIM_NULL:
                EXPECT_EQ(text(bo.claim.file()), name);
                break;
            case x4::CLAIM_PREVIOUS:
                EXPECT_EQ(bo.claim.delegate_type(), x4::OPEN_DELEGATE_READ);
                break;
            case x4::CLAIM_DELEGATE_CUR:
                EXPECT_EQ(bo.claim.delegate_cur_info().delegate_stateid.seqid, 3u);
                EXPECT_EQ(text(bo.claim.delegate_cur_info().file), name);
                break;
            case x4::CLAIM_DELEGATE_PREV:
                EXPECT_EQ(text(bo.claim.file_delegate_prev()), name);
                break;
            case x4::CLAIM_DELEG_CUR_FH:
                EXPECT_EQ(bo.claim.oc_delegate_stateid().other[11], 0x42);
                break;
            default:
                EXPECT_THROW(bo.claim.file(), std::bad_variant_access);
                break;
        }
    }
}

TEST(XdrNfs4, OpenResultWithDelegationRoundTrips) {
    x4::OPEN4res r;
    auto& ok = r.resok4();  // NFS4_OK is discriminant 0: a default result is a success
    ok.stateid.seqid = 1;
    ok.cinfo = {true, 5, 6};
    ok.rflags = x4::OPEN4_RESULT_LOCKTYPE_POSIX;
    auto& none = ok.delegation.set_delegation_type(x4::OPEN_DELEGATE_NONE_EXT).od_whynone();
    none.set_ond_why(x4::WND4_CONTENTION).ond_server_will_push_deleg() = true;
    auto back = round_trip(r);
    EXPECT_EQ(back.resok4().delegation.od_whynone().ond_why(), x4::WND4_CONTENTION);
    EXPECT_TRUE(back.resok4().delegation.od_whynone().ond_server_will_push_deleg());
}

TEST(XdrNfs4, ReadWriteRoundTrip) {
    const std::vector<uint8_t> data(1000, 0x5a);
    x4::COMPOUND4args a;
    a.argarray = {sequence_op(), putfh_op()};
    auto& w = a.argarray.emplace_back(x4::OP_WRITE).opwrite();
    w.stateid.seqid = 2;
    w.offset = 0x123456789ull;
    w.stable = x4::FILE_SYNC4;
    w.data = data;
    auto& rd = a.argarray.emplace_back(x4::OP_READ).opread();
    rd.offset = 4096;
    rd.count = 1 << 20;
    auto back = round_trip(a);
    EXPECT_EQ(back.argarray[2].opwrite().offset, 0x123456789ull);
    EXPECT_EQ(back.argarray[2].opwrite().data.size(), 1000u);
    EXPECT_EQ(back.argarray[3].opread().count, 1u << 20);

    x4::COMPOUND4res r;
    auto& wr = r.resarray.emplace_back(x4::OP_WRITE).opwrite().resok4();
    wr.count = 1000;
    wr.committed = x4::FILE_SYNC4;
    wr.writeverf = {9, 9, 9, 9, 9, 9, 9, 9};
    r.resarray.emplace_back(x4::OP_READ).opread().resok4().data = data;
    auto rback = round_trip(r);
    EXPECT_EQ(rback.resarray[0].opwrite().resok4().committed, x4::FILE_SYNC4);
    EXPECT_EQ(rback.resarray[1].opread().resok4().data.size(), 1000u);
}

TEST(XdrNfs4, ExchangeIdAndCreateSessionRoundTrip) {
    x4::COMPOUND4args a;
    a.minorversion = 1;
    auto& ex = a.argarray.emplace_back(x4::OP_EXCHANGE_ID).opexchange_id();
    ex.eia_clientowner.co_verifier = {1, 1, 2, 3, 5, 8, 13, 21};
    ex.eia_clientowner.co_ownerid = bytes("Linux NFSv4.1 client");
    ex.eia_flags = x4::EXCHGID4_FLAG_SUPP_MOVED_REFER | x4::EXCHGID4_FLAG_BIND_PRINC_STATEID;
    auto& ops = ex.eia_state_protect.set_spa_how(x4::SP4_MACH_CRED).spa_mach_ops();
    ops.spo_must_enforce = {0x00100000, 0x00000050};
    ops.spo_must_allow = {0};
    auto& impl = ex.eia_client_impl_id.emplace_back();
    impl.nii_domain = bytes("kernel.org");
    impl.nii_name = bytes("Linux 6.1");
    impl.nii_date = {-1, 999999999};  // nfstime4 seconds is a signed hyper

    auto& cs = a.argarray.emplace_back(x4::OP_CREATE_SESSION).opcreate_session();
    cs.csa_clientid = 0xfeedfacecafebeefull;
    cs.csa_sequence = 1;
    cs.csa_flags = x4::CREATE_SESSION4_FLAG_CONN_BACK_CHAN;
    cs.csa_fore_chan_attrs = {0, 1049620, 1049480, 7584, 8, 64, {}};
    cs.csa_back_chan_attrs = {0, 4096, 4096, 0, 2, 16, {}};
    cs.csa_fore_chan_attrs.ca_rdma_ird = {16};  // <1>: at most one
    cs.csa_cb_program = 0x40000000;
    cs.csa_sec_parms.emplace_back(x4::AUTH_NONE);
    auto& sys = cs.csa_sec_parms.emplace_back(x4::AUTH_SYS).cbsp_sys_cred();
    sys.machinename = "client";
    sys.uid = 0;
    sys.gids = {0, 10};
    auto back = round_trip(a);
    const auto& bex = back.argarray[0].opexchange_id();
    EXPECT_EQ(text(bex.eia_clientowner.co_ownerid), "Linux NFSv4.1 client");
    EXPECT_EQ(bex.eia_state_protect.spa_how(), x4::SP4_MACH_CRED);
    EXPECT_EQ(bex.eia_state_protect.spa_mach_ops().spo_must_enforce.size(), 2u);
    EXPECT_EQ(bex.eia_client_impl_id.at(0).nii_date.seconds, -1);
    const auto& bcs = back.argarray[1].opcreate_session();
    EXPECT_EQ(bcs.csa_clientid, 0xfeedfacecafebeefull);
    EXPECT_EQ(bcs.csa_fore_chan_attrs.ca_maxrequestsize, 1049620u);
    EXPECT_EQ(bcs.csa_fore_chan_attrs.ca_rdma_ird, std::vector<uint32_t>{16});
    ASSERT_EQ(bcs.csa_sec_parms.size(), 2u);
    EXPECT_EQ(bcs.csa_sec_parms[1].cbsp_sys_cred().machinename, "client");

    x4::COMPOUND4res r;
    auto& exr = r.resarray.emplace_back(x4::OP_EXCHANGE_ID).opexchange_id().eir_resok4();
    exr.eir_clientid = 0xfeedfacecafebeefull;
    exr.eir_flags = x4::EXCHGID4_FLAG_USE_NON_PNFS | x4::EXCHGID4_FLAG_CONFIRMED_R;
    exr.eir_server_owner.so_major_id = bytes("nfsrdmad");
    exr.eir_server_scope = bytes("scope");
    auto& csr = r.resarray.emplace_back(x4::OP_CREATE_SESSION).opcreate_session().csr_resok4();
    csr.csr_sessionid = kSession;
    csr.csr_fore_chan_attrs.ca_maxoperations = 16;
    auto rback = round_trip(r);
    EXPECT_EQ(rback.resarray[0].opexchange_id().eir_resok4().eir_flags,
              x4::EXCHGID4_FLAG_USE_NON_PNFS | x4::EXCHGID4_FLAG_CONFIRMED_R);
    EXPECT_EQ(rback.resarray[1].opcreate_session().csr_resok4().csr_sessionid, kSession);
}

// entry4's `entry4 *nextentry` is a list: TRUE before each entry, FALSE after the last
// (RFC 4506 §4.19); pathname4 is an array of component4 <- utf8str_cs <- utf8string.
TEST(XdrNfs4, ListsAndTypedefChainsRoundTrip) {
    x4::READDIR4res r;
    auto& ok = r.resok4();
    ok.cookieverf = {1, 2, 3, 4, 5, 6, 7, 8};
    for (const char* name : {"a", "bb", "ccc"}) {
        auto& e = ok.reply.entries.emplace_back();
        e.cookie = ok.reply.entries.size();
        e.name = bytes(name);
        e.attrs.attrmask = {0x2};  // type
        e.attrs.attr_vals = bytes(std::string_view("\0\0\0\1", 4));
    }
    ok.reply.eof = true;
    auto b = encode(r);
    // status, verifier, then TRUE + entry for each, FALSE, eof.
    const auto first = be({0, 0x01020304, 0x05060708, 1, 0, 1, 1, 0x61000000, 1, 2, 4, 1});
    ASSERT_GT(b.size(), first.size());
    EXPECT_TRUE(std::equal(first.begin(), first.end(), b.begin()));
    EXPECT_EQ(std::vector<uint8_t>(b.end() - 8, b.end()), be({0, 1}));
    auto back = round_trip(r);
    ASSERT_EQ(back.resok4().reply.entries.size(), 3u);
    EXPECT_EQ(text(back.resok4().reply.entries[2].name), "ccc");
    EXPECT_TRUE(back.resok4().reply.eof);

    x4::fs_locations4 loc;
    loc.fs_root = {bytes("srv"), bytes("data")};
    auto& l = loc.locations.emplace_back();
    l.server = {bytes("10.0.0.1"), bytes("server.example.com")};
    l.rootpath = {bytes("export")};
    EXPECT_EQ(encode(loc),
              be({2,          3,          0x73727600, 4,  0x64617461, 1,          2,
                  8,          0x31302e30, 0x2e302e31, 18, 0x73657276, 0x65722e65, 0x78616d70,
                  0x6c652e63, 0x6f6d0000, 1,          6,  0x6578706f, 0x72740000}));
    auto lback = round_trip(loc);
    EXPECT_EQ(text(lback.locations.at(0).server.at(1)), "server.example.com");
}

TEST(XdrNfs4, ProcCodecsTableHasCompound) {
    bool args = false, res = false;
    for (const auto& pc : x4::proc_codecs()) {
        if (pc.prog == x4::NFS4_PROGRAM && pc.proc == x4::NFSPROC4_COMPOUND) {
            args = pc.args != nullptr;
            res = pc.res != nullptr;
        }
    }
    EXPECT_TRUE(args);
    EXPECT_TRUE(res);
}

// -- what a decoder must refuse --------------------------------------------------------

TEST(XdrNfs4, TruncatedCompoundFails) {
    x4::COMPOUND4args a;
    a.argarray = {sequence_op(), putfh_op(), getattr_op()};
    auto b = encode(a);
    b.resize(b.size() - 4);  // the bitmap's last word is missing
    x4::COMPOUND4args back;
    xdr::Decoder d(b);
    EXPECT_FALSE(xdr_decode(d, back));
    EXPECT_FALSE(d.ok());
}

TEST(XdrNfs4, DiscriminantNoArmTakesFails) {
    // An operation number nfs_opnum4 does not list (RFC 8881 §15.2: OP_ILLEGAL's job is
    // the server's; the decoder only refuses it).
    for (uint32_t op : {0u, 1u, 2u, 59u, 10043u, 0xffffffffu}) {
        auto b = be({0, 1, 1, op});
        x4::COMPOUND4args a;
        EXPECT_FALSE(decode_all(b, a)) << "op " << op;
    }
    // OP_ILLEGAL itself is a listed value with a void arm.
    x4::COMPOUND4args ill;
    EXPECT_TRUE(decode_all(be({0, 1, 1, 10044}), ill));
    EXPECT_EQ(ill.argarray.at(0).argop(), x4::OP_ILLEGAL);
    // open_claim_type4 7 and createmode4 4 are not in their enums.
    auto open_args = [](uint32_t createmode, uint32_t claim) {
        // seqid, access, deny, owner {clientid, owner<>}, OPEN4_CREATE, createhow4
        // (an empty fattr4 for UNCHECKED4), the claim (an empty name for CLAIM_NULL).
        return be({0, 1, 0, 0, 0, 0, 1, createmode, 0, 0, claim, 0});
    };
    x4::OPEN4args o;
    EXPECT_TRUE(decode_all(open_args(x4::UNCHECKED4, x4::CLAIM_NULL), o));
    EXPECT_FALSE(decode_all(open_args(x4::UNCHECKED4, 7), o));
    EXPECT_FALSE(decode_all(open_args(4, x4::CLAIM_NULL), o));
    // A union without a default arm: limit_by4 lists 1 and 2 only; a bool only 0 and 1.
    x4::nfs_space_limit4 lim;
    EXPECT_TRUE(decode_all(be({2, 8, 512}), lim));
    EXPECT_FALSE(decode_all(be({3, 8, 512}), lim));
    x4::newtime4 nt;
    EXPECT_FALSE(decode_all(be({2}), nt));
    // A union whose default arm is void: any listed status decodes, an unlisted one not.
    x4::GETATTR4res gr;
    EXPECT_TRUE(decode_all(be({10006}), gr));
    EXPECT_FALSE(decode_all(be({19}), gr)) << "nfsstat4 never lists 19";
}

TEST(XdrNfs4, ArrayPastItsBoundFails) {
    // channel_attrs4.ca_rdma_ird<1>: two entries are one too many.
    auto create_session = [](uint32_t ird_count) {
        std::vector<uint32_t> w = {0, 1,    1,    0,  // clientid, sequence, flags
                                   0, 1024, 1024, 0, 8, 16, ird_count};
        for (uint32_t i = 0; i < ird_count; ++i) w.push_back(16);
        for (uint32_t v : {0u, 4096u, 4096u, 0u, 2u, 16u, 0u}) w.push_back(v);
        w.push_back(0x40000000);  // cb_program
        w.push_back(0);           // no sec_parms
        std::vector<uint8_t> b;
        for (uint32_t v : w)
            for (int s = 24; s >= 0; s -= 8) b.push_back(uint8_t(v >> s));
        return b;
    };
    x4::CREATE_SESSION4args cs;
    EXPECT_TRUE(decode_all(create_session(0), cs));
    EXPECT_TRUE(decode_all(create_session(1), cs));
    EXPECT_EQ(cs.csa_fore_chan_attrs.ca_rdma_ird, std::vector<uint32_t>{16});
    EXPECT_FALSE(decode_all(create_session(2), cs));
    // EXCHANGE_ID4args.eia_client_impl_id<1> likewise.
    x4::EXCHANGE_ID4args ex;
    ex.eia_client_impl_id.resize(2);
    EXPECT_FALSE(decode_all(keep(encode(ex)), ex));
    ex.eia_client_impl_id.resize(1);
    EXPECT_TRUE(decode_all(keep(encode(ex)), ex));
    // An unbounded count larger than the bytes that could hold it.
    x4::COMPOUND4args a;
    EXPECT_FALSE(decode_all(be({0, 1, 0x10000000, x4::OP_GETFH}), a));
}

TEST(XdrNfs4, OpaquePastItsBoundFails) {
    // nfs_fh4 is opaque<NFS4_FHSIZE = 128>.
    auto putfh = [](uint32_t len) {
        auto b = be({len});
        b.resize(4 + len + xdr::pad4(len), 0x11);
        return b;
    };
    x4::PUTFH4args p;
    EXPECT_TRUE(decode_all(putfh(128), p));
    EXPECT_EQ(p.object.size(), 128u);
    EXPECT_FALSE(decode_all(putfh(129), p));
    // client_owner4.co_ownerid is opaque<NFS4_OPAQUE_LIMIT = 1024>.
    x4::client_owner4 co;
    std::vector<uint8_t> owner(1025, 'o');
    co.co_ownerid = owner;
    EXPECT_FALSE(decode_all(keep(encode(co)), co));
    owner.resize(1024);
    co.co_ownerid = owner;
    EXPECT_TRUE(decode_all(keep(encode(co)), co));
    // authsys_parms.machinename is string<255>, inside CREATE_SESSION's callback_sec_parms4.
    x4::callback_sec_parms4 sec(x4::AUTH_SYS);
    std::string host(256, 'h');
    sec.cbsp_sys_cred().machinename = host;
    EXPECT_FALSE(decode_all(keep(encode(sec)), sec));
}

// The fuzz target's seeds (tests/fuzz/make_seeds.py) are valid COMPOUNDs: each decodes
// completely and re-encodes to its own bytes.
TEST(XdrNfs4, FuzzSeedsDecode) {
    const std::filesystem::path dir =
        std::filesystem::path(NFSRDMAD_SOURCE_DIR) / "tests/fuzz/corpus/compound4_args";
    int seeds = 0;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
        if (entry.path().filename().string().rfind("seed-", 0) != 0) continue;
        std::ifstream in(entry.path(), std::ios::binary);
        std::vector<uint8_t> b{std::istreambuf_iterator<char>(in), {}};
        x4::COMPOUND4args a;
        EXPECT_TRUE(decode_all(b, a)) << entry.path();
        EXPECT_EQ(encode(a), b) << entry.path();
        ++seeds;
    }
    EXPECT_GE(seeds, 10);
}

// The COMPOUND engine finds an operation's end with xdr_skip (xdrgen --skip) before any
// operation runs, and each operation decodes its arguments when it runs: the two must
// accept the same operations and end each at the same byte. Checked on every fuzz seed,
// cut short at every word and with every word replaced by values that break bounds,
// booleans, enums and discriminants.
TEST(XdrNfs4, SkipAcceptsExactlyWhatDecodeAccepts) {
    const std::filesystem::path dir =
        std::filesystem::path(NFSRDMAD_SOURCE_DIR) / "tests/fuzz/corpus/compound4_args";
    size_t accepted = 0, refused = 0;
    auto check = [&](const std::vector<uint8_t>& b, const std::string& what) {
        xdr::Decoder head(b);
        head.get_opaque(xdr::kUnbounded);  // tag
        head.get_u32();                    // minorversion
        const uint32_t count = head.get_u32();
        xdr::Decoder skipped = head, decoded = head;
        for (uint32_t i = 0; head.ok() && i < count; ++i) {
            const bool s = x4::xdr_skip(skipped, std::type_identity<x4::nfs_argop4>{});
            x4::nfs_argop4 op;
            const bool d = x4::xdr_decode(decoded, op);
            ASSERT_EQ(s, d) << what << ", operation " << i;
            if (!d) {
                ++refused;
                return;
            }
            ++accepted;
            ASSERT_EQ(skipped.offset(), decoded.offset()) << what << ", operation " << i;
        }
    };
    int seeds = 0;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
        if (entry.path().filename().string().rfind("seed-", 0) != 0) continue;
        std::ifstream in(entry.path(), std::ios::binary);
        const std::vector<uint8_t> b{std::istreambuf_iterator<char>(in), {}};
        ++seeds;
        const std::string name = entry.path().filename().string();
        check(b, name);
        for (size_t cut = 0; cut < b.size(); cut += 4)
            check(std::vector<uint8_t>(b.begin(), b.begin() + cut),
                  name + " cut at " + std::to_string(cut));
        for (size_t w = 0; w + 4 <= b.size(); w += 4) {
            for (uint32_t v : {0u, 1u, 2u, 3u, 4u, 0x80u, 0x7fffffffu, 0xffffffffu}) {
                std::vector<uint8_t> m = b;
                m[w] = uint8_t(v >> 24), m[w + 1] = uint8_t(v >> 16);
                m[w + 2] = uint8_t(v >> 8), m[w + 3] = uint8_t(v);
                check(m, name + " word " + std::to_string(w / 4) + " = " + std::to_string(v));
                if (::testing::Test::HasFatalFailure()) return;
            }
        }
    }
    EXPECT_GE(seeds, 10);
    EXPECT_GT(accepted, 1000u) << "the operations read past";
    EXPECT_GT(refused, 100u) << "the operations refused";
}
