#include "transport/rdma/verbs/counters.h"

#include <spdlog/fmt/fmt.h>

#include <iterator>

namespace nfsrdmad::rdma::verbs {

template <class C>
std::string BasicTransportCounters<C>::format() const {
    std::string out;
    auto put = [&out](const char* name, const C& c) {
        fmt::format_to(std::back_inserter(out), "{}{}={}", out.empty() ? "" : " ", name,
                       c.load(std::memory_order_relaxed));
    };
#define NFSRDMAD_X(name) put(#name, name);
    NFSRDMAD_RDMA_TRANSPORT_COUNTERS(NFSRDMAD_X)
#undef NFSRDMAD_X
    return out;
}

template struct BasicTransportCounters<Counter>;
template struct BasicTransportCounters<rpc::StripedCounter>;

}  // namespace nfsrdmad::rdma::verbs
