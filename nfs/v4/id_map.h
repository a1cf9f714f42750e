// id_map.h — owner and owner_group strings (RFC 8881 §5.9) to and from numeric ids.
//
// On the wire, owners are "user@dns_domain" strings. The Linux client, with AUTH_SYS,
// also sends and accepts plain numbers ("1000"): RFC 8881 §5.9 allows a server to
// accept them when the id has no name, and the Linux kernel nfsd answers with numbers by
// default for AUTH_SYS (nfs4_disable_idmapping). This server answers names where the
// id has one in the name service and numbers otherwise, and accepts both:
//   to the wire:   uid 1000 named "alice"  -> "alice@<domain>";  uid 4321 unnamed -> "4321"
//   from the wire: "alice@<domain>" -> getpwnam("alice"); "4321" -> 4321;
//                  "alice" (no domain) -> getpwnam too (what idmapd does for a bare name);
//                  another domain, an unknown name, an empty string -> NFS4ERR_BADOWNER.
// The domain is configuration (nfsv4.domain); left unset, it is found as the client's
// nfsidmap finds its own (id_domain_from below), so that a client and server with the same
// idmapd.conf or DNS domain agree without a setting. When they disagree, the client shows
// every owner as nobody and the server answers NFS4ERR_BADOWNER to its chown.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "nfs/v4/state/types.h"
#include "xdr/nfs4_prot.h"

namespace nfsrdmad::nfs::v4 {

// The name service, behind an interface so tests need no particular /etc/passwd.
class NameService {
  public:
    virtual ~NameService() = default;
    virtual std::optional<std::string> user_name(uint32_t uid) const = 0;
    virtual std::optional<std::string> group_name(uint32_t gid) const = 0;
    virtual std::optional<uint32_t> user_id(const std::string& name) const = 0;
    virtual std::optional<uint32_t> group_id(const std::string& name) const = 0;
};

// getpwuid_r / getgrgid_r / getpwnam_r / getgrnam_r (NSS: files, LDAP, sssd ...).
const NameService& system_name_service();

// The id domain when the configuration names none, chosen as libnfsidmap chooses it
// (nfs-utils, nfs4_init_name_mapping): the Domain of idmapd.conf's [General] section, else
// the DNS domain of the host's canonical name (what follows its first dot), else
// "localdomain". Not done: idmapd.conf.d/ and the _nfsv4idmapdomain DNS TXT record that
// newer libnfsidmap also consult. Pure: the caller reads the file and resolves the name.
struct IdDomain {
    std::string domain;
    std::string source;   // for the log: where it came from
    std::string warning;  // for the log: a Domain in idmapd.conf that was passed over
};
IdDomain id_domain_from(std::string_view idmapd_conf, std::string_view canonical_host);

// The same from this host: /etc/idmapd.conf, gethostname() and its canonical name
// (getaddrinfo AI_CANONNAME, which may ask DNS: call it once, at start).
IdDomain system_id_domain();

// Ids to owner strings are cached: every entry of a READDIR and every GETATTR asks for
// two, and without a cache each is a name service lookup (getpwuid_r reads /etc/passwd,
// or asks LDAP). A READDIR of 1 000 entries slowed that way outlives the client's
// attribute cache time (acregmin, 3 s), and `ls -l` then sends a GETATTR per file. Like the
// Linux server's idmap cache and the client's nfsidmap keys, a name is kept kTtl (a renamed
// user shows after at most that long); an id without a name (or a name service that
// failed: NSS does not tell them apart) is kept kMissTtl, and at most kMaxCached ids per
// kind (past that, the expired ones go, then all). Strings to ids are not cached: only
// SETATTR, CREATE and OPEN send them.
class IdMap {
  public:
    static constexpr std::chrono::seconds kTtl{600};
    static constexpr std::chrono::seconds kMissTtl{30};
    static constexpr size_t kMaxCached = 4096;

    // `clock` null: the steady clock.
    IdMap(std::string domain, const NameService& names = system_name_service(),
          const state::Clock* clock = nullptr)
        : domain_(std::move(domain)), names_(names), clock_(clock ? *clock : steady_) {}

    std::string owner(uint32_t uid) const;
    std::string owner_group(uint32_t gid) const;

    struct Parsed {
        xdr::nfs4::nfsstat4 status = xdr::nfs4::NFS4_OK;
        uint32_t id = 0;
    };
    Parsed uid_of(std::string_view owner) const;
    Parsed gid_of(std::string_view group) const;

    const std::string& domain() const { return domain_; }

  private:
    Parsed parse(std::string_view s, bool group) const;
    struct Cached {
        std::string wire;  // "name@domain", or the number when the id has no name
        state::Time expires;
    };
    using Cache = std::unordered_map<uint32_t, Cached>;
    std::string cached(Cache& cache, uint32_t id, bool group) const;

    std::string domain_;
    const NameService& names_;
    state::SteadyClock steady_;
    const state::Clock& clock_;
    mutable std::mutex mu_;  // guards the two caches; name lookups run outside it
    mutable Cache users_, groups_;
};

}  // namespace nfsrdmad::nfs::v4
