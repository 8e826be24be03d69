// Reads the IR's text form (grammar and naming rules in ir/parser.h).
//
// Two phases: the text is read line by line into raw functions whose
// variables are still names, then names become VarIds once every function's
// params, results, `vars` lines and push_goto callees are known (a plain
// name may stand for a callee's param, and the callee may come later).
#include "ir/parser.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ir/control_ops.h"
#include "ir/printer.h"
#include "support/json_text.h"
#include "support/overloaded.h"
#include "support/status.h"

namespace autobatch {
namespace {

struct Pos {
  int line = 0;
  int column = 0;
};

absl::Status ErrorAt(Pos pos, std::string_view message) {
  return absl::InvalidArgumentError(
      absl::StrCat(pos.line, ":", pos.column, ": ", std::string(message)));
}

// A name as written: `n`, `"a b"`, with the printer's optional `#index`.
struct RawName {
  std::string name;
  int64_t suffix = -1;  // -1: none
  Pos pos;
  std::string Shown(char sigil) const {
    std::string out(1, sigil);
    out += name;
    if (suffix >= 0) absl::StrAppend(&out, "#", suffix);
    return out;
  }
};
using NameKey = std::pair<std::string, int64_t>;
NameKey KeyOf(const RawName& n) { return {n.name, n.suffix}; }

struct RawVar {
  RawName name;
  std::optional<RawName> function;  // `%n@f`
};

// A variable together with the type (and storage class) written for it.
struct RawDecl {
  RawVar var;
  std::optional<TensorType> type;  // `?` = none
  std::optional<StorageClass> storage;
  bool uniform = false;  // `uniform` after the type (and storage class)
  Pos type_pos;
};

struct RawPrim {
  Primitive prim = Primitive::kCopy;
  std::vector<RawDecl> outputs;
  std::vector<RawVar> inputs;
  Attributes attrs;
  std::vector<RawVar> in_place;
};
struct RawCall {
  std::vector<RawDecl> results;
  RawName callee;
  std::vector<RawVar> args;
};
struct RawPop {
  std::vector<RawVar> vars;
};
struct RawTapePush {
  RawVar tape;
  RawVar value;
};
struct RawTapePop {
  RawDecl result;
  RawVar tape;
};
struct RawOp {
  std::variant<RawPrim, RawCall, RawPop, RawTapePush, RawTapePop> op;
  SourceLoc loc;
};

struct RawBlockRef {
  int64_t index = 0;
  Pos pos;
};
struct RawTerminator {
  Terminator terminator;  // refs below fill in its ids
  std::optional<RawVar> cond;
  std::optional<RawName> callee;
  std::vector<RawBlockRef> blocks;  // in the order of the text
  SourceLoc loc;
};

struct RawBlock {
  std::string label;
  std::vector<RawOp> ops;
  std::optional<RawTerminator> terminator;
};

struct RawVarsRun {
  int64_t first = 0;
  Pos pos;
  std::vector<RawDecl> entries;  // type set only when written
  std::vector<bool> typed;
};

// `= gradient @f wrt 0, 2` on a function's header.
struct RawGradient {
  RawName function;
  std::vector<int64_t> wrt;
  std::vector<Pos> wrt_pos;
};

struct RawFunction {
  RawName name;
  std::vector<RawDecl> params;
  std::vector<RawDecl> results;
  std::optional<RawGradient> gradient;
  bool stub = false;  // a gradient stub without a body (no braces)
  std::optional<Signature> signature;
  SourceLoc loc;
  std::vector<RawVarsRun> runs;
  std::vector<RawBlock> blocks;
  bool closed = false;
};

bool IsNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         c == '_' || c == '.';
}
bool IsWordChar(char c) { return IsNameChar(c) || c == '+' || c == '-'; }

// One line of the text, read left to right.
class Cursor {
 public:
  Cursor(std::string_view line, int line_number) : line_(line), line_number_(line_number) {}

  Pos pos() const { return {line_number_, static_cast<int>(i_) + 1}; }

  void SkipSpaces() {
    while (i_ < line_.size() && (line_[i_] == ' ' || line_[i_] == '\t' || line_[i_] == '\r')) {
      ++i_;
    }
  }
  // Nothing but spaces and maybe a comment is left.
  bool AtEnd() {
    SkipSpaces();
    return i_ == line_.size() || line_.substr(i_).starts_with("//");
  }
  char Peek() {
    SkipSpaces();
    return i_ < line_.size() ? line_[i_] : '\0';
  }
  bool Consume(std::string_view token) {
    SkipSpaces();
    if (!line_.substr(i_).starts_with(token)) return false;
    i_ += token.size();
    return true;
  }
  // `word` as a whole word (not the start of a longer one).
  bool ConsumeWord(std::string_view word) {
    SkipSpaces();
    if (!line_.substr(i_).starts_with(word)) return false;
    size_t end = i_ + word.size();
    if (end < line_.size() && IsWordChar(line_[end])) return false;
    i_ = end;
    return true;
  }
  absl::Status Expect(std::string_view token, std::string_view what) {
    if (Consume(token)) return absl::OkStatus();
    return Error(what);
  }
  // "L:C: expected <what>, found <the next token>".
  absl::Status Error(std::string_view what) {
    SkipSpaces();
    return ErrorAt(pos(), absl::StrCat("expected ", std::string(what), ", found ", Found()));
  }
  std::string Found() {
    SkipSpaces();
    if (AtEnd()) return "the end of the line";
    size_t end = i_;
    while (end < line_.size() && line_[end] != ' ' && line_[end] != '\t' && end - i_ < 24) {
      ++end;
    }
    if (end == i_) end = i_ + 1;
    return QuotedExcerpt(line_.substr(i_, end - i_), 24);
  }
  // Letters, digits and `_ . + -`, possibly none.
  std::string_view Word() {
    SkipSpaces();
    size_t start = i_;
    while (i_ < line_.size() && IsWordChar(line_[i_])) ++i_;
    return line_.substr(start, i_ - start);
  }
  std::string_view PlainName() {
    size_t start = i_;
    while (i_ < line_.size() && IsNameChar(line_[i_])) ++i_;
    return line_.substr(start, i_ - start);
  }
  bool PeekRaw(char c) const { return i_ < line_.size() && line_[i_] == c; }
  void Advance() { ++i_; }
  std::string_view Rest() const { return line_.substr(i_); }
  void SkipToEnd() { i_ = line_.size(); }

 private:
  std::string_view line_;
  int line_number_;
  size_t i_ = 0;
};

// "expected <what>, found <word>" at `at`, where `word` was read there (the
// next token when it is empty).
absl::Status ExpectedAt(Cursor& c, Pos at, std::string_view what, std::string_view word) {
  return ErrorAt(at, absl::StrCat("expected ", std::string(what), ", found ",
                                  word.empty() ? c.Found() : QuotedExcerpt(word, 24)));
}

absl::StatusOr<int64_t> ReadInt(Cursor& c, std::string_view what) {
  Pos at = (c.SkipSpaces(), c.pos());
  std::string_view word = c.Word();
  int64_t value = 0;
  auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), value);
  if (word.empty() || end != word.data() + word.size()) {
    return ExpectedAt(c, at, what, word);
  }
  if (ec != std::errc()) {
    return ErrorAt(at, absl::StrCat(std::string(what), " ", QuotedExcerpt(word, 24),
                                    " does not fit in 64 bits"));
  }
  return value;
}

