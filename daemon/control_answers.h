// What the control socket answers (daemon/control.h): one JSON document per request.
//   stats            every metric, as the Prometheus endpoint has them (metrics.h)
//   exports          the exports in force and their client rules (like `exportfs -v`)
//   clients          open connections by transport, MOUNT's list, NFSv4.1 clients
//   log-level [L]    the log level, after setting it to L when given
// An unknown request gets {"error": "..."}.
#pragma once

#include <string>

#include "daemon/metrics.h"

namespace nfsrdmad {
namespace vfs {
class ExportRegistry;
}
namespace nfs::mount {
class MountList;
}
}  // namespace nfsrdmad

namespace nfsrdmad::daemon {

struct ControlSources {
    MetricsSources metrics;  // also the TCP server whose peers `clients` lists
    const vfs::ExportRegistry& exports;
    const nfs::mount::MountList& mounts;
};

std::string control_answer(const std::string& request, const ControlSources& sources);

}  // namespace nfsrdmad::daemon
