// The Network Lock Manager, version 4 (XNFS NLM v4: the NLM of NFS version 3): one file
// per procedure (proc_*.cpp), the locks in the table NFSv4.1 shares (services.h).
//
// Blocked locks are granted with a callback (NLM4_GRANTED, granted.cpp) through the
// rpc::CallbackSender the daemon gives (Services::set_callbacks).
// The _MSG procedures send their result back as a _RES call the same way (proc_msg.cpp).
// Hosts are notified after a restart (nsm_notify.h) and watched by this host's statd
// (nsm_monitor.h: a host's reboot frees its locks). Served over TCP and UDP.
#pragma once

#include <memory>

#include "nfs/nlm/services.h"
#include "transport/rpc/program.h"

namespace nfsrdmad::nfs::nlm {

class NlmProgram : public rpc::Program {
  public:
    NlmProgram(std::shared_ptr<vfs::ExportRegistry> exports, const Options& o = {});

    uint32_t number() const override;
    std::vector<uint32_t> versions() const override { return {4}; }
    const char* name() const override { return "nlockmgr"; }
    rpc::ProcedureInfo procedure(uint32_t vers, uint32_t proc) const override;
    rpc::Outcome call(rpc::CallContext& ctx) override;

    Services& services() { return svc_; }

  private:
    Services svc_;
};

}  // namespace nfsrdmad::nfs::nlm
