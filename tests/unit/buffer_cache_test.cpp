// transport/tcp BufferCache: reuse by size class, bounds, alignment, and the record
// assembler drawing its buffers from it. PipePool: pipes big enough for a READ, reused
// only when empty.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>
#include <cstdint>

#include <cstring>
#include <string>

#include "transport/tcp/buffer_cache.h"
#include "transport/tcp/pipe_pool.h"
#include "transport/tcp/record_marking.h"

namespace nfsrdmad::tcp {
namespace {

TEST(BufferCache, ReleasedBuffersAreHandedOutAgainBySizeClass) {
    auto cache = BufferCache::create(4);
    auto a = cache->get(1 << 20);
    ASSERT_TRUE(a);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(a.get()) % 4096, 0u) << "page aligned";
    std::memset(a.get(), 0xab, 1 << 20);  // all of it is usable
    uint8_t* first = a.get();
    a.reset();
    EXPECT_EQ(cache->idle(), 1u);
    auto b = cache->get((1 << 19) + 1);  // rounds up to the same 1 MiB class
    EXPECT_EQ(b.get(), first);
    EXPECT_EQ(cache->idle(), 0u);
    auto c = cache->get(4096);  // another class: a new buffer
    EXPECT_NE(c.get(), first);
}

TEST(BufferCache, KeepsAtMostKeepIdleBuffersPerClass) {
    auto cache = BufferCache::create(2);
    { auto a = cache->get(8192), b = cache->get(8192), c = cache->get(8192); }
    EXPECT_EQ(cache->idle(), 2u);
}

TEST(BufferCache, BuffersPastTheLargestClassAreNotCached) {
    auto cache = BufferCache::create(4);
    cache->get((2 << 20) + 1).reset();
    EXPECT_EQ(cache->idle(), 0u);
    cache->get(2 << 20).reset();
    EXPECT_EQ(cache->idle(), 1u);
}

TEST(BufferCache, OutlivedByItsBuffers) {
    auto cache = BufferCache::create(4);
    auto a = cache->get(4096);
    cache.reset();  // the buffer keeps the cache alive; releasing it later is safe
    a[0] = 1;
    a.reset();
}

TEST(BufferCache, RecordAssemblerReusesRecordBuffers) {
    auto cache = BufferCache::create(4);
    RecordAssembler asm_(1 << 20, cache);
    auto one_record = [&](uint8_t fill) {
        const uint32_t len = 100000;
        uint8_t hdr[4] = {uint8_t(0x80 | (len >> 24)), uint8_t(len >> 16), uint8_t(len >> 8),
                          uint8_t(len)};
        auto w = asm_.want();
        std::memcpy(w.data(), hdr, 4);
        EXPECT_EQ(asm_.commit(4), RecordAssembler::Status::NeedMore);
        // The body arrives in pieces; the buffer grows with them.
        auto s = RecordAssembler::Status::NeedMore;
        for (size_t got = 0; got < len;) {
            w = asm_.want();
            EXPECT_GT(w.size(), 0u);
            std::memset(w.data(), fill, w.size());
            got += w.size();
            s = asm_.commit(w.size());
        }
        EXPECT_EQ(s, RecordAssembler::Status::RecordReady);
        return asm_.take();
    };
    auto r1 = one_record(1);
    const uint8_t* p1 = r1.data.get();
    EXPECT_EQ(r1.size, 100000u);
    EXPECT_EQ(r1.bytes()[99999], 1);
    r1 = {};
    auto r2 = one_record(2);
    EXPECT_EQ(r2.data.get(), p1) << "the second record reuses the first one's buffer";
    EXPECT_EQ(r2.bytes()[0], 2);
}

TEST(PipePool, PipesHoldAWholeReadAndOnlyEmptyOnesAreReused) {
    auto pool = PipePool::create((1u << 20) + 4096, 4);
    auto lease = pool->get();
    ASSERT_TRUE(lease) << "1 MiB pipes can be made (as root, or within pipe-max-size)";
    EXPECT_GE(::fcntl(lease->write_end(), F_GETPIPE_SZ), 1 << 20);
    const int first = lease->read_end();
    std::string data(1 << 20, 'x');  // a full 1 MiB READ fits without blocking
    EXPECT_EQ(::write(lease->write_end(), data.data(), data.size()), ssize_t(data.size()));
    std::string back(data.size(), '\0');
    EXPECT_EQ(::read(lease->read_end(), back.data(), back.size()), ssize_t(back.size()));
    lease.reset();
    EXPECT_EQ(pool->idle(), 1u) << "an emptied pipe goes back to the pool";
    lease = pool->get();
    EXPECT_EQ(lease->read_end(), first);
    EXPECT_EQ(pool->idle(), 0u);

    // A connection that died mid-send leaves data in its pipe: that pipe is closed, or
    // the next READ would send the old bytes first.
    ASSERT_EQ(::write(lease->write_end(), "left", 4), 4);
    lease.reset();
    EXPECT_EQ(pool->idle(), 0u);
    EXPECT_EQ(::fcntl(first, F_GETFD), -1) << "the pipe with data left was closed";
}

}  // namespace
}  // namespace nfsrdmad::tcp
