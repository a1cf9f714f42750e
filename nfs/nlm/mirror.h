// The OFD mirror for one call on one file (ofd_mirror.h), when the daemon mirrors locks.
#pragma once

#include <optional>

#include "nfs/nlm/request.h"
#include "nfs/vfs/state/ofd_mirror.h"

namespace nfsrdmad::nfs::nlm {

class CallMirror {
  public:
    CallMirror(const Services& svc, const File& f) {
        if (svc.options.lock_files) m_.emplace(f.node.fd.get(), svc.options.lock_files);
    }
    vs::LockMirror* get() { return m_ ? &*m_ : nullptr; }

  private:
    std::optional<vs::OfdMirror> m_;
};

}  // namespace nfsrdmad::nfs::nlm
