#include "smartlb/sim/batches_store.hpp"

#include "smartlb/sim/error_bodies.hpp"
#include "smartlb/sim/list_pages.hpp"

namespace smartlb::sim {
namespace {

using ordered_json = nlohmann::ordered_json;

constexpr std::size_t kBatchBytes = 1024;  // a batch object, whatever its input

ordered_json optional_time(const std::optional<std::int64_t>& value) {
  return value ? ordered_json(*value) : ordered_json(nullptr);
}

}  // namespace

std::string_view batch_status_name(BatchStatus status) {
  switch (status) {
    case BatchStatus::Validating:
      return "validating";
    case BatchStatus::Failed:
      return "failed";
    case BatchStatus::InProgress:
      return "in_progress";
    case BatchStatus::Completed:
      return "completed";
    case BatchStatus::Cancelling:
      return "cancelling";
    case BatchStatus::Cancelled:
      return "cancelled";
  }
  return "unknown";
}

ordered_json batch_object(const StoredBatch& batch) {
  return {
      {"id", batch.id},
      {"object", "batch"},
      {"endpoint", batch.endpoint},
      {"errors", batch.errors},
      {"input_file_id", batch.input_file_id},
      {"completion_window", batch.completion_window},
      {"status", batch_status_name(batch.status)},
      {"output_file_id", batch.output_file_id ? ordered_json(*batch.output_file_id) : ordered_json(nullptr)},
      {"error_file_id", nullptr},
      {"created_at", batch.created_at},
      {"in_progress_at", optional_time(batch.in_progress_at)},
      {"expires_at", batch.created_at + 24 * 3600},
      {"finalizing_at", optional_time(batch.finalizing_at)},
      {"completed_at", optional_time(batch.completed_at)},
      {"failed_at", optional_time(batch.failed_at)},
      {"expired_at", nullptr},
      {"cancelling_at", optional_time(batch.cancelling_at)},
      {"cancelled_at", optional_time(batch.cancelled_at)},
      {"request_counts", {{"total", batch.total}, {"completed", batch.completed}, {"failed", batch.failed}}},
      {"metadata", batch.metadata}};
}

BatchesStore::BatchesStore(StoreLimits limits, BatchGeneration generation, IdMinter& ids, const Clock& clock)
    : store_(limits), generation_(generation), ids_(ids), clock_(clock) {}

SimResponse BatchesStore::not_found(std::string_view id) const {
  return json_response(
      404, api_error_body("Batch with id '" + std::string(id) + "' not found.", "not_found", "batch_id"));
}

SimResponse BatchesStore::create(std::string_view body, const FilesStore& files) {
  const auto json = ordered_json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object()) {
    return bad_request_response("We could not parse the JSON body of your request.", std::nullopt,
                                std::nullopt);
  }
  for (const char* name : {"input_file_id", "endpoint", "completion_window"}) {
    const auto value = json.find(name);
    if (value == json.end() || !value->is_string()) {
      return bad_request_response("Missing required parameter: '" + std::string(name) + "'.",
                                  "missing_required_parameter", name);
    }
  }
  const std::string input_file_id = json["input_file_id"].get<std::string>();
  const std::string endpoint = json["endpoint"].get<std::string>();
  const std::string window = json["completion_window"].get<std::string>();
  if (!batch_endpoint(endpoint)) {
    return bad_request_response("Invalid value for 'endpoint': '" + endpoint +
                                    "'. Supported values are: '/v1/chat/completions', '/v1/completions', "
                                    "'/v1/embeddings' and '/v1/responses'.",
                                "invalid_value", "endpoint");
  }
  if (window != "24h") {
    return bad_request_response(
        "Invalid value for 'completion_window': '" + window + "'. Supported values are: '24h'.",
        "invalid_value", "completion_window");
  }
  ordered_json metadata = nullptr;
  if (const auto value = json.find("metadata"); value != json.end() && !value->is_null()) {
    if (!value->is_object())
      return bad_request_response("Invalid type for 'metadata': expected an object.", "invalid_type",
                                  "metadata");
    metadata = *value;
  }
  const StoredFile* input = files.find(input_file_id);
  if (!input) {
    return json_response(
        404, api_error_body("File with id '" + input_file_id + "' not found.", "not_found", "input_file_id"));
  }
  if (input->purpose != "batch") {
    return bad_request_response("The input file '" + input_file_id + "' has purpose '" + input->purpose +
                                    "'; a batch needs a file uploaded with purpose 'batch'.",
                                "invalid_value", "input_file_id");
  }
  if (!store_.fits(kBatchBytes)) {
    return bad_request_response("smartlb-sim's batch store is full (" + std::to_string(store_.size()) +
                                    " batches; see --store-max-objects).",
                                "store_full", std::nullopt);
  }
  StoredBatch batch;
  batch.id = ids_.next("batch_", 32);
  batch.endpoint = endpoint;
  batch.input_file_id = input_file_id;
  batch.completion_window = window;
  batch.metadata = std::move(metadata);
  batch.created_at = clock_.unix_seconds();
  const std::string answer = batch_object(batch).dump();
  const std::string id = batch.id;
  store_.insert(id, std::move(batch), kBatchBytes);
  auto response = json_response(200, answer);
  response.headers.emplace_back("x-request-id", id);
  return response;
}

