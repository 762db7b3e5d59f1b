#pragma once
// RESP through hiredis: its command formatter and its reply reader, without its (blocking or
// TLS-less) connections. Bytes in, RedisValues out; the sockets are Asio's (redis_connection).
#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "smartlb/redis/redis_value.hpp"

namespace smartlb::redis {

// `args` as one RESP command (an array of bulk strings): binary-safe.
std::string format_command(std::span<const std::string> args);

class RespReader {
 public:
  RespReader();
  ~RespReader();
  RespReader(const RespReader&) = delete;
  RespReader& operator=(const RespReader&) = delete;

  // Adds bytes read from the connection. False when hiredis refused them.
  bool feed(std::string_view bytes);
  // The next complete reply, if the bytes so far hold one. Throws std::runtime_error on a
  // protocol error (the connection is unusable then).
  std::optional<RedisValue> next();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace smartlb::redis
