#pragma once
// The Asio/Beast vocabulary that net's code uses unqualified (io/beast.hpp), named one by one
// rather than pulled in with a using-directive, so a reader sees what net takes from io.
#include "smartlb/io/beast.hpp"

namespace smartlb::net {
namespace asio = io::asio;
namespace beast = io::beast;
namespace ssl = io::ssl;
using io::error_code;
using io::Executor;
using io::is_parse_error;
using io::Socket;
using io::Task;
using io::tcp;
using io::use_task;
using io::use_tuple;
using io::use_tuple_for;
}  // namespace smartlb::net
