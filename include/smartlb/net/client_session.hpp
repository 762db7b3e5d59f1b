#pragma once
// One client connection: its requests read, checked and forwarded in turn until it closes.
#include <exception>

#include "smartlb/io/beast.hpp"
#include "smartlb/telemetry/request_record.hpp"

namespace smartlb::net {

struct Worker;

// Reads requests on one client connection until it closes (or a WebSocket session its request
// opened takes it: then a coroutine of the session's own closes it, spawned with
// log_session_exception as its completion).
io::Task<> run_client_session(Worker& w, io::Socket socket);

// A session's coroutine ended by an exception: logged (the connection is closed by then).
void log_session_exception(std::exception_ptr e);

// Stamps the end time, writes the access-log line and tells the observer.
void finish_request(Worker& w, telemetry::RequestRecord& rec);

}  // namespace smartlb::net
