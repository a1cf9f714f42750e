// The programs this server runs, keyed by (program, version) (RFC 5531 §9): a program
// number may be served by several objects, one per version (NFSv3 and NFSv4 under
// 100003). What PROG_UNAVAIL and PROG_MISMATCH answer, and what rpcbind advertises
// (RFC 1833), are both computed from what is registered here.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "transport/rpc/program.h"

namespace nfsrdmad::rpc {

class ProgramRegistry {
  public:
    // Registers every version `p` serves. Returns false, registering nothing, when one
    // of them is already taken (`why` says which).
    bool add(std::shared_ptr<Program> p, std::string* why = nullptr);

    struct Lookup {
        Program* program = nullptr;  // serves (prog, vers)
        OpStats* stats = nullptr;    // its procedures' counters
        bool known = false;          // some version of prog is registered
        uint32_t low = 0, high = 0;  // its lowest and highest registered versions
    };
    Lookup find(uint32_t prog, uint32_t vers) const;

    // Every (program, version) pair, ascending: what rpcbind is told.
    std::vector<std::pair<uint32_t, uint32_t>> registrations() const;

    // Every counter table: one per (program, version), then those programs keep.
    std::vector<std::shared_ptr<const OpStats>> stats() const;

    // Tells every program (once each) that connection `conn` is gone.
    void connection_closed(uint64_t conn) const;

  private:
    struct Entry {
        std::shared_ptr<Program> program;
        std::shared_ptr<OpStats> stats;
    };
    std::map<std::pair<uint32_t, uint32_t>, Entry> programs_;
};

}  // namespace nfsrdmad::rpc
