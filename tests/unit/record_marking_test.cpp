// RFC 5531 §11 record marking, fed byte by byte and in pieces, without sockets.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>

#include "transport/tcp/record_marking.h"

using nfsrdmad::tcp::RecordAssembler;
using Status = RecordAssembler::Status;

namespace {

std::vector<uint8_t> fragment(std::vector<uint8_t> body, bool last) {
    uint32_t h = uint32_t(body.size()) | (last ? 0x80000000u : 0);
    std::vector<uint8_t> out{uint8_t(h >> 24), uint8_t(h >> 16), uint8_t(h >> 8), uint8_t(h)};
    out.insert(out.end(), body.begin(), body.end());
    return out;
}

// Feeds `bytes` in steps of at most `step`, the way recv() might deliver them.
std::vector<std::vector<uint8_t>> feed(RecordAssembler& a, const std::vector<uint8_t>& bytes,
                                       size_t step, Status* last = nullptr) {
    std::vector<std::vector<uint8_t>> records;
    size_t i = 0;
    while (i < bytes.size()) {
        auto want = a.want();
        size_t n = std::min({want.size(), step, bytes.size() - i});
        std::memcpy(want.data(), bytes.data() + i, n);
        i += n;
        Status s = a.commit(n);
        if (last) *last = s;
        if (s == Status::TooLarge) break;
        if (s == Status::RecordReady) {
            auto r = a.take();
            records.emplace_back(r.data.get(), r.data.get() + r.size);
        }
    }
    return records;
}

// As feed(), but reading as the TCP connection does: into want() and next_header() at
// once (readv), committing the body's part first and the header's after it.
std::vector<std::vector<uint8_t>> feed_two(RecordAssembler& a, const std::vector<uint8_t>& bytes,
                                           size_t step, size_t* reads) {
    std::vector<std::vector<uint8_t>> records;
    size_t i = 0;
    *reads = 0;
    auto commit = [&](size_t n) {
        Status s = a.commit(n);
        EXPECT_NE(s, Status::TooLarge);
        if (s == Status::RecordReady) {
            auto r = a.take();
            records.emplace_back(r.data.get(), r.data.get() + r.size);
        }
    };
    while (i < bytes.size()) {
        auto want = a.want();
        auto next = a.next_header();
        size_t n = std::min({want.size() + next.size(), step, bytes.size() - i});
        const size_t body = std::min(n, want.size());
        std::memcpy(want.data(), bytes.data() + i, body);
        if (n > body) std::memcpy(next.data(), bytes.data() + i + body, n - body);
        i += n;
        ++*reads;
        commit(body);
        if (n > body) commit(n - body);
    }
    return records;
}

}  // namespace

// One read takes a body's end and the next header: two records of two fragments and
// one empty fragment come out whole, whatever the pieces the socket gives.
TEST(RecordMarking, BodyAndNextHeaderInOneRead) {
    std::vector<uint8_t> bytes;
    for (const auto& f : {fragment({1, 2, 3}, false), fragment({}, false), fragment({4}, true),
                          fragment({5, 6, 7, 8, 9}, true), fragment({10, 11}, true)})
        bytes.insert(bytes.end(), f.begin(), f.end());
    for (size_t step : {1u, 2u, 5u, 7u, 1000u}) {
        RecordAssembler a(1 << 20);
        size_t reads = 0;
        auto recs = feed_two(a, bytes, step, &reads);
        ASSERT_EQ(recs.size(), 3u) << "step " << step;
        EXPECT_EQ(recs[0], (std::vector<uint8_t>{1, 2, 3, 4}));
        EXPECT_EQ(recs[1], (std::vector<uint8_t>{5, 6, 7, 8, 9}));
        EXPECT_EQ(recs[2], (std::vector<uint8_t>{10, 11}));
        // Unbounded steps: 6 reads where header and body apart take 9. Each non-empty
        // body comes with the header behind it; the first header and the one after the
        // empty fragment (which has no body to ride on) are read alone.
        if (step == 1000u) {
            EXPECT_EQ(reads, 6u);
        }
    }
    RecordAssembler idle(1 << 20);
    EXPECT_TRUE(idle.next_header().empty());  // a header is being read, not a body
}

TEST(RecordMarking, SingleFragmentRecords) {
    RecordAssembler a(1 << 20);
    auto bytes = fragment({1, 2, 3, 4}, true);
    auto more = fragment({5, 6, 7, 8, 9, 10, 11, 12}, true);
    bytes.insert(bytes.end(), more.begin(), more.end());
    for (size_t step : {1u, 3u, 1000u}) {
        auto recs = feed(a, bytes, step);
        ASSERT_EQ(recs.size(), 2u) << "step " << step;
        EXPECT_EQ(recs[0], (std::vector<uint8_t>{1, 2, 3, 4}));
        EXPECT_EQ(recs[1].size(), 8u);
    }
}

