#pragma once
// Whether a backend's answer says that an object the request names is not there -- so that a
// request whose ids carry no tag may try the next resource (it asked the wrong one), where any
// other answer is the request's own. 404; or a 400 in OpenAI's error shape that says so (the
// Responses API's `previous_response_not_found`: "Previous response with id '...' not found.").
#include <string_view>

namespace smartlb::stateful {

// `body`: the whole answer (for a 400: a part of one is not JSON, and says nothing).
bool says_not_found(unsigned status, std::string_view body);

}  // namespace smartlb::stateful