absl::StatusOr<int64_t> ReadNonNegative(Cursor& c, std::string_view what, int64_t max) {
  Pos at = (c.SkipSpaces(), c.pos());
  AB_ASSIGN_OR_RETURN(int64_t value, ReadInt(c, what));
  if (value < 0 || value > max) {
    return ErrorAt(at, absl::StrCat(std::string(what), " ", value, " is out of range [0, ", max,
                                    "]"));
  }
  return value;
}

absl::StatusOr<double> ReadDouble(Cursor& c) {
  Pos at = (c.SkipSpaces(), c.pos());
  std::string_view word = c.Word();
  if (word == "nan") return std::numeric_limits<double>::quiet_NaN();
  if (word == "inf") return std::numeric_limits<double>::infinity();
  if (word == "-inf") return -std::numeric_limits<double>::infinity();
  double value = 0;
  auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), value);
  if (word.empty() || end != word.data() + word.size()) {
    return ExpectedAt(c, at, "a number (or nan, inf, -inf)", word);
  }
  if (ec != std::errc()) {
    return ErrorAt(at, absl::StrCat("number ", QuotedExcerpt(word, 24),
                                    " is out of double's range (write inf or -inf)"));
  }
  return value;
}

// `"..."` with the printer's escapes (\" \\ \xNN).
absl::StatusOr<std::string> ReadQuoted(Cursor& c) {
  Pos at = (c.SkipSpaces(), c.pos());
  if (!c.Consume("\"")) return c.Error("'\"'");
  std::string out;
  std::string_view rest = c.Rest();
  size_t i = 0;
  while (true) {
    if (i >= rest.size()) return ErrorAt(at, "unterminated quoted name: add the closing '\"'");
    char ch = rest[i];
    if (ch == '"') break;
    if (ch != '\\') {
      out += ch;
      ++i;
      continue;
    }
    if (i + 1 < rest.size() && (rest[i + 1] == '"' || rest[i + 1] == '\\')) {
      out += rest[i + 1];
      i += 2;
      continue;
    }
    unsigned value = 0;
    if (i + 3 < rest.size() && rest[i + 1] == 'x' &&
        std::from_chars(rest.data() + i + 2, rest.data() + i + 4, value, 16).ptr ==
            rest.data() + i + 4) {
      out += static_cast<char>(value);
      i += 4;
      continue;
    }
    return ErrorAt(Pos{at.line, at.column + 1 + static_cast<int>(i)},
                   "expected an escape \\\", \\\\ or \\xNN (two hex digits) in a quoted name");
  }
  for (size_t k = 0; k <= i; ++k) c.Advance();
  return out;
}

// NAME: plain or quoted, then `#index` if present.
absl::StatusOr<RawName> ReadName(Cursor& c, std::string_view what) {
  RawName n;
  n.pos = c.pos();
  if (c.PeekRaw('"')) {
    AB_ASSIGN_OR_RETURN(n.name, ReadQuoted(c));
  } else {
    n.name = std::string(c.PlainName());
  }
  if (c.PeekRaw('#')) {
    c.Advance();
    Pos at = c.pos();
    std::string_view digits = c.PlainName();
    int64_t value = 0;
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (digits.empty() || end != digits.data() + digits.size() || ec != std::errc() ||
        value < 0) {
      return ErrorAt(at, absl::StrCat("expected an index after '#' in ", std::string(what),
                                      ", found ", QuotedExcerpt(digits, 24)));
    }
    n.suffix = value;
  } else if (n.name.empty()) {
    return c.Error(what);
  }
  return n;
}

absl::StatusOr<RawName> ReadFunctionRef(Cursor& c) {
  c.SkipSpaces();
  Pos at = c.pos();
  if (!c.Consume("@")) return c.Error("a function such as @main");
  AB_ASSIGN_OR_RETURN(RawName n, ReadName(c, "a function name after '@'"));
  n.pos = at;
  return n;
}

absl::StatusOr<RawVar> ReadVar(Cursor& c) {
  c.SkipSpaces();
  Pos at = c.pos();
  if (!c.Consume("%")) return c.Error("a variable such as %x");
  RawVar v;
  AB_ASSIGN_OR_RETURN(v.name, ReadName(c, "a variable name after '%'"));
  v.name.pos = at;
  if (c.PeekRaw('@')) {
    AB_ASSIGN_OR_RETURN(v.function, ReadFunctionRef(c));
  }
  return v;
}

// Number of elements, or nullopt if a dimension is negative or the count
// overflows.
std::optional<int64_t> CheckedNumElements(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0 || __builtin_mul_overflow(n, d, &n)) return std::nullopt;
  }
  return n;
}

absl::StatusOr<TensorType> ReadTensorType(Cursor& c) {
  Pos at = (c.SkipSpaces(), c.pos());
  std::string_view word = c.Word();
  std::optional<DType> dtype = DTypeFromName(word);
  if (!dtype) {
    return ExpectedAt(c, at,
                      "a type such as f64 or i64[3] (dtypes: f64, f32, i64, i32, bool, u64)",
                      word);
  }
  TensorType type{*dtype, {}};
  if (c.PeekRaw('[')) {
    c.Advance();
    do {
      AB_ASSIGN_OR_RETURN(int64_t dim,
                          ReadNonNegative(c, "a dimension", std::numeric_limits<int64_t>::max()));
      type.shape.push_back(dim);
    } while (c.Consume(","));
    AB_RETURN_IF_ERROR(c.Expect("]", "',' or ']' in a shape"));
    if (!CheckedNumElements(type.shape)) {
      return ErrorAt(at, absl::StrCat("type ", type.ToString(), " has too many elements"));
    }
  }
  return type;
}

absl::StatusOr<std::optional<TensorType>> ReadOptionalType(Cursor& c) {
  if (c.Consume("?")) return std::optional<TensorType>();
  AB_ASSIGN_OR_RETURN(TensorType t, ReadTensorType(c));
  return std::optional<TensorType>(std::move(t));
}

std::optional<StorageClass> ReadStorage(Cursor& c) {
  for (StorageClass s : {StorageClass::kNull, StorageClass::kTemporary, StorageClass::kRegister,
                         StorageClass::kFull, StorageClass::kTape}) {
    if (c.ConsumeWord(StorageClassName(s))) return s;
  }
  return std::nullopt;
}

// `: TYPE [STORAGE] [uniform]` after a variable.
absl::Status ReadTypeSuffix(Cursor& c, RawDecl& decl) {
  AB_RETURN_IF_ERROR(c.Expect(":", "':' and a type after the variable"));
  c.SkipSpaces();
  decl.type_pos = c.pos();
  AB_ASSIGN_OR_RETURN(decl.type, ReadOptionalType(c));
  decl.storage = ReadStorage(c);
  decl.uniform = c.ConsumeWord("uniform");
  return absl::OkStatus();
}

absl::StatusOr<RawDecl> ReadDecl(Cursor& c) {
  RawDecl decl;
  AB_ASSIGN_OR_RETURN(decl.var, ReadVar(c));
  AB_RETURN_IF_ERROR(ReadTypeSuffix(c, decl));
  return decl;
}

