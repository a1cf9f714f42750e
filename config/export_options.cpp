#include "config/export_options.h"

#include <array>

namespace nfsrdmad::config {

namespace {

using S = OptionSupport;

constexpr std::array kTable{
    ExportOptionInfo{"rw", S::Implemented, "`access: rw`"},
    ExportOptionInfo{"ro", S::Implemented, "`access: ro` (the default, as in exports(5))"},
    ExportOptionInfo{"root_squash", S::Implemented, "`squash: root` (the default)"},
    ExportOptionInfo{"no_root_squash", S::Implemented, "`squash: none`"},
    ExportOptionInfo{"all_squash", S::Implemented, "`squash: all`"},
    ExportOptionInfo{"no_all_squash", S::Default, "squashing only root is the default"},
    ExportOptionInfo{"anonuid", S::Implemented, "`anonuid: N`"},
    ExportOptionInfo{"anongid", S::Implemented, "`anongid: N`"},
    ExportOptionInfo{"secure", S::Implemented, "`secure: true` (the default): ports below 1024"},
    ExportOptionInfo{"insecure", S::Implemented, "`secure: false`"},
    ExportOptionInfo{"sec", S::Implemented,
                     "`sec: [krb5p, krb5i, krb5, sys, none]`, in order of preference"},
    ExportOptionInfo{"fsid", S::Implemented,
                     "`fsid: N`, a number; without it the fsid comes from the filesystem's "
                     "UUID. fsid=root and fsid=UUID are refused: NFSv4.1's root is the pseudo "
                     "file system, and the UUID is read from the filesystem itself"},
    ExportOptionInfo{"mp", S::Implemented,
                     "`mountpoint: true`: served only while the path is a mount point. mp=PATH "
                     "(a different path to check) is refused"},
    ExportOptionInfo{"mountpoint", S::Implemented, "the same as mp"},
    ExportOptionInfo{"sync", S::Default,
                     "namespace changes are on disk before the reply, and WRITE and COMMIT "
                     "keep the stability the client asks for"},
    ExportOptionInfo{"async", S::Refused,
                     "it would answer before data and namespace changes are on disk, so a "
                     "server crash loses what clients were told is safe; clients that want "
                     "speed send UNSTABLE writes and COMMIT, which nfsrdmad serves"},
    ExportOptionInfo{"no_subtree_check", S::Default,
                     "file handles are checked against the export they name, never a subtree "
                     "(the kernel's default too)"},
    ExportOptionInfo{"subtree_check", S::Refused,
                     "handles carry no parent directory to check, and the check breaks "
                     "renamed open files; export the subtree as its own filesystem instead"},
    ExportOptionInfo{"wdelay", S::Default,
                     "accepted; there is no write gathering, each WRITE is stable as asked"},
    ExportOptionInfo{"no_wdelay", S::Default, "no write gathering is done at all"},
    ExportOptionInfo{"hide", S::Default,
                     "a filesystem mounted inside an export is not crossed (NFSv3 LOOKUP "
                     "answers ACCES there)"},
    ExportOptionInfo{"nohide", S::Refused,
                     "filesystems mounted inside an export are not crossed; export them too, "
                     "and NFSv4.1 clients reach them through the pseudo file system"},
    ExportOptionInfo{"crossmnt", S::Refused,
                     "the same as nohide for every filesystem below: export each one"},
    ExportOptionInfo{"secure_locks", S::Default,
                     "NLM calls are checked against the export's rules like any other call"},
    ExportOptionInfo{"auth_nlm", S::Default, "the same as secure_locks"},
    ExportOptionInfo{"insecure_locks", S::Refused,
                     "NLM calls are always checked against the export's rules"},
    ExportOptionInfo{"no_auth_nlm", S::Refused, "the same as insecure_locks"},
    ExportOptionInfo{"no_acl", S::Default,
                     "the NFSACL side protocol is not served: permissions are the mode bits"},
    ExportOptionInfo{"acl", S::Refused, "the NFSACL side protocol is not served"},
    ExportOptionInfo{"uuid", S::Refused,
                     "the fsid comes from the filesystem's UUID by itself; fix one with fsid=N"},
    ExportOptionInfo{"refer", S::Refused, "NFSv4 referrals are not served"},
    ExportOptionInfo{"replicas", S::Refused, "NFSv4 replica locations are not served"},
    ExportOptionInfo{"pnfs", S::Refused, "pNFS layouts are not served"},
    ExportOptionInfo{"no_pnfs", S::Default, "pNFS layouts are never offered"},
    ExportOptionInfo{"security_label", S::Refused, "NFSv4.2 security labels are not served"},
    ExportOptionInfo{"nordirplus", S::Refused,
                     "READDIRPLUS is always served; a client that does not want it mounts "
                     "with -o nordirplus"},
};

}  // namespace

std::span<const ExportOptionInfo> export_option_table() {
    return kTable;
}

const ExportOptionInfo* find_export_option(std::string_view word) {
    for (const auto& o : kTable)
        if (o.word == word) return &o;
    return nullptr;
}

}  // namespace nfsrdmad::config
