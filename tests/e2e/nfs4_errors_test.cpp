// The NFSv4.1 error cases of tests/shared/nfs4_error_cases.inc, end to end: COMPOUNDs from
// a raw client over TCP to the running daemon (tests/e2e/nfs4_fixture.h), the objects they
// act on made on the export's disk. The same cases run in-process in
// tests/unit/nfs4_op_errors_test.cpp.
// First (libnfs's AUTH_* macros): see nfs4_fixture.h.
#include "tests/e2e/nfs4_fixture.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <deque>
#include <fstream>
#include <initializer_list>
#include <string>
#include <vector>

#include "nfs/v4/attrs/attr_mask.h"

namespace nfsrdmad::e2e {
namespace {

using Reply = Res;

class Nfs4ErrorsTransport : public Nfs4DaemonTest {
  protected:
    void establish() { Establish(); }
    Reply raw(std::vector<x4::nfs_argop4> ops) {
        Res r = Compound(std::move(ops));
        EXPECT_EQ(r.error, "");
        return r;
    }
    Reply seq(std::vector<x4::nfs_argop4> ops) {
        ops.insert(ops.begin(), Sequence());
        return raw(std::move(ops));
    }
    x4::nfs_argop4 sequence_op(bool cachethis = false, uint32_t slot = 0) {
        return Sequence(cachethis, slot);
    }
    std::span<const uint8_t> keep(const std::string& s) { return view(strings_.emplace_back(s)); }
    std::string path(const std::string& name) const { return daemon_->on_disk(name); }
    std::vector<uint8_t> export_root_fh() { return ExportHandle(); }

    std::deque<std::string> strings_;
};

#include "tests/shared/nfs4_error_cases.inc"

}  // namespace
}  // namespace nfsrdmad::e2e
