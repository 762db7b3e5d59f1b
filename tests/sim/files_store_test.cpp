#include "smartlb/sim/files_store.hpp"

#include <gtest/gtest.h>

namespace smartlb::sim {
namespace files_store_test {  // named, not anonymous: tests/CMakeLists.txt

using nlohmann::json;

SimRequest upload(std::string_view purpose, std::string_view filename, std::string_view content) {
  std::string body = "--XyZ\r\nContent-Disposition: form-data; name=\"purpose\"\r\n\r\n";
  body += purpose;
  body += "\r\n--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"";
  body += filename;
  body += "\"\r\nContent-Type: application/octet-stream\r\n\r\n";
  body += content;
  body += "\r\n--XyZ--\r\n";
  return {"POST", "/v1/files", {{"Content-Type", "multipart/form-data; boundary=XyZ"}}, body};
}

class FilesStoreTest : public ::testing::Test {
 protected:
  FilesStore& store() {
    if (!store_) store_ = std::make_unique<FilesStore>(limits_, ids_, clock_);
    return *store_;
  }
  json upload_ok(std::string_view purpose, std::string_view filename, std::string_view content) {
    const auto response = store().create(upload(purpose, filename, content));
    EXPECT_EQ(response.status, 200) << response.body;
    return json::parse(response.body);
  }

  StoreLimits limits_{100, 100'000};
  ManualClock clock_;
  IdMinter ids_{5};
  std::unique_ptr<FilesStore> store_;
};

TEST_F(FilesStoreTest, UploadAnswersTheFileObject) {
  const json file = upload_ok("batch", "in.jsonl", "{\"a\":1}\n");
  EXPECT_EQ(file["object"], "file");
  EXPECT_TRUE(file["id"].get<std::string>().starts_with("file-"));
  EXPECT_EQ(file["purpose"], "batch");
  EXPECT_EQ(file["filename"], "in.jsonl");
  EXPECT_EQ(file["bytes"], 8);
  EXPECT_EQ(file["created_at"], clock_.unix_seconds());
  EXPECT_EQ(file["status"], "processed");
}

TEST_F(FilesStoreTest, RetrieveContentListDelete) {
  const std::string a = upload_ok("batch", "a.jsonl", "line a\n")["id"];
  const std::string b = upload_ok("assistants", "b.txt", std::string("\0bin\r\n", 6))["id"];

  EXPECT_EQ(json::parse(store().retrieve(a).body)["filename"], "a.jsonl");
  const auto content = store().content(b);
  ASSERT_EQ(content.status, 200);
  EXPECT_EQ(content.content_type, "application/octet-stream");
  EXPECT_EQ(content.body, std::string("\0bin\r\n", 6)) << "bytes as uploaded";

  const json all = json::parse(store().list("").body);
  ASSERT_EQ(all["data"].size(), 2u);
  EXPECT_EQ(all["data"][0]["id"], b) << "newest first";
  EXPECT_FALSE(all["has_more"]);
  const json batch_only = json::parse(store().list("purpose=batch").body);
  ASSERT_EQ(batch_only["data"].size(), 1u);
  EXPECT_EQ(batch_only["data"][0]["id"], a);
  const json paged = json::parse(store().list("limit=1&order=asc").body);
  EXPECT_EQ(paged["data"][0]["id"], a);
  EXPECT_TRUE(paged["has_more"]);
  EXPECT_EQ(store().list("limit=0").status, 400);

  const auto deleted = store().remove(a);
  ASSERT_EQ(deleted.status, 200);
  EXPECT_EQ(json::parse(deleted.body), (json{{"id", a}, {"object", "file"}, {"deleted", true}}));
  for (const auto& response : {store().retrieve(a), store().content(a), store().remove(a)}) {
    EXPECT_EQ(response.status, 404);
    EXPECT_EQ(json::parse(response.body)["error"]["code"], "not_found");
  }
}

TEST_F(FilesStoreTest, RefusesBadUploads) {
  auto not_multipart = upload("batch", "x", "y");
  not_multipart.headers = {{"content-type", "application/json"}};
  EXPECT_EQ(store().create(not_multipart).status, 400);

  auto broken = upload("batch", "x", "y");
  broken.body.resize(broken.body.size() - 10);
  EXPECT_EQ(store().create(broken).status, 400);

  const auto bad_purpose = store().create(upload("batch_output", "x", "y"));
  ASSERT_EQ(bad_purpose.status, 400);
  EXPECT_EQ(json::parse(bad_purpose.body)["error"]["param"], "purpose");

  SimRequest no_file{"POST",
                     "/v1/files",
                     {{"content-type", "multipart/form-data; boundary=B"}},
                     "--B\r\nContent-Disposition: form-data; name=\"purpose\"\r\n\r\nbatch\r\n--B--"};
  const auto missing = store().create(no_file);
  ASSERT_EQ(missing.status, 400);
  EXPECT_EQ(json::parse(missing.body)["error"]["param"], "file");
  EXPECT_EQ(store().size(), 0u);
}

TEST_F(FilesStoreTest, AFullStoreRefusesAndDropsNothing) {
  limits_ = {2, 100'000};
  const std::string first = upload_ok("batch", "1", "x")["id"];
  upload_ok("batch", "2", "x");
  const auto full = store().create(upload("batch", "3", "x"));
  ASSERT_EQ(full.status, 400);
  EXPECT_EQ(json::parse(full.body)["error"]["code"], "store_full");
  EXPECT_EQ(store().retrieve(first).status, 200);
  EXPECT_EQ(store().add("out", "batch_output", "x"), nullptr);
}

TEST_F(FilesStoreTest, AFileLargerThanTheStoreIs413) {
  limits_ = {10, 1000};
  const auto response = store().create(upload("batch", "big", std::string(1000, 'x')));
  ASSERT_EQ(response.status, 413);
  EXPECT_EQ(json::parse(response.body)["error"]["code"], "file_too_large");
}

TEST_F(FilesStoreTest, FilesTheResourceWritesItself) {
  const StoredFile* written = store().add("batch_1_output.jsonl", "batch_output", "out\n");
  ASSERT_NE(written, nullptr);
  EXPECT_TRUE(written->id.starts_with("file-"));
  EXPECT_EQ(store().content(written->id).body, "out\n");
  EXPECT_EQ(json::parse(store().retrieve(written->id).body)["purpose"], "batch_output");
}

}  // namespace files_store_test
}  // namespace smartlb::sim
