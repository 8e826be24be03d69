// The deterministic text form of the IR.
#include "ir/printer.h"

#include <charconv>
#include <cmath>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "ir/control_ops.h"
#include "support/overloaded.h"
#include "support/status.h"

namespace autobatch {
namespace {

bool IsPlainName(std::string_view name) {
  if (name.empty()) return false;
  for (char c : name) {
    bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                 (c >= '0' && c <= '9') || c == '_' || c == '.';
    if (!plain) return false;
  }
  return true;
}

std::string Quoted(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    auto byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (byte < 0x20 || byte >= 0x7f) {
      out += absl::StrFormat("\\x%02x", byte);
    } else {
      out += c;
    }
  }
  out += '"';
  return out;
}

std::string NameOrQuoted(std::string_view name) {
  return IsPlainName(name) ? std::string(name) : Quoted(name);
}

std::string Bad(int32_t index) { return absl::StrCat("<bad:", index, ">"); }

// Display names (without sigil) for entities whose human names may collide
// within a scope: the first holder of a name keeps it, later ones get `#id`.
class Disambiguator {
 public:
  std::string Name(int32_t scope, std::string_view name, int32_t id) {
    if (name.empty()) return absl::StrCat("#", id);
    bool first = taken_.emplace(scope, std::string(name)).second;
    std::string shown = NameOrQuoted(name);
    return first ? shown : absl::StrCat(shown, "#", id);
  }

 private:
  std::set<std::pair<int32_t, std::string>> taken_;
};

uint64_t MatrixHash(const DenseMatrix& m) {
  // FNV-1a over rows, cols and the bits of every entry.
  uint64_t h = 0xcbf29ce484222325ull;
  auto mix = [&h](uint64_t word) {
    for (int i = 0; i < 8; ++i) {
      h ^= (word >> (8 * i)) & 0xff;
      h *= 0x100000001b3ull;
    }
  };
  mix(static_cast<uint64_t>(m.rows));
  mix(static_cast<uint64_t>(m.cols));
  for (double d : m.data) {
    uint64_t bits;
    std::memcpy(&bits, &d, sizeof bits);
    mix(bits);
  }
  return h;
}

std::string PrintMatrix(const DenseMatrix& m) {
  bool consistent = m.rows >= 0 && m.cols >= 0 &&
                    static_cast<uint64_t>(m.rows) * static_cast<uint64_t>(m.cols) ==
                        m.data.size();
  // `[]` would read back as 0x0: the column count of an empty matrix needs
  // its own form.
  if (consistent && m.rows == 0 && m.cols > 0) return absl::StrCat("matrix<0x", m.cols, ">");
  if (consistent) {
    std::string out = "[";
    for (int64_t r = 0; r < m.rows; ++r) {
      if (r > 0) out += ", ";
      out += "[";
      for (int64_t c = 0; c < m.cols; ++c) {
        if (c > 0) out += ", ";
        out += PrintDouble(m.data[r * m.cols + c]);
      }
      out += "]";
    }
    return out + "]";
  }
  std::string out = absl::StrFormat("matrix<%dx%d #%016x", m.rows, m.cols,
                                    MatrixHash(m));
  if (!consistent) absl::StrAppend(&out, ", ", m.data.size(), " values");
  return out + ">";
}

std::string PrintIntValue(DType dtype, int64_t value) {
  if (dtype == DType::kU64) return absl::StrCat(static_cast<uint64_t>(value));
  if (dtype == DType::kBool && (value == 0 || value == 1)) {
    return value ? "true" : "false";
  }
  return absl::StrCat(value);
}

std::string PrimName(Primitive prim) {
  int index = static_cast<int>(prim);
  if (index < 0 || index > static_cast<int>(Primitive::kUserKernel)) {
    return absl::StrCat("<bad primitive ", index, ">");
  }
  return std::string(Info(prim).name);
}

std::string PrintAttributes(const Attributes& attrs) {
  std::vector<std::string> parts;
  if (attrs.literal) parts.push_back("literal = " + PrintLiteral(*attrs.literal));
  if (attrs.dtype) parts.push_back(absl::StrCat("dtype = ", std::string(DTypeName(*attrs.dtype))));
  if (!attrs.ints.empty()) {
    std::string ints = "ints = [";
    for (size_t i = 0; i < attrs.ints.size(); ++i) {
      if (i > 0) ints += ", ";
      absl::StrAppend(&ints, attrs.ints[i]);
    }
    parts.push_back(ints + "]");
  }
  if (attrs.matrix) parts.push_back("matrix = " + PrintMatrix(*attrs.matrix));
  if (!attrs.kernel.empty()) parts.push_back("kernel = " + Quoted(attrs.kernel));
  if (parts.empty()) return "";
  std::string out = " {";
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += ", ";
    out += parts[i];
  }
  return out + "}";
}

