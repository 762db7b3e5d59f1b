// load_config_text (config/config_file): the config file, YAML or JSON, as a user (or a
// ConfigMap gone wrong) may write it. The environment is fixed and holds one variable, so that
// ${...} references resolve or not. Invariants: it never crashes; a configuration comes back
// exactly when there is no error; every error names where it is (a path of the file, a
// variable, or the file itself); a loaded configuration's every rule target names a target,
// and its summary can be printed; the same text loads the same way twice.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "smartlb/config/config_file.hpp"

namespace {

bool names_a_place(const std::string& e) {
  for (std::string_view p :
       {"backends", "targets", "clients", "rules", "model_configs", "subject_limits", "redis",
        "token_issuers", "admin", "name", "type", "(file)", "fuzz.yaml", "BACKEND_", "CLIENT_API_KEYS"})
    if (e.rfind(p, 0) == 0) return true;
  // Anything else says where in the file it is: "(fuzz.yaml:12)", "(lines 3 and 9 of
  // fuzz.yaml)". That covers what is found under a key the reader does not know ("backe?ds[2]:
  // "url" is given twice ...") and a top-level key given more than once.
  return e.find("fuzz.yaml") != std::string::npos;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const smartlb::config::EnvMap env = {{"KEY", "a-secret-value-1"}};
  const auto r = smartlb::config::load_config_text(env, text, "fuzz.yaml");
  if (r.config.has_value() != r.errors.empty()) std::abort();
  for (const auto& e : r.errors)
    if (!names_a_place(e)) std::abort();
  if (r.config) {
    const auto& policy = r.config->policy;
    for (const auto& rule : policy.rules)
      for (const auto& rt : rule.targets) {
        bool found = false;
        for (const auto& t : policy.targets) found = found || t.id == rt.target;
        if (!found) std::abort();
      }
    if (smartlb::config::describe_routing(*r.config).empty()) std::abort();
  }
  const auto again = smartlb::config::load_config_text(env, text, "fuzz.yaml");
  if (again.errors != r.errors || again.config.has_value() != r.config.has_value()) std::abort();
  return 0;
}
