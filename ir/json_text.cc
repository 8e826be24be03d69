// ParseJsonText: nlohmann's parser plus a duplicate-key check and error
// messages with positions.
#include "ir/json_text.h"

#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace autobatch {
namespace {

using Json = nlohmann::json;

// Follows the parser's events to know, at each key, the path of the object
// being read and the keys it has had so far.
class DuplicateKeyFinder {
 public:
  bool operator()(int /*depth*/, Json::parse_event_t event, Json& parsed) {
    switch (event) {
      case Json::parse_event_t::object_start:
        frames_.emplace_back().is_array = false;
        break;
      case Json::parse_event_t::array_start:
        frames_.emplace_back().is_array = true;
        break;
      case Json::parse_event_t::key: {
        Frame& top = frames_.back();
        top.key = parsed.get<std::string>();
        if (!top.keys.insert(top.key).second && duplicate_.empty()) {
          duplicate_ =
              absl::StrCat("not valid JSON: the key ", QuotedExcerpt(top.key),
                           " appears twice in the object at ", Path(),
                           "; readers disagree on which one counts, so give each key once");
        }
        break;
      }
      case Json::parse_event_t::object_end:
      case Json::parse_event_t::array_end:
        frames_.pop_back();
        CountElement();
        break;
      case Json::parse_event_t::value:
        CountElement();
        break;
    }
    return true;
  }

  // Empty when every object's keys were distinct.
  const std::string& duplicate() const { return duplicate_; }

 private:
  struct Frame {
    bool is_array = false;
    int64_t index = 0;       // arrays: the element being read
    std::string key;         // objects: the key being read
    std::set<std::string> keys;
  };

  void CountElement() {
    if (!frames_.empty() && frames_.back().is_array) ++frames_.back().index;
  }

  // The path of the innermost frame (the object holding the duplicate).
  std::string Path() const {
    if (frames_.size() == 1) return "the top level";
    std::string path;
    for (size_t i = 0; i + 1 < frames_.size(); ++i) {
      const Frame& f = frames_[i];
      if (f.is_array) {
        absl::StrAppend(&path, "[", f.index, "]");
      } else {
        absl::StrAppend(&path, ".", QuotedExcerpt(f.key));
      }
    }
    return path;
  }

  std::vector<Frame> frames_;
  std::string duplicate_;
};

}  // namespace

std::string QuotedExcerpt(std::string_view text, size_t max_chars) {
  std::string out = "\"";
  for (size_t i = 0; i < text.size() && i < max_chars; ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
      out += static_cast<char>(c);
    } else {
      out += absl::StrFormat("\\x%02x", c);
    }
  }
  if (text.size() > max_chars) absl::StrAppend(&out, "...(", text.size(), " bytes)");
  return out + "\"";
}

absl::StatusOr<nlohmann::json> ParseJsonText(std::string_view text) {
  DuplicateKeyFinder finder;
  Json json;
  try {
    json = Json::parse(text, std::ref(finder));
  } catch (const Json::parse_error& e) {
    // The parser reports the end of the text as byte size + 1.
    if (e.byte > text.size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "not valid JSON: the text ends (after ", text.size(),
          " bytes) before the JSON does; the file looks truncated, write it again in full (",
          e.what(), ")"));
    }
    return absl::InvalidArgumentError(absl::StrCat("not valid JSON at byte ", e.byte,
                                                   " (the text has ", text.size(),
                                                   " bytes): ", e.what()));
  } catch (const Json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("not valid JSON: ", e.what()));
  }
  if (!finder.duplicate().empty()) return absl::InvalidArgumentError(finder.duplicate());
  return json;
}

}  // namespace autobatch
