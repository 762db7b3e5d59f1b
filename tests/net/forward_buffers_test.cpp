// Between requests a connection keeps the room typical requests need in its buffers, not a
// long prompt's: each text larger than the kept size is freed, a smaller one keeps its room;
// with nothing kept (a committed event stream), every one is freed.
#include <gtest/gtest.h>

#include <string>

#include "smartlb/net/forward.hpp"

namespace smartlb::net {
namespace forward_buffers_test {  // named, not anonymous: tests/CMakeLists.txt

TEST(ForwardBuffers, ALargeRequestsRoomIsFreedAndATypicalOneIsKept) {
  std::string client_body(64 * 1024, 'x');  // the session's: a long prompt
  http1::HeaderList client_fields;          // ... and its head's fields
  const std::string_view text = client_fields.take_text(std::string(300, 'x'));
  client_fields.add_in_text(beast::http::field::unknown, text.substr(0, 1), text.substr(1, 1));
  ForwardBuffers b;
  b.client_body = &client_body;
  b.client_fields = &client_fields;
  b.request_head.assign(64 * 1024, 'x');  // a long prompt's body went inline
  b.edited_body.assign(64 * 1024, 'x');
  b.passed_fields.assign(500, 'x');
  b.response_head.assign(300, 'x');
  b.request_head.clear();
  b.edited_body.clear();
  b.passed_fields.clear();
  b.response_head.clear();

  b.release_large(8 * 1024);

  EXPECT_LE(b.request_head.capacity(), 8u * 1024);
  EXPECT_LE(b.edited_body.capacity(), 8u * 1024);
  EXPECT_LE(client_body.capacity(), 8u * 1024);
  EXPECT_GE(b.passed_fields.capacity(), 500u) << "reused by the next request";
  EXPECT_GE(b.response_head.capacity(), 300u);
  EXPECT_GE(client_fields.capacity(), 300u);

  b.release_large(0);  // an event stream whose client has its head: nothing is needed again
  EXPECT_LT(b.passed_fields.capacity(), 500u);
  EXPECT_LT(b.response_head.capacity(), 300u);
  EXPECT_EQ(client_fields.capacity(), 0u);
  EXPECT_EQ(client_fields.size(), 0u);
}

}  // namespace forward_buffers_test
}  // namespace smartlb::net
