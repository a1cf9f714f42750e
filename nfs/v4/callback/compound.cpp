#include "nfs/v4/callback/compound.h"

namespace nfsrdmad::nfs::v4 {

CbOps cb_recall(const state::Stateid& stateid, bool truncate, std::span<const uint8_t> fh) {
    CbOps out;
    out.what = "CB_RECALL";
    x4::nfs_cb_argop4 op(x4::OP_CB_RECALL);
    op.opcbrecall().stateid = {stateid.seqid, stateid.other};
    op.opcbrecall().truncate = truncate;
    op.opcbrecall().fh = fh;
    xdr::Encoder e(out.xdr);
    x4::xdr_encode(e, op);
    out.count = 1;
    return out;
}

CbOps cb_getattr(std::span<const uint8_t> fh) {
    CbOps out;
    out.what = "CB_GETATTR";
    x4::nfs_cb_argop4 op(x4::OP_CB_GETATTR);
    op.opcbgetattr().fh = fh;
    op.opcbgetattr().attr_request = {(1u << x4::FATTR4_CHANGE) | (1u << x4::FATTR4_SIZE)};
    xdr::Encoder e(out.xdr);
    x4::xdr_encode(e, op);
    out.count = 1;
    return out;
}

CbOps cb_recall_any(uint32_t keep, uint32_t type_mask) {
    CbOps out;
    out.what = "CB_RECALL_ANY";
    x4::nfs_cb_argop4 op(x4::OP_CB_RECALL_ANY);
    op.opcbrecall_any().craa_objects_to_keep = keep;
    op.opcbrecall_any().craa_type_mask = {type_mask};
    xdr::Encoder e(out.xdr);
    x4::xdr_encode(e, op);
    out.count = 1;
    return out;
}

namespace {

// change and size out of CB_GETATTR's fattr4: attr_vals holds the values of the bitmap's
// attributes in bit order (§3.3.7); both must be there, and nothing before them (bits 0-2).
std::optional<CbReply::Attrs> change_and_size(const x4::fattr4& f) {
    const uint32_t want = (1u << x4::FATTR4_CHANGE) | (1u << x4::FATTR4_SIZE);
    if (f.attrmask.empty() || (f.attrmask[0] & want) != want || (f.attrmask[0] & 0x7u) != 0)
        return std::nullopt;
    xdr::Decoder d(f.attr_vals);
    CbReply::Attrs a;
    a.change = d.get_u64();
    a.size = d.get_u64();
    if (!d.ok()) return std::nullopt;
    return a;
}

}  // namespace

std::vector<uint8_t> encode_cb_compound(const CbSlot& slot, const CbOps& ops) {
    std::vector<uint8_t> out;
    out.reserve(64 + ops.xdr.size());
    xdr::Encoder e(out);
    e.put_u32(0);  // tag: empty
    e.put_u32(1);  // minorversion
    e.put_u32(0);  // callback_ident: unused in 4.1 (§19.2.3 via the client's cb_program)
    e.put_u32(1 + ops.count);
    x4::nfs_cb_argop4 seq(x4::OP_CB_SEQUENCE);
    auto& s = seq.opcbsequence();
    s.csa_sessionid = slot.session;
    s.csa_sequenceid = slot.seqid;
    s.csa_slotid = slot.slot;
    s.csa_highest_slotid = slot.highest_slot;
    s.csa_cachethis = false;
    x4::xdr_encode(e, seq);
    out.insert(out.end(), ops.xdr.begin(), ops.xdr.end());
    return out;
}

bool decode_cb_compound(std::span<const uint8_t> results, CbReply& out) {
    xdr::Decoder d(results);
    x4::CB_COMPOUND4res r;
    if (!x4::xdr_decode(d, r) || d.remaining() != 0) return false;
    out = CbReply{};
    out.status = r.status;
    size_t i = 0;
    if (!r.resarray.empty() && r.resarray[0].resop() == x4::OP_CB_SEQUENCE) {
        out.sequence = r.resarray[0].opcbsequence().csr_status();
        i = 1;
    }
    for (; i < r.resarray.size(); ++i) {
        const auto& op = r.resarray[i];
        switch (op.resop()) {
            case x4::OP_CB_RECALL:
                out.ops.push_back(op.opcbrecall().status);
                break;
            case x4::OP_CB_GETATTR:
                out.ops.push_back(op.opcbgetattr().status());
                if (op.opcbgetattr().status() == x4::NFS4_OK)
                    out.getattr = change_and_size(op.opcbgetattr().resok4().obj_attributes);
                break;
            case x4::OP_CB_RECALL_ANY:
                out.ops.push_back(op.opcbrecall_any().crar_status);
                break;
            default:
                out.ops.push_back(r.status);
        }
    }
    return true;
}

}  // namespace nfsrdmad::nfs::v4
