// vfs_state_test_util.h — keys for the state table tests (nfs/vfs/state): a file key
// per small number and an NFSv4 owner per (client, name). No file system involved.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "nfs/vfs/state/state_keys.h"

namespace nfsrdmad::vfs::state::testing {

inline FileKey file(uint8_t n) {
    FileKey k;
    k.fsid = 7;
    k.kernel.type = 1;
    k.kernel.size = 8;
    k.kernel.bytes[0] = n;
    return k;
}

inline StateOwner v4(uint64_t client, const std::string& name) {
    auto o = StateOwner::make(ClientKey{Protocol::Nfs4, client},
                              {reinterpret_cast<const uint8_t*>(name.data()), name.size()});
    EXPECT_TRUE(o.ok());
    return o.ok() ? *o : StateOwner{};
}

}  // namespace nfsrdmad::vfs::state::testing
