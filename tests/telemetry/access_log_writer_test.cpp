// The access log's writer over a real pipe: every line appended before stop() is written,
// whole; a reader that does not keep up costs dropped (and counted) lines, never a blocked
// caller; a line goes out within the flush interval without waiting for more.
#include "smartlb/telemetry/access_log_writer.hpp"

#include <unistd.h>

#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "smartlb/telemetry/logging.hpp"

namespace smartlb {
namespace access_log_writer_test {  // named, not anonymous: tests/CMakeLists.txt

struct Pipe {
  int fds[2] = {-1, -1};
  Pipe() { EXPECT_EQ(::pipe(fds), 0); }
  ~Pipe() {
    for (int fd : fds)
      if (fd >= 0) ::close(fd);
  }
  void close_write() {
    ::close(fds[1]);
    fds[1] = -1;
  }
  // Everything until the write end closes.
  std::string read_all() {
    std::string out;
    char buf[4096];
    for (;;) {
      const ssize_t n = ::read(fds[0], buf, sizeof buf);
      if (n <= 0) return out;
      out.append(buf, static_cast<std::size_t>(n));
    }
  }
};

std::string line(int i) { return "request " + std::to_string(i) + " status=200 attempts=1\n"; }

TEST(AccessLogWriter, EveryLineAppendedBeforeStopIsWrittenInOrder) {
  Pipe pipe;
  std::string expected;
  std::string got;
  std::thread reader([&] { got = pipe.read_all(); });
  {
    telemetry::AccessLogWriter writer(pipe.fds[1],
                                      {.flush_bytes = 1 << 20, .flush_interval = std::chrono::hours(1)});
    for (int i = 0; i < 5000; ++i) {
      EXPECT_TRUE(writer.append(line(i)));
      expected += line(i);
    }
    writer.stop();
    EXPECT_FALSE(writer.append(line(-1)));  // after stop: dropped, not written
    EXPECT_EQ(writer.dropped_lines(), 1u);
  }
  pipe.close_write();
  reader.join();
  EXPECT_EQ(got, expected);
}

TEST(AccessLogWriter, AReaderThatDoesNotKeepUpCostsDroppedLinesNeverABlockedCaller) {
  Pipe pipe;
  const telemetry::AccessLogWriterOptions options{
      .flush_bytes = 1024, .flush_interval = std::chrono::milliseconds(1), .max_pending_bytes = 4096};
  telemetry::AccessLogWriter writer(pipe.fds[1], options);
  // Nobody reads: the pipe (64 KiB) fills, then the writer's buffer, then lines are dropped.
  // 1 MiB of lines: the loop ends only because append never waits for the pipe.
  int appended = 0;
  int written_whole = 0;
  for (int i = 0; i < 25000; ++i, ++appended)
    if (writer.append(line(i))) ++written_whole;
  EXPECT_GT(writer.dropped_lines(), 0u);
  EXPECT_EQ(writer.dropped_lines() + static_cast<std::uint64_t>(written_whole),
            static_cast<std::uint64_t>(appended));
  std::string got;
  std::thread reader([&] { got = pipe.read_all(); });
  writer.stop();
  pipe.close_write();
  reader.join();
  // What was accepted arrives whole: whole lines, each one once, in order.
  ASSERT_FALSE(got.empty());
  EXPECT_EQ(got.back(), '\n');
  std::size_t lines = 0;
  for (char c : got) lines += c == '\n';
  EXPECT_EQ(lines, static_cast<std::size_t>(written_whole));
  EXPECT_EQ(got.rfind(line(0), 0), 0u);
}

TEST(AccessLogWriter, ALineGoesOutWithinTheFlushIntervalWithoutWaitingForMore) {
  Pipe pipe;
  telemetry::AccessLogWriter writer(pipe.fds[1],
                                    {.flush_bytes = 1 << 20, .flush_interval = std::chrono::milliseconds(5)});
  ASSERT_TRUE(writer.append(line(7)));
  // A blocking read returns once the writer thread has written it, long before stop().
  char buf[256];
  std::string got;
  while (got.size() < line(7).size()) {
    const ssize_t n = ::read(pipe.fds[0], buf, sizeof buf);
    ASSERT_GT(n, 0);
    got.append(buf, static_cast<std::size_t>(n));
  }
  EXPECT_EQ(got, line(7));
  EXPECT_EQ(writer.dropped_lines(), 0u);
}

// An access logger's text lines start as the process log's do ("%Y-%m-%dT%H:%M:%S.%eZ info "),
// in UTC, the second's part recomputed when the second changes.
TEST(AccessLogWriter, AnAccessLoggersTextLinesCarryTheProcessLogsTimePrefix) {
  using namespace std::chrono;
  Pipe pipe;
  std::string got;
  std::thread reader([&] { got = pipe.read_all(); });
  {
    telemetry::AccessLogWriter writer(pipe.fds[1]);
    const auto logger = make_access_logger(writer);
    const system_clock::time_point t =
        sys_days(year(2026) / November / 29) + hours(10) + minutes(11) + seconds(33) + milliseconds(63);
    logger->log(t, spdlog::source_loc{}, spdlog::level::info, "POST /x status=200");
    logger->log(t + milliseconds(900), spdlog::source_loc{}, spdlog::level::info, "same second");
    logger->log(t + seconds(1) + milliseconds(5), spdlog::source_loc{}, spdlog::level::info, "next second");
    writer.stop();
  }
  pipe.close_write();
  reader.join();
  EXPECT_EQ(got,
            "2026-11-29T10:11:33.063Z info POST /x status=200\n"
            "2026-11-29T10:11:33.963Z info same second\n"
            "2026-11-29T10:11:34.068Z info next second\n");
}

}  // namespace access_log_writer_test
}  // namespace smartlb
