// Google Benchmark of what the routing policy adds per request (src/net/forwarder.cpp):
//   BM_BodyRewrite/<bytes>   a target's override_params plus a model rename (prepare_body):
//                            one validating pass over the client's body and one new body
//   BM_ModelScan/<bytes>     the body's top-level `model` of a /v1-style request (prepare_request)
//   BM_MatchRules/<rules>    the first matching rule when only the last one matches (match_rule)
//
//   cmake --build build-bench --target smartlb_policy_bench
//   build-bench/bench/smartlb_policy_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
//
// Bodies look like chat requests: `model` first (as the OpenAI SDKs send it), then messages
// whose contents make up the size.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "smartlb/http/json_body.hpp"
#include "smartlb/routing/rule_match.hpp"

using namespace smartlb;

namespace {

std::string chat_body(std::size_t bytes) {
  std::string body = R"({"model":"gpt-4o","temperature":1,"user":"u-42","messages":[)";
  std::size_t i = 0;
  while (body.size() < bytes) {
    if (i++ > 0) body += ',';
    body += R"({"role":"user","content":")";
    body.append(200, 'x');
    body += R"("})";
  }
  body += R"(],"max_tokens":100})";
  return body;
}

void BM_BodyRewrite(benchmark::State& state) {
  const std::string body = chat_body(static_cast<std::size_t>(state.range(0)));
  const std::vector<http::BodyEdit> edits = {{"temperature", "0.5"},
                                             {"max_tokens", "800"},
                                             {"user", std::nullopt},
                                             {"model", http::json_string("gpt-4o-0806")}};
  for (auto _ : state) {
    auto out = edit_json_body(body, edits);
    benchmark::DoNotOptimize(out);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * body.size()));
}
BENCHMARK(BM_BodyRewrite)->Arg(2 * 1024)->Arg(200 * 1024);

void BM_ModelScan(benchmark::State& state) {
  const std::string body = chat_body(static_cast<std::size_t>(state.range(0)));
  for (auto _ : state) {
    auto m = http::top_level_string(body, "model");
    benchmark::DoNotOptimize(m);
  }
}
BENCHMARK(BM_ModelScan)->Arg(2 * 1024)->Arg(200 * 1024);

void BM_MatchRules(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  std::vector<routing::RuleConditions> rules;
  for (int i = 0; i + 1 < n; ++i)
    rules.push_back(routing::RuleConditions{
        {"team:t" + std::to_string(i)}, {"model-" + std::to_string(i)}, {{"env", "e" + std::to_string(i)}}});
  rules.push_back(routing::RuleConditions{{}, {"gpt-4o"}, {}});
  const std::vector<std::string> subjects = {"team:search", "user:alice"};
  const std::vector<routing::MetadataPair> metadata = {{"env", "prod"}};
  const routing::RequestFacts facts{subjects, "gpt-4o", metadata};
  for (auto _ : state) {
    std::size_t matched = rules.size();
    for (std::size_t i = 0; i < rules.size(); ++i)
      if (rules[i].matches(facts)) {
        matched = i;
        break;
      }
    benchmark::DoNotOptimize(matched);
  }
}
BENCHMARK(BM_MatchRules)->Arg(1)->Arg(20);

}  // namespace

BENCHMARK_MAIN();
