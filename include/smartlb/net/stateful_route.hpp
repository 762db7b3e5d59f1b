#pragma once
// The stateful phase of the request path (docs/stateful-apis.md): where a request's objects
// live. Before matching, the request's tags come off (its path, the `after` / `before` of a
// list call, the strings of a JSON body) and what they name places it: a tag of a configured
// resource pins it there; ids without a tag on a stateful path are tried on each resource once
// (the one that learnt them, if any, first); anything else routes as usual. The forwarder asks
// this which rule each try routes by, and tells it what was answered.
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "smartlb/http/request_target.hpp"
#include "smartlb/http1/http_head.hpp"
#include "smartlb/net/snapshot.hpp"
#include "smartlb/stateful/placement_cache.hpp"
#include "smartlb/stateful/request_ids.hpp"
#include "smartlb/stateful/stateful_path.hpp"

namespace smartlb::net {

// Where untagged ids were found, for every worker of the process (not shared with replicas).
class LearntPlacements {
 public:
  std::optional<std::uint64_t> find(std::string_view id) {
    const std::lock_guard lock(mutex_);
    return cache_.find(id);
  }
  void learn(std::string_view id, std::uint64_t bits) {
    const std::lock_guard lock(mutex_);
    cache_.learn(id, bits);
  }

 private:
  std::mutex mutex_;
  stateful::PlacementCache cache_;
};

class StatefulRoute {
 public:
  // Takes the tags off `req` (its body replaced when it had some) and `target` (re-pointed at
  // the stripped request-target kept here), and places the request. The message of a 400
  // when its tags name two configured resources.
  std::optional<std::string> prepare(const Snapshot& snap, http1::RequestHead& req,
                                     http::RequestTarget& target, LearntPlacements& learnt);

  // An untagged try with a rule tries only the resources the rule has backends on (when it
  // has some): another resource's answer would be about the model, not the object.
  void keep_resources_of(const Rule* matched);
  // The rule of the current try: `matched` restricted to the try's resource, or (when it has
  // no backend there, or nothing matched a request that names no model) every backend there.
  // Null when an ordinary request matched nothing.
  const Rule* rule(const Snapshot& snap, const Rule* matched, bool names_model) const;

  // Whether a 404 (or a 400 that says "not found") of this try means "not here": the request
  // names objects, so the next backend of its resource, or the next resource, may have them.
  bool looks_for_object() const { return pinned_ || untagged_try(); }
  // Ids without a tag, tried resource after resource.
  bool untagged_try() const { return !pinned_ && !resources_.empty(); }
  // Moves an untagged try to the next resource; false when none is left.
  bool next_resource() { return ++at_ < resources_.size(); }
  // The backend at `backend` (a snapshot position) answered: an untagged id is remembered there.
  void answered(const Snapshot& snap, std::size_t backend, LearntPlacements& learnt) const;
  // A stateful call that names no object (a list's first page, an upload): it goes where the
  // client's others of its kind went (ForwardJob keys its choice on the client).
  bool names_no_object() const { return path_.stateful() && resources_.empty() && learn_key_.empty(); }
  // The name of the resource the request's ids pin it to; empty when not pinned.
  std::string_view pinned_resource(const Snapshot& snap) const {
    return pinned_ && resources_.front() < snap.resources.size()
               ? std::string_view(snap.resources[resources_.front()].label)
               : std::string_view();
  }
  // Whether the answer's ids are tagged (a stateful API's, not a content download).
  bool tags_answers() const { return path_.stateful() && !path_.content; }

 private:
  std::optional<std::string> place(const Snapshot& snap, LearntPlacements& learnt);

  stateful::StatefulPath path_;
  std::string target_;       // the request-target without tags, when it had some
  std::string client_body_;  // the client's body, when req.body lost tags (ids_ views it)
  stateful::RequestIds ids_;
  std::vector<std::uint32_t> resources_;  // resources to try, in order; empty: the usual routing
  std::size_t at_ = 0;
  bool pinned_ = false;
  // The untagged id an answer places: a copy, since an event stream frees the body it may come
  // from before its answer is accounted.
  std::string learn_key_;
};

}  // namespace smartlb::net
