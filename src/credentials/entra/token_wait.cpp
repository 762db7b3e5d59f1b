#include "smartlb/credentials/entra/token_wait.hpp"

#include "smartlb/io/wait_for_wake.hpp"

namespace smartlb::credentials::entra {

using namespace smartlb::io;

Task<TokenCell::Lookup> wait_for_token(TokenCell& cell, const base::Clock& clock, base::Nanos timeout) {
  auto lookup = cell.look(clock.now());
  if (lookup.availability != TokenCell::Availability::Pending) co_return lookup;
  co_await wait_for_wake(cell, timeout);
  co_return cell.look(clock.now());
}

}  // namespace smartlb::credentials::entra
