#include "transport/rpc/registry.h"

#include <set>

namespace nfsrdmad::rpc {

bool ProgramRegistry::add(std::shared_ptr<Program> p, std::string* why) {
    uint32_t prog = p->number();
    auto versions = p->versions();
    for (uint32_t v : versions) {
        if (programs_.count({prog, v})) {
            if (why)
                *why = "program " + std::to_string(prog) + " version " + std::to_string(v) +
                       " is already registered";
            return false;
        }
    }
    for (uint32_t v : versions) {
        // Procedure numbers are small and dense in every program served (NLM's reach 23).
        std::vector<std::string> names;
        for (uint32_t proc = 0; proc < 64; ++proc) {
            ProcedureInfo info = p->procedure(v, proc);
            if (info.exists) {
                names.resize(proc + 1);
                names[proc] = info.name;
            }
        }
        std::string label = *p->name() ? p->name() : std::to_string(prog);
        programs_[{prog, v}] = {p, std::make_shared<OpStats>(label, std::to_string(v),
                                                             std::move(names), p->status_name(v))};
    }
    return true;
}

ProgramRegistry::Lookup ProgramRegistry::find(uint32_t prog, uint32_t vers) const {
    Lookup out;
    if (auto it = programs_.find({prog, vers}); it != programs_.end()) {
        out.program = it->second.program.get();
        out.stats = it->second.stats.get();
        out.known = true;
        return out;
    }
    // RFC 5531 §9 PROG_MISMATCH: "the lowest and highest version numbers supported".
    auto first = programs_.lower_bound({prog, 0});
    if (first == programs_.end() || first->first.first != prog) return out;
    auto last = std::prev(programs_.upper_bound({prog, UINT32_MAX}));
    out.known = true;
    out.low = first->first.second;
    out.high = last->first.second;
    return out;
}

void ProgramRegistry::connection_closed(uint64_t conn) const {
    std::set<Program*> told;
    for (const auto& [key, e] : programs_)
        if (told.insert(e.program.get()).second) e.program->connection_closed(conn);
}

std::vector<std::shared_ptr<const OpStats>> ProgramRegistry::stats() const {
    std::vector<std::shared_ptr<const OpStats>> out;
    std::set<Program*> asked;
    for (const auto& [key, e] : programs_) out.push_back(e.stats);
    for (const auto& [key, e] : programs_)
        if (asked.insert(e.program.get()).second)
            for (auto& t : e.program->op_stats()) out.push_back(std::move(t));
    return out;
}

std::vector<std::pair<uint32_t, uint32_t>> ProgramRegistry::registrations() const {
    std::vector<std::pair<uint32_t, uint32_t>> out;
    for (const auto& [key, e] : programs_) out.push_back(key);
    return out;
}

}  // namespace nfsrdmad::rpc
