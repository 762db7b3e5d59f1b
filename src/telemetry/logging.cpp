#include "smartlb/telemetry/logging.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <mutex>

#include <spdlog/details/null_mutex.h>
#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

namespace smartlb::telemetry {
namespace {

std::string json_format = "text";

// Writes each formatted line with a single write(2): lines from different threads never
// interleave and no user-space lock is shared between threads.
template <class Mutex>
class FdSink final : public spdlog::sinks::base_sink<Mutex> {
 public:
  explicit FdSink(int fd) : fd_(fd) {}

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    spdlog::memory_buf_t buf;
    this->formatter_->format(msg, buf);
    write_fully(fd_, std::string_view(buf.data(), buf.size()));
  }
  void flush_() override {}

 private:
  int fd_;
};

// Formats each line on the worker's thread and hands it to the access log's writer.
class WriterSink final : public spdlog::sinks::base_sink<spdlog::details::null_mutex> {
 public:
  // `raw`: the line as given (JSON lines carry their own time); else the text prefix.
  WriterSink(AccessLogWriter& writer, bool raw) : writer_(writer), raw_(raw) {}

 protected:
  // The text prefix is the process log's ("%Y-%m-%dT%H:%M:%S.%eZ %l "), written here rather
  // than by spdlog's pattern formatter: every request pays for it, and the date and time up to
  // the second change once a second (a per-sink cache; a sink is one worker's).
  void sink_it_(const spdlog::details::log_msg& msg) override {
    line_.clear();
    if (!raw_) {
      const auto since_epoch = msg.time.time_since_epoch();
      const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(since_epoch);
      if (seconds.count() != cached_second_) {
        const std::time_t t = seconds.count();
        std::tm tm{};
        gmtime_r(&t, &tm);
        const int n =
            std::snprintf(second_text_, sizeof second_text_, "%04d-%02d-%02dT%02d:%02d:%02d.",
                          tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
        second_length_ =
            static_cast<std::size_t>(std::clamp(n, 0, static_cast<int>(sizeof second_text_) - 1));
        cached_second_ = seconds.count();
      }
      const auto millis =
          std::chrono::duration_cast<std::chrono::milliseconds>(since_epoch - seconds).count();
      line_.append(second_text_, second_length_);
      const char digits[4] = {static_cast<char>('0' + millis / 100),
                              static_cast<char>('0' + millis / 10 % 10), static_cast<char>('0' + millis % 10),
                              'Z'};
      line_.append(digits, sizeof digits).push_back(' ');
      const spdlog::string_view_t level = spdlog::level::to_string_view(msg.level);
      line_.append(level.data(), level.size()).push_back(' ');
    }
    line_.append(msg.payload.data(), msg.payload.size()).push_back('\n');
    writer_.append(line_);
  }
  void flush_() override {}

 private:
  AccessLogWriter& writer_;
  const bool raw_;
  std::string line_;
  std::int64_t cached_second_ = -1;
  std::size_t second_length_ = 0;
  char second_text_[64] = {};  // room for any int the format could print
};

// Escapes the message for the JSON log format.
class JsonMessageFlag final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&, spdlog::memory_buf_t& dest) override {
    const std::string s = nlohmann::json(std::string(msg.payload.data(), msg.payload.size()))
                              .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    dest.append(s.data(), s.data() + s.size());
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<JsonMessageFlag>();
  }
};

// The process log's formatter (the access log writes the same text prefix itself: WriterSink).
std::unique_ptr<spdlog::formatter> make_formatter(bool json) {
  // Times are UTC (the patterns say so with their trailing Z).
  auto f = std::make_unique<spdlog::pattern_formatter>(spdlog::pattern_time_type::utc);
  if (json) {
    f->add_flag<JsonMessageFlag>('*').set_pattern(
        R"({"time":"%Y-%m-%dT%H:%M:%S.%eZ","level":"%l","msg":%*})");
  } else {
    f->set_pattern("%Y-%m-%dT%H:%M:%S.%eZ %l %v");
  }
  return f;
}

}  // namespace

void setup_logging(const std::string& level, const std::string& format) {
  json_format = format;
  auto sink = std::make_shared<FdSink<std::mutex>>(STDOUT_FILENO);
  auto logger = std::make_shared<spdlog::logger>("smartlb", sink);
  logger->set_formatter(make_formatter(format == "json"));
  logger->set_level(spdlog::level::from_str(level));
  logger->flush_on(spdlog::level::trace);
  spdlog::set_default_logger(logger);
}

std::shared_ptr<spdlog::logger> make_access_logger(AccessLogWriter& writer) {
  // JSON lines are built whole by format_access_line; text lines get the usual prefix.
  auto sink = std::make_shared<WriterSink>(writer, json_format == "json");
  auto logger = std::make_shared<spdlog::logger>("access", sink);
  logger->set_level(spdlog::level::info);
  return logger;
}

void write_fully(int fd, std::string_view bytes) {
  const char* p = bytes.data();
  std::size_t left = bytes.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n <= 0) {
      if (n < 0 && errno == EINTR) continue;
      return;  // stdout closed: drop the line rather than fail a request
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
}

