#pragma once
// The Asio/Beast vocabulary that http1's code uses unqualified (io/beast.hpp), named one by one
// rather than pulled in with a using-directive, so a reader sees what http1 takes from io.
#include "smartlb/io/beast.hpp"

namespace smartlb::http1 {
namespace asio = io::asio;
namespace beast = io::beast;
using io::error_code;
using io::Task;
using io::use_tuple;
using io::use_tuple_for;
}  // namespace smartlb::http1
