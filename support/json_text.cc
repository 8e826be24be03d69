// ParseJsonText: a SAX pass that checks the syntax and refuses duplicate
// keys, then nlohmann's parser.
#include "support/json_text.h"

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace autobatch {
namespace {

using Json = nlohmann::json;

// Reads the text's events without building anything, keeping, for each open
// container, its path component and (objects) the keys seen so far. It stops
// at the first syntax error or duplicate key and says what it was. (A
// callback given to Json::parse would do the same in one pass, but with a
// callback nlohmann rescans the parent array at every object's end, which
// makes arrays of objects quadratic.)
class Checker final : public Json::json_sax_t {
 public:
  explicit Checker(size_t text_size) : text_size_(text_size) {}

  bool null() override { return Element(); }
  bool boolean(bool) override { return Element(); }
  bool number_integer(Json::number_integer_t) override { return Element(); }
  bool number_unsigned(Json::number_unsigned_t) override { return Element(); }
  bool number_float(Json::number_float_t, const Json::string_t&) override {
    return Element();
  }
  bool string(Json::string_t&) override { return Element(); }
  bool binary(Json::binary_t&) override { return Element(); }
  bool start_object(std::size_t) override {
    frames_.emplace_back().is_array = false;
    return true;
  }
  bool start_array(std::size_t) override {
    frames_.emplace_back().is_array = true;
    return true;
  }
  bool key(Json::string_t& key) override {
    Frame& top = frames_.back();
    if (!top.keys.insert(key).second) {
      error_ = absl::StrCat("not valid JSON: the key ", QuotedExcerpt(key),
                            " appears twice in the object at ", Path(),
                            "; readers disagree on which one counts, so give each key once");
      return false;
    }
    top.key = key;
    return true;
  }
  bool end_object() override { return EndContainer(); }
  bool end_array() override { return EndContainer(); }
  bool parse_error(std::size_t position, const std::string& /*last_token*/,
                   const nlohmann::detail::exception& e) override {
    // The parser reports the end of the text as size + 1.
    if (position > text_size_) {
      error_ = absl::StrCat(
          "not valid JSON: the text ends (after ", text_size_,
          " bytes) before the JSON does; the file looks truncated, write it again in full (",
          e.what(), ")");
    } else {
      error_ = absl::StrCat("not valid JSON at byte ", position, " (the text has ", text_size_,
                            " bytes): ", e.what());
    }
    return false;
  }

  // Empty when the text is valid JSON with distinct keys in every object.
  const std::string& error() const { return error_; }

 private:
  struct Frame {
    bool is_array = false;
    int64_t index = 0;  // arrays: the element being read
    std::string key;    // objects: the key being read
    std::set<std::string> keys;
  };

  bool Element() {
    if (!frames_.empty() && frames_.back().is_array) ++frames_.back().index;
    return true;
  }
  bool EndContainer() {
    frames_.pop_back();
    return Element();
  }

  // The path of the innermost frame (the object holding the duplicate); past
  // 16 components, the first and last 8 with "..." between.
  std::string Path() const {
    if (frames_.size() == 1) return "the top level";
    const size_t n = frames_.size() - 1;  // components: every frame but the innermost
    constexpr size_t kShown = 8;
    std::string path;
    for (size_t i = 0; i < n; ++i) {
      if (n > 2 * kShown && i == kShown) {
        absl::StrAppend(&path, "...(", n - 2 * kShown, " more)...");
        i = n - kShown - 1;
        continue;
      }
      const Frame& f = frames_[i];
      if (f.is_array) {
        absl::StrAppend(&path, "[", f.index, "]");
      } else {
        absl::StrAppend(&path, ".", QuotedExcerpt(f.key));
      }
    }
    return path;
  }

  size_t text_size_;
  std::vector<Frame> frames_;
  std::string error_;
};

}  // namespace

std::string QuotedExcerpt(std::string_view text, size_t max_bytes) {
  std::string out = "\"";
  for (size_t i = 0; i < text.size() && i < max_bytes; ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
      out += static_cast<char>(c);
    } else {
      out += absl::StrFormat("\\x%02x", c);
    }
  }
  out += "\"";
  if (text.size() > max_bytes) absl::StrAppend(&out, " (cut; ", text.size(), " bytes)");
  return out;
}

absl::StatusOr<nlohmann::json> ParseJsonText(std::string_view text) {
  Checker checker(text.size());
  if (!Json::sax_parse(text, &checker)) {
    return absl::InvalidArgumentError(checker.error());
  }
  try {
    return Json::parse(text);
  } catch (const Json::exception& e) {
    // The checker read the same text without complaint; a difference between
    // nlohmann's two parsers is not the user's doing.
    return absl::InternalError(absl::StrCat(
        "autobatch internal error: JSON accepted by the checker failed to parse: ", e.what()));
  }
}

}  // namespace autobatch
