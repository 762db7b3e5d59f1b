"use strict";
const POLL_MS = 1500, WINDOW_MS = 60000;
let history = [];          // [{t, doc}] within the window
let last = null, lastAt = 0;
// The admin token (docs/operations.md): typed into the field, kept in this tab's sessionStorage
// only, sent as an Authorization: Bearer header; never put in a URL.
const TOKEN_KEY = "smartlb-admin-token";
let token = sessionStorage.getItem(TOKEN_KEY) || "";
let role = null;  // the token's, once /admin/whoami answered: "read" or "write"
let pressed = false;  // a pointer is pressed on the tables: render() leaves them until it is released
const COLUMNS = [["Backend", "13%"], ["State", "11%"], ["Weight", "6%"], ["Traffic share", "10%"], ["Token share", "10%"],
  ["429 rate", "7%"], ["Latency avg · p95", "9%"], ["TTFB p50", "6%"], ["Deployments", "17%"], ["Errors", "11%"]];

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = String(text);
  return e;
}
function fmtInt(n) {
  n = Number(n) || 0;
  if (n >= 1e9) return (n / 1e9).toFixed(2) + "G";
  if (n >= 1e6) return (n / 1e6).toFixed(2) + "M";
  if (n >= 1e4) return (n / 1e3).toFixed(1) + "k";
  return String(Math.round(n));
}
// An amount in currency units: cents shown, fractions of a cent where that is all there is.
function fmtMoney(x, currency) {
  x = Number(x) || 0;
  return (x > 0 && x < 0.01 ? x.toPrecision(2) : x.toFixed(2)) + (currency ? " " + currency : "");
}
function fmtPct(x) { return isFinite(x) ? (x * 100).toFixed(x < 0.1 ? 1 : 0) + "%" : "–"; }
function fmtMs(ms) {
  if (!isFinite(ms) || ms <= 0) return "–";
  return ms >= 1000 ? (ms / 1000).toFixed(ms >= 10000 ? 0 : 1) + " s" : Math.round(ms) + " ms";
}
function fmtCountdown(ms) {
  const s = Math.max(0, Math.ceil(ms / 1000));
  const m = Math.floor(s / 60), r = s % 60;
  return m > 0 ? m + ":" + String(r).padStart(2, "0") : s + " s";
}
function fmtAgo(ms) {
  const s = Math.round(ms / 1000);
  if (s < 60) return s + " s ago";
  if (s < 3600) return Math.round(s / 60) + " min ago";
  return Math.round(s / 3600) + " h ago";
}

// Counter deltas between the oldest snapshot in the window and the newest. While the
// process is younger than the window, or when the window saw no traffic, all-time counts.
function windowed() {
  const first = history[0], cur = history[history.length - 1];
  const span = cur.t - first.t;
  const young = cur.doc.uptime_s * 1000 <= WINDOW_MS;
  let useDelta = !young && history.length > 1 && span >= 3000;
  if (useDelta && cur.doc.requests === first.doc.requests) useDelta = false;
  const prevB = {};
  if (useDelta) for (const b of first.doc.backends) prevB[b.name] = b;
  const per = {};
  let total = 0, totalTok = 0;
  for (const b of cur.doc.backends) {
    const p = useDelta ? prevB[b.name] : null;
    const d = (k) => (b[k] || 0) - (p ? (p[k] || 0) : 0);
    const lat = b.latency_ms, plat = p ? p.latency_ms : {count: 0, sum: 0};
    const x = {
      requests: d("requests"), attempts: d("attempts"), throttled: d("throttled"), errors: d("errors"),
      tokens: d("prompt_tokens") + d("completion_tokens"),
      latCount: lat.count - plat.count, latSum: lat.sum - plat.sum
    };
    per[b.name] = x;
    total += x.requests; totalTok += x.tokens;
  }
  let rps = NaN;
  if (young && cur.doc.uptime_s > 0) rps = cur.doc.requests / cur.doc.uptime_s;
  else if (history.length > 1 && span >= 3000) rps = (cur.doc.requests - first.doc.requests) / (span / 1000);
  return {per, total, totalTok, rps};
}

