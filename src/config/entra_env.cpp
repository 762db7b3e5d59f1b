#include "smartlb/config/entra_env.hpp"

#include <unistd.h>

#include <algorithm>
#include <cassert>

#include "smartlb/config/env_settings.hpp"
#include "smartlb/config/url.hpp"

namespace smartlb::config {
namespace {

// A variable that is set and not empty. Every one read is in config/env_settings.hpp's table.
const std::string* lookup_set(const EnvMap& env, const std::string& key) {
  assert(find_env_setting(key) && "an environment variable missing from env_settings.cpp");
  auto it = env.find(key);
  return it == env.end() || it->second.empty() ? nullptr : &it->second;
}

bool is_id_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.';
}

bool is_id(std::string_view v) {
  return !v.empty() && v.size() <= 128 && std::all_of(v.begin(), v.end(), is_id_char);
}

// Printable ASCII without spaces: safe in a URL query, a form body and a header.
bool is_token_text(std::string_view v) {
  return !v.empty() && std::all_of(v.begin(), v.end(), [](unsigned char c) { return c > 0x20 && c < 0x7f; });
}

// A setting that is set and not empty.
const std::string* given(const std::string* v) { return v && !v->empty() ? v : nullptr; }

bool is_loopback(const std::string& host) {
  return host == "127.0.0.1" || host == "localhost" || host == "::1";
}

// An endpoint a secret is sent to: https, or plain http to this machine only (App Service's
// identity endpoint is http://localhost:..., and tests run on 127.0.0.1).
std::optional<std::string> check_endpoint(std::string_view url, bool allow_http_anywhere) {
  const auto parsed = parse_backend_url(url.substr(0, url.find('?')));
  if (!parsed.url) return parsed.error;
  if (!parsed.url->tls && !allow_http_anywhere && !is_loopback(parsed.url->host))
    return "must be https (plain http only to 127.0.0.1 or localhost)";
  return std::nullopt;
}

}  // namespace

std::string_view to_string(EntraSource s) {
  switch (s) {
    case EntraSource::Auto:
      return "auto";
    case EntraSource::ClientSecret:
      return "client-secret";
    case EntraSource::WorkloadIdentity:
      return "workload-identity";
    case EntraSource::AppService:
      return "app-service";
    case EntraSource::Imds:
      return "imds";
  }
  return "auto";
}

std::optional<EntraSource> parse_entra_source(std::string_view text) {
  for (EntraSource s : {EntraSource::Auto, EntraSource::ClientSecret, EntraSource::WorkloadIdentity,
                        EntraSource::AppService, EntraSource::Imds})
    if (text == to_string(s)) return s;
  return std::nullopt;
}

EntraSource choose_entra_source(const EnvMap& env) {
  const bool app = lookup_set(env, "AZURE_TENANT_ID") && lookup_set(env, "AZURE_CLIENT_ID");
  if (app && lookup_set(env, "AZURE_CLIENT_SECRET")) return EntraSource::ClientSecret;
  if (app && lookup_set(env, "AZURE_FEDERATED_TOKEN_FILE")) return EntraSource::WorkloadIdentity;
  if (lookup_set(env, "IDENTITY_ENDPOINT") && lookup_set(env, "IDENTITY_HEADER"))
    return EntraSource::AppService;
  return EntraSource::Imds;
}

std::vector<std::string> load_entra_credential(const EnvMap& env, const std::string& prefix,
                                               EntraCredentialConfig& out) {
  EntraBackendSettings s;
  s.source_name = prefix + "ENTRA_SOURCE";
  s.scope_name = prefix + "ENTRA_SCOPE";
  s.client_id_name = prefix + "ENTRA_CLIENT_ID";
  s.source = lookup_set(env, s.source_name);
  s.scope = lookup_set(env, s.scope_name);
  s.client_id = lookup_set(env, s.client_id_name);
  return resolve_entra_credential(env, s, out);
}

namespace {

// Reads what one Entra ID source needs from the environment into `out`, naming each variable
// that is missing or wrong.
class SourceReader {
 public:
  SourceReader(const EnvMap& env, EntraCredentialConfig& out, std::vector<std::string>& errors,
               std::string why, const std::string* own_client)
      : env_(env), out_(out), errors_(errors), why_(std::move(why)), own_client_(own_client) {}

  void client_secret() {
    tenant_and_client();
    authority();
    if (const std::string* s = require("AZURE_CLIENT_SECRET")) {
      if (!is_token_text(*s))
        error("AZURE_CLIENT_SECRET", "contains whitespace or a control character; value not shown");
      else
        out_.client_secret = *s;
    }
  }

  void workload_identity() {
    tenant_and_client();
    authority();
    if (const std::string* f = require("AZURE_FEDERATED_TOKEN_FILE")) {
      if (::access(f->c_str(), R_OK) != 0)
        error("AZURE_FEDERATED_TOKEN_FILE", "cannot read the file \"" + f->substr(0, 200) + "\"");
      else
        out_.federated_token_file = *f;
    }
  }

