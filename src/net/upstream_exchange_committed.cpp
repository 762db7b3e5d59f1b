// An event stream committed to the client (its head went out: it can no longer fail over), after
// its relay was handed off (include/smartlb/net/upstream_exchange.hpp): its waits for the next
// event, which hold no buffer and no coroutine frame, and the rounds after each wake, without a
// coroutine while the client's socket takes each write whole. The rounds' steps and their
// coroutine are upstream_exchange_relay.cpp.
#include "smartlb/http1/http_io.hpp"
#include "smartlb/io/draining_read.hpp"
#include "smartlb/io/send_now.hpp"
#include "smartlb/net/event_stream_buffer.hpp"
#include "smartlb/net/upstream_exchange.hpp"

namespace smartlb::net {
// A bufferless wait found the socket readable (or failed: `ec`): its bytes (or its close) read at
// once with one recv() (no second operation) into a room as large as the buffer had, and fed to
// the parser. True when that settles the read (`ec` says how); false when there was nothing after
// all, or nothing the parser could use yet.
bool UpstreamExchange::read_after_wait(UpstreamConnection& c, http1::ResponseReader& p, error_code& ec) {
  if (ec) return true;
  c.buffer.commit(c.read_now(c.buffer.prepare(c.buffer.capacity()), ec));
  if (ec == asio::error::eof) {
    p.put_eof(ec);  // the parser says whether the body was whole
    return true;
  }
  if (ec && ec != asio::error::would_block) return true;
  ec = {};
  bool progressed = false;
  return c.buffer.size() != 0 && feed_buffered(c.buffer, p, http1::ReadGoal::some, progressed, ec);
}

// An event stream on a connection known to be quiet (nothing reached it since its last read
// emptied it, its close included: io/draining_read; and no TLS record taken off the socket, whole
// or in part) may wait for its next bytes with its buffer's storage given back and without the
// recv() that would find EAGAIN.
bool UpstreamExchange::may_wait_bufferless(UpstreamConnection& c) {
  return c.buffer.size() == 0 && c.known_quiet();
}

Task<Relayed> UpstreamExchange::relay_committed() { return relay_rounds(Rounds::Committed); }

// A committed stream waits for its next event holding neither a buffer nor a coroutine frame: a
// wait on the socket whose handler (`wake`: the one that owns the client's connection) starts the
// next rounds. The client's watch and the idle timeout hold meanwhile, as for a read.
void UpstreamExchange::await_committed(StreamWaker wake) {
  BodyRelay& r = *body_relay_;
  UpstreamConnection& c = *r.conn;
  r.watch.arm(client_.socket(), c);  // a client that leaves meanwhile closes `c`: the wait ends
  c.tcp().expires_after(ctx_.cfg.http_timeout);
  fit_to_events(c.buffer, r.buffer_fitted);
  r.room = ctx_.spare_event_rooms.give(c.buffer);
  r.waited = true;
  c.tcp().async_wait_readable([&r, wake = std::move(wake)](error_code ec) mutable {
    r.woke = ec;
    std::move(wake)();
  });
}

bool UpstreamExchange::read_after_wake(BodyRelay& r, error_code& ec) {
  r.waited = false;
  ctx_.spare_event_rooms.take(r.conn->buffer, r.room);
  ec = r.woke;
  const bool settled = read_after_wait(*r.conn, *parser_, ec);
  ec = r.conn->tcp().done(ec);
  return settled;
}

// The rounds of relay_rounds(Committed), each written with one send() that does not wait. Most
// wakes bring an event the client's socket takes whole: then no coroutine starts, and the stream
// waits again (a coroutine and its frames per event cost about 2,600 instructions, 60 % more: the
// SSE line of docs/benchmarks.md §2). What the socket does not take, or a read that must wait
// with a buffer, goes on in relay_committed(), where the same round's steps write and read as a
// coroutine.
std::optional<Relayed> UpstreamExchange::relay_committed_now() {
  http1::ResponseReader& p = *parser_;
  BodyRelay& r = *body_relay_;
  const auto ends = [this](Relayed end) {
    body_relay_.reset();
    return end;
  };
  for (;;) {
    error_code ec;
    bool progressed = false;
    if (r.waited) {
      if (!read_after_wake(r, ec)) continue;
    } else if (!p.is_done() && !feed_buffered(r.conn->buffer, p, http1::ReadGoal::some, progressed, ec)) {
      if (!ec && may_wait_bufferless(*r.conn)) return Relayed{RelayEnd::HandedOff};
      return std::nullopt;  // a read that waits with its buffer: relay_committed()'s
    }
    RelayRoundLease lease(ctx_.spare_rounds);
    RelayRound& round = *lease.get();
    if (!gather_round(r, round, {}, ec)) return ends(read_failed(r, ec));
    if (round.k > 0) {
      const std::span<const asio::const_buffer> out(round.out.data(), round.k);
      const std::size_t sent = io::send_now(client_.socket(), out, ec);
      if (ec && ec != asio::error::would_block) return ends(client_left(*r.conn));
      if (sent < asio::buffer_size(out)) io::append_unsent(out, sent, r.unsent);
    }
    const bool ended =
        round_written(r, round);  // (before the rest went out: the usage is read from the views)
    if (!r.unsent.empty()) return std::nullopt;  // relay_committed() writes the rest, then ends or goes on
    if (ended) return ends(body_ended(r));
  }
}

}  // namespace smartlb::net
