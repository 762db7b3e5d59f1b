# Groups callgrind_annotate --inclusive=no (self cost) lines into coarse categories.
# Usage: callgrind_annotate --threshold=100 --inclusive=no FILE | awk -v reqs=N -f callgrind_categories.awk
/^ *[0-9,]+ +\( *[0-9.]+%\)/ && !/PROGRAM TOTALS/ {
  pct = $0; sub(/^[^(]*\( */, "", pct); sub(/%.*/, "", pct); if (pct + 0 >= 50) next
  x = $1; gsub(/,/, "", x); x += 0; line = $0
  # The function's name without its arguments (string_view parameters are not string work).
  fn = line; sub(/^[^)]*\) */, "", fn); sub(/^[^:]*:/, "", fn); sub(/\(.*/, "", fn)
  if (line ~ /nlohmann/) c = "nlohmann::json (parse/destroy)"
  else if (line ~ /malloc\.c|operator new|operator delete|cfree|free\[|_int_free|_int_malloc/) c = "malloc/free"
  else if (line ~ /buffers_cat_view|buffers_suffix|buffers_prefix|mp_with_index|buffers_ref|serializer|chunk_crlf|field_range|writer::/) c = "Beast serializer / buffer sequences"
  else if (fn ~ /^smartlb::|^void smartlb::/) c = "smartlb code"
  else if (line ~ /basic_parser|parse_field|http::detail::.*pars|parser</) c = "Beast HTTP parser"
  else if (line ~ /basic_fields|iless|field_table|string_to_field|to_string\(boost::beast::http::field/) c = "Beast fields (header map)"
  else if (line ~ /any_io_executor|execution::detail|any_executor/) c = "asio any_io_executor (type-erased copies)"
  else if (line ~ /memcpy|memmove|memset|memcmp|strlen|__memchr|strchr/) c = "libc mem*/str*"
  else if (line ~ /basic_string.*push_back\(char\)/) c = "std::string::push_back (nlohmann lexer token buffer)"
  else if (fn ~ /basic_string/) c = "std::string"
  else if (line ~ /spdlog|fmt::/) c = "spdlog/fmt"
  else if (line ~ /pthread_mutex|__lll_lock|pthread_rwlock|atomic/) c = "locks"
  else if (line ~ /boost::asio::detail::(scheduler|epoll|reactive|timer_queue|socket_ops|reactor|executor_op|thread_info|awaitable|co_spawn|handler_work)|awaitable|co_composed|coro/) c = "asio runtime (reactor, timers, coroutines)"
  else if (line ~ /boost::beast::basic_stream|tcp_stream|timeout|beast::detail/) c = "Beast tcp_stream (timeouts)"
  else if (line ~ /smartlb::/) c = "smartlb code"
  else if (line ~ /libc\.so|ld-linux/) c = "libc other (syscall wrappers, clock)"
  else c = "other"
  sum[c] += x; total += x
}
END {
  for (c in sum) printf "%9.0f %5.1f%%  %s\n", sum[c] / reqs, 100 * sum[c] / total, c | "sort -nr"
  close("sort -nr")
  printf "%9.0f 100.0%%  total self instructions per request\n", total / reqs
}