// `(ITEM, ...)` with `read` for each item.
template <typename T, typename Read>
absl::StatusOr<std::vector<T>> ReadList(Cursor& c, std::string_view open, std::string_view close,
                                        std::string_view what, Read read) {
  AB_RETURN_IF_ERROR(c.Expect(open, absl::StrCat("'", std::string(open), "'")));
  std::vector<T> out;
  if (c.Consume(close)) return out;
  do {
    AB_ASSIGN_OR_RETURN(T item, read(c));
    out.push_back(std::move(item));
  } while (c.Consume(","));
  AB_RETURN_IF_ERROR(
      c.Expect(close, absl::StrCat("',' or '", std::string(close), "' in ", std::string(what))));
  return out;
}

absl::StatusOr<std::vector<TensorType>> ReadTypeList(Cursor& c) {
  return ReadList<TensorType>(c, "(", ")", "a list of types", ReadTensorType);
}

// One value of a literal of `dtype`.
absl::Status ReadLiteralValue(Cursor& c, DType dtype, Literal& literal) {
  if (IsFloat(dtype)) {
    AB_ASSIGN_OR_RETURN(double d, ReadDouble(c));
    literal.floats.push_back(d);
    return absl::OkStatus();
  }
  if (dtype == DType::kBool) {
    if (c.ConsumeWord("true")) {
      literal.ints.push_back(1);
      return absl::OkStatus();
    }
    if (c.ConsumeWord("false")) {
      literal.ints.push_back(0);
      return absl::OkStatus();
    }
  }
  if (dtype == DType::kU64) {
    Pos at = (c.SkipSpaces(), c.pos());
    std::string_view word = c.Word();
    uint64_t value = 0;
    auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), value);
    if (word.empty() || end != word.data() + word.size() || ec != std::errc()) {
      return ExpectedAt(c, at, "an integer in [0, 2^64) for a u64 literal", word);
    }
    literal.ints.push_back(static_cast<int64_t>(value));
    return absl::OkStatus();
  }
  AB_ASSIGN_OR_RETURN(int64_t value, ReadInt(c, "an integer"));
  literal.ints.push_back(value);
  return absl::OkStatus();
}

absl::StatusOr<Literal> ReadLiteral(Cursor& c) {
  Pos at = (c.SkipSpaces(), c.pos());
  Literal literal;
  AB_ASSIGN_OR_RETURN(literal.type, ReadTensorType(c));
  const DType dtype = literal.type.dtype;
  if (c.Consume("[")) {
    if (!c.Consume("]")) {
      do {
        AB_RETURN_IF_ERROR(ReadLiteralValue(c, dtype, literal));
      } while (c.Consume(","));
      AB_RETURN_IF_ERROR(c.Expect("]", "',' or ']' in a literal's values"));
    }
  } else {
    AB_RETURN_IF_ERROR(ReadLiteralValue(c, dtype, literal));
  }
  const size_t count = IsFloat(dtype) ? literal.floats.size() : literal.ints.size();
  const int64_t needed = *CheckedNumElements(literal.type.shape);
  if (count != static_cast<uint64_t>(needed)) {
    return ErrorAt(at, absl::StrCat("a literal of type ", literal.type.ToString(), " needs ",
                                    needed, " values, got ", count));
  }
  return literal;
}

// `[[1, 2], [3, 4]]`, `[]` (0x0) or `matrix<0xC>`.
absl::StatusOr<std::shared_ptr<const DenseMatrix>> ReadMatrix(Cursor& c) {
  auto m = std::make_shared<DenseMatrix>();
  if (c.Consume("matrix<0x")) {
    AB_ASSIGN_OR_RETURN(m->cols, ReadNonNegative(c, "a column count",
                                                 std::numeric_limits<int64_t>::max()));
    AB_RETURN_IF_ERROR(c.Expect(">", "'>' closing matrix<0xC>"));
    return std::shared_ptr<const DenseMatrix>(std::move(m));
  }
  AB_RETURN_IF_ERROR(c.Expect("[", "a matrix such as [[1, 2], [3, 4]]"));
  if (c.Consume("]")) return std::shared_ptr<const DenseMatrix>(std::move(m));
  do {
    Pos row_at = (c.SkipSpaces(), c.pos());
    AB_RETURN_IF_ERROR(c.Expect("[", "'[' starting a matrix row"));
    int64_t cols = 0;
    if (!c.Consume("]")) {
      do {
        AB_ASSIGN_OR_RETURN(double d, ReadDouble(c));
        m->data.push_back(d);
        ++cols;
      } while (c.Consume(","));
      AB_RETURN_IF_ERROR(c.Expect("]", "',' or ']' in a matrix row"));
    }
    if (m->rows > 0 && cols != m->cols) {
      return ErrorAt(row_at, absl::StrCat("matrix row ", m->rows, " has ", cols,
                                          " entries but row 0 has ", m->cols,
                                          "; every row needs the same count"));
    }
    m->cols = cols;
    ++m->rows;
  } while (c.Consume(","));
  AB_RETURN_IF_ERROR(c.Expect("]", "',' or ']' after a matrix row"));
  return std::shared_ptr<const DenseMatrix>(std::move(m));
}

absl::StatusOr<Attributes> ReadAttributes(Cursor& c) {
  Attributes attrs;
  std::set<std::string> seen;
  do {
    Pos at = (c.SkipSpaces(), c.pos());
    std::string key(c.Word());
    if (!seen.insert(key).second) {
      return ErrorAt(at, absl::StrCat("attribute ", key, " is given twice"));
    }
    AB_RETURN_IF_ERROR(c.Expect("=", absl::StrCat("'=' after attribute ", key)));
    if (key == "literal") {
      AB_ASSIGN_OR_RETURN(attrs.literal, ReadLiteral(c));
    } else if (key == "dtype") {
      Pos dtype_at = (c.SkipSpaces(), c.pos());
      std::string_view word = c.Word();
      attrs.dtype = DTypeFromName(word);
      if (!attrs.dtype) {
        return ExpectedAt(c, dtype_at, "a dtype (f64, f32, i64, i32, bool, u64)", word);
      }
    } else if (key == "ints") {
      AB_ASSIGN_OR_RETURN(attrs.ints, ReadList<int64_t>(c, "[", "]", "ints", [](Cursor& c) {
                            return ReadInt(c, "an integer");
                          }));
    } else if (key == "matrix") {
      AB_ASSIGN_OR_RETURN(attrs.matrix, ReadMatrix(c));
    } else if (key == "kernel") {
      AB_ASSIGN_OR_RETURN(attrs.kernel, ReadQuoted(c));
    } else {
      return ErrorAt(at, absl::StrCat("expected an attribute (literal, dtype, ints, matrix or "
                                      "kernel), found ",
                                      QuotedExcerpt(key.empty() ? c.Found() : key, 24)));
    }
  } while (c.Consume(","));
  AB_RETURN_IF_ERROR(c.Expect("}", "',' or '}' after an attribute"));
  return attrs;
}

