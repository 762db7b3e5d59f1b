#include "smartlb/http1/http_io.hpp"

namespace smartlb::http1 {
using namespace smartlb::io;  // the Asio/Beast vocabulary (io/beast.hpp)

bool feed_buffered(beast::flat_buffer& buffer, Http1Parser& parser, ReadGoal goal, bool& progressed,
                   error_code& ec) {
  const auto reached = [&] {
    switch (goal) {
      case ReadGoal::header:
        return parser.is_header_done();
      case ReadGoal::some:
        return progressed || parser.is_done();
      case ReadGoal::message:
        return parser.is_done();
    }
    return true;
  };
  ec = {};
  while (buffer.size() > 0) {
    const std::size_t n = parser.put(buffer.data(), ec);
    buffer.consume(n);
    progressed = progressed || n > 0;
    if (ec == beast::http::error::need_more) {
      ec = {};
      break;  // what was parsed may still be the goal (a chunk's first bytes)
    }
    if (ec || reached()) return true;
  }
  return reached();
}

}  // namespace smartlb::http1
