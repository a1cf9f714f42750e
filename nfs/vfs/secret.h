// secret.h — per-server secrets: the file-handle MAC key and the write verifier.
#pragma once

#include <cstdint>
#include <string>

#include "nfs/vfs/result.h"
#include "nfs/vfs/siphash.h"

namespace nfsrdmad::vfs {

using HandleKey = SipKey;

inline constexpr const char* kHandleKeyFile = "handle.key";

// Loads <state_dir>/handle.key (exactly 16 raw bytes). If it does not exist, creates it
// with mode 0600 from getrandom(2) — atomically, so two racing starts agree on one key.
// The key must survive restarts: handles issued before a restart stay valid only while
// the key is unchanged. Errors (never silently replaced):
//   EINVAL  the file exists but is not exactly 16 bytes / not a regular file;
//   EPERM   the file is readable or writable by group/other, or not owned by our
//           euid; or state_dir is not ours or is writable by group/other (whoever
//           can plant or swap the key can forge handles to the whole file system);
//   others  from open/read/write (e.g. ENOENT when state_dir is missing).
// On error, *why (if given) receives a sentence for the log.
Result<HandleKey> load_or_create_handle_key(const std::string& state_dir,
                                            std::string* why = nullptr);

// Creates `dir` (mode 0700; missing parents 0755) unless it exists, then checks it as
// load_or_create_handle_key() does. An existing directory keeps its mode.
Result<void> make_state_dir(const std::string& dir, std::string* why = nullptr);

// RFC 1813 §3.3.7 (WRITE) / §3.3.21 (COMMIT): writeverf3. Random, fixed for the lifetime
// of this process, different at every daemon start, so clients detect a restart and
// resend uncommitted UNSTABLE writes. Thread-safe.
uint64_t write_verifier();

// Fills buf with len bytes from getrandom(2).
Result<void> random_bytes(void* buf, size_t len);

}  // namespace nfsrdmad::vfs