// A trailing `// file:line` comment, if the rest of the line is one; any
// other comment is ignored.
absl::StatusOr<SourceLoc> ReadLocComment(Cursor& c) {
  if (!c.AtEnd()) return c.Error("the end of the line");
  if (!c.Consume("//")) return SourceLoc{};
  if (c.PeekRaw(' ')) c.Advance();
  std::string_view rest = c.Rest();
  while (!rest.empty() && rest.back() == '\r') rest.remove_suffix(1);
  SourceLoc loc;
  std::string_view line_text;
  if (rest.starts_with("\"")) {
    absl::StatusOr<std::string> file = ReadQuoted(c);
    if (!file.ok()) return SourceLoc{};
    loc.file = *std::move(file);
    std::string_view after = c.Rest();
    while (!after.empty() && after.back() == '\r') after.remove_suffix(1);
    if (!after.starts_with(":")) return SourceLoc{};
    line_text = after.substr(1);
  } else {
    size_t colon = rest.rfind(':');
    if (colon == std::string_view::npos) return SourceLoc{};
    loc.file = std::string(rest.substr(0, colon));
    line_text = rest.substr(colon + 1);
  }
  c.SkipToEnd();
  int value = 0;
  auto [end, ec] = std::from_chars(line_text.data(), line_text.data() + line_text.size(), value);
  if (line_text.empty() || ec != std::errc() || end != line_text.data() + line_text.size() ||
      value <= 0) {
    return SourceLoc{};
  }
  loc.line = value;
  return loc;
}

// The text as raw functions (names unresolved).
struct RawProgram {
  Stage stage = Stage::kUntyped;
  RawName entry;
  std::map<std::string, KernelSignature> kernels;
  std::vector<RawFunction> functions;
};

class LineReader {
 public:
  absl::StatusOr<RawProgram> Read(std::string_view text) {
    bool header = false;
    int line_number = 0;
    size_t start = 0;
    while (start <= text.size()) {
      size_t end = text.find('\n', start);
      if (end == std::string_view::npos) end = text.size();
      ++line_number;
      Cursor c(text.substr(start, end - start), line_number);
      start = end + 1;
      if (c.AtEnd()) continue;  // blank or comment
      if (!header) {
        AB_RETURN_IF_ERROR(ReadHeader(c));
        header = true;
        continue;
      }
      AB_RETURN_IF_ERROR(ReadLine(c));
    }
    Pos end_pos{line_number, 1};
    if (!header) {
      return ErrorAt(end_pos, "expected a header such as 'program stage=untyped entry=@main', "
                              "found the end of the text");
    }
    if (function_ != nullptr && !function_->stub) {
      return ErrorAt(end_pos, absl::StrCat("expected '}' closing function ",
                                           function_->name.Shown('@'),
                                           ", found the end of the text (is it truncated?)"));
    }
    return std::move(program_);
  }

 private:
  absl::Status ReadHeader(Cursor& c) {
    if (!c.ConsumeWord("program")) {
      return c.Error("a header such as 'program stage=untyped entry=@main'");
    }
    AB_RETURN_IF_ERROR(c.Expect("stage=", "'stage='"));
    Pos at = (c.SkipSpaces(), c.pos());
    std::string_view stage = c.Word();
    std::optional<Stage> s = StageFromName(stage);
    if (!s) {
      return ExpectedAt(c, at, "a stage (untyped, typed, allocated or lowered)", stage);
    }
    program_.stage = *s;
    AB_RETURN_IF_ERROR(c.Expect("entry=", "'entry='"));
    AB_ASSIGN_OR_RETURN(program_.entry, ReadFunctionRef(c));
    if (!c.AtEnd()) return c.Error("the end of the header line");
    return absl::OkStatus();
  }

  absl::Status ReadLine(Cursor& c) {
    // A gradient stub's header may be followed by its signature and vars
    // lines; anything else starts the next top-level line.
    if (function_ != nullptr && function_->stub) {
      if (c.ConsumeWord("signature")) return ReadSignature(c, *function_);
      if (c.ConsumeWord("vars")) return ReadVars(c, *function_);
      const std::string stub = function_->name.Shown('@');
      function_ = nullptr;
      if (c.Peek() == '^' || c.Peek() == '}' || c.Peek() == '%') {
        return c.Error(absl::StrCat("'signature', 'vars', 'func' or 'kernel' (", stub,
                                    " is a gradient stub, which has no body)"));
      }
    }
    if (function_ == nullptr) {
      if (c.ConsumeWord("kernel")) return ReadKernel(c);
      if (c.ConsumeWord("func")) return ReadFunctionHeader(c);
      return c.Error("'func' or 'kernel'");
    }
    RawFunction& f = *function_;
    if (c.Peek() == '}') {
      if (f.blocks.empty()) return c.Error("a block ^0 before '}'");
      if (!f.blocks.back().terminator) return c.Error("a terminator before '}'");
      c.Consume("}");
      if (!c.AtEnd()) return c.Error("the end of the line after '}'");
      function_ = nullptr;
      return absl::OkStatus();
    }
    if (c.Peek() == '^') return ReadBlockHeader(c, f);
    if (f.blocks.empty()) {
      if (c.ConsumeWord("signature")) return ReadSignature(c, f);
      if (c.ConsumeWord("vars")) return ReadVars(c, f);
      return c.Error("'signature', 'vars' or a block such as ^0");
    }
    RawBlock& block = f.blocks.back();
    if (block.terminator) {
      return c.Error(absl::StrCat("a block such as ^", f.blocks.size(),
                                  " or '}': block ^", f.blocks.size() - 1,
                                  " already has its terminator"));
    }
    return ReadOpOrTerminator(c, block);
  }

  absl::Status ReadSignature(Cursor& c, RawFunction& f) {
    if (f.signature || !f.runs.empty()) {
      return c.Error(f.stub ? "'vars' or the next 'func'" : "'vars' or a block such as ^0");
    }
    Signature sig;
    AB_ASSIGN_OR_RETURN(sig.params, ReadTypeList(c));
    AB_RETURN_IF_ERROR(c.Expect("->", "'->'"));
    AB_ASSIGN_OR_RETURN(sig.results, ReadTypeList(c));
    f.signature = std::move(sig);
    if (!c.AtEnd()) return c.Error("the end of the line");
    return absl::OkStatus();
  }

  absl::Status ReadKernel(Cursor& c) {
    Pos at = (c.SkipSpaces(), c.pos());
    AB_ASSIGN_OR_RETURN(std::string name, ReadQuoted(c));
    KernelSignature sig;
    AB_ASSIGN_OR_RETURN(sig.inputs, ReadTypeList(c));
    AB_RETURN_IF_ERROR(c.Expect("->", "'->'"));
    AB_ASSIGN_OR_RETURN(sig.outputs, ReadTypeList(c));
    if (c.ConsumeWord("batch_dependent")) sig.bit_stable = false;
    if (c.ConsumeWord("pure")) sig.pure = true;
    if (c.ConsumeWord("vjp")) {
      AB_ASSIGN_OR_RETURN(sig.vjp, ReadQuoted(c));
    }
    if (!c.AtEnd()) {
      return c.Error("'batch_dependent', 'pure', 'vjp \"kernel\"' or the end of the line");
    }
    if (!program_.kernels.emplace(name, std::move(sig)).second) {
      return ErrorAt(at, absl::StrCat("kernel ", QuotedExcerpt(name), " is declared twice"));
    }
    return absl::OkStatus();
  }

