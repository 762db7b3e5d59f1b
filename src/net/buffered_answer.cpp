// Answers read whole before they go to the client (include/smartlb/net/upstream_exchange.hpp):
// a stateful API's JSON, whose ids are tagged (docs/stateful-apis.md), and an answer held while
// the policy decided whether it was the one to relay (a "not found" of an untagged try).
#include <array>
#include <atomic>

#include <spdlog/spdlog.h>

#include "smartlb/http1/http_io.hpp"
#include "smartlb/http1/wire_format.hpp"
#include "smartlb/net/upstream_exchange.hpp"
#include "smartlb/stateful/id_tagger.hpp"
#include "smartlb/telemetry/response_facts.hpp"

namespace smartlb::net {
namespace {

// A JSON answer up to this size is read whole to tag its ids; a larger one (a long list) goes
// as it is, said once per process.
constexpr std::size_t kTaggedJsonLimitBytes = 16 * 1024 * 1024;
std::atomic<bool> said_over_limit{false};

}  // namespace

Task<BodyRead> UpstreamExchange::read_body(std::string& out, std::size_t limit) {
  return read_body(*conn_, out, limit);
}

Task<BodyRead> UpstreamExchange::read_body(UpstreamConnection& conn, std::string& out, std::size_t limit) {
  http1::ResponseReader& p = *parser_;
  for (;;) {
    const std::string_view run = p.take_body_view();  // valid until the next read: copied now
    out.append(run);
    if (p.is_done()) co_return BodyRead::Done;
    if (out.size() > limit) co_return BodyRead::OverLimit;
    bool progressed = false;
    error_code ec;
    if (!feed_buffered(conn.buffer, p, http1::ReadGoal::some, progressed, ec)) {
      conn.tcp().expires_after(ctx_.cfg.http_timeout);
      ec = conn.tcp().done(
          co_await conn.visit([&](auto& s) { return read_http(s, conn.buffer, p, http1::ReadGoal::some); }));
    }
    if (ec) co_return BodyRead::Failed;
  }
}

Task<Relayed> UpstreamExchange::write_answer(const http1::ResponseHead& res, std::string_view body,
                                             const RelayOptions& options) {
  const bool keep = client_may_go_on();
  const bool has_body = req_.method != beast::http::verb::head && res.status != 204 && res.status != 304;
  write_response_head(res, options, false, keep, true);
  std::string& head = buffers_.response_head;
  head.resize(head.size() - 2);  // its blank line: the length goes first
  head.append("Content-Length: ");
  http1::append_decimal(head, has_body ? body.size() : 0);
  head.append("\r\n\r\n");
  const std::array<asio::const_buffer, 2> out{asio::buffer(head), asio::buffer(body.data(), body.size())};
  client_.expires_after(ctx_.cfg.http_timeout);
  error_code ec;  // (not a conditional expression: GCC 12 miscompiles co_await inside one)
  if (has_body)
    ec = std::get<0>(co_await asio::async_write(client_, out, use_tuple));
  else
    ec = std::get<0>(co_await asio::async_write(client_, out[0], use_tuple));
  if (client_.done(ec)) {
    rec_.client_aborted = true;
    co_return Relayed{RelayEnd::Close};
  }
  if (has_body) {
    rec_.response_bytes += body.size();
    record_usage(telemetry::parse_usage_json(body));
    if (rec_.trace.sampled) read_response_facts(body, rec_.response);  // gen_ai.response.* of its spans
  }
  co_return Relayed{keep ? RelayEnd::Keep : RelayEnd::Close};
}

Task<Relayed> UpstreamExchange::relay_tagged_json(UpstreamPtr conn, const RelayOptions& options) {
  std::string body;
  const BodyRead read = co_await read_body(*conn, body, kTaggedJsonLimitBytes);
  if (read == BodyRead::Failed) {  // nothing went to the client yet
    conn->close();
    co_return Relayed{RelayEnd::FailOver, RelayFault::Transport, routing::TransportFailure::Lost,
                      "its body was cut off"};
  }
  if (read == BodyRead::OverLimit) {
    if (!said_over_limit.exchange(true))
      spdlog::warn("a stateful API's JSON answer is over {} MiB: its ids go untagged (said once)",
                   kTaggedJsonLimitBytes >> 20);
    RelayOptions plain = options;
    plain.tag_ids = nullptr;
    plain.prefix = body;
    co_return co_await relay(std::move(conn), plain);
  }
  std::string tagged;
  const bool is_json = stateful::tag_json_ids(body, *options.tag_ids, tagged);
  const Relayed r = co_await write_answer(conn->head, is_json ? std::string_view(tagged) : body, options);
  co_await drain_or_close(std::move(conn));  // read whole: given back to the pool
  co_return r;
}

}  // namespace smartlb::net
