// The admin listener: health, readiness, Prometheus metrics, the status JSON and the
// embedded status page. One thread, one io_context, one coroutine per connection.
#include "smartlb/admin/admin_server.hpp"

#include <algorithm>
#include <mutex>
#include <stdexcept>
#include <thread>

#include <spdlog/spdlog.h>

#include "smartlb/admin/pool_snapshot.hpp"
#include "smartlb/admin/prometheus_families.hpp"
#include "smartlb/admin/status_json.hpp"
#include "smartlb/admin/status_page.hpp"
#include "smartlb/admin/traffic_history.hpp"
#include "smartlb/config/entra_env.hpp"
#include "smartlb/io/beast.hpp"

namespace smartlb {

using namespace smartlb::io;
using namespace smartlb::net;

namespace {

struct Reply {
  http::status status = http::status::ok;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  bool html = false;
};

Reply text(http::status s, std::string body) {
  Reply r;
  r.status = s;
  r.body = std::move(body);
  return r;
}

}  // namespace

struct AdminServer::Impl {
  Impl(const Server& s, const Metrics& m, AdminOptions o) : server(s), metrics(m), opts(std::move(o)) {}

  const Server& server;
  const Metrics& metrics;
  AdminOptions opts;
  asio::io_context ioc{1};
  std::optional<tcp::acceptor> acceptor;
  std::thread thread;
  std::uint16_t port = 0;
  MonoNanos started = 0;
  mutable std::mutex history_mutex;  // the sampler and /status, both on the admin thread today
  TrafficHistory history;

  Task<> sample_loop() {
    asio::steady_timer timer(co_await asio::this_coro::executor);
    for (;;) {
      {
        const double unix_time =
            std::chrono::duration<double>(server.states().clock().wall_now().time_since_epoch()).count();
        std::lock_guard lock(history_mutex);
        history.add(metrics.snapshot(), unix_time);
      }
      timer.expires_after(opts.sample_interval);
      auto [ec] = co_await timer.async_wait(use_tuple);
      if (ec) co_return;
    }
  }

  PoolSnapshot pool_snapshot() const {
    const auto snapshot = server.snapshot();
    std::vector<const RoutingTable*> rule_tables;
    for (const Rule& r : snapshot->rules) rule_tables.push_back(&r.table);
    PoolSnapshot p = snapshot_pool(snapshot->table, server.states(), snapshot->backends, rule_tables);
    for (const auto& c : server.credentials())
      for (auto& b : p.backends)
        if (std::find(c.backends.begin(), c.backends.end(), b.name) != c.backends.end())
          b.credential = PoolSnapshot::Backend::Credential{
              std::string(to_string(c.source)), c.name, c.state,
              c.expires_at
                  ? std::chrono::duration_cast<std::chrono::seconds>(c.expires_at->time_since_epoch()).count()
                  : 0,
              c.last_error};
    p.config_hash = snapshot->config_hash;
    p.rules = rule_status(*snapshot);
    p.budgets = budget_status();
    p.started = started;
    p.ready = server.port() != 0;
    p.draining = server.draining();
    if (opts.redis) p.redis = opts.redis->status();
    return p;
  }

  std::vector<BudgetStatus> budget_status() const {
    const Clock& clock = server.states().clock();
    const BudgetTime t{clock.now(), clock.wall_now()};
    std::vector<BudgetStatus> out;
    for (const auto& e : server.budgets().entries()) {
      if (out.size() == kMaxBudgetsShown) break;
      BudgetStatus b;
      const BudgetKeyParts parts = split_budget_key(e.key);
      b.owner = parts.caller.empty() ? parts.owner : "subject-caller";
      b.name = parts.name;
      b.principal = parts.caller;
      b.limits = e.budget->limits();
      const ClientBudget::State s = e.budget->state(t);
      b.tokens_minute = s.tokens_minute_used;
      b.requests_minute = s.requests_minute_used;
      b.tokens_day = s.tokens_day_used;
      b.tokens_month = s.tokens_month_used;
      out.push_back(std::move(b));
    }
    return out;
  }
  static constexpr std::size_t kMaxBudgetsShown = 500;

  std::vector<RuleStatus> rule_status(const net::Snapshot& snapshot) const {
    const BackendStates& states = server.states();
    const MonoNanos now = states.clock().now();
    std::vector<RuleStatus> out;
    for (const net::Rule& rule : snapshot.rules) {
      RuleStatus r;
      r.id = rule.id;
      r.type = rule.type;
      r.implicit = rule.implicit;
      r.subjects = rule.when.subjects;
      r.models = rule.when.models;
      r.metadata = rule.when.metadata;
      for (std::size_t i = 0; i < rule.table.size(); ++i) {
        const PoolMember& m = rule.table.member(i);
        const net::RouteTarget& route = rule.route[i];
        RuleStatus::Target t;
        t.id = route.target_id;
        t.backend = snapshot.backends[route.backend].name;
        t.upstream_name = route.upstream_name;
        t.priority = m.priority;
        t.weight = m.weight;
        CooldownView cooldown = states.backend_cooldown(m.id);
        if (!route.upstream_name.empty()) {
          const CooldownView d = states.deployment_cooldown(m, route.upstream_name);
          if (d.until > cooldown.until) cooldown = d;
        }
        t.state = backend_state(cooldown, now);
        t.cooldown_remaining_ms = cooldown_remaining_ms(cooldown, now);
        if (rule.type == RuleType::Latency) {
          const LatencyReading l = server.latency().read(m.id, route.upstream_name, now, rule.lookback);
          t.latency_ms_per_token = l.ms_per_token;
          t.latency_samples = l.samples;
        }
        r.targets.push_back(std::move(t));
      }
      out.push_back(std::move(r));
    }
    return out;
  }