  absl::Status ReadFunctionHeader(Cursor& c) {
    RawFunction f;
    AB_ASSIGN_OR_RETURN(f.name, ReadFunctionRef(c));
    AB_ASSIGN_OR_RETURN(f.params, ReadList<RawDecl>(c, "(", ")", "the params", ReadDecl));
    AB_RETURN_IF_ERROR(c.Expect("->", "'->'"));
    AB_ASSIGN_OR_RETURN(f.results, ReadList<RawDecl>(c, "(", ")", "the results", ReadDecl));
    if (c.Consume("=")) {
      if (!c.ConsumeWord("gradient")) return c.Error("'gradient' after '='");
      RawGradient grad;
      AB_ASSIGN_OR_RETURN(grad.function, ReadFunctionRef(c));
      if (!c.ConsumeWord("wrt")) return c.Error("'wrt' and the parameter indices");
      const char next = c.Peek();
      if ((next >= '0' && next <= '9') || next == '-') {
        do {
          grad.wrt_pos.push_back((c.SkipSpaces(), c.pos()));
          AB_ASSIGN_OR_RETURN(int64_t index, ReadInt(c, "a parameter index"));
          grad.wrt.push_back(index);
        } while (c.Consume(","));
      }
      f.gradient = std::move(grad);
      f.stub = !c.Consume("{");
    } else {
      AB_RETURN_IF_ERROR(c.Expect("{", "'{' or '= gradient'"));
    }
    AB_ASSIGN_OR_RETURN(f.loc, ReadLocComment(c));
    program_.functions.push_back(std::move(f));
    function_ = &program_.functions.back();
    return absl::OkStatus();
  }

  absl::Status ReadVars(Cursor& c, RawFunction& f) {
    RawVarsRun run;
    AB_RETURN_IF_ERROR(c.Expect("#", "'#' and the index of the first variable listed"));
    run.pos = c.pos();
    AB_ASSIGN_OR_RETURN(run.first, ReadNonNegative(c, "a variable index",
                                                   std::numeric_limits<int32_t>::max()));
    AB_RETURN_IF_ERROR(c.Expect(":", "':' after the index"));
    do {
      RawDecl entry;
      AB_ASSIGN_OR_RETURN(entry.var, ReadVar(c));
      if (entry.var.function) {
        return ErrorAt(entry.var.function->pos,
                       "a vars line lists the function's own variables: drop the '@...'");
      }
      bool typed = c.Peek() == ':';
      if (typed) AB_RETURN_IF_ERROR(ReadTypeSuffix(c, entry));
      run.entries.push_back(std::move(entry));
      run.typed.push_back(typed);
    } while (c.Consume(","));
    if (!c.AtEnd()) return c.Error("',' or the end of the line");
    f.runs.push_back(std::move(run));
    return absl::OkStatus();
  }

  absl::Status ReadBlockHeader(Cursor& c, RawFunction& f) {
    if (!f.blocks.empty() && !f.blocks.back().terminator) {
      return c.Error(absl::StrCat("an op or a terminator ending block ^", f.blocks.size() - 1));
    }
    c.Consume("^");
    Pos at = c.pos();
    AB_ASSIGN_OR_RETURN(int64_t index, ReadInt(c, "a block number"));
    if (index != static_cast<int64_t>(f.blocks.size())) {
      return ErrorAt(at, absl::StrCat("expected block ^", f.blocks.size(), " (blocks are numbered "
                                      "in order from ^0), found ^", index));
    }
    RawBlock block;
    if (!c.Consume(":")) {
      c.SkipSpaces();
      if (c.PeekRaw('"')) {
        AB_ASSIGN_OR_RETURN(block.label, ReadQuoted(c));
      } else {
        block.label = std::string(c.PlainName());
        if (block.label.empty()) return c.Error("a block label or ':'");
      }
      AB_RETURN_IF_ERROR(c.Expect(":", "':' after the block label"));
    }
    if (!c.AtEnd()) return c.Error("the end of the line after the block header");
    f.blocks.push_back(std::move(block));
    return absl::OkStatus();
  }

  absl::StatusOr<RawBlockRef> ReadBlockRef(Cursor& c) {
    c.SkipSpaces();
    RawBlockRef ref;
    ref.pos = c.pos();
    if (!c.Consume("^")) return c.Error("a block such as ^1");
    AB_ASSIGN_OR_RETURN(ref.index, ReadInt(c, "a block number"));
    return ref;
  }

  absl::Status ReadOpOrTerminator(Cursor& c, RawBlock& block) {
    RawTerminator t;
    if (c.ConsumeWord("branch")) {
      AB_ASSIGN_OR_RETURN(t.cond, ReadVar(c));
      for (int i = 0; i < 2; ++i) {
        AB_RETURN_IF_ERROR(c.Expect(",", "','"));
        AB_ASSIGN_OR_RETURN(RawBlockRef ref, ReadBlockRef(c));
        t.blocks.push_back(ref);
      }
      t.terminator = Branch{};
    } else if (c.ConsumeWord("goto")) {
      AB_ASSIGN_OR_RETURN(RawBlockRef ref, ReadBlockRef(c));
      t.blocks.push_back(ref);
      t.terminator = Goto{};
    } else if (c.ConsumeWord("return")) {
      t.terminator = Return{};
    } else if (c.ConsumeWord("push_goto")) {
      AB_ASSIGN_OR_RETURN(t.callee, ReadFunctionRef(c));
      AB_RETURN_IF_ERROR(c.Expect(",", "','"));
      AB_ASSIGN_OR_RETURN(RawBlockRef ref, ReadBlockRef(c));
      t.blocks.push_back(ref);
      t.terminator = PushGoto{};
    } else if (c.ConsumeWord("indirect_goto")) {
      t.terminator = IndirectGoto{};
    } else if (c.ConsumeWord("halt")) {
      t.terminator = Halt{};
    } else {
      AB_ASSIGN_OR_RETURN(RawOp op, ReadOp(c));
      block.ops.push_back(std::move(op));
      return absl::OkStatus();
    }
    AB_ASSIGN_OR_RETURN(t.loc, ReadLocComment(c));
    block.terminator = std::move(t);
    return absl::OkStatus();
  }

