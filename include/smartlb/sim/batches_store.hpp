#pragma once
// The Batches API of one simulated resource: create (the input file must be one of this
// resource's files, with purpose "batch"), retrieve, list, cancel. A batch moves one step per
// retrieve, like a slow service seen by a polling client: validating, then in_progress (or
// failed, listing the bad lines), then completed with an output file of one answer per
// request (or failed when the file store is full); cancel makes it cancelling, then cancelled.
// Bounded: a create that does not fit is refused (400 store_full). Pure; the engine locks.

#include "smartlb/sim/batch_run.hpp"
#include "smartlb/sim/clock.hpp"
#include "smartlb/sim/files_store.hpp"
#include "smartlb/sim/object_ids.hpp"
#include "smartlb/sim/object_store.hpp"
#include "smartlb/sim/sim_exchange.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace smartlb::sim {

enum class BatchStatus { Validating, Failed, InProgress, Completed, Cancelling, Cancelled };

std::string_view batch_status_name(BatchStatus status);

struct StoredBatch {
  std::string id;        // batch_...
  std::string endpoint;  // as given
  std::string input_file_id;
  std::string completion_window;
  nlohmann::ordered_json metadata = nullptr;
  BatchStatus status = BatchStatus::Validating;
  std::int64_t created_at = 0;
  std::optional<std::int64_t> in_progress_at, finalizing_at, completed_at, failed_at, cancelling_at,
      cancelled_at;
  std::optional<std::string> output_file_id;
  nlohmann::ordered_json errors = nullptr;
  std::int64_t total = 0, completed = 0, failed = 0;
};

nlohmann::ordered_json batch_object(const StoredBatch& batch);

class BatchesStore {
 public:
  BatchesStore(StoreLimits limits, BatchGeneration generation, IdMinter& ids, const Clock& clock);

  /// POST /batches {input_file_id, endpoint, completion_window, metadata?}.
  SimResponse create(std::string_view body, const FilesStore& files);
  /// GET /batches/{id}: moves the batch one step on (see above) and answers it.
  SimResponse retrieve(std::string_view id, FilesStore& files);
  /// GET /batches (limit, after; newest first).
  SimResponse list(std::string_view query) const;
  /// POST /batches/{id}/cancel.
  SimResponse cancel(std::string_view id);

  std::size_t size() const { return store_.size(); }

 private:
  void advance(StoredBatch& batch, FilesStore& files);
  SimResponse not_found(std::string_view id) const;

  ObjectStore<StoredBatch> store_;
  BatchGeneration generation_;
  IdMinter& ids_;
  const Clock& clock_;
};

}  // namespace smartlb::sim
