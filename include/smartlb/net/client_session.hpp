#pragma once
// One client connection: its requests read, checked and forwarded in turn until it closes.
#include "smartlb/io/beast.hpp"
#include "smartlb/telemetry/request_record.hpp"

namespace smartlb::net {

struct Worker;

// Reads requests on one client connection until it closes.
io::Task<> run_client_session(Worker& w, io::Socket socket);

// Stamps the end time, writes the access-log line and tells the observer.
void finish_request(Worker& w, telemetry::RequestRecord& rec);

}  // namespace smartlb::net
