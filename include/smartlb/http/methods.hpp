#pragma once
// Which request methods the OpenAI and Azure OpenAI APIs use. Anything else is answered 405
// by smartlb and never forwarded: a backend has no use for it, and an unknown method is where
// proxies and servers disagree (WebDAV verbs, a lower-case "get"). Pure functions.
#include <string_view>

namespace smartlb::http {

// GET, POST, PUT, PATCH, DELETE, HEAD or OPTIONS, exactly: methods are case-sensitive
// (RFC 9110 §9.1), so "get" is not GET.
bool is_api_method(std::string_view method);

// The Allow header of the 405: the methods is_api_method accepts.
inline constexpr std::string_view kApiMethodsAllow = "GET, POST, PUT, PATCH, DELETE, HEAD, OPTIONS";

}  // namespace smartlb::http
