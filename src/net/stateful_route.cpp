// The stateful phase of the request path (include/smartlb/net/stateful_route.hpp).
#include "smartlb/net/stateful_route.hpp"

#include <algorithm>

namespace smartlb::net {
namespace {

// A JSON text starts with an object or an array here (a multipart upload is not scanned).
bool looks_like_json(std::string_view body) {
  const std::size_t at = body.find_first_not_of(" \t\r\n");
  return at != std::string_view::npos && (body[at] == '{' || body[at] == '[');
}

}  // namespace

std::optional<std::string> StatefulRoute::prepare(const Snapshot& snap, http1::RequestHead& req,
                                                  http::RequestTarget& target, LearntPlacements& learnt) {
  path_ = stateful::classify_path(target.path);
  if (path_.stateful() || stateful::may_hold_tag(target.path) || stateful::may_hold_tag(target.query)) {
    target_.clear();
    stateful::strip_path(target.path, path_, target_, ids_);
    if (!target.query.empty()) {
      target_.push_back('?');
      stateful::strip_query(target.query, target_, ids_);
    }
    if (!ids_.tagged().empty()) {
      // The same characters less some: a valid request-target still.
      if (const auto stripped = http::parse_request_target(target_)) {
        target = *stripped;
        path_ = stateful::classify_path(target.path);
      }
    }
  }
  if (!req.body.empty() && (path_.stateful() || stateful::may_hold_tag(req.body)) &&
      looks_like_json(req.body)) {
    const std::size_t tags_before = ids_.tagged().size();
    std::string stripped;
    if (stateful::strip_json_body(req.body, stripped, ids_) && ids_.tagged().size() > tags_before) {
      // ids_ views the client's body: its bytes stay where they are (a body with a tag is
      // longer than any string kept inline, so the move keeps its buffer).
      client_body_ = std::move(req.body);
      req.body = std::move(stripped);
    }
  }
  ids_.order();
  return place(snap, learnt);
}

std::optional<std::string> StatefulRoute::place(const Snapshot& snap, LearntPlacements& learnt) {
  std::optional<std::uint32_t> pin;
  const stateful::FoundId* unknown = nullptr;  // the first id whose tag names no configured resource
  for (const stateful::FoundId& found : ids_.tagged()) {
    const Resource* r = snap.resource_tagged(found.bits);
    if (!r) {
      if (!unknown) unknown = &found;
      continue;
    }
    const auto index = static_cast<std::uint32_t>(r - snap.resources.data());
    if (pin && *pin != index)
      return "The ids of this request were made on two different resources (" + snap.resources[*pin].label +
             " and " + r->label + "); a request can only use objects of one.";
    pin = pin.value_or(index);
  }
  if (pin) {
    resources_ = {*pin};
    pinned_ = true;
    return std::nullopt;
  }
  // Ids without a tag (or with one this configuration no longer has): the first in pin order
  // places the request.
  const auto untagged = ids_.untagged();
  if (!untagged.empty() && (!unknown || untagged.front().rank <= unknown->rank))
    learn_key_ = untagged.front().id;
  else if (unknown)
    learn_key_ = unknown->id;
  if (!path_.stateful() || learn_key_.empty() || snap.resources.empty()) return std::nullopt;
  std::optional<std::uint32_t> known;
  if (const auto bits = learnt.find(learn_key_))
    if (const Resource* r = snap.resource_tagged(*bits))
      known = static_cast<std::uint32_t>(r - snap.resources.data());
  if (known) resources_.push_back(*known);
  for (std::uint32_t r = 0; r < snap.resources.size(); ++r)
    if (r != known) resources_.push_back(r);
  return std::nullopt;
}

void StatefulRoute::keep_resources_of(const Rule* matched) {
  if (!untagged_try() || !matched) return;
  const auto has_no_member = [matched](std::uint32_t r) {
    return r >= matched->on_resource.size() || !matched->on_resource[r];
  };
  if (std::all_of(resources_.begin(), resources_.end(), has_no_member)) return;
  std::erase_if(resources_, has_no_member);
}

const Rule* StatefulRoute::rule(const Snapshot& snap, const Rule* matched, bool names_model) const {
  if (resources_.empty())
    return matched || names_model || !path_.stateful() ? matched : snap.any_backend.get();
  if (!matched && names_model) return nullptr;
  const std::uint32_t r = resources_[at_];
  if (matched && r < matched->on_resource.size() && matched->on_resource[r])
    return matched->on_resource[r].get();
  return snap.resources[r].rule.get();
}

void StatefulRoute::answered(const Snapshot& snap, std::size_t backend, LearntPlacements& learnt) const {
  if (!untagged_try() || learn_key_.empty() || backend >= snap.resource_of.size()) return;
  learnt.learn(learn_key_, snap.resources[snap.resource_of[backend]].tag.bits);
}

}  // namespace smartlb::net
