// The deterministic text form of the IR.
#include "ir/printer.h"

#include <charconv>
#include <cmath>
#include <cstring>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "ir/control_ops.h"
#include "support/overloaded.h"
#include "support/status.h"

namespace autobatch {
namespace {

// Larger matrices print as a hash so one op stays on one readable line.
constexpr size_t kMaxPrintedMatrixEntries = 16;

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
  if (consistent && m.data.size() <= kMaxPrintedMatrixEntries) {
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

std::string LocComment(const PrintOptions& options, const SourceLoc& loc) {
  if (!options.locations || !loc.known()) return "";
  return "  // " + loc.ToString();
}

// Prints ops and terminators with names computed once for the whole module.
class Printer {
 public:
  Printer(const Module& module, const PrintOptions& options)
      : module_(module), options_(options) {
    Disambiguator vars;
    var_names_.reserve(module.variables.size());
    for (size_t i = 0; i < module.variables.size(); ++i) {
      const Variable& v = module.variables[i];
      var_names_.push_back(
          "%" + vars.Name(v.function.value, v.name, static_cast<int32_t>(i)));
    }
    Disambiguator functions;
    for (size_t i = 0; i < module.functions.size(); ++i) {
      function_names_.push_back(
          "@" + functions.Name(0, module.functions[i].name, static_cast<int32_t>(i)));
    }
  }

  std::string Var(VarId id) const {
    if (id.value < 0 || static_cast<size_t>(id.value) >= var_names_.size()) {
      return "%" + Bad(id.value);
    }
    return var_names_[id.value];
  }

  std::string Function(FunctionId id) const {
    if (id.value < 0 || static_cast<size_t>(id.value) >= function_names_.size()) {
      return "@" + Bad(id.value);
    }
    return function_names_[id.value];
  }

  // `^3`; `num_blocks` < 0 means the enclosing function is unknown.
  static std::string Block(BlockId id, int64_t num_blocks) {
    if (id.value < 0 || (num_blocks >= 0 && id.value >= num_blocks)) {
      return "^" + Bad(id.value);
    }
    return absl::StrCat("^", id.value);
  }

  // `%x: f64` (plus ` full` when storage classes are shown).
  std::string Decl(VarId id) const {
    std::string out = Var(id);
    if (id.value < 0 || static_cast<size_t>(id.value) >= module_.variables.size()) {
      return out;
    }
    const Variable& v = module_.variables[id.value];
    absl::StrAppend(&out, ": ", PrintType(v.type));
    if (options_.storage_classes) {
      absl::StrAppend(&out, " ", std::string(StorageClassName(v.storage)));
    }
    return out;
  }

  std::string VarList(const std::vector<VarId>& ids) const {
    std::string out;
    for (size_t i = 0; i < ids.size(); ++i) {
      if (i > 0) out += ", ";
      out += Var(ids[i]);
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
              if (!o.inputs.empty()) out += " " + VarList(o.inputs);
              out += PrintAttributes(o.attrs);
              if (!o.in_place.empty()) out += " in_place(" + VarList(o.in_place) + ")";
              return out;
            },
            [&](const CallOp& o) {
              return absl::StrCat(Defs(o.results), Keyword(o), " ", Function(o.callee),
                                  "(", VarList(o.args), ")");
            },
            [&](const PopOp& o) {
              return o.vars.empty() ? Keyword(o) : Keyword(o) + " " + VarList(o.vars);
            },
        },
        op);
  }

  std::string Terminator(const autobatch::Terminator& t, int64_t num_blocks) const {
    const std::string keyword(Info(KindOf(t)).spelling);
    return std::visit(
        Overloaded{
            [&](const Branch& b) {
              return absl::StrCat(keyword, " ", Var(b.cond), ", ",
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

  std::string FunctionText(FunctionId id) const {
    if (id.value < 0 || static_cast<size_t>(id.value) >= module_.functions.size()) {
      return absl::StrCat("func @", Bad(id.value), "\n");
    }
    const autobatch::Function& f = module_.functions[id.value];
    std::string out = absl::StrCat("func ", Function(id), "(", DeclList(f.params),
                                   ") -> (", DeclList(f.results), ") {",
                                   LocComment(options_, f.loc), "\n");
    if (f.signature) {
      absl::StrAppend(&out, "  signature ", TypeList(f.signature->params), " -> ",
                      TypeList(f.signature->results), "\n");
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
    return out + "}\n";
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
  const Module& module_;
  const PrintOptions& options_;
  std::vector<std::string> var_names_;
  std::vector<std::string> function_names_;
};

PrintOptions WithStage(PrintOptions options, Stage stage) {
  if (stage == Stage::kAllocated || stage == Stage::kLowered) {
    options.storage_classes = true;
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
  return Printer(module, options).FunctionText(function);
}

std::string PrintFunction(const Program& program, FunctionId function,
                          const PrintOptions& options) {
  return PrintFunction(program.module, function, WithStage(options, program.stage));
}

std::string PrintProgram(const Program& program, const PrintOptions& options) {
  PrintOptions effective = WithStage(options, program.stage);
  Printer printer(program.module, effective);
  std::string out = absl::StrCat("program stage=", std::string(StageName(program.stage)),
                                 " entry=", printer.Function(program.entry), "\n");
  if (!program.module.kernels.empty()) out += "\n";
  for (const auto& [name, sig] : program.module.kernels) {
    absl::StrAppend(&out, "kernel ", Quoted(name), Printer::TypeList(sig.inputs), " -> ",
                    Printer::TypeList(sig.outputs),
                    sig.bit_stable ? "" : " batch_dependent", "\n");
  }
  for (size_t i = 0; i < program.module.functions.size(); ++i) {
    out += "\n";
    out += printer.FunctionText(FunctionId(static_cast<int32_t>(i)));
  }
  return out;
}

}  // namespace autobatch