function render() {
  if (!last) return;
  const doc = last, w = windowed(), elapsed = Date.now() - lastAt;
  document.getElementById("version").textContent = "v" + doc.version + " · up " + fmtUptime(doc.uptime_s);
  const ready = document.getElementById("ready");
  ready.textContent = doc.draining ? "draining" : (doc.ready ? "ready" : "not ready");
  ready.className = "badge" + (doc.ready && !doc.draining ? "" : " off");
  document.getElementById("k-rps").textContent = isFinite(w.rps) ? w.rps.toFixed(w.rps < 10 ? 2 : 1) : "–";
  document.getElementById("k-inflight").textContent = fmtInt(doc.in_flight);
  document.getElementById("k-req").textContent = fmtInt(doc.requests);
  document.getElementById("k-429").textContent = fmtInt(doc.client_throttled);
  document.getElementById("k-fo").textContent = fmtInt(doc.failovers);
  document.getElementById("k-tok").textContent = fmtInt(doc.prompt_tokens) + " / " + fmtInt(doc.completion_tokens);

  const groups = new Map();
  for (const b of doc.backends) {
    if (!groups.has(b.priority)) groups.set(b.priority, []);
    groups.get(b.priority).push(b);
  }
  const root = document.getElementById("groups");
  // A click is a press and a release on one element: drawing the buttons again between the two
  // would lose it (the click then goes to #groups). Wait for the release; it draws again.
  if (pressed) return;
  const focused = document.activeElement && document.activeElement.closest &&
                  document.activeElement.closest("tr[data-backend] button[data-action]");
  const refocus = focused && [focused.closest("tr").dataset.backend, focused.dataset.action];
  const frag = document.createDocumentFragment();
  if (doc.history) frag.appendChild(chartsSection(doc.history, doc.backends.map((b) => b.name)));
  for (const prio of [...groups.keys()].sort((a, b) => a - b)) {
    const g = el("section", "group");
    const members = groups.get(prio);
    const up = members.filter((b) => b.state === "available").length;
    g.appendChild(el("h2", null, "Priority " + prio + " · " + up + "/" + members.length + " available"));
    const t = el("table");
    const head = el("tr");
    for (const [c, width] of COLUMNS) {
      const th = el("th", null, c);
      th.style.width = w;
      head.appendChild(th);
    }
    t.appendChild(head);
    for (const b of members) t.appendChild(row(b, w, elapsed));
    g.appendChild(t);
    frag.appendChild(g);
  }
  const rules = (doc.config && doc.config.rules) || [];
  if (rules.length > 1 || (rules.length === 1 && !rules[0].implicit)) frag.appendChild(rulesSection(doc.config));
  if ((doc.budgets || []).length) frag.appendChild(budgetsSection(doc.budgets));
  if (doc.redis) frag.appendChild(redisSection(doc.redis));
  root.replaceChildren(frag);
  // A keyboard user's focus stays on the same action across the redraw.
  if (refocus) {
    for (const b of root.querySelectorAll("tr[data-backend] button[data-action]")) {
      if (b.closest("tr").dataset.backend === refocus[0] && b.dataset.action === refocus[1]) b.focus();
    }
  }
}

