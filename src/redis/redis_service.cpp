#include "smartlb/redis/redis_service.hpp"

#include <openssl/sha.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <condition_variable>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <thread>

#include "smartlb/base/random.hpp"
#include "smartlb/base/text.hpp"
#include "smartlb/redis/backoff.hpp"
#include "smartlb/redis/keys.hpp"
#include "smartlb/redis/redis_connection.hpp"

namespace smartlb::redis {

using namespace smartlb::io;

RedisScript::RedisScript(std::string src) : source(std::move(src)) {
  unsigned char digest[SHA_DIGEST_LENGTH];
  SHA1(reinterpret_cast<const unsigned char*>(source.data()), source.size(), digest);
  base::append_hex(sha1, digest);
}

namespace {

std::string host_name() {
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  return host;
}

std::unique_ptr<ssl::context> make_tls(const RedisServiceOptions& o) {
  if (!o.config.url || !o.config.url->tls) return nullptr;
  auto ctx = std::make_unique<ssl::context>(ssl::context::tls_client);
  ctx->set_options(ssl::context::no_sslv2 | ssl::context::no_sslv3 | ssl::context::no_tlsv1 |
                   ssl::context::no_tlsv1_1);
  ctx->set_default_verify_paths();
  // REDIS_CA_FILE, else the upstream bundle (a private CA usually signs both), else the system's.
  const std::string& ca = !o.config.ca_file.empty() ? o.config.ca_file : o.fallback_ca_file;
  if (!ca.empty()) {
    error_code ec;
    ctx->load_verify_file(ca, ec);
    if (ec) throw std::runtime_error("REDIS_CA_FILE: cannot load " + ca + ": " + ec.message());
  }
  return ctx;
}

}  // namespace

struct RedisService::Impl {
  Impl(RedisService& o, const base::Clock& c, RedisServiceOptions opt)
      : owner(o),
        clock(c),
        opts(std::move(opt)),
        host(host_name()),
        tls(make_tls(opts)),
        rng(std::random_device{}()),
        backoff(opts.backoff_initial, opts.backoff_cap) {
    started_ms = wall_ms();
    status.url = opts.config.url ? opts.config.url->redacted() : "";
    status.replica_id = opts.config.replica_id;
  }

  RedisService& owner;
  const base::Clock& clock;
  RedisServiceOptions opts;
  std::string host;
  std::int64_t started_ms = 0;
  std::unique_ptr<ssl::context> tls;
  std::vector<std::pair<std::string, std::function<void(std::string_view)>>> subscriptions;
  std::vector<std::function<void()>> connected_hooks, disconnected_hooks;

  mutable std::mutex mutex;  // guards `status` and the start/stop hand-offs below
  std::condition_variable cv;
  RedisStatus status;
  bool first_attempt_done = false;
  std::string auth_error;  // the first attempt's refusal
  bool stopped_cleanly = false;
  bool started = false;

  // On the Redis thread only.
  base::FastRandom rng;
  ReconnectBackoff backoff;
  bool stopping = false;
  bool logged_down = false;
  std::string lost_reason;

  // Declared last: destroyed first, with the coroutine frames that refer to the members above.
  asio::io_context ioc;
  std::shared_ptr<RedisConnection> cmd, sub;  // on the Redis thread only
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work;
  std::optional<asio::steady_timer> wake;  // the heartbeat / backoff wait, cancelled on loss or stop
  std::thread thread;

  std::int64_t wall_ms() const {
    return std::chrono::duration_cast<base::Millis>(clock.wall_now().time_since_epoch()).count();
  }

  RedisEndpoint endpoint(const char* role) const {
    RedisEndpoint e;
    e.url = *opts.config.url;
    e.client_name = "smartlb:" + opts.config.replica_id + ":" + role;
    for (char& ch : e.client_name)
      if (ch == ' ' || ch == '\n' || ch == '\r') ch = '_';  // CLIENT SETNAME refuses spaces
    e.connect_timeout = opts.connect_timeout;
    e.command_timeout = opts.config.timeout;
    return e;
  }

  void note_error(const std::string& what) {
    if (opts.on_error) opts.on_error();
    std::lock_guard lock(mutex);
    status.last_error = what;
    status.last_error_ms = wall_ms();
  }

