#pragma once
// The opening handshake of a WebSocket that smartlb forwards (RFC 6455 section 4): which
// requests are Realtime upgrades, what of the client's handshake goes upstream (never its
// credential, never an extension offer), the key smartlb sends instead of the client's, and the
// check of the backend's 101 against it. No I/O.
#include <cstdint>
#include <string>
#include <string_view>

#include "smartlb/base/random.hpp"

namespace smartlb::websocket {

// /openai/realtime, /openai/v1/realtime, /v1/realtime (the path without its query).
bool is_realtime_path(std::string_view path);
// The Responses API's WebSocket mode: /openai/v1/responses, /v1/responses, and Azure's
// /openai/responses (with its api-version).
bool is_responses_path(std::string_view path);
// Either: a path whose upgrade smartlb relays.
bool is_websocket_path(std::string_view path);

// A GET whose Upgrade names websocket and whose Connection names upgrade (case-insensitive
// tokens of comma-separated lists).
bool asks_for_websocket(std::string_view method, std::string_view upgrade, std::string_view connection);

// The query parameter that names the model of a WebSocket path: `deployment` on Azure's Realtime
// path (/openai/realtime), `model` on the others (a Responses socket's is optional).
std::string_view model_parameter(std::string_view path);

// The raw (still percent-encoded) value of the first `name` parameter of `query`; empty when
// it is absent.
std::string_view query_value(std::string_view query, std::string_view name);

// The query that goes upstream: without any `api-key` parameter (a browser's credential), and
// with the value of `model_name`'s parameter replaced by `rename` when that is not empty.
std::string upstream_query(std::string_view query, std::string_view model_name, std::string_view rename);

// Browsers cannot set headers on a WebSocket, so OpenAI's browser clients offer the key as a
// subprotocol: "openai-insecure-api-key.<key>".
inline constexpr std::string_view kKeySubprotocolPrefix = "openai-insecure-api-key.";
// The key a Sec-WebSocket-Protocol offer carries that way (empty: none).
std::string_view subprotocol_key(std::string_view offered);
// The offer without such entries (empty when nothing else was offered), entries separated by
// ", ".
std::string without_key_subprotocol(std::string_view offered);

// The credential a browser's Realtime handshake carries where headers cannot go: the key
// subprotocol entry, else the query's `api-key` (empty: neither).
std::string_view browser_key(std::string_view offered, std::string_view query);

// A fresh Sec-WebSocket-Key: 16 random bytes in base64 (24 characters).
std::string new_key(base::FastRandom& rng);
// The Sec-WebSocket-Accept that answers `key`: base64(SHA-1(key + the RFC's GUID)).
std::string accept_for(std::string_view key);

// What the backend's answer to the handshake is.
enum class UpgradeAnswer : std::uint8_t {
  Accepted,       // 101 with the right Upgrade, Connection and Sec-WebSocket-Accept
  NotUpgraded,    // any other status: an HTTP answer, to be judged as one
  BadAccept,      // 101 whose Sec-WebSocket-Accept does not answer the key sent
  NotWebSocket,   // 101 to something else (Upgrade or Connection wrong)
  WithExtension,  // 101 that turned on an extension nobody offered
};
struct UpgradeFields {
  unsigned status = 0;
  std::string_view upgrade, connection, accept, extensions;
};
UpgradeAnswer judge_upgrade(const UpgradeFields& answer, std::string_view sent_key);
std::string_view to_string(UpgradeAnswer a);

}  // namespace smartlb::websocket
