#pragma once
// The request path's wait for a token, when a credential has no valid one yet: asynchronous on
// the caller's executor (a worker's thread is never blocked), woken by the credential service
// when its fetch ends, or at `timeout`. Includes Asio: for the forwarder only.
#include "smartlb/credentials/entra/token_cell.hpp"
#include "smartlb/io/beast.hpp"

namespace smartlb::credentials::entra {

// Returns what the cell says once the wait ends.
io::Task<TokenCell::Lookup> wait_for_token(TokenCell& cell, const base::Clock& clock, base::Nanos timeout);

}  // namespace smartlb::credentials::entra
