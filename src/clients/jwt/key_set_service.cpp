#include "smartlb/clients/jwt/key_set_service.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "smartlb/clients/jwt/key_set.hpp"
#include "smartlb/credentials/entra/token_fetcher.hpp"
#include "smartlb/io/refresh_thread.hpp"

namespace smartlb::clients::jwt {

using namespace smartlb::io;

std::string discovery_url_of(const std::string& authority_host, const std::string& tenant_id) {
  std::string host = authority_host;
  while (!host.empty() && host.back() == '/') host.pop_back();
  return host + "/" + tenant_id + "/v2.0/.well-known/openid-configuration";
}

namespace {

using Timer = asio::basic_waitable_timer<std::chrono::steady_clock,
                                         asio::wait_traits<std::chrono::steady_clock>, Executor>;

struct Entry {
  std::string url;
  std::shared_ptr<IssuerKeys> keys;
  bool spawned = false;
  // On the service's thread only.
  bool refetch_requested = false;
  Timer* timer = nullptr;
};

struct FetchResult {
  std::optional<KeySet> keys;
  std::string error;
};

}  // namespace

struct KeySetService::Impl {
  Impl(ssl::context& t, KeySetServiceOptions o) : tls(t), opts(std::move(o)) {}

  ssl::context& tls;
  KeySetServiceOptions opts;
  // Last: stopped and destroyed first, with the coroutine frames that refer to the above.
  RefreshThread<Entry> thread{[this](Entry& e) { spawn(e); }};

  void spawn(Entry& e) {
    e.keys->on_refetch_request([this, &e] {
      asio::post(thread.context(), [&e] {
        e.refetch_requested = true;
        if (e.timer) e.timer->cancel();
      });
    });
    asio::co_spawn(thread.context().get_executor(), run(e), [url = e.url](std::exception_ptr ex) {
      if (!ex) return;
      try {
        std::rethrow_exception(ex);
      } catch (const std::exception& what) {
        spdlog::error("token issuer keys {}: fetching stopped by an internal error: {}", url, what.what());
      }
    });
  }

  Task<credentials::entra::FetchedAnswer> get(const std::string& url) {
    // A named request: GCC 12 mishandles a temporary's lifetime across a co_await.
    const credentials::entra::TokenRequest request{"GET", url, {}, {}};
    credentials::entra::FetchedAnswer answer =
        co_await credentials::entra::fetch_token_answer(request, tls, opts.fetch_timeout);
    co_return answer;
  }

  // The discovery document, then the key set it names.
  Task<FetchResult> fetch(const std::string& url) {
    FetchResult r;
    const auto discovery = co_await get(url);
    if (discovery.status != 200) {
      r.error = discovery.status == 0
                    ? discovery.error
                    : "the OpenID configuration answered " + std::to_string(discovery.status);
      co_return r;
    }
    const DiscoveryParse found = parse_discovery(discovery.body);
    if (found.jwks_uri.empty()) {
      r.error = found.error;
      co_return r;
    }
    const auto jwks = co_await get(found.jwks_uri);
    if (jwks.status != 200) {
      r.error = jwks.status == 0
                    ? jwks.error
                    : "the JWKS (" + found.jwks_uri + ") answered " + std::to_string(jwks.status);
      co_return r;
    }
    KeySetParse parsed = parse_jwks(jwks.body);
    if (!parsed.keys) {
      r.error = parsed.error;
      co_return r;
    }
    r.keys = std::move(parsed.keys);
    co_return r;
  }

  Task<> run(Entry& e) {
    auto ex = co_await asio::this_coro::executor;
    Timer timer(ex);
    e.timer = &timer;
    struct Forget {
      Entry& e;
      ~Forget() { e.timer = nullptr; }
    } forget{e};
    base::Nanos wait{0};
    int failures = 0;
    for (;;) {
      if (wait.count() > 0 && !e.refetch_requested) {
        timer.expires_after(wait);
        auto [ec] = co_await timer.async_wait(use_tuple);
        if (ec && !e.refetch_requested) co_return;  // stopped
      }
      e.refetch_requested = false;
      e.keys->fetch_started();
      FetchResult r = co_await fetch(e.url);
      const bool ok = r.keys.has_value();
      if (ok) {
        const std::size_t n = r.keys->by_kid.size();
        e.keys->fetch_succeeded(std::move(*r.keys));
        failures = 0;
        wait = opts.refresh_interval;
        spdlog::info("token issuer keys {}: {} signing key(s) fetched", e.url, n);
      } else {
        e.keys->fetch_failed(r.error);
        wait = std::min(opts.max_retry, opts.first_retry * (1 << std::min(failures, 16)));
        ++failures;
        spdlog::warn("token issuer keys {}: fetch failed ({}); retrying in {} s", e.url, r.error,
                     std::chrono::duration_cast<std::chrono::seconds>(wait).count());
      }
      if (opts.on_fetch) opts.on_fetch(e.url, ok);
    }
  }
};

KeySetService::KeySetService(ssl::context& tls, KeySetServiceOptions options)
    : impl_(std::make_unique<Impl>(tls, std::move(options))) {}

KeySetService::~KeySetService() {
  stop();
  // The keys may outlive this.
  impl_->thread.for_each([](Entry& e) { e.keys->on_refetch_request(nullptr); });
}

std::shared_ptr<IssuerKeys> KeySetService::keys_for(const std::string& discovery_url) {
  auto& I = *impl_;
  return I.thread.with_entry(
      discovery_url,
      [&] {
        auto e = std::make_unique<Entry>();
        e->url = discovery_url;
        e->keys = std::make_shared<IssuerKeys>(discovery_url, I.opts.min_refetch_interval);
        return e;
      },
      [](Entry& e) { return e.keys; });
}

void KeySetService::start() { impl_->thread.start(); }

void KeySetService::stop() { impl_->thread.stop(); }

std::vector<IssuerKeysStatus> KeySetService::status() const {
  std::vector<std::shared_ptr<IssuerKeys>> keys;
  impl_->thread.for_each([&](Entry& e) { keys.push_back(e.keys); });
  std::vector<IssuerKeysStatus> out;
  for (const auto& k : keys) out.push_back(k->status());
  return out;
}

}  // namespace smartlb::clients::jwt