  Task<> session(tcp::socket socket) const;
  Task<> accept_loop(tcp::acceptor& acceptor) const;

  Reply handle(std::string_view path) const {
    if (path == "/healthz") return text(http::status::ok, "ok\n");
    if (path == "/readyz") {
      if (server.draining()) return text(http::status::service_unavailable, "draining\n");
      if (server.port() == 0) return text(http::status::service_unavailable, "starting\n");
      return text(http::status::ok, "ready\n");
    }
    if (path == "/metrics") {
      Reply r = text(http::status::ok, render_prometheus(metrics.snapshot(), pool_snapshot()));
      r.content_type = "text/plain; version=0.0.4; charset=utf-8";
      return r;
    }
    if (path == "/status") {
      Reply r;
      nlohmann::json doc = build_status(metrics.snapshot(), pool_snapshot());
      {
        std::lock_guard lock(history_mutex);
        doc["history"] = history.to_json(std::chrono::duration<double>(opts.sample_interval).count(),
                                         server.backend_names());
      }
      r.body = doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
      r.body += '\n';
      r.content_type = "application/json";
      return r;
    }
    if (path == "/" || path == "/index.html") {
      Reply r;
      r.body = status_page_html();
      r.content_type = "text/html; charset=utf-8";
      r.html = true;
      return r;
    }
    return text(http::status::not_found, "not found; try /, /status, /metrics, /healthz or /readyz\n");
  }
};

Task<> AdminServer::Impl::session(tcp::socket socket) const {
  const Impl& I = *this;
  beast::tcp_stream stream(std::move(socket));
  beast::flat_buffer buffer;
  for (;;) {
    http::request_parser<http::string_body> parser;
    parser.header_limit(16 * 1024);
    parser.body_limit(16 * 1024);
    stream.expires_after(std::chrono::seconds(30));
    auto [rec, rn] = co_await http::async_read(stream, buffer, parser, use_tuple);
    if (rec) break;
    const auto& req = parser.get();
    const std::string_view target = req.target();
    const std::string_view path = target.substr(0, target.find('?'));

    Reply r;
    if (req.method() != http::verb::get && req.method() != http::verb::head) {
      r = text(http::status::method_not_allowed, "only GET and HEAD\n");
    } else {
      try {
        r = I.handle(path);
      } catch (const std::exception& e) {
        spdlog::error("admin endpoint {} failed: {}", path, e.what());
        r = text(http::status::internal_server_error, "internal error\n");
      }
    }
    http::response<http::string_body> res{r.status, req.version()};
    res.set(http::field::server, "smartlb-admin");
    res.set(http::field::content_type, r.content_type);
    res.set(http::field::cache_control, "no-store");
    res.set("x-content-type-options", "nosniff");
    if (r.status == http::status::method_not_allowed) res.set(http::field::allow, "GET, HEAD");
    if (r.html)
      res.set("content-security-policy",
              "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
              "connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'");
    res.keep_alive(req.keep_alive());
    const std::size_t length = r.body.size();
    if (req.method() != http::verb::head) res.body() = std::move(r.body);
    res.content_length(length);
    stream.expires_after(std::chrono::seconds(30));
    auto [wec, wn] = co_await http::async_write(stream, res, use_tuple);
    if (wec || !res.keep_alive()) break;
  }
  error_code ignored;
  stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
  stream.socket().close(ignored);
}

Task<> AdminServer::Impl::accept_loop(tcp::acceptor& acceptor) const {
  for (;;) {
    auto [ec, socket] = co_await acceptor.async_accept(use_tuple);
    if (ec) {
      if (ec == asio::error::operation_aborted || !acceptor.is_open()) co_return;
      continue;
    }
    asio::co_spawn(co_await asio::this_coro::executor, session(std::move(socket)), asio::detached);
  }
}

AdminServer::AdminServer(const Server& server, const Metrics& metrics, AdminOptions opts)
    : impl_(std::make_unique<Impl>(server, metrics, std::move(opts))) {}

AdminServer::~AdminServer() { stop(); }

void AdminServer::start() {
  auto& I = *impl_;
  I.started = I.server.states().clock().now();
  error_code ec;
  const auto address = asio::ip::make_address(I.opts.listen_address, ec);
  if (ec) throw std::runtime_error("admin listener: not an IP address: " + I.opts.listen_address);
  const tcp::endpoint ep(address, I.opts.port);
  tcp::acceptor& a = I.acceptor.emplace(I.ioc);
  a.open(ep.protocol(), ec);
  if (!ec) a.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) a.bind(ep, ec);
  if (!ec) a.listen(asio::socket_base::max_listen_connections, ec);
  if (ec)
    throw std::runtime_error("cannot listen on ADMIN_PORT " + I.opts.listen_address + ":" +
                             std::to_string(I.opts.port) + ": " + ec.message());
  I.port = a.local_endpoint().port();
  asio::co_spawn(I.ioc, I.accept_loop(a), asio::detached);
  asio::co_spawn(I.ioc, I.sample_loop(), asio::detached);
  I.thread = std::thread([&I] { I.ioc.run(); });
}

std::uint16_t AdminServer::port() const { return impl_->port; }

void AdminServer::stop() {
  auto& I = *impl_;
  if (!I.thread.joinable()) return;
  asio::post(I.ioc, [&I] {
    error_code ignored;
    if (I.acceptor) I.acceptor->close(ignored);
    I.ioc.stop();
  });
  I.thread.join();
}

}  // namespace smartlb
