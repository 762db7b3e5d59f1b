#pragma once
// Reads an HTTP/1.1 message from a stream into an Http1Parser: the parser's I/O half.
// One coroutine loop instead of Beast's composed read operations.
#include <boost/beast/core/read_size.hpp>

#include "smartlb/http1/http1_parser.hpp"
#include "smartlb/http1/io_vocabulary.hpp"
#include "smartlb/io/beast.hpp"

namespace smartlb::http1 {

enum class ReadGoal {
  header,   // until the head is complete
  some,     // until the parser has taken some bytes (body, framing) or the message is done
  message,  // until the whole message is read
};

// Feeds the parser what `buffer` already holds. True when that settled the read: `ec` is then
// empty (the goal is reached) or the error; false when bytes must be read first. Callers try
// it before read_http when the buffer may hold what they need (a body that came with its
// head), which skips a coroutine and its frame.
bool feed_buffered(beast::flat_buffer& buffer, Http1Parser& parser, ReadGoal goal, bool& progressed,
                   error_code& ec);

// Reads from `stream` into `buffer`, feeding the parser until `goal`. Bytes past the message
// stay in `buffer` (they belong to the connection). Returns the parser's error (need_buffer
// when the response body buffer is full), or the stream's. A close before the message's end is
// beast::http::error::end_of_stream (nothing received) or partial_message, as with Beast.
template <class Stream>
Task<error_code> read_http(Stream& stream, beast::flat_buffer& buffer, Http1Parser& parser, ReadGoal goal) {
  bool progressed = false;
  for (;;) {
    error_code ec;
    if (feed_buffered(buffer, parser, goal, progressed, ec)) co_return ec;
    auto [rec, n] = co_await stream.async_read_some(buffer.prepare(beast::read_size(buffer, 65536)),
                                                    use_tuple_for<Stream>);
    if (rec == asio::error::eof) {
      parser.put_eof(ec);
      co_return ec;
    }
    if (rec) co_return rec;
    buffer.commit(n);
  }
}

}  // namespace smartlb::http1