TEST(RecordMarking, MultiFragmentRecordIsJoined) {
    RecordAssembler a(1 << 20);
    auto bytes = fragment({1, 2}, false);
    auto f2 = fragment({}, false);
    auto f3 = fragment({3, 4, 5}, true);
    bytes.insert(bytes.end(), f2.begin(), f2.end());
    bytes.insert(bytes.end(), f3.begin(), f3.end());
    auto recs = feed(a, bytes, 2);
    ASSERT_EQ(recs.size(), 1u);
    EXPECT_EQ(recs[0], (std::vector<uint8_t>{1, 2, 3, 4, 5}));
}

TEST(RecordMarking, OversizeRecordIsRefusedAtTheHeader) {
    RecordAssembler a(1000);
    std::vector<uint8_t> header{0x84, 0, 0, 0};  // last fragment of 64 MiB
    Status s;
    feed(a, header, 4, &s);
    EXPECT_EQ(s, Status::TooLarge);
}

TEST(RecordMarking, FragmentsAddingUpPastTheLimitAreRefused) {
    RecordAssembler a(10);
    auto bytes = fragment(std::vector<uint8_t>(8, 1), false);
    auto f2 = fragment(std::vector<uint8_t>(8, 2), true);
    bytes.insert(bytes.end(), f2.begin(), f2.end());
    Status s;
    auto recs = feed(a, bytes, 100, &s);
    EXPECT_TRUE(recs.empty());
    EXPECT_EQ(s, Status::TooLarge);
}

TEST(RecordMarking, BodyIsReadStraightIntoTheRecordBuffer) {
    RecordAssembler a(1 << 20);
    auto hdr = fragment(std::vector<uint8_t>(4096, 7), true);
    feed(a, {hdr.begin(), hdr.begin() + 4}, 4);
    auto want = a.want();
    EXPECT_EQ(want.size(), 4096u) << "the whole fragment body is one contiguous read target";
    std::memset(want.data(), 7, want.size());
    ASSERT_EQ(a.commit(want.size()), Status::RecordReady);
    auto r = a.take();
    EXPECT_EQ(r.data.get(), want.data());
}

TEST(RecordMarking, AMarkAloneReservesOnlyAFirstChunk) {
    // A hostile mark claims the largest allowed record and sends nothing more: the buffer
    // must follow the bytes that arrive, not the claim.
    const size_t max = 64u << 20;
    RecordAssembler a(max);
    std::vector<uint8_t> header{0x80 | uint8_t(max >> 24), uint8_t(max >> 16), uint8_t(max >> 8),
                                uint8_t(max)};
    Status s;
    feed(a, header, 4, &s);
    ASSERT_EQ(s, Status::NeedMore);
    // Nor when the transport holds less than a first chunk of the body.
    ASSERT_TRUE(a.sizing());
    a.waiting(0);
    a.waiting(RecordAssembler::kFirstChunk - 1);
    EXPECT_LE(a.want().size(), RecordAssembler::kFirstChunk);
}

TEST(RecordMarking, ALongFragmentAlreadyWaitingIsReadWhereItStays) {
    // What a client that sends a 1 MiB WRITE at once gets: the transport says the body is
    // there (FIONREAD), so the buffer is sized for all of it and nothing is moved.
    const size_t len = 1u << 20;
    std::atomic<uint64_t> moved{0};
    RecordAssembler a(2u << 20, nullptr, &moved);
    std::vector<uint8_t> body(len);
    for (size_t i = 0; i < len; ++i) body[i] = uint8_t(i * 13 + i / 4096);
    auto bytes = fragment(body, true);
    ASSERT_EQ(a.commit(0), Status::NeedMore);
    std::memcpy(a.want().data(), bytes.data(), 4);
    ASSERT_EQ(a.commit(4), Status::NeedMore);
    ASSERT_TRUE(a.sizing());
    a.waiting(RecordAssembler::kFirstChunk);  // a first chunk's worth is enough
    EXPECT_FALSE(a.sizing());
    uint8_t* start = a.want().data();
    EXPECT_EQ(a.want().size(), len);
    size_t at = 4;
    Status s = Status::NeedMore;
    while (s == Status::NeedMore) {  // in pieces, as a socket delivers it
        auto want = a.want();
        ASSERT_FALSE(want.empty());
        const size_t n = std::min<size_t>({want.size(), 100000, bytes.size() - at});
        std::memcpy(want.data(), bytes.data() + at, n);
        at += n;
        s = a.commit(n);
    }
    ASSERT_EQ(s, Status::RecordReady);
    auto r = a.take();
    EXPECT_EQ(r.data.get(), start) << "the body stayed where it was first read";
    EXPECT_EQ(std::vector<uint8_t>(r.data.get(), r.data.get() + r.size), body);
    EXPECT_EQ(moved.load(), 0u);
    // The next record starts afresh: a short one needs no sizing.
    auto small = fragment(std::vector<uint8_t>(100, 1), true);
    std::memcpy(a.want().data(), small.data(), 4);
    ASSERT_EQ(a.commit(4), Status::NeedMore);
    EXPECT_FALSE(a.sizing());
}

