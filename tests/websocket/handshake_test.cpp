#include "smartlb/websocket/handshake.hpp"

#include <gtest/gtest.h>

namespace smartlb::websocket {
namespace handshake_test {  // named, not anonymous: tests/CMakeLists.txt

TEST(Handshake, RealtimePathsAreTheThreeStyles) {
  EXPECT_TRUE(is_realtime_path("/openai/realtime"));
  EXPECT_TRUE(is_realtime_path("/openai/v1/realtime"));
  EXPECT_TRUE(is_realtime_path("/v1/realtime"));
  EXPECT_FALSE(is_realtime_path("/openai/v1/realtime/sessions"));
  EXPECT_FALSE(is_realtime_path("/realtime"));
  EXPECT_EQ(model_parameter("/openai/realtime"), "deployment");
  EXPECT_EQ(model_parameter("/openai/v1/realtime"), "model");
  EXPECT_EQ(model_parameter("/v1/realtime"), "model");
}

TEST(Handshake, ResponsesPathsAreTheThreeStylesAndNameTheirModelByModel) {
  EXPECT_TRUE(is_responses_path("/openai/v1/responses"));
  EXPECT_TRUE(is_responses_path("/v1/responses"));
  EXPECT_TRUE(is_responses_path("/openai/responses"));
  EXPECT_FALSE(is_responses_path("/v1/responses/resp_1"));
  EXPECT_FALSE(is_realtime_path("/v1/responses"));
  EXPECT_TRUE(is_websocket_path("/v1/responses"));
  EXPECT_TRUE(is_websocket_path("/openai/realtime"));
  EXPECT_FALSE(is_websocket_path("/v1/chat/completions"));
  EXPECT_EQ(model_parameter("/openai/responses"), "model");
  EXPECT_EQ(model_parameter("/v1/responses"), "model");
}

TEST(Handshake, AnUpgradeIsAGetNamingWebsocketAndUpgradeInTheirLists) {
  EXPECT_TRUE(asks_for_websocket("GET", "websocket", "Upgrade"));
  EXPECT_TRUE(asks_for_websocket("GET", "WebSocket", "keep-alive, upgrade"));
  EXPECT_FALSE(asks_for_websocket("POST", "websocket", "Upgrade"));
  EXPECT_FALSE(asks_for_websocket("GET", "h2c", "Upgrade"));
  EXPECT_FALSE(asks_for_websocket("GET", "websocket", "keep-alive"));
  EXPECT_FALSE(asks_for_websocket("GET", "websockets", "upgrade"));
}

TEST(Handshake, TheQueryLosesItsKeyAndTakesTheTargetsDeploymentName) {
  EXPECT_EQ(query_value("api-version=2025-04-01-preview&deployment=gpt-4o", "deployment"), "gpt-4o");
  EXPECT_EQ(query_value("model=", "model"), "");
  EXPECT_EQ(query_value("models=x", "model"), "");
  EXPECT_EQ(upstream_query("model=gpt-4o&api-key=secret", "model", ""), "model=gpt-4o");
  EXPECT_EQ(upstream_query("api-key=secret&deployment=gpt-4o&api-version=v", "deployment", "prod-4o"),
            "deployment=prod-4o&api-version=v");
  EXPECT_EQ(upstream_query("api-key&&model=m", "model", ""), "model=m");
  EXPECT_EQ(upstream_query("", "model", "x"), "");
}

TEST(Handshake, TheKeySubprotocolIsReadAndRemoved) {
  const std::string_view offer = "realtime, openai-insecure-api-key.sk-123, openai-beta.realtime-v1";
  EXPECT_EQ(subprotocol_key(offer), "sk-123");
  EXPECT_EQ(without_key_subprotocol(offer), "realtime, openai-beta.realtime-v1");
  EXPECT_EQ(without_key_subprotocol("openai-insecure-api-key.sk-123"), "");
  EXPECT_EQ(subprotocol_key("realtime"), "");
}

TEST(Handshake, ABrowsersKeyIsTheSubprotocolsElseTheQuerys) {
  EXPECT_EQ(browser_key("realtime, openai-insecure-api-key.sk-1", "model=m&api-key=sk-2"), "sk-1");
  EXPECT_EQ(browser_key("realtime", "model=m&api-key=sk-2"), "sk-2");
  EXPECT_EQ(browser_key("", "model=m"), "");
}

TEST(Handshake, TheAcceptIsTheRfcsExample) {
  EXPECT_EQ(accept_for("dGhlIHNhbXBsZSBub25jZQ=="), "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");  // RFC 6455 section 1.3
}

TEST(Handshake, FreshKeysAre16RandomBytesInBase64) {
  base::FastRandom rng(7);
  const std::string a = new_key(rng), b = new_key(rng);
  EXPECT_EQ(a.size(), 24u);
  EXPECT_EQ(a.substr(22), "==");
  EXPECT_NE(a, b);
}

TEST(Handshake, OnlyA101ThatAnswersTheKeySentIsAccepted) {
  const std::string key = "dGhlIHNhbXBsZSBub25jZQ==";
  const std::string accept = "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=";
  EXPECT_EQ(judge_upgrade({101, "websocket", "Upgrade", accept, ""}, key), UpgradeAnswer::Accepted);
  EXPECT_EQ(judge_upgrade({429, "", "", "", ""}, key), UpgradeAnswer::NotUpgraded);
  EXPECT_EQ(judge_upgrade({101, "websocket", "Upgrade", accept_for("another"), ""}, key),
            UpgradeAnswer::BadAccept);
  EXPECT_EQ(judge_upgrade({101, "h2c", "Upgrade", accept, ""}, key), UpgradeAnswer::NotWebSocket);
  EXPECT_EQ(judge_upgrade({101, "websocket", "Upgrade", accept, "permessage-deflate"}, key),
            UpgradeAnswer::WithExtension);
}

}  // namespace handshake_test
}  // namespace smartlb::websocket