  void app_service() {
    if (const std::string* e = require("IDENTITY_ENDPOINT")) {
      if (const auto bad = check_endpoint(*e, true))
        error("IDENTITY_ENDPOINT", *bad);
      else
        out_.identity_endpoint = *e;
    }
    if (const std::string* h = require("IDENTITY_HEADER")) {
      if (!is_token_text(*h))
        error("IDENTITY_HEADER", "contains whitespace or a control character; value not shown");
      else
        out_.identity_header = *h;
    }
    user_assigned_identity();
  }

  void imds() {
    user_assigned_identity();
    if (const std::string* host = lookup_set(env_, "AZURE_POD_IDENTITY_AUTHORITY_HOST")) {
      if (const auto bad = check_endpoint(*host, true))
        error("AZURE_POD_IDENTITY_AUTHORITY_HOST", *bad);
      else
        out_.imds_endpoint = (host->back() == '/' ? host->substr(0, host->size() - 1) : *host) +
                             "/metadata/identity/oauth2/token";
    }
  }

 private:
  void error(const std::string& var, const std::string& what) { errors_.push_back(var + ": " + what); }
  const std::string* require(const char* var) {
    const std::string* v = lookup_set(env_, var);
    if (!v) error(var, "is required by " + why_);
    return v;
  }
  void authority() {
    if (const std::string* host = lookup_set(env_, "AZURE_AUTHORITY_HOST")) {
      if (const auto bad = check_endpoint(*host, false))
        error("AZURE_AUTHORITY_HOST", *bad);
      else
        out_.authority_host = host->back() == '/' ? *host : *host + "/";
    }
  }
  void tenant_and_client() {
    if (const std::string* t = require("AZURE_TENANT_ID")) {
      if (!is_id(*t))
        error("AZURE_TENANT_ID", "must be a tenant id or domain (letters, digits, '-', '.')");
      else
        out_.tenant_id = *t;
    }
    if (own_client_) {
      out_.client_id = *own_client_;
    } else if (const std::string* c = require("AZURE_CLIENT_ID")) {
      if (!is_id(*c))
        error("AZURE_CLIENT_ID", "must be a client id (a GUID)");
      else
        out_.client_id = *c;
    }
  }
  // A user-assigned managed identity: the backend's own, else AZURE_CLIENT_ID as Azure's SDKs do.
  void user_assigned_identity() {
    if (own_client_)
      out_.client_id = *own_client_;
    else if (const std::string* c = lookup_set(env_, "AZURE_CLIENT_ID"); c && is_id(*c))
      out_.client_id = *c;
  }

  const EnvMap& env_;
  EntraCredentialConfig& out_;
  std::vector<std::string>& errors_;
  std::string why_;  // what asks for the source's variables, for "is required by ..."
  const std::string* own_client_;
};

}  // namespace

std::vector<std::string> resolve_entra_credential(const EnvMap& env, const EntraBackendSettings& backend,
                                                  EntraCredentialConfig& out) {
  std::vector<std::string> errors;
  const auto error = [&](const std::string& var, const std::string& what) {
    errors.push_back(var + ": " + what);
  };
  const std::string& source_var = backend.source_name;
  EntraSource source = EntraSource::Auto;
  if (const std::string* v = given(backend.source)) {
    const auto s = parse_entra_source(*v);
    if (!s) {
      error(source_var, "must be auto, client-secret, workload-identity, app-service or imds, got \"" +
                            (is_token_text(*v) ? v->substr(0, 40) : std::string("?")) + "\"");
      return errors;
    }
    source = *s;
  }
  const bool chosen = source == EntraSource::Auto;
  if (chosen) source = choose_entra_source(env);
  out.source = source;

  if (const std::string* v = given(backend.scope)) {
    if (!is_token_text(*v) || v->size() > 512)
      error(backend.scope_name,
            "must be one scope without spaces, such as https://cognitiveservices.azure.com/.default");
    else
      out.scope = *v;
  }
  const std::string* own_client = given(backend.client_id);
  if (own_client && !is_id(*own_client)) error(backend.client_id_name, "must be a client id (a GUID)");
  if (own_client && source == EntraSource::ClientSecret)
    error(backend.client_id_name,
          "applies to managed identities and workload identity; client-secret uses AZURE_CLIENT_ID");

  SourceReader read(env, out, errors,
                    chosen ? "auto chose " + std::string(to_string(source))
                           : source_var + "=" + std::string(to_string(source)),
                    own_client);
  switch (source) {
    case EntraSource::ClientSecret:
      read.client_secret();
      break;
    case EntraSource::WorkloadIdentity:
      read.workload_identity();
      break;
    case EntraSource::AppService:
      read.app_service();
      break;
    case EntraSource::Imds:
      read.imds();
      break;
    case EntraSource::Auto:
      break;
  }
  return errors;
}

}  // namespace smartlb::config