TEST(RecordMarking, AFragmentPartlyReadMovesOnlyWhatWasRead) {
    // The kernel client's WRITE as a reactor often meets it: the mark and a few KiB, the
    // rest a moment later. Then the buffer for the whole fragment takes over and only the
    // bytes read so far move.
    const size_t len = 1u << 20, early = 3000;
    std::atomic<uint64_t> moved{0};
    RecordAssembler a(2u << 20, nullptr, &moved);
    std::vector<uint8_t> body(len);
    for (size_t i = 0; i < len; ++i) body[i] = uint8_t(i * 5 + i / 999);
    auto bytes = fragment(body, true);
    std::memcpy(a.want().data(), bytes.data(), 4);
    ASSERT_EQ(a.commit(4), Status::NeedMore);
    ASSERT_TRUE(a.sizing());
    a.waiting(early);  // not a first chunk's worth: the first chunk stays
    ASSERT_LE(a.want().size(), RecordAssembler::kFirstChunk);
    std::memcpy(a.want().data(), bytes.data() + 4, early);
    ASSERT_EQ(a.commit(early), Status::NeedMore);
    ASSERT_TRUE(a.sizing());
    a.waiting(len - early);
    EXPECT_FALSE(a.sizing());
    EXPECT_EQ(moved.load(), early);
    EXPECT_EQ(a.want().size(), len - early);
    size_t at = 4 + early;
    Status s = Status::NeedMore;
    while (s == Status::NeedMore) {
        auto want = a.want();
        ASSERT_FALSE(want.empty());
        const size_t n = std::min<size_t>(want.size(), bytes.size() - at);
        std::memcpy(want.data(), bytes.data() + at, n);
        at += n;
        s = a.commit(n);
    }
    ASSERT_EQ(s, Status::RecordReady);
    auto r = a.take();
    EXPECT_EQ(std::vector<uint8_t>(r.data.get(), r.data.get() + r.size), body);
    EXPECT_EQ(moved.load(), early);
}

TEST(RecordMarking, ALaterFragmentsMarkAloneReservesNoMoreThanTheFirst) {
    // One byte in a first fragment, then a mark that claims the rest of max_record: still
    // no more than a first chunk before the bytes come.
    const size_t max = 64u << 20;
    RecordAssembler a(max);
    std::vector<uint8_t> bytes = fragment({42}, false);
    const size_t claim = max - 1;
    bytes.insert(bytes.end(), {uint8_t(0x80 | claim >> 24), uint8_t(claim >> 16),
                               uint8_t(claim >> 8), uint8_t(claim)});
    Status s;
    feed(a, bytes, bytes.size(), &s);
    ASSERT_EQ(s, Status::NeedMore);
    a.waiting(100);
    EXPECT_LE(a.want().size(), RecordAssembler::kFirstChunk);
}

TEST(RecordMarking, ManySmallFragmentsMoveEachByteABoundedNumberOfTimes) {
    // A record sent one byte per fragment: a buffer grown to exactly what each fragment
    // claims would move the whole record so far at every mark (here 20 000^2 / 2 bytes).
    const size_t n = 20000;
    std::atomic<uint64_t> moved{0};
    RecordAssembler a(1u << 20, nullptr, &moved);
    std::vector<uint8_t> bytes, want;
    for (size_t i = 0; i < n; ++i) {
        auto f = fragment({uint8_t(i)}, i + 1 == n);
        bytes.insert(bytes.end(), f.begin(), f.end());
        want.push_back(uint8_t(i));
    }
    auto recs = feed(a, bytes, bytes.size());
    ASSERT_EQ(recs.size(), 1u);
    EXPECT_EQ(recs[0], want);
    EXPECT_LE(moved.load(), 2 * n);
}

TEST(RecordMarking, BufferGrowsAsBytesArriveAndKeepsThem) {
    const size_t len = 1u << 20;
    std::vector<uint8_t> body(len);
    for (size_t i = 0; i < len; ++i) body[i] = uint8_t(i * 7 + i / 4096);
    std::atomic<uint64_t> moved{0};
    RecordAssembler a(2u << 20, nullptr, &moved);
    for (size_t step : {size_t(1000), size_t(64 * 1024), len + 4}) {
        moved = 0;
        auto recs = feed(a, fragment(body, true), step);
        ASSERT_EQ(recs.size(), 1u) << "step " << step;
        EXPECT_EQ(recs[0], body) << "step " << step;
        // Without waiting(), the body begins in a first chunk, which moves once into a
        // buffer for the whole fragment when it is full (a buffer doubling as bytes came
        // would move 64 + 128 + 256 + 512 KiB).
        EXPECT_EQ(moved.load(), RecordAssembler::kFirstChunk) << "step " << step;
    }
}
