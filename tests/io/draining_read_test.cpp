// The mark a read leaves when it empties a socket (io/draining_read.hpp): what the pool's look
// at an idle connection trusts instead of a recv(). Real sockets on 127.0.0.1.
#include <gtest/gtest.h>

#include <string>

#include "smartlb/io/timed_socket.hpp"

namespace smartlb::io {
namespace draining_read_test {  // named, not anonymous: tests/CMakeLists.txt

using namespace std::chrono_literals;

struct Pair {
  explicit Pair(asio::io_context& ioc)
      : acceptor(ioc.get_executor(), {asio::ip::address_v4::loopback(), 0}),
        a(ioc.get_executor()),
        b(ioc.get_executor()) {
    a.connect(acceptor.local_endpoint());
    acceptor.accept(b);
  }
  Acceptor acceptor;
  Socket a, b;
};

struct Fixture : ::testing::Test {
  asio::io_context ioc;
  DeadlineSweeper sweeper{ioc};
  Pair pair{ioc};
  TimedSocket s{sweeper, std::move(pair.a)};
  char buffer[64];

  // Reads once from `s` into `buffer`, running the io_context until the read completes.
  std::size_t read_once(error_code& ec) {
    std::size_t got = 0;
    bool finished = false;
    s.async_read_some(asio::buffer(buffer), [&](error_code e, std::size_t n) {
      ec = e;
      got = n;
      finished = true;
    });
    ioc.restart();
    while (!finished && ioc.run_one_for(5s) > 0) {
    }
    EXPECT_TRUE(finished);
    return got;
  }
  void peer_writes(const std::string& bytes) { asio::write(pair.b, asio::buffer(bytes)); }
  // Runs what is ready now, epoll's events included, without waiting.
  void process_events() {
    auto busy = asio::make_work_guard(ioc);
    ioc.restart();
    ioc.poll();
  }
  // Lets the worker's epoll see what the peer did: runs the io_context until the socket says
  // so (it never does when the mark is wrong: each wait ends after a second with nothing to do).
  bool seen_by_epoll() {
    auto busy = asio::make_work_guard(ioc);
    ioc.restart();
    while (!s.bytes_may_have_arrived() && ioc.run_one_for(1s) > 0) {
    }
    return s.bytes_may_have_arrived();
  }
};

using DrainingRead = Fixture;

TEST_F(DrainingRead, AFreshSocketMayHaveBytes) { EXPECT_TRUE(s.bytes_may_have_arrived()); }

TEST_F(DrainingRead, AReadThatEmptiedTheSocketLeavesItKnownEmpty) {
  peer_writes("abc");
  error_code ec;
  ASSERT_EQ(read_once(ec), 3u);
  ASSERT_FALSE(ec);
  EXPECT_FALSE(s.bytes_may_have_arrived()) << "nothing has arrived since: no look needed";
}

TEST_F(DrainingRead, AReadThatFilledItsBufferLeavesMaybe) {
  peer_writes(std::string(sizeof buffer, 'x'));
  error_code ec;
  ASSERT_EQ(read_once(ec), sizeof buffer);
  EXPECT_TRUE(s.bytes_may_have_arrived()) << "more bytes may be queued behind a full read";
}

TEST_F(DrainingRead, BytesThatArriveLaterAreSeen) {
  peer_writes("abc");
  error_code ec;
  ASSERT_EQ(read_once(ec), 3u);
  peer_writes("s");
  EXPECT_TRUE(seen_by_epoll());
}

TEST_F(DrainingRead, ACloseThatComesLaterIsSeen) {
  peer_writes("abc");
  error_code ec;
  ASSERT_EQ(read_once(ec), 3u);
  pair.b.close();
  EXPECT_TRUE(seen_by_epoll());
}

TEST_F(DrainingRead, AnEventFetchedButNotYetProcessedCounts) {
  // The pool's look runs in some handler of the worker, possibly one of the same batch of epoll
  // events as the stray's, but ahead of it: the stray's event waits in Asio's queue.
  peer_writes("abc");
  error_code ec;
  ASSERT_EQ(read_once(ec), 3u);
  Pair other(ioc);  // the client whose request the look is made for
  char request;
  bool looked = false, seen = false;
  other.a.async_read_some(asio::buffer(&request, 1), [&](error_code, std::size_t) {
    looked = true;
    seen = s.bytes_may_have_arrived();
  });
  asio::write(other.b, asio::buffer("r", 1));  // epoll reports events in the order they came
  peer_writes("s");
  ioc.restart();
  while (!looked && ioc.run_one_for(5s) > 0) {
  }
  ASSERT_TRUE(looked);
  EXPECT_TRUE(seen) << "the stray came before the look, though its event was not handled yet";
}

TEST_F(DrainingRead, AnAnswerReadWithoutTryingFirstLeavesNoStaleMaybe) {
  // The pool's case: the connection was quiet, a request went out, and epoll reported its answer
  // before the read started. A read that tried first would take the answer and leave that event
  // to be handled afterwards, which makes the idle connection look touched at its next reuse.
  peer_writes("abc");
  error_code ec;
  ASSERT_EQ(read_once(ec), 3u);
  ASSERT_FALSE(s.bytes_may_have_arrived());
  Pair other(ioc);  // whatever the worker handles in the same batch of events, ahead of the answer
  char byte;
  std::size_t got = 0;
  other.a.async_read_some(asio::buffer(&byte, 1), [&](error_code, std::size_t) {
    s.next_read_awaits_answer();
    s.async_read_some(asio::buffer(buffer), [&](error_code, std::size_t n) { got = n; });
  });
  asio::write(other.b, asio::buffer("r", 1));
  peer_writes("answer");
  ioc.restart();
  while (got == 0 && ioc.run_one_for(5s) > 0) {
  }
  ASSERT_EQ(got, 6u);
  process_events();
  EXPECT_FALSE(s.bytes_may_have_arrived());
}

TEST_F(DrainingRead, TheNextReadStillTriesAtOnce) {
  // The close came with the bytes: the short read left the mark, and no later epoll event will
  // come. A read that waited for one would wait for ever; this one finds the end at once.
  peer_writes("abc");
  pair.b.shutdown(tcp::socket::shutdown_send);
  process_events();  // epoll's one event for bytes and close is handled before the read
  error_code ec;
  ASSERT_EQ(read_once(ec), 3u);
  EXPECT_EQ(read_once(ec), 0u);
  EXPECT_EQ(ec, asio::error::eof);
}

TEST_F(DrainingRead, AReportedCloseThatCameWithTheBytesLeavesTheSocketMaybeTouched) {
  // The pool's connections ask for it: one epoll event for the last bytes and the close, and
  // the look before reuse must not call that socket quiet (its answer's read would wait for
  // an event that never comes).
  s.report_peer_close();
  peer_writes("abc");
  pair.b.shutdown(tcp::socket::shutdown_send);
  process_events();
  error_code ec;
  ASSERT_EQ(read_once(ec), 3u);
  EXPECT_TRUE(s.bytes_may_have_arrived());
}

// A waiting event stream holds no buffer: it waits for readability, then reads at once.
TEST_F(DrainingRead, AWaitOnAQuietSocketEndsWithItsNextBytesWhichReadNowTakesWholeLeavingItKnownEmpty) {
  peer_writes("abc");
  error_code ec;
  ASSERT_EQ(read_once(ec), 3u);
  ASSERT_FALSE(s.bytes_may_have_arrived());
  bool woke = false;
  s.async_wait_readable([&](error_code e) {
    ec = e;
    woke = true;
  });
  process_events();
  EXPECT_FALSE(woke) << "nothing has arrived: the wait goes on";
  peer_writes("de");
  auto busy = asio::make_work_guard(ioc);
  ioc.restart();
  while (!woke && ioc.run_one_for(5s) > 0) {
  }
  ASSERT_TRUE(woke);
  ASSERT_FALSE(ec);
  EXPECT_EQ(read_now(s.socket(), asio::buffer(buffer), ec), 2u);
  EXPECT_FALSE(ec);
  EXPECT_EQ(std::string_view(buffer, 2), "de");
  EXPECT_FALSE(s.bytes_may_have_arrived()) << "a short read emptied it, as a draining read's would";
}

TEST_F(DrainingRead, AWaitOnASocketThatMayHaveBytesEndsAtOnce) {
  // A fresh socket may: the wait does not hang on an event that may have come already.
  bool woke = false;
  s.async_wait_readable([&](error_code) { woke = true; });
  process_events();
  EXPECT_TRUE(woke);
}

// A WebSocket session's pump waits, reads now, and waits again when a wake found nothing (an
// event for bytes it had read already). The read that found nothing leaves the socket known
// empty, so the next wait goes to epoll instead of ending at once: else the loop would spin.
TEST_F(DrainingRead, AReadNowThatFindsNothingLeavesTheSocketKnownEmptySoTheNextWaitWaits) {
  ASSERT_TRUE(s.bytes_may_have_arrived()) << "a fresh socket may have bytes";
  error_code ec;
  ASSERT_EQ(read_now(s.socket(), asio::buffer(buffer), ec), 0u);
  ASSERT_EQ(ec, asio::error::would_block);
  EXPECT_FALSE(s.bytes_may_have_arrived());
  bool woke = false;
  s.async_wait_readable([&](error_code) { woke = true; });
  process_events();
  EXPECT_FALSE(woke) << "nothing has arrived: the wait goes on";
  peer_writes("x");
  auto busy = asio::make_work_guard(ioc);
  ioc.restart();
  while (!woke && ioc.run_one_for(5s) > 0) {
  }
  EXPECT_TRUE(woke) << "and ends with the next bytes";
}

TEST_F(DrainingRead, ReadNowSaysWouldBlockOnAnEmptySocketAndEofAtItsEnd) {
  error_code ec;
  EXPECT_EQ(read_now(s.socket(), asio::buffer(buffer), ec), 0u);
  EXPECT_EQ(ec, asio::error::would_block);
  pair.b.shutdown(tcp::socket::shutdown_send);
  EXPECT_EQ(read_now(s.socket(), asio::buffer(buffer), ec), 0u);
  EXPECT_EQ(ec, asio::error::eof);
}

}  // namespace draining_read_test
}  // namespace smartlb::io
