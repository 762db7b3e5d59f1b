// The opening handshake (include/smartlb/websocket/handshake.hpp).
#include "smartlb/websocket/handshake.hpp"

#include <openssl/evp.h>
#include <openssl/sha.h>

#include <array>

#include "smartlb/base/text.hpp"

namespace smartlb::websocket {
namespace {

constexpr std::string_view kGuid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";  // RFC 6455 section 1.3

// Calls fn(entry) for each trimmed, non-empty entry of a comma-separated list.
template <class Fn>
void each_entry(std::string_view list, Fn&& fn) {
  while (!list.empty()) {
    const std::size_t comma = list.find(',');
    const std::string_view entry = base::trim_ows(list.substr(0, comma));
    if (!entry.empty()) fn(entry);
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
}

bool has_token(std::string_view list, std::string_view token) {
  bool found = false;
  each_entry(list, [&](std::string_view e) { found = found || base::iequals(e, token); });
  return found;
}

std::string base64(const unsigned char* data, std::size_t size) {
  std::string out(4 * ((size + 2) / 3), '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), data, static_cast<int>(size));
  out.resize(static_cast<std::size_t>(n));
  return out;
}

// Calls fn(name, raw) for each `name=value` (or bare `name`) parameter of a query.
template <class Fn>
void each_parameter(std::string_view query, Fn&& fn) {
  while (!query.empty()) {
    const std::size_t amp = query.find('&');
    const std::string_view param = query.substr(0, amp);
    const std::size_t eq = param.find('=');
    fn(param.substr(0, eq), param);
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
}

}  // namespace

bool is_realtime_path(std::string_view path) {
  return path == "/openai/realtime" || path == "/openai/v1/realtime" || path == "/v1/realtime";
}

bool is_responses_path(std::string_view path) {
  return path == "/openai/responses" || path == "/openai/v1/responses" || path == "/v1/responses";
}

bool is_websocket_path(std::string_view path) { return is_realtime_path(path) || is_responses_path(path); }

bool asks_for_websocket(std::string_view method, std::string_view upgrade, std::string_view connection) {
  return method == "GET" && has_token(upgrade, "websocket") && has_token(connection, "upgrade");
}

std::string_view model_parameter(std::string_view path) {
  return path == "/openai/realtime" ? "deployment" : "model";
}

std::string_view query_value(std::string_view query, std::string_view name) {
  std::string_view found;
  bool seen = false;
  each_parameter(query, [&](std::string_view n, std::string_view param) {
    if (seen || n != name) return;
    seen = true;
    found = param.size() > n.size() ? param.substr(n.size() + 1) : std::string_view();
  });
  return found;
}

std::string upstream_query(std::string_view query, std::string_view model_name, std::string_view rename) {
  std::string out;
  each_parameter(query, [&](std::string_view n, std::string_view param) {
    if (n == "api-key" || param.empty()) return;
    if (!out.empty()) out.push_back('&');
    if (!rename.empty() && n == model_name) {
      out.append(n).push_back('=');
      out.append(rename);
    } else {
      out.append(param);
    }
  });
  return out;
}

std::string_view subprotocol_key(std::string_view offered) {
  std::string_view key;
  each_entry(offered, [&](std::string_view e) {
    if (key.empty() && e.starts_with(kKeySubprotocolPrefix)) key = e.substr(kKeySubprotocolPrefix.size());
  });
  return key;
}

std::string without_key_subprotocol(std::string_view offered) {
  std::string out;
  each_entry(offered, [&](std::string_view e) {
    if (e.starts_with(kKeySubprotocolPrefix)) return;
    if (!out.empty()) out.append(", ");
    out.append(e);
  });
  return out;
}

std::string_view browser_key(std::string_view offered, std::string_view query) {
  const std::string_view key = subprotocol_key(offered);
  return key.empty() ? query_value(query, "api-key") : key;
}

std::string new_key(base::FastRandom& rng) {
  std::array<unsigned char, 16> bytes{};
  for (std::size_t i = 0; i < bytes.size(); i += 8) {
    std::uint64_t r = rng.next();
    for (std::size_t j = 0; j < 8; ++j, r >>= 8) bytes[i + j] = static_cast<unsigned char>(r & 0xff);
  }
  return base64(bytes.data(), bytes.size());
}

std::string accept_for(std::string_view key) {
  std::string text(key);
  text.append(kGuid);
  std::array<unsigned char, SHA_DIGEST_LENGTH> digest{};
  SHA1(reinterpret_cast<const unsigned char*>(text.data()), text.size(), digest.data());
  return base64(digest.data(), digest.size());
}

UpgradeAnswer judge_upgrade(const UpgradeFields& a, std::string_view sent_key) {
  if (a.status != 101) return UpgradeAnswer::NotUpgraded;
  if (!has_token(a.upgrade, "websocket") || !has_token(a.connection, "upgrade"))
    return UpgradeAnswer::NotWebSocket;
  if (base::trim_ows(a.accept) != accept_for(sent_key)) return UpgradeAnswer::BadAccept;
  if (!base::trim_ows(a.extensions).empty()) return UpgradeAnswer::WithExtension;
  return UpgradeAnswer::Accepted;
}

std::string_view to_string(UpgradeAnswer a) {
  switch (a) {
    case UpgradeAnswer::Accepted:
      return "accepted";
    case UpgradeAnswer::NotUpgraded:
      return "not upgraded";
    case UpgradeAnswer::BadAccept:
      return "Sec-WebSocket-Accept does not answer the key sent";
    case UpgradeAnswer::NotWebSocket:
      return "101 without Upgrade: websocket";
    case UpgradeAnswer::WithExtension:
      return "101 with an extension nobody offered";
  }
  return "?";
}

}  // namespace smartlb::websocket