// A location's file as its comment shows it: as is, unless the parser could
// not read it back (a control byte would break the line, a leading quote
// would read as a quoted name).
std::string LocFile(std::string_view file) {
  bool plain = file.empty() || file.front() != '"';
  for (char c : file) {
    auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f) plain = false;
  }
  return plain ? std::string(file) : Quoted(file);
}

std::string LocComment(const PrintOptions& options, const SourceLoc& loc) {
  if (!options.locations || !loc.known()) return "";
  return absl::StrCat("  // ", LocFile(loc.file), ":", loc.line);
}

// Calls `visit` on every variable the text of `f`'s blocks names, in the
// order the text names them (an op's outputs, inputs, in_place; a call's
// results, args; a pop's vars; a tape push's tape, value; a tape pop's
// result, tape; a branch's condition).
template <typename Visit>
void ForEachMention(const Function& f, Visit&& visit) {
  for (const Block& block : f.blocks) {
    for (const Op& op : block.ops) {
      std::visit(Overloaded{
                     [&](const PrimOp& o) {
                       for (VarId v : o.outputs) visit(v);
                       for (VarId v : o.inputs) visit(v);
                       for (VarId v : o.in_place) visit(v);
                     },
                     [&](const CallOp& o) {
                       for (VarId v : o.results) visit(v);
                       for (VarId v : o.args) visit(v);
                     },
                     [&](const PopOp& o) {
                       for (VarId v : o.vars) visit(v);
                     },
                     [&](const TapePushOp& o) {
                       visit(o.tape);
                       visit(o.value);
                     },
                     [&](const TapePopOp& o) {
                       visit(o.result);
                       visit(o.tape);
                     },
                 },
                 op);
    }
    if (const auto* branch = std::get_if<Branch>(&block.terminator)) visit(branch->cond);
  }
}

// A `vars` line is cut after this many characters.
constexpr size_t kVarsLineWidth = 100;

// Prints ops and terminators with names computed once for the whole module.
class Printer {
 public:
  Printer(const Module& module, const PrintOptions& options)
      : module_(module), options_(options) {
    Disambiguator vars;
    var_names_.reserve(module.variables.size());
    for (size_t i = 0; i < module.variables.size(); ++i) {
      const Variable& v = module.variables[i];
      var_names_.push_back(vars.Name(v.function.value, v.name, static_cast<int32_t>(i)));
    }
    Disambiguator functions;
    for (size_t i = 0; i < module.functions.size(); ++i) {
      function_names_.push_back(
          absl::StrCat("@", functions.Name(0, module.functions[i].name, static_cast<int32_t>(i))));
    }
  }

  // Prepares FunctionText: which plain names resolve to which variable, and
  // whether `vars` lines are needed.
  void PrepareFunctions() {
    BuildScopes();
    declared_ = DeclaredVariables();
    table_ = !TableFollowsFromText();
  }

  // `%name`, never qualified.
  std::string Var(VarId id) const {
    if (!ValidVar(id)) return absl::StrCat("%", Bad(id.value));
    return absl::StrCat("%", var_names_[id.value]);
  }

