#include "smartlb/net/client_session.hpp"
#include "smartlb/net/worker.hpp"
#include "smartlb/telemetry/logging.hpp"
#include "smartlb/tracing/tracer.hpp"

namespace smartlb::net {

void finish_request(Worker& w, telemetry::RequestRecord& rec) {
  rec.end = w.shared.clock.now();
  if (w.access_log)
    w.access_log->info(format_access_line(rec, w.shared.cfg, w.shared.cfg.log_format == "json"));
  // (The spans are queued before the observer hears of the request: whoever sees it ended can
  // flush them.)
  if (w.shared.tracer) w.shared.tracer->finished(rec);
  if (w.shared.observer) w.shared.observer->on_request(rec);
}

}  // namespace smartlb::net
