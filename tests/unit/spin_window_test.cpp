// The adaptive reactor's spin sizes itself from the sleeps after it (spin_window.h): a
// sleep a little longer than the spin doubles it, up to the configured spin; a sleep longer
// than that halves it, and below a quarter of it there is no spin at all.
#include <gtest/gtest.h>

#include "transport/engine/spin_window.h"

using nfsrdmad::engine::SpinWindow;

TEST(SpinWindow, StartsAtTheConfiguredSpinAndKeepsItWhileTheSpinCatchesTheWork) {
    SpinWindow w(50000);
    EXPECT_EQ(w.ns(), 50000u);
    EXPECT_EQ(w.max_ns(), 50000u);
    w.woke_after(30000);
    w.woke_after(50000);
    EXPECT_EQ(w.ns(), 50000u);
}

TEST(SpinWindow, LongSleepsStopTheSpinInThreeSteps) {
    SpinWindow w(50000);
    w.woke_after(700000);  // the next call came 700 µs later: no 50 µs spin catches that
    EXPECT_EQ(w.ns(), 25000u);
    w.woke_after(50001);  // just past the most it may spin
    EXPECT_EQ(w.ns(), 12500u);
    w.woke_after(1000000000);
    EXPECT_EQ(w.ns(), 0u);
    w.woke_after(1000000000);
    EXPECT_EQ(w.ns(), 0u);
}

TEST(SpinWindow, WorkThatComesCloseStartsItAgainAndItGrowsBackToTheConfiguredSpin) {
    SpinWindow w(50000);
    for (int i = 0; i < 3; ++i) w.woke_after(1000000);
    ASSERT_EQ(w.ns(), 0u);
    w.woke_after(20000);  // within the configured spin: a spin of a quarter of it
    EXPECT_EQ(w.ns(), 12500u);
    w.woke_after(12600);  // a little short: doubled
    EXPECT_EQ(w.ns(), 25000u);
    w.woke_after(26000);
    EXPECT_EQ(w.ns(), 50000u);
    w.woke_after(49000);  // caught: unchanged, and never past the configured spin
    EXPECT_EQ(w.ns(), 50000u);
}

TEST(SpinWindow, GrowingNeverGoesPastTheConfiguredSpin) {
    SpinWindow w(50001);
    w.woke_after(60000);
    ASSERT_EQ(w.ns(), 25000u);
    w.woke_after(45000);  // the spin was 20 µs short: doubled
    EXPECT_EQ(w.ns(), 50000u);
    w.woke_after(50001);  // doubled would be 100 µs: held at the configured 50.001
    EXPECT_EQ(w.ns(), 50001u);
}

TEST(SpinWindow, NoSpinConfiguredMeansNoneEver) {
    SpinWindow w(0);
    EXPECT_EQ(w.ns(), 0u);
    w.woke_after(1);
    w.woke_after(0);
    w.woke_after(1000000);
    EXPECT_EQ(w.ns(), 0u);
}
