// EXCHANGE_ID (RFC 8881 §18.35): the client owner becomes a client ID. The cases of
// §18.35.4 (new owner, same verifier, reboot, other principal ...) are the client
// table's (state/exchange_id.cpp); this file decodes, asks, and encodes.
#include <unistd.h>

#include <cstring>
#include <string>

#include "nfs/v4/ops.h"
#include "nfs/v4/request.h"

namespace nfsrdmad::nfs::v4 {

namespace {

// server_owner4 and server_scope (§2.10.5): the same for every address of this host
// and across restarts, so a client may trunk connections to us and knows a restarted
// server as the same one (state reclaim, §8.4.2.1).
const std::string& server_major_id() {
    static const std::string id = [] {
        char host[256] = {};
        if (::gethostname(host, sizeof host - 1) != 0) std::strcpy(host, "localhost");
        return std::string("nfsrdmad:") + host;
    }();
    return id;
}

std::span<const uint8_t> bytes(const std::string& s) {
    return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

}  // namespace

OpResult op_exchange_id(Compound& c, xdr::Decoder& args, xdr::Encoder& res) {
    Request& rq = *c.rq;
    x4::EXCHANGE_ID4args a;
    if (!rq.decode(args, a)) return OpResult::bad_xdr();

    state::ExchangeIdArgs ea;
    ea.verifier = a.eia_clientowner.co_verifier;
    ea.ownerid.assign(a.eia_clientowner.co_ownerid.begin(), a.eia_clientowner.co_ownerid.end());
    ea.principal = rq.principal();
    ea.integrity_protected = rq.integrity_protected();
    ea.flags = a.eia_flags;
    ea.how = a.eia_state_protect.spa_how();
    if (ea.how == x4::SP4_MACH_CRED) {
        ea.must_enforce = a.eia_state_protect.spa_mach_ops().spo_must_enforce;
        ea.must_allow = a.eia_state_protect.spa_mach_ops().spo_must_allow;
    }
    // eia_client_impl_id<1> (§18.35.1): informational; more than one does not decode.
    state::ExchangeIdResult r = rq.svc.clients.exchange_id(ea);
    // A full client table: a courtesy client (lease expired, state kept, §8.4.3) makes room
    // for a live one.
    if (r.status == state::kTooManyClients &&
        rq.svc.clients.client_count() >= rq.svc.options.limits.max_clients &&
        rq.svc.reap_oldest_courtesy(1) == 1)
        r = rq.svc.clients.exchange_id(ea);
    // A record replaced with its state (§18.35.4 case 3): its opens go too.
    if (r.purged) rq.svc.forget_client(*r.purged);

    x4::EXCHANGE_ID4res out(r.status);
    if (r.status == x4::NFS4_OK) {
        auto& ok = out.eir_resok4();
        ok.eir_clientid = r.clientid;
        ok.eir_sequenceid = r.sequenceid;
        ok.eir_flags = r.flags;
        ok.eir_state_protect.set_spr_how(r.how);
        if (r.how == x4::SP4_MACH_CRED) {
            ok.eir_state_protect.spr_mach_ops().spo_must_enforce = r.must_enforce;
            ok.eir_state_protect.spr_mach_ops().spo_must_allow = r.must_allow;
        }
        ok.eir_server_owner.so_minor_id = 0;
        ok.eir_server_owner.so_major_id = bytes(server_major_id());
        ok.eir_server_scope = bytes(server_major_id());
        static const std::string kDomain = "nfsrdmad.org", kName = "nfsrdmad";
        x4::nfs_impl_id4 impl;
        impl.nii_domain = bytes(kDomain);
        impl.nii_name = bytes(kName);
        ok.eir_server_impl_id.push_back(impl);
    }
    x4::xdr_encode(res, out);
    return {r.status};
}

}  // namespace nfsrdmad::nfs::v4