void BatchesStore::advance(StoredBatch& batch, FilesStore& files) {
  const std::int64_t now = clock_.unix_seconds();
  const auto fail = [&](ordered_json errors) {
    batch.status = BatchStatus::Failed;
    batch.failed_at = now;
    batch.errors = {{"object", "list"}, {"data", std::move(errors)}};
  };
  const auto missing_input = [&] {
    fail(ordered_json::array({{{"code", "file_not_found"},
                               {"message", "The input file " + batch.input_file_id + " no longer exists."},
                               {"param", "input_file_id"},
                               {"line", nullptr}}}));
  };
  const std::string endpoint = batch_endpoint(batch.endpoint).value_or(batch.endpoint);
  switch (batch.status) {
    case BatchStatus::Validating: {
      const StoredFile* input = files.find(batch.input_file_id);
      if (!input) return missing_input();
      const BatchValidation validation = validate_batch_input(input->content, endpoint);
      if (!validation.errors.empty()) {
        ordered_json errors = ordered_json::array();
        for (const auto& error : validation.errors) {
          errors.push_back(
              {{"code", error.code}, {"message", error.message}, {"param", nullptr}, {"line", error.line}});
        }
        return fail(std::move(errors));
      }
      batch.status = BatchStatus::InProgress;
      batch.in_progress_at = now;
      batch.total = validation.requests;
      return;
    }
    case BatchStatus::InProgress: {
      const StoredFile* input = files.find(batch.input_file_id);
      if (!input) return missing_input();
      batch.finalizing_at = now;
      std::string output = run_batch(input->content, endpoint, generation_, ids_, now);
      const StoredFile* written = files.add(batch.id + "_output.jsonl", "batch_output", std::move(output));
      if (!written) {
        return fail(
            ordered_json::array({{{"code", "store_full"},
                                  {"message", "smartlb-sim's file store has no room for the output file."},
                                  {"param", nullptr},
                                  {"line", nullptr}}}));
      }
      batch.output_file_id = written->id;
      batch.status = BatchStatus::Completed;
      batch.completed_at = now;
      batch.completed = batch.total;
      return;
    }
    case BatchStatus::Cancelling:
      batch.status = BatchStatus::Cancelled;
      batch.cancelled_at = now;
      return;
    case BatchStatus::Failed:
    case BatchStatus::Completed:
    case BatchStatus::Cancelled:
      return;
  }
}

SimResponse BatchesStore::retrieve(std::string_view id, FilesStore& files) {
  StoredBatch* batch = store_.find(id);
  if (!batch) return not_found(id);
  advance(*batch, files);
  return json_response(200, batch_object(*batch).dump());
}

SimResponse BatchesStore::list(std::string_view query) const {
  const auto parsed = parse_list_query(query, 20, 100);
  if (!parsed.query) return bad_request_response(parsed.error.message, parsed.error.code, parsed.error.param);
  const auto page = store_.list(parsed.query->order, parsed.query->after, parsed.query->limit);
  ordered_json data = ordered_json::array();
  for (const StoredBatch* batch : page.items) data.push_back(batch_object(*batch));
  return json_response(200, list_object(std::move(data), page.has_more).dump());
}

SimResponse BatchesStore::cancel(std::string_view id) {
  StoredBatch* batch = store_.find(id);
  if (!batch) return not_found(id);
  switch (batch->status) {
    case BatchStatus::Validating:
    case BatchStatus::InProgress:
      batch->status = BatchStatus::Cancelling;
      batch->cancelling_at = clock_.unix_seconds();
      break;
    case BatchStatus::Cancelling:
    case BatchStatus::Cancelled:
      break;
    case BatchStatus::Failed:
    case BatchStatus::Completed:
      return json_response(409, api_error_body("Cannot cancel a batch with status '" +
                                                   std::string(batch_status_name(batch->status)) + "'.",
                                               std::nullopt, std::nullopt));
  }
  return json_response(200, batch_object(*batch).dump());
}

}  // namespace smartlb::sim
