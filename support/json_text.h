// ParseJsonText: JSON text to nlohmann::json for every reader of user files,
// with errors that say where the text went wrong.
//
// Stricter than nlohmann::json::parse in one way: an object that names the
// same key twice is an error. RFC 8259 leaves duplicates undefined and
// nlohmann keeps the last one silently, so a repeated "inputs" or
// "step_size" in a hand-edited file would drop data without a word.
//
// Errors (InvalidArgument) never quote the text, only positions, the
// parser's reason and the offending key (cut to 80 characters), so a huge or
// binary file gives a short message. Callers prefix what they were reading
// ("inputs.json: ").
#ifndef AUTOBATCH_SUPPORT_JSON_TEXT_H_
#define AUTOBATCH_SUPPORT_JSON_TEXT_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace autobatch {

// Parses `text` as one JSON value. Failures:
//   not valid JSON at byte B (the text has N bytes): <parser's reason>
//   not valid JSON: the text ends (after N bytes) before the JSON does; the
//     file looks truncated, ... (<parser's reason>)
//   not valid JSON: the key "k" appears twice in the object at <path>; ...
//   not valid JSON: <parser's reason>   (e.g. a number beyond double's range)
// where <path> is "the top level" or like ."functions"[2]."blocks"[0]
// (past 16 components, the first and last 8). Linear in the text's size.
absl::StatusOr<nlohmann::json> ParseJsonText(std::string_view text);

// `text` in double quotes for an error message: at most its first
// `max_bytes` bytes, each outside printable ASCII (and '"', '\\') as \xNN,
// then, when cut, " (cut; N bytes)" after the closing quote. Readers of user
// files quote names with it, so a megabyte-long name gives a short message.
std::string QuotedExcerpt(std::string_view text, size_t max_bytes = 80);

}  // namespace autobatch

#endif  // AUTOBATCH_SUPPORT_JSON_TEXT_H_
