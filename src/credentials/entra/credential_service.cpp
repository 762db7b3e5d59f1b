#include "smartlb/credentials/entra/credential_service.hpp"

#include <spdlog/spdlog.h>

#include "smartlb/config/entra_env.hpp"
#include "smartlb/credentials/entra/token_fetcher.hpp"
#include "smartlb/io/refresh_thread.hpp"

namespace smartlb::credentials::entra {

using namespace smartlb::io;

std::string credential_key(const config::EntraCredentialConfig& c) {
  std::string k(to_string(c.source));
  for (const std::string* part : {&c.tenant_id, &c.client_id, &c.authority_host, &c.federated_token_file,
                                  &c.identity_endpoint, &c.imds_endpoint, &c.scope})
    k.append("|").append(*part);
  return k;
}

namespace {

// How a credential is named in logs and /status: its source, identity and scope; no secret.
std::string display_name(const config::EntraCredentialConfig& c) {
  std::string name(to_string(c.source));
  name += ' ';
  name += c.client_id.empty() ? std::string("system-assigned") : c.client_id;
  name += ' ';
  name += c.scope;
  return name;
}

struct Entry {
  std::shared_ptr<TokenCell> cell;
  config::EntraCredentialConfig config;
  RefreshSchedule schedule;
  std::vector<std::string> backends;  // guarded by the thread's mutex
  bool spawned = false;
  // On the service's thread only: a backend rejected the token, and the refresh loop's timer.
  bool refresh_requested = false;
  asio::basic_waitable_timer<std::chrono::steady_clock, asio::wait_traits<std::chrono::steady_clock>,
                             Executor>* timer = nullptr;
};

}  // namespace

struct CredentialService::Impl {
  Impl(const base::Clock& c, ssl::context& t, CredentialServiceOptions o)
      : clock(c), tls(t), opts(std::move(o)) {}

  const base::Clock& clock;
  ssl::context& tls;
  CredentialServiceOptions opts;
  // Last: stopped and destroyed first, with the coroutine frames that refer to the above.
  io::RefreshThread<Entry> thread{[this](Entry& e) { spawn(e); }};

  void spawn(Entry& e) {
    e.cell->on_refresh_request([this, &e] {
      asio::post(thread.context(), [&e] {
        e.refresh_requested = true;
        if (e.timer) e.timer->cancel();
      });
    });
    asio::co_spawn(thread.context().get_executor(), run(e), [name = e.cell->name()](std::exception_ptr ex) {
      if (!ex) return;
      try {
        std::rethrow_exception(ex);
      } catch (const std::exception& what) {
        spdlog::error("credential {}: refreshing stopped by an internal error: {}", name, what.what());
      }
    });
  }

  std::vector<std::string> backends_of(const Entry& e) const {
    std::lock_guard lock(thread.mutex());
    return e.backends;
  }

  // One fetch: the request (the federated token file read now), the exchange, the answer.
  Task<TokenAnswer> fetch(const Entry& e) {
    TokenAnswer a;
    const TokenRequestResult req = make_token_request(e.config, opts.read_file);
    if (!req.request) {
      a.error = req.error;
      co_return a;
    }
    const FetchedAnswer fetched = co_await fetch_token_answer(*req.request, tls, opts.fetch_timeout);
    if (fetched.status == 0) {
      a.error = fetched.error;
      co_return a;
    }
    co_return parse_token_answer(fetched.status, fetched.body, clock.wall_now());
  }

  Task<> run(Entry& e) {
    auto ex = co_await asio::this_coro::executor;
    asio::basic_waitable_timer<std::chrono::steady_clock, asio::wait_traits<std::chrono::steady_clock>,
                               Executor>
        timer(ex);
    const std::string& name = e.cell->name();
    e.timer = &timer;
    struct Forget {
      Entry& e;
      ~Forget() { e.timer = nullptr; }
    } forget{e};
    for (;;) {
      if (e.refresh_requested) {
        e.refresh_requested = false;
        e.schedule.refresh_requested(clock.now());
      }
      // Waits in real time for what the schedule counts on the injected clock (the same
      // timeline in production; a manual clock in tests just makes a refresh wait long).
      const base::MonoNanos wait = e.schedule.next_fetch() - clock.now();
      if (wait > 0) {
        timer.expires_after(base::Nanos(wait));
        auto [ec] = co_await timer.async_wait(use_tuple);
        if (e.refresh_requested) continue;  // woken early: look again
        if (ec) co_return;
      }
      e.cell->fetch_started();
      TokenAnswer answer = co_await fetch(e);
      e.refresh_requested = false;  // a rejection of the old token is answered by this fetch
      const base::MonoNanos now = clock.now();
      const bool ok = answer.token.has_value();
      // Published first, then counted, then logged: whoever sees the count has the new state,
      // and whoever sees the log line has both.
      const auto count = [&] {
        if (opts.on_refresh)
          for (const auto& b : backends_of(e)) opts.on_refresh(b, ok);
      };
      if (ok) {
        const auto life =
            std::chrono::duration_cast<base::Nanos>(answer.token->expires_at - clock.wall_now());
        e.schedule.succeeded(now, now + life.count());
        e.cell->fetch_succeeded(std::move(*answer.token), e.schedule.usable_until());
        count();
        spdlog::info("credential {}: token refreshed, valid for {} s, next refresh in {} s", name,
                     std::chrono::duration_cast<std::chrono::seconds>(life).count(),
                     (e.schedule.next_fetch() - now) / 1'000'000'000);
      } else {
        e.schedule.failed(now);
        const bool still_valid = e.schedule.token_valid(now);
        const base::MonoNanos retry_ms = (e.schedule.next_fetch() - now) / 1'000'000;
        e.cell->fetch_failed(answer.error, e.schedule.next_fetch(), still_valid);
        count();
        spdlog::warn("credential {}: token request failed ({}); {}; retrying in {} ms", name, answer.error,
                     still_valid ? "the current token is still used" : "its backends fail over", retry_ms);
      }
    }
  }
};

CredentialService::CredentialService(const base::Clock& clock, ssl::context& tls,
                                     CredentialServiceOptions options)
    : impl_(std::make_unique<Impl>(clock, tls, std::move(options))) {}

CredentialService::~CredentialService() {
  stop();
  // The cells may outlive this.
  impl_->thread.for_each([](Entry& e) { e.cell->on_refresh_request(nullptr); });
}

std::shared_ptr<TokenCell> CredentialService::credential_for(const config::BackendConfig& backend) {
  auto& I = *impl_;
  return I.thread.with_entry(
      credential_key(backend.entra),
      [&] {
        auto e = std::make_unique<Entry>();
        e->config = backend.entra;
        e->schedule = RefreshSchedule(I.opts.timing);
        e->cell = std::make_shared<TokenCell>(display_name(backend.entra), backend.entra.source,
                                              backend.entra.scope);
        return e;
      },
      [&](Entry& e) {
        if (std::find(e.backends.begin(), e.backends.end(), backend.name) == e.backends.end())
          e.backends.push_back(backend.name);
        e.cell->add_backend(backend.name);
        return e.cell;
      });
}

void CredentialService::start() { impl_->thread.start(); }

void CredentialService::stop() { impl_->thread.stop(); }

std::vector<CredentialStatus> CredentialService::status() const {
  std::vector<std::shared_ptr<TokenCell>> cells;
  impl_->thread.for_each([&](Entry& e) { cells.push_back(e.cell); });
  std::vector<CredentialStatus> out;
  for (const auto& c : cells) out.push_back(c->status());
  return out;
}

}  // namespace smartlb::credentials::entra
