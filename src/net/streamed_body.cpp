// A streamed request body (include/smartlb/net/streamed_body.hpp).
#include "smartlb/net/streamed_body.hpp"

#include <array>

#include "smartlb/http1/wire_format.hpp"

namespace smartlb::net {
namespace {

// Each read from the client takes at most this much: the buffer an upload holds.
constexpr std::size_t kReadBytes = 64 * 1024;

// Writes one run of body bytes to the backend, as a chunk when the body goes chunked.
Task<bool> write_run(UpstreamConnection& conn, std::string_view run, bool chunked,
                     std::chrono::seconds timeout) {
  if (run.empty()) co_return true;
  static constexpr std::string_view kCrlf = "\r\n";
  char size_line[20];
  // Named, not a temporary in the co_await: GCC 12 cannot put a braced array in the frame.
  const std::array<asio::const_buffer, 3> chunk{
      asio::buffer(size_line, chunked ? http1::chunk_size_line(run.size(), size_line) : 0),
      asio::buffer(run.data(), run.size()), asio::buffer(kCrlf.data(), chunked ? kCrlf.size() : 0)};
  const error_code ec = co_await write_upstream(conn, chunk, timeout);
  co_return !ec;
}

}  // namespace

Task<error_code> write_upstream(UpstreamConnection& conn, const std::array<asio::const_buffer, 3>& buffers,
                                std::chrono::seconds timeout) {
  conn.tcp().expires_after(timeout);
  // (No conditional expression around the co_await: GCC 12 miscompiles one.)
  error_code ec;
  if (UpstreamConnection::Tls* const tls = conn.tls())
    ec = std::get<0>(co_await asio::async_write(*tls, buffers, use_tuple));
  else
    ec = std::get<0>(co_await asio::async_write(conn.tcp(), buffers, use_tuple));
  co_return conn.tcp().done(ec);
}

void StreamedBody::append_framing(std::string& head) const {
  if (length) {
    head.append("Content-Length: ");
    http1::append_decimal(head, *length);
    head.append("\r\n");
  } else {
    head.append("Transfer-Encoding: chunked\r\n");
  }
}

Task<StreamEnd> stream_body(StreamedBody& body, UpstreamConnection& conn,
                            std::chrono::seconds upstream_timeout) {
  const bool chunked = !body.length;
  body.started = true;
  if (!co_await write_run(conn, body.prefix, chunked, upstream_timeout)) co_return StreamEnd::UpstreamFailed;
  body.prefix.clear();
  body.prefix.shrink_to_fit();
  http1::RequestReader& parser = body.parser;
  parser.body_views(true);
  beast::flat_buffer& buffer = body.buffer;
  while (!parser.is_done()) {
    // What the buffer holds first: each put hands over at most one run of body bytes, a view
    // into the buffer that stays valid until its next prepare().
    while (buffer.size() > 0 && !parser.is_done()) {
      error_code ec;
      const std::size_t used = parser.put(buffer.data(), ec);
      const std::string_view run = parser.take_body_view();
      if (ec && ec != beast::http::error::need_more)
        co_return ec == beast::http::error::body_limit ? StreamEnd::TooLarge : StreamEnd::Malformed;
      if (!co_await write_run(conn, run, chunked, upstream_timeout)) co_return StreamEnd::UpstreamFailed;
      buffer.consume(used);
      if (ec == beast::http::error::need_more || used == 0) break;  // the rest needs more bytes
    }
    if (parser.is_done()) break;
    body.client.expires_after(body.pause_timeout);
    // A full 64 KiB every time (read_size would keep to the capacity the buffer had, 2 KiB
    // for a connection that only carried small requests: 30 times the system calls).
    auto [rec, n] = co_await body.client.async_read_some(buffer.prepare(kReadBytes), use_tuple);
    rec = body.client.done(rec);
    if (rec) co_return StreamEnd::ClientLeft;  // eof included: the body is not whole
    buffer.commit(n);
  }
  if (chunked) {
    static constexpr std::string_view kLastChunk = "0\r\n\r\n";
    const std::array<asio::const_buffer, 3> last{asio::buffer(kLastChunk.data(), kLastChunk.size())};
    if (co_await write_upstream(conn, last, upstream_timeout)) co_return StreamEnd::UpstreamFailed;
  }
  // The connection goes on with small requests: its buffer need not stay upload-sized.
  buffer.shrink_to_fit();
  co_return StreamEnd::Sent;
}

}  // namespace smartlb::net
