#include "smartlb/stateful/stateful_path.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace smartlb::stateful {
namespace stateful_path_test {  // named, not anonymous: tests/CMakeLists.txt

std::vector<std::string> ids_of(std::string_view path) {
  std::vector<std::string> out;
  for_each_id_segment(path, classify_path(path), [&](std::string_view s, std::size_t offset) {
    EXPECT_EQ(path.substr(offset, s.size()), s);
    out.emplace_back(s);
  });
  return out;
}
using Ids = std::vector<std::string>;

TEST(StatefulPath, TheCollectionAfterEachApiPrefix) {
  const auto azure = classify_path("/openai/responses");
  EXPECT_EQ(azure.prefix, ApiPrefix::Azure);
  EXPECT_EQ(azure.collection, "responses");
  const auto v1 = classify_path("/openai/v1/files/file-1/content");
  EXPECT_EQ(v1.prefix, ApiPrefix::AzureV1);
  EXPECT_EQ(v1.collection, "files");
  EXPECT_TRUE(v1.content);
  const auto openai = classify_path("/v1/batches");
  EXPECT_EQ(openai.prefix, ApiPrefix::V1);
  EXPECT_EQ(openai.collection, "batches");
  EXPECT_FALSE(openai.content);
  for (const char* c : {"responses", "conversations", "files", "uploads", "batches", "vector_stores",
                        "assistants", "threads", "fine_tuning", "containers", "evals"})
    EXPECT_TRUE(classify_path(std::string("/v1/") + c).stateful()) << c;
}

TEST(StatefulPath, OtherPathsAreNotStateful) {
  for (const char* p :
       {"/openai/deployments/gpt-4o/chat/completions", "/v1/chat/completions", "/openai/v1/embeddings",
        "/v1/models", "/v1/responsesx", "/responses", "/openai/realtime", "/", ""})
    EXPECT_FALSE(classify_path(p).stateful()) << p;
  EXPECT_EQ(classify_path("/v1/models").prefix, ApiPrefix::V1);
  EXPECT_EQ(classify_path("/healthz").prefix, ApiPrefix::None);
}

TEST(StatefulPath, IdSegmentsAreThoseInAnObjectsPlace) {
  EXPECT_EQ(ids_of("/openai/v1/responses"), Ids{});
  EXPECT_EQ(ids_of("/openai/v1/responses/resp_1"), Ids{"resp_1"});
  EXPECT_EQ(ids_of("/openai/responses/resp_1/input_items"), Ids{"resp_1"});
  EXPECT_EQ(ids_of("/v1/responses/resp_1/cancel"), Ids{"resp_1"});
  EXPECT_EQ(ids_of("/v1/responses/input_tokens"), Ids{});
  EXPECT_EQ(ids_of("/v1/threads/runs"), Ids{});
  EXPECT_EQ(ids_of("/v1/threads/thread_1/runs/run_2/steps/step_3"), (Ids{"thread_1", "run_2", "step_3"}));
  EXPECT_EQ(ids_of("/v1/vector_stores/vs_1/file_batches/vsfb_2/files"), (Ids{"vs_1", "vsfb_2"}));
  EXPECT_EQ(ids_of("/v1/containers/cntr_1/files/cfile_2/content"), (Ids{"cntr_1", "cfile_2"}));
  EXPECT_EQ(ids_of("/v1/fine_tuning/jobs"), Ids{});
  EXPECT_EQ(ids_of("/v1/fine_tuning/jobs/ftjob-1/events"), Ids{"ftjob-1"});
  EXPECT_EQ(ids_of("/v1/fine_tuning/checkpoints/ft:x:1/permissions/cp_2"), (Ids{"ft:x:1", "cp_2"}));
  EXPECT_EQ(ids_of("/v1/fine_tuning/alpha/graders/run"), Ids{});
  EXPECT_EQ(ids_of("/v1/uploads/upload_1/parts"), Ids{"upload_1"});
  EXPECT_EQ(ids_of("/v1/files/"), Ids{});
  EXPECT_EQ(ids_of("/v1/chat/completions/chatcmpl-1"), Ids{}) << "not a stateful collection";
}

}  // namespace stateful_path_test
}  // namespace smartlb::stateful
