#pragma once
// Sends one TokenRequest and reads the answer: a cold path (a few requests an hour), so it uses
// Beast's own client parser, a new connection each time, and one deadline for the whole
// exchange. HTTPS verifies the certificate and the host name against the process's TLS context
// (the system's CAs and UPSTREAM_CA_FILE). Private to the I/O side: includes Asio.
#include <chrono>
#include <string>

#include "smartlb/credentials/entra/token_request.hpp"
#include "smartlb/io/beast.hpp"

namespace smartlb::credentials::entra {

struct FetchedAnswer {
  unsigned status = 0;  // 0: no answer (error says why)
  std::string body;
  std::string error;
};

io::Task<FetchedAnswer> fetch_token_answer(const TokenRequest& request, io::ssl::context& tls,
                                           std::chrono::nanoseconds timeout);

}  // namespace smartlb::credentials::entra
