#pragma once
// The Responses API of one simulated resource: creates responses (plain, streamed or in the
// background), keeps those with store=true, and answers GET, DELETE, cancel and input_items
// for the ids it created; every other id is unknown to it (404, or 400
// previous_response_not_found for a chain), as each Azure resource knows only its own.
// Bounded: when full, the oldest responses are dropped (as if expired). Pure: time and ids
// are injected; the engine locks.

#include "smartlb/sim/clock.hpp"
#include "smartlb/sim/object_ids.hpp"
#include "smartlb/sim/object_store.hpp"
#include "smartlb/sim/response_objects.hpp"
#include "smartlb/sim/responses_request.hpp"
#include "smartlb/sim/sim_exchange.hpp"

#include <chrono>
#include <cstdint>
#include <string_view>

namespace smartlb::sim {

/// How answers are generated: pieces per answer (see content_chunk_count), the max_tokens
/// charged when a request has none, and the pause before each streamed piece.
struct GenerationSettings {
  int stream_chunks = 5;
  std::int64_t default_max_tokens = 16;
  std::chrono::milliseconds chunk_interval{0};
};

struct StoreAnswer {
  SimResponse response;
  std::int64_t tokens_served = 0;  // usage.total_tokens of a created response, else 0
};

class ResponsesStore {
 public:
  ResponsesStore(StoreLimits limits, GenerationSettings generation, IdMinter& ids, const Clock& clock);

  /// POST /responses. The previous_response_id must name a stored response (else 400
  /// previous_response_not_found). Background: answered "queued"; GETs move it on.
  StoreAnswer create(const ResponsesCreate& request);
  /// GET /responses/{id}; `query` may ask for the stream again (stream=true, starting_after=N).
  /// A background response moves one step per GET: queued, in_progress, completed.
  SimResponse retrieve(std::string_view id, std::string_view query);
  /// DELETE /responses/{id}.
  SimResponse remove(std::string_view id);
  /// POST /responses/{id}/cancel: background responses not yet completed become cancelled.
  SimResponse cancel(std::string_view id);
  /// GET /responses/{id}/input_items (limit, order, after).
  SimResponse input_items(std::string_view id, std::string_view query);

  std::size_t size() const { return store_.size(); }
  std::size_t bytes() const { return store_.bytes(); }

 private:
  SimResponse not_found(std::string_view id) const;

  ObjectStore<StoredResponse> store_;
  GenerationSettings generation_;
  IdMinter& ids_;
  const Clock& clock_;
};

}  // namespace smartlb::sim