  // `%name` as the text of the function being printed names the variable:
  // qualified by its function (`%n@fib`) when the plain name would read
  // back as another variable (see Resolve).
  std::string Ref(VarId id) const {
    if (current_ < 0 || !ValidVar(id) || !ValidFunction(module_.var(id).function)) {
      return Var(id);
    }
    if (Resolve(current_, var_names_[id.value]) == id) return Var(id);
    return Var(id) + Function(module_.var(id).function);
  }

  std::string Function(FunctionId id) const {
    if (!ValidFunction(id)) return absl::StrCat("@", Bad(id.value));
    return function_names_[id.value];
  }

  // `^3`; `num_blocks` < 0 means the enclosing function is unknown.
  static std::string Block(BlockId id, int64_t num_blocks) {
    if (id.value < 0 || (num_blocks >= 0 && id.value >= num_blocks)) {
      return absl::StrCat("^", Bad(id.value));
    }
    return absl::StrCat("^", id.value);
  }

  // `: f64` (plus ` full` when storage classes are shown, ` uniform` for a
  // uniform variable).
  std::string TypeSuffix(const Variable& v) const {
    std::string out = ": " + PrintType(v.type);
    if (options_.storage_classes) {
      absl::StrAppend(&out, " ", std::string(StorageClassName(v.storage)));
    }
    if (v.uniform) out += " uniform";
    return out;
  }

  // `%x: f64` (plus ` full` when storage classes are shown).
  std::string Decl(VarId id) const {
    if (!ValidVar(id)) return Ref(id);
    return Ref(id) + TypeSuffix(module_.var(id));
  }

  std::string VarList(const std::vector<VarId>& ids) const {
    std::string out;
    for (size_t i = 0; i < ids.size(); ++i) {
      if (i > 0) out += ", ";
      out += Ref(ids[i]);
    }
    return out;
  }

  std::string DeclList(const std::vector<VarId>& ids) const {
    std::string out;
    for (size_t i = 0; i < ids.size(); ++i) {
      if (i > 0) out += ", ";
      out += Decl(ids[i]);
    }
    return out;
  }

  std::string Defs(const std::vector<VarId>& outputs) const {
    return outputs.empty() ? "" : DeclList(outputs) + " = ";
  }

  // The text keyword of a control op (ir/control_ops.def).
  template <typename ControlOpStruct>
  static std::string Keyword(const ControlOpStruct& op) {
    return std::string(Info(KindOf(op)).spelling);
  }

  std::string Op(const autobatch::Op& op) const {
    return std::visit(
        Overloaded{
            [&](const PrimOp& o) {
              std::string out = Defs(o.outputs) + PrimName(o.prim);
              if (!o.inputs.empty()) absl::StrAppend(&out, " ", VarList(o.inputs));
              out += PrintAttributes(o.attrs);
              if (!o.in_place.empty()) absl::StrAppend(&out, " in_place(", VarList(o.in_place), ")");
              return out;
            },
            [&](const CallOp& o) {
              return absl::StrCat(Defs(o.results), Keyword(o), " ", Function(o.callee),
                                  "(", VarList(o.args), ")");
            },
            [&](const PopOp& o) {
              return o.vars.empty() ? Keyword(o) : Keyword(o) + " " + VarList(o.vars);
            },
            [&](const TapePushOp& o) {
              return absl::StrCat(Keyword(o), " ", Ref(o.tape), ", ", Ref(o.value));
            },
            [&](const TapePopOp& o) {
              return absl::StrCat(Defs({o.result}), Keyword(o), " ", Ref(o.tape));
            },
        },
        op);
  }

  std::string Terminator(const autobatch::Terminator& t, int64_t num_blocks) const {
    const std::string keyword(Info(KindOf(t)).spelling);
    return std::visit(
        Overloaded{
            [&](const Branch& b) {
              return absl::StrCat(keyword, " ", Ref(b.cond), ", ",
                                  Block(b.then_block, num_blocks), ", ",
                                  Block(b.else_block, num_blocks));
            },
            [&](const Goto& g) {
              return absl::StrCat(keyword, " ", Block(g.target, num_blocks));
            },
            [&](const Return&) { return keyword; },
            [&](const PushGoto& p) {
              return absl::StrCat(keyword, " ", Function(p.callee), ", ",
                                  Block(p.return_to, num_blocks));
            },
            [&](const IndirectGoto&) { return keyword; },
            [&](const Halt&) { return keyword; },
        },
        t);
  }

