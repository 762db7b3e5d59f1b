// The flat message heads the request path parses into (Beast's parser, our storage).
#include <gtest/gtest.h>

#include "smartlb/http1/http1_parser.hpp"
#include "smartlb/http1/http_io.hpp"

namespace smartlb::http1 {
namespace http_io_test {  // named, not anonymous: tests/CMakeLists.txt

// Feeds `text` to a parser in one piece, as a read that got everything would.
template <class Parser>
error_code put_all(Parser& p, std::string_view text) {
  error_code ec;
  std::size_t used = 0;
  while (used < text.size() && !p.is_done()) {
    const std::size_t n = p.put(asio::buffer(text.data() + used, text.size() - used), ec);
    used += n;
    if (ec) return ec;
    if (n == 0) break;
  }
  return ec;
}

TEST(HeaderList, LooksUpByIdOrByNameWhateverTheCase) {
  HeaderList f;
  f.add(beast::http::field::content_type, "Content-Type", "application/json");
  f.add(beast::http::field::unknown, "API-Key", "k1");
  f.add(beast::http::field::unknown, "api-key", "k2");
  EXPECT_EQ(f.size(), 3u);
  EXPECT_EQ(f.get(beast::http::field::content_type), "application/json");
  EXPECT_EQ(f.get("content-type"), "application/json");
  EXPECT_EQ(f.get("api-key"), "k1");  // the first of repeated fields
  EXPECT_EQ(f.get("x-missing"), "");
  EXPECT_TRUE(f.contains(beast::http::field::content_type));
  EXPECT_FALSE(f.contains(beast::http::field::host));
  EXPECT_EQ(f[2].name, "api-key");
  EXPECT_EQ(f[2].value, "k2");
  f.clear();
  EXPECT_EQ(f.size(), 0u);
  EXPECT_EQ(f.get("api-key"), "");
}

TEST(HeaderList, ViewsStayRightWhileTheTextGrows) {
  HeaderList f;
  for (int i = 0; i < 200; ++i)
    f.add(beast::http::field::unknown, "x-field-" + std::to_string(i),
          std::string(50, static_cast<char>('a' + i % 26)));
  EXPECT_EQ(f[0].name, "x-field-0");
  EXPECT_EQ(f[0].value, std::string(50, 'a'));
  EXPECT_EQ(f.get("X-FIELD-199"), std::string(50, static_cast<char>('a' + 199 % 26)));
}

TEST(RequestReader, FillsTheHeadAndDecodesAChunkedBody) {
  RequestHead head;
  RequestReader p(head);
  const auto ec = put_all(p,
                          "POST /openai/deployments/d/chat/completions?api-version=1 HTTP/1.1\r\n"
                          "Host: x\r\nTransfer-Encoding: chunked\r\napi-key: secret\r\n\r\n"
                          "5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n");
  ASSERT_FALSE(ec) << ec.message();
  ASSERT_TRUE(p.is_done());
  EXPECT_EQ(head.method, beast::http::verb::post);
  EXPECT_EQ(head.method_text, "POST");
  EXPECT_EQ(head.target, "/openai/deployments/d/chat/completions?api-version=1");
  EXPECT_EQ(head.version, 11u);
  EXPECT_TRUE(head.keep_alive);
  ASSERT_EQ(head.fields.size(), 3u);
  EXPECT_EQ(head.fields[0].id, beast::http::field::host);
  EXPECT_EQ(head.fields.get("API-KEY"), "secret");
  EXPECT_EQ(head.body, "hello world");
}

TEST(RequestReader, ANewRequestOnTheSameHeadForgetsTheLastOne) {
  RequestHead head;
  {
    RequestReader p(head);
    ASSERT_FALSE(put_all(p, "POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nx-one: 1\r\n\r\nabc"));
  }
  RequestReader p(head);
  ASSERT_FALSE(put_all(p, "GET /b HTTP/1.0\r\nHost: y\r\n\r\n"));
  EXPECT_EQ(head.target, "/b");
  EXPECT_EQ(head.version, 10u);
  EXPECT_FALSE(head.keep_alive);  // HTTP/1.0 without keep-alive
  EXPECT_EQ(head.fields.size(), 1u);
  EXPECT_EQ(head.fields.get("x-one"), "");
  EXPECT_EQ(head.body, "");
}

TEST(RequestReader, TheBodyLimitStillApplies) {
  RequestHead head;
  RequestReader p(head);
  p.body_limit(4);
  EXPECT_EQ(put_all(p, "POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello"),
            beast::http::error::body_limit);
}

TEST(ResponseReader, ABodyLargerThanTheBufferWaitsForTheNextOne) {
  ResponseHead head;
  ResponseReader p(head);
  const std::string_view text =
      "HTTP/1.1 429 Slow Down\r\nRetry-After: 3\r\nContent-Length: 10\r\n\r\n0123456789";
  error_code ec;
  std::size_t used = p.put(asio::buffer(text.data(), text.size()), ec);  // the head
  ASSERT_FALSE(ec);
  EXPECT_EQ(head.status, 429u);
  EXPECT_EQ(head.reason, "Slow Down");
  EXPECT_EQ(head.fields.get(beast::http::field::retry_after), "3");

  char buf[4];
  p.body_buffer(buf, sizeof buf);
  used += p.put(asio::buffer(text.data() + used, text.size() - used), ec);
  EXPECT_EQ(ec, beast::http::error::need_buffer);
  EXPECT_EQ(std::string_view(buf, 4), "0123");
  EXPECT_EQ(p.body_buffer_left(), 0u);

  char rest[16];
  p.body_buffer(rest, sizeof rest);
  used += p.put(asio::buffer(text.data() + used, text.size() - used), ec);
  EXPECT_FALSE(ec);
  EXPECT_TRUE(p.is_done());
  EXPECT_EQ(std::string_view(rest, sizeof rest - p.body_buffer_left()), "456789");
  EXPECT_EQ(used, text.size());
}

// View mode: the body is handed over where it lies, one run per put, so the relay can write it
// from the connection's buffer without copying it.
TEST(ResponseReader, ViewModeHandsOverTheBodyInPlaceOneRunPerPut) {
  for (const std::string_view text :
       {std::string_view("HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\nhello world"),
        std::string_view(
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"),
        std::string_view("HTTP/1.1 200 OK\r\n\r\nhello world")}) {
    ResponseHead head;
    ResponseReader p(head);
    p.body_views(true);
    std::string body;
    std::size_t used = 0, puts = 0;
    error_code ec;
    while (!ec && !p.is_done() && used < text.size()) {
      used += p.put(text.data() + used, text.size() - used, ec);
      const std::string_view v = p.take_body_view();
      if (!v.empty()) {
        EXPECT_GE(v.data(), text.data());  // in the bytes given, not a copy
        EXPECT_LE(v.data() + v.size(), text.data() + text.size());
        body.append(v);
      }
      ++puts;
    }
    ASSERT_FALSE(ec) << ec.message();
    if (p.need_eof()) p.put_eof(ec);
    EXPECT_FALSE(ec);
    EXPECT_TRUE(p.is_done()) << text;
    EXPECT_EQ(body, "hello world") << text;
    EXPECT_EQ(used, text.size());
    if (p.chunked()) {
      EXPECT_GE(puts, 4u) << "head, then one put per chunk at least";
    }
  }
}

// The relay's "some" read: a chunk whose data is buffered is progress to write out now, even
// though the parser needs more bytes to finish the chunk's CRLF (no read first).
TEST(FeedBuffered, PartOfAChunkIsEnoughForSome) {
  ResponseHead head;
  ResponseReader p(head);
  beast::flat_buffer buffer;
  const std::string_view text = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n8\r\ndata: {}\r";
  asio::buffer_copy(buffer.prepare(text.size()), asio::buffer(text.data(), text.size()));
  buffer.commit(text.size());
  bool progressed = false;
  error_code ec;
  ASSERT_TRUE(feed_buffered(buffer, p, ReadGoal::header, progressed, ec));
  ASSERT_FALSE(ec);
  char out[64];
  p.body_buffer(out, sizeof out);
  progressed = false;
  EXPECT_TRUE(feed_buffered(buffer, p, ReadGoal::some, progressed, ec));
  EXPECT_FALSE(ec);
  EXPECT_EQ(std::string_view(out, sizeof out - p.body_buffer_left()), "data: {}");
  EXPECT_EQ(buffer.size(), 1u);  // the CR, waiting for its LF
  // Only a part of the framing buffered, and the message not done: a read is needed.
  progressed = false;
  EXPECT_FALSE(feed_buffered(buffer, p, ReadGoal::some, progressed, ec));
}

}  // namespace http_io_test
}  // namespace smartlb::http1
