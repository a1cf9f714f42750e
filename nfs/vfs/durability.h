// durability.h — NFSv3 replies promise stable storage for what they changed.
//
// RFC 1813 §3.3 (CREATE, MKDIR, SYMLINK, MKNOD, REMOVE, RMDIR, RENAME, LINK, SETATTR):
// "the server must ... commit to stable storage" the modified data and metadata before
// it replies, or a server crash after the reply loses a change the client saw succeed.
// (WRITE is different: its `stable` argument and COMMIT govern it, see io.h.) The Linux
// kernel nfsd does the same with commit_metadata() on sync exports.
#pragma once

#include <cstdint>

#include "nfs/vfs/node.h"
#include "nfs/vfs/result.h"

namespace nfsrdmad::vfs {

// fsync(2) of a directory: its entries (and, on journaling file systems, the inodes
// created or removed in it) reach stable storage.
Result<void> commit_directory(const Node& dir);

// commit_directory in two steps: open the directory for the fsync, then fsync it. An
// operation that creates an entry takes the descriptor before it changes anything, so
// running out of descriptors (EMFILE) can stop it only while there is nothing to undo.
// A description of its own even for a directory the descriptor cache keeps open
// (durability.cpp: write-back errors are reported once per description).
Result<UniqueFd> open_directory_for_commit(const Node& dir);
Result<void> commit_opened(int fd);

// fsync(2) of a regular file or directory after an attribute change. Other types
// (symlinks, devices, FIFOs, sockets) cannot be opened harmlessly; nothing is done for
// them: the change sits in the same journal transaction as their parent's next commit.
Result<void> commit_object(const Node& node);

// fsyncs done by the two above since the process started (the stats dump shows it).
uint64_t metadata_commits();

}  // namespace nfsrdmad::vfs
