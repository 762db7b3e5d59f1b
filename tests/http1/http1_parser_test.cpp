// Http1Parser without I/O: bytes in through put(), then the head, the body, the error and the
// parser's state are checked. The rules come from the header comment of net/http1_parser.hpp.
#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <type_traits>

#include "smartlb/http1/http1_parser.hpp"

namespace smartlb::http1 {
namespace http1_parser_test {  // named, not anonymous: tests/CMakeLists.txt

using namespace std::string_literals;

// Feeds `text` to a parser as one read that got everything would; `used` gets the bytes taken.
template <class Parser>
error_code put_all(Parser& p, std::string_view text, std::size_t* used = nullptr) {
  error_code ec;
  std::size_t total = 0;
  while (total < text.size() && !p.is_done()) {
    const std::size_t n = p.put(text.data() + total, text.size() - total, ec);
    total += n;
    if (ec || n == 0) break;
  }
  if (used) *used = total;
  return ec;
}

// A connection's read buffer: `more` arrives, the parser takes what it can, and what it did
// not take waits in `pending` for the next read (as read_http does with its flat_buffer).
template <class Parser>
error_code feed(Parser& p, std::string& pending, std::string_view more) {
  pending.append(more);
  for (;;) {
    error_code ec;
    const std::size_t n = p.put(pending.data(), pending.size(), ec);
    pending.erase(0, n);
    if (ec == beast::http::error::need_more) return {};
    if (ec || p.is_done() || n == 0) return ec;
  }
}

// A malformed message: an error that is neither "more bytes" nor "another buffer".
bool failed(const error_code& ec) {
  return ec && ec != beast::http::error::need_more && ec != beast::http::error::need_buffer;
}

// The error a whole request gets (empty when it parses to the end).
error_code request_error(std::string_view text) {
  RequestHead head;
  RequestReader p(head);
  return put_all(p, text);
}

error_code response_error(std::string_view text) {
  ResponseHead head;
  ResponseReader p(head);
  char buf[256];
  p.body_buffer(buf, sizeof buf);
  return put_all(p, text);
}

std::string received(const char* buf, std::size_t size, const ResponseReader& p) {
  return std::string(buf, size - p.body_buffer_left());
}

// ---- split reads ------------------------------------------------------------------------------

constexpr std::string_view kChunkedRequest =
    "POST /openai/deployments/d/chat/completions?api-version=1 HTTP/1.1\r\n"
    "Host: example\r\nTransfer-Encoding: chunked\r\napi-key: secret\r\n\r\n"
    "5;ext=1\r\nhello\r\nA\r\n world 123\r\n0\r\nX-Trailer: t\r\n\r\n";
const std::size_t kChunkedRequestHead =
    kChunkedRequest.find("\r\n\r\n") + 4;  // the head, blank line included

void expect_chunked_request(const RequestHead& head) {
  EXPECT_EQ(head.method, beast::http::verb::post);
  EXPECT_EQ(head.method_text, "POST");
  EXPECT_EQ(head.target, "/openai/deployments/d/chat/completions?api-version=1");
  EXPECT_EQ(head.version, 11u);
  EXPECT_TRUE(head.keep_alive);
  ASSERT_EQ(head.fields.size(), 3u);
  EXPECT_EQ(head.fields[0].name, "Host");
  EXPECT_EQ(head.fields[0].value, "example");
  EXPECT_EQ(head.fields[1].id, beast::http::field::transfer_encoding);
  EXPECT_EQ(head.fields[2].name, "api-key");
  EXPECT_EQ(head.fields[2].value, "secret");
  EXPECT_EQ(head.body, "hello world 123");
}

TEST(Http1Parser, ARequestSplitAtAnyPointParsesTheSame) {
  ASSERT_EQ(kChunkedRequest.substr(kChunkedRequestHead - 4, 4), "\r\n\r\n");
  for (std::size_t k = 0; k <= kChunkedRequest.size(); ++k) {
    SCOPED_TRACE("split at " + std::to_string(k));
    RequestHead head;
    RequestReader p(head);
    std::string pending;
    ASSERT_FALSE(feed(p, pending, kChunkedRequest.substr(0, k)));
    EXPECT_EQ(p.is_header_done(), k >= kChunkedRequestHead);
    ASSERT_FALSE(feed(p, pending, kChunkedRequest.substr(k)));
    ASSERT_TRUE(p.is_done());
    EXPECT_TRUE(pending.empty());
    EXPECT_TRUE(p.chunked());
    expect_chunked_request(head);
  }
}

TEST(Http1Parser, ARequestFedByteByByteParsesTheSame) {
  RequestHead head;
  RequestReader p(head);
  std::string pending;
  for (std::size_t i = 0; i < kChunkedRequest.size(); ++i) {
    SCOPED_TRACE("byte " + std::to_string(i));
    ASSERT_FALSE(p.is_done());
    ASSERT_FALSE(feed(p, pending, kChunkedRequest.substr(i, 1)));
    EXPECT_EQ(p.is_header_done(), i + 1 >= kChunkedRequestHead);
  }
  ASSERT_TRUE(p.is_done());
  EXPECT_TRUE(pending.empty());
  expect_chunked_request(head);
}

TEST(Http1Parser, AResponseSplitAtAnyPointParsesTheSame) {
  const std::string body = "data: {\"id\":1,\"choices\":[]}\n\n";  // 29 bytes
  const std::string chunked =
      "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
      "6\r\n" +
      body.substr(0, 6) + "\r\n17\r\n" + body.substr(6) + "\r\n0\r\n\r\n";
  const std::string length = "HTTP/1.1 200 OK\r\nContent-Length: 29\r\n\r\n" + body;
  ASSERT_EQ(body.size(), 29u);
  for (const std::string_view text : {std::string_view(chunked), std::string_view(length)}) {
    for (std::size_t k = 0; k <= text.size(); ++k) {
      SCOPED_TRACE(std::string(text.substr(0, 40)) + " split at " + std::to_string(k));
      ResponseHead head;
      ResponseReader p(head);
      char buf[128];
      p.body_buffer(buf, sizeof buf);
      std::string pending;
      ASSERT_FALSE(feed(p, pending, text.substr(0, k)));
      ASSERT_FALSE(feed(p, pending, text.substr(k)));
      ASSERT_TRUE(p.is_done());
      EXPECT_TRUE(pending.empty());
      EXPECT_EQ(head.status, 200u);
      EXPECT_EQ(head.reason, "OK");
      EXPECT_TRUE(p.keep_alive());
      EXPECT_EQ(received(buf, sizeof buf, p), body);
    }
  }
}

TEST(Http1Parser, AResponseFedByteByByteParsesTheSame) {
  const std::string_view text =
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n4;x=y\r\ndefg\r\n0\r\n\r\n";
  ResponseHead head;
  ResponseReader p(head);
  char buf[64];
  p.body_buffer(buf, sizeof buf);
  std::string pending;
  for (std::size_t i = 0; i < text.size(); ++i) {
    SCOPED_TRACE("byte " + std::to_string(i));
    ASSERT_FALSE(p.is_done());
    ASSERT_FALSE(feed(p, pending, text.substr(i, 1)));
  }
  ASSERT_TRUE(p.is_done());
  EXPECT_TRUE(pending.empty());
  EXPECT_EQ(head.status, 200u);
  EXPECT_EQ(received(buf, sizeof buf, p), "abcdefg");
}

// ---- start and end of the stream --------------------------------------------------------------

TEST(Http1Parser, LeadingCrlfsBeforeARequestLineAreSkipped) {
  RequestHead head;
  RequestReader p(head);
  EXPECT_FALSE(put_all(p, "\r\n\r\nGET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n"));
  ASSERT_TRUE(p.is_done());
  EXPECT_EQ(head.method, beast::http::verb::get);
  EXPECT_EQ(head.target, "/v1/models");
  EXPECT_EQ(head.fields.get(beast::http::field::host), "x");
}

TEST(Http1Parser, CrlfsThenEndOfStreamIsEndOfStream) {
  RequestHead head;
  RequestReader p(head);
  std::string pending;
  EXPECT_FALSE(feed(p, pending, "\r\n\r\n"));
  EXPECT_TRUE(pending.empty());  // the empty lines are consumed
  EXPECT_FALSE(p.got_some());    // ... but are not the start of a request
  error_code ec;
  p.put_eof(ec);
  EXPECT_EQ(ec, beast::http::error::end_of_stream);
}

TEST(Http1Parser, EndOfStreamInTheMiddleOfAHeadIsPartialMessage) {
  RequestHead head;
  RequestReader p(head);
  EXPECT_EQ(put_all(p, "GET / HTTP/1.1\r\nHost: x\r\n"), beast::http::error::need_more);
  EXPECT_TRUE(p.got_some());
  error_code ec;
  p.put_eof(ec);
  EXPECT_EQ(ec, beast::http::error::partial_message);
  EXPECT_FALSE(p.is_done());
}

TEST(Http1Parser, EndOfStreamInTheMiddleOfALengthBodyIsPartialMessage) {
  RequestHead head;
  RequestReader p(head);
  EXPECT_FALSE(put_all(p, "POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\nab"));
  EXPECT_FALSE(p.is_done());
  error_code ec;
  p.put_eof(ec);
  EXPECT_EQ(ec, beast::http::error::partial_message);
}

TEST(Http1Parser, EndOfStreamEndsAResponseWithoutLength) {
  ResponseHead head;
  ResponseReader p(head);
  char buf[64];
  p.body_buffer(buf, sizeof buf);
  EXPECT_FALSE(put_all(p, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nsome body"));
  EXPECT_TRUE(p.is_header_done());
  EXPECT_TRUE(p.need_eof());
  EXPECT_FALSE(p.keep_alive());
  EXPECT_FALSE(p.is_done());
  EXPECT_FALSE(p.content_length());
  error_code ec;
  p.put_eof(ec);
  EXPECT_FALSE(ec) << ec.message();
  EXPECT_TRUE(p.is_done());
  EXPECT_FALSE(p.need_eof());
  EXPECT_FALSE(p.keep_alive());
  EXPECT_EQ(received(buf, sizeof buf, p), "some body");
}

// ---- request line -----------------------------------------------------------------------------

TEST(Http1Parser, ABadMethodIsRejected) {
  for (const std::string_view text :
       {" GET / HTTP/1.1\r\n\r\n", "G@T / HTTP/1.1\r\n\r\n", "GE(T) / HTTP/1.1\r\n\r\n",
        "\tGET / HTTP/1.1\r\n\r\n", "GET\t/ HTTP/1.1\r\n\r\n", "/ HTTP/1.1\r\n\r\n"}) {
    SCOPED_TRACE(testing::PrintToString(text));
    EXPECT_EQ(request_error(text), beast::http::error::bad_method);
  }
}

TEST(Http1Parser, AMissingTargetIsRejected) {
  for (const std::string_view text : {"GET HTTP/1.1\r\n\r\n", "GET  HTTP/1.1\r\n\r\n",
                                      "GET  / HTTP/1.1\r\n\r\n", "GET /\r\n\r\n", "GET \r\n\r\n"}) {
    SCOPED_TRACE(testing::PrintToString(text));
    EXPECT_EQ(request_error(text), beast::http::error::bad_target);
  }
}

TEST(Http1Parser, ABadVersionIsRejected) {
  for (const std::string_view text :
       {"GET / HTTP/1.x\r\n\r\n", "GET / HTTP/11\r\n\r\n", "GET / HTTP/1.10\r\n\r\n",
        "GET / http/1.1\r\n\r\n", "GET / HTTP/1.1 \r\n\r\n", "GET / HTTPS/1.1\r\n\r\n",
        "GET / HTTP/1,1\r\n\r\n", "GET / \r\n\r\n"}) {
    SCOPED_TRACE(testing::PrintToString(text));
    EXPECT_EQ(request_error(text), beast::http::error::bad_version);
  }
}

TEST(Http1Parser, ABareLfLineEndingIsAnError) {
  for (const std::string_view text :
       {"GET / HTTP/1.1\nHost: x\r\n\r\n", "GET / HTTP/1.1\r\nHost: x\nX-A: 1\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: x\r\n\nX-A: 1\r\n\r\n", "\nGET / HTTP/1.1\r\nHost: x\r\n\r\n"}) {
    SCOPED_TRACE(testing::PrintToString(text));
    EXPECT_TRUE(failed(request_error(text))) << request_error(text).message();
  }
}

TEST(Http1Parser, ABareCrInsideALineIsAnError) {
  for (const std::string_view text :
       {"GET /a\rb HTTP/1.1\r\nHost: x\r\n\r\n", "GET / HTTP/1.1\r\nHost: a\rb\r\n\r\n",
        "GET / HTTP/1.1\r\nHo\rst: x\r\n\r\n", "GET / HTTP/1.1\r\r\nHost: x\r\n\r\n"}) {
    SCOPED_TRACE(testing::PrintToString(text));
    EXPECT_TRUE(failed(request_error(text))) << request_error(text).message();
  }
}

// ---- field lines ------------------------------------------------------------------------------

TEST(Http1Parser, AnObsFoldIsBadField) {
  for (const std::string_view text :
       {"GET / HTTP/1.1\r\nX-A: 1\r\n 2\r\n\r\n", "GET / HTTP/1.1\r\nX-A: 1\r\n\t2\r\n\r\n",
        "GET / HTTP/1.1\r\n Host: x\r\n\r\n", "GET / HTTP/1.1\r\nX-A: 1\r\n X-B: 2\r\n\r\n"}) {
    SCOPED_TRACE(testing::PrintToString(text));
    EXPECT_EQ(request_error(text), beast::http::error::bad_field);
  }
}

TEST(Http1Parser, ASpaceBeforeTheColonIsBadField) {
  EXPECT_EQ(request_error("GET / HTTP/1.1\r\nHost : x\r\n\r\n"), beast::http::error::bad_field);
  EXPECT_EQ(request_error("GET / HTTP/1.1\r\nContent-Length\t: 5\r\n\r\nhello"),
            beast::http::error::bad_field);
  EXPECT_EQ(request_error("GET / HTTP/1.1\r\n: x\r\n\r\n"), beast::http::error::bad_field);       // no name
  EXPECT_EQ(request_error("GET / HTTP/1.1\r\nno colon\r\n\r\n"), beast::http::error::bad_field);  // no colon
  EXPECT_EQ(response_error("HTTP/1.1 200 OK\r\nContent-Length : 0\r\n\r\n"), beast::http::error::bad_field);
}

TEST(Http1Parser, AControlCharacterInAValueIsBadValue) {
  for (const std::string& value : {"a\x01z"s, "a\x7fz"s, "a\0z"s, "\x1f"s, "a\x0bz"s}) {
    SCOPED_TRACE(testing::PrintToString(value));
    EXPECT_EQ(request_error("GET / HTTP/1.1\r\nX-A: " + value + "\r\n\r\n"), beast::http::error::bad_value);
    EXPECT_EQ(response_error("HTTP/1.1 204 No Content\r\nX-A: " + value + "\r\n\r\n"),
              beast::http::error::bad_value);
  }
}

TEST(Http1Parser, ObsTextInAValueIsAccepted) {
  RequestHead head;
  RequestReader p(head);
  ASSERT_FALSE(put_all(p, "GET / HTTP/1.1\r\nX-Name: caf\xc3\xa9 \x80\xff\r\nX-Tab: a\tb\r\n\r\n"));
  ASSERT_TRUE(p.is_done());
  EXPECT_EQ(head.fields.get("x-name"), "caf\xc3\xa9 \x80\xff");
  EXPECT_EQ(head.fields.get("x-tab"), "a\tb");
}

TEST(Http1Parser, ValuesAreTrimmedOfSpacesAndTabsOnBothSides) {
  RequestHead head;
  RequestReader p(head);
  ASSERT_FALSE(put_all(p,
                       "GET / HTTP/1.1\r\nX-A:  \t a  b \t \r\nX-B:c\r\nX-C:\td\t\r\n"
                       "Content-Length:  0 \t\r\n\r\n"));
  ASSERT_TRUE(p.is_done());
  EXPECT_EQ(head.fields.get("x-a"), "a  b");
  EXPECT_EQ(head.fields.get("x-b"), "c");
  EXPECT_EQ(head.fields.get("x-c"), "d");
  EXPECT_EQ(p.content_length(), 0u);
}

TEST(Http1Parser, EmptyValuesAreAllowed) {
  RequestHead head;
  RequestReader p(head);
  ASSERT_FALSE(put_all(p, "GET / HTTP/1.1\r\nX-A:\r\nX-B:   \t\r\nHost: x\r\n\r\n"));
  ASSERT_TRUE(p.is_done());
  ASSERT_EQ(head.fields.size(), 3u);
  EXPECT_EQ(head.fields[0].name, "X-A");
  EXPECT_EQ(head.fields[0].value, "");
  EXPECT_EQ(head.fields[1].name, "X-B");
  EXPECT_EQ(head.fields[1].value, "");
  EXPECT_EQ(head.fields[2].value, "x");
}

// ---- Content-Length ---------------------------------------------------------------------------

TEST(Http1Parser, TwoContentLengthsAreRejected) {
  EXPECT_EQ(request_error("POST / HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\nhello"),
            beast::http::error::multiple_content_length);
  EXPECT_EQ(request_error("POST / HTTP/1.1\r\nContent-Length: 5\r\ncontent-length: 6\r\n\r\nhello!"),
            beast::http::error::multiple_content_length);
  EXPECT_EQ(response_error("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nok"),
            beast::http::error::multiple_content_length);
}

TEST(Http1Parser, AContentLengthOtherThanDigitsIsRejected) {
  for (const std::string_view value :
       {"+5", "5 5", "0x5", "", "-1", "5,5", "5, 5", "5.0", "five", "\xd9\xa5"}) {
    SCOPED_TRACE(testing::PrintToString(value));
    EXPECT_EQ(request_error("POST / HTTP/1.1\r\nContent-Length: " + std::string(value) + "\r\n\r\nhello"),
              beast::http::error::bad_content_length);
  }
}

TEST(Http1Parser, AContentLengthThatOverflowsIsRejected) {
  for (const std::string_view value :
       {"123456789012345678901234567890", "18446744073709551616", "99999999999999999999"}) {
    SCOPED_TRACE(testing::PrintToString(value));
    EXPECT_EQ(request_error("POST / HTTP/1.1\r\nContent-Length: " + std::string(value) + "\r\n\r\nhello"),
              beast::http::error::bad_content_length);
    EXPECT_EQ(response_error("HTTP/1.1 200 OK\r\nContent-Length: " + std::string(value) + "\r\n\r\nhello"),
              beast::http::error::bad_content_length);
  }
}

TEST(Http1Parser, ContentLengthWithTransferEncodingIsAnError) {
  for (const std::string_view text :
       {"POST / HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
        "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n3\r\nabc\r\n0\r\n\r\n"}) {
    SCOPED_TRACE(testing::PrintToString(text));
    const error_code ec = text.starts_with("HTTP/") ? response_error(text) : request_error(text);
    EXPECT_TRUE(failed(ec)) << ec.message();
  }
}

TEST(Http1Parser, AnAnnouncedBodyReservesAtMostABoundedAmount) {
  // A head that claims 4 GB (the fuzzer's find, with no body limit) must not allocate it: only
  // the bytes that arrive take memory.
  RequestHead head;
  RequestReader p(head);
  const error_code ec = put_all(p, "POST / HTTP/1.1\r\nContent-Length: 4444444444\r\n\r\nab");
  EXPECT_FALSE(failed(ec)) << ec.message();
  EXPECT_FALSE(p.is_done());
  EXPECT_LE(head.body.capacity(), RequestReader::kMaxBodyReserve);
  EXPECT_EQ(head.body, "ab");

  // A body past the reserve still arrives whole.
  RequestHead big;
  RequestReader q(big);
  const std::string body(RequestReader::kMaxBodyReserve + 1000, 'x');
  const std::string message =
      "POST / HTTP/1.1\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
  EXPECT_FALSE(failed(put_all(q, message))) << "the whole message parses";
  EXPECT_TRUE(q.is_done());
  EXPECT_EQ(big.body, body);
}

TEST(Http1Parser, AContentLengthOverTheBodyLimitFailsAtTheHead) {
  RequestHead head;
  RequestReader p(head);
  p.body_limit(4);
  const std::string_view text = "POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\n";  // no body byte yet
  error_code ec;
  p.put(text.data(), text.size(), ec);
  EXPECT_EQ(ec, beast::http::error::body_limit);
  EXPECT_FALSE(p.is_done());

  RequestHead at_limit;
  RequestReader q(at_limit);
  q.body_limit(5);
  EXPECT_FALSE(put_all(q, "POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello"));
  EXPECT_TRUE(q.is_done());
  EXPECT_EQ(at_limit.body, "hello");
}

TEST(Http1Parser, ARequestWithContentLengthZeroIsDoneAfterTheHead) {
  RequestHead head;
  RequestReader p(head);
  const std::string_view text = "POST / HTTP/1.1\r\nContent-Length: 0\r\n\r\n";
  error_code ec;
  EXPECT_EQ(p.put(text.data(), text.size(), ec), text.size());
  EXPECT_FALSE(ec) << ec.message();
  EXPECT_TRUE(p.is_done());
  EXPECT_EQ(p.content_length(), 0u);
  EXPECT_EQ(head.body, "");
}

// ---- Transfer-Encoding ------------------------------------------------------------------------

TEST(Http1Parser, ARequestChunkedInAnyCaseIsAccepted) {
  for (const std::string_view te : {"chunked", "CHUNKED", "Chunked", "cHuNkEd"}) {
    SCOPED_TRACE(testing::PrintToString(te));
    RequestHead head;
    RequestReader p(head);
    ASSERT_FALSE(put_all(
        p, "POST / HTTP/1.1\r\nTransfer-Encoding: " + std::string(te) + "\r\n\r\n3\r\nabc\r\n0\r\n\r\n"));
    EXPECT_TRUE(p.is_done());
    EXPECT_TRUE(p.chunked());
    EXPECT_FALSE(p.content_length());
    EXPECT_EQ(head.body, "abc");
  }
}

TEST(Http1Parser, ARequestTransferEncodingOtherThanChunkedIsRejected) {
  for (const std::string_view te :
       {"Transfer-Encoding: gzip, chunked", "Transfer-Encoding: chunked, chunked",
        "Transfer-Encoding: xchunked", "Transfer-Encoding: chunkedx", "Transfer-Encoding: gzip",
        "Transfer-Encoding: chunked, gzip", "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked",
        "Transfer-Encoding: gzip\r\nTransfer-Encoding: chunked", "Transfer-Encoding:"}) {
    SCOPED_TRACE(testing::PrintToString(te));
    EXPECT_EQ(request_error("POST / HTTP/1.1\r\n" + std::string(te) + "\r\n\r\n3\r\nabc\r\n0\r\n\r\n"),
              beast::http::error::bad_transfer_encoding);
  }
}

TEST(Http1Parser, ChunkedInAnHttp10RequestIsRejected) {
  EXPECT_EQ(request_error("POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"),
            beast::http::error::bad_transfer_encoding);
}

TEST(Http1Parser, AResponseGzipThenChunkedIsChunked) {
  ResponseHead head;
  ResponseReader p(head);
  char buf[64];
  p.body_buffer(buf, sizeof buf);
  ASSERT_FALSE(put_all(
      p, "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n3\r\n\x1f\x8b\x08\r\n0\r\n\r\n"));
  EXPECT_TRUE(p.is_done());
  EXPECT_TRUE(p.chunked());
  EXPECT_FALSE(p.need_eof());
  EXPECT_TRUE(p.keep_alive());
  EXPECT_EQ(received(buf, sizeof buf, p), "\x1f\x8b\x08");
}

TEST(Http1Parser, AResponseGzipAloneIsReadUntilClose) {
  ResponseHead head;
  ResponseReader p(head);
  char buf[64];
  p.body_buffer(buf, sizeof buf);
  ASSERT_FALSE(put_all(p, "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n3\r\nabc\r\n0\r\n\r\n"));
  EXPECT_FALSE(p.chunked());
  EXPECT_TRUE(p.need_eof());
  EXPECT_FALSE(p.keep_alive());
  EXPECT_FALSE(p.is_done());
  error_code ec;
  p.put_eof(ec);
  EXPECT_FALSE(ec);
  EXPECT_TRUE(p.is_done());
  EXPECT_EQ(received(buf, sizeof buf, p), "3\r\nabc\r\n0\r\n\r\n");  // not decoded: it is not chunked
}

// RFC 9112 section 6.3: when chunked is not the last coding, the body ends at the close.
TEST(Http1Parser, AResponseChunkedThenGzipIsReadUntilClose) {
  for (const char* te : {"Transfer-Encoding: chunked, gzip\r\n",
                         "Transfer-Encoding: chunked\r\nTransfer-Encoding: gzip\r\n"}) {
    ResponseHead head;
    ResponseReader p(head);
    char buf[64];
    p.body_buffer(buf, sizeof buf);
    ASSERT_FALSE(put_all(p, std::string("HTTP/1.1 200 OK\r\n") + te + "\r\nabc")) << te;
    EXPECT_FALSE(p.chunked()) << te;
    EXPECT_TRUE(p.need_eof()) << te;
    EXPECT_FALSE(p.keep_alive()) << te;
    EXPECT_EQ(received(buf, sizeof buf, p), "abc") << te;
  }
}

TEST(Http1Parser, AResponseChunkedTwiceIsAnError) {
  EXPECT_EQ(response_error("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, chunked\r\n\r\n0\r\n\r\n"),
            beast::http::error::bad_transfer_encoding);
  EXPECT_EQ(response_error("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip, chunked\r\n\r\n0\r\n\r\n"),
            beast::http::error::bad_transfer_encoding);
}

// ---- chunked bodies ---------------------------------------------------------------------------

// The error (and body) of a chunked request whose body is `chunks`.
error_code chunked_request(std::string_view chunks, std::string* body = nullptr,
                           std::optional<std::uint64_t> limit = std::nullopt) {
  RequestHead head;
  RequestReader p(head);
  p.body_limit(limit);
  const error_code ec =
      put_all(p, "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n" + std::string(chunks));
  if (body) *body = head.body;
  if (!ec && !p.is_done()) return beast::http::error::need_more;
  return ec;
}

TEST(Http1Parser, ChunkExtensionsAreSkipped) {
  std::string body;
  EXPECT_FALSE(chunked_request("5;name=value\r\nhello\r\n6;a;b=\"q v\"\r\n world\r\n0;last\r\n\r\n", &body));
  EXPECT_EQ(body, "hello world");
}

TEST(Http1Parser, ChunkSizesInUppercaseHexAreRead) {
  std::string body;
  const std::string a(0x1F, 'a');
  EXPECT_FALSE(chunked_request("A\r\n0123456789\r\n1F\r\n" + a + "\r\n0\r\n\r\n", &body));
  EXPECT_EQ(body, "0123456789" + a);
  EXPECT_FALSE(
      chunked_request("00000000000000000003\r\nabc\r\n0\r\n\r\n", &body));  // leading zeros are no overflow
  EXPECT_EQ(body, "abc");
}

TEST(Http1Parser, AChunkSizeWithoutHexDigitsIsBadChunk) {
  for (const std::string_view chunks :
       {"\r\nhello\r\n0\r\n\r\n", ";x\r\nhello\r\n0\r\n\r\n", "g\r\nhello\r\n0\r\n\r\n",
        "-5\r\nhello\r\n0\r\n\r\n", "0x5\r\nhello\r\n0\r\n\r\n", " 5\r\nhello\r\n0\r\n\r\n",
        "5x\r\nhello\r\n0\r\n\r\n", "+5\r\nhello\r\n0\r\n\r\n"}) {
    SCOPED_TRACE(testing::PrintToString(chunks));
    EXPECT_EQ(chunked_request(chunks), beast::http::error::bad_chunk);
  }
}

TEST(Http1Parser, AMissingCrlfAfterChunkDataIsBadChunk) {
  for (const std::string_view chunks :
       {"5\r\nhelloX\r\n0\r\n\r\n", "5\r\nhello\n0\r\n\r\n", "5\r\nhello0\r\n\r\n", "5\r\nhello\rX0\r\n\r\n",
        "3\r\nhello\r\n0\r\n\r\n"}) {
    SCOPED_TRACE(testing::PrintToString(chunks));
    EXPECT_EQ(chunked_request(chunks), beast::http::error::bad_chunk);
  }
}

TEST(Http1Parser, AHugeChunkSizeIsBadChunk) {
  for (const std::string_view chunks :
       {"FFFFFFFFFFFFFFFFFFFF\r\nhello\r\n0\r\n\r\n", "10000000000000000000\r\nhello\r\n0\r\n\r\n",
        "FFFFFFFFFFFFFFFF\r\nhello\r\n0\r\n\r\n"}) {
    SCOPED_TRACE(testing::PrintToString(chunks));
    EXPECT_EQ(chunked_request(chunks), beast::http::error::bad_chunk);
  }
}

TEST(Http1Parser, TrailersAreReadAndDropped) {
  RequestHead head;
  RequestReader p(head);
  const std::string_view first =
      "POST /a HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\nX-Checksum: 1\r\nX-Other: "
      "2\r\n\r\n";
  const std::string text = std::string(first) + "GET /b HTTP/1.1\r\n\r\n";
  std::size_t used = 0;
  ASSERT_FALSE(put_all(p, text, &used));
  EXPECT_TRUE(p.is_done());
  EXPECT_EQ(used, first.size());  // the trailers are consumed, nothing after them
  EXPECT_EQ(head.body, "abc");
  EXPECT_EQ(head.fields.size(), 1u);
  EXPECT_EQ(head.fields.get("x-checksum"), "");
}

TEST(Http1Parser, TrailersCountAgainstTheHeaderLimit) {
  RequestHead head;
  RequestReader p(head);
  p.header_limit(100);
  const std::string trailers =
      "X-A: " + std::string(40, 'a') + "\r\nX-B: " + std::string(40, 'b') + "\r\nX-C: c\r\n\r\n";
  EXPECT_EQ(put_all(p, "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n" + trailers),
            beast::http::error::header_limit);
}

TEST(Http1Parser, AChunkedBodyOverTheBodyLimitIsRejected) {
  EXPECT_EQ(chunked_request("5\r\nhello\r\n5\r\nworld\r\n0\r\n\r\n", nullptr, 8),
            beast::http::error::body_limit);
  EXPECT_EQ(chunked_request("9\r\nhello wor\r\n0\r\n\r\n", nullptr, 8), beast::http::error::body_limit);
  std::string body;
  EXPECT_FALSE(chunked_request("5\r\nhello\r\n5\r\nworld\r\n0\r\n\r\n", &body, 10));  // at the limit
  EXPECT_EQ(body, "helloworld");
}

TEST(Http1Parser, AChunkLineLongerThan4096BytesWithoutLfIsBadChunk) {
  const std::string head = "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n";
  {
    RequestHead h;
    RequestReader p(h);
    EXPECT_EQ(put_all(p, head + "5;" + std::string(4095, 'x')),
              beast::http::error::bad_chunk);  // a 4097-byte line
  }
  {
    RequestHead h;
    RequestReader p(h);
    EXPECT_EQ(put_all(p, head + "5;" + std::string(4094, 'x')),
              beast::http::error::need_more);  // 4096: still waits
  }
  {
    RequestHead h;
    RequestReader p(h);
    std::string pending;
    ASSERT_FALSE(feed(p, pending, head + "5\r\nhello\r\n5;"));
    for (int i = 0; i < 2; ++i) ASSERT_FALSE(feed(p, pending, std::string(2047, 'x')));  // in pieces, to 4096
    EXPECT_EQ(feed(p, pending, "x"), beast::http::error::bad_chunk);
  }
}

// ---- chunk-size lines and trailer lines, in any reads -------------------------------------------

// The error of a message in one read and fed byte by byte (a read per byte): both must be `want`.
template <class Head, class Reader>
void expect_error_in_one_read_and_byte_by_byte(const std::string& text, beast::http::error want) {
  char buf[256];
  {
    Head head;
    Reader p(head);
    if constexpr (std::is_same_v<Reader, ResponseReader>) p.body_buffer(buf, sizeof buf);
    EXPECT_EQ(put_all(p, text), want) << "in one read";
    EXPECT_FALSE(p.is_done());
  }
  {
    Head head;
    Reader p(head);
    if constexpr (std::is_same_v<Reader, ResponseReader>) p.body_buffer(buf, sizeof buf);
    std::string pending;
    error_code ec;
    for (std::size_t i = 0; i < text.size() && !ec; ++i) ec = feed(p, pending, text.substr(i, 1));
    EXPECT_EQ(ec, want) << "byte by byte";
    EXPECT_FALSE(p.is_done());
  }
}

// `body` after the head of a chunked request, then of a chunked response.
void expect_chunked_body_error(std::string_view body, beast::http::error want) {
  SCOPED_TRACE(testing::PrintToString(std::string(body)));
  {
    SCOPED_TRACE("request");
    expect_error_in_one_read_and_byte_by_byte<RequestHead, RequestReader>(
        "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n" + std::string(body), want);
  }
  {
    SCOPED_TRACE("response");
    expect_error_in_one_read_and_byte_by_byte<ResponseHead, ResponseReader>(
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + std::string(body), want);
  }
}

// RFC 9112 section 7.1: chunk = chunk-size [ chunk-ext ] CRLF, and chunk-ext = *( BWS ";" ...):
// whitespace after the size only before a ';'.
TEST(Http1Parser, WhitespaceAfterAChunkSizeWithoutAnExtensionIsBadChunk) {
  for (const std::string_view body :
       {"5 \r\nhello\r\n0\r\n\r\n", "5\t\r\nhello\r\n0\r\n\r\n", "5 \t \r\nhello\r\n0\r\n\r\n",
        "5\r\nhello\r\n0 \r\n\r\n", "5\r\nhello\r\n0\t\r\n\r\n", "0 \r\n\r\n"})
    expect_chunked_body_error(body, beast::http::error::bad_chunk);
  std::string body;  // before a ';' it is allowed
  EXPECT_FALSE(chunked_request("5 ;a=b\r\nhello\r\n3\t; x\r\nabc\r\n0 \t;last\r\n\r\n", &body));
  EXPECT_EQ(body, "helloabc");
}

// RFC 9112 section 7.1.2: trailer lines are field lines. Each bad line gets, in the trailers, the
// error it gets in a head.
TEST(Http1Parser, ATrailerLineIsCheckedAsAFieldLine) {
  struct BadLines {
    std::string lines;  // trailer lines, each but the last followed by CRLF
    beast::http::error error;
  };
  for (const BadLines& c : {
           BadLines{"no colon", beast::http::error::bad_field},
           BadLines{"X-T : 1", beast::http::error::bad_field},   // a space before the colon
           BadLines{"X-T\t: 1", beast::http::error::bad_field},  // a tab before the colon
           BadLines{": x", beast::http::error::bad_field},       // an empty name
           BadLines{"X[T]: 1", beast::http::error::bad_field},   // separators in the name
           BadLines{"X\x80T: 1", beast::http::error::bad_field},
           BadLines{"X\rT: 1", beast::http::error::bad_field},       // a bare CR in the name
           BadLines{"X-T: 1\r\n 2", beast::http::error::bad_field},  // obs-fold
           BadLines{"X-T: 1\r\n\t2", beast::http::error::bad_field},
           BadLines{" X-T: 1", beast::http::error::bad_field},      // the first trailer line folded
           BadLines{"X-T: a\x01z", beast::http::error::bad_value},  // control characters in the value
           BadLines{"X-T: a\0z"s, beast::http::error::bad_value},   // NUL
           BadLines{"X-T: a\x7fz", beast::http::error::bad_value},  // DEL
           BadLines{"X-T: \x1f", beast::http::error::bad_value},
           BadLines{"X-T: a\rb", beast::http::error::bad_line_ending},     // a bare CR in the value
           BadLines{"X-A: 1\r\nno colon", beast::http::error::bad_field},  // not only the first line
       }) {
    SCOPED_TRACE(testing::PrintToString(c.lines));
    ASSERT_EQ(request_error("GET / HTTP/1.1\r\n" + c.lines + "\r\n\r\n"), c.error) << "in a head";
    expect_chunked_body_error("3\r\nabc\r\n0\r\n" + c.lines + "\r\n\r\n", c.error);
  }
  // What a head allows, trailers allow: obs-text, tabs, empty values, token characters.
  std::string body;
  EXPECT_FALSE(chunked_request(
      "3\r\nabc\r\n0\r\nX-A: caf\xc3\xa9 \x80\xff\r\nX-Tab:\ta\tb\t\r\nX-Empty:\r\nX-!#$%&'*+-.^_`|~09: "
      "1\r\n\r\n",
      &body));
  EXPECT_EQ(body, "abc");
}

// ---- keep-alive -------------------------------------------------------------------------------

struct KeepAliveCase {
  std::string_view text;
  bool keep;
};

TEST(Http1Parser, KeepAliveFollowsTheVersionAndConnection) {
  for (const KeepAliveCase c : {
           KeepAliveCase{"GET / HTTP/1.1\r\nHost: x\r\n\r\n", true},
           KeepAliveCase{"GET / HTTP/1.1\r\nConnection: close\r\n\r\n", false},
           KeepAliveCase{"GET / HTTP/1.1\r\nConnection: CLOSE\r\n\r\n", false},
           KeepAliveCase{"GET / HTTP/1.1\r\nConnection: foo, close\r\n\r\n", false},
           KeepAliveCase{"GET / HTTP/1.1\r\nConnection: foo\r\nConnection: close\r\n\r\n", false},
           KeepAliveCase{"GET / HTTP/1.1\r\nConnection: closed\r\n\r\n", true},
           KeepAliveCase{"GET / HTTP/1.0\r\nHost: x\r\n\r\n", false},
           KeepAliveCase{"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", true},
           KeepAliveCase{"GET / HTTP/1.0\r\nConnection: Keep-Alive, foo\r\n\r\n", true},
           KeepAliveCase{"GET / HTTP/1.0\r\nConnection: keep-alive, close\r\n\r\n", false},
       }) {
    SCOPED_TRACE(testing::PrintToString(c.text));
    RequestHead head;
    RequestReader p(head);
    ASSERT_FALSE(put_all(p, c.text));
    EXPECT_EQ(p.keep_alive(), c.keep);
    EXPECT_EQ(head.keep_alive, c.keep);
  }
}

TEST(Http1Parser, AResponseKeepAliveFollowsTheVersionAndConnection) {
  for (const KeepAliveCase c : {
           KeepAliveCase{"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", true},
           KeepAliveCase{"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n", false},
           KeepAliveCase{"HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n", false},
           KeepAliveCase{"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n", true},
       }) {
    SCOPED_TRACE(testing::PrintToString(c.text));
    ResponseHead head;
    ResponseReader p(head);
    ASSERT_FALSE(put_all(p, c.text));
    EXPECT_TRUE(p.is_done());
    EXPECT_EQ(p.keep_alive(), c.keep);
  }
}

// ---- responses --------------------------------------------------------------------------------

TEST(Http1Parser, AStatusLineWithoutReasonIsAccepted) {
  ResponseHead head;
  ResponseReader p(head);
  ASSERT_FALSE(put_all(p, "HTTP/1.1 204\r\n\r\n"));
  EXPECT_TRUE(p.is_done());
  EXPECT_EQ(head.status, 204u);
  EXPECT_EQ(head.reason, "");
  EXPECT_EQ(head.version, 11u);
}

TEST(Http1Parser, AReasonMayHaveSpaces) {
  ResponseHead head;
  ResponseReader p(head);
  ASSERT_FALSE(put_all(p, "HTTP/1.0 429 Too  Many Requests \r\nContent-Length: 0\r\n\r\n"));
  EXPECT_EQ(head.status, 429u);
  EXPECT_EQ(head.reason, "Too  Many Requests ");
  EXPECT_EQ(head.version, 10u);
}

TEST(Http1Parser, ABadStatusIsRejected) {
  for (const std::string_view text :
       {"HTTP/1.1 20x OK\r\n\r\n", "HTTP/1.1 20x\r\n\r\n", "HTTP/1.1 2000 OK\r\n\r\n",
        "HTTP/1.1  200 OK\r\n\r\n", "HTTP/1.1 -20 OK\r\n\r\n", "HTTP/1.1 200OK\r\n\r\n"}) {
    SCOPED_TRACE(testing::PrintToString(text));
    EXPECT_EQ(response_error(text), beast::http::error::bad_status);
  }
  EXPECT_TRUE(failed(response_error("HTTP/1.1 20\r\n\r\n")));
  EXPECT_EQ(response_error("HTTP/1.1 200 O\x01K\r\n\r\n"), beast::http::error::bad_reason);
}

TEST(Http1Parser, AResponseVersionOtherThan1IsBadVersion) {
  for (const std::string_view text :
       {"HTTP/2.0 200 OK\r\n\r\n", "HTTP/0.9 200 OK\r\n\r\n", "HTTP/1.1200 OK\r\n\r\n",
        "http/1.1 200 OK\r\n\r\n", "HTTP/1 200 OK\r\n\r\n"}) {
    SCOPED_TRACE(testing::PrintToString(text));
    EXPECT_EQ(response_error(text), beast::http::error::bad_version);
  }
}

TEST(Http1Parser, ResponsesWithoutABodyAreDoneAfterTheHead) {
  for (const std::string_view status :
       {"100 Continue", "103 Early Hints", "204 No Content", "304 Not Modified"}) {
    SCOPED_TRACE(testing::PrintToString(status));
    ResponseHead head;
    ResponseReader p(head);
    const std::string text = "HTTP/1.1 " + std::string(status) + "\r\nContent-Length: 10\r\n\r\n";
    error_code ec;
    EXPECT_EQ(p.put(text.data(), text.size(), ec), text.size());
    EXPECT_FALSE(ec) << ec.message();
    EXPECT_TRUE(p.is_done());
    EXPECT_FALSE(p.need_eof());
  }
  for (const std::string_view framing : {"Content-Length: 10", "Transfer-Encoding: chunked", "X-None: 1"}) {
    SCOPED_TRACE(testing::PrintToString(framing));
    ResponseHead head;
    ResponseReader p(head);
    p.skip(true);  // the answer to a HEAD
    const std::string text = "HTTP/1.1 200 OK\r\n" + std::string(framing) + "\r\n\r\n";
    error_code ec;
    EXPECT_EQ(p.put(text.data(), text.size(), ec), text.size());
    EXPECT_FALSE(ec) << ec.message();
    EXPECT_TRUE(p.is_done());
    EXPECT_TRUE(p.keep_alive());
  }
}

TEST(Http1Parser, ABodyBiggerThanTheBufferAsksForAnother) {
  const std::string_view text =
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n6\r\nabcdef\r\n3\r\nghi\r\n0\r\n\r\n";
  ResponseHead head;
  ResponseReader p(head);
  error_code ec;
  std::size_t used = p.put(text.data(), text.size(), ec);
  ASSERT_FALSE(ec);
  ASSERT_TRUE(p.is_header_done());

  char first[4];
  p.body_buffer(first, sizeof first);
  used += p.put(text.data() + used, text.size() - used, ec);
  EXPECT_EQ(ec, beast::http::error::need_buffer);
  EXPECT_EQ(std::string_view(first, 4), "abcd");
  EXPECT_EQ(p.body_buffer_left(), 0u);
  EXPECT_FALSE(p.is_done());

  char second[3];
  p.body_buffer(second, sizeof second);
  used += p.put(text.data() + used, text.size() - used, ec);
  EXPECT_EQ(ec, beast::http::error::need_buffer);
  EXPECT_EQ(std::string_view(second, 3), "efg");

  char rest[16];
  p.body_buffer(rest, sizeof rest);
  used += p.put(text.data() + used, text.size() - used, ec);
  EXPECT_FALSE(ec) << ec.message();
  EXPECT_TRUE(p.is_done());
  EXPECT_EQ(received(rest, sizeof rest, p), "hi");
  EXPECT_EQ(used, text.size());
}

// ---- header_limit -----------------------------------------------------------------------------

TEST(Http1Parser, AnUnfinishedHeadLongerThanTheLimitIsHeaderLimit) {
  RequestHead head;
  RequestReader p(head);
  p.header_limit(64);
  const std::string text = "GET / HTTP/1.1\r\nX-A: " + std::string(100, 'a');
  EXPECT_EQ(put_all(p, text.substr(0, 64)), beast::http::error::need_more);  // at the limit: may still end
  EXPECT_EQ(put_all(p, text), beast::http::error::header_limit);

  RequestHead h2;
  RequestReader q(h2);  // the same, in pieces
  q.header_limit(64);
  std::string pending;
  error_code ec;
  for (std::size_t i = 0; i < text.size() && !ec; i += 10) ec = feed(q, pending, text.substr(i, 10));
  EXPECT_EQ(ec, beast::http::error::header_limit);
}

TEST(Http1Parser, ACompleteHeadOverTheLimitIsHeaderLimit) {
  const std::string text = "GET / HTTP/1.1\r\nX-A: " + std::string(40, 'a') + "\r\n\r\n";
  {
    RequestHead head;
    RequestReader p(head);
    p.header_limit(text.size() - 1);
    EXPECT_EQ(put_all(p, text), beast::http::error::header_limit);
  }
  {
    RequestHead head;
    RequestReader p(head);
    p.header_limit(text.size());
    EXPECT_FALSE(put_all(p, text));
    EXPECT_TRUE(p.is_done());
  }
}

TEST(Http1Parser, TheBlankLineIsFoundAcrossReads) {
  const std::string_view text = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
  const std::size_t blank = text.size() - 4;
  for (std::size_t a = blank - 2; a <= text.size(); ++a) {
    for (std::size_t b = a; b <= text.size(); ++b) {
      SCOPED_TRACE("pieces end at " + std::to_string(a) + " and " + std::to_string(b));
      RequestHead head;
      RequestReader p(head);
      std::string pending;
      ASSERT_FALSE(feed(p, pending, text.substr(0, a)));
      ASSERT_FALSE(feed(p, pending, text.substr(a, b - a)));
      EXPECT_EQ(p.is_header_done(), b == text.size());
      ASSERT_FALSE(feed(p, pending, text.substr(b)));
      EXPECT_TRUE(p.is_done());
      EXPECT_EQ(head.fields.get(beast::http::field::host), "x");
    }
  }
}

// ---- pipelining -------------------------------------------------------------------------------

TEST(Http1Parser, PutTakesOneMessageAndLeavesTheNext) {
  for (const std::string_view first :
       {"POST /a HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc",
        "POST /a HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"}) {
    SCOPED_TRACE(testing::PrintToString(first));
    const std::string text = std::string(first) + "GET /b HTTP/1.1\r\nContent-Length: 2\r\n\r\nxy";
    RequestHead head;
    RequestReader p(head);
    std::size_t used = 0;
    ASSERT_FALSE(put_all(p, text, &used));
    EXPECT_TRUE(p.is_done());
    EXPECT_EQ(used, first.size());
    EXPECT_EQ(head.target, "/a");
    EXPECT_EQ(head.body, "abc");

    RequestHead next;
    RequestReader q(next);
    ASSERT_FALSE(put_all(q, std::string_view(text).substr(used), &used));
    EXPECT_TRUE(q.is_done());
    EXPECT_EQ(next.target, "/b");
    EXPECT_EQ(next.body, "xy");
  }
}

// ---- field_id and HeaderList ------------------------------------------------------------------

TEST(Http1Parser, FieldIdKnowsItsNamesInAnyCase) {
  EXPECT_EQ(field_id("host"), beast::http::field::host);
  EXPECT_EQ(field_id("HOST"), beast::http::field::host);
  EXPECT_EQ(field_id("hOsT"), beast::http::field::host);
  EXPECT_EQ(field_id("Content-Length"), beast::http::field::content_length);
  EXPECT_EQ(field_id("CONTENT-LENGTH"), beast::http::field::content_length);
  EXPECT_EQ(field_id("transfer-encoding"), beast::http::field::transfer_encoding);
  EXPECT_EQ(field_id("Transfer-Encoding"), beast::http::field::transfer_encoding);
  EXPECT_EQ(field_id("Connection"), beast::http::field::connection);
  EXPECT_EQ(field_id("expect"), beast::http::field::expect);
  EXPECT_EQ(field_id("Authorization"), beast::http::field::authorization);
  EXPECT_EQ(field_id("Retry-After"), beast::http::field::retry_after);
  EXPECT_EQ(field_id("content-type"), beast::http::field::content_type);
  EXPECT_EQ(field_id("Content-Encoding"), beast::http::field::content_encoding);
}

TEST(Http1Parser, FieldIdOfOtherNamesIsUnknown) {
  for (const std::string_view name : {"hosts", "hos", "x-host", "content-lengthx", "content_length",
                                      "contentlength", "content-lengti", "transfer-encodinh", "connectioN2",
                                      "api-key", "date", "keep-alive", "", "content-types", "retry_after"}) {
    SCOPED_TRACE(testing::PrintToString(name));
    EXPECT_EQ(field_id(name), beast::http::field::unknown);
  }
}

TEST(Http1Parser, TheHeaderListKeepsArrivalOrderAndCase) {
  RequestHead head;
  RequestReader p(head);
  ASSERT_FALSE(put_all(p,
                       "GET / HTTP/1.1\r\nX-Zeta: 1\r\nhost: h\r\nAPI-Key: k\r\nX-Alpha: 2\r\n"
                       "CONTENT-TYPE: application/json\r\nx-zeta: 3\r\n\r\n"));
  ASSERT_EQ(head.fields.size(), 6u);
  const std::string_view names[] = {"X-Zeta", "host", "API-Key", "X-Alpha", "CONTENT-TYPE", "x-zeta"};
  const std::string_view values[] = {"1", "h", "k", "2", "application/json", "3"};
  for (std::size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(head.fields[i].name, names[i]);
    EXPECT_EQ(head.fields[i].value, values[i]);
  }
  EXPECT_EQ(head.fields[1].id, beast::http::field::host);
  EXPECT_EQ(head.fields[4].id, beast::http::field::content_type);
  EXPECT_EQ(head.fields[2].id, beast::http::field::unknown);
  EXPECT_EQ(head.fields.get("X-ZETA"), "1");  // the first of the two
}

// ---- gaps a review found (each was a parser bug, fixed) ----------------------------------------

// RFC 9112 section 6.1: a recipient of an HTTP/1.0 message with Transfer-Encoding "MUST treat
// the message as if the framing is faulty ... and close the connection after processing".
TEST(Http1Parser, AnHttp10ResponseWithTransferEncodingIsNotKeptAlive) {
  ResponseHead head;
  ResponseReader p(head);
  char buf[64];
  p.body_buffer(buf, sizeof buf);
  const error_code ec = put_all(
      p,
      "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n");
  if (!failed(ec)) {
    EXPECT_FALSE(p.keep_alive()) << "the connection would go back to the pool";
  }
}

// The limit on a chunk-size line should not depend on how the bytes were split into reads.
TEST(Http1Parser, ALongChunkLineFailsWhateverTheReads) {
  const std::string text = "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5;" +
                           std::string(5000, 'x') + "\r\nhello\r\n0\r\n\r\n";
  {
    RequestHead head;
    RequestReader p(head);
    std::string pending;
    error_code ec;
    for (std::size_t i = 0; i < text.size() && !ec && !p.is_done(); i += 1000)
      ec = feed(p, pending, text.substr(i, 1000));
    EXPECT_EQ(ec, beast::http::error::bad_chunk) << "in reads of 1000 bytes";
  }
  {
    RequestHead head;
    RequestReader p(head);
    EXPECT_EQ(put_all(p, text), beast::http::error::bad_chunk) << "in one read";
  }
}

// RFC 9112 section 2.2: a bare LF is either a line terminator or invalid; waiting for a CRLF
// that will never come answers the client with a timeout instead of a 400.
TEST(Http1Parser, AHeadOfBareLfLinesIsRejectedNotAwaited) {
  EXPECT_TRUE(failed(request_error("GET / HTTP/1.1\nHost: x\n\n")));
}

// A parser that failed on its head has no head: read_http's goal `header` must not be met.
TEST(Http1Parser, AFailedHeadIsNotADoneHead) {
  RequestHead head;
  RequestReader p(head);
  ASSERT_EQ(put_all(p, "GET / HTTP/1.1\r\nHost : x\r\n\r\n"), beast::http::error::bad_field);
  EXPECT_FALSE(p.is_header_done());
}

}  // namespace http1_parser_test
}  // namespace smartlb::http1
