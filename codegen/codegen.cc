// Ahead-of-time code generation of fused blocks (see codegen.h).
#include "codegen/codegen.h"

#include "codegen/op_emitter.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <optional>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "backends/kernels.h"
#include "ir/printer.h"
#include "ir/primitives.h"
#include "support/status.h"
#include "vm/fused_blocks.h"

namespace autobatch {
namespace {

using codegen_internal::CommentText;
using codegen_internal::Local;
using codegen_internal::MovesInStorage;
using codegen_internal::OpEmitter;
using codegen_internal::PlanSegment;
using codegen_internal::RunEnd;
using codegen_internal::StoredType;
using codegen_internal::TouchesUniform;

std::vector<SegmentPlan> PlanWith(const Program& program, OpEmitter& emitter) {
  std::vector<SegmentPlan> plans;
  const Module& module = program.module;
  for (size_t f = 0; f < module.functions.size(); ++f) {
    const Function& fn = module.functions[f];
    for (size_t b = 0; b < fn.blocks.size(); ++b) {
      const Block& block = fn.blocks[b];
      const int32_t num_ops = static_cast<int32_t>(block.ops.size());
      for (int32_t i = 0; i < num_ops;) {
        if (!std::holds_alternative<PrimOp>(block.ops[static_cast<size_t>(i)])) {
          ++i;
          continue;
        }
        // Prims the emitter can fuse; not the moves the VM does storage to
        // storage, nor ops on uniform values.
        const int32_t end = RunEnd(module, block, i, [&](const PrimOp& prim, auto) {
          return !MovesInStorage(module, prim) && !TouchesUniform(module, prim) &&
                 emitter.Emit(prim).has_value();
        });
        // Constants cost the VM nothing (it fills a constant temporary once),
        // so a segment pays only with two ops that compute.
        int32_t computing = 0;
        for (int32_t k = i; k < end; ++k) {
          const auto* prim = std::get_if<PrimOp>(&block.ops[static_cast<size_t>(k)]);
          computing += prim != nullptr && prim->prim != Primitive::kConstant &&
                       prim->prim != Primitive::kFillLike;
        }
        if (computing >= 2) {
          plans.push_back(PlanSegment(module, FunctionId(static_cast<int32_t>(f)),
                               BlockId(static_cast<int32_t>(b)), block, i, end));
        }
        i = std::max(end, i + 1);
      }
    }
  }
  return plans;
}

bool IsIdentifier(std::string_view s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

// The C++20 keywords and alternative tokens: identifiers, but no function
// can be named so.
constexpr std::string_view kCppKeywords[] = {
    "alignas",      "alignof",     "and",          "and_eq",        "asm",
    "auto",         "bitand",      "bitor",        "bool",          "break",
    "case",         "catch",       "char",         "char8_t",       "char16_t",
    "char32_t",     "class",       "compl",        "concept",       "const",
    "consteval",    "constexpr",   "constinit",    "const_cast",    "continue",
    "co_await",     "co_return",   "co_yield",     "decltype",      "default",
    "delete",       "do",          "double",       "dynamic_cast",  "else",
    "enum",         "explicit",    "export",       "extern",        "false",
    "float",        "for",         "friend",       "goto",          "if",
    "inline",       "int",         "long",         "mutable",       "namespace",
    "new",          "noexcept",    "not",          "not_eq",        "nullptr",
    "operator",     "or",          "or_eq",        "private",       "protected",
    "public",       "register",    "reinterpret_cast", "requires",  "return",
    "short",        "signed",      "sizeof",       "static",        "static_assert",
    "static_cast",  "struct",      "switch",       "template",      "this",
    "thread_local", "throw",       "true",         "try",           "typedef",
    "typeid",       "typename",    "union",        "unsigned",      "using",
    "virtual",      "void",        "volatile",     "wchar_t",       "while",
    "xor",          "xor_eq",
};

// Macros the generated file's headers (<cmath>, <cstdint>, <cstddef>) define
// for names a user might pick; INT64_MAX and the like are caught by prefix.
constexpr std::string_view kLibraryMacros[] = {
    "NULL", "NAN", "INFINITY", "HUGE_VAL", "HUGE_VALF", "HUGE_VALL", "EOF",
    "offsetof", "assert", "errno", "math_errhandling",
};
constexpr std::string_view kLibraryMacroPrefixes[] = {
    "INT", "UINT", "SIZE_", "PTRDIFF_", "SIG_ATOMIC_", "WCHAR_", "WINT_", "FP_", "MATH_",
};

}  // namespace

absl::Status CheckFusedBlocksSymbol(std::string_view name) {
  const std::string symbol(name);
  auto bad = [&symbol](std::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat(
        "'", symbol, "' ", std::string(why),
        ", so the generated C++ would not compile: choose another name (e.g. ", symbol,
        "Blocks)"));
  };
  if (!IsIdentifier(name)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "'", symbol, "' is not a C++ identifier: name the generated function "
        "with letters, digits and underscores, not starting with a digit"));
  }
  if (std::find(std::begin(kCppKeywords), std::end(kCppKeywords), name) !=
      std::end(kCppKeywords)) {
    return bad("is a C++ keyword");
  }
  if (name == "main") return bad("is the name of the program's entry point");
  if (name == "std" || name == "autobatch" || name == "absl") {
    return bad("is a namespace the generated file uses");
  }
  if (name.ends_with("_t")) {
    return bad("ends in _t, like the types of <cstdint> and <cstddef> (int64_t, size_t), a "
               "suffix POSIX reserves for types");
  }
  const bool all_caps = std::none_of(name.begin(), name.end(), [](char c) {
    return std::islower(static_cast<unsigned char>(c)) != 0;
  });
  const bool macro =
      std::find(std::begin(kLibraryMacros), std::end(kLibraryMacros), name) !=
          std::end(kLibraryMacros) ||
      (all_caps && std::any_of(std::begin(kLibraryMacroPrefixes), std::end(kLibraryMacroPrefixes),
                               [name](std::string_view p) { return name.starts_with(p); }));
  if (macro) return bad("is (or may be) a macro of the C++ library");
  if (name.starts_with("autobatch_") || name == "jit_host") {
    return bad("is reserved for the names autobatch generates (autobatch_..., jit_host)");
  }
  const bool reserved =
      name.find("__") != std::string_view::npos ||
      (name.size() >= 2 && name[0] == '_' &&
       std::isupper(static_cast<unsigned char>(name[1])) != 0);
  if (reserved) {
    return bad("is reserved for the C++ implementation (it has two underscores in a row, or "
               "starts with an underscore and a capital letter)");
  }
  return absl::OkStatus();
}

