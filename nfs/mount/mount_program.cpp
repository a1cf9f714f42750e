#include "nfs/mount/mount_program.h"

#include <algorithm>

#include "nfs/mount/procedures.h"
#include "xdr/mount_prot.h"

namespace nfsrdmad::nfs::mount {

namespace x = xdr::mount;

void MountList::add(const std::string& host, const std::string& dir) {
    std::lock_guard lock(mu_);
    std::pair<std::string, std::string> entry{host, vfs::normalize_path(dir)};
    if (entry.second.empty()) return;
    std::erase(entries_, entry);  // a repeated MNT makes the entry the newest
    size_t of_host = 0;
    for (const auto& e : entries_) of_host += e.first == host;
    if (of_host >= per_host_) {
        entries_.erase(
            std::ranges::find_if(entries_, [&](const auto& e) { return e.first == host; }));
    }
    while (entries_.size() >= max_entries_ && !entries_.empty()) entries_.pop_front();
    if (max_entries_ && per_host_) entries_.push_back(std::move(entry));
}

void MountList::remove(const std::string& host, const std::string& dir) {
    std::lock_guard lock(mu_);
    std::erase(entries_, std::pair<std::string, std::string>{host, vfs::normalize_path(dir)});
}

void MountList::remove_host(const std::string& host) {
    std::lock_guard lock(mu_);
    std::erase_if(entries_, [&](const auto& e) { return e.first == host; });
}

std::set<std::pair<std::string, std::string>> MountList::snapshot() const {
    std::lock_guard lock(mu_);
    return {entries_.begin(), entries_.end()};
}

uint32_t MountProgram::number() const {
    return x::MOUNT_PROGRAM;
}

rpc::ProcedureInfo MountProgram::procedure(uint32_t vers, uint32_t proc) const {
    static const char* names[] = {"NULL", "MNT", "DUMP", "UMNT", "UMNTALL", "EXPORT"};
    // Version 2 (RFC 1094's MOUNT with PATHCONF) is not offered: versions() leaves it out,
    // so the registry answers PROG_MISMATCH before it gets here.
    if (vers == 2 || proc > 5) return {};
    // RFC 1813 §5.2.1: MNT's result begins with mountstat3 (version 1's fhstatus with an
    // errno of the same values).
    return {true, true, names[proc], proc == x::MOUNTPROC3_MNT};
}

rpc::OpStats::StatusName MountProgram::status_name(uint32_t) const {
    return [](uint32_t s) { return x::enum_name(static_cast<x::mountstat3>(s)); };
}

rpc::Outcome MountProgram::call(rpc::CallContext& ctx) {
    switch (ctx.header.proc) {
        case x::MOUNTPROC3_NULL:
            return rpc::Outcome::ok();
        case x::MOUNTPROC3_MNT:
            return MountProcedures::mnt(*this, ctx);
        case x::MOUNTPROC3_DUMP:
            return MountProcedures::dump(*this, ctx);
        case x::MOUNTPROC3_UMNT:
            return MountProcedures::umnt(*this, ctx);
        case x::MOUNTPROC3_UMNTALL:
            return MountProcedures::umntall(*this, ctx);
        case x::MOUNTPROC3_EXPORT:
            return MountProcedures::export_list(*this, ctx);
        default:
            return rpc::Outcome::system_error();
    }
}

}  // namespace nfsrdmad::nfs::mount