// The last 15 minutes, from the samples /status keeps (one per interval_seconds): small SVG
// charts drawn here, so the page needs nothing from outside.
const PALETTE = ["#2e90fa", "#7a5af8", "#12b76a", "#f79009", "#ee46bc", "#06aed4", "#d92d20", "#667085"];
function svgEl(tag, attrs) {
  const e = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  return e;
}
// Series of [x in 0..1, y >= 0] as lines (or stacked areas), scaled to the largest y.
function chart(title, now, series, opts) {
  const box = el("div", "chart");
  box.dataset.chart = opts.id;
  const h = el("h3", null, title);
  box.appendChild(h);
  box.appendChild(el("div", "now", now));
  const W = 300, H = 64;
  const svg = svgEl("svg", {viewBox: `0 0 ${W} ${H}`, preserveAspectRatio: "none", role: "img", "aria-label": title});
  let max = opts.max || 0;
  if (!max) for (const s of series) for (const [, y] of s.points) max = Math.max(max, y);
  max = max || 1;
  svg.appendChild(svgEl("line", {x1: 0, y1: H - 0.5, x2: W, y2: H - 0.5, stroke: "#98a2b3", "stroke-opacity": 0.5}));
  for (const s of series) {
    if (!s.points.length) continue;
    const pts = s.points.map(([x, y]) => `${(x * W).toFixed(1)},${(H - 2 - (y / max) * (H - 6)).toFixed(1)}`);
    if (s.base) {
      const base = s.base.map(([x, y]) => `${(x * W).toFixed(1)},${(H - 2 - (y / max) * (H - 6)).toFixed(1)}`).reverse();
      svg.appendChild(svgEl("polygon", {points: pts.concat(base).join(" "), fill: s.color, "fill-opacity": 0.75}));
    } else {
      svg.appendChild(svgEl("polyline", {points: pts.join(" "), fill: "none", stroke: s.color, "stroke-width": 1.6,
                                         "vector-effect": "non-scaling-stroke"}));
    }
  }
  box.appendChild(svg);
  const legend = el("div", "legend");
  for (const s of series) {
    if (!s.label) continue;
    const i = el("i");
    i.style.background = s.color;
    legend.appendChild(i);
    legend.appendChild(document.createTextNode(s.label));
  }
  legend.appendChild(document.createTextNode(" · last " + opts.span));
  box.appendChild(legend);
  return box;
}
function chartsSection(history, backendNames) {
  const sec = el("section", "charts");
  const samples = history.samples || [];
  const spanS = history.interval_seconds * 90;
  const span = spanS >= 120 ? Math.round(spanS / 60) + " min" : Math.round(spanS) + " s";
  const end = samples.length ? samples[samples.length - 1].t : 0;
  const x = (s) => Math.max(0, 1 - (end - s.t) / spanS);
  const last = samples[samples.length - 1] || {};
  const line = (key) => samples.map((s) => [x(s), s[key] || 0]);
  sec.appendChild(chart("Requests / s", samples.length ? last.requests_per_s.toFixed(1) : "–",
                        [{points: line("requests_per_s"), color: PALETTE[0]}], {id: "requests", span}));
  sec.appendChild(chart("429s to clients · failovers / s",
                        samples.length ? last.throttled_per_s.toFixed(1) + " · " + last.failovers_per_s.toFixed(1) : "–",
                        [{points: line("throttled_per_s"), color: PALETTE[6], label: "429s"},
                         {points: line("failovers_per_s"), color: PALETTE[3], label: "failovers"}], {id: "throttled", span}));
  // Traffic share: stacked areas of each backend's part of the requests served in a sample.
  const names = backendNames.filter((n) => samples.some((s) => (s.served || {})[n]));
  const shares = [];
  let below = samples.map((s) => [x(s), 0]);
  names.forEach((n, k) => {
    const top = samples.map((s, i) => {
      const total = Object.values(s.served || {}).reduce((a, b) => a + b, 0);
      return [x(s), below[i][1] + (total ? ((s.served || {})[n] || 0) / total : 0)];
    });
    shares.push({points: top, base: below, color: PALETTE[k % PALETTE.length], label: n});
    below = top;
  });
  sec.appendChild(chart("Traffic share by backend", names.length ? names.length + " serving" : "–", shares,
                        {id: "share", span, max: 1}));
  sec.appendChild(chart("Latency (mean)", samples.length && last.latency_ms ? fmtMs(last.latency_ms) : "–",
                        [{points: samples.filter((s) => s.latency_ms > 0).map((s) => [x(s), s.latency_ms]), color: PALETTE[1]}],
                        {id: "latency", span}));
  return sec;
}

