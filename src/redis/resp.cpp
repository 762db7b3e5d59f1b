#include "smartlb/redis/resp.hpp"

#include <hiredis/hiredis.h>

#include <charconv>
#include <stdexcept>
#include <vector>

namespace smartlb::redis {

std::optional<std::int64_t> RedisValue::as_integer() const {
  if (kind == Kind::Integer) return integer;
  if (kind != Kind::String && kind != Kind::Status) return std::nullopt;
  std::int64_t n = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (text.empty() || ec != std::errc{} || p != text.data() + text.size()) return std::nullopt;
  return n;
}

std::string format_command(std::span<const std::string> args) {
  std::vector<const char*> argv;
  std::vector<std::size_t> lens;
  argv.reserve(args.size());
  lens.reserve(args.size());
  for (const std::string& a : args) {
    argv.push_back(a.data());
    lens.push_back(a.size());
  }
  char* out = nullptr;
  const int n = redisFormatCommandArgv(&out, static_cast<int>(args.size()), argv.data(), lens.data());
  if (n < 0 || out == nullptr) throw std::bad_alloc();
  std::string cmd(out, static_cast<std::size_t>(n));
  redisFreeCommand(out);
  return cmd;
}

namespace {

RedisValue convert(const redisReply& r) {
  RedisValue v;
  switch (r.type) {
    case REDIS_REPLY_INTEGER:
      v.kind = RedisValue::Kind::Integer;
      v.integer = r.integer;
      break;
    case REDIS_REPLY_STRING:
    case REDIS_REPLY_STATUS:
    case REDIS_REPLY_ERROR:
      v.kind = r.type == REDIS_REPLY_STRING   ? RedisValue::Kind::String
               : r.type == REDIS_REPLY_STATUS ? RedisValue::Kind::Status
                                              : RedisValue::Kind::Error;
      v.text.assign(r.str, r.len);
      break;
    case REDIS_REPLY_ARRAY:
      v.kind = RedisValue::Kind::Array;
      v.elements.reserve(r.elements);
      for (std::size_t i = 0; i < r.elements; ++i) v.elements.push_back(convert(*r.element[i]));
      break;
    default:
      v.kind = RedisValue::Kind::Nil;
  }
  return v;
}

// hiredis allocates an array's element pointers as soon as it reads the array's header: a
// server (or anything on the path to it) answering `*370500170` would have it calloc 3 GB. No
// reply smartlb asks for comes near this many elements.
constexpr int kMaxArrayElements = 1 << 16;

// hiredis's own reply functions (static in hiredis.c; a reader made with the defaults points at them).
const redisReplyObjectFunctions& default_functions() {
  static const redisReplyObjectFunctions fns = [] {
    redisReader* r = redisReaderCreate();
    if (!r) throw std::bad_alloc();
    const redisReplyObjectFunctions f = *r->fn;
    redisReaderFree(r);
    return f;
  }();
  return fns;
}

struct ReaderState {
  int refused_elements = 0;  // the array header refused, if any
};

void* create_bounded_array(const redisReadTask* task, int elements) {
  if (elements > kMaxArrayElements) {
    if (auto* state = static_cast<ReaderState*>(task->privdata)) state->refused_elements = elements;
    return nullptr;  // hiredis stops with an error
  }
  return default_functions().createArray(task, elements);
}

redisReplyObjectFunctions* bounded_functions() {
  static redisReplyObjectFunctions fns = [] {
    redisReplyObjectFunctions f = default_functions();
    f.createArray = create_bounded_array;
    return f;
  }();
  return &fns;
}

}  // namespace

struct RespReader::Impl {
  ReaderState state;
  redisReader* reader = redisReaderCreateWithFunctions(bounded_functions());
  ~Impl() { redisReaderFree(reader); }
};

RespReader::RespReader() : impl_(std::make_unique<Impl>()) {
  if (!impl_->reader) throw std::bad_alloc();
  impl_->reader->privdata = &impl_->state;
}
RespReader::~RespReader() = default;

bool RespReader::feed(std::string_view bytes) {
  return redisReaderFeed(impl_->reader, bytes.data(), bytes.size()) == REDIS_OK;
}

std::optional<RedisValue> RespReader::next() {
  void* reply = nullptr;
  if (redisReaderGetReply(impl_->reader, &reply) != REDIS_OK) {
    if (const int n = impl_->state.refused_elements)
      throw std::runtime_error("Redis protocol error: an array of " + std::to_string(n) +
                               " elements (more than " + std::to_string(kMaxArrayElements) + ")");
    throw std::runtime_error(std::string("Redis protocol error: ") + impl_->reader->errstr);
  }
  if (reply == nullptr) return std::nullopt;
  RedisValue v = convert(*static_cast<redisReply*>(reply));
  freeReplyObject(reply);
  return v;
}

}  // namespace smartlb::redis
