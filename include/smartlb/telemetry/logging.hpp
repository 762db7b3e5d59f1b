#pragma once
// Logging set-up: the process logger (stderr-free: everything goes to stdout for containers)
// and per-thread access loggers that format on their thread and hand each line to the access
// log's writer (access_log_writer.hpp), which writes to stdout off the request's path.
#include <memory>
#include <string>
#include <string_view>

#include <spdlog/logger.h>

#include "smartlb/config/config.hpp"
#include "smartlb/telemetry/access_log_writer.hpp"
#include "smartlb/telemetry/request_record.hpp"

namespace smartlb::telemetry {

// Installs the default logger for LOG_LEVEL / LOG_FORMAT.
void setup_logging(const std::string& level, const std::string& format);
// A logger for one worker thread's access log (not registered, not shared); its lines go to
// `writer`, which must outlive it.
std::shared_ptr<spdlog::logger> make_access_logger(AccessLogWriter& writer);
// Writes all of `bytes` to `fd` (retrying a short or interrupted write); a closed descriptor
// drops the rest: a log line is never worth failing a request for.
void write_fully(int fd, std::string_view bytes);
// The access-log line for a finished request, in the configured format.
std::string format_access_line(const RequestRecord& rec, const config::Config& cfg, bool json);

}  // namespace smartlb::telemetry
