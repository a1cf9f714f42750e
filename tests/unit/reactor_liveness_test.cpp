// engine::Liveness (the systemd watchdog's question, daemon/service_manager.h): a reactor
// whose loop is blocked is reported late from the round after it stopped, and no longer
// once it turns again; reactors that turn are never reported.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <future>
#include <thread>

#include "transport/engine/liveness.h"
#include "transport/engine/reactor.h"

using nfsrdmad::engine::Liveness;
using nfsrdmad::engine::ReactorGroup;
using namespace std::chrono_literals;

namespace {

// Rounds until `want` comes back (the reactors need a moment to run the posted tasks).
std::vector<size_t> RoundUntil(Liveness& live, ReactorGroup& g, const std::vector<size_t>& want) {
    std::vector<size_t> late;
    for (int i = 0; i < 100; ++i) {
        std::this_thread::sleep_for(20ms);
        late = live.next_round(g);
        if (late == want) break;
    }
    return late;
}

}  // namespace

TEST(ReactorLiveness, ABlockedReactorIsLateUntilItTurnsAgain) {
    ReactorGroup g(3);
    g.start();
    Liveness live(g.size());
    EXPECT_TRUE(live.next_round(g).empty());  // the first round closes nothing
    EXPECT_EQ(RoundUntil(live, g, {}), std::vector<size_t>{});

    std::promise<void> release;
    std::shared_future<void> released = release.get_future().share();
    std::promise<void> blocked;
    g.at(1).post([&blocked, released] {
        blocked.set_value();
        released.wait();  // reactor-1's loop is stuck here
    });
    blocked.get_future().wait();
    // Reactor-1 cannot answer while stuck; the others do, within a round or a few.
    EXPECT_EQ(RoundUntil(live, g, {1}), std::vector<size_t>{1});
    for (int i = 0; i < 3; ++i) {  // and it stays late, round after round
        std::this_thread::sleep_for(20ms);
        auto late = live.next_round(g);
        EXPECT_NE(std::find(late.begin(), late.end(), 1u), late.end());
    }

    release.set_value();
    EXPECT_EQ(RoundUntil(live, g, {}), std::vector<size_t>{});
    g.stop();
}
