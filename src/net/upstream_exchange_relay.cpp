// The relay of an answer's body (include/smartlb/net/upstream_exchange.hpp): the held-back start
// of an event stream, then every run of body bytes to the client as it comes, with the stream's
// ids tagged and its usage read. UpstreamExchange's sending half is upstream_exchange.cpp.
#include "smartlb/net/upstream_exchange.hpp"

#include <array>
#include <span>

#include "smartlb/http/response_fields.hpp"
#include "smartlb/http/stream_start.hpp"
#include "smartlb/http1/http_io.hpp"
#include "smartlb/http1/wire_format.hpp"
#include "smartlb/net/event_stream_buffer.hpp"
#include "smartlb/net/relay_scratch.hpp"
#include "smartlb/stateful/event_stream_tagger.hpp"
#include "smartlb/telemetry/usage_sniffer.hpp"

namespace smartlb::net {
namespace {

// A response body up to this size goes out in the same buffer as the head: one send().
constexpr std::size_t kInlineBodyBytes = 64 * 1024;

// Ends a stream's hold-back when `after` has passed, even while the backend stays silent: it
// cancels the pending read on the upstream connection, which stays usable (the socket's own
// deadline would close it). Shared with the timer's handler, which may run after the hold.
class HoldDeadline {
 public:
  HoldDeadline(UpstreamConnection& conn, std::chrono::nanoseconds after) : s_(std::make_shared<State>(conn)) {
    s_->timer.expires_after(after);
    s_->timer.async_wait([s = s_](error_code ec) {
      if (ec || !s->active) return;
      s->expired = true;
      error_code ignored;
      s->conn.tcp().socket().cancel(ignored);
    });
  }
  ~HoldDeadline() {
    s_->active = false;
    s_->timer.cancel();
  }
  HoldDeadline(const HoldDeadline&) = delete;
  HoldDeadline& operator=(const HoldDeadline&) = delete;
  bool expired() const { return s_->expired; }

