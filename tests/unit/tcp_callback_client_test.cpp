// transport/tcp/callback_client: RPC calls to a client as reactor events — rpcbind's
// GETPORT, then the call — against small fake servers on loopback.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>

#include "transport/engine/reactor.h"
#include "transport/tcp/callback_client.h"

namespace nfsrdmad::tcp {
namespace {

uint32_t be32(const uint8_t* p) {
    return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | p[3];
}
void put32(std::vector<uint8_t>& b, uint32_t v) {
    for (int s = 24; s >= 0; s -= 8) b.push_back(uint8_t(v >> s));
}

// A TCP server on 127.0.0.1 answering one call per connection with `reply(call body)`
// (the results of an accepted, successful reply), or not at all when `silent`.
class FakeServer {
  public:
    explicit FakeServer(std::function<std::vector<uint8_t>(const std::vector<uint8_t>&)> reply,
                        bool silent = false)
        : reply_(std::move(reply)), silent_(silent) {
        fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
        socklen_t len = sizeof a;
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
        port_ = ntohs(a.sin_port);
        ::listen(fd_, 8);
        thread_ = std::thread([this] { serve(); });
    }
    ~FakeServer() {
        stop_ = true;
        ::shutdown(fd_, SHUT_RDWR);
        ::close(fd_);
        thread_.join();
    }
    uint16_t port() const { return port_; }
    std::vector<uint8_t> last_call;  // the last call's message (no record mark)

  private:
    void serve() {
        while (!stop_) {
            int c = ::accept(fd_, nullptr, nullptr);
            if (c < 0) return;
            uint8_t mark[4];
            if (::recv(c, mark, 4, MSG_WAITALL) == 4) {
                std::vector<uint8_t> msg(be32(mark) & 0x7fffffff);
                if (::recv(c, msg.data(), msg.size(), MSG_WAITALL) == ssize_t(msg.size())) {
                    last_call = msg;
                    if (silent_) {
                        while (!stop_) std::this_thread::sleep_for(std::chrono::milliseconds(10));
                    } else {
                        std::vector<uint8_t> r;
                        put32(r, 0);
                        put32(r, be32(msg.data()));  // xid
                        for (uint32_t w : {1u, 0u, 0u, 0u, 0u}) put32(r, w);
                        auto res = reply_(msg);
                        r.insert(r.end(), res.begin(), res.end());
                        const uint32_t n = uint32_t(r.size() - 4) | 0x80000000u;
                        r[0] = uint8_t(n >> 24), r[1] = uint8_t(n >> 16), r[2] = uint8_t(n >> 8),
                        r[3] = uint8_t(n);
                        (void)::send(c, r.data(), r.size(), MSG_NOSIGNAL);
                    }
                }
            }
            ::close(c);
        }
    }
    std::function<std::vector<uint8_t>(const std::vector<uint8_t>&)> reply_;
    bool silent_;
    int fd_ = -1;
    uint16_t port_ = 0;
    std::atomic<bool> stop_{false};
    std::thread thread_;
};

rpc::OutgoingCall loopback_call(uint32_t proc, std::vector<uint8_t> args) {
    rpc::OutgoingCall c;
    auto* in = reinterpret_cast<sockaddr_in*>(&c.peer);
    in->sin_family = AF_INET;
    in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    c.peer_len = sizeof(sockaddr_in);
    c.prog = 100021;
    c.vers = 4;
    c.proc = proc;
    c.args = std::move(args);
    return c;
}

class CallbackClientTest : public ::testing::Test {
  protected:
    void SetUp() override { reactor_.start("cb-test"); }
    void TearDown() override { reactor_.stop(); }
    // Runs `done` inline (the tests' "worker").
    static void inline_run(std::function<void()> f) { f(); }

    rpc::CallbackResult call_and_wait(CallbackClient& cc, rpc::OutgoingCall c) {
        std::promise<rpc::CallbackResult> p;
        auto f = p.get_future();
        EXPECT_TRUE(
            cc.call(std::move(c), [&p](rpc::CallbackResult r) { p.set_value(std::move(r)); }));
        EXPECT_EQ(f.wait_for(std::chrono::seconds(20)), std::future_status::ready);
        return f.get();
    }