  std::string FunctionText(FunctionId id) {
    if (!ValidFunction(id)) return absl::StrCat("func @", Bad(id.value), "\n");
    const autobatch::Function& f = module_.functions[id.value];
    // The header names the function's own params and results: never
    // qualified (the parser reads them as the function's own).
    std::string out = absl::StrCat("func ", Function(id), "(", DeclList(f.params),
                                   ") -> (", DeclList(f.results), ")");
    // A gradient stub has no body: its header says what defines it (a stub
    // with blocks, which the verifier refuses, shows both).
    const bool stub = f.gradient_of && f.blocks.empty();
    if (f.gradient_of) out += GradientOf(*f.gradient_of);
    if (!stub) out += " {";
    absl::StrAppend(&out, LocComment(options_, f.loc), "\n");
    current_ = id.value;
    if (f.signature) {
      absl::StrAppend(&out, "  signature ", TypeList(f.signature->params), " -> ",
                      TypeList(f.signature->results), "\n");
    }
    if (table_) out += VarsLines(id);
    if (stub) {
      current_ = -1;
      return out;
    }
    const auto num_blocks = static_cast<int64_t>(f.blocks.size());
    for (int64_t b = 0; b < num_blocks; ++b) {
      const autobatch::Block& block = f.blocks[b];
      absl::StrAppend(&out, "^", b);
      if (!block.label.empty()) absl::StrAppend(&out, " ", NameOrQuoted(block.label));
      out += ":\n";
      for (const autobatch::Op& op : block.ops) {
        absl::StrAppend(&out, "  ", Op(op), LocComment(options_, LocOf(op)), "\n");
      }
      absl::StrAppend(&out, "  ", Terminator(block.terminator, num_blocks),
                      LocComment(options_, block.loc), "\n");
    }
    current_ = -1;
    return out + "}\n";
  }

  // ` = gradient @f wrt 0, 2`.
  std::string GradientOf(const autobatch::GradientOf& grad) const {
    std::string out = absl::StrCat(" = gradient ", Function(grad.function), " wrt");
    for (size_t k = 0; k < grad.wrt.size(); ++k) {
      absl::StrAppend(&out, k > 0 ? ", " : " ", grad.wrt[k]);
    }
    return out;
  }

  static std::string TypeList(const std::vector<TensorType>& types) {
    std::string out = "(";
    for (size_t i = 0; i < types.size(); ++i) {
      if (i > 0) out += ", ";
      out += types[i].ToString();
    }
    return out + ")";
  }

 private:
  // What a function's text can name without qualification.
  struct Scope {
    std::map<std::string, VarId> own;   // its variables by display name
    std::set<std::string> header;       // display names of its own params and results
    std::vector<FunctionId> callees;    // other functions it PushGotos to
  };

  bool ValidVar(VarId id) const {
    return id.value >= 0 && static_cast<size_t>(id.value) < module_.variables.size();
  }
  bool ValidFunction(FunctionId id) const {
    return id.value >= 0 && static_cast<size_t>(id.value) < module_.functions.size();
  }
  bool Owns(int32_t function, VarId id) const {
    return ValidVar(id) && module_.var(id).function.value == function;
  }

  void BuildScopes() {
    scopes_.resize(module_.functions.size());
    for (size_t i = 0; i < module_.variables.size(); ++i) {
      FunctionId f = module_.variables[i].function;
      if (ValidFunction(f)) {
        scopes_[f.value].own.emplace(var_names_[i], VarId(static_cast<int32_t>(i)));
      }
    }
    for (size_t f = 0; f < module_.functions.size(); ++f) {
      const autobatch::Function& fn = module_.functions[f];
      Scope& scope = scopes_[f];
      for (const auto* list : {&fn.params, &fn.results}) {
        for (VarId v : *list) {
          if (Owns(static_cast<int32_t>(f), v)) scope.header.insert(var_names_[v.value]);
        }
      }
      std::set<int32_t> callees;
      for (const autobatch::Block& block : fn.blocks) {
        if (const auto* push = std::get_if<PushGoto>(&block.terminator)) {
          if (ValidFunction(push->callee) && push->callee.value != static_cast<int32_t>(f)) {
            callees.insert(push->callee.value);
          }
        }
      }
      for (int32_t c : callees) scope.callees.push_back(FunctionId(c));
    }
  }

