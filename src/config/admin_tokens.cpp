#include "smartlb/config/admin_tokens.hpp"

#include <set>

#include "smartlb/config/values.hpp"
#include "smartlb/http/header_rules.hpp"

namespace smartlb::config {
namespace {

bool is_token68_char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
         c == '_' || c == '~' || c == '+' || c == '/';
}

}  // namespace

std::string_view to_string(AdminRole r) { return r == AdminRole::Write ? "write" : "read"; }

std::optional<AdminRole> admin_role_named(std::string_view name) {
  if (name == "read") return AdminRole::Read;
  if (name == "write") return AdminRole::Write;
  return std::nullopt;
}

std::optional<std::string> admin_token_problem(std::string_view token) {
  // A short token can be guessed; a long one only costs a header.
  if (token.size() < 16 || token.size() > 512) return "must be 16 to 512 characters long (value not shown)";
  std::size_t end = token.size();
  while (end > 0 && token[end - 1] == '=') --end;
  for (std::size_t i = 0; i < end; ++i)
    if (!is_token68_char(token[i]))
      return "may hold only A-Z a-z 0-9 - . _ ~ + / (and = at the end), as a bearer token (value not shown)";
  if (end == 0) return "must not be only '=' (value not shown)";
  return std::nullopt;
}

std::vector<AdminToken> parse_admin_tokens(std::string_view value, std::string_view variable,
                                           std::vector<std::string>& errors) {
  const std::string var(variable);
  std::vector<AdminToken> out;
  int reads = 0, writes = 0;
  std::size_t position = 0;
  for (const std::string_view entry : http::list_tokens(value)) {
    ++position;
    const std::string where = var + ": entry " + std::to_string(position);
    const std::size_t colon = entry.find(':');
    if (colon == std::string_view::npos) {
      errors.push_back(where + " must be role:token, role read or write (value not shown)");
      continue;
    }
    const auto role = admin_role_named(entry.substr(0, colon));
    if (!role) {  // not quoted: a token written first would be shown
      errors.push_back(where + " has an unknown role; a role is read or write (value not shown)");
      continue;
    }
    const std::string_view token = entry.substr(colon + 1);
    if (const auto problem = admin_token_problem(token)) {
      errors.push_back(where + " (" + std::string(to_string(*role)) + "): the token " + *problem);
      continue;
    }
    const int n = *role == AdminRole::Write ? ++writes : ++reads;
    out.push_back({std::string(to_string(*role)) + "-" + std::to_string(n), *role, std::string(token)});
  }
  if (out.empty() && position == 0) errors.push_back(var + ": is set but holds no token");
  return out;
}

std::vector<std::string> admin_token_conflicts(const AdminConfig& admin, std::size_t from) {
  std::vector<std::string> errors;
  std::set<std::string_view> tokens, names;
  for (std::size_t i = 0; i < admin.tokens.size(); ++i) {
    const AdminToken& t = admin.tokens[i];
    const bool new_token = tokens.insert(t.token).second, new_name = names.insert(t.name).second;
    if (i < from) continue;  // checked with its own source
    if (!new_token) errors.push_back(t.name + " holds the same token as another entry (value not shown)");
    // Qualified: where <iomanip> is in the translation unit (a unity batch), ADL finds std::quoted.
    if (!new_name) errors.push_back("the name " + config::quoted(t.name) + " is given to two tokens");
  }
  return errors;
}

}  // namespace smartlb::config
