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
// The domain is configuration (default: the host's DNS domain, like idmapd).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

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

class IdMap {
  public:
    IdMap(std::string domain, const NameService& names = system_name_service())
        : domain_(std::move(domain)), names_(names) {}

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

    std::string domain_;
    const NameService& names_;
};

}  // namespace nfsrdmad::nfs::v4