  // The variable a plain `%name` in function `function`'s text stands for
  // (ir/parser.h states the same rule): the function's own param or result
  // of that name (any own variable when `vars` lines are printed), else the
  // param or result of that name of the one function it PushGotos to that
  // has one, else (without `vars` lines) its own variable of that name.
  std::optional<VarId> Resolve(int32_t function, const std::string& name) const {
    const Scope& scope = scopes_[function];
    auto own = scope.own.find(name);
    if (own != scope.own.end() && (table_ || scope.header.contains(name))) return own->second;
    std::optional<VarId> callee_var;
    int holders = 0;
    for (FunctionId callee : scope.callees) {
      if (scopes_[callee.value].header.contains(name)) {
        callee_var = scopes_[callee.value].own.at(name);
        ++holders;
      }
    }
    if (holders == 1) return callee_var;
    if (!table_ && own != scope.own.end()) return own->second;
    return std::nullopt;
  }

  // Whether the parser's default numbering of variables (ir/parser.h)
  // rebuilds the variable table: each function's own params, then its own
  // variables in the order its blocks first name them, then its own
  // results, function after function; every variable named so, and each
  // one's type and storage class shown where it is written.
  // Which variables the text declares (with their type): params, results,
  // op outputs, call results and tape pop results (a tape is never declared:
  // a typed one shows its type on the `vars` lines).
  std::vector<bool> DeclaredVariables() const {
    std::vector<bool> declared(module_.variables.size(), false);
    auto declare = [&](VarId v) {
      if (ValidVar(v)) declared[v.value] = true;
    };
    for (const autobatch::Function& f : module_.functions) {
      for (VarId v : f.params) declare(v);
      for (VarId v : f.results) declare(v);
      for (const autobatch::Block& block : f.blocks) {
        for (const autobatch::Op& op : block.ops) {
          if (const auto* prim = std::get_if<PrimOp>(&op)) {
            for (VarId v : prim->outputs) declare(v);
          } else if (const auto* call = std::get_if<CallOp>(&op)) {
            for (VarId v : call->results) declare(v);
          } else if (const auto* pop = std::get_if<TapePopOp>(&op)) {
            declare(pop->result);
          }
        }
      }
    }
    return declared;
  }

  bool TableFollowsFromText() const {
    const size_t n = module_.variables.size();
    for (size_t i = 0; i < n; ++i) {
      const Variable& v = module_.variables[i];
      if (!ValidFunction(v.function)) return false;
      if (!declared_[i] && (v.type || v.storage != StorageClass::kFull || v.uniform)) {
        return false;
      }
    }
    int32_t next = 0;
    std::vector<bool> placed(n, false);
    bool in_order = true;
    for (size_t f = 0; f < module_.functions.size() && in_order; ++f) {
      auto place = [&](VarId v) {
        if (!Owns(static_cast<int32_t>(f), v) || placed[v.value]) return;
        placed[v.value] = true;
        if (v.value != next++) in_order = false;
      };
      const autobatch::Function& fn = module_.functions[f];
      for (VarId v : fn.params) place(v);
      ForEachMention(fn, place);
      for (VarId v : fn.results) place(v);
    }
    return in_order && static_cast<size_t>(next) == n;
  }

