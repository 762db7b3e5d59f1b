// The admin listener: health, readiness, Prometheus metrics, the status JSON, the embedded
// status page and the admin API. One thread, one io_context, one coroutine per connection. A
// request's head is read first: who asks and what for is decided before its body is read, so a
// refused request costs no body.
#include "smartlb/admin/admin_server.hpp"

#include <algorithm>
#include <array>
#include <mutex>
#include <stdexcept>
#include <thread>

#include <spdlog/spdlog.h>

#include "smartlb/admin/admin_access.hpp"
#include "smartlb/admin/admin_api.hpp"
#include "smartlb/admin/pool_snapshot.hpp"
#include "smartlb/admin/prometheus_families.hpp"
#include "smartlb/admin/status_json.hpp"
#include "smartlb/admin/status_page.hpp"
#include "smartlb/admin/traffic_history.hpp"
#include "smartlb/config/entra_env.hpp"
#include "smartlb/io/beast.hpp"

namespace smartlb::admin {

using namespace smartlb::io;

namespace {

struct Reply {
  beast::http::status status = beast::http::status::ok;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  bool html = false;
  std::string allow;           // a 405's Allow
  bool ask_for_token = false;  // a 401: WWW-Authenticate: Bearer
};

Reply text(beast::http::status s, std::string body) {
  Reply r;
  r.status = s;
  r.body = std::move(body);
  return r;
}

Reply json_reply(unsigned status, const nlohmann::json& body) {
  Reply r;
  r.status = static_cast<beast::http::status>(status);
  r.body = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  r.body += '\n';
  r.content_type = "application/json";
  return r;
}

Reply error_reply(unsigned status, std::string_view type, const std::string& message) {
  return json_reply(status, {{"error", {{"type", type}, {"message", message}}}});
}

// A request's body may be this large (the admin API's are a few bytes): 413 past it.
constexpr std::size_t kMaxBodyBytes = 4096;

// The listener's own endpoints: what each needs, and the methods it takes.
struct Endpoint {
  AdminNeed need = AdminNeed::Read;
  AdminRoute api;  // Kind::None for the listener's own
  bool known = false;
};
Endpoint endpoint_of(std::string_view path) {
  Endpoint e;
  e.api = route_admin(path);
  if (e.api.kind != AdminRoute::Kind::None) {
    e.need = e.api.need;
    e.known = true;
  } else if (path == "/healthz" || path == "/readyz" || path == "/" || path == "/index.html") {
    // Probes need no token, and the page's document holds no data: it asks for a token to read
    // /status with when the port has tokens.
    e.need = AdminNeed::Open;
    e.known = true;
  } else if (path == "/metrics") {
    e.need = AdminNeed::Metrics;
    e.known = true;
  } else {
    e.known = path == "/status";  // anything else: Read, so that without a token a 401 says nothing
  }
  return e;
}

}  // namespace

struct AdminServer::Impl {
  Impl(net::Server& s, const telemetry::Metrics& m, AdminOptions o)
      : server(s), metrics(m), opts(std::move(o)), access(std::make_shared<const AdminAccess>(opts.access)) {}

  net::Server& server;
  const telemetry::Metrics& metrics;
  AdminOptions opts;
  asio::io_context ioc{1};
  std::optional<tcp::acceptor> acceptor;
  std::thread thread;
  std::uint16_t port = 0;
  base::MonoNanos started = 0;
  mutable std::mutex history_mutex;  // the sampler and /status, both on the admin thread today
  TrafficHistory history;
  mutable std::mutex access_mutex;  // set_access (a reload's thread) and the admin thread
  std::shared_ptr<const AdminAccess> access;

  std::shared_ptr<const AdminAccess> current_access() const {
    std::lock_guard lock(access_mutex);
    return access;
  }

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
    std::vector<const routing::RoutingTable*> rule_tables;
    for (const net::Rule& r : snapshot->rules) rule_tables.push_back(&r.table);
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
    for (const net::ProbeReport& r : server.health())
      for (auto& b : p.backends)
        if (b.present && b.name == r.backend)
          b.health = {std::string(net::to_string(r.state)),
                      r.status,
                      r.detail,
                      r.last_unix_ms,
                      r.by,
                      r.probes_sent,
                      r.results_read};
    p.config_hash = snapshot->config_hash;
    p.rules = rule_status(*snapshot);
    p.budgets = budget_status();
    p.currency = snapshot->prices.currency;
    p.started = started;
    p.ready = server.port() != 0;
    p.draining = server.draining();
    if (opts.redis) p.redis = opts.redis->status();
    return p;
  }

