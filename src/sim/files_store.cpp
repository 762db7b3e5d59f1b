#include "smartlb/sim/files_store.hpp"

#include "smartlb/sim/error_bodies.hpp"
#include "smartlb/sim/list_pages.hpp"
#include "smartlb/sim/multipart.hpp"
#include "smartlb/sim/route.hpp"

#include <array>
#include <utility>

namespace smartlb::sim {
namespace {

using ordered_json = nlohmann::ordered_json;

// What a client may upload for (batch_output and the like are written by the service).
constexpr std::array<std::string_view, 6> kUploadPurposes{"assistants", "batch",     "fine-tune",
                                                          "vision",     "user_data", "evals"};

constexpr std::size_t kFileOverheadBytes = 256;

}  // namespace

ordered_json file_object(const StoredFile& file) {
  return {{"object", "file"},
          {"id", file.id},
          {"purpose", file.purpose},
          {"filename", file.filename},
          {"bytes", file.content.size()},
          {"created_at", file.created_at},
          {"expires_at", nullptr},
          {"status", "processed"},
          {"status_details", nullptr}};
}

FilesStore::FilesStore(StoreLimits limits, IdMinter& ids, const Clock& clock)
    : store_(limits), ids_(ids), clock_(clock) {}

SimResponse FilesStore::not_found(std::string_view id) const {
  return json_response(
      404, api_error_body("File with id '" + std::string(id) + "' not found.", "not_found", "id"));
}

SimResponse FilesStore::create(const SimRequest& request) {
  const auto content_type = find_header(request.headers, "content-type");
  const auto boundary = content_type ? multipart_boundary(*content_type) : std::nullopt;
  if (!boundary) {
    return bad_request_response(
        "Expected a multipart/form-data body with a boundary (fields 'purpose' and 'file').",
        "invalid_request_error", std::nullopt);
  }
  const MultipartParse parsed = parse_multipart(request.body, *boundary);
  if (!parsed.error.empty()) {
    return bad_request_response("Could not parse the multipart body: " + parsed.error + ".",
                                "invalid_request_error", std::nullopt);
  }
  const MultipartPart* purpose = find_part(parsed, "purpose");
  if (!purpose)
    return bad_request_response("Missing required parameter: 'purpose'.", "missing_required_parameter",
                                "purpose");
  bool known = false;
  for (const auto name : kUploadPurposes) known = known || purpose->body == name;
  if (!known) {
    return bad_request_response("Invalid value for 'purpose': '" + std::string(purpose->body) +
                                    "'. Supported values are: 'assistants', 'batch', 'fine-tune', 'vision', "
                                    "'user_data' and 'evals'.",
                                "invalid_value", "purpose");
  }
  const MultipartPart* file = find_part(parsed, "file");
  if (!file || !file->filename) {
    return bad_request_response("Missing required parameter: 'file' (a file part with a filename).",
                                "missing_required_parameter", "file");
  }
  const std::size_t bytes = kFileOverheadBytes + file->body.size();
  if (bytes > store_.limits().max_bytes) {
    return json_response(
        413, api_error_body("The file is larger than smartlb-sim's file store (" +
                                std::to_string(store_.limits().max_bytes) + " bytes, --store-max-bytes).",
                            "file_too_large", "file"));
  }
  if (!store_.fits(bytes)) {
    return bad_request_response(
        "smartlb-sim's file store is full (" + std::to_string(store_.size()) + " files, " +
            std::to_string(store_.bytes()) +
            " bytes; see --store-max-objects and --store-max-bytes). Delete files first.",
        "store_full", "file");
  }
  StoredFile stored{ids_.next("file-", 32), *file->filename, std::string(purpose->body),
                    clock_.unix_seconds(), std::string(file->body)};
  const std::string body = file_object(stored).dump();
  const std::string id = stored.id;
  store_.insert(id, std::move(stored), bytes);
  auto response = json_response(200, body);
  response.headers.emplace_back("x-request-id", id);
  return response;
}

SimResponse FilesStore::retrieve(std::string_view id) const {
  const StoredFile* file = store_.find(id);
  return file ? json_response(200, file_object(*file).dump()) : not_found(id);
}

SimResponse FilesStore::content(std::string_view id) const {
  const StoredFile* file = store_.find(id);
  if (!file) return not_found(id);
  SimResponse response;
  response.content_type = "application/octet-stream";
  response.body = file->content;
  return response;
}

SimResponse FilesStore::list(std::string_view query) const {
  const auto parsed = parse_list_query(query, 10'000, 10'000);
  if (!parsed.query) return bad_request_response(parsed.error.message, parsed.error.code, parsed.error.param);
  const auto purpose = query_parameter(query, "purpose");
  const auto page = store_.list(parsed.query->order, parsed.query->after, parsed.query->limit,
                                [&](const StoredFile& file) { return !purpose || file.purpose == *purpose; });
  ordered_json data = ordered_json::array();
  for (const StoredFile* file : page.items) data.push_back(file_object(*file));
  return json_response(200, list_object(std::move(data), page.has_more).dump());
}

SimResponse FilesStore::remove(std::string_view id) {
  if (!store_.erase(id)) return not_found(id);
  const ordered_json body{{"id", id}, {"object", "file"}, {"deleted", true}};
  return json_response(200, body.dump());
}

const StoredFile* FilesStore::add(std::string filename, std::string purpose, std::string content) {
  const std::size_t bytes = kFileOverheadBytes + content.size();
  if (!store_.fits(bytes)) return nullptr;
  StoredFile stored{ids_.next("file-", 32), std::move(filename), std::move(purpose), clock_.unix_seconds(),
                    std::move(content)};
  const std::string id = stored.id;
  store_.insert(id, std::move(stored), bytes);
  return store_.find(id);
}

}  // namespace smartlb::sim
