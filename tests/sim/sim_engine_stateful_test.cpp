// The engine's stateful APIs and realtime handshakes: the checks every API request gets
// (method, api-version, key, faults, quota), then the stores. Manual clock, no sockets.

#include "smartlb/sim/sim_engine.hpp"

#include "smartlb/sim/responses_socket.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace smartlb::sim {
namespace sim_engine_stateful_test {  // named, not anonymous: tests/CMakeLists.txt

using namespace std::chrono_literals;
using nlohmann::json;

constexpr const char* kResponses = "/openai/v1/responses";
constexpr const char* kAzureResponses = "/openai/responses?api-version=2025-04-01-preview";

std::string header(const SimResponse& response, std::string_view name) {
  const auto value = find_header(response.headers, name);
  return value ? std::string(*value) : std::string("<absent>");
}

class SimEngineStatefulTest : public ::testing::Test {
 protected:
  SimEngineStatefulTest() {
    settings_.name = "westus";
    settings_.api_key = "k1";
    settings_.stream_chunks = 3;
    settings_.deployments = {{"gpt-4o", {1'000'000, 1'000}}, {"small", {100, 10}}};
    settings_.id_seed = 77;
  }

  SimEngine& engine() {
    if (!engine_) engine_ = std::make_unique<SimEngine>(settings_, clock_, [] { return 0.999; });
    return *engine_;
  }
  SimResponse send(std::string method, std::string target, std::string body = "",
                   HeaderList headers = {{"api-key", "k1"}}) {
    return engine().handle({std::move(method), std::move(target), std::move(headers), std::move(body)});
  }
  json create_ok(const std::string& target, const std::string& body) {
    const auto response = send("POST", target, body);
    EXPECT_EQ(response.status, 200) << response.body;
    return json::parse(response.body);
  }
  void set_faults(const std::string& patch) {
    ASSERT_EQ(send("POST", "/_sim/faults", patch, {}).status, 200);
  }
  json stats() { return engine().stats_json(); }

  SimRequest handshake(std::string target, HeaderList extra = {{"api-key", "k1"}}) {
    HeaderList headers{{"Upgrade", "websocket"},
                       {"Connection", "Upgrade"},
                       {"Sec-WebSocket-Version", "13"},
                       {"Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="}};
    headers.insert(headers.end(), extra.begin(), extra.end());
    return {"GET", std::move(target), std::move(headers), ""};
  }

  SimSettings settings_;
  ManualClock clock_;
  std::unique_ptr<SimEngine> engine_;
};

TEST_F(SimEngineStatefulTest, ResponsesInEveryUrlStyleChainOnlyOnThisResource) {
  const json first = create_ok(kResponses, R"({"model":"gpt-4o","input":"hello"})");
  const json second =
      create_ok(kAzureResponses, R"({"model":"gpt-4o","input":"again","previous_response_id":")" +
                                     first["id"].get<std::string>() + "\"}");
  EXPECT_EQ(second["previous_response_id"], first["id"]);
  const json third = create_ok("/v1/responses", R"({"model":"gpt-4o","previous_response_id":")" +
                                                    second["id"].get<std::string>() + "\"}");
  EXPECT_GT(third["usage"]["input_tokens"], second["usage"]["input_tokens"]);

  const auto elsewhere =
      send("POST", kResponses, R"({"model":"gpt-4o","previous_response_id":"resp_from_elsewhere"})");
  EXPECT_EQ(elsewhere.status, 400);
  EXPECT_EQ(json::parse(elsewhere.body)["error"]["code"], "previous_response_not_found");
  EXPECT_EQ(header(elsewhere, "x-sim-name"), "westus");
}

TEST_F(SimEngineStatefulTest, ChecksComeFirstLikeChat) {
  EXPECT_EQ(send("GET", kResponses).status, 405);
  const auto put = send("PUT", "/v1/files");
  EXPECT_EQ(put.status, 405);
  EXPECT_EQ(header(put, "allow"), "GET, POST");
  EXPECT_EQ(send("POST", "/openai/responses", R"({"model":"gpt-4o"})").status, 400)
      << "Azure style needs api-version";
  EXPECT_EQ(send("GET", "/openai/v1/files", "", {{"api-key", "wrong"}}).status, 401);
  EXPECT_EQ(send("GET", "/openai/v1/files", "", {{"authorization", "Bearer k1"}}).status, 200);
  const auto bad_body = send("POST", kResponses, R"({"input":"x"})");
  EXPECT_EQ(bad_body.status, 400);
  EXPECT_EQ(json::parse(bad_body.body)["error"]["param"], "model");
  EXPECT_EQ(send("POST", kResponses, R"({"model":"nope","input":"x"})").status, 404);
  EXPECT_EQ(send("GET", "/v1/vector_stores").status, 404);
}

TEST_F(SimEngineStatefulTest, ResponsesCreateIsChargedToItsDeploymentsQuota) {
  // small: 100 tokens per minute; each request costs 1 + 40 tokens.
  const std::string body = R"({"model":"small","input":"x","max_output_tokens":40})";
  const auto admitted = send("POST", kResponses, body);
  ASSERT_EQ(admitted.status, 200);
  EXPECT_EQ(header(admitted, "x-ratelimit-remaining-tokens"), "59");
  EXPECT_EQ(send("POST", kResponses, body).status, 200);
  const auto refused = send("POST", kResponses, body);
  ASSERT_EQ(refused.status, 429);
  EXPECT_NE(header(refused, "retry-after"), "<absent>");
  EXPECT_NE(json::parse(refused.body)["error"]["message"].get<std::string>().find("Responses_Create"),
            std::string::npos);
  const json counted = stats();
  EXPECT_EQ(counted["deployments"]["small"]["by_status"], (json{{"200", 2}, {"429", 1}}));
  EXPECT_EQ(counted["deployments"]["small"]["tokens_charged"], 82);
  EXPECT_EQ(counted["deployments"]["small"]["tokens_served"], 2 * (1 + 3)) << "usage: 1 in, 3 pieces out";
}

TEST_F(SimEngineStatefulTest, AForcedStatusAnswersEveryStatefulRequestWithRetryAfter) {
  const std::string id = create_ok(kResponses, R"({"model":"gpt-4o","input":"x"})")["id"];
  set_faults(R"({"force_status":429,"force_retry_after_ms":30000})");
  for (const auto& response : {send("GET", std::string("/openai/v1/responses/") + id),
                               send("POST", kResponses, R"({"model":"gpt-4o","input":"x"})"),
                               send("GET", "/openai/v1/files"), send("GET", "/v1/batches/batch_x")}) {
    EXPECT_EQ(response.status, 429) << response.body;
    EXPECT_EQ(header(response, "retry-after"), "30");
    EXPECT_EQ(header(response, "retry-after-ms"), "30000");
  }
  set_faults(R"({"force_status":0})");
  EXPECT_EQ(send("GET", std::string("/openai/v1/responses/") + id).status, 200) << "the store kept it";
}

TEST_F(SimEngineStatefulTest, FilesAndBatchesThroughTheEngine) {
  const std::string upload =
      "--B\r\nContent-Disposition: form-data; name=\"purpose\"\r\n\r\nbatch\r\n"
      "--B\r\nContent-Disposition: form-data; name=\"file\"; filename=\"in.jsonl\"\r\n\r\n"
      R"({"custom_id":"a","method":"POST","url":"/v1/chat/completions","body":{"model":"gpt-4o","messages":[]}})"
      "\r\n--B--\r\n";
  const auto uploaded = send("POST", "/openai/files?api-version=2024-10-21", upload,
                             {{"api-key", "k1"}, {"content-type", "multipart/form-data; boundary=B"}});
  ASSERT_EQ(uploaded.status, 200) << uploaded.body;
  const std::string file = json::parse(uploaded.body)["id"];
  EXPECT_EQ(send("GET", "/openai/v1/files/" + file + "/content").body.substr(0, 14), R"({"custom_id":")");
  const json batch = create_ok(
      "/openai/batches?api-version=2024-10-21",
      R"({"input_file_id":")" + file + R"(","endpoint":"/chat/completions","completion_window":"24h"})");
  const std::string path = "/openai/v1/batches/" + batch["id"].get<std::string>();
  EXPECT_EQ(json::parse(send("GET", path).body)["status"], "in_progress");
  const json done = json::parse(send("GET", path).body);
  EXPECT_EQ(done["status"], "completed");
  EXPECT_EQ(send("GET", "/v1/files/" + done["output_file_id"].get<std::string>() + "/content").status, 200);
  const json counted = stats();
  EXPECT_EQ(counted["stores"]["files"]["objects"], 2);
  EXPECT_EQ(counted["stores"]["batches"]["objects"], 1);
  EXPECT_EQ(counted["by_status"]["200"], 6);
}

TEST_F(SimEngineStatefulTest, TwoEnginesNeverMintTheSameIds) {
  settings_.id_seed = 0;  // a random seed each, as every sim process gets
  SimEngine a(settings_, clock_);
  SimEngine b(settings_, clock_);
  const auto id_of = [](SimEngine& engine) {
    const auto response =
        engine.handle({"POST", kResponses, {{"api-key", "k1"}}, R"({"model":"gpt-4o","input":"x"})"});
    return json::parse(response.body)["id"].get<std::string>();
  };
  EXPECT_NE(id_of(a), id_of(b));
}

TEST_F(SimEngineStatefulTest, RealtimeHandshakeAdmittedWithTheKeyInAnyPlace) {
  for (const auto& [target, headers] : std::vector<std::pair<std::string, HeaderList>>{
           {"/openai/realtime?api-version=2025-04-01-preview&deployment=gpt-4o", {{"api-key", "k1"}}},
           {"/openai/v1/realtime?model=gpt-4o", {{"authorization", "Bearer k1"}}},
           {"/v1/realtime?model=gpt-4o&api-key=k1", {}},
           {"/v1/realtime?model=gpt-4o",
            {{"sec-websocket-protocol", "realtime, openai-insecure-api-key.k1"}}}}) {
    const auto admission = engine().admit_realtime(handshake(target, headers));
    EXPECT_FALSE(admission.refusal) << target << ": " << (admission.refusal ? admission.refusal->body : "");
    EXPECT_EQ(admission.deployment, "gpt-4o") << target;
  }
  EXPECT_EQ(
      engine()
          .admit_realtime(handshake("/v1/realtime?model=gpt-4o",
                                    {{"sec-websocket-protocol", "realtime, openai-insecure-api-key.k1"}}))
          .subprotocol,
      "realtime");
  EXPECT_EQ(engine().admit_realtime(handshake("/v1/realtime?model=gpt-4o")).subprotocol, "");
  EXPECT_EQ(stats()["by_status"]["101"], 6);
}

TEST_F(SimEngineStatefulTest, RealtimeHandshakeRefusals) {
  const auto status_of = [&](SimRequest request) {
    const auto admission = engine().admit_realtime(std::move(request));
    return admission.refusal ? admission.refusal->status : 101;
  };
  SimRequest plain{"GET", "/v1/realtime?model=gpt-4o", {{"api-key", "k1"}}, ""};
  EXPECT_EQ(status_of(plain), 426) << "not an upgrade";
  EXPECT_EQ(engine().handle(plain).status, 426) << "through handle() too";
  EXPECT_EQ(status_of(handshake("/openai/realtime?deployment=gpt-4o")), 400) << "no api-version";
  EXPECT_EQ(status_of(handshake("/v1/realtime?model=gpt-4o", {{"api-key", "wrong"}})), 401);
  EXPECT_EQ(status_of(handshake("/v1/realtime?model=gpt-4o",
                                {{"sec-websocket-protocol", "realtime, openai-insecure-api-key.wrong"}})),
            401);
  EXPECT_EQ(status_of(handshake("/v1/realtime")), 400) << "no model";
  EXPECT_EQ(status_of(handshake("/v1/realtime?model=nope")), 404);
}

TEST_F(SimEngineStatefulTest, RealtimeHandshakeRefusedByFaultsWithRetryAfterAndByQuota) {
  set_faults(R"({"force_status":429,"force_retry_after_ms":45000,"force_count":1})");
  const auto refused = engine().admit_realtime(handshake("/v1/realtime?model=gpt-4o"));
  ASSERT_TRUE(refused.refusal);
  EXPECT_EQ(refused.refusal->status, 429);
  EXPECT_EQ(header(*refused.refusal, "retry-after"), "45");
  EXPECT_EQ(header(*refused.refusal, "x-sim-name"), "westus");
  EXPECT_FALSE(engine().admit_realtime(handshake("/v1/realtime?model=gpt-4o")).refusal) << "only once";

  // small allows 10 requests a minute: the handshakes spend them.
  for (int i = 0; i < 10; ++i)
    ASSERT_FALSE(engine().admit_realtime(handshake("/v1/realtime?model=small")).refusal);
  const auto over = engine().admit_realtime(handshake("/v1/realtime?model=small"));
  ASSERT_TRUE(over.refusal);
  EXPECT_EQ(over.refusal->status, 429);
}

TEST_F(SimEngineStatefulTest, RealtimeSessionsAreCounted) {
  const auto admission = engine().admit_realtime(handshake("/v1/realtime?model=gpt-4o"));
  ASSERT_FALSE(admission.refusal);
  auto session = engine().open_realtime(admission);
  const auto reply = session.on_text(R"({"type":"response.create"})");
  engine().record_realtime(admission.deployment, 1, static_cast<std::int64_t>(reply.messages.size()),
                           reply.tokens_served);
  json counted = stats();
  EXPECT_EQ(
      counted["realtime"],
      (json{
          {"sessions", 1}, {"open", 1}, {"client_messages", 1}, {"server_messages", reply.messages.size()}}));
  EXPECT_EQ(counted["deployments"]["gpt-4o"]["tokens_served"], reply.tokens_served);
  engine().realtime_closed();
  EXPECT_EQ(stats()["realtime"]["open"], 0);
}

TEST_F(SimEngineStatefulTest, ResponsesSocketHandshakeAdmittedWithTheKeyRefusedWithoutOrByFaults) {
  EXPECT_FALSE(engine().admit_responses_socket(handshake(kResponses)));
  EXPECT_FALSE(engine().admit_responses_socket(handshake("/v1/responses?api-key=k1", {})));
  const auto no_key = engine().admit_responses_socket(handshake(kResponses, {}));
  ASSERT_TRUE(no_key);
  EXPECT_EQ(no_key->status, 401);
  const auto not_there = engine().admit_responses_socket(handshake("/v1/responses/resp_1"));
  ASSERT_TRUE(not_there);
  EXPECT_EQ(not_there->status, 404);
  set_faults(R"({"force_status":429,"force_retry_after_ms":45000,"force_count":1})");
  const auto refused = engine().admit_responses_socket(handshake(kResponses));
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 429);
  EXPECT_EQ(header(*refused, "retry-after-ms"), "45000");
}

TEST_F(SimEngineStatefulTest, ResponsesSocketTurnsChainInTheEnginesStoreLikeHttp) {
  const SimRequest socket = handshake(kResponses);
  const auto first = responses_socket_turn(
      engine(), socket, R"({"type":"response.create","model":"gpt-4o","input":"hello","stream_id":"s1"})");
  ASSERT_GE(first.size(), 3u);
  EXPECT_EQ(json::parse(first.front())["type"], "response.created");
  const json completed = json::parse(first.back());
  EXPECT_EQ(completed["type"], "response.completed");
  EXPECT_EQ(completed["stream_id"], "s1");
  EXPECT_GT(completed["response"]["usage"]["output_tokens"].get<int>(), 0);
  const std::string id = completed["response"]["id"];

  const auto second = responses_socket_turn(
      engine(), socket,
      json{{"type", "response.create"}, {"model", "gpt-4o"}, {"input", "again"}, {"previous_response_id", id}}
          .dump());
  const json chained = json::parse(second.back());
  EXPECT_EQ(chained["response"]["previous_response_id"], id);
  // The same store over HTTP.
  EXPECT_EQ(send("GET", std::string(kResponses) + "/" + chained["response"]["id"].get<std::string>()).status,
            200);

  const auto unknown = responses_socket_turn(
      engine(), socket,
      R"({"type":"response.create","model":"gpt-4o","input":"x","previous_response_id":"resp_nope"})");
  ASSERT_EQ(unknown.size(), 1u);
  EXPECT_EQ(json::parse(unknown[0])["type"], "error");
  EXPECT_EQ(json::parse(unknown[0])["status"], 400);
  const auto other = responses_socket_turn(engine(), socket, R"({"type":"session.update"})");
  ASSERT_EQ(other.size(), 1u);
  EXPECT_EQ(json::parse(other[0])["type"], "error");
}

}  // namespace sim_engine_stateful_test
}  // namespace smartlb::sim
