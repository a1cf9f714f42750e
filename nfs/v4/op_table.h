// op_table.h — the operations a COMPOUND can run (RFC 8881 §18), one entry each.
//
// An operation decodes its own arguments from the COMPOUND's decoder (so direct data
// placement positions still line up: a WRITE's data may be a read chunk, RFC 8267 §4)
// and encodes its whole result (nfs_resop4's arm: status first) into the reply. The
// engine encodes the result for errors it finds itself (NOFILEHANDLE, BADXDR,
// REP_TOO_BIG ...) with the entry's `encode_error`, since a few results carry more
// than a status even on failure (SETATTR4res's attrsset).
#pragma once

#include <array>
#include <cstdint>

#include "nfs/v4/compound.h"

namespace nfsrdmad::nfs::v4 {

// What running an operation came to. `decoded` false: its arguments did not decode;
// the engine answers BADXDR and writes nothing of the operation's own.
struct OpResult {
    x4::nfsstat4 status = x4::NFS4_OK;
    bool decoded = true;
    static OpResult bad_xdr() { return {x4::NFS4ERR_BADXDR, false}; }
};

struct OpEntry {
    const char* name = nullptr;  // nullptr: no such operation (OP_ILLEGAL)
    // Runs the operation: decodes arguments from `args`, encodes its result into `res`.
    OpResult (*run)(Compound& c, xdr::Decoder& args, xdr::Encoder& res) = nullptr;
    // Encodes the result for `status` (an error) without running the operation.
    void (*encode_error)(xdr::Encoder& res, x4::nfsstat4 status) = nullptr;
    bool needs_fh = false;        // NOFILEHANDLE without a current filehandle
    bool needs_saved_fh = false;  // NOFILEHANDLE without a saved one (LINK, RENAME)
    // A nowait COMPOUND's pre-flight (Compound::nowait), before any operation of it runs:
    // false when this operation, from its arguments (`args`, a copy) and the operations
    // after it (Compound::opnum_at from op_index on), would surely give the COMPOUND up
    // (Request::block). It then goes to a worker as it came, its SEQUENCE never run.
    // Changes nothing; an answer of true may still meet a block. nullptr: true.
    bool (*may_nowait)(Compound& c, xdr::Decoder args) = nullptr;
};

// Entries by operation number (OP_ACCESS = 3 .. OP_RECLAIM_COMPLETE = 58).
class OpTable {
  public:
    static constexpr uint32_t kFirst = 3, kLast = 58;
    void set(uint32_t opnum, const OpEntry& e) { entries_.at(opnum - kFirst) = e; }
    const OpEntry* find(uint32_t opnum) const {
        if (opnum < kFirst || opnum > kLast) return nullptr;
        const OpEntry& e = entries_[opnum - kFirst];
        return e.name ? &e : nullptr;
    }

  private:
    std::array<OpEntry, kLast - kFirst + 1> entries_{};
};

// The error result of an operation whose result is a status and nothing else on failure.
void encode_status_only(xdr::Encoder& res, x4::nfsstat4 status);

// Fills in the operations answered with NFS4ERR_NOTSUPP (op_not_supported.cpp).
void install_not_supported(OpTable& table);

}  // namespace nfsrdmad::nfs::v4
