// The admin commands (`nfsrdmad stats | exports | clients | log-level L`): ask the running
// daemon over its control socket (control.h) and print its answer as a table, or as the
// JSON it sent (--json).
#pragma once

#include <string>

namespace nfsrdmad::daemon {

struct AdminCommand {
    std::string socket;   // the control socket's path
    std::string request;  // "stats", "exports", "clients", "log-level debug"
    bool json = false;    // print the daemon's JSON as is
};

// Prints to stdout (errors to stderr); returns the exit status.
int run_admin(const AdminCommand& c);

}  // namespace nfsrdmad::daemon