 private:
  struct State {
    explicit State(UpstreamConnection& c) : conn(c), timer(c.tcp().get_executor()) {}
    UpstreamConnection& conn;
    WaitTimer timer;
    bool active = true;
    bool expired = false;
  };
  std::shared_ptr<State> s_;
};

// What goes out of an event stream whose ids are tagged: the events these runs complete,
// tagged, as one run (in `tagged`). Returns its size. The usage reader sees the same events as
// the tagger splits them (before they are written: tagging delays them anyway).
std::size_t tag_events_of(stateful::EventStreamTagger& tagger, std::string_view* runs, std::size_t& run_count,
                          bool last, std::string& tagged, telemetry::UsageSniffer& usage) {
  http::EventSink* const also = usage.mode() == telemetry::UsageSniffer::Mode::EventStream ? &usage : nullptr;
  tagged.clear();
  for (std::size_t i = 0; i < run_count; ++i) tagger.feed(runs[i], tagged, also);
  if (last) tagger.finish(tagged, also);
  run_count = tagged.empty() ? 0 : 1;
  runs[0] = tagged;
  return tagged.size();
}

// The runs of body bytes of the read just done, then of what else the connection's buffer holds
// already, up to the round's room (views, valid until the connection's next read), their total
// added to `chunk`. Stops at the message's end, a full round, an empty buffer, or an error.
void take_runs(http1::ResponseReader& p, beast::flat_buffer& buffer, std::span<std::string_view> runs,
               std::size_t& run_count, std::size_t& chunk, error_code& ec) {
  while (!ec) {
    if (const std::string_view run = p.take_body_view(); !run.empty()) {
      runs[run_count++] = run;
      chunk += run.size();
    }
    bool progressed = false;
    if (p.is_done() || run_count == runs.size() || buffer.size() == 0 ||
        !feed_buffered(buffer, p, http1::ReadGoal::some, progressed, ec))
      break;
  }
}

// One gather write, into `out`: [head] [size line, runs..., CRLF | runs...] [last chunk]. A
// small body that goes with the head is appended to it instead (one send(), not sendmsg()). A
// read that parsed only framing (a chunk header) adds no data, and nothing is written for it.
// Returns the buffers to write (0: nothing).
std::size_t gather_write(std::span<asio::const_buffer> out, std::string& head, bool head_sent, bool chunked,
                         std::span<const std::string_view> runs, std::size_t chunk, bool last,
                         char (&size_line)[20]) {
  static constexpr std::string_view kCrlf = "\r\n", kLastChunk = "0\r\n\r\n";
  std::size_t k = 0;
  bool chunk_in_head = false;
  if (!head_sent && !chunked && chunk > 0 && chunk <= kInlineBodyBytes) {
    for (const std::string_view run : runs) head.append(run);
    out[k++] = asio::buffer(head);
    chunk_in_head = true;
  } else if (!head_sent) {
    out[k++] = asio::buffer(head);
  }
  if (chunk > 0 && !chunk_in_head) {
    if (chunked) out[k++] = asio::buffer(size_line, http1::chunk_size_line(chunk, size_line));
    for (const std::string_view run : runs) out[k++] = asio::buffer(run.data(), run.size());
    if (chunked) out[k++] = asio::buffer(kCrlf.data(), kCrlf.size());
  }
  if (last && chunked) out[k++] = asio::buffer(kLastChunk.data(), kLastChunk.size());
  return k;
}

}  // namespace

// The next bytes of a response body (ReadGoal::some), within `timeout`. An event stream
// (`event_stream`) waits long between events, and a pending read holds its buffer: when it may
// (may_wait_bufferless), it waits for its next bytes with the buffer's room lent to `rooms` (the
// worker's), then reads them (read_after_wait).
Task<error_code> UpstreamExchange::read_body_bytes(UpstreamConnection& c, http1::ResponseReader& p,
                                                   std::chrono::seconds timeout, bool event_stream,
                                                   bool& fitted, EventRooms& rooms) {
  c.tcp().expires_after(timeout);
  fit_to_events(c.buffer, fitted);
  error_code ec;
  if (event_stream && may_wait_bufferless(c)) {
    const std::size_t room = rooms.give(c.buffer);
    ec = std::get<0>(co_await c.tcp().async_wait_readable(use_tuple));
    rooms.take(c.buffer, room);
    if (read_after_wait(c, p, ec)) co_return c.tcp().done(ec);
  }
  ec = co_await c.visit([&](auto& s) { return read_http(s, c.buffer, p, http1::ReadGoal::some); });
  co_return c.tcp().done(ec);
}

// The head the client gets, into buffers_.response_head: the backend's fields but hop-by-hop
// ones and its per-backend quota headers, then ours. Not part of the relay coroutine, so that
// its locals stay out of the coroutine's frame.
void UpstreamExchange::write_response_head(const http1::ResponseHead& res, const RelayOptions& o,
                                           bool chunked, bool keep, bool own_length) {
  rec_.status = res.status;
  std::string& head = buffers_.response_head;
  head.clear();
  http1::HeadWriter w(head);
  w.status_line(req_.version, res.status, res.reason);
  const http::ConnectionNames named(res.fields);
  for (std::size_t i = 0; i < res.fields.size(); ++i) {
    const auto field = res.fields[i];
    if (http::is_replaced_answer_field(field.name) || named.contains(field.name) ||
        (own_length && field.id == beast::http::field::content_length))
      continue;
    w.field(field.name, field.value);
  }
  w.field("x-smartlb-backend", o.backend_name);
  w.text(o.extra_fields);  // the caller's budget, in the place of the backend's
  if (!o.request_id.empty()) w.field("x-request-id", o.request_id);
  if (chunked) w.text("Transfer-Encoding: chunked\r\n");
  if (req_.version >= 11 && !keep) w.text("Connection: close\r\n");
  if (req_.version == 10 && keep) w.text("Connection: keep-alive\r\n");
  w.text("\r\n");
}

// A 2xx event stream's start, held back until it shows content, so a stream that begins with an
// error can still fail over: nothing has gone to the client yet. Bounded by
// STREAM_HOLDBACK_BYTES and by `timeout`; either way what is held is then released. A backend
// that fails (or a parse error) while its start is held fails over too.
// On Release, `released` is what was held: the first run of body bytes itself when it decided
// (no copy: a view into the connection's buffer, valid until its next read), else `held`, where
// a start spread over several reads is gathered.
Task<UpstreamExchange::HoldEnd> UpstreamExchange::hold_stream_start(
    UpstreamConnection& conn, http1::ResponseReader& p, std::string& held, std::string_view& released,
    ClientWatch& watch, Relayed& outcome, const RelayOptions& o, bool& buffer_fitted) {
  const config::Config& cfg = ctx_.cfg;
  held.clear();
  http::StreamStart start(cfg.stream_holdback_bytes);
  // Started when the hold first waits on the backend: a first event that came with the head
  // (the usual case) costs no timer.
  std::optional<HoldDeadline> deadline;
  for (;;) {
    bool progressed = false;
    error_code ec;
    if (!p.is_done() && !feed_buffered(conn.buffer, p, http1::ReadGoal::some, progressed, ec)) {
      if (!deadline) deadline.emplace(conn, o.hold_timeout);
      watch.arm(client_.socket(), conn);  // a client that leaves meanwhile closes `conn`
      // The hold's deadline (at most HTTP_TIMEOUT_SECONDS after its first wait) ends a read first;
      // the socket's own, which would close the connection, is only a safety net behind it.
      ec = co_await read_body_bytes(conn, p, cfg.http_timeout + std::chrono::seconds(1), true, buffer_fitted,
                                    ctx_.spare_event_rooms);
    }
    if (ec && watch.client_left()) co_return HoldEnd::ClientLeft;
    const bool expired = deadline && deadline->expired();
    released = held;
    // Past a first-token deadline without content: stalled (nothing went to the client yet).
    if (expired && o.fail_over_stall && !p.is_done()) {
      outcome.fault = RelayFault::Stalled;
      co_return HoldEnd::FailOver;
    }
    if (ec == asio::error::operation_aborted && expired) co_return HoldEnd::Release;
    if (ec) {
      outcome.fault = RelayFault::Transport;
      outcome.failure = classify_transport_error(ec);
      co_return HoldEnd::FailOver;
    }
    if (const std::string_view run = p.take_body_view(); !run.empty()) {
      const bool first = held.empty();
      if (!first) held.append(run);
      released = first ? run : std::string_view(held);
      switch (start.advance(released)) {
        case http::StartVerdict::Hold:
          if (first) held.assign(run);  // the next read may move what the view points at
          released = held;
          break;
        case http::StartVerdict::Release:
          if (start.reason() == http::StartReason::Content) outcome.content_at = ctx_.clock.now();
          co_return HoldEnd::Release;
        case http::StartVerdict::FailOver:
          outcome.fault = RelayFault::ErrorEvent;
          co_return HoldEnd::FailOver;
      }
    }
    if (p.is_done() || expired) co_return HoldEnd::Release;
  }
}

UpstreamExchange::BodyPlan UpstreamExchange::plan_body(const http1::ResponseHead& res, bool rewrites) const {
  BodyPlan b;
  const unsigned status = res.status;
  const bool has_body =
      req_.method != beast::http::verb::head && status >= 200 && status != 204 && status != 304;
  const std::string_view type = res.fields.get(beast::http::field::content_type);
  const std::string_view coding = res.fields.get(beast::http::field::content_encoding);
  b.usage = has_body ? telemetry::UsageSniffer::mode_for(type, coding) : telemetry::UsageSniffer::Mode::Off;
  b.keep = client_may_go_on();
  if (has_body && (rewrites || !res.fields.contains(beast::http::field::content_length))) {
    if (req_.version >= 11)
      b.chunked = true;
    else
      b.keep = false;  // HTTP/1.0 client: the end of the body is the end of the connection
  }
  b.event_stream = has_body && http::is_plain_event_stream(type, coding);
  b.hold = b.event_stream && status / 100 == 2 && ctx_.cfg.stream_holdback_bytes > 0;
  return b;
}

// A held stream's start failed: nothing went to the client; its connection, not read to the
// end, is never pooled.
Relayed UpstreamExchange::held_start_failed(UpstreamConnection& conn, Relayed failed) {
  conn.close();
  failed.why = failed.fault == RelayFault::ErrorEvent ? "an error event"
               : failed.fault == RelayFault::Stalled  ? "no content within its first-token deadline"
                                                      : "its connection failed";
  return failed;
}

// The backend failed after its answer's head, before any of the answer went to the client: the
// next target may still answer it.
Relayed UpstreamExchange::body_never_came(UpstreamConnection& conn, const error_code& ec) {
  conn.close();
  return Relayed{RelayEnd::FailOver, RelayFault::Transport, classify_transport_error(ec),
                 "its body never came (its connection failed or went silent after the head)"};
}

// The backend failed after the answer's head went out: too late to fail over, so the client is
// cut off without a clean end (it sees a truncated response, not a complete one); the policy
// accounts the backend's failure.
Relayed UpstreamExchange::cut_short(UpstreamConnection& conn, const error_code& ec) {
  rec_.upstream_aborted = true;
  conn.close();
  return Relayed{RelayEnd::Close, RelayFault::Transport, classify_transport_error(ec)};
}

// This round's runs to the usage reader, after they were written (it never delays one); the last
// one's usage recorded at the body's end. True at the end.
bool UpstreamExchange::read_usage(telemetry::UsageSniffer& usage, std::span<const std::string_view> runs,
                                  bool last) {
  for (std::size_t i = 0; i + 1 < runs.size(); ++i) usage.feed(runs[i].data(), runs[i].size());
  const std::string_view final_run = runs.empty() ? std::string_view{} : runs.back();
  if (last) {
    record_usage(usage.finish_with(final_run.data(), final_run.size()));
    return true;
  }
  usage.feed(final_run.data(), final_run.size());
  return false;
}

// The client left (a write failed, or its watch saw it go): stop reading, discard the upstream
// connection, blame no one.
Relayed UpstreamExchange::client_left(UpstreamConnection& conn) {
  rec_.client_aborted = true;
  conn.close();
  return Relayed{RelayEnd::Close};
}

void UpstreamExchange::record_usage(const telemetry::TokenUsage& u) {
  if (!u.known()) return;
  rec_.prompt_tokens = u.prompt_tokens;
  rec_.completion_tokens = u.completion_tokens;
  rec_.cached_tokens = u.cached_tokens;
}

Task<Relayed> UpstreamExchange::relay(const RelayOptions& options) {
  return relay(std::move(conn_), options);
}

// Not a coroutine: it hands the caller the coroutine that relays, at no frame of its own.
Task<Relayed> UpstreamExchange::relay(UpstreamPtr conn, const RelayOptions& options) {
  const http1::ResponseHead& res = conn->head;
  telemetry::UsageSniffer::Mode ids =
      telemetry::UsageSniffer::Mode::Off;  // where a stateful answer's ids are
  if (options.tag_ids && req_.method != beast::http::verb::head && res.status != 204)
    ids = telemetry::UsageSniffer::mode_for(res.fields.get(beast::http::field::content_type),
                                            res.fields.get(beast::http::field::content_encoding));
  if (ids == telemetry::UsageSniffer::Mode::Json && options.prefix.empty())
    return relay_tagged_json(std::move(conn), options);
  return relay_body(std::move(conn), options, ids == telemetry::UsageSniffer::Mode::EventStream);
}

// The body's readers for this response, in the relay's scratch: the id tagger of a stateful
// event stream (its ids are tagged event by event: its length changes, so it goes chunked) and
// the usage reader (fed each chunk after it was written, so it never delays one).
UpstreamExchange::BodyPlan UpstreamExchange::start_readers(RelayScratch& scratch,
                                                           const http1::ResponseHead& res,
                                                           const RelayOptions& options, bool tag_events) {
  if (tag_events) scratch.tagger = std::make_unique<stateful::EventStreamTagger>(*options.tag_ids);
  const BodyPlan plan = plan_body(res, scratch.tagger != nullptr);
  if (rec_.trace.sampled) rec_.event_stream = plan.usage == telemetry::UsageSniffer::Mode::EventStream;
  telemetry::UsageSniffer& usage = scratch.usage.emplace(plan.usage);
  if (rec_.trace.sampled) usage.read_facts_into(&rec_.response);  // gen_ai.response.* of its spans
  return plan;
}

Task<Relayed> UpstreamExchange::relay_body(UpstreamPtr conn, const RelayOptions& options, bool tag_events) {
  BodyRelay& r = body_relay_.emplace(ctx_.spare_scratch);
  r.conn = std::move(conn);
  r.plan = start_readers(*r.scratch.get(), r.conn->head, options, tag_events);
  r.buffer_fitted = !r.plan.event_stream;  // only an event stream's buffer is cut
  if (r.plan.event_stream) free_stream_idle_room();
  r.pending = options.prefix;  // a stream's held-back start: the first bytes written
  return relay_rounds(options.may_hand_off ? Rounds::HandOff : Rounds::Whole, &options);
}

Task<std::optional<Relayed>> UpstreamExchange::start_event_stream(const RelayOptions& options) {
  http1::ResponseReader& p = *parser_;
  BodyRelay& r = *body_relay_;
  if (r.plan.hold) {
    Relayed held{RelayEnd::FailOver};  // what the hold saw
    const HoldEnd end = co_await hold_stream_start(*r.conn, p, r.scratch->held, r.pending, r.watch, held,
                                                   options, r.buffer_fitted);
    r.content_at = held.content_at;
    if (end == HoldEnd::ClientLeft) co_return client_left(*r.conn);
    if (end == HoldEnd::FailOver) {
      r.watch.disarm(client_.socket());  // the client's connection gets the next attempt's answer
      co_return held_start_failed(*r.conn, held);
    }
  }
  write_response_head(r.conn->head, options, r.plan.chunked, r.plan.keep, r.scratch->tagger != nullptr);
  // An event stream's head goes at once when its body must be waited for. Any other answer's
  // head waits for its body's first bytes and goes in the same write (relay_rounds): one syscall
  // instead of two, and a backend that sends a head and then nothing (or fails) before its body
  // began has sent nothing to the client yet, so the request can still fail over.
  if (r.pending.empty() && !p.is_done() && r.conn->buffer.size() == 0) {
    client_.expires_after(ctx_.cfg.http_timeout);
    auto [hec, hn] = co_await asio::async_write(client_, asio::buffer(buffers_.response_head), use_tuple);
    if (client_.done(hec)) co_return client_left(*r.conn);
    free_sent_texts(*r.conn);
    r.head_sent = true;
  }
  co_return std::nullopt;
}

// Body bytes of a round: views into the connection's buffer, valid until its next read (so:
// written, and fed to the usage scan, before the relay reads again). Every run of body bytes one
// read brought (several chunks of a stream, often) goes out in one write.
bool UpstreamExchange::gather_round(BodyRelay& r, RelayRound& round, std::string_view held_start,
                                    error_code& ec) {
  http1::ResponseReader& p = *parser_;
  round.run_count = round.chunk = round.k = 0;
  if (!held_start.empty()) {
    round.runs[round.run_count++] = held_start;
    round.chunk = held_start.size();
  }
  take_runs(p, r.conn->buffer, round.runs, round.run_count, round.chunk, ec);
  if (ec) return false;
  round.last = p.is_done();
  if (r.scratch->tagger)
    round.chunk = tag_events_of(*r.scratch->tagger, round.runs.data(), round.run_count, round.last, r.tagged,
                                *r.scratch->usage);
  rec_.response_bytes += round.chunk;
  round.k =
      gather_write(round.out, buffers_.response_head, r.head_sent, r.plan.chunked,
                   std::span(round.runs.data(), round.run_count), round.chunk, round.last, round.size_line);
  return true;
}

bool UpstreamExchange::round_written(BodyRelay& r, const RelayRound& round) {
  if (round.k > 0) {
    if (!r.head_sent && r.plan.event_stream) free_sent_texts(*r.conn);
    r.head_sent = true;
    if (round.chunk > 0 && rec_.trace.sampled && rec_.first_byte == 0) rec_.first_byte = ctx_.clock.now();
  }
  telemetry::UsageSniffer& usage = *r.scratch->usage;
  if (!r.scratch->tagger) return read_usage(usage, std::span(round.runs.data(), round.run_count), round.last);
  if (round.last) record_usage(usage.finish());  // its events came through the tagger
  return round.last;
}

Relayed UpstreamExchange::body_ended(BodyRelay& r) {
  pool_or_close(std::move(r.conn), parser_->keep_alive());
  r.watch.disarm(client_.socket());
  return Relayed{r.plan.keep ? RelayEnd::Keep : RelayEnd::Close, {}, {}, {}, r.content_at};
}

Relayed UpstreamExchange::read_failed(BodyRelay& r, const error_code& ec) {
  // (the client left while the backend was silent: blame no one)
  return r.watch.client_left() ? client_left(*r.conn)
         : r.head_sent         ? cut_short(*r.conn, ec)
                               : body_never_came(*r.conn, ec);
}

// Each round: what came (or what the connection's buffer holds already), written to the client in
// one write. Ends the relay (body_relay_ reset) unless it is handed off, or waits committed.
Task<Relayed> UpstreamExchange::relay_rounds(Rounds rounds, const RelayOptions* start) {
  http1::ResponseReader& p = *parser_;
  BodyRelay& r = *body_relay_;
  UpstreamConnection& conn = *r.conn;
  if (start && r.plan.event_stream) {  // its own coroutine: the frame of every other answer stays small
    const std::optional<Relayed> ended = co_await start_event_stream(*start);
    if (ended) {
      body_relay_.reset();
      co_return *ended;
    }
  } else if (start) {
    write_response_head(conn.head, *start, r.plan.chunked, r.plan.keep, r.scratch->tagger != nullptr);
  }
  Relayed end;
  for (;;) {
    bool progressed = false;
    error_code ec;
    if (!r.unsent.empty()) {  // what relay_committed_now's round could not send at once
      client_.expires_after(ctx_.cfg.http_timeout);
      ec = std::get<0>(co_await asio::async_write(client_, asio::buffer(r.unsent), use_tuple));
      std::string().swap(r.unsent);
      if (client_.done(ec)) {
        end = client_left(conn);
        break;
      }
      if (p.is_done()) {  // that round ended the body (its usage was read)
        end = body_ended(r);
        break;
      }
    }
    const std::string_view held_start = std::exchange(r.pending, {});
    if (r.waited) {  // woken: a committed stream's wait (await_committed) ended
      if (!read_after_wake(r, ec)) continue;
    } else if (held_start.empty() && !p.is_done() &&  // the held start goes first, then what is buffered
               !feed_buffered(conn.buffer, p, http1::ReadGoal::some, progressed,
                              ec)) {  // else no read needed
      // Committed to the client and waiting for its next event: whoever takes it over goes on, or
      // a committed stream waits without a frame.
      const bool committed = r.head_sent && r.plan.event_stream && !ec;
      if (committed &&
          (rounds == Rounds::HandOff || (rounds == Rounds::Committed && may_wait_bufferless(conn))))
        co_return Relayed{RelayEnd::HandedOff};
      r.watch.arm(client_.socket(), conn);
      // The idle timeout, renewed on every read.
      ec = co_await read_body_bytes(conn, p, ctx_.cfg.http_timeout, r.plan.event_stream, r.buffer_fitted,
                                    ctx_.spare_event_rooms);
    }
    RelayRoundLease lease(ctx_.spare_rounds);
    RelayRound& round = *lease.get();
    if (!gather_round(r, round, held_start, ec)) {
      end = read_failed(r, ec);
      break;
    }
    if (round.k > 0) {
      client_.expires_after(ctx_.cfg.http_timeout);
      // One buffer goes as send(): Asio uses sendmsg() for any sequence. (GCC 12: no ?: around co_await.)
      if (round.k == 1)
        ec = std::get<0>(co_await asio::async_write(client_, round.out[0], use_tuple));
      else
        ec =
            std::get<0>(co_await asio::async_write(client_, std::span(round.out.data(), round.k), use_tuple));
      if (client_.done(ec)) {
        end = client_left(conn);  // stop reading, blame no one
        break;
      }
    }
    if (round_written(r, round)) {
      end = body_ended(r);
      break;
    }
    if (!held_start.empty()) std::string().swap(r.scratch->held);  // sent and read: not kept for minutes
  }
  body_relay_.reset();
  co_return end;
}

// A held-back start larger than this is not kept in the worker's spare scratch.
UpstreamExchange::BodyRelay::~BodyRelay() {
  constexpr std::size_t kKeepHeldBytes = 4 * 1024;
  if (scratch->held.capacity() > kKeepHeldBytes) std::string().swap(scratch->held);
}

bool UpstreamExchange::client_may_go_on() const {
  return req_.keep_alive && !ctx_.draining && !answered_mid_body_;
}

// An event stream may last minutes: what it will not need while it waits for its events is
// freed (each is made again by the request that needs it next). Nothing reads the client's
// connection meanwhile, so its empty read buffer's room goes (the session takes it back before
// the next request), and the request head was sent (a failover attempt writes its own).
void UpstreamExchange::free_stream_idle_room() {
  if (buffers_.client_input && buffers_.client_input->size() == 0) buffers_.client_input->shrink_to_fit();
  std::string().swap(buffers_.request_head);
}

// Once the client has a stream's head, no attempt follows: none of the request's texts (that
// head, the client's head and fields for the backend, the body, the prompt, and its copy a
// target's overrides edited) is needed again by this request, nor the backend's head, which was
// rewritten for the client. (The request was sent whole before its answer was read; what routing
// keeps of the body, the model, is viewed in the request's record; the answer's status was
// copied.) Each is made again by the next message that needs it.
void UpstreamExchange::free_sent_texts(UpstreamConnection& conn) {
  buffers_.release_large(0);
  conn.head.fields.release();
}

// After a whole body: back to the pool when the backend keeps the connection and nothing
// follows the body, else closed (bytes after the body, or the server said close: never reuse).
void UpstreamExchange::pool_or_close(UpstreamPtr conn, bool keep_alive) {
  if (!keep_alive || conn->buffer.size() != 0 || answered_mid_body_) {
    conn->close();
    return;
  }
  // (A stream's buffer, cut to its events, gets the room a response needs when it is next taken.)
  ctx_.pool.release(std::move(conn));
}

}  // namespace smartlb::net
