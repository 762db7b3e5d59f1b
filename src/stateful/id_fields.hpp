#pragma once
// Which members of the stateful APIs' JSON hold ids of objects on a resource: the rule the
// response tagger writes tags by and the request reader finds untagged ids by, so both agree.
#include <string_view>

namespace smartlb::stateful::detail {

// A string under this key is an id: `id`, any `*_id` (previous_response_id, file_id, first_id,
// last_id, ...), a `conversation` named by its id, and fine-tuning's file members.
inline bool id_key(std::string_view key) {
  return key == "id" || key.ends_with("_id") || key == "conversation" || key == "training_file" ||
         key == "validation_file";
}

// Each string of an array under this key is an id: `*_ids` (file_ids, vector_store_ids, ...) and
// fine-tuning's result_files.
inline bool id_list_key(std::string_view key) { return key.ends_with("_ids") || key == "result_files"; }

// An object under this key is the client's own data echoed back: nothing in it is tagged.
inline bool user_data_key(std::string_view key) { return key == "metadata"; }

}  // namespace smartlb::stateful::detail