// The clients' budgets: each limit with what was used of it.
function budgetsSection(budgets) {
  const g = el("section", "group budgets");
  g.appendChild(el("h2", null, "Client budgets · " + budgets.length));
  const t = el("table");
  const head = el("tr");
  const dims = [["tokens_per_minute", "Tokens / min"], ["requests_per_minute", "Requests / min"],
                ["tokens_per_day", "Tokens / day (UTC)"], ["tokens_per_month", "Tokens / month (UTC)"]];
  // Cost limits (config file only) get their columns where some budget has one.
  const currency = (budgets.find((b) => b.currency) || {}).currency;
  if (currency !== undefined)
    dims.push(["cost_per_day", "Cost / day (UTC)"], ["cost_per_month", "Cost / month (UTC)"]);
  // Caps on requests in flight get their column where some budget has one.
  if (budgets.some((b) => b.limits.max_in_flight)) dims.push(["max_in_flight", "In flight"]);
  const width = Math.floor(72 / dims.length) + "%";
  for (const [c, w] of [["Budget", "28%"], ...dims.map(([, label]) => [label, width])]) {
    const th = el("th", null, c);
    th.style.width = width;
    head.appendChild(th);
  }
  t.appendChild(head);
  for (const b of budgets) {
    const tr = el("tr");
    tr.dataset.budget = b.owner + ":" + b.name + (b.caller ? ":" + b.caller : "");
    const name = el("td");
    const who = b.owner === "client" ? b.name : b.name === "*" ? "every caller" : b.name;
    name.appendChild(el("div", "name", b.caller ? b.caller : who));
    name.appendChild(el("div", "host", b.owner === "client" ? "client" : b.caller ? "its own, of " + who : "shared by " + who));
    tr.appendChild(name);
    for (const [key] of dims) {
      const limit = b.limits[key];
      if (!limit) {
        tr.appendChild(el("td", "num", "–"));
        continue;
      }
      let used = b.used[key] || 0;
      const fmt = key.startsWith("cost") ? (x) => fmtMoney(x, b.currency) : fmtInt;
      let text = fmt(used) + " of " + fmt(limit);
      // A cap held with other replicas (Redis): the bar is all of theirs, the text says which are here.
      const all = key === "max_in_flight" ? b.in_flight_all_replicas : undefined;
      if (all !== undefined && all !== used) {
        text = fmt(all) + " of " + fmt(limit) + " (" + fmt(used) + " here)";
        used = all;
      }
      const cell = shareCell(Math.min(used / limit, 1), text, key.startsWith("tokens"));
      if (used >= limit) cell.classList.add("r-hi");
      tr.appendChild(cell);
    }
    t.appendChild(tr);
  }
  g.appendChild(t);
  return g;
}

// Scale-out: the Redis connection and the live replicas (docs/scale-out.md).
function redisSection(r) {
  const g = el("section", "group redis");
  g.appendChild(el("h2", null, "Redis · " + (r.up ? "connected" : "down, local state") + " · " +
                   r.replicas.length + " live replica(s)"));
  const t = el("table");
  const head = el("tr");
  for (const c of ["Replica", "Host", "Started"]) head.appendChild(el("th", null, c));
  t.appendChild(head);
  for (const x of r.replicas) {
    const tr = el("tr");
    tr.appendChild(el("td", "name", x.id + (x.id === r.replica_id ? " (this one)" : "")));
    tr.appendChild(el("td", "host", x.host));
    tr.appendChild(el("td", null, new Date(x.started_ms).toISOString()));
    t.appendChild(tr);
  }
  g.appendChild(t);
  const info = el("p", "err", r.url);
  if (r.last_error) {
    info.appendChild(document.createTextNode(" · last error: "));
    info.appendChild(el("b", null, r.last_error));
  }
  g.appendChild(info);
  return g;
}

