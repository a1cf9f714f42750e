// How a system call's errno becomes a status, NFSv4.1 (nfs/v4/request.cpp to_nfsstat4) and
// NFSv3 (nfs/v3/attrs.cpp to_nfsstat3).
#include <gtest/gtest.h>

#include <cerrno>

#include "nfs/v3/attrs.h"
#include "nfs/v4/request.h"

namespace nfsrdmad::nfs::v4::testing {
namespace {

namespace x3 = xdr::nfs3;

// A shortage is backpressure: the client is asked to try again (RFC 8881 §15.1.1.3
// NFS4ERR_DELAY, RFC 1813 §2.6 NFS3ERR_JUKEBOX), never told of an I/O error: out of
// descriptors after the caches gave back what they could, or the kernel out of memory for
// the call (open_by_handle_at(2) returned ENOMEM once in a test run here).
TEST(ErrnoStatus, ShortagesAskTheClientToTryAgain) {
    for (int e : {EAGAIN, EMFILE, ENFILE, ENOMEM}) {
        EXPECT_EQ(to_nfsstat4(e), xdr::nfs4::NFS4ERR_DELAY) << e;
        EXPECT_EQ(v3::to_nfsstat3(e), x3::NFS3ERR_JUKEBOX) << e;
    }
}

TEST(ErrnoStatus, OtherFailuresKeepTheirMeaning) {
    EXPECT_EQ(to_nfsstat4(ESTALE), xdr::nfs4::NFS4ERR_STALE);
    EXPECT_EQ(v3::to_nfsstat3(ESTALE), x3::NFS3ERR_STALE);
    EXPECT_EQ(to_nfsstat4(ENOSPC), xdr::nfs4::NFS4ERR_NOSPC);
    EXPECT_EQ(v3::to_nfsstat3(ENOSPC), x3::NFS3ERR_NOSPC);
    EXPECT_EQ(to_nfsstat4(EIO), xdr::nfs4::NFS4ERR_IO);
    EXPECT_EQ(v3::to_nfsstat3(EIO), x3::NFS3ERR_IO);
}

}  // namespace
}  // namespace nfsrdmad::nfs::v4::testing
