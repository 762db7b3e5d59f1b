#include "smartlb/clients/jwt/key_wait.hpp"

#include "smartlb/io/wait_for_wake.hpp"

namespace smartlb::clients::jwt {

using namespace smartlb::io;

// `keys` is held by this coroutine's frame for the whole wait.
Task<void> wait_for_keys(std::shared_ptr<IssuerKeys> keys, base::Nanos timeout) {
  co_await wait_for_wake(*keys, timeout);
}

}  // namespace smartlb::clients::jwt