// The routing rules, in the order they are tried, with each target's state (and latency).
function rulesSection(config) {
  const g = el("section", "group rules");
  g.appendChild(el("h2", null, "Rules · tried in order" + (config.hash ? " · config " + config.hash.slice(0, 12) : "")));
  const t = el("table");
  const head = el("tr");
  for (const [c, width] of [["Rule", "22%"], ["When", "26%"], ["Targets", "52%"]]) {
    const th = el("th", null, c);
    th.style.width = width;
    head.appendChild(th);
  }
  t.appendChild(head);
  for (const r of config.rules) {
    const tr = el("tr");
    const name = el("td");
    name.appendChild(el("div", "name", r.id + (r.implicit ? " (default)" : "")));
    name.appendChild(el("div", "host", r.type));
    tr.appendChild(name);
    const when = [];
    for (const s of (r.when.subjects || [])) when.push("subject " + s);
    for (const m of (r.when.models || [])) when.push("model " + m);
    for (const [k, v] of Object.entries(r.when.metadata || {})) when.push(k + "=" + v);
    tr.appendChild(el("td", null, when.length ? when.join(", ") : "every request"));
    const cell = el("td");
    const deps = el("div", "deps");
    for (const x of r.targets) {
      const d = el("span", "dep target" + (x.state === "available" ? "" : " cooling"));
      let label = x.id + (x.upstream_name ? " → " + x.upstream_name : "");
      if (r.target_settings.includes("priority")) label += " · p" + x.priority;
      if (r.target_settings.includes("weight")) label += " · w" + x.weight;
      if (x.latency) label += " · " + (x.latency.samples >= 3 ? x.latency.ms_per_token.toFixed(1) + " ms/token" : "warming up");
      if (x.state !== "available") label += " · " + x.state + " " + fmtCountdown(x.cooldown_remaining_ms);
      d.textContent = label;
      deps.appendChild(d);
    }
    cell.appendChild(deps);
    tr.appendChild(cell);
    t.appendChild(tr);
  }
  g.appendChild(t);
  return g;
}

function fmtUptime(s) {
  s = Number(s) || 0;
  if (s < 120) return s + " s";
  if (s < 7200) return Math.floor(s / 60) + " min";
  if (s < 172800) return Math.floor(s / 3600) + " h";
  return Math.floor(s / 86400) + " d";
}

function shareCell(frac, label, tokens) {
  const td = el("td", "num");
  td.appendChild(el("div", null, isFinite(frac) ? fmtPct(frac) + (label ? " · " + label : "") : "–"));
  const bar = el("div", "bar" + (tokens ? " t" : ""));
  const fill = el("i");
  fill.style.width = (isFinite(frac) ? Math.round(frac * 100) : 0) + "%";
  bar.appendChild(fill);
  td.appendChild(bar);
  return td;
}

