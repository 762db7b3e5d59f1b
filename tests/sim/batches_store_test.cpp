#include "smartlb/sim/batches_store.hpp"

#include <algorithm>

#include <gtest/gtest.h>

namespace smartlb::sim {
namespace batches_store_test {  // named, not anonymous: tests/CMakeLists.txt

using nlohmann::json;

constexpr const char* kLine =
    R"({"custom_id":"r1","method":"POST","url":"/v1/chat/completions","body":{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}]}})";

class BatchesStoreTest : public ::testing::Test {
 protected:
  BatchesStoreTest() : files_({100, 100'000}, ids_, clock_), batches_({3, 100'000}, {5, 16}, ids_, clock_) {}

  std::string input_file(const std::string& content, const std::string& purpose = "batch") {
    const std::string body =
        "--B\r\nContent-Disposition: form-data; name=\"purpose\"\r\n\r\n" + purpose +
        "\r\n--B\r\nContent-Disposition: form-data; name=\"file\"; filename=\"in.jsonl\"\r\n\r\n" + content +
        "\r\n--B--\r\n";
    const auto response =
        files_.create({"POST", "/v1/files", {{"content-type", "multipart/form-data; boundary=B"}}, body});
    EXPECT_EQ(response.status, 200) << response.body;
    return json::parse(response.body)["id"];
  }
  static std::string create_body(const std::string& file,
                                 const std::string& endpoint = "/v1/chat/completions") {
    return R"({"input_file_id":")" + file + R"(","endpoint":")" + endpoint +
           R"(","completion_window":"24h","metadata":{"job":"nightly"}})";
  }
  json create_ok(const std::string& file) {
    const auto response = batches_.create(create_body(file), files_);
    EXPECT_EQ(response.status, 200) << response.body;
    return json::parse(response.body);
  }
  json retrieve(const std::string& id) {
    const auto response = batches_.retrieve(id, files_);
    EXPECT_EQ(response.status, 200) << response.body;
    return json::parse(response.body);
  }

  ManualClock clock_;
  IdMinter ids_{9};
  FilesStore files_;
  BatchesStore batches_;
};

TEST_F(BatchesStoreTest, CreateAnswersAValidatingBatch) {
  const std::string file = input_file(kLine);
  const json batch = create_ok(file);
  EXPECT_TRUE(batch["id"].get<std::string>().starts_with("batch_"));
  EXPECT_EQ(batch["object"], "batch");
  EXPECT_EQ(batch["status"], "validating");
  EXPECT_EQ(batch["input_file_id"], file);
  EXPECT_EQ(batch["endpoint"], "/v1/chat/completions");
  EXPECT_EQ(batch["completion_window"], "24h");
  EXPECT_EQ(batch["metadata"]["job"], "nightly");
  EXPECT_TRUE(batch["output_file_id"].is_null());
  EXPECT_EQ(batch["created_at"], clock_.unix_seconds());
}

TEST_F(BatchesStoreTest, RunsToCompletionOneStepPerRetrieveAndWritesItsOutput) {
  const std::string file = input_file(std::string(kLine) + "\n" + kLine + "\n");
  const std::string id = create_ok(file)["id"];
  const json running = retrieve(id);
  EXPECT_EQ(running["status"], "in_progress");
  EXPECT_EQ(running["request_counts"]["total"], 2);
  EXPECT_FALSE(running["in_progress_at"].is_null());
  const json done = retrieve(id);
  EXPECT_EQ(done["status"], "completed");
  EXPECT_EQ(done["request_counts"], (json{{"total", 2}, {"completed", 2}, {"failed", 0}}));
  EXPECT_FALSE(done["completed_at"].is_null());
  const std::string output = done["output_file_id"];
  EXPECT_TRUE(output.starts_with("file-"));
  const auto content = files_.content(output);
  ASSERT_EQ(content.status, 200);
  EXPECT_EQ(std::count(content.body.begin(), content.body.end(), '\n'), 2);
  EXPECT_EQ(json::parse(content.body.substr(0, content.body.find('\n')))["custom_id"], "r1");
  EXPECT_EQ(retrieve(id)["status"], "completed") << "stays completed";
}

