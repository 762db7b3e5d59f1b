#pragma once
// What the trace tests share (tests/net/tracing_test.cpp, trace_export_test.cpp): an in-process
// OTLP/HTTP receiver (a mock backend that records what it was sent) whose JSON the tests decode,
// smartlb with a Tracer exporting to it, and readers of an OTLP span's attributes.
#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "http_client.hpp"
#include "mock_backend.hpp"
#include "proxy_harness.hpp"
#include "record_observer.hpp"
#include "smartlb/tracing/tracer.hpp"

// In a namespace of their own: kChat, kBody and ok() are also names of other tests' helpers, and
// inline definitions of one name must be one definition.
namespace smartlb::testing::traces {

inline const std::string kChat = "/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21";
inline const std::string kBody = R"({"messages":[{"role":"user","content":"PROMPT-SECRET-123"}]})";
inline const std::string kAnswer =
    R"({"id":"chatcmpl-1","model":"gpt-4o-2024-08-06","choices":[{"index":0,"finish_reason":"stop",)"
    R"("message":{"role":"assistant","content":"COMPLETION-SECRET-456"}}],)"
    R"("usage":{"prompt_tokens":7,"completion_tokens":3,"total_tokens":10}})";
inline constexpr std::string_view kClientParent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

inline MockReply ok() { return {200, {{"content-type", "application/json"}}, kAnswer}; }

// An OTLP/HTTP receiver: takes every POST, and hands the spans sent so far to the test.
class Receiver {
 public:
  explicit Receiver(const MockBackend::TlsIdentity* tls = nullptr)
      : mock_(
            [](const SeenRequest&) {
              return MockReply{200, {{"content-type", "application/json"}}, "{}"};
            },
            tls) {}
  std::string endpoint() const { return mock_.url() + "/v1/traces"; }
  std::size_t posts() const { return mock_.request_count(); }
  std::vector<SeenRequest> requests() const { return mock_.requests(); }
  // Every span received, in order.
  std::vector<nlohmann::json> spans() const {
    std::vector<nlohmann::json> out;
    for (const SeenRequest& r : mock_.requests()) {
      const nlohmann::json body = nlohmann::json::parse(r.body);
      for (const auto& rs : body["resourceSpans"])
        for (const auto& ss : rs["scopeSpans"])
          for (const auto& s : ss["spans"]) out.push_back(s);
    }
    return out;
  }

 private:
  MockBackend mock_;
};

inline tracing::TraceConfig trace_config(const std::string& endpoint) {
  tracing::TraceConfig c;
  c.endpoint = endpoint;
  c.schedule_delay = std::chrono::hours(1);  // the tests flush
  c.timeout = std::chrono::seconds(5);
  c.resource = {{"service.name", "smartlb-test"}};
  c.headers = {{"authorization", "Bearer COLLECTOR-TOKEN"}};
  return c;
}

// The attribute `key` of an OTLP span: its value object ({"stringValue": ...}), or null.
inline nlohmann::json attribute(const nlohmann::json& span, const std::string& key) {
  for (const auto& a : span["attributes"])
    if (a["key"] == key) return a["value"];
  return nullptr;
}
inline std::string text(const nlohmann::json& span, const std::string& key) {
  const auto v = attribute(span, key);
  return v.is_null() ? "<none>" : v["stringValue"].get<std::string>();
}
inline std::string integer(const nlohmann::json& span, const std::string& key) {
  const auto v = attribute(span, key);
  return v.is_null() ? "<none>" : v["intValue"].get<std::string>();
}

// The parent id of a traceparent value.
inline std::string parent_of(const std::string& traceparent) { return traceparent.substr(36, 16); }

struct Traced {
  Receiver receiver;
  LastRecord records;
  ProxyHarness proxy;
  std::unique_ptr<tracing::Tracer> tracer;

  void start(tracing::TraceConfig c) {
    tracer = std::make_unique<tracing::Tracer>(c, "");
    proxy.start(&records, tracer.get());
  }
  HttpResponse post(Headers extra = {}) {
    Headers h = {{"content-type", "application/json"}, {"api-key", "CLIENT-KEY-XYZ"}};
    h.insert(h.end(), extra.begin(), extra.end());
    return http_call(proxy.port(), "POST", kChat, h, kBody);
  }
  ~Traced() {
    proxy.stop();
    tracer.reset();
  }
};

}  // namespace smartlb::testing::traces