std::vector<SegmentPlan> PlanFusedSegments(const Program& program) {
  std::string constants;
  int next = 0;
  OpEmitter emitter(program.module, &constants, &next, /*comments=*/false);
  return PlanWith(program, emitter);
}

absl::StatusOr<std::string> EmitFusedBlocks(const Program& program,
                                            std::string_view symbol_view) {
  const std::string symbol(symbol_view);
  if (program.stage != Stage::kLowered) {
    return absl::InvalidArgumentError(absl::StrCat(
        "fused blocks are generated from a lowered program; this one is at stage '",
        std::string(StageName(program.stage)), "': run LowerProgram (passes/pipeline.h) first"));
  }
  AB_RETURN_IF_ERROR(CheckFusedBlocksSymbol(symbol));
  const Module& module = program.module;
  const std::vector<SegmentPlan> plans = PlanFusedSegments(program);
  std::string constants;
  int next_constant = 0;
  OpEmitter emitter(module, &constants, &next_constant);
  std::string functions;
  std::string table;
  for (size_t s = 0; s < plans.size(); ++s) {
    const SegmentPlan& plan = plans[s];
    const Function& fn = module.function(plan.function);
    const Block& block = fn.blocks[static_cast<size_t>(plan.block.value)];
    absl::StrAppend(&functions, "// ", CommentText(fn.name), " / ", CommentText(block.label),
                    ", ops ", plan.first_op,
                    "..", plan.end_op - 1, "\n",
                    "void Segment", s, "(const autobatch::FusedArgs& args) {\n",
                    "  const int64_t n = args.n;\n");
    auto var_list = [&](const std::vector<VarId>& vars, const char* prefix) {
      std::string list;
      for (VarId v : vars) absl::StrAppend(&list, list.empty() ? "" : ", ", v.value);
      if (vars.empty()) return std::string("{}");
      const std::string name = absl::StrCat(prefix, s);
      absl::StrAppend(&constants, "constexpr int32_t ", name, "[] = {", list, "};\n");
      return name;
    };
    for (size_t k = 0; k < plan.inputs.size(); ++k) {
      const std::string st = StoredType(module.var(plan.inputs[k]).type->dtype);
      absl::StrAppend(&functions, "  const ", st, "* in", k, " = reinterpret_cast<const ", st,
                      "*>(args.inputs[", k, "]);\n", "  const int64_t* in_lanes", k,
                      " = args.input_lanes[", k, "];\n");
    }
    for (size_t k = 0; k < plan.outputs.size(); ++k) {
      const std::string st = StoredType(module.var(plan.outputs[k]).type->dtype);
      absl::StrAppend(&functions, "  ", st, "* out", k, " = reinterpret_cast<", st,
                      "*>(args.outputs[", k, "]);\n", "  const int64_t* out_lanes", k,
                      " = args.output_lanes[", k, "];\n");
    }
    // The locals: every variable of the segment for a chunk of lanes (element
    // e of lane k at k * elements + e), zeroed once so that the lanes of a
    // last, partial chunk hold values (any will do) rather than garbage.
    std::vector<VarId> locals;
    for (int32_t i = plan.first_op; i < plan.end_op; ++i) {
      const Op& op = block.ops[static_cast<size_t>(i)];
      if (std::holds_alternative<PopOp>(op)) continue;
      for (VarId v : OpReads(op)) locals.push_back(v);
      for (VarId v : OpWrites(op)) locals.push_back(v);
    }
    std::sort(locals.begin(), locals.end());
    locals.erase(std::unique(locals.begin(), locals.end()), locals.end());
    for (VarId v : locals) {
      const TensorType& type = *module.var(v).type;
      absl::StrAppend(&functions, "  alignas(64) ", StoredType(type.dtype), " ", Local(v), "[",
                      std::max<int64_t>(type.NumElements(), 1) * kFusedChunk, "] = {};  // ",
                      CommentText(module.var(v).name), "\n");
    }
    absl::StrAppend(&functions, "  for (int64_t base = 0; base < n; base += K) {\n",
                    "    const int64_t m = n - base < K ? n - base : K;\n");
    for (size_t k = 0; k < plan.inputs.size(); ++k) {
      const int64_t m = module.var(plan.inputs[k]).type->NumElements();
      absl::StrAppend(&functions, "    for (int64_t k = 0; k < m; ++k) {\n",
                      "      const int64_t lane = in_lanes", k, "[base + k];\n",
                      "      for (int64_t e = 0; e < ", m, "; ++e) ", Local(plan.inputs[k]),
                      "[k * ", m, " + e] = in", k, "[lane * ", m, " + e];\n", "    }\n");
    }
    for (int32_t i = plan.first_op; i < plan.end_op; ++i) {
      const auto* prim = std::get_if<PrimOp>(&block.ops[static_cast<size_t>(i)]);
      if (prim == nullptr) continue;
      std::optional<std::string> code = emitter.Emit(*prim);
      AB_CHECK(code.has_value(), "a planned op is fusable");
      absl::StrAppend(&functions, *code);
    }
    for (size_t k = 0; k < plan.outputs.size(); ++k) {
      const int64_t m = module.var(plan.outputs[k]).type->NumElements();
      absl::StrAppend(&functions, "    for (int64_t k = 0; k < m; ++k) {\n",
                      "      const int64_t lane = out_lanes", k, "[base + k];\n",
                      "      for (int64_t e = 0; e < ", m, "; ++e) out", k, "[lane * ", m,
                      " + e] = ", Local(plan.outputs[k]), "[k * ", m, " + e];\n", "    }\n");
    }
    absl::StrAppend(&functions, "  }\n}\n\n");
    const std::string ins = var_list(plan.inputs, "kInputs");
    const std::string outs = var_list(plan.outputs, "kOutputs");
    absl::StrAppend(&table, "    {", plan.function.value, ", ", plan.block.value, ", ",
                    plan.first_op, ", ", plan.end_op, ", ", ins, ", ", outs, ", &Segment", s,
                    "},\n");
  }
  std::string source = absl::StrCat(
      "// Fused blocks of one lowered program, generated by autobatch (codegen/codegen.h).\n"
      "// Do not edit: regenerate from the program. Compile with -ffp-contract=off.\n"
      "#include <array>\n#include <bit>\n#include <cmath>\n#include <cstddef>\n"
      "#include <cstdint>\n\n"
      "#include \"backends/element_ops.h\"\n#include \"backends/random.h\"\n"
      "#include \"vm/fused_blocks.h\"\n\n"
      "// Every local is written before it is read; the compiler cannot always tell.\n"
      "#if defined(__GNUC__) && !defined(__clang__)\n"
      "#pragma GCC diagnostic ignored \"-Wmaybe-uninitialized\"\n"
      "#endif\n"
      "#pragma GCC diagnostic ignored \"-Wuninitialized\"\n"
      "#pragma GCC diagnostic ignored \"-Wunused-variable\"\n"
      "#pragma GCC diagnostic ignored \"-Wunused-but-set-variable\"\n\n"
      "namespace {\nnamespace ", symbol, "_impl {\n\nnamespace E = autobatch::element;\n\n",
      "// Lanes per chunk: each op runs for K lanes at a time (codegen/codegen.h).\n",
      "constexpr int64_t K = ", kFusedChunk, ";\n\n",
      constants, "\n", functions);
  if (plans.empty()) {
    absl::StrAppend(&source, "}  // namespace ", symbol, "_impl\n}  // namespace\n\n",
                    "const autobatch::FusedProgram& ", symbol,
                    "() {\n  static const autobatch::FusedProgram program{",
                    absl::StrFormat("0x%016xull", ProgramFingerprint(program)), ", {}};\n",
                    "  return program;\n}\n");
    return source;
  }
  absl::StrAppend(&source, "constexpr autobatch::FusedSegment kSegments[] = {\n", table,
                  "};\n\n}  // namespace ", symbol, "_impl\n}  // namespace\n\n",
                  "const autobatch::FusedProgram& ", symbol,
                  "() {\n  static const autobatch::FusedProgram program{",
                  absl::StrFormat("0x%016xull", ProgramFingerprint(program)), ", ", symbol,
                  "_impl::kSegments};\n  return program;\n}\n");
  return source;
}

}  // namespace autobatch
