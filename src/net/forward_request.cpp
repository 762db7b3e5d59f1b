// A client connection's request forwarded: its policy (ForwardJob) over the mechanism that moves
// its bytes (UpstreamExchange), both in memory the connection borrows for the request.
#include "smartlb/net/forward_job.hpp"
#include "smartlb/net/upstream_exchange.hpp"
#include "smartlb/net/worker.hpp"

namespace smartlb::net {

// One request's policy and mechanism, made and destroyed together.
struct ForwardRequest {
  ForwardRequest(Worker& w, const Snapshot& snapshot, io::TimedSocket& client, http1::RequestHead& req,
                 const http::RequestTarget& target, const clients::ClientIdentity& caller,
                 telemetry::RequestRecord& rec, ForwardBuffers& buffers, StreamedBody* streamed)
      : exchange(w.exchange_context, client, req, rec, buffers),
        job(w.shared, w.rng, exchange, snapshot, req, target, caller, rec, buffers, streamed) {}
  UpstreamExchange exchange;
  ForwardJob job;
};

void ForwardBuffers::release_large(std::size_t keep) {
  for (std::string* text :
       {&passed_fields, &request_head, &response_head, &edited_body, &budget_fields, client_body})
    if (text && text->capacity() > keep) std::string().swap(*text);
  if (client_fields && client_fields->capacity() > keep) client_fields->release();
}

void ForwardJobSlot::end() {
  if (!job_) return;
  std::exchange(job_, nullptr)->~ForwardRequest();
  if (spares_->size() < kMaxSpare) {
    try {
      spares_->push_back(std::move(room_));
    } catch (...) {  // no room to keep it: it is freed instead
    }
  }
  room_.reset();
}

bool ForwardJobSlot::session_ready() const { return job_ && job_->job.session_ready(); }
std::unique_ptr<OpenedSession> ForwardJobSlot::take_session() { return job_->job.take_session(); }
bool ForwardJobSlot::stream_ready() const { return job_ && job_->job.stream_ready(); }
Task<Relayed> ForwardJobSlot::relay_stream() { return job_->job.relay_stream(); }
std::optional<Relayed> ForwardJobSlot::relay_stream_now() { return job_->job.relay_stream_now(); }
void ForwardJobSlot::await_stream(StreamWaker wake) { job_->job.await_stream(std::move(wake)); }
bool ForwardJobSlot::end_stream(const Relayed& r) { return job_->job.end_stream(r); }

// Not a coroutine: the request's job lives in memory its connection borrows rather than in a
// frame of its own, which would cost an aligned_alloc and a free per request most of the time
// (Asio's recycling cache holds only 8 frames per thread, and a burst of requests frees more).
Task<bool> forward_request(Worker& w, const Snapshot& snapshot, io::TimedSocket& client,
                           http1::RequestHead& req, const http::RequestTarget& target,
                           const clients::ClientIdentity& caller, telemetry::RequestRecord& rec,
                           ForwardBuffers& buffers, StreamedBody* streamed) {
  ForwardJobSlot& slot = buffers.job;
  slot.end();
  slot.spares_ = &w.spare_job_rooms;
  if (w.spare_job_rooms.empty()) {
    slot.room_ = std::make_unique_for_overwrite<std::byte[]>(sizeof(ForwardRequest));
  } else {
    slot.room_ = std::move(w.spare_job_rooms.back());
    w.spare_job_rooms.pop_back();
  }
  static_assert(alignof(ForwardRequest) <= alignof(std::max_align_t));
  slot.job_ =
      new (slot.room_.get()) ForwardRequest(w, snapshot, client, req, target, caller, rec, buffers, streamed);
  return slot.job_->job.run();
}

}  // namespace smartlb::net