function row(b, w, elapsed) {
  const x = w.per[b.name] || {};
  const tr = el("tr");
  tr.dataset.backend = b.name;
  const name = el("td");
  name.appendChild(el("div", "name", b.name));
  name.appendChild(el("div", "host", b.scheme + "://" + b.url_host + (b.deployment_override ? " → " + b.deployment_override : "")));
  if (b.credential) {
    const c = b.credential;
    const until = c.expires_at ? " · until " + new Date(c.expires_at * 1000).toISOString().slice(11, 16) + " UTC" : "";
    name.appendChild(el("div", "host cred" + (c.state === "valid" || c.state === "refreshing" ? "" : " r-hi"),
                        "Entra ID " + c.source + " · " + c.state + until));
  }
  tr.appendChild(name);

  const st = el("td");
  st.appendChild(el("span", "pill s-" + b.state, b.state.replace("_", " ")));
  if (b.admin_state && b.admin_state !== "enabled") st.appendChild(el("span", "pill s-" + b.admin_state, b.admin_state));
  for (const a of b.admin || []) st.appendChild(el("span", "adm", adminText(a)));
  if (b.cooldown_remaining_ms > 0) {
    const left = b.cooldown_remaining_ms - elapsed;
    st.appendChild(el("span", "cd", (left > 0 ? "back in " + fmtCountdown(left) : "retrying now") + " · " + b.cooldown_cause.replaceAll("_", " ")));
  } else if (b.cooling_deployments > 0) {
    st.appendChild(el("span", "cd", b.cooling_deployments + " deployment" + (b.cooling_deployments > 1 ? "s" : "") + " cooling"));
  }
  if (role === "write") {
    const box = el("div", "act");
    for (const [label, action, method] of ACTIONS) {
      const button = el("button", null, label);
      button.type = "button";
      button.dataset.action = action;
      button.dataset.method = method;
      box.appendChild(button);
    }
    st.appendChild(box);
  }
  tr.appendChild(st);
  tr.appendChild(el("td", "num", b.weight));
  tr.appendChild(shareCell(w.total > 0 ? x.requests / w.total : NaN, fmtInt(x.requests) + " req", false));
  tr.appendChild(shareCell(w.totalTok > 0 ? x.tokens / w.totalTok : NaN, fmtInt(b.prompt_tokens + b.completion_tokens) + " tok", true));

  const rate = x.attempts > 0 ? x.throttled / x.attempts : NaN;
  tr.appendChild(el("td", "num" + (rate >= 0.2 ? " r-hi" : ""), isFinite(rate) ? fmtPct(rate) + " of " + fmtInt(x.attempts) : "–"));
  const avg = x.latCount > 0 ? x.latSum / x.latCount : (b.latency_ms.count > 0 ? b.latency_ms.avg : NaN);
  tr.appendChild(el("td", "num", fmtMs(avg) + " · " + fmtMs(b.latency_ms.p95)));
  tr.appendChild(el("td", "num", fmtMs(b.ttfb_ms.p50)));

  const deps = el("td");
  const box = el("div", "deps");
  for (const d of b.deployments) {
    const chip = el("span", "dep" + (d.state === "cooling" ? " cooling" : ""));
    let text = d.name;
    if (d.state === "cooling") {
      const left = d.cooldown_remaining_ms - elapsed;
      text += " · cooling " + (left > 0 ? fmtCountdown(left) : "ends now") + " (" + d.cooldown_cause.replaceAll("_", " ") + ")";
    }
    chip.appendChild(document.createTextNode(text + " "));
    if (d.requests > 0)
      chip.appendChild(el("span", "n", fmtInt(d.requests) + " req · " + fmtInt(d.prompt_tokens + d.completion_tokens) + " tok"));
    box.appendChild(chip);
  }
  if (!b.deployments.length) box.appendChild(el("span", "err", "–"));
  deps.appendChild(box);
  tr.appendChild(deps);

  const errs = el("td", "err");
  errs.appendChild(el("div", null, fmtInt(b.errors) + " errors · " + fmtInt(b.throttled) + " × 429"));
  if (b.last_error) {
    const le = el("div");
    le.appendChild(el("b", null, b.last_error.cause.replaceAll("_", " ") + (b.last_error.status ? " " + b.last_error.status : "")));
    le.appendChild(document.createTextNode((b.last_error.deployment ? " on " + b.last_error.deployment : "") + ", " + fmtAgo(b.last_error.ago_ms + elapsed)));
    errs.appendChild(le);
  }
  tr.appendChild(errs);
  return tr;
}

// A scope an operator took out: "drained by alice (write, sha256:…) at 12:00:00 UTC".
function adminText(a) {
  let text = (a.deployment ? a.deployment + ": " : "") + a.state;
  if (a.state === "draining") text += " (" + fmtInt(a.in_flight) + " in flight)";
  if (a.mode !== "enabled" && a.set_by) text += " by " + a.set_by + (a.set_at ? " at " + a.set_at.slice(11, 19) + " UTC" : "");
  if (a.hold) {
    text += " · cooldown held " + (a.hold.until ? "until " + a.hold.until.slice(11, 19) + " UTC" : "until lifted");
    if (a.hold.set_by) text += " by " + a.hold.set_by;
  }
  return text;
}

