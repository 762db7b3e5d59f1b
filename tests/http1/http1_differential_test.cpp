// Differential test of Http1Parser (RequestReader, ResponseReader) against Beast's own parsers
// (beast::http::request_parser / beast::http::response_parser with string_body), which the proxy used before.
//
// One corpus of requests and responses goes through both:
//   - well-formed messages: both accept, and agree on the start line, every field in order, the
//     body bytes, the bytes consumed, whether the body ended with the connection, and keep-alive;
//   - malformed messages: both reject;
//   - where Beast accepts and ours rejects: only by a deliberate rule of http1_parser.hpp, each
//     case listed with its rule (kStricter);
//   - where ours accepts and Beast rejects: only the cases listed with their reason (kLenient);
//   - where keep-alive differs: only the cases listed (kKeepAliveDivergences).
// Then every message is fed to our parser in random pieces (a fixed seed, kSplitsPerMessage
// splittings each, byte by byte included), which must give what the one-piece parse gave.
// The disagreements it found beyond these lists are tests at the end: the bugs fixed since, and
// one gap left as it is (GTEST_SKIP).
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <iterator>
#include <numeric>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "smartlb/http1/http1_parser.hpp"

namespace smartlb::http1 {
namespace http1_differential_test {  // named, not anonymous: tests/CMakeLists.txt

using namespace std::string_literals;

constexpr std::uint32_t kHeaderLimit = 16 * 1024;  // as client_session sets it
constexpr int kSplitsPerMessage = 300;

// ---- what a parser made of a message -----------------------------------------------------------

enum class Kind { request, response, head_response };  // head_response: the answer to a HEAD

struct Case {
  std::string name;
  Kind kind;
  std::string text;
};

struct Parsed {
  bool ok = false;       // a complete message, at the end of the input (after put_eof if needed)
  error_code ec;         // else why not
  std::size_t used = 0;  // bytes consumed
  bool by_eof = false;   // the body ended with the connection (put_eof completed it)
  // The head.
  std::string method;
  beast::http::verb verb = beast::http::verb::unknown;
  std::string target;
  unsigned version = 0;
  unsigned status = 0;
  std::string reason;
  std::vector<std::pair<std::string, std::string>> fields;
  bool keep_alive = false;
  std::string body;
  // Beast only: its message's reason() is obsolete_reason(status) when the reason is empty, and
  // its parser adds trailer fields to the message (counted here, not in `fields`).
  bool from_beast = false;
  std::size_t beast_trailers = 0;
};

std::string show(std::string_view s) {
  constexpr std::size_t kMax = 120;
  if (s.size() <= kMax) return testing::PrintToString(std::string(s));
  return testing::PrintToString(std::string(s.substr(0, kMax))) + "... (" + std::to_string(s.size()) +
         " bytes)";
}

bool iequal(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

// The order in which Beast's basic_fields lists fields: in arrival order, except that a field
// whose name (in any case) came before goes right after the last one of that name.
std::vector<std::pair<std::string, std::string>> in_beast_order(
    const std::vector<std::pair<std::string, std::string>>& fields) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& f : fields) {
    auto last =
        std::find_if(out.rbegin(), out.rend(), [&](const auto& o) { return iequal(o.first, f.first); });
    out.insert(last == out.rend() ? out.end() : last.base(), f);
  }
  return out;
}

std::string outcome(const Parsed& p) { return p.ok ? "accepts" : "rejects (" + p.ec.message() + ")"; }

// What differs between two results ("" when nothing does). `errors`: the error codes of two
// failures must be the same too; `keep_alive`: compare keep-alive.
std::string differences(const Parsed& a, const Parsed& b, std::string_view an, std::string_view bn,
                        bool errors, bool keep_alive = true) {
  std::ostringstream out;
  if (a.ok != b.ok) {
    out << an << ' ' << outcome(a) << ", " << bn << ' ' << outcome(b) << "; ";
    return out.str();
  }
  if (!a.ok) {
    if (errors && a.ec != b.ec)
      out << "error: " << an << ' ' << a.ec.message() << ", " << bn << ' ' << b.ec.message();
    return out.str();
  }
  const auto diff = [&](std::string_view what, const auto& x, const auto& y) {
    if (!(x == y))
      out << what << ": " << an << ' ' << testing::PrintToString(x) << ", " << bn << ' '
          << testing::PrintToString(y) << "; ";
  };
  diff("used", a.used, b.used);
  diff("ended by eof", a.by_eof, b.by_eof);
  diff("method", a.method, b.method);
  diff("verb", static_cast<int>(a.verb), static_cast<int>(b.verb));
  diff("target", a.target, b.target);
  diff("version", a.version, b.version);
  diff("status", a.status, b.status);
  const bool beast_default_reason =
      b.from_beast && a.reason.empty() &&
      b.reason == beast::http::obsolete_reason(beast::http::int_to_status(b.status));
  if (a.reason != b.reason && !beast_default_reason) diff("reason", a.reason, b.reason);
  // Beast keeps fields of one name together (see in_beast_order); ours keeps arrival order.
  const auto a_fields = b.from_beast ? in_beast_order(a.fields) : a.fields;
  if (a_fields != b.fields) {
    std::size_t i = 0;
    while (i < a_fields.size() && i < b.fields.size() && a_fields[i] == b.fields[i]) ++i;
    out << "fields (" << a_fields.size() << " vs " << b.fields.size() << ") differ at #" << i << ": ";
    if (i < a_fields.size())
      out << an << ' ' << show(a_fields[i].first) << ": " << show(a_fields[i].second) << ' ';
    if (i < b.fields.size()) out << bn << ' ' << show(b.fields[i].first) << ": " << show(b.fields[i].second);
    out << "; ";
  }
  if (a.body != b.body) {
    const auto at = std::mismatch(a.body.begin(), a.body.end(), b.body.begin(), b.body.end());
    out << "body (" << a.body.size() << " vs " << b.body.size() << " bytes) differs at byte "
        << (at.first - a.body.begin()) << "; ";
  }
  if (keep_alive) diff("keep_alive", a.keep_alive, b.keep_alive);
  return out.str();
}

// ---- our parser ----------------------------------------------------------------------------------

enum class BodyMode { buffer, views };  // a response's body: into body_buffer, or as body views

// Feeds `c.text` to our parser as reads of `pieces` bytes arrive, the way feed_buffered does:
// what a put did not take waits for the next read. At the end the peer closes (put_eof).
template <class Head, class Reader>
Parsed run_ours(const Case& c, const std::vector<std::size_t>& pieces, BodyMode mode) {
  constexpr bool is_response = std::is_same_v<Reader, ResponseReader>;
  Head head;
  Reader p(head);
  p.header_limit(kHeaderLimit);
  std::string out(c.text.size(), '\0');
  if constexpr (is_response) {
    if (c.kind == Kind::head_response) p.skip(true);
    if (mode == BodyMode::views)
      p.body_views(true);
    else
      p.body_buffer(out.data(), out.size());
  }
  Parsed r;
  std::string pending;
  std::size_t at = 0;
  error_code ec;
  for (const std::size_t piece : pieces) {
    pending.append(c.text, at, piece);
    at += piece;
    while (!p.is_done()) {
      const std::size_t n = p.put(pending.data(), pending.size(), ec);
      if constexpr (is_response) {
        if (mode == BodyMode::views) r.body.append(p.take_body_view());  // before the bytes go
      }
      pending.erase(0, n);
      r.used += n;
      if (ec == beast::http::error::need_more) {
        ec = {};
        break;
      }
      if (ec || n == 0) break;
    }
    if (ec) break;
  }
  if (!ec && !p.is_done()) {
    p.put_eof(ec);
    r.by_eof = !ec;
  }
  r.ok = !ec && p.is_done();
  r.ec = ec;
  if (!r.ok) return r;
  r.keep_alive = p.keep_alive();
  r.version = head.version;
  for (std::size_t i = 0; i < head.fields.size(); ++i)
    r.fields.emplace_back(std::string(head.fields[i].name), std::string(head.fields[i].value));
  if constexpr (is_response) {
    r.status = head.status;
    r.reason = head.reason;
    if (mode == BodyMode::buffer) r.body = out.substr(0, out.size() - p.body_buffer_left());
  } else {
    EXPECT_EQ(head.keep_alive, p.keep_alive()) << c.name;
    r.method = head.method_text;
    r.verb = head.method;
    r.target = head.target;
    r.body = head.body;
  }
  return r;
}

Parsed ours(const Case& c, const std::vector<std::size_t>& pieces, BodyMode mode = BodyMode::buffer) {
  if (c.kind == Kind::request) return run_ours<RequestHead, RequestReader>(c, pieces, mode);
  return run_ours<ResponseHead, ResponseReader>(c, pieces, mode);
}

Parsed ours(const Case& c, BodyMode mode = BodyMode::buffer) {
  return ours(c, std::vector<std::size_t>{c.text.size()}, mode);
}

// ---- Beast's parser ----------------------------------------------------------------------------

template <bool isRequest>
Parsed run_beast(const Case& c) {
  std::conditional_t<isRequest, beast::http::request_parser<beast::http::string_body>,
                     beast::http::response_parser<beast::http::string_body>>
      p;
  p.header_limit(kHeaderLimit);
  p.body_limit(boost::none);
  if (c.kind == Kind::head_response) p.skip(true);
  Parsed r;
  r.from_beast = true;
  const std::string_view text = c.text;
  std::size_t head_fields = 0;
  bool head_seen = false;
  error_code ec;
  // Not eager: the first put stops after the head, so the fields can be counted before any
  // trailer is added to them.
  while (!p.is_done() && r.used < text.size()) {
    const std::size_t n = p.put(asio::const_buffer(text.data() + r.used, text.size() - r.used), ec);
    r.used += n;
    if (!head_seen && p.is_header_done()) {
      head_seen = true;
      head_fields = static_cast<std::size_t>(std::distance(p.get().begin(), p.get().end()));
    }
    if (ec == beast::http::error::need_more) {
      ec = {};
      break;
    }
    if (ec || n == 0) break;
  }
  if (!ec && !p.is_done()) {
    if (p.got_some()) {
      p.put_eof(ec);
      r.by_eof = !ec;
    } else {
      ec = beast::http::error::end_of_stream;
    }
  }
  r.ok = !ec && p.is_done();
  r.ec = ec;
  if (!r.ok) return r;
  const auto& m = p.get();
  r.keep_alive = p.keep_alive();
  r.version = m.version();
  for (const auto& f : m) {
    if (r.fields.size() < head_fields)
      r.fields.emplace_back(std::string(f.name_string()), std::string(f.value()));
    else
      ++r.beast_trailers;
  }
  if constexpr (isRequest) {
    r.method = std::string(m.method_string());
    r.verb = m.method();
    r.target = std::string(m.target());
  } else {
    r.status = m.result_int();
    r.reason = std::string(m.reason());
  }
  r.body = m.body();
  return r;
}

Parsed beast_parse(const Case& c) {
  return c.kind == Kind::request ? run_beast<true>(c) : run_beast<false>(c);
}

// ---- building messages -------------------------------------------------------------------------

// `head` is a start line and field lines (each ending in CRLF); adds Content-Length and the body.
std::string with_body(std::string_view head, std::string_view body) {
  return std::string(head) + "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" +
         std::string(body);
}

// A chunked body of these chunks, then the last chunk and no trailers.
std::string chunks(const std::vector<std::string>& parts) {
  std::string out;
  char size[32];
  for (const std::string& part : parts) {
    std::snprintf(size, sizeof size, "%zX\r\n", part.size());
    out += size + part + "\r\n";
  }
  return out + "0\r\n\r\n";
}

std::string many_fields(int n, std::string_view prefix) {
  std::string out;
  for (int i = 0; i < n; ++i)
    out += std::string(prefix) + std::to_string(i) + ": value-" + std::to_string(i * 7919) + "\r\n";
  return out;
}

// Bytes of every value 0-255, CR and LF included: a body is opaque.
std::string binary(std::size_t n) {
  std::string out(n, '\0');
  for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<char>((i * 31 + i / 256) & 0xff);
  return out;
}

const std::string kChatBody =
    R"({"model":"gpt-4o-mini","messages":[{"role":"user","content":"Say hi\r\n\r\nGET /admin HTTP/1.1"}],"stream":true})";

std::vector<Case> well_formed() {
  std::vector<Case> c;
  const auto req = [&](std::string name, std::string text) {
    c.push_back({std::move(name), Kind::request, std::move(text)});
  };
  const auto resp = [&](std::string name, std::string text) {
    c.push_back({std::move(name), Kind::response, std::move(text)});
  };
  const auto head = [&](std::string name, std::string text) {
    c.push_back({std::move(name), Kind::head_response, std::move(text)});
  };

  // ---- requests
  req("get models",
      "GET /v1/models HTTP/1.1\r\nHost: api.openai.com\r\nAuthorization: Bearer sk-test\r\nAccept: "
      "*/*\r\n\r\n");
  req("openai chat, Content-Length",
      with_body(
          "POST /v1/chat/completions HTTP/1.1\r\nHost: api.openai.com\r\nAuthorization: Bearer sk-abc\r\n"
          "Content-Type: application/json\r\nUser-Agent: OpenAI/NodeJS/4.52.0\r\nAccept: application/json\r\n"
          "X-Stainless-Lang: js\r\nConnection: keep-alive\r\n",
          kChatBody));
  req("azure chat, Content-Length",
      with_body(
          "POST /openai/deployments/gpt-4o/chat/completions?api-version=2024-06-01 HTTP/1.1\r\n"
          "Host: example.openai.azure.com\r\napi-key: 0123456789abcdef\r\nContent-Type: application/json\r\n",
          kChatBody));
  req("chunked with extensions and trailers",
      "POST /v1/embeddings HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Type: "
      "application/json\r\n\r\n"
      "5;name=value\r\nhello\r\n6;a;b=\"q v\"\r\n world\r\n0;last\r\nX-Checksum: abc\r\nX-Other: 2\r\n\r\n");
  req("chunked, uppercase hex and leading zeros",
      "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n00A\r\n0123456789\r\n1F\r\n" +
          std::string(31, 'z') + "\r\n0000000000000003\r\nabc\r\n000\r\n\r\n");
  req("chunked, extensions with spaces",
      "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5 ;a=b\r\nhello\r\n3;\tx = \"y z\" ; "
      "w\r\nabc\r\n0\r\n\r\n");
  req("chunked, empty body",
      "POST /v1/files HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n");
  req("chunked in upper case",
      "PUT /x HTTP/1.1\r\nTransfer-Encoding: CHUNKED\r\n\r\n" + chunks({"abc", "de"}));
  req("chunked, big binary chunks",
      "POST /v1/audio/transcriptions HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\n"
      "Transfer-Encoding: chunked\r\n\r\n" +
          chunks({binary(1), binary(0x10), binary(0x400), binary(0x1000), binary(777)}));
  req("Content-Length 0", "POST /v1/threads HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n");
  req("Content-Length with leading zeros and spaces",
      "POST / HTTP/1.1\r\nContent-Length: \t 007  \r\n\r\nabcdefg");
  req("big binary body, Content-Length", with_body("POST /v1/files HTTP/1.1\r\nHost: x\r\n", binary(10000)));
  req("body that looks like a request",
      with_body("POST /a HTTP/1.1\r\nHost: x\r\n", "GET /admin HTTP/1.1\r\nHost: y\r\n\r\n0\r\n\r\n"));
  req("HTTP/1.0 without keep-alive", "GET /v1/models HTTP/1.0\r\nHost: x\r\n\r\n");
  req("HTTP/1.0 keep-alive with a body",
      with_body("POST /v1/x HTTP/1.0\r\nConnection: keep-alive\r\n", "{}"));
  req("HTTP/1.0 POST, no keep-alive", with_body("POST /v1/x HTTP/1.0\r\nHost: x\r\n", "{\"a\":1}"));
  req("HTTP/1.1 Connection: close", "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  req("HTTP/1.1 Connection: foo, close", "GET / HTTP/1.1\r\nConnection: foo, close\r\n\r\n");
  req("HTTP/1.1 Connection: keep-alive, close", "GET / HTTP/1.1\r\nConnection: keep-alive, close\r\n\r\n");
  req("HTTP/1.1 Connection: closed (not close)", "GET / HTTP/1.1\r\nConnection: closed\r\n\r\n");
  req("HTTP/1.0 Connection: Keep-Alive, foo", "GET / HTTP/1.0\r\nConnection: Keep-Alive, foo\r\n\r\n");
  req("two Connection fields", "GET / HTTP/1.1\r\nConnection: foo\r\nConnection: close\r\n\r\n");
  req("chunked and Connection: close",
      "POST / HTTP/1.1\r\nConnection: close\r\nTransfer-Encoding: chunked\r\n\r\n" + chunks({"x"}));
  req("many fields", "GET /v1/models HTTP/1.1\r\nHost: x\r\n" + many_fields(120, "X-Field-") + "\r\n");
  req("a long field value", "GET / HTTP/1.1\r\nHost: x\r\nCookie: " + std::string(6000, 'c') +
                                "\r\nAuthorization: Bearer " + std::string(2000, 'k') + "\r\n\r\n");
  req("mixed-case names",
      with_body(
          "POST / HTTP/1.1\r\nhOsT: x\r\nCONTENT-TYPE: application/json\r\nX-MiXeD-CaSe: 1\r\nx-lower: 2\r\n",
          "[]"));
  req("mixed-case Content-Length name", "POST / HTTP/1.1\r\ncontent-LENGTH: 3\r\n\r\nabc");
  req("values trimmed, empty values",
      "GET / HTTP/1.1\r\nX-A:  \t a  b \t \r\nX-B:c\r\nX-C:\td\t\r\nX-Empty:\r\nX-Spaces:   \t\r\n\r\n");
  req("obs-text and tabs in values", "GET / HTTP/1.1\r\nX-Name: caf\xc3\xa9 \x80\xff\r\nX-Tab: a\tb\r\n\r\n");
  req("values with separators",
      "GET / HTTP/1.1\r\nX-Q: \"quoted, string\"; a=b, c\r\nX-Url: https://h:443/p?q=1#f\r\nX-Json: "
      "{\"a\":[1,2]}\r\n\r\n");
  req("duplicate field names", "GET / HTTP/1.1\r\nHost: a\r\nX-A: 1\r\nHost: b\r\nX-A: 2\r\n\r\n");
  req("token characters in a name", "GET / HTTP/1.1\r\nX-!#$%&'*+-.^_`|~09: 1\r\n\r\n");
  req("unknown method", "PURGE /cache/key HTTP/1.1\r\nHost: x\r\n\r\n");
  req("lower-case method", "get /x HTTP/1.1\r\n\r\n");
  req("DELETE", "DELETE /v1/files/file-abc123 HTTP/1.1\r\nHost: x\r\n\r\n");
  req("OPTIONS *", "OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n");
  req("CONNECT authority-form", "CONNECT api.openai.com:443 HTTP/1.1\r\nHost: api.openai.com:443\r\n\r\n");
  req("absolute-form target",
      "GET http://api.openai.com/v1/models?x=1&y=%20 HTTP/1.1\r\nHost: api.openai.com\r\n\r\n");
  req("target with every visible character and obs-text",
      "GET /a!$&'()*+,;=:@[]{}|\\^`~\"<>%25/caf\xc3\xa9?q=\x80\xff HTTP/1.1\r\nHost: x\r\n\r\n");
  req("Expect: 100-continue",
      with_body("POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n", kChatBody));
  req("Upgrade", "GET /ws HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n");

  // ---- responses
  resp("openai JSON response",
       with_body(
           "HTTP/1.1 200 OK\r\nDate: Tue, 01 Oct 2024 10:00:00 GMT\r\nContent-Type: application/json\r\n"
           "Connection: keep-alive\r\nopenai-organization: org-x\r\nopenai-processing-ms: 523\r\n"
           "openai-version: 2020-10-01\r\nx-ratelimit-limit-requests: 10000\r\n"
           "x-ratelimit-remaining-tokens: 149984\r\nx-ratelimit-reset-requests: 6ms\r\n"
           "x-request-id: req_0123456789abcdef\r\nCF-RAY: 8c0c-IAD\r\n",
           R"({"id":"chatcmpl-1","object":"chat.completion","choices":[{"message":{"content":"hi"}}]})"));
  resp("SSE stream, chunked",
       "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream; charset=utf-8\r\nTransfer-Encoding: chunked\r\n"
       "Cache-Control: no-cache\r\n\r\n" +
           chunks({"data: {\"choices\":[{\"delta\":{\"content\":\"H\"}}]}\n\n", "data: {\"choices\":[]}\n\n",
                   "data: [DONE]\n\n"}));
  resp("chunked with extensions and trailers",
       "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3;x=y\r\nabc\r\n4;q=\"a b\"\r\ndefg\r\n0\r\n"
       "Server-Timing: db;dur=53\r\nX-Trailer: t\r\n\r\n");
  resp("big binary body, chunked",
       "HTTP/1.1 200 OK\r\nContent-Type: audio/mpeg\r\nTransfer-Encoding: chunked\r\n\r\n" +
           chunks({binary(0x2000), binary(0xABC), binary(3)}));
  resp("big binary body, Content-Length",
       with_body("HTTP/1.1 200 OK\r\nContent-Type: audio/mpeg\r\n", binary(20000)));
  resp("429 with Retry-After",
       with_body("HTTP/1.1 429 Too Many Requests\r\nRetry-After: 20\r\nx-ratelimit-reset-tokens: 1m20s\r\n"
                 "Content-Type: application/json\r\n",
                 R"({"error":{"code":"429","message":"Rate limit is exceeded."}})"));
  resp("503 Connection: close",
       with_body("HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nRetry-After: 1\r\n", "busy"));
  resp("404 with body",
       with_body("HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\n", "no such deployment"));
  resp("Content-Length 0", "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
  resp("204", "HTTP/1.1 204 No Content\r\nDate: x\r\n\r\n");
  resp("204 with Transfer-Encoding", "HTTP/1.1 204 No Content\r\nTransfer-Encoding: chunked\r\n\r\n");
  resp("304 with Content-Length",
       "HTTP/1.1 304 Not Modified\r\nETag: \"abc\"\r\nContent-Length: 123\r\n\r\n");
  resp("100 Continue", "HTTP/1.1 100 Continue\r\n\r\n");
  resp("100 Continue with Content-Length", "HTTP/1.1 100 Continue\r\nContent-Length: 10\r\n\r\n");
  resp("103 Early Hints", "HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload; as=style\r\n\r\n");
  resp("101 Switching Protocols",
       "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n");
  resp("HTTP/1.0 with Content-Length", with_body("HTTP/1.0 200 OK\r\nServer: old\r\n", "hello"));
  resp("HTTP/1.0 keep-alive", with_body("HTTP/1.0 200 OK\r\nConnection: keep-alive\r\n", "hello"));
  resp("HTTP/1.0 chunked, no keep-alive",
       "HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + chunks({"abc"}));
  resp("HTTP/1.1 Connection: close", with_body("HTTP/1.1 200 OK\r\nConnection: close\r\n", "bye"));
  resp("until close, HTTP/1.1",
       "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nsome body\r\n\r\nand more");
  resp("until close, HTTP/1.0", "HTTP/1.0 200 OK\r\n\r\n" + binary(3000));
  resp("until close, HTTP/1.0 keep-alive", "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\n\r\nabc");
  resp("until close, no body", "HTTP/1.1 200 OK\r\nX-A: 1\r\n\r\n");
  resp("gzip, chunked",
       "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nTransfer-Encoding: gzip, chunked\r\n\r\n" +
           chunks({"\x1f\x8b\x08", "\x00\x01"s}));
  resp("gzip then chunked in two fields",
       "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n" + chunks({"abc"}));
  resp("gzip alone: until close", "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n3\r\nabc\r\n0\r\n\r\n");
  resp("chunked, gzip: until close", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\nabc");
  resp("empty Transfer-Encoding: until close", "HTTP/1.1 200 OK\r\nTransfer-Encoding:\r\n\r\nabc");
  resp("empty reason", with_body("HTTP/1.1 500 \r\n", "oops"));
  resp("reason with spaces, tabs and obs-text", with_body("HTTP/1.1 200 Tr\xc3\xa8s  bien\t! \r\n", "ok"));
  resp("unregistered status", with_body("HTTP/1.1 299 Whatever\r\n", "x"));
  resp("many fields", with_body("HTTP/1.1 200 OK\r\n" + many_fields(100, "Set-Cookie-"), "{}"));
  resp("a long field value",
       with_body("HTTP/1.1 200 OK\r\nX-Long: " + std::string(8000, 'v') + "\r\n", "{}"));
  resp("mixed-case names",
       with_body("HTTP/1.1 200 OK\r\nCONTENT-type: text/plain\r\nx-Request-ID: 1\r\n", "a"));
  resp("mixed-case framing names", "HTTP/1.1 200 OK\r\ntransfer-ENCODING: Chunked\r\n\r\n" + chunks({"abc"}));
  head("HEAD: Content-Length",
       "HTTP/1.1 200 OK\r\nContent-Length: 1234\r\nContent-Type: application/json\r\n\r\n");
  head("HEAD: chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n");
  head("HEAD: no framing", "HTTP/1.1 200 OK\r\nX-A: 1\r\n\r\n");
  head("HEAD: HTTP/1.0 keep-alive", "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 9\r\n\r\n");
  return c;
}

// Both parsers must reject these.
std::vector<Case> malformed() {
  std::vector<Case> c;
  const auto req = [&](std::string name, std::string text) {
    c.push_back({std::move(name), Kind::request, std::move(text)});
  };
  const auto resp = [&](std::string name, std::string text) {
    c.push_back({std::move(name), Kind::response, std::move(text)});
  };

  // ---- request line
  req("space before the method", " GET / HTTP/1.1\r\n\r\n");
  req("separator in the method", "G@T / HTTP/1.1\r\n\r\n");
  req("tab after the method", "GET\t/ HTTP/1.1\r\n\r\n");
  req("two spaces before the target", "GET  / HTTP/1.1\r\n\r\n");
  req("no version", "GET /\r\n\r\n");
  req("no target", "GET HTTP/1.1\r\n\r\n");
  req("version 1.x", "GET / HTTP/1.x\r\n\r\n");
  req("lower-case http", "GET / http/1.1\r\n\r\n");
  req("space after the version", "GET / HTTP/1.1 \r\n\r\n");
  req("version 1.10", "GET / HTTP/1.10\r\n\r\n");
  req("control character in the target",
      "GET /a\x01"
      "b HTTP/1.1\r\n\r\n");
  req("DEL in the target", "GET /a\x7f HTTP/1.1\r\n\r\n");
  req("tab in the target", "GET /a\tb HTTP/1.1\r\n\r\n");
  req("bare LF lines", "GET / HTTP/1.1\nHost: x\n\n");
  req("bare LF after a field", "GET / HTTP/1.1\r\nHost: x\nX-A: 1\r\n\r\n");
  req("bare LF at the end of the head", "GET / HTTP/1.1\r\nHost: x\r\n\n");
  req("bare CR in the request line", "GET / HTTP/1.1\r\r\nHost: x\r\n\r\n");
  req("leading LF", "\nGET / HTTP/1.1\r\n\r\n");
  // ---- field lines
  req("bare CR in a value", "GET / HTTP/1.1\r\nHost: a\rb\r\n\r\n");
  req("bare CR in a name", "GET / HTTP/1.1\r\nHo\rst: x\r\n\r\n");
  req("space before the colon", "GET / HTTP/1.1\r\nHost : x\r\n\r\n");
  req("tab before the colon", "POST / HTTP/1.1\r\nContent-Length\t: 5\r\n\r\nhello");
  req("space inside a name", "GET / HTTP/1.1\r\nX A: 1\r\n\r\n");
  req("empty name", "GET / HTTP/1.1\r\n: x\r\n\r\n");
  req("no colon", "GET / HTTP/1.1\r\nno colon\r\n\r\n");
  req("separators in a name", "GET / HTTP/1.1\r\nX[A]: 1\r\n\r\n");
  req("obs-text in a name", "GET / HTTP/1.1\r\nX\x80Y: 1\r\n\r\n");
  req("fold of the first field line", "GET / HTTP/1.1\r\n Host: x\r\n\r\n");
  req("NUL in a value", "GET / HTTP/1.1\r\nX-A: a\0b\r\n\r\n"s);
  req("control character in a value",
      "GET / HTTP/1.1\r\nX-A: a\x01"
      "b\r\n\r\n");
  req("DEL in a value",
      "GET / HTTP/1.1\r\nX-A: a\x7f"
      "b\r\n\r\n");
  req("a head over the limit", "GET / HTTP/1.1\r\nX-Big: " + std::string(20000, 'a') + "\r\n\r\n");
  req("an unfinished head over the limit", "GET / HTTP/1.1\r\nX-Big: " + std::string(20000, 'a'));
  // ---- Content-Length
  for (const char* v : {"+5", "-1", "0x5", "five", "5 5", "", "5.0", "5;", "18446744073709551616"})
    req("Content-Length " + testing::PrintToString(std::string(v)),
        "POST / HTTP/1.1\r\nContent-Length: " + std::string(v) + "\r\n\r\nhello");
  req("two different Content-Lengths",
      "POST / HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!");
  req("a list of different Content-Lengths", "POST / HTTP/1.1\r\nContent-Length: 5, 6\r\n\r\nhello!");
  req("Content-Length then Transfer-Encoding",
      "POST / HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n");
  req("Transfer-Encoding then Content-Length",
      "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n3\r\nabc\r\n0\r\n\r\n");
  req("chunked in two fields",
      "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n");
  // ---- chunked bodies
  const std::string te = "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n";
  req("chunk size g", te + "g\r\nhello\r\n0\r\n\r\n");
  req("chunk size -5", te + "-5\r\nhello\r\n0\r\n\r\n");
  req("chunk size 0x5", te + "0x5\r\nhello\r\n0\r\n\r\n");
  req("chunk size +5", te + "+5\r\nhello\r\n0\r\n\r\n");
  req("space before the chunk size", te + " 5\r\nhello\r\n0\r\n\r\n");
  req("empty chunk size", te + "\r\nhello\r\n0\r\n\r\n");
  req("extension without size", te + ";x\r\nhello\r\n0\r\n\r\n");
  req("chunk size overflows", te + "FFFFFFFFFFFFFFFFF\r\nhello\r\n0\r\n\r\n");
  req("chunk data longer than its size", te + "3\r\nhello\r\n0\r\n\r\n");
  req("no CRLF after chunk data", te + "5\r\nhelloX\r\n0\r\n\r\n");
  req("bare LF after chunk data", te + "5\r\nhello\n0\r\n\r\n");
  req("bare LF after the chunk size", te + "5\nhello\r\n0\r\n\r\n");
  req("bare LF in an extension", te + "5;a\nb\r\nhello\r\n0\r\n\r\n");
  req("bare CR in an extension", te + "5;a\rb\r\nhello\r\n0\r\n\r\n");
  req("bare LF after a trailer", te + "0\r\nX-T: 1\n\r\n");
  req("bare LF ending the trailers", te + "0\r\n\n");
  req("bare CR in a trailer", te + "0\r\nX-T: a\rb\r\n\r\n");
  req("space after the chunk size", te + "5 \r\nhello\r\n0\r\n\r\n");
  req("tab after the chunk size", te + "5\t\r\nhello\r\n0\r\n\r\n");
  req("space after the last chunk's size", te + "5\r\nhello\r\n0 \r\n\r\n");
  req("trailer without a colon", te + "0\r\nno colon\r\n\r\n");
  req("space before a trailer's colon", te + "0\r\nX-T : 1\r\n\r\n");
  req("trailer with an empty name", te + "0\r\n: x\r\n\r\n");
  req("control character in a trailer", te + "0\r\nX-T: a\x01"
                                             "b\r\n\r\n");
  req("NUL in a trailer", te + "0\r\nX-T: a\0b\r\n\r\n"s);
  // ---- truncated
  req("truncated head", "GET / HTTP/1.1\r\nHost: x\r\n");
  req("truncated request line", "GET / HTTP/1.1");
  req("truncated Content-Length body", "POST / HTTP/1.1\r\nContent-Length: 10\r\n\r\nabc");
  req("truncated chunk", te + "5\r\nhel");
  req("no last chunk", te + "5\r\nhello\r\n");
  req("unended trailers", te + "0\r\nX-T: 1\r\n");
  req("only CRLFs", "\r\n\r\n");

  // ---- status line
  resp("HTTP/2.0", "HTTP/2.0 200 OK\r\nContent-Length: 0\r\n\r\n");
  resp("HTTP/0.9", "HTTP/0.9 200 OK\r\nContent-Length: 0\r\n\r\n");
  resp("lower-case http", "http/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
  resp("HTTP/1", "HTTP/1 200 OK\r\n\r\n");
  resp("no space after the version", "HTTP/1.1200 OK\r\n\r\n");
  resp("two spaces before the status", "HTTP/1.1  200 OK\r\n\r\n");
  resp("status 20x", "HTTP/1.1 20x OK\r\n\r\n");
  resp("status 2000", "HTTP/1.1 2000 OK\r\n\r\n");
  resp("status -20", "HTTP/1.1 -20 OK\r\n\r\n");
  resp("two-digit status", "HTTP/1.1 20\r\n\r\n");
  resp("control character in the reason", "HTTP/1.1 200 O\x01K\r\nContent-Length: 0\r\n\r\n");
  resp("bare LF after the status line", "HTTP/1.1 200 OK\nContent-Length: 0\r\n\r\n");
  resp("leading CRLF", "\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
  // ---- fields and framing
  resp("space before the colon", "HTTP/1.1 200 OK\r\nContent-Length : 0\r\n\r\n");
  resp("control character in a value",
       "HTTP/1.1 204 No Content\r\nX-A: a\x0b"
       "z\r\n\r\n");
  resp("Content-Length abc", "HTTP/1.1 200 OK\r\nContent-Length: abc\r\n\r\n");
  resp("two different Content-Lengths",
       "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nok!");
  resp("Content-Length then Transfer-Encoding",
       "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n");
  resp("Transfer-Encoding then Content-Length",
       "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n3\r\nabc\r\n0\r\n\r\n");
  resp("chunked in two fields",
       "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n");
  resp("bad chunk size", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n");
  resp("bare CR in a trailer",
       "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\nX-T: \rb\r\n\r\n");
  resp("space after the chunk size",
       "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3 \r\nabc\r\n0\r\n\r\n");
  resp("trailer without a colon",
       "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\nX-T\r\n\r\n");
  resp("DEL in a trailer",
       "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\nX-T: \x7f\r\n\r\n");
  resp("no CRLF after chunk data",
       "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcd\r\n0\r\n\r\n");
  resp("truncated Content-Length body", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc");
  resp("no last chunk", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n");
  resp("truncated head", "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n");
  return c;
}

// ---- where the two parsers disagree, on purpose -------------------------------------------------

// The rules of http1_parser.hpp's header comment (quoted) by which ours rejects what Beast accepts,
// and two that only its code and tests state.
constexpr std::string_view kRuleObsFold = "obs-fold (a line starting with a space or tab) is an error";
constexpr std::string_view kRuleContentLength = "Content-Length is digits only, once";
constexpr std::string_view kRuleRequestChunked =
    "a request's Transfer-Encoding must be exactly `chunked` (and not in HTTP/1.0)";
constexpr std::string_view kRuleChunkedOnce =
    "chunked at most once (RFC 9112 section 6.1; on_field's comment, AResponseChunkedTwiceIsAnError)";
constexpr std::string_view kRuleChunkLine =
    "a chunk-size line is at most 4096 bytes (kMaxChunkLine, "
    "AChunkLineLongerThan4096BytesWithoutLfIsBadChunk)";

struct StricterCase {
  Case c;
  std::string_view rule;
  beast::http::error ours;  // the error ours reports
};

std::vector<StricterCase> stricter() {
  const auto req = [](std::string name, std::string text, std::string_view rule, beast::http::error e) {
    return StricterCase{{std::move(name), Kind::request, std::move(text)}, rule, e};
  };
  const auto resp = [](std::string name, std::string text, std::string_view rule, beast::http::error e) {
    return StricterCase{{std::move(name), Kind::response, std::move(text)}, rule, e};
  };
  return {
      req("obs-fold with a space", "GET / HTTP/1.1\r\nHost: x\r\nX-A: 1\r\n 2\r\n\r\n", kRuleObsFold,
          beast::http::error::bad_field),
      req("obs-fold with a tab", "GET / HTTP/1.1\r\nX-A: 1\r\n\t2\r\nHost: x\r\n\r\n", kRuleObsFold,
          beast::http::error::bad_field),
      // Beast reads 5 through the fold; ours stops at the empty value before it sees the fold.
      req("Content-Length folded onto the next line", "POST / HTTP/1.1\r\nContent-Length:\r\n 5\r\n\r\nhello",
          kRuleContentLength, beast::http::error::bad_content_length),
      resp("obs-fold in a response", "HTTP/1.1 200 OK\r\nX-A: 1\r\n\t2\r\nContent-Length: 0\r\n\r\n",
           kRuleObsFold, beast::http::error::bad_field),
      req("obs-fold in the trailers",
          "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\nX-T: 1\r\n 2\r\n\r\n",
          kRuleObsFold, beast::http::error::bad_field),
      resp("obs-fold in a response's trailers",
           "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\nX-T: 1\r\n\t2\r\n\r\n",
           kRuleObsFold, beast::http::error::bad_field),
      req("Content-Length list of equal values", "POST / HTTP/1.1\r\nContent-Length: 5, 5\r\n\r\nhello",
          kRuleContentLength, beast::http::error::bad_content_length),
      req("Content-Length list without spaces", "POST / HTTP/1.1\r\nContent-Length: 5,5\r\n\r\nhello",
          kRuleContentLength, beast::http::error::bad_content_length),
      req("two equal Content-Lengths",
          "POST / HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\nhello", kRuleContentLength,
          beast::http::error::multiple_content_length),
      resp("response Content-Length list", "HTTP/1.1 200 OK\r\nContent-Length: 2, 2\r\n\r\nok",
           kRuleContentLength, beast::http::error::bad_content_length),
      resp("response two equal Content-Lengths",
           "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nok", kRuleContentLength,
           beast::http::error::multiple_content_length),
      req("request gzip, chunked",
          "POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
          kRuleRequestChunked, beast::http::error::bad_transfer_encoding),
      req("request gzip (no body for Beast)", "POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n",
          kRuleRequestChunked, beast::http::error::bad_transfer_encoding),
      req("request identity", "POST / HTTP/1.1\r\nTransfer-Encoding: identity\r\n\r\n", kRuleRequestChunked,
          beast::http::error::bad_transfer_encoding),
      req("request empty Transfer-Encoding", "POST / HTTP/1.1\r\nTransfer-Encoding:\r\n\r\n",
          kRuleRequestChunked, beast::http::error::bad_transfer_encoding),
      req("request chunked, gzip", "POST / HTTP/1.1\r\nTransfer-Encoding: chunked, gzip\r\n\r\n",
          kRuleRequestChunked, beast::http::error::bad_transfer_encoding),
      req("request chunked, chunked", "POST / HTTP/1.1\r\nTransfer-Encoding: chunked, chunked\r\n\r\n",
          kRuleRequestChunked, beast::http::error::bad_transfer_encoding),
      req("HTTP/1.0 request chunked",
          "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n", kRuleRequestChunked,
          beast::http::error::bad_transfer_encoding),
      resp("response chunked, chunked",
           "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, chunked\r\n\r\n0\r\n\r\n", kRuleChunkedOnce,
           beast::http::error::bad_transfer_encoding),
      resp("response chunked, gzip, chunked",
           "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip, chunked\r\n\r\nabc", kRuleChunkedOnce,
           beast::http::error::bad_transfer_encoding),
      req("a 5000-byte chunk extension",
          "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5;" + std::string(5000, 'x') +
              "\r\nhello\r\n0\r\n\r\n",
          kRuleChunkLine, beast::http::error::bad_chunk),
  };
}

// Ours accepts, Beast rejects: each on purpose, with where it is stated.
struct LenientCase {
  Case c;
  std::string_view why;
  std::string body;  // what ours reads
};

std::vector<LenientCase> lenient() {
  constexpr std::string_view kEmptyLines =
      "RFC 9112 section 2.2: empty lines before a request line are ignored "
      "(LeadingCrlfsBeforeARequestLineAreSkipped)";
  constexpr std::string_view kNoReason =
      "a status line without the SP after the code is accepted (AStatusLineWithoutReasonIsAccepted)";
  constexpr std::string_view kMinor =
      "RFC 9110 section 2.5: a higher HTTP/1 minor version is read as 1.1 (parse_status_line takes 1.0 to "
      "1.9)";
  constexpr std::string_view kVersion =
      "the parser reads any d.d; client_session's validate_head rejects all but 1.0 and 1.1 (400)";
  constexpr std::string_view kLastCoding =
      "a response whose last coding is not chunked is read until the connection closes "
      "(RFC 9112 section 6.3; AResponseChunkedThenGzipIsReadUntilClose)";
  constexpr std::string_view kExtension = "an optional extension after ';' is skipped";
  constexpr std::string_view kTrailers =
      "trailers are read and dropped: a framing field there frames nothing (RFC 9110 section 6.5.1)";
  const auto req = [](std::string name, std::string text, std::string_view why, std::string body = "") {
    return LenientCase{{std::move(name), Kind::request, std::move(text)}, why, std::move(body)};
  };
  const auto resp = [](std::string name, std::string text, std::string_view why, std::string body = "") {
    return LenientCase{{std::move(name), Kind::response, std::move(text)}, why, std::move(body)};
  };
  const std::string te = "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n";
  return {
      req("a CRLF before the request line", "\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n", kEmptyLines),
      req("CRLFs before a request with a body", "\r\n\r\nPOST / HTTP/1.1\r\nContent-Length: 2\r\n\r\nhi",
          kEmptyLines, "hi"),
      resp("204 without SP after the code", "HTTP/1.1 204\r\n\r\n", kNoReason),
      resp("200 without SP after the code", "HTTP/1.1 200\r\nContent-Length: 2\r\n\r\nok", kNoReason, "ok"),
      resp("HTTP/1.2 response", "HTTP/1.2 200 OK\r\nContent-Length: 2\r\n\r\nok", kMinor, "ok"),
      resp("HTTP/1.9 response", "HTTP/1.9 200 OK\r\nContent-Length: 2\r\n\r\nok", kMinor, "ok"),
      req("HTTP/1.2 request", "GET / HTTP/1.2\r\nHost: x\r\n\r\n", kVersion),
      req("HTTP/2.0 request", "GET / HTTP/2.0\r\nHost: x\r\n\r\n", kVersion),
      req("HTTP/0.9 request", "GET / HTTP/0.9\r\nHost: x\r\n\r\n", kVersion),
      resp("chunked then gzip in two fields",
           "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: gzip\r\n\r\nabc", kLastCoding,
           "abc"),
      req("extension name '@'", te + "5;@\r\nhello\r\n0\r\n\r\n", kExtension, "hello"),
      req("extension with a space inside", te + "5;a b\r\nhello\r\n0\r\n\r\n", kExtension, "hello"),
      req("extension with no value after '='", te + "5;a=\r\nhello\r\n0\r\n\r\n", kExtension, "hello"),
      req("extension with no name", te + "5;=x\r\nhello\r\n0\r\n\r\n", kExtension, "hello"),
      req("extension with an unterminated quote", te + "5;a=\"b\r\nhello\r\n0\r\n\r\n", kExtension, "hello"),
      req("extension on the last chunk with a bad value", te + "5\r\nhello\r\n0;a=[]\r\n\r\n", kExtension,
          "hello"),
      req("Content-Length in the trailers", te + "5\r\nhello\r\n0\r\nContent-Length: 5\r\n\r\n", kTrailers,
          "hello"),
      req("Transfer-Encoding in the trailers", te + "5\r\nhello\r\n0\r\nTransfer-Encoding: chunked\r\n\r\n",
          kTrailers, "hello"),
  };
}

// Both accept and agree but on keep-alive.
struct KeepAliveCase {
  Case c;
  bool ours;  // Beast says the opposite
  std::string_view why;
};

std::vector<KeepAliveCase> keep_alive_divergences() {
  constexpr std::string_view kTe10 =
      "one with Transfer-Encoding in HTTP/1.0 is not kept alive (RFC 9112 section 6.1)";
  constexpr std::string_view kCloseWins =
      "close wins over keep-alive (RFC 9112 section 9.3; KeepAliveFollowsTheVersionAndConnection); "
      "Beast's HTTP/1.0 branch looks at keep-alive only";
  constexpr std::string_view kProxyConnection =
      "Proxy-Connection is no HTTP field: RFC 9112 section 9.3 decides on Connection alone; Beast honours it";
  const auto req = [](std::string name, std::string text, bool ours, std::string_view why) {
    return KeepAliveCase{{std::move(name), Kind::request, std::move(text)}, ours, why};
  };
  const auto resp = [](std::string name, std::string text, bool ours, std::string_view why) {
    return KeepAliveCase{{std::move(name), Kind::response, std::move(text)}, ours, why};
  };
  return {
      resp("HTTP/1.0 keep-alive chunked response",
           "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nTransfer-Encoding: "
           "chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
           false, kTe10),
      req("HTTP/1.0 keep-alive, close", "GET / HTTP/1.0\r\nConnection: keep-alive, close\r\n\r\n", false,
          kCloseWins),
      resp("HTTP/1.0 close, keep-alive response",
           "HTTP/1.0 200 OK\r\nConnection: close, keep-alive\r\nContent-Length: 0\r\n\r\n", false,
           kCloseWins),
      req("HTTP/1.1 Proxy-Connection: close", "GET / HTTP/1.1\r\nProxy-Connection: close\r\n\r\n", true,
          kProxyConnection),
      req("HTTP/1.0 Proxy-Connection: keep-alive", "GET / HTTP/1.0\r\nProxy-Connection: keep-alive\r\n\r\n",
          false, kProxyConnection),
  };
}

std::vector<Case> every_case() {
  std::vector<Case> all = well_formed();
  for (Case& c : malformed()) all.push_back(std::move(c));
  for (StricterCase& s : stricter()) all.push_back(std::move(s.c));
  for (LenientCase& l : lenient()) all.push_back(std::move(l.c));
  for (KeepAliveCase& k : keep_alive_divergences()) all.push_back(std::move(k.c));
  return all;
}

std::string label(const Case& c) { return c.name + ": " + show(c.text); }

// ---- ours against Beast --------------------------------------------------------------------------

TEST(Http1Differential, WellFormedMessagesParseAsBeastParsesThem) {
  const std::vector<Case> cases = well_formed();
  ASSERT_GE(cases.size(), 60u);
  for (const Case& c : cases) {
    SCOPED_TRACE(label(c));
    const Parsed mine = ours(c), theirs = beast_parse(c);
    ASSERT_TRUE(theirs.ok) << "Beast: " << theirs.ec.message() << " (the corpus must be well-formed)";
    EXPECT_TRUE(mine.ok) << mine.ec.message();
    EXPECT_EQ(differences(mine, theirs, "ours", "Beast", false), "");
    EXPECT_EQ(mine.used, c.text.size());
    if (c.kind != Kind::request) {  // the same in view mode
      EXPECT_EQ(differences(ours(c, BodyMode::views), mine, "views", "buffer", true), "");
    }
  }
}

TEST(Http1Differential, MalformedMessagesAreRejectedByBoth) {
  const std::vector<Case> cases = malformed();
  ASSERT_GE(cases.size(), 40u);
  for (const Case& c : cases) {
    SCOPED_TRACE(label(c));
    const Parsed mine = ours(c), theirs = beast_parse(c);
    EXPECT_FALSE(theirs.ok) << "Beast accepts it: not malformed";
    EXPECT_FALSE(mine.ok) << "ours accepts what Beast rejects (" << theirs.ec.message() << ")";
  }
}

TEST(Http1Differential, OursRejectsWhatBeastAcceptsOnlyByADeliberateRule) {
  for (const StricterCase& s : stricter()) {
    SCOPED_TRACE(label(s.c) + " [rule: " + std::string(s.rule) + "]");
    const Parsed mine = ours(s.c), theirs = beast_parse(s.c);
    EXPECT_TRUE(theirs.ok) << "Beast: " << theirs.ec.message() << " (then it belongs in malformed())";
    EXPECT_EQ(theirs.used, s.c.text.size());
    EXPECT_FALSE(mine.ok);
    EXPECT_EQ(mine.ec, s.ours) << mine.ec.message();
  }
}

TEST(Http1Differential, OursAcceptsWhatBeastRejectsOnlyWhereListed) {
  for (const LenientCase& l : lenient()) {
    SCOPED_TRACE(label(l.c) + " [" + std::string(l.why) + "]");
    const Parsed mine = ours(l.c), theirs = beast_parse(l.c);
    EXPECT_FALSE(theirs.ok) << "Beast accepts it too (then it belongs in well_formed())";
    ASSERT_TRUE(mine.ok) << mine.ec.message();
    EXPECT_EQ(mine.used, l.c.text.size());
    EXPECT_EQ(mine.body, l.body);
  }
}

TEST(Http1Differential, KeepAliveDiffersOnlyWhereListed) {
  for (const KeepAliveCase& k : keep_alive_divergences()) {
    SCOPED_TRACE(label(k.c) + " [" + std::string(k.why) + "]");
    const Parsed mine = ours(k.c), theirs = beast_parse(k.c);
    ASSERT_TRUE(theirs.ok) << theirs.ec.message();
    ASSERT_TRUE(mine.ok) << mine.ec.message();
    EXPECT_EQ(differences(mine, theirs, "ours", "Beast", false, /*keep_alive=*/false), "");
    EXPECT_EQ(mine.keep_alive, k.ours);
    EXPECT_EQ(theirs.keep_alive, !k.ours);
  }
}

// Messages back to back on one connection: each parser stops at the end of each message, and
// the next one starts there.
TEST(Http1Differential, PipelinedMessagesEndWhereBeastEndsThem) {
  for (const Kind kind : {Kind::request, Kind::response}) {
    std::vector<Case> cases;
    for (Case& c : well_formed()) {
      // A body read until close is the last message; HEAD answers need skip set per message.
      if (c.kind == kind && !beast_parse(c).by_eof) cases.push_back(std::move(c));
    }
    ASSERT_GE(cases.size(), 25u);
    std::string stream;
    for (const Case& c : cases) stream += c.text;
    std::size_t at = 0;
    for (const Case& c : cases) {
      SCOPED_TRACE(label(c));
      const Case rest{c.name, c.kind, stream.substr(at)};
      const Parsed mine = ours(rest), theirs = beast_parse(rest);
      ASSERT_TRUE(mine.ok) << mine.ec.message();
      ASSERT_TRUE(theirs.ok) << theirs.ec.message();
      EXPECT_EQ(differences(mine, theirs, "ours", "Beast", false), "");
      ASSERT_EQ(mine.used, c.text.size());
      at += mine.used;
    }
    EXPECT_EQ(at, stream.size());
  }
}

// ---- random splits -------------------------------------------------------------------------------

// Sizes of the reads that bring `size` bytes: byte by byte on the first trial, then pieces of a
// random size up to a random bound (small bounds often, so 1-byte pieces come up in most trials).
std::vector<std::size_t> random_pieces(std::size_t size, std::mt19937& rng, int trial) {
  std::vector<std::size_t> pieces;
  if (trial == 0) {
    pieces.assign(size, 1);
    return pieces;
  }
  const std::size_t bounds[] = {2, 3, 8, 32, 256, std::max<std::size_t>(size, 1)};
  const std::size_t bound = bounds[rng() % std::size(bounds)];
  for (std::size_t left = size; left > 0;) {
    const std::size_t n = std::min<std::size_t>(left, 1 + rng() % bound);
    pieces.push_back(n);
    left -= n;
  }
  EXPECT_EQ(std::accumulate(pieces.begin(), pieces.end(), std::size_t{0}), size);
  return pieces;
}

std::string show_pieces(const std::vector<std::size_t>& pieces) {
  std::string out;
  for (std::size_t i = 0; i < pieces.size() && i < 40; ++i) out += (i ? "," : "") + std::to_string(pieces[i]);
  return pieces.size() > 40 ? out + ",... (" + std::to_string(pieces.size()) + " reads)" : out;
}

bool has_bare_lf(std::string_view text) {
  for (std::size_t i = 0; i < text.size(); ++i)
    if (text[i] == '\n' && (i == 0 || text[i - 1] != '\r')) return true;
  return false;
}

TEST(Http1Differential, EveryMessageInRandomPiecesParsesAsInOne) {
  const std::vector<Case> cases = every_case();
  ASSERT_GE(cases.size(), 150u);
  std::mt19937 rng(20240917);  // fixed: a failure names the case and the pieces, and repeats
  std::size_t splits = 0, failures = 0, early_bare_lf = 0;
  for (const Case& c : cases) {
    const Parsed whole = ours(c);
    for (int trial = 0; trial < kSplitsPerMessage && failures < 20; ++trial) {
      const std::vector<std::size_t> pieces = random_pieces(c.text.size(), rng, trial);
      // Responses alternate between a body buffer and body views.
      const BodyMode mode = c.kind != Kind::request && trial % 2 == 1 ? BodyMode::views : BodyMode::buffer;
      const Parsed split = ours(c, pieces, mode);
      std::string diff = differences(split, whole, "in pieces", "in one", true);
      ++splits;
      // "A head of bare-LF lines fails at once instead of waiting for a CRLF blank line": a
      // head with a bare LF and another error may fail on the LF before its end has arrived.
      if (!diff.empty() && !split.ok && !whole.ok && split.ec == beast::http::error::bad_line_ending &&
          has_bare_lf(c.text)) {
        ++early_bare_lf;
        diff.clear();
      }
      if (!diff.empty()) {
        ++failures;
        ADD_FAILURE() << label(c) << "\n  reads " << show_pieces(pieces)
                      << (mode == BodyMode::views ? " (views)" : "") << ": " << diff;
      }
    }
  }
  EXPECT_EQ(splits, cases.size() * kSplitsPerMessage);
  std::printf("[ differential ] %zu corpus cases, %zu random splittings (%zu failed early on a bare LF)\n",
              cases.size(), splits, early_bare_lf);
}

// ---- the comparison itself -----------------------------------------------------------------------

// Each kind of difference is seen: the tests above cannot pass because the comparison is blind.
TEST(Http1Differential, TheComparisonSeesEveryKindOfDifference) {
  const auto req = [](std::string text) { return Case{"x", Kind::request, std::move(text)}; };
  const Case base = req("POST /a HTTP/1.1\r\nX-A: 1\r\nX-B: 2\r\nContent-Length: 3\r\n\r\nabc");
  ASSERT_EQ(differences(ours(base), beast_parse(base), "ours", "Beast", false), "");
  for (const std::string& other : {
           "PUT /a HTTP/1.1\r\nX-A: 1\r\nX-B: 2\r\nContent-Length: 3\r\n\r\nabc"s,   // method
           "POST /b HTTP/1.1\r\nX-A: 1\r\nX-B: 2\r\nContent-Length: 3\r\n\r\nabc"s,  // target
           "POST /a HTTP/1.0\r\nX-A: 1\r\nX-B: 2\r\nContent-Length: 3\r\n\r\nabc"s,  // version, keep-alive
           "POST /a HTTP/1.1\r\nX-B: 2\r\nX-A: 1\r\nContent-Length: 3\r\n\r\nabc"s,  // field order
           "POST /a HTTP/1.1\r\nX-A: 1\r\nX-B: 3\r\nContent-Length: 3\r\n\r\nabc"s,  // a value
           "POST /a HTTP/1.1\r\nx-a: 1\r\nX-B: 2\r\nContent-Length: 3\r\n\r\nabc"s,  // a name's case
           "POST /a HTTP/1.1\r\nX-A: 1\r\nX-B: 2\r\nContent-Length: 3\r\n\r\nabd"s,  // the body
           "POST /a HTTP/1.1\r\nX-A: 1\r\nX-B: 2\r\nConnection: close\r\nContent-Length: 3\r\n\r\nabc"s,
           "POST /a HTTP/1.1\r\nX-A: 1\r\nX-B: 2\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"s,
           "POST /a HTTP/1.1\r\nX-A: 1\r\nX-B: 2\r\nContent-Length: 4\r\n\r\nabc"s,  // incomplete
       }) {
    SCOPED_TRACE(show(other));
    EXPECT_NE(differences(ours(base), beast_parse(req(other)), "ours", "Beast", false), "");
    EXPECT_NE(differences(ours(req(other)), ours(base), "a", "b", true), "");
  }
  // Responses: status, reason, a body read until close against one of the same bytes with a length.
  const auto resp = [](std::string text) { return Case{"x", Kind::response, std::move(text)}; };
  const Case ok = resp("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi");
  ASSERT_EQ(differences(ours(ok), beast_parse(ok), "ours", "Beast", false), "");
  for (const std::string& other :
       {"HTTP/1.1 201 OK\r\nContent-Length: 2\r\n\r\nhi"s,
        "HTTP/1.1 200 Fine\r\nContent-Length: 2\r\n\r\nhi"s, "HTTP/1.1 200 OK\r\n\r\nhi"s}) {
    SCOPED_TRACE(show(other));
    EXPECT_NE(differences(ours(ok), beast_parse(resp(other)), "ours", "Beast", false), "");
  }
  // Two failures: the same only if the errors are, when asked.
  const Parsed bad_field = ours(req("GET / HTTP/1.1\r\nHost : x\r\n\r\n"));
  const Parsed bad_method = ours(req(" GET / HTTP/1.1\r\n\r\n"));
  EXPECT_NE(differences(bad_field, bad_method, "a", "b", true), "");
  EXPECT_EQ(differences(bad_field, bad_method, "a", "b", false), "");
}

// ---- disagreements that were bugs in our parser, fixed (their cases are in the lists above too) ----

// RFC 9112 section 7.1: chunk = chunk-size [ chunk-ext ] CRLF, and whitespace (BWS) is allowed
// only before a ';'. Beast rejects a size followed by whitespace and no extension.
TEST(Http1Differential, WhitespaceAfterAChunkSizeWithoutAnExtensionIsRejected) {
  const std::string te = "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n";
  for (const std::string& body :
       {"5 \r\nhello\r\n0\r\n\r\n"s, "5\t\r\nhello\r\n0\r\n\r\n"s, "5\r\nhello\r\n0 \r\n\r\n"s}) {
    const Case c{"bws", Kind::request, te + body};
    SCOPED_TRACE(label(c));
    EXPECT_FALSE(beast_parse(c).ok);
    EXPECT_EQ(ours(c).ec, beast::http::error::bad_chunk);
  }
}

// Trailer lines are field lines (RFC 9112 section 7.1.2): the header's rules for field lines
// (a token then ':', no obs-fold, no control character) apply to them too. Beast rejects all
// but the fold, which it accepts (as it does in a head).
TEST(Http1Differential, TrailerLinesAreCheckedAsFieldLines) {
  const std::string te = "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n";
  for (const std::string& trailers : {"no colon\r\n\r\n"s, "X-T : 1\r\n\r\n"s, ": x\r\n\r\n"s,
                                      "X-T: a\x01"
                                      "b\r\n\r\n"s,
                                      "X-T: a\0b\r\n\r\n"s}) {
    const Case c{"trailer", Kind::request, te + trailers};
    SCOPED_TRACE(label(c));
    EXPECT_FALSE(beast_parse(c).ok);
    EXPECT_FALSE(ours(c).ok);
  }
  const Case fold{"folded trailer", Kind::request, te + "X-T: 1\r\n 2\r\n\r\n"};
  EXPECT_TRUE(beast_parse(fold).ok);
  EXPECT_EQ(ours(fold).ec, beast::http::error::bad_field);  // kRuleObsFold
}

// ---- a disagreement left as it is --------------------------------------------------------------

// Connection = #connection-option, a list of tokens (RFC 9110 section 7.6.1); Beast rejects a
// value that is not one (bad_value), in Connection and in Proxy-Connection.
TEST(Http1Differential, AConnectionValueThatIsNoTokenListIsRejected) {
  GTEST_SKIP() << "parser gap: ours accepts a Connection value that is not a token list; Beast rejects it";
  for (const std::string_view value :
       {"Connection: keep alive", "Connection: close;x", "Connection: \"close\"", "Proxy-Connection: a b"}) {
    const Case c{"connection", Kind::request, "GET / HTTP/1.1\r\n" + std::string(value) + "\r\n\r\n"};
    SCOPED_TRACE(label(c));
    EXPECT_EQ(beast_parse(c).ec, beast::http::error::bad_value);
    EXPECT_FALSE(ours(c).ok);
  }
}

}  // namespace http1_differential_test
}  // namespace smartlb::http1
