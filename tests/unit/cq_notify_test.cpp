// CqNotify (transport/rdma/verbs/cq_events.h): a reactor about to sleep requests a CQ's
// event only when no request stands, i.e. once after each event it took from the channel,
// not once per sleep.
#include <gtest/gtest.h>

#include <functional>

#include "transport/rdma/verbs/cq_events.h"

namespace nfsrdmad::rdma::verbs {
namespace {

struct CountingRequest {
    int calls = 0;
    int result = 0;  // what ibv_req_notify_cq returns: 0 done, else an errno
    int operator()() {
        ++calls;
        return result;
    }
};

TEST(CqNotify, ARequestStandsUntilItsEventIsTaken) {
    CqNotify n;
    CountingRequest req;
    n.armed();  // as setup() leaves it
    for (int sleep = 0; sleep < 5; ++sleep) EXPECT_FALSE(n.arm(std::ref(req)));
    EXPECT_EQ(req.calls, 0);

    n.taken();  // the CQ's event came: the request is used up
    EXPECT_FALSE(n.standing());
    EXPECT_TRUE(n.arm(std::ref(req)));
    EXPECT_TRUE(n.standing());
    for (int sleep = 0; sleep < 5; ++sleep) EXPECT_FALSE(n.arm(std::ref(req)));
    EXPECT_EQ(req.calls, 1);

    for (int event = 0; event < 3; ++event) {
        n.taken();
        n.arm(std::ref(req));
        n.arm(std::ref(req));
    }
    EXPECT_EQ(req.calls, 4);  // one per event
}

TEST(CqNotify, AFailedRequestIsMadeAgainAtTheNextSleep) {
    CqNotify n;  // never armed
    CountingRequest req;
    req.result = 22;
    EXPECT_TRUE(n.arm(std::ref(req)));
    EXPECT_FALSE(n.standing());
    req.result = 0;
    EXPECT_TRUE(n.arm(std::ref(req)));
    EXPECT_TRUE(n.standing());
    EXPECT_FALSE(n.arm(std::ref(req)));
    EXPECT_EQ(req.calls, 2);
}

}  // namespace
}  // namespace nfsrdmad::rdma::verbs