  // `  vars #4: %a, %b: f64 full` lines listing the function's variables in
  // index order, one run of consecutive indices per line (long runs are cut
  // into several lines). Variables no text writes show their type here.
  std::string VarsLines(FunctionId id) const {
    std::string out;
    std::string line;
    int32_t previous = -2;
    for (size_t i = 0; i < module_.variables.size(); ++i) {
      const auto index = static_cast<int32_t>(i);
      if (module_.variables[i].function != id) continue;
      std::string entry = Var(VarId(index));
      if (!declared_[i]) entry += TypeSuffix(module_.variables[i]);
      if (index != previous + 1 || line.size() + entry.size() + 2 > kVarsLineWidth) {
        if (!line.empty()) out += line + "\n";
        line = absl::StrCat("  vars #", index, ": ", entry);
      } else {
        absl::StrAppend(&line, ", ", entry);
      }
      previous = index;
    }
    if (!line.empty()) out += line + "\n";
    return out;
  }

  const Module& module_;
  const PrintOptions& options_;
  std::vector<std::string> var_names_;  // display names, without the `%`
  std::vector<std::string> function_names_;
  std::vector<Scope> scopes_;
  std::vector<bool> declared_;          // written by an op or a param/result
  bool table_ = false;                  // print `vars` lines
  int32_t current_ = -1;                // the function being printed, if any
};

// Storage classes are shown from stage allocated on, and at any stage when
// a variable's class is not the default (so the text keeps it).
PrintOptions WithStage(PrintOptions options, const Program& program) {
  if (program.stage == Stage::kAllocated || program.stage == Stage::kLowered) {
    options.storage_classes = true;
  }
  for (const Variable& v : program.module.variables) {
    if (v.storage != StorageClass::kFull) options.storage_classes = true;
  }
  return options;
}

}  // namespace

std::string PrintDouble(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char buffer[64];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
  AB_CHECK(ec == std::errc(), "64 bytes hold any shortest double");
  return std::string(buffer, end);
}

std::string PrintLiteral(const Literal& literal) {
  std::vector<std::string> values;
  if (IsFloat(literal.type.dtype)) {
    for (double d : literal.floats) values.push_back(PrintDouble(d));
  } else {
    for (int64_t i : literal.ints) values.push_back(PrintIntValue(literal.type.dtype, i));
  }
  std::string out = literal.type.ToString() + " ";
  if (literal.type.IsScalar() && values.size() == 1) return out + values[0];
  out += "[";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ", ";
    out += values[i];
  }
  return out + "]";
}

std::string PrintType(const std::optional<TensorType>& type) {
  return type ? type->ToString() : "?";
}

std::string PrintVar(const Module& module, VarId var) {
  return Printer(module, PrintOptions{}).Var(var);
}

std::string PrintOp(const Module& module, const Op& op, const PrintOptions& options) {
  return Printer(module, options).Op(op);
}

std::string PrintTerminator(const Module& module, const Terminator& terminator,
                            const PrintOptions& options) {
  return Printer(module, options).Terminator(terminator, /*num_blocks=*/-1);
}

std::string PrintFunction(const Module& module, FunctionId function,
                          const PrintOptions& options) {
  Printer printer(module, options);
  printer.PrepareFunctions();
  return printer.FunctionText(function);
}

std::string PrintFunction(const Program& program, FunctionId function,
                          const PrintOptions& options) {
  return PrintFunction(program.module, function, WithStage(options, program));
}

std::string PrintProgram(const Program& program, const PrintOptions& options) {
  PrintOptions effective = WithStage(options, program);
  Printer printer(program.module, effective);
  printer.PrepareFunctions();
  std::string out = absl::StrCat("program stage=", std::string(StageName(program.stage)),
                                 " entry=", printer.Function(program.entry), "\n");
  if (!program.module.kernels.empty()) out += "\n";
  for (const auto& [name, sig] : program.module.kernels) {
    absl::StrAppend(&out, "kernel ", Quoted(name), Printer::TypeList(sig.inputs), " -> ",
                    Printer::TypeList(sig.outputs),
                    sig.bit_stable ? "" : " batch_dependent", sig.pure ? " pure" : "",
                    sig.vjp.empty() ? "" : absl::StrCat(" vjp ", Quoted(sig.vjp)), "\n");
  }
  for (size_t i = 0; i < program.module.functions.size(); ++i) {
    out += "\n";
    out += printer.FunctionText(FunctionId(static_cast<int32_t>(i)));
  }
  return out;
}

}  // namespace autobatch
