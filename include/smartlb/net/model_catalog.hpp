#pragma once
// A model catalog clients can discover (MODEL_CATALOG): GET /v1/models, /openai/models,
// /openai/v1/models and /anthropic/v1/models (and /{...}/models/{model}) are answered by smartlb
// from its configuration -- every model name a client may ask for, filtered by the rules the
// calling client's subjects let it reach -- instead of one backend's list, in which the names
// clients should use do not appear (Open WebUI, LibreChat, IDE plugins and agents list models
// to offer them). A configuration that names no model (environment backends without a
// deployment name pass any name through) has no catalog: the list goes to a backend as before.
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "smartlb/net/snapshot.hpp"

namespace smartlb::net {

struct CatalogRequest {
  bool anthropic = false;  // Anthropic's shape (its path, or an anthropic-version header)
  std::string_view model;  // one model's entry (empty: the list)
};

// Whether `method` and `path` ask for the model list (or one model of it).
std::optional<CatalogRequest> catalog_request(std::string_view method, std::string_view path,
                                              bool anthropic_version);

// The names a caller with `subjects` may ask for, sorted, each once: a rule's `when.models` when
// it lists some, else the names its targets serve (their deployment or model, aliases, and the
// last part of their id; an environment backend's deployment name).
std::vector<std::string_view> catalog_names(const Snapshot& snapshot, std::span<const std::string> subjects);

// The list, or one entry, in OpenAI's shape ({"object":"list","data":[{"id":...,"object":"model",
// "created":...,"owned_by":"smartlb"}]}) or Anthropic's ({"data":[{"type":"model","id":...,
// "display_name":...,"created_at":...}],"has_more":false,"first_id":...,"last_id":...}).
std::string catalog_json(std::span<const std::string_view> names, bool anthropic, std::int64_t created_unix);
std::string catalog_entry_json(std::string_view name, bool anthropic, std::int64_t created_unix);

}  // namespace smartlb::net