  void set_up(bool up) {
    owner.up_.store(up, std::memory_order_relaxed);
    {
      std::lock_guard lock(mutex);
      status.up = up;
      status.up_since_ms = up ? wall_ms() : 0;
    }
    if (opts.on_state) opts.on_state(up);
  }

  void first_attempt(const std::string& refused) {
    std::lock_guard lock(mutex);
    if (first_attempt_done) return;
    first_attempt_done = true;
    auth_error = refused;
    cv.notify_all();
  }

  // Every command goes through here (on the Redis thread): timed for the metrics.
  void issue(std::vector<std::string> args, RedisCallback done) {
    if (!cmd || !cmd->is_open()) {
      if (done) done(RedisResult::lost("Redis is not connected"));
      return;
    }
    const auto t0 = std::chrono::steady_clock::now();
    cmd->send(std::span<const std::string>(args), [this, t0, done = std::move(done)](RedisResult r) {
      if (r.value && opts.on_command)
        opts.on_command(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      if (!r.ok() && r.failure.rfind("NOSCRIPT", 0) != 0) {
        if (opts.on_error) opts.on_error();
        if (r.value) spdlog::warn("redis: command failed: {}", r.failure);
      }
      if (done) done(std::move(r));
    });
  }

  void issue_eval(const RedisScript& script, std::vector<std::string> keys, std::vector<std::string> args,
                  RedisCallback done) {
    std::vector<std::string> command{"EVALSHA", script.sha1, std::to_string(keys.size())};
    command.insert(command.end(), keys.begin(), keys.end());
    command.insert(command.end(), args.begin(), args.end());
    issue(std::move(command), [this, &script, keys = std::move(keys), args = std::move(args),
                               done = std::move(done)](RedisResult r) mutable {
      if (r.value && r.value->is_error() && r.failure.rfind("NOSCRIPT", 0) == 0) {
        // EVAL runs it and caches it for the next EVALSHA.
        std::vector<std::string> full{"EVAL", script.source, std::to_string(keys.size())};
        full.insert(full.end(), keys.begin(), keys.end());
        full.insert(full.end(), args.begin(), args.end());
        issue(std::move(full), std::move(done));
        return;
      }
      if (done) done(std::move(r));
    });
  }

  // Registers this replica and reads who else is alive.
  void heartbeat() {
    const std::string& prefix = opts.config.key_prefix;
    const std::string& id = opts.config.replica_id;
    const std::int64_t now = wall_ms();
    const std::string rkey = replicas_key(prefix), ikey = replica_info_key(prefix);
    issue({"ZADD", rkey, std::to_string(now + opts.replica_ttl.count()), id}, {});
    issue({"HSET", ikey, id, nlohmann::json{{"host", host}, {"started_ms", started_ms}}.dump()}, {});
    issue({"ZRANGEBYSCORE", rkey, "-inf", std::to_string(now)}, [this, rkey, ikey](RedisResult r) {
      if (!r.ok() || !r.value->is_array() || r.value->elements.empty()) return;
      std::vector<std::string> zrem{"ZREM", rkey}, hdel{"HDEL", ikey};
      for (const auto& e : r.value->elements) {
        zrem.push_back(e.text);
        hdel.push_back(e.text);
      }
      issue(std::move(zrem), {});
      issue(std::move(hdel), {});
    });
    issue({"ZRANGEBYSCORE", rkey, std::string("(").append(std::to_string(now)), "+inf", "WITHSCORES"},
          [this, ikey](RedisResult r) {
            if (!r.ok() || !r.value->is_array()) return;
            auto replicas = std::make_shared<std::vector<ReplicaInfo>>();
            std::vector<std::string> hmget{"HMGET", ikey};
            const auto& e = r.value->elements;
            for (std::size_t i = 0; i + 1 < e.size(); i += 2) {
              ReplicaInfo info;
              info.id = e[i].text;
              const double score = std::strtod(e[i + 1].text.c_str(), nullptr);  // "inf" is possible
              info.expires_ms = score > 0 && score < 9e15 ? static_cast<std::int64_t>(score) : 0;
              hmget.push_back(info.id);
              replicas->push_back(std::move(info));
            }
            if (replicas->empty()) return;
            issue(std::move(hmget), [this, replicas](RedisResult details) {
              if (details.ok() && details.value->is_array())
                for (std::size_t i = 0; i < replicas->size() && i < details.value->elements.size(); ++i) {
                  const auto& d = details.value->elements[i];
                  if (d.kind != RedisValue::Kind::String) continue;
                  auto j = nlohmann::json::parse(d.text, nullptr, false);
                  if (!j.is_object()) continue;  // written by others: every type is checked
                  if (j.contains("host") && j["host"].is_string())
                    (*replicas)[i].host = j["host"].get<std::string>();
                  if (j.contains("started_ms") && j["started_ms"].is_number_integer())
                    (*replicas)[i].started_ms = j["started_ms"].get<std::int64_t>();
                }
              owner.live_.store(std::max<std::size_t>(1, replicas->size()), std::memory_order_relaxed);
              if (opts.on_replicas) opts.on_replicas(replicas->size());
              std::lock_guard lock(mutex);
              status.replicas = std::move(*replicas);
            });
          });
  }

  // Opens both connections: the command one, and the subscriber one when anything is
  // subscribed. "" when both are up.
  Task<std::string> connect(bool& auth_rejected) {
    auto r = co_await RedisConnection::open(endpoint("cmd"), tls.get());
    if (!r.connection) {
      auth_rejected = r.auth_rejected;
      co_return r.error;
    }
    std::shared_ptr<RedisConnection> s;
    if (!subscriptions.empty()) {
      auto rs = co_await RedisConnection::open(endpoint("sub"), tls.get());
      if (!rs.connection) {
        r.connection->close();
        auth_rejected = rs.auth_rejected;
        co_return rs.error;
      }
      s = rs.connection;
      s->on_push([this](const RedisValue& v) {
        if (v.elements.size() < 3 || !(v.elements[0].is("message") || v.elements[0].is("pmessage"))) return;
        const std::string& channel = v.elements[v.elements.size() - 2].text;
        for (auto& [name, fn] : subscriptions)
          if (name == channel) fn(v.elements.back().text);
      });
      for (const auto& subscription : subscriptions) {
        std::vector<std::string> command{"SUBSCRIBE",
                                         subscription.first};  // (GCC 12: no braced list in co_await)
        RedisResult sr = co_await s->call(std::move(command));
        if (!sr.ok()) {
          r.connection->close();
          s->close();
          co_return "SUBSCRIBE failed: " + sr.failure;
        }
      }
    }
    cmd = std::move(r.connection);
    sub = std::move(s);
    co_return "";
  }

  Task<> wait(std::chrono::milliseconds d) {
    wake->expires_after(d);
    co_await wake->async_wait(use_tuple);
  }

  Task<> run() {
    const std::string url = opts.config.url->redacted();
    while (!stopping) {
      bool auth_rejected = false;
      std::string error = co_await connect(auth_rejected);
      if (stopping) break;
      if (!error.empty()) {
        note_error(error);
        if (!logged_down) {
          spdlog::warn("redis: cannot use {}: {}; serving on local state, retrying with backoff", url, error);
          logged_down = true;
        } else {
          spdlog::debug("redis: still down: {}", error);
        }
        first_attempt(auth_rejected ? error : std::string());
        co_await wait(backoff.next(rng));
        continue;
      }
      lost_reason.clear();
      auto lost = [this](const std::string& why) {
        if (lost_reason.empty()) lost_reason = why;
        wake->cancel();
      };
      cmd->on_lost(lost);
      if (sub) sub->on_lost(lost);
      backoff.reset();
      logged_down = false;
      set_up(true);
      spdlog::info("redis: connected to {} as replica {}", url, opts.config.replica_id);
      first_attempt("");
      for (auto& hook : connected_hooks) hook();
      while (!stopping && cmd && cmd->is_open() && (!sub || sub->is_open())) {
        heartbeat();
        if (sub) sub->send({"PING"}, {});  // a silent subscriber is noticed by its timeout
        co_await wait(opts.heartbeat);
      }
      if (cmd) cmd->close();
      if (sub) sub->close();
      set_up(false);
      if (stopping) break;
      const std::string why = lost_reason.empty() ? "connection closed" : lost_reason;
      note_error(why);
      for (auto& hook : disconnected_hooks) hook();
      spdlog::warn("redis: lost {} ({}); serving on local state until it is back", url, why);
      logged_down = true;
      co_await wait(backoff.next(rng));
    }
  }

  void shutdown_connections() {
    if (cmd) cmd->close();
    if (sub) sub->close();
    if (wake) wake->cancel();
    std::lock_guard lock(mutex);
    stopped_cleanly = true;
    cv.notify_all();
  }
};

RedisService::RedisService(const base::Clock& clock, RedisServiceOptions options)
    : impl_(std::make_unique<Impl>(*this, clock, std::move(options))) {
  if (!impl_->opts.config.url) throw std::invalid_argument("RedisService needs REDIS_URL");
}

RedisService::~RedisService() { stop(); }

void RedisService::subscribe(std::string channel, std::function<void(std::string_view)> on_message) {
  impl_->subscriptions.emplace_back(std::move(channel), std::move(on_message));
}

void RedisService::on_connected(std::function<void()> fn) { impl_->connected_hooks.push_back(std::move(fn)); }
void RedisService::on_disconnected(std::function<void()> fn) {
  impl_->disconnected_hooks.push_back(std::move(fn));
}
void RedisService::post(std::function<void()> fn) { asio::post(impl_->ioc, std::move(fn)); }

void RedisService::start() {
  Impl& i = *impl_;
  if (i.started) return;
  i.started = true;
  i.work.emplace(i.ioc.get_executor());
  i.wake.emplace(i.ioc);
  asio::co_spawn(i.ioc, i.run(), [](std::exception_ptr ex) {
    if (!ex) return;
    try {
      std::rethrow_exception(ex);
    } catch (const std::exception& e) {
      spdlog::error("redis: stopped by an internal error: {}", e.what());
    }
  });
  i.thread = std::thread([&i] { i.ioc.run(); });
  std::unique_lock lock(i.mutex);
  i.cv.wait_for(lock, i.opts.connect_timeout * 2 + std::chrono::milliseconds(500),
                [&i] { return i.first_attempt_done; });
  if (!i.auth_error.empty()) {
    const std::string why = i.auth_error;
    lock.unlock();
    stop();
    throw std::runtime_error("REDIS_URL: Redis refused the credentials (" + why + ")");
  }
}

void RedisService::stop() {
  Impl& i = *impl_;
  if (!i.thread.joinable()) return;
  asio::post(i.ioc, [&i] {
    i.stopping = true;
    if (i.cmd && i.cmd->is_open()) {
      i.cmd->send({"ZREM", replicas_key(i.opts.config.key_prefix), i.opts.config.replica_id}, {});
      i.cmd->send({"HDEL", replica_info_key(i.opts.config.key_prefix), i.opts.config.replica_id},
                  [&i](RedisResult) { i.shutdown_connections(); });
    } else {
      i.shutdown_connections();
    }
  });
  {
    std::unique_lock lock(i.mutex);
    i.cv.wait_for(lock, i.opts.config.timeout * 2 + std::chrono::milliseconds(100),
                  [&i] { return i.stopped_cleanly; });
  }
  i.work.reset();
  i.ioc.stop();
  i.thread.join();
  i.cmd.reset();
  i.sub.reset();
  i.owner.up_.store(false, std::memory_order_relaxed);
}

void RedisService::command(std::vector<std::string> args, RedisCallback done) {
  asio::post(impl_->ioc, [i = impl_.get(), args = std::move(args), done = std::move(done)]() mutable {
    i->issue(std::move(args), std::move(done));
  });
}

void RedisService::eval(const RedisScript& script, std::vector<std::string> keys,
                        std::vector<std::string> args, RedisCallback done) {
  asio::post(impl_->ioc, [i = impl_.get(), &script, keys = std::move(keys), args = std::move(args),
                          done = std::move(done)]() mutable {
    i->issue_eval(script, std::move(keys), std::move(args), std::move(done));
  });
}

RedisStatus RedisService::status() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->status;
}

const std::string& RedisService::key_prefix() const { return impl_->opts.config.key_prefix; }
const std::string& RedisService::replica_id() const { return impl_->opts.config.replica_id; }

}  // namespace smartlb::redis
