// parse_token_answer (credentials/entra): any token endpoint's answer. The first byte picks the
// status (2xx or an error), the rest is the body. Invariants: exactly one of token and error;
// a token is never empty and fits in a header; it expires after `now`; no error quotes it.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "smartlb/credentials/entra/token_request.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace smartlb::credentials::entra;
  if (size == 0) return 0;
  const unsigned status = data[0] < 200 ? 200 + data[0] % 5 : 300 + data[0];
  const std::string_view body(reinterpret_cast<const char*>(data + 1), size - 1);
  const WallTime now{std::chrono::seconds(1'800'000'000)};
  const TokenAnswer a = parse_token_answer(status, body, now);
  if (a.token.has_value() == !a.error.empty()) std::abort();
  if (a.token) {
    if (a.token->token.empty() || a.token->expires_at <= now) std::abort();
    for (unsigned char c : a.token->token)
      if (c <= 0x20 || c >= 0x7f) std::abort();
  }
  form_encode(body);
  return 0;
}
