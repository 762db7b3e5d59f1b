#include "smartlb/sim/multipart.hpp"

#include <algorithm>
#include <cctype>

namespace smartlb::sim {
namespace {

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

// The value of parameter `key` in "type; a=1; b=\"x y\"" (case-insensitive key, quotes
// removed, backslash escapes inside quotes honoured); nullopt when absent.
std::optional<std::string> header_parameter(std::string_view value, std::string_view key) {
  std::size_t i = value.find(';');
  while (i != std::string_view::npos && i < value.size()) {
    ++i;
    while (i < value.size() && (value[i] == ' ' || value[i] == '\t')) ++i;
    const std::size_t eq = value.find('=', i);
    if (eq == std::string_view::npos) return std::nullopt;
    const std::string name = lower(trim(value.substr(i, eq - i)));
    std::size_t j = eq + 1;
    std::string parameter;
    if (j < value.size() && value[j] == '"') {
      for (++j; j < value.size() && value[j] != '"'; ++j) {
        if (value[j] == '\\' && j + 1 < value.size()) ++j;
        parameter.push_back(value[j]);
      }
      if (j < value.size()) ++j;  // closing quote
    } else {
      const std::size_t end = std::min(value.find(';', j), value.size());
      parameter = std::string(trim(value.substr(j, end - j)));
      j = end;
    }
    if (name == key) return parameter;
    i = value.find(';', j);
  }
  return std::nullopt;
}

MultipartParse multipart_failure(std::string message) {
  MultipartParse parse;
  parse.error = std::move(message);
  return parse;
}

}  // namespace

std::optional<std::string> multipart_boundary(std::string_view content_type) {
  const std::string_view type = trim(content_type.substr(0, content_type.find(';')));
  if (lower(type) != "multipart/form-data") return std::nullopt;
  auto boundary = header_parameter(content_type, "boundary");
  if (!boundary || boundary->empty() || boundary->size() > 70) return std::nullopt;
  return boundary;
}

MultipartParse parse_multipart(std::string_view body, std::string_view boundary) {
  const std::string delimiter = "--" + std::string(boundary);
  const std::string next_delimiter = "\r\n" + delimiter;

  // The first delimiter: at the very start, or after a preamble and CRLF.
  std::size_t position;
  if (body.starts_with(delimiter)) {
    position = delimiter.size();
  } else {
    const std::size_t found = body.find(next_delimiter);
    if (found == std::string_view::npos) return multipart_failure("no multipart boundary in the body");
    position = found + next_delimiter.size();
  }

  MultipartParse parse;
  for (;;) {
    if (body.substr(position, 2) == "--") return parse;  // closing delimiter
    // Transport padding (spaces, tabs) may follow a delimiter before its CRLF.
    while (position < body.size() && (body[position] == ' ' || body[position] == '\t')) ++position;
    if (body.substr(position, 2) != "\r\n") return multipart_failure("malformed multipart delimiter line");
    position += 2;

    const std::size_t headers_end = body.find("\r\n\r\n", position);
    const std::size_t part_end = body.find(next_delimiter, position);
    if (part_end == std::string_view::npos)
      return multipart_failure("multipart body has no closing boundary");
    MultipartPart part;
    std::size_t content_start;
    if (body.substr(position, 2) == "\r\n") {  // no headers at all
      content_start = position + 2;
    } else {
      if (headers_end == std::string_view::npos || headers_end > part_end) {
        return multipart_failure("multipart part without a blank line after its headers");
      }
      std::string_view headers = body.substr(position, headers_end - position);
      while (!headers.empty()) {
        const std::size_t line_end = std::min(headers.find("\r\n"), headers.size());
        const std::string_view line = headers.substr(0, line_end);
        headers.remove_prefix(std::min(line_end + 2, headers.size()));
        const std::size_t colon = line.find(':');
        if (colon == std::string_view::npos) return multipart_failure("malformed multipart part header");
        const std::string name = lower(trim(line.substr(0, colon)));
        const std::string_view value = trim(line.substr(colon + 1));
        if (name == "content-disposition") {
          if (lower(trim(value.substr(0, value.find(';')))) != "form-data") {
            return multipart_failure("multipart part is not form-data");
          }
          part.name = header_parameter(value, "name").value_or("");
          part.filename = header_parameter(value, "filename");
        } else if (name == "content-type") {
          part.content_type = std::string(value);
        }
      }
      content_start = headers_end + 4;
    }
    if (part.name.empty()) return multipart_failure("multipart part without a name");
    // "headers CRLF CRLF --boundary": the blank line doubles as the delimiter's CRLF; empty body.
    part.body =
        content_start > part_end ? std::string_view{} : body.substr(content_start, part_end - content_start);
    parse.parts.push_back(std::move(part));
    position = part_end + next_delimiter.size();
  }
}

const MultipartPart* find_part(const MultipartParse& parsed, std::string_view name) {
  for (const auto& part : parsed.parts) {
    if (part.name == name) return &part;
  }
  return nullptr;
}

}  // namespace smartlb::sim
