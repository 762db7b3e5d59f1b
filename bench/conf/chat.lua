-- wrk script: the fixed request shape of the benchmarks (Azure chat, ~400 chars of content,
-- max_tokens 100 -> the sims charge 100 + 100 = 200 tokens).
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["api-key"] = "bench-key"
local content = string.rep("The quick brown fox jumps over the lazy dog. ", 9) .. "Hello bench"
wrk.body = '{"messages":[{"role":"user","content":"' .. content:sub(1, 400) .. '"}],"max_tokens":100}'