const ACTIONS = [["Drain", "drain", "POST"], ["Disable", "disable", "POST"], ["Enable", "enable", "POST"],
  ["Lift cooldown", "cooldown", "DELETE"]];

function authHeaders() { return token ? {Authorization: "Bearer " + token} : {}; }

// Which role the token has; the actions show with a write token only.
async function learnRole() {
  role = null;
  const who = document.getElementById("who");
  document.getElementById("token-forget").hidden = !token;
  who.textContent = "";
  if (token) {
    try {
      const res = await fetch("/admin/whoami", {cache: "no-store", headers: authHeaders()});
      const j = await res.json();
      if (res.ok) {
        role = j.role;
        who.textContent = (j.name || "no tokens set") + " · " + j.role;
      } else {
        who.textContent = (j.error && j.error.message) || "HTTP " + res.status;
      }
    } catch (e) {
      who.textContent = "cannot check the token (" + e.message + ")";
    }
  }
  await refresh();
}

function useToken() {
  const input = document.getElementById("token");
  token = input.value.trim();
  input.value = "";
  if (token) sessionStorage.setItem(TOKEN_KEY, token);
  else sessionStorage.removeItem(TOKEN_KEY);
  learnRole();
}
document.getElementById("token-use").addEventListener("click", useToken);
document.getElementById("token").addEventListener("keydown", (e) => { if (e.key === "Enter") useToken(); });
document.getElementById("token-forget").addEventListener("click", () => {
  token = "";
  sessionStorage.removeItem(TOKEN_KEY);
  learnRole();
});

document.getElementById("groups").addEventListener("pointerdown", () => { pressed = true; });
// The click comes after the release, in the same task: no render can come between them.
const released = () => { if (pressed) { pressed = false; setTimeout(render, 0); } };
window.addEventListener("pointerup", released, true);
window.addEventListener("pointercancel", released, true);
window.addEventListener("blur", (e) => { if (e.target === window) released(); });  // not an element's blur

// The actions' buttons are drawn again on every render: one listener on the table's root.
document.getElementById("groups").addEventListener("click", async (e) => {
  const button = e.target.closest("button[data-action]");
  const tr = button && button.closest("tr[data-backend]");
  if (!tr) return;
  const acted = document.getElementById("acted");
  try {
    const res = await fetch("/admin/backends/" + encodeURIComponent(tr.dataset.backend) + "/" + button.dataset.action,
                            {method: button.dataset.method, cache: "no-store", headers: authHeaders()});
    const j = await res.json();
    acted.textContent = res.ok ? tr.dataset.backend + ": " + j.state : (j.error && j.error.message) || "HTTP " + res.status;
    acted.className = res.ok ? "" : "bad";
  } catch (err) {
    acted.textContent = "The action failed (" + err.message + ")";
    acted.className = "bad";
  }
  await refresh();
});

// /status read once and drawn.
async function refresh() {
  const conn = document.getElementById("conn");
  try {
    const res = await fetch("/status", {cache: "no-store", headers: authHeaders()});
    if (res.status === 401) {
      conn.textContent = "This admin port needs a token: type it above.";
      conn.className = "bad";
      render();
      return;
    }
    if (!res.ok) throw new Error("HTTP " + res.status);
    const doc = await res.json();
    const now = Date.now();
    last = doc; lastAt = now;
    history.push({t: now, doc});
    while (history.length > 2 && now - history[1].t >= WINDOW_MS) history.shift();
    conn.textContent = "Updated " + new Date(now).toLocaleTimeString() + ".";
    conn.className = "";
  } catch (e) {
    conn.textContent = "Cannot reach /status (" + e.message + "); retrying.";
    conn.className = "bad";
  }
  render();
}

async function poll() {
  await refresh();
  setTimeout(poll, POLL_MS);
}
setInterval(render, 500);  // countdowns tick between polls
if (token) learnRole();
poll();