namespace {

std::string_view backend_label(const config::Config& cfg, std::size_t i) {
  return i < cfg.backends.size() ? std::string_view(cfg.backends[i].name) : "?";
}

std::string json_access_line(const RequestRecord& rec, const config::Config& cfg, double ms,
                             std::size_t shown) {
  const auto backend_name = [&](std::size_t i) { return backend_label(cfg, i); };
  nlohmann::json attempts = nlohmann::json::array();
  for (std::size_t i = 0; i < shown; ++i) {
    const auto& a = rec.attempts[i];
    attempts.push_back({{"backend", backend_name(a.backend)},
                        {"status", a.status},
                        {"outcome", a.cause == routing::FailureCause::None ? "served" : to_string(a.cause)},
                        {"cooldown_ms", a.cooldown_ms},
                        {"ttfb_ms", static_cast<double>(a.ttfb_us) / 1000.0}});
    if (a.probe) attempts.back()["probe"] = true;  // sent to test a target its reports held back
  }
  char when[64];
  const auto now = std::chrono::system_clock::now();
  const std::time_t t = std::chrono::system_clock::to_time_t(now);
  std::tm tm{};
  gmtime_r(&t, &tm);
  const auto millis =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::snprintf(when, sizeof when, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
                tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(millis));
  nlohmann::json j = {
      {"time", when},
      {"type", "access"},
      {"request_id", rec.request_id},
      {"method", rec.method},
      {"path", rec.path},
      {"deployment", rec.deployment},
      {"client", rec.client},
      {"backend", rec.served_by >= 0 ? nlohmann::json(backend_name(rec.served_by)) : nlohmann::json(nullptr)},
      {"status", rec.status},
      {"attempts", rec.attempt_count},
      {"attempt_log", attempts},
      {"duration_ms", ms},
      {"response_bytes", rec.response_bytes},
      {"client_aborted", rec.client_aborted},
      {"upstream_aborted", rec.upstream_aborted}};
  if (!rec.priority_class.empty()) j["priority_class"] = rec.priority_class;
  if (rec.queued_ms >= 0) j["queued_ms"] = rec.queued_ms;
  if (rec.prompt_tokens >= 0) j["prompt_tokens"] = rec.prompt_tokens;
  if (rec.completion_tokens >= 0) j["completion_tokens"] = rec.completion_tokens;
  if (rec.cached_tokens >= 0) j["cached_tokens"] = rec.cached_tokens;
  if (rec.cost >= 0) {  // in the price table's currency (a double: what log tools sum)
    j["cost"] = cost::money_as_units(rec.cost);
    j["cost_model"] = rec.cost_model;
  }
  if (rec.trace.on) {  // the trace it belongs to (sampled or not: the id went upstream either way)
    static constexpr char kHex[] = "0123456789abcdef";
    std::string id;
    for (const std::uint8_t b : rec.trace.trace_id) id.append({kHex[b >> 4], kHex[b & 0xf]});
    j["trace_id"] = id;
    j["trace_sampled"] = rec.trace.sampled;
  }
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string text_access_line(const RequestRecord& rec, const config::Config& cfg, std::size_t shown) {
  const auto backend_name = [&](std::size_t i) { return backend_label(cfg, i); };
  using namespace std::string_view_literals;  // appends of known length: no strlen
  // One string, appended in place: every request writes this line, so it costs one allocation,
  // not one per field.
  std::string line;
  line.reserve(160 + rec.path.size() + rec.request_id.size() + 24 * shown);
  const auto number = [&line](std::int64_t v) {
    char digits[24];
    const auto end = std::to_chars(digits, digits + sizeof digits, v).ptr;
    line.append(digits, end);
  };
  line.append(rec.method).append(" "sv).append(rec.path);
  line.append(" client="sv).append(rec.client.empty() ? "-"sv : std::string_view(rec.client));
  if (!rec.priority_class.empty()) line.append(" class="sv).append(rec.priority_class);
  if (rec.queued_ms >= 0) {
    line.append(" queued_ms="sv);
    number(rec.queued_ms);
  }
  line.append(" backend="sv).append(rec.served_by >= 0 ? backend_name(rec.served_by) : "-"sv);
  line.append(" status="sv);
  number(rec.status);
  line.append(" attempts="sv);
  number(static_cast<std::int64_t>(rec.attempt_count));
  // Every attempt and what it got, unless the one attempt made is the answer the client got.
  if (rec.attempt_count > 1 || (rec.attempt_count == 1 && rec.served_by < 0)) {
    line += " ("sv;
    for (std::size_t i = 0; i < shown; ++i) {
      const auto& a = rec.attempts[i];
      if (i) line += ", "sv;
      line.append(backend_name(a.backend)).append(":"sv);
      if (a.status)
        number(a.status);
      else
        line.append(to_string(a.cause));
    }
    line += ")"sv;
  }
  // Milliseconds with one decimal, rounded half up (printf's %.1f costs several times this).
  const std::int64_t tenths = (std::max<std::int64_t>(rec.end - rec.start, 0) + 50'000) / 100'000;
  line.append(" duration_ms="sv);
  number(tenths / 10);
  line.push_back('.');
  line.push_back(static_cast<char>('0' + tenths % 10));
  if (rec.cost >= 0) line.append(" cost="sv).append(cost::format_money(rec.cost));
  line.append(" id="sv).append(rec.request_id);
  if (rec.client_aborted) line += " client_aborted"sv;
  if (rec.upstream_aborted) line += " upstream_aborted"sv;
  return line;
}

}  // namespace

std::string format_access_line(const RequestRecord& rec, const config::Config& cfg, bool json) {
  const double ms = static_cast<double>(rec.end - rec.start) / 1e6;
  const std::size_t shown = std::min(rec.attempt_count, RequestRecord::kMaxAttempts);
  return json ? json_access_line(rec, cfg, ms, shown) : text_access_line(rec, cfg, shown);
}

}  // namespace smartlb::telemetry