  std::vector<BudgetStatus> budget_status() const {
    const base::Clock& clock = server.states().clock();
    const clients::BudgetTime t{clock.now(), clock.wall_now()};
    std::vector<BudgetStatus> out;
    for (const auto& e : server.budgets().entries()) {
      if (out.size() == kMaxBudgetsShown) break;
      BudgetStatus b;
      const clients::BudgetKeyParts parts = clients::split_budget_key(e.key);
      b.owner = parts.caller.empty() ? parts.owner : "subject-caller";
      b.name = parts.name;
      b.principal = parts.caller;
      b.limits = e.budget->limits();
      const clients::ClientBudget::State s = e.budget->state(t);
      b.tokens_minute = s.tokens_minute_used;
      b.requests_minute = s.requests_minute_used;
      b.tokens_day = s.tokens_day_used;
      b.tokens_month = s.tokens_month_used;
      b.cost_day = s.cost_day_used;
      b.cost_month = s.cost_month_used;
      b.in_flight = s.in_flight;
      b.in_flight_all_replicas = s.in_flight_everywhere;
      out.push_back(std::move(b));
    }
    return out;
  }
  static constexpr std::size_t kMaxBudgetsShown = 500;

  std::vector<RuleStatus> rule_status(const net::Snapshot& snapshot) const {
    const routing::BackendStates& states = server.states();
    const base::MonoNanos now = states.clock().now();
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
        const routing::PoolMember& m = rule.table.member(i);
        const net::RouteTarget& route = rule.route[i];
        RuleStatus::Target t;
        t.id = route.target_id;
        t.backend = snapshot.backends[route.backend].name;
        t.upstream_name = route.upstream_name;
        t.priority = m.priority;
        t.weight = m.weight;
        routing::CooldownView cooldown = states.backend_cooldown(m.id);
        if (!route.upstream_name.empty()) {
          const routing::CooldownView d = states.deployment_cooldown(m, route.upstream_name);
          if (d.until > cooldown.until) cooldown = d;
        }
        t.state = backend_state(cooldown, now);
        t.cooldown_remaining_ms = cooldown_remaining_ms(cooldown, now);
        if (rule.type == config::RuleType::Latency) {
          const routing::LatencyReading l =
              server.latency().read(m.id, route.upstream_name, now, rule.lookback);
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

  // The admin API's answer, its change logged with who made it.
  Reply handle_api(const AdminRoute& route, const AdminRequest& request,
                   const std::optional<AdminCaller>& caller) const {
    const auto snapshot = server.snapshot();
    std::vector<std::string> names;
    for (const routing::PoolMember& m : snapshot->table.members()) names.push_back(m.name);
    const AdminAnswer a =
        answer_admin(route, request, caller, server.states(), {names, opts.redis != nullptr});
    if (!a.audit.empty()) spdlog::info("admin: {}", a.audit);
    Reply r = json_reply(a.status, a.body);
    if (a.status == 405) r.allow = std::string(route.allow);
    return r;
  }

  Reply handle(std::string_view method, std::string_view path, const Endpoint& endpoint,
               const AdminRequest& request, const std::optional<AdminCaller>& caller) const {
    if (endpoint.api.kind != AdminRoute::Kind::None) return handle_api(endpoint.api, request, caller);
    if (!endpoint.known)
      return text(beast::http::status::not_found,
                  "not found; try /, /status, /metrics, /healthz, /readyz or /admin/backends\n");
    if (method != "GET" && method != "HEAD") {
      Reply r = text(beast::http::status::method_not_allowed, "only GET and HEAD\n");
      r.allow = "GET, HEAD";
      return r;
    }
    return handle_read(path);
  }

  Reply handle_read(std::string_view path) const {
    if (path == "/healthz") return text(beast::http::status::ok, "ok\n");
    if (path == "/readyz") {
      if (server.draining()) return text(beast::http::status::service_unavailable, "draining\n");
      if (server.port() == 0) return text(beast::http::status::service_unavailable, "starting\n");
      return text(beast::http::status::ok, "ready\n");
    }
    if (path == "/metrics") {
      Reply r = text(beast::http::status::ok, render_prometheus(metrics.snapshot(), pool_snapshot()));
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
    return text(beast::http::status::not_found, "not found\n");
  }

  // Who asks for what, before the body is read: nullopt to go on, else the refusal.
  std::optional<Reply> refusal(const Endpoint& endpoint, std::string_view authorization,
                               std::optional<AdminCaller>& caller) const {
    const AdminDecision d = current_access()->decide(endpoint.need, authorization);
    caller = d.caller;
    switch (d.verdict) {
      case AdminDecision::Verdict::Allow:
        return std::nullopt;
      case AdminDecision::Verdict::Unauthorized: {
        Reply r = error_reply(401, "unauthorized", d.message);
        r.ask_for_token = true;
        return r;
      }
      case AdminDecision::Verdict::Forbidden:
        break;
    }
    return error_reply(403, "forbidden", d.message);
  }
};

Task<> AdminServer::Impl::session(tcp::socket socket) const {
  const Impl& I = *this;
  beast::tcp_stream stream(std::move(socket));
  beast::flat_buffer buffer;
  error_code ignored;
  const auto peer = stream.socket().remote_endpoint(ignored);
  for (;;) {
    beast::http::request_parser<beast::http::string_body> parser;
    parser.header_limit(16 * 1024);
    parser.body_limit(boost::none);  // checked once who asks is known, before the body is read
    stream.expires_after(std::chrono::seconds(30));
    Reply r;
    bool read_whole = false;  // the connection may carry another request only after a whole one
    unsigned version = 11;
    bool head = false, keep_alive = false;
    auto [hec, hn] = co_await beast::http::async_read_header(stream, buffer, parser, use_tuple);
    if (hec == beast::http::error::header_limit) {
      r = text(beast::http::status::request_header_fields_too_large, "request head too large\n");
    } else if (hec) {
      break;
    } else {
      const auto& req = parser.get();
      version = req.version();
      head = req.method() == beast::http::verb::head;
      keep_alive = req.keep_alive();
      const std::string_view target = req.target();
      const std::size_t q = target.find('?');
      const std::string_view path = target.substr(0, q);
      const std::string_view query = q == std::string_view::npos ? std::string_view() : target.substr(q + 1);
      const std::string_view method = req.method_string();
      const Endpoint endpoint = endpoint_of(path);
      std::optional<AdminCaller> caller;
      if (auto refused = I.refusal(endpoint, req[beast::http::field::authorization], caller)) {
        r = std::move(*refused);
        spdlog::warn("admin: {} {} refused ({}) from {}{}", method, path.substr(0, 200),
                     static_cast<unsigned>(r.status), peer.address().to_string(),
                     caller ? " with " + caller->describe() : std::string());
      } else if (parser.content_length() && *parser.content_length() > kMaxBodyBytes) {
        r = error_reply(413, "request_too_large", "The body may be at most 4096 bytes.");
      } else {
        parser.body_limit(kMaxBodyBytes);  // a chunked body
        auto [bec, bn] = co_await beast::http::async_read(stream, buffer, parser, use_tuple);
        if (bec == beast::http::error::body_limit) {
          r = error_reply(413, "request_too_large", "The body may be at most 4096 bytes.");
        } else if (bec) {
          break;
        } else {
          read_whole = true;
          try {
            r = I.handle(method, path, endpoint, {method, query, parser.get().body()}, caller);
          } catch (const std::exception& e) {
            spdlog::error("admin endpoint {} failed: {}", path, e.what());
            r = text(beast::http::status::internal_server_error, "internal error\n");
          }
        }
      }
      if (parser.is_done()) read_whole = true;  // a refused request without a body
    }
    beast::http::response<beast::http::string_body> res{r.status, version};
    res.set(beast::http::field::server, "smartlb-admin");
    res.set(beast::http::field::content_type, r.content_type);
    res.set(beast::http::field::cache_control, "no-store");
    res.set("x-content-type-options", "nosniff");
    if (!r.allow.empty()) res.set(beast::http::field::allow, r.allow);
    if (r.ask_for_token) res.set(beast::http::field::www_authenticate, "Bearer realm=\"smartlb-admin\"");
    if (r.html)
      res.set("content-security-policy",
              "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
              "connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'");
    // A body left unread (a refusal, a body too large) cannot be skipped safely: close.
    res.keep_alive(keep_alive && read_whole);
    const std::size_t length = r.body.size();
    if (!head) res.body() = std::move(r.body);
    res.content_length(length);
    stream.expires_after(std::chrono::seconds(30));
    auto [wec, wn] = co_await beast::http::async_write(stream, res, use_tuple);
    if (wec) break;
    if (!read_whole) {
      // Closing with the client's bytes unread would reset the connection, and the client could
      // lose the answer: say we are done, then read and drop what comes (bounded) until it closes.
      stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
      stream.expires_after(std::chrono::seconds(2));
      std::array<char, 4096> sink;
      for (std::size_t dropped = 0; dropped < 1024 * 1024;) {
        auto [rec, n] = co_await stream.async_read_some(asio::buffer(sink), use_tuple);
        if (rec) break;
        dropped += n;
      }
      break;
    }
    if (!res.keep_alive()) break;
  }
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

AdminServer::AdminServer(net::Server& server, const telemetry::Metrics& metrics, AdminOptions opts)
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

void AdminServer::set_access(const config::AdminConfig& access) {
  auto next = std::make_shared<const AdminAccess>(access);
  std::lock_guard lock(impl_->access_mutex);
  impl_->access = std::move(next);
}

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

}  // namespace smartlb::admin
