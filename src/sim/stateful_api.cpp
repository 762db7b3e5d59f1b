#include "smartlb/sim/stateful_api.hpp"

#include "smartlb/sim/error_bodies.hpp"

#include <nlohmann/json.hpp>

namespace smartlb::sim {
namespace {

std::string operation_of(const Route& route, std::string_view method) {
  std::string name(collection_name(route.collection));
  name[0] = static_cast<char>(name[0] - 'a' + 'A');
  if (route.object_id.empty()) return name + (method == "POST" ? "_Create" : "_List");
  if (route.action == "cancel") return name + "_Cancel";
  if (route.action == "input_items") return name + "_InputItems";
  if (route.action == "content") return name + "_Content";
  return name + (method == "DELETE" ? "_Delete" : "_Get");
}

}  // namespace

StatefulApi::StatefulApi(const StatefulSettings& settings, IdMinter& ids, const Clock& clock)
    : generation_(settings.generation),
      responses_(settings.limits, settings.generation, ids, clock),
      files_(settings.limits, ids, clock),
      batches_(settings.limits,
               BatchGeneration{settings.generation.stream_chunks, settings.generation.default_max_tokens},
               ids, clock) {}

std::string_view StatefulApi::allowed_methods(const Route& route) {
  const bool collection = route.object_id.empty();
  switch (route.collection) {
    case Collection::Responses:
      if (collection) return "POST";
      if (route.action == "cancel") return "POST";
      if (route.action == "input_items") return "GET";
      return "GET, DELETE";
    case Collection::Files:
      if (collection) return "GET, POST";
      if (route.action == "content") return "GET";
      return "GET, DELETE";
    case Collection::Batches:
      if (collection) return "GET, POST";
      if (route.action == "cancel") return "POST";
      return "GET";
  }
  return "";
}

StatefulPlan StatefulApi::plan(const Route& route, const SimRequest& request) const {
  StatefulPlan plan;
  plan.operation = operation_of(route, request.method);
  if (route.collection != Collection::Responses || !route.object_id.empty()) return plan;
  auto parsed = parse_responses_create(request.body);
  if (!parsed.request) {
    const RequestError& error = parsed.error;
    plan.answer = bad_request_response(error.message, error.code, error.param);
    return plan;
  }
  plan.deployment = parsed.request->model;
  plan.cost = parsed.request->prompt_tokens +
              parsed.request->max_output_tokens.value_or(generation_.default_max_tokens);
  plan.create = std::move(parsed.request);
  return plan;
}

StoreAnswer StatefulApi::execute(const Route& route, const SimRequest& request, const StatefulPlan& plan) {
  const std::string_view id = route.object_id;
  switch (route.collection) {
    case Collection::Responses:
      if (id.empty()) return responses_.create(*plan.create);
      if (route.action == "cancel") return {responses_.cancel(id)};
      if (route.action == "input_items") return {responses_.input_items(id, route.query)};
      if (request.method == "DELETE") return {responses_.remove(id)};
      return {responses_.retrieve(id, route.query)};
    case Collection::Files:
      if (id.empty()) return {request.method == "POST" ? files_.create(request) : files_.list(route.query)};
      if (route.action == "content") return {files_.content(id)};
      if (request.method == "DELETE") return {files_.remove(id)};
      return {files_.retrieve(id)};
    case Collection::Batches:
      if (id.empty())
        return {request.method == "POST" ? batches_.create(request.body, files_)
                                         : batches_.list(route.query)};
      if (route.action == "cancel") return {batches_.cancel(id)};
      return {batches_.retrieve(id, files_)};
  }
  return {json_response(404, openai_error_body("404", "Resource not found"))};
}

nlohmann::json StatefulApi::stats_json() const {
  return {{"responses", {{"objects", responses_.size()}, {"bytes", responses_.bytes()}}},
          {"files", {{"objects", files_.size()}, {"bytes", files_.bytes()}}},
          {"batches", {{"objects", batches_.size()}}}};
}

}  // namespace smartlb::sim