TEST_F(BatchesStoreTest, BadLinesFailTheBatchWithTheirErrors) {
  const std::string id = create_ok(input_file(std::string(kLine) + "\n{broken\n"))["id"];
  const json failed = retrieve(id);
  EXPECT_EQ(failed["status"], "failed");
  ASSERT_EQ(failed["errors"]["data"].size(), 1u);
  EXPECT_EQ(failed["errors"]["data"][0]["code"], "invalid_json_line");
  EXPECT_EQ(failed["errors"]["data"][0]["line"], 2);
  EXPECT_FALSE(failed["failed_at"].is_null());
}

TEST_F(BatchesStoreTest, AnInputFileDeletedMeanwhileFailsTheBatch) {
  const std::string file = input_file(kLine);
  const std::string id = create_ok(file)["id"];
  files_.remove(file);
  const json failed = retrieve(id);
  EXPECT_EQ(failed["status"], "failed");
  EXPECT_EQ(failed["errors"]["data"][0]["code"], "file_not_found");
}

TEST_F(BatchesStoreTest, CreateChecksItsInputFileAndParameters) {
  const auto unknown = batches_.create(create_body("file-elsewhere"), files_);
  ASSERT_EQ(unknown.status, 404);
  EXPECT_EQ(json::parse(unknown.body)["error"]["code"], "not_found");
  EXPECT_EQ(json::parse(unknown.body)["error"]["param"], "input_file_id");

  const auto wrong_purpose = batches_.create(create_body(input_file(kLine, "assistants")), files_);
  ASSERT_EQ(wrong_purpose.status, 400);
  EXPECT_EQ(json::parse(wrong_purpose.body)["error"]["param"], "input_file_id");

  const std::string file = input_file(kLine);
  EXPECT_EQ(batches_.create(create_body(file, "/v1/moderations"), files_).status, 400);
  EXPECT_EQ(
      batches_.create(R"({"input_file_id":")" + file + R"(","endpoint":"/v1/chat/completions"})", files_)
          .status,
      400);
  EXPECT_EQ(batches_
                .create(R"({"input_file_id":")" + file +
                            R"(","endpoint":"/v1/chat/completions","completion_window":"1h"})",
                        files_)
                .status,
            400);
  EXPECT_EQ(batches_.create("nope", files_).status, 400);
  EXPECT_EQ(batches_.size(), 0u);
}

TEST_F(BatchesStoreTest, CancelThenCancelledAndNotAfterTheEnd) {
  const std::string file = input_file(kLine);
  const std::string id = create_ok(file)["id"];
  const auto cancelling = batches_.cancel(id);
  ASSERT_EQ(cancelling.status, 200);
  EXPECT_EQ(json::parse(cancelling.body)["status"], "cancelling");
  EXPECT_EQ(retrieve(id)["status"], "cancelled");
  EXPECT_EQ(batches_.cancel(id).status, 200);

  const std::string finished = create_ok(file)["id"];
  retrieve(finished);
  retrieve(finished);
  EXPECT_EQ(batches_.cancel(finished).status, 409);
  EXPECT_EQ(batches_.cancel("batch_other").status, 404);
}

TEST_F(BatchesStoreTest, ListsNewestFirstAndRefusesWhenFull) {
  const std::string file = input_file(kLine);
  const std::string a = create_ok(file)["id"];
  const std::string b = create_ok(file)["id"];
  const std::string c = create_ok(file)["id"];
  const json page = json::parse(batches_.list("limit=2").body);
  ASSERT_EQ(page["data"].size(), 2u);
  EXPECT_EQ(page["data"][0]["id"], c);
  EXPECT_EQ(page["data"][1]["id"], b);
  EXPECT_TRUE(page["has_more"]);
  const json rest = json::parse(batches_.list("limit=2&after=" + b).body);
  EXPECT_EQ(rest["data"][0]["id"], a);

  const auto full = batches_.create(create_body(file), files_);
  ASSERT_EQ(full.status, 400);
  EXPECT_EQ(json::parse(full.body)["error"]["code"], "store_full");
}

}  // namespace batches_store_test
}  // namespace smartlb::sim
