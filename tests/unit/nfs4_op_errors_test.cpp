// The NFSv4.1 error cases of tests/shared/nfs4_error_cases.inc, in-process: through
// Nfs4Program with the bytes a client sends (tests/unit/nfs4_ops_util.h). The same cases
// run against the daemon over TCP in tests/e2e/nfs4_errors_test.cpp.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <deque>
#include <fstream>
#include <initializer_list>
#include <string>
#include <vector>

#include "nfs/v4/attrs/attr_mask.h"
#include "tests/unit/nfs4_ops_util.h"

namespace nfsrdmad::nfs::v4::testing {
namespace {

class Nfs4ErrorsTransport : public Nfs4OpsFixture {
  protected:
    std::vector<uint8_t> export_root_fh() {
        auto fh = exp_->root_handle().data();
        return {fh.begin(), fh.end()};
    }
};

#include "tests/shared/nfs4_error_cases.inc"

}  // namespace
}  // namespace nfsrdmad::nfs::v4::testing
