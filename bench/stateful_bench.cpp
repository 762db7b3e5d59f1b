// Google Benchmark of what stateful APIs add per request (docs/stateful-apis.md):
//   BM_LookForTags/<bytes>     every request body is looked at for a tag (may_hold_tag): a chat
//                              request without one, what every request pays
//   BM_StripBody/<bytes>       a stateful request's body read and its tags taken off
//   BM_TagAnswer/<bytes>       a stateful JSON answer's ids tagged (one pass, one new body)
//   BM_TagEvents               one event of a streamed answer tagged (per event, fed as it comes)
//
//   cmake --build build-bench --target smartlb_stateful_bench
//   build-bench/bench/smartlb_stateful_bench --benchmark_repetitions=5
//   --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <string>

#include "smartlb/stateful/event_stream_tagger.hpp"
#include "smartlb/stateful/id_tagger.hpp"
#include "smartlb/stateful/request_ids.hpp"

using namespace smartlb::stateful;

namespace {

const ResourceTag kTag = resource_tag("https://res-a.openai.azure.com");

// Prose with the dashes of dates and ids: where a naive search for "-slb" stops most.
std::string chat_body(std::size_t bytes) {
  std::string body = R"({"model":"gpt-4o","messages":[)";
  for (std::size_t i = 0; body.size() < bytes; ++i) {
    if (i > 0) body += ',';
    body += R"({"role":"user","content":")";
    for (int k = 0; k < 8; ++k) body += "on 2024-10-21 the well-known, so-called state-of-the-art ";
    body += R"("})";
  }
  return body + "]}";
}

// A Responses answer: output items with ids, and text that makes up the size.
std::string responses_answer(std::size_t bytes, std::string_view tag = {}) {
  std::string body = R"({"id":"resp_68af4c1e2b7c8190a1d3)" + std::string(tag) +
                     R"(","object":"response","previous_response_id":"resp_68af4c1e2b7c8190a1d2)" +
                     std::string(tag) + R"(","output":[)";
  for (std::size_t i = 0; body.size() < bytes; ++i) {
    if (i > 0) body += ',';
    body += R"({"id":"msg_68af4c1e2b7c8190a1d3)" + std::to_string(i) + std::string(tag) +
            R"(","type":"message","content":[{"type":"output_text","text":")" + std::string(2000, 'x') +
            R"("}]})";
  }
  return body + R"(],"usage":{"input_tokens":11,"output_tokens":7}})";
}

void BM_LookForTags(benchmark::State& state) {
  const std::string body = chat_body(static_cast<std::size_t>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(may_hold_tag(body));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * body.size()));
}
BENCHMARK(BM_LookForTags)->Arg(2 * 1024)->Arg(200 * 1024);

void BM_StripBody(benchmark::State& state) {
  const std::string body = responses_answer(static_cast<std::size_t>(state.range(0)), kTag.view());
  std::string out;
  for (auto _ : state) {
    out.clear();
    RequestIds ids;
    benchmark::DoNotOptimize(strip_json_body(body, out, ids));
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * body.size()));
}
BENCHMARK(BM_StripBody)->Arg(2 * 1024)->Arg(200 * 1024);

void BM_TagAnswer(benchmark::State& state) {
  const std::string body = responses_answer(static_cast<std::size_t>(state.range(0)));
  std::string out;
  for (auto _ : state) {
    out.clear();
    benchmark::DoNotOptimize(tag_json_ids(body, kTag, out));
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * body.size()));
}
BENCHMARK(BM_TagAnswer)->Arg(2 * 1024)->Arg(200 * 1024);

void BM_TagEvents(benchmark::State& state) {
  const std::string event =
      "event: response.output_text.delta\n"
      R"(data: {"type":"response.output_text.delta","item_id":"msg_68af4c1e2b7c8190a1d3","output_index":0,)"
      R"("content_index":0,"delta":"Hello"})"
      "\n\n";
  EventStreamTagger tagger(kTag);
  std::string out;
  for (auto _ : state) {
    out.clear();
    tagger.feed(event, out);
    benchmark::DoNotOptimize(out.data());
  }
}
BENCHMARK(BM_TagEvents);

}  // namespace

BENCHMARK_MAIN();
