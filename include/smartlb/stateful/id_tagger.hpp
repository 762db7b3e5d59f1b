#pragma once
// The ids in a stateful API's answer, tagged with the resource that made them: every string that
// stands where an id does -- the value of `id`, of any `*_id` key, each string of a `*_ids` array,
// `conversation` (a string, or an object's `id`), `training_file`, `validation_file`,
// `result_files` -- gets the resource's tag appended, unless it sits inside a `metadata` object
// (the client's own data, echoed back) or is not one an id can be (empty, over 256 bytes, with a
// space, a control character or an escape in it), or is tagged already.
//
// Everything else is the same bytes in the same order: only those strings grow. The client
// passes the ids back as it got them; the request reader (request_ids) takes the tags off.
#include <string>
#include <string_view>

#include "smartlb/stateful/resource_tag.hpp"

namespace smartlb::stateful {

// `json` with its ids tagged with `tag`, appended to `out`. False (and `out` as it was) when
// `json` is not one valid JSON text.
bool tag_json_ids(std::string_view json, const ResourceTag& tag, std::string& out);

}  // namespace smartlb::stateful
