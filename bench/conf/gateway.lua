-- wrk script of bench/gateway_method.sh: an LLM-shaped request, a chat completion of about
-- 1 KiB (model, a system and a user message, max_tokens, temperature) POSTed as JSON;
-- GM_STREAM=1 asks for a stream ("stream": true).
--
-- GM_RATE=R (requests per second, all GM_THREADS threads together) makes wrk an open-loop
-- generator within its connections: each thread keeps a fixed schedule (request i due at
-- i / (R / GM_THREADS) s) and a connection that comes free sends the next request at once if it
-- is due or late, else when it is due (wrk's timers count whole milliseconds, so requests leave
-- in bursts of up to 1 ms). The schedule never resets: a gateway that cannot keep up leaves
-- requests behind their slots (all connections busy). Each request's lag (how late it left
-- against its slot) goes into a histogram; done() prints, over all threads:
--   gm_lag_ms P99.5 MAX      the lag's 99.5th percentile and maximum
--   gm_svc_ms P99 P99.5      wrk's latency (write of the request to the whole answer)
--   gm_behind_pct X          the requests due by the end that had not left, % of those due
-- An open-loop latency is lag + service time, so its p99 is at most lag p99.5 + service p99.5
-- (the bound the caller checks). Without GM_RATE wrk runs closed-loop, as usual.
local ffi = require("ffi")
ffi.cdef [[
  typedef struct { long tv_sec; long tv_nsec; } gm_timespec;
  int clock_gettime(int clk_id, gm_timespec *tp);
]]
local ts = ffi.new("gm_timespec")
local function now_ms()
  ffi.C.clock_gettime(1, ts)  -- CLOCK_MONOTONIC
  return tonumber(ts.tv_sec) * 1000 + tonumber(ts.tv_nsec) / 1e6
end

local stream = os.getenv("GM_STREAM") == "1"
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["api-key"] = "bench-key"
wrk.body = '{"model":"gpt-4o","messages":['
  .. '{"role":"system","content":"You are the support assistant of Contoso Outdoor, an online shop for '
  .. 'hiking and running gear. Answer in the language of the customer, briefly and politely. Use only '
  .. 'the order data and the knowledge-base articles given in the conversation; cite the article ids '
  .. 'you rely on. Never invent order numbers, prices or delivery dates. Hand the conversation to a '
  .. 'human agent when the customer asks for a refund above 500 EUR or mentions a legal matter."},'
  .. '{"role":"user","content":"Hello, I ordered a pair of trail running shoes, size 43, two weeks ago '
  .. '(order 4471-2209) and they arrived yesterday, but the left shoe has a torn seam near the heel. '
  .. 'I would like to exchange them for the same model in the same size, or get my money back if that '
  .. 'size is sold out. Do I have to pay for the return shipping, and how long does an exchange take? '
  .. 'My customer number is C-88213 and I paid by credit card. Thanks a lot!"}],'
  .. '"max_tokens":512,"temperature":0.7' .. (stream and ',"stream":true' or '') .. '}'

local rate = tonumber(os.getenv("GM_RATE") or "") or 0
local nthreads = tonumber(os.getenv("GM_THREADS") or "") or 1
local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

if rate > 0 then
  local interval = 1000 / (rate / nthreads)  -- ms between two requests of this thread
  local next_ms = nil
  gm_t0, gm_sent, gm_hist = 0, 0, {}          -- read by done() (thread:get)

  function delay()
    local now = now_ms()
    if next_ms == nil then next_ms = now; gm_t0 = now end
    local slot = next_ms
    next_ms = next_ms + interval
    gm_sent = gm_sent + 1
    local d = slot - now
    local b = d < 0 and math.min(math.floor(-d), 100000) or 0  -- lag, 1 ms buckets
    gm_hist[b] = (gm_hist[b] or 0) + 1
    if d <= 0 then return 0 end
    return math.floor(d)
  end
end

function done(summary, latency, requests)
  if rate > 0 then
    local t_end, due, sent, hist, n, maxb = now_ms(), 0, 0, {}, 0, 0
    for _, t in ipairs(threads) do
      local t0 = t:get("gm_t0") or 0
      if t0 > 0 then due = due + math.floor((t_end - t0) / (1000 / (rate / nthreads))) + 1 end
      sent = sent + (t:get("gm_sent") or 0)
      for b, c in pairs(t:get("gm_hist") or {}) do
        hist[b] = (hist[b] or 0) + c; n = n + c
        if b > maxb then maxb = b end
      end
    end
    local p995, acc = 0, 0
    for b = 0, maxb do
      acc = acc + (hist[b] or 0)
      if acc >= 0.995 * n then p995 = b; break end
    end
    io.write(string.format("gm_lag_ms %d %d\n", p995, maxb))
    io.write(string.format("gm_svc_ms %.3f %.3f\n", latency:percentile(99) / 1000, latency:percentile(99.5) / 1000))
    io.write(string.format("gm_behind_pct %.2f\n", due > 0 and math.max(0, (due - sent) * 100 / due) or 100))
  end
  io.write(string.format("gm_body_bytes %d\n", #wrk.body))
end