  absl::StatusOr<RawOp> ReadOp(Cursor& c) {
    RawOp op;
    std::vector<RawDecl> defs;
    if (c.Peek() == '%') {
      do {
        AB_ASSIGN_OR_RETURN(RawDecl d, ReadDecl(c));
        defs.push_back(std::move(d));
      } while (c.Consume(","));
      AB_RETURN_IF_ERROR(c.Expect("=", "',' or '=' after the op's outputs"));
    }
    Pos at = (c.SkipSpaces(), c.pos());
    std::string_view word = c.Word();
    if (word == "call") {
      RawCall call;
      call.results = std::move(defs);
      AB_ASSIGN_OR_RETURN(call.callee, ReadFunctionRef(c));
      AB_ASSIGN_OR_RETURN(call.args, ReadList<RawVar>(c, "(", ")", "the arguments", ReadVar));
      op.op = std::move(call);
    } else if (word == "pop" && defs.empty()) {
      RawPop pop;
      if (!c.AtEnd()) {
        do {
          AB_ASSIGN_OR_RETURN(RawVar v, ReadVar(c));
          pop.vars.push_back(std::move(v));
        } while (c.Consume(","));
      }
      op.op = std::move(pop);
    } else if (word == Info(ControlOp::kTapePushOp).spelling) {
      if (!defs.empty()) {
        return ErrorAt(at, "tape_push has no outputs: write 'tape_push %tape, %value'");
      }
      RawTapePush push;
      AB_ASSIGN_OR_RETURN(push.tape, ReadVar(c));
      AB_RETURN_IF_ERROR(c.Expect(",", "',' between the tape and the pushed value"));
      AB_ASSIGN_OR_RETURN(push.value, ReadVar(c));
      op.op = std::move(push);
    } else if (word == Info(ControlOp::kTapePopOp).spelling) {
      if (defs.size() != 1) {
        return ErrorAt(at, absl::StrCat("tape_pop has exactly one result, got ", defs.size(),
                                        ": write '%result: TYPE = tape_pop %tape'"));
      }
      RawTapePop pop;
      pop.result = std::move(defs[0]);
      AB_ASSIGN_OR_RETURN(pop.tape, ReadVar(c));
      op.op = std::move(pop);
    } else {
      AB_ASSIGN_OR_RETURN(RawPrim prim, ReadPrim(c, at, word));
      prim.outputs = std::move(defs);
      AB_RETURN_IF_ERROR(CheckArity(prim, at, word));
      op.op = std::move(prim);
    }
    AB_ASSIGN_OR_RETURN(op.loc, ReadLocComment(c));
    return op;
  }

  absl::StatusOr<RawPrim> ReadPrim(Cursor& c, Pos at, std::string_view word) {
    RawPrim prim;
    if (word == Info(Primitive::kUserKernel).name) {
      prim.prim = Primitive::kUserKernel;
    } else if (std::optional<Primitive> p = PrimitiveFromName(word)) {
      prim.prim = *p;
    } else {
      return ExpectedAt(c, at,
                        "an op (a primitive of ir/primitives.def, 'kernel', 'call', 'pop', "
                        "'tape_push' or 'tape_pop') or "
                        "a terminator (branch, goto, return, push_goto, indirect_goto, halt)",
                        word);
    }
    if (c.Peek() == '%') {
      do {
        AB_ASSIGN_OR_RETURN(RawVar v, ReadVar(c));
        prim.inputs.push_back(std::move(v));
      } while (c.Consume(","));
    }
    if (c.Consume("{")) {
      AB_ASSIGN_OR_RETURN(prim.attrs, ReadAttributes(c));
    }
    if (c.ConsumeWord("in_place")) {
      AB_ASSIGN_OR_RETURN(prim.in_place,
                          ReadList<RawVar>(c, "(", ")", "in_place", ReadVar));
    }
    return prim;
  }

  // As the JSON reader (ir/json.h): a built-in's input count and one output.
  static absl::Status CheckArity(const RawPrim& prim, Pos at, std::string_view word) {
    if (prim.prim == Primitive::kUserKernel) return absl::OkStatus();
    const int arity = Info(prim.prim).num_inputs;
    const std::string name(word);
    if (arity >= 0 && prim.inputs.size() != static_cast<size_t>(arity)) {
      return ErrorAt(at, absl::StrCat("primitive ", name, " takes ", arity, " inputs, got ",
                                      prim.inputs.size()));
    }
    if (arity < 0 && prim.inputs.empty()) {
      return ErrorAt(at, absl::StrCat("primitive ", name, " takes one or more inputs, got 0"));
    }
    if (prim.outputs.size() != 1) {
      return ErrorAt(at, absl::StrCat("primitive ", name, " has exactly one output, got ",
                                      prim.outputs.size()));
    }
    return absl::OkStatus();
  }

  RawProgram program_;
  RawFunction* function_ = nullptr;  // the function being read, if any
};

// Turns names into ids (the rules of ir/parser.h) and builds the Program.
class Resolver {
 public:
  explicit Resolver(RawProgram raw) : raw_(std::move(raw)) {}

  absl::StatusOr<Program> Build() {
    program_.stage = raw_.stage;
    program_.module.kernels = std::move(raw_.kernels);
    AB_RETURN_IF_ERROR(IndexFunctions());
    AB_ASSIGN_OR_RETURN(program_.entry, FindFunction(raw_.entry));
    table_ = false;
    for (const RawFunction& f : raw_.functions) table_ = table_ || !f.runs.empty();
    scopes_.resize(raw_.functions.size());
    for (size_t f = 0; f < raw_.functions.size(); ++f) {
      AB_RETURN_IF_ERROR(DeclareOwn(static_cast<int32_t>(f)));
    }
    for (size_t f = 0; f < raw_.functions.size(); ++f) {
      AB_RETURN_IF_ERROR(ResolveCallees(static_cast<int32_t>(f)));
    }
    for (size_t f = 0; f < raw_.functions.size(); ++f) {
      AB_RETURN_IF_ERROR(BuildFunction(static_cast<int32_t>(f)));
    }
    AB_RETURN_IF_ERROR(NumberVariables());
    for (Function& f : program_.module.functions) {
      RenameVariables(f, [this](VarId v) { return VarId(vars_[v.value].id); });
    }
    return std::move(program_);
  }

 private:
  struct VarInfo {
    int32_t owner = 0;
    RawName name;
    bool type_known = false;  // a declaration gave the type (maybe `?`)
    std::optional<TensorType> type;
    Pos type_pos;
    std::optional<StorageClass> storage;
    bool uniform = false;  // some declaration says `uniform`
    int32_t id = -1;
  };
  struct Scope {
    std::map<NameKey, int32_t> own;  // name -> index into vars_
    std::set<NameKey> header;        // own params and results
    std::vector<int32_t> callees;    // other functions it push_gotos to
    std::vector<int32_t> mentions;   // vars_ its blocks name, in order
  };

  absl::Status IndexFunctions() {
    for (size_t i = 0; i < raw_.functions.size(); ++i) {
      const RawName& name = raw_.functions[i].name;
      if (name.suffix >= 0 && name.suffix != static_cast<int64_t>(i)) {
        return ErrorAt(name.pos, absl::StrCat(name.Shown('@'), " is function ", i,
                                              ": the number after '#' must be its index"));
      }
      if (!functions_.emplace(KeyOf(name), static_cast<int32_t>(i)).second) {
        return ErrorAt(name.pos, absl::StrCat("function ", name.Shown('@'),
                                              " is defined twice (functions need unique names)"));
      }
    }
    return absl::OkStatus();
  }

  absl::StatusOr<FunctionId> FindFunction(const RawName& name) const {
    auto it = functions_.find(KeyOf(name));
    if (it == functions_.end()) {
      return ErrorAt(name.pos, absl::StrCat("unknown function ", name.Shown('@'),
                                            ": no 'func' defines it"));
    }
    return FunctionId(it->second);
  }

