#pragma once
// One Redis reply as an owned value (RESP2: nil, integer, bulk or status string, error, array),
// and the outcome of one command: its reply, or the reason there is none (Redis lost, a
// timeout, not connected). No Asio, no hiredis in this header.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace smartlb::redis {

struct RedisValue {
  enum class Kind : std::uint8_t { Nil, Integer, String, Status, Error, Array };
  Kind kind = Kind::Nil;
  std::int64_t integer = 0;
  std::string text;  // String, Status, Error
  std::vector<RedisValue> elements;

  bool is_nil() const { return kind == Kind::Nil; }
  bool is_error() const { return kind == Kind::Error; }
  bool is_array() const { return kind == Kind::Array; }
  // A String or Status reply's text equal to `s` ("OK", "PONG").
  bool is(std::string_view s) const { return (kind == Kind::String || kind == Kind::Status) && text == s; }
  // An integer reply, or a string holding one (Lua returns strings as bulk strings).
  std::optional<std::int64_t> as_integer() const;
};

struct RedisResult {
  std::optional<RedisValue> value;  // none: no reply (see `failure`)
  std::string failure;              // why there is no reply, or the error reply's text

  // A reply that is not an error.
  bool ok() const { return value && !value->is_error(); }
  static RedisResult lost(std::string why) { return {std::nullopt, std::move(why)}; }
  static RedisResult of(RedisValue v) {
    std::string f = v.is_error() ? v.text : std::string();
    return {std::move(v), std::move(f)};
  }
};

// Called with a command's result, on the Redis thread.
using RedisCallback = std::function<void(RedisResult)>;

}  // namespace smartlb::redis
