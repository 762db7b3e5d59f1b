#pragma once
// A request's wait for its token issuer's key fetch (the first one, or the refetch an unknown
// kid asked for): asynchronous on the caller's executor (a worker's thread is never blocked),
// woken by the key-set service when the fetch ends, or at `timeout`. Includes Asio: for the
// client session only.
#include "smartlb/clients/jwt/issuer_keys.hpp"
#include "smartlb/io/beast.hpp"

namespace smartlb::clients::jwt {

io::Task<void> wait_for_keys(std::shared_ptr<IssuerKeys> keys, base::Nanos timeout);

}  // namespace smartlb::clients::jwt