  // Adds (or finds) `owner`'s variable `name`.
  int32_t OwnVar(int32_t owner, const RawName& name) {
    auto [it, added] = scopes_[owner].own.emplace(KeyOf(name), static_cast<int32_t>(vars_.size()));
    if (added) {
      VarInfo info;
      info.owner = owner;
      info.name = name;
      vars_.push_back(std::move(info));
    }
    return it->second;
  }

  absl::Status Declare(int32_t var, const RawDecl& decl, bool typed) {
    VarInfo& v = vars_[var];
    if (typed) {
      if (v.type_known && v.type != decl.type) {
        return ErrorAt(decl.type_pos,
                       absl::StrCat(v.name.Shown('%'), " has type ", PrintType(v.type), " at ",
                                    v.type_pos.line, ":", v.type_pos.column, " but ",
                                    PrintType(decl.type), " here; a variable has one type"));
      }
      v.type_known = true;
      v.type = decl.type;
      v.type_pos = decl.type_pos;
    }
    if (decl.storage) {
      if (v.storage && *v.storage != *decl.storage) {
        return ErrorAt(decl.type_pos,
                       absl::StrCat(v.name.Shown('%'), " is ",
                                    std::string(StorageClassName(*v.storage)), " elsewhere but ",
                                    std::string(StorageClassName(*decl.storage)),
                                    " here; a variable has one storage class"));
      }
      v.storage = decl.storage;
    }
    v.uniform = v.uniform || decl.uniform;
    return absl::OkStatus();
  }

  // The variables a function's header and `vars` lines name as its own.
  absl::Status DeclareOwn(int32_t f) {
    const RawFunction& raw = raw_.functions[f];
    Scope& scope = scopes_[f];
    for (const RawVarsRun& run : raw.runs) {
      for (const RawDecl& entry : run.entries) {
        if (scope.own.contains(KeyOf(entry.var.name))) {
          return ErrorAt(entry.var.name.pos, absl::StrCat(entry.var.name.Shown('%'),
                                                          " is listed twice on the vars lines"));
        }
        OwnVar(f, entry.var.name);
      }
    }
    for (const auto* list : {&raw.params, &raw.results}) {
      for (const RawDecl& d : *list) {
        if (d.var.function) continue;
        if (table_ && !scope.own.contains(KeyOf(d.var.name))) {
          return NotListed(f, d.var.name);
        }
        OwnVar(f, d.var.name);
        scope.header.insert(KeyOf(d.var.name));
      }
    }
    return absl::OkStatus();
  }

  absl::Status ResolveCallees(int32_t f) {
    std::set<int32_t> callees;
    for (const RawBlock& block : raw_.functions[f].blocks) {
      if (block.terminator && block.terminator->callee) {
        absl::StatusOr<FunctionId> callee = FindFunction(*block.terminator->callee);
        if (callee.ok() && callee->value != f) callees.insert(callee->value);
      }
    }
    scopes_[f].callees.assign(callees.begin(), callees.end());
    return absl::OkStatus();
  }

  absl::Status NotListed(int32_t f, const RawName& name) const {
    return ErrorAt(name.pos,
                   absl::StrCat(name.Shown('%'), " is not on the vars lines of ",
                                raw_.functions[f].name.Shown('@'),
                                " (nor a param or result of a function it push_gotos to): "
                                "list it there, or name its function as in %x@f"));
  }

  // The variable `v` stands for in function `f`'s text.
  absl::StatusOr<int32_t> Resolve(int32_t f, const RawVar& v) {
    const NameKey key = KeyOf(v.name);
    if (v.function) {
      AB_ASSIGN_OR_RETURN(FunctionId owner, FindFunction(*v.function));
      if (table_ && !scopes_[owner.value].own.contains(key)) {
        return NotListed(owner.value, v.name);
      }
      return OwnVar(owner.value, v.name);
    }
    Scope& scope = scopes_[f];
    auto own = scope.own.find(key);
    if (own != scope.own.end() && (table_ || scope.header.contains(key))) return own->second;
    std::optional<int32_t> callee_var;
    int holders = 0;
    for (int32_t callee : scope.callees) {
      if (scopes_[callee].header.contains(key)) {
        callee_var = scopes_[callee].own.at(key);
        ++holders;
      }
    }
    if (holders == 1) return *callee_var;
    if (table_) return NotListed(f, v.name);
    return OwnVar(f, v.name);
  }

  absl::StatusOr<VarId> Mention(int32_t f, const RawVar& v) {
    AB_ASSIGN_OR_RETURN(int32_t var, Resolve(f, v));
    scopes_[f].mentions.push_back(var);
    return VarId(var);  // an index into vars_ until NumberVariables
  }

  absl::StatusOr<std::vector<VarId>> Mentions(int32_t f, const std::vector<RawVar>& vars) {
    std::vector<VarId> out;
    for (const RawVar& v : vars) {
      AB_ASSIGN_OR_RETURN(VarId id, Mention(f, v));
      out.push_back(id);
    }
    return out;
  }

  absl::StatusOr<std::vector<VarId>> Decls(int32_t f, const std::vector<RawDecl>& decls,
                                           bool mention) {
    std::vector<VarId> out;
    for (const RawDecl& d : decls) {
      AB_ASSIGN_OR_RETURN(int32_t var, Resolve(f, d.var));
      AB_RETURN_IF_ERROR(Declare(var, d, /*typed=*/true));
      if (mention) scopes_[f].mentions.push_back(var);
      out.push_back(VarId(var));
    }
    return out;
  }

  absl::StatusOr<BlockId> BlockRef(int32_t f, const RawBlockRef& ref) const {
    const size_t num_blocks = raw_.functions[f].blocks.size();
    if (ref.index < 0 || static_cast<uint64_t>(ref.index) >= num_blocks) {
      return ErrorAt(ref.pos, absl::StrCat("^", ref.index, " is not a block of ",
                                           raw_.functions[f].name.Shown('@'), " (it has ",
                                           num_blocks, " blocks)"));
    }
    return BlockId(static_cast<int32_t>(ref.index));
  }

  absl::StatusOr<Op> BuildOp(int32_t f, const RawOp& raw) {
    return std::visit(
        Overloaded{
            [&](const RawPrim& p) -> absl::StatusOr<Op> {
              PrimOp op;
              op.prim = p.prim;
              AB_ASSIGN_OR_RETURN(op.outputs, Decls(f, p.outputs, /*mention=*/true));
              AB_ASSIGN_OR_RETURN(op.inputs, Mentions(f, p.inputs));
              op.attrs = p.attrs;
              AB_ASSIGN_OR_RETURN(op.in_place, Mentions(f, p.in_place));
              op.loc = raw.loc;
              return op;
            },
            [&](const RawCall& c) -> absl::StatusOr<Op> {
              CallOp op;
              AB_ASSIGN_OR_RETURN(op.results, Decls(f, c.results, /*mention=*/true));
              AB_ASSIGN_OR_RETURN(op.callee, FindFunction(c.callee));
              AB_ASSIGN_OR_RETURN(op.args, Mentions(f, c.args));
              op.loc = raw.loc;
              return op;
            },
            [&](const RawPop& p) -> absl::StatusOr<Op> {
              PopOp op;
              AB_ASSIGN_OR_RETURN(op.vars, Mentions(f, p.vars));
              op.loc = raw.loc;
              return op;
            },
            [&](const RawTapePush& p) -> absl::StatusOr<Op> {
              TapePushOp op;
              AB_ASSIGN_OR_RETURN(op.tape, Mention(f, p.tape));
              AB_ASSIGN_OR_RETURN(op.value, Mention(f, p.value));
              op.loc = raw.loc;
              return op;
            },
            [&](const RawTapePop& p) -> absl::StatusOr<Op> {
              TapePopOp op;
              AB_ASSIGN_OR_RETURN(std::vector<VarId> result, Decls(f, {p.result}, /*mention=*/true));
              op.result = result[0];
              AB_ASSIGN_OR_RETURN(op.tape, Mention(f, p.tape));
              op.loc = raw.loc;
              return op;
            },
        },
        raw.op);
  }