    engine::Reactor reactor_;
};

TEST_F(CallbackClientTest, AsksRpcbindThenCallsTheProgram) {
    FakeServer program([](const std::vector<uint8_t>&) {
        return std::vector<uint8_t>{0, 0, 0, 7};
    });
    const uint16_t program_port = program.port();
    FakeServer rpcbind([&](const std::vector<uint8_t>&) {
        std::vector<uint8_t> r;
        put32(r, program_port);
        return r;
    });
    CallbackClient cc(reactor_, inline_run, {rpcbind.port(), std::chrono::milliseconds(10000), 4});
    auto r = call_and_wait(cc, loopback_call(5, {1, 2, 3, 4}));
    ASSERT_TRUE(r.ok) << r.error;
    EXPECT_EQ(r.results, (std::vector<uint8_t>{0, 0, 0, 7}));
    // rpcbind was asked PMAPPROC_GETPORT(100021, 4, TCP); the program got proc 5 and the args.
    ASSERT_GE(rpcbind.last_call.size(), 56u);
    EXPECT_EQ(be32(&rpcbind.last_call[12]), 100000u);
    EXPECT_EQ(be32(&rpcbind.last_call[20]), 3u);
    EXPECT_EQ(be32(&rpcbind.last_call[40]), 100021u);
    EXPECT_EQ(be32(&rpcbind.last_call[44]), 4u);
    EXPECT_EQ(be32(&rpcbind.last_call[48]), 6u);
    ASSERT_EQ(program.last_call.size(), 44u);
    EXPECT_EQ(be32(&program.last_call[12]), 100021u);
    EXPECT_EQ(be32(&program.last_call[20]), 5u);
    EXPECT_EQ(be32(&program.last_call[40]), 0x01020304u);
    EXPECT_EQ(cc.in_flight(), 0u);
}

TEST_F(CallbackClientTest, UnknownProgramRefusedPortAndSilenceAreErrors) {
    FakeServer rpcbind([](const std::vector<uint8_t>&) {
        return std::vector<uint8_t>{0, 0, 0, 0};
    });
    CallbackClient cc(reactor_, inline_run, {rpcbind.port(), std::chrono::milliseconds(10000), 4});
    auto r = call_and_wait(cc, loopback_call(5, {}));
    EXPECT_FALSE(r.ok);
    EXPECT_NE(r.error.find("does not know"), std::string::npos) << r.error;

    // Nothing listens on the rpcbind port.
    uint16_t closed;
    {
        FakeServer gone([](const std::vector<uint8_t>&) { return std::vector<uint8_t>{}; });
        closed = gone.port();
    }
    CallbackClient refused(reactor_, inline_run, {closed, std::chrono::milliseconds(10000), 4});
    auto r2 = call_and_wait(refused, loopback_call(5, {}));
    EXPECT_FALSE(r2.ok);

    // A server that takes the call and never answers: the deadline ends it.
    FakeServer silent([](const std::vector<uint8_t>&) { return std::vector<uint8_t>{}; }, true);
    CallbackClient slow(reactor_, inline_run, {silent.port(), std::chrono::milliseconds(300), 4});
    auto t0 = std::chrono::steady_clock::now();
    auto r3 = call_and_wait(slow, loopback_call(5, {}));
    EXPECT_FALSE(r3.ok);
    EXPECT_EQ(r3.error, "no answer in time");
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
    EXPECT_EQ(slow.in_flight(), 0u);
}

TEST_F(CallbackClientTest, CallsInFlightAreBounded) {
    FakeServer silent([](const std::vector<uint8_t>&) { return std::vector<uint8_t>{}; }, true);
    CallbackClient cc(reactor_, inline_run, {silent.port(), std::chrono::milliseconds(500), 1});
    std::promise<rpc::CallbackResult> p;
    auto f = p.get_future();
    ASSERT_TRUE(cc.call(loopback_call(5, {}), [&p](rpc::CallbackResult r) { p.set_value(r); }));
    EXPECT_FALSE(cc.call(loopback_call(5, {}), [](rpc::CallbackResult) { FAIL(); }));
    ASSERT_EQ(f.wait_for(std::chrono::seconds(10)), std::future_status::ready);
    EXPECT_FALSE(f.get().ok);
    std::promise<rpc::CallbackResult> p2;
    auto f2 = p2.get_future();
    EXPECT_TRUE(cc.call(loopback_call(5, {}), [&p2](rpc::CallbackResult r) { p2.set_value(r); }));
    ASSERT_EQ(f2.wait_for(std::chrono::seconds(10)), std::future_status::ready);
}

}  // namespace
}  // namespace nfsrdmad::tcp
