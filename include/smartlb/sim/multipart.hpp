#pragma once
// multipart/form-data (RFC 7578) as the SDKs send file uploads: the boundary from the
// Content-Type, then each part's name, filename, content type and bytes. The parts' bodies
// are views into the request body (no copy). Pure.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace smartlb::sim {

struct MultipartPart {
  std::string name;                     // Content-Disposition name
  std::optional<std::string> filename;  // Content-Disposition filename, when a file
  std::string content_type;             // the part's Content-Type, empty when absent
  std::string_view body;
};

struct MultipartParse {
  std::vector<MultipartPart> parts;
  std::string error;  // non-empty: not valid multipart
};

/// The boundary of a `multipart/form-data; boundary=...` Content-Type value (quoted or not);
/// nullopt when the type is another or the boundary is missing, empty or longer than 70.
std::optional<std::string> multipart_boundary(std::string_view content_type);

/// Parses `body` into parts. A preamble before the first delimiter and an epilogue after the
/// closing one are ignored; a part without a name, a missing closing delimiter or a part
/// without the blank line after its headers is an error.
MultipartParse parse_multipart(std::string_view body, std::string_view boundary);

/// The first part named `name`, or nullptr.
const MultipartPart* find_part(const MultipartParse& parsed, std::string_view name);

}  // namespace smartlb::sim