  absl::StatusOr<Terminator> BuildTerminator(int32_t f, const RawTerminator& raw) {
    std::vector<BlockId> blocks;
    for (const RawBlockRef& ref : raw.blocks) {
      AB_ASSIGN_OR_RETURN(BlockId b, BlockRef(f, ref));
      blocks.push_back(b);
    }
    Terminator t = raw.terminator;
    if (auto* branch = std::get_if<Branch>(&t)) {
      AB_ASSIGN_OR_RETURN(branch->cond, Mention(f, *raw.cond));
      branch->then_block = blocks[0];
      branch->else_block = blocks[1];
    } else if (auto* go = std::get_if<Goto>(&t)) {
      go->target = blocks[0];
    } else if (auto* push = std::get_if<PushGoto>(&t)) {
      AB_ASSIGN_OR_RETURN(push->callee, FindFunction(*raw.callee));
      push->return_to = blocks[0];
    }
    return t;
  }

  absl::Status BuildFunction(int32_t f) {
    const RawFunction& raw = raw_.functions[f];
    Function fn;
    fn.name = raw.name.name;
    fn.signature = raw.signature;
    fn.loc = raw.loc;
    if (raw.gradient) {
      AB_ASSIGN_OR_RETURN(FunctionId primal, FindFunction(raw.gradient->function));
      const size_t num_params = raw_.functions[primal.value].params.size();
      GradientOf grad{primal, {}};
      for (size_t k = 0; k < raw.gradient->wrt.size(); ++k) {
        const int64_t index = raw.gradient->wrt[k];
        if (index < 0 || static_cast<uint64_t>(index) >= num_params) {
          return ErrorAt(raw.gradient->wrt_pos[k],
                         absl::StrCat("wrt index ", index, " is not a parameter of ",
                                      raw.gradient->function.Shown('@'), " (it has ",
                                      num_params, " params)"));
        }
        grad.wrt.push_back(static_cast<int32_t>(index));
      }
      fn.gradient_of = std::move(grad);
    }
    for (const RawVarsRun& run : raw.runs) {
      for (size_t i = 0; i < run.entries.size(); ++i) {
        AB_RETURN_IF_ERROR(
            Declare(scopes_[f].own.at(KeyOf(run.entries[i].var.name)), run.entries[i],
                    run.typed[i]));
      }
    }
    AB_ASSIGN_OR_RETURN(fn.params, Decls(f, raw.params, /*mention=*/false));
    AB_ASSIGN_OR_RETURN(fn.results, Decls(f, raw.results, /*mention=*/false));
    for (const RawBlock& rb : raw.blocks) {
      Block block;
      block.label = rb.label;
      for (const RawOp& op : rb.ops) {
        AB_ASSIGN_OR_RETURN(Op built, BuildOp(f, op));
        block.ops.push_back(std::move(built));
      }
      AB_ASSIGN_OR_RETURN(block.terminator, BuildTerminator(f, *rb.terminator));
      block.loc = rb.terminator->loc;
      fn.blocks.push_back(std::move(block));
    }
    program_.module.functions.push_back(std::move(fn));
    return absl::OkStatus();
  }

  // Gives every variable its index (the `vars` lines, or the default
  // numbering of ir/parser.h) and fills the variable table.
  absl::Status NumberVariables() {
    const size_t n = vars_.size();
    std::vector<int32_t> order;  // order[id] = index into vars_
    if (table_) {
      order.assign(n, -1);
      for (size_t f = 0; f < raw_.functions.size(); ++f) {
        for (const RawVarsRun& run : raw_.functions[f].runs) {
          for (size_t i = 0; i < run.entries.size(); ++i) {
            const int64_t id = run.first + static_cast<int64_t>(i);
            const RawName& name = run.entries[i].var.name;
            if (static_cast<uint64_t>(id) >= n) {
              return ErrorAt(name.pos, absl::StrCat(name.Shown('%'), " would be variable #", id,
                                                    " but the vars lines list only ", n,
                                                    " variables (#0 to #", n - 1, ")"));
            }
            if (order[id] >= 0) {
              return ErrorAt(name.pos, absl::StrCat(name.Shown('%'), " would be variable #", id,
                                                    ", which ", vars_[order[id]].name.Shown('%'),
                                                    " already is"));
            }
            order[id] = scopes_[f].own.at(KeyOf(name));
          }
        }
      }
    } else {
      std::vector<bool> placed(n, false);
      for (size_t f = 0; f < raw_.functions.size(); ++f) {
        auto place = [&](int32_t var) {
          if (vars_[var].owner != static_cast<int32_t>(f) || placed[var]) return;
          placed[var] = true;
          order.push_back(var);
        };
        const Function& fn = program_.module.functions[f];
        for (VarId v : fn.params) place(v.value);
        for (int32_t var : scopes_[f].mentions) place(var);
        for (VarId v : fn.results) place(v.value);
      }
      for (size_t var = 0; var < n; ++var) {
        if (!placed[var]) order.push_back(static_cast<int32_t>(var));
      }
      // Stable by owner: a variable only other functions name goes after
      // its own function's.
      std::stable_sort(order.begin(), order.end(), [this](int32_t a, int32_t b) {
        return vars_[a].owner < vars_[b].owner;
      });
    }
    for (size_t id = 0; id < n; ++id) {
      VarInfo& v = vars_[order[id]];
      v.id = static_cast<int32_t>(id);
      if (v.name.suffix >= 0 && v.name.suffix != static_cast<int64_t>(id)) {
        return ErrorAt(v.name.pos, absl::StrCat(v.name.Shown('%'), " is variable #", id,
                                                ": the number after '#' must be its index"));
      }
      Variable var;
      var.name = v.name.name;
      var.function = FunctionId(v.owner);
      var.type = v.type;
      var.storage = v.storage.value_or(StorageClass::kFull);
      var.uniform = v.uniform;
      program_.module.variables.push_back(std::move(var));
    }
    return absl::OkStatus();
  }

  RawProgram raw_;
  Program program_;
  std::map<NameKey, int32_t> functions_;
  std::vector<Scope> scopes_;
  std::vector<VarInfo> vars_;
  bool table_ = false;  // the text has `vars` lines
};

}  // namespace

absl::StatusOr<Program> ParseProgram(std::string_view text) {
  AB_ASSIGN_OR_RETURN(RawProgram raw, LineReader().Read(text));
  return Resolver(std::move(raw)).Build();
}

}  // namespace autobatch
