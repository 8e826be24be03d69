// The C++ of one primitive op for a chunk of lanes (see op_emitter.h).
#include "codegen/op_emitter.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "backends/kernels.h"
#include "ir/printer.h"
#include "ir/primitives.h"

namespace autobatch::codegen_internal {

// `text` made safe for a `//` comment of the generated source: printable
// ASCII but the backslash (a line splice) is kept; anything else, line ends
// and carriage returns among them, becomes '?'. Names come from the
// program, which may come from a file: unsanitized, a name holding a line
// end would put the rest of it into the compiled code.
std::string CommentText(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u > 0x7e || c == '\\') c = '?';
  }
  return out;
}

// The C++ type of an element as computed, and as stored (bool: one byte).
std::string CType(DType d) {
  switch (d) {
    case DType::kF64: return "double";
    case DType::kF32: return "float";
    case DType::kI64: return "int64_t";
    case DType::kI32: return "int32_t";
    case DType::kBool: return "bool";
    case DType::kU64: return "uint64_t";
  }
  return "?";
}
std::string StoredType(DType d) { return d == DType::kBool ? "uint8_t" : CType(d); }

namespace {

// A C++ expression of type StoredType(d) with exactly these bytes.
std::string StoredLiteral(DType d, const std::byte* bytes) {
  switch (DTypeSize(d)) {
    case 1: {
      uint8_t v;
      std::memcpy(&v, bytes, 1);
      return absl::StrCat("uint8_t{", v, "}");
    }
    case 4: {
      uint32_t v;
      std::memcpy(&v, bytes, 4);
      return absl::StrFormat("std::bit_cast<%s>(uint32_t{0x%08x})", StoredType(d), v);
    }
    default: {
      uint64_t v;
      std::memcpy(&v, bytes, 8);
      return absl::StrFormat("std::bit_cast<%s>(uint64_t{0x%016x})", StoredType(d), v);
    }
  }
}

}  // namespace

std::string Local(VarId v) { return absl::StrCat("v", v.value); }

// Generates the code of one op (a block of statements) and the file-scope
// constants it needs, or says the op cannot be fused.
// The statements computing `op` for one lane into the locals, or nullopt
// if the op is not fusable or does not type-check (the interpreter then
// runs it and reports the error).
std::optional<std::string> OpEmitter::Emit(const PrimOp& op, bool may_push) {
  if (!Info(op.prim).fusable || op.outputs.size() != 1) return std::nullopt;
  const int arity = Info(op.prim).num_inputs;
  if (arity >= 0 ? op.inputs.size() != static_cast<size_t>(arity) : op.inputs.empty()) {
    return std::nullopt;
  }
  for (VarId v : op.inputs) {
    if (!module_.var(v).type || Elements(v) > kMaxFusedElements) return std::nullopt;
  }
  const VarId out = op.outputs[0];
  if (!module_.var(out).type || Elements(out) > kMaxFusedElements) return std::nullopt;
  if (!may_push && module_.var(out).storage == StorageClass::kFull &&
      std::find(op.in_place.begin(), op.in_place.end(), out) == op.in_place.end()) {
    return std::nullopt;  // pushes a frame
  }
  std::optional<std::string> body = Body(op);
  if (!body) return std::nullopt;
  const std::string stored = StoredType(Type(out).dtype);
  const int64_t n = Elements(out);
  const std::string comment = comments_ ? CommentText(PrintOp(module_, Op(op))) : "";
  // Every op but matvec computes each (lane, element) of its result from
  // the same (lane, element) of its operands, or from values it read
  // before (reductions), so it may write its result in place even when
  // the result is an operand; a matvec writes a copy first.
  if (op.prim == Primitive::kMatVec &&
      std::find(op.inputs.begin(), op.inputs.end(), out) != op.inputs.end()) {
    return absl::StrCat("    {  // ", comment, "\n      alignas(64) ", stored, " r[",
                        std::max<int64_t>(n, 1) * kFusedChunk, "];\n", *body,
                        "      for (int64_t i = 0; i < ", n * kFusedChunk, "; ++i) ",
                        Local(out), "[i] = r[i];\n    }\n");
  }
  return absl::StrCat("    {  // ", comment, "\n      ", stored, "* const r = ", Local(out),
                      ";\n", *body, "    }\n");
}


// `r[k, e] = expr;` for the chunk's lanes k and the n elements e.
std::string OpEmitter::Loop(int64_t n, const std::string& expr) {
  if (n == 1) {
    return absl::StrCat("      for (int64_t k = 0; k < K; ++k) {\n        const int64_t e = 0;\n",
                        "        r[k] = ", expr, ";\n      }\n");
  }
  return absl::StrCat("      for (int64_t k = 0; k < K; ++k) {\n",
                      "        for (int64_t e = 0; e < ", n, "; ++e) r[k * ", n, " + e] = ", expr,
                      ";\n      }\n");
}


// Element e of `v` in lane k, or element 0 if `v` is a scalar broadcast
// over n.
std::string OpEmitter::At(VarId v) const {
  const int64_t m = Elements(v);
  if (m == 1) return absl::StrCat(Local(v), "[k]");
  return absl::StrCat(Local(v), "[k * ", m, " + e]");
}


// Element-wise binary operands broadcast to the output (CheckBinary).
bool OpEmitter::Broadcasts(const PrimOp& op) const {
  const int64_t na = Elements(op.inputs[0]), nb = Elements(op.inputs[1]);
  const int64_t n = Elements(op.outputs[0]);
  return Dt(op.inputs[0]) == Dt(op.inputs[1]) && n == std::max(na, nb) &&
         (na == n || na == 1) && (nb == n || nb == 1);
}


std::string OpEmitter::NewConstant(const std::string& type,
                                   const std::vector<std::string>& values) {
  const std::string name = absl::StrCat("kConstant", (*next_constant_)++);
  absl::StrAppend(constants_, "alignas(64) constexpr ", type, " ", name, "[",
                  std::max<size_t>(values.size(), 1), "] = {");
  for (size_t i = 0; i < values.size(); ++i) {
    absl::StrAppend(constants_, i == 0 ? "" : ",", i % 4 == 0 ? "\n    " : " ", values[i]);
  }
  absl::StrAppend(constants_, "};\n");
  return name;
}


// Whether the operand and result types are those the type rule of an
// element-wise primitive (ir/type_rules.h) gives, which its template
// assumes. An op that fails this does not type-check: it is not fused, and
// the interpreter reports it.
bool OpEmitter::FitsElementwiseRule(const PrimOp& op) const {
  const DType od = Dt(op.outputs[0]);
  const VarId x = op.inputs[0];
  const bool unary = Dt(x) == od && Elements(x) == Elements(op.outputs[0]);
  switch (Info(op.prim).rule) {
    case TypeRule::kArithmetic: return od != DType::kBool && Dt(x) == od && Broadcasts(op);
    case TypeRule::kFloatBinary: return IsFloat(od) && Dt(x) == od && Broadcasts(op);
    case TypeRule::kCompare: return od == DType::kBool && Broadcasts(op);
    case TypeRule::kLogicalBinary:
      return od == DType::kBool && Dt(x) == DType::kBool && Broadcasts(op);
    case TypeRule::kNumericUnary: return od != DType::kBool && unary;
    case TypeRule::kFloatUnary: return IsFloat(od) && unary;
    case TypeRule::kLogicalNot: return od == DType::kBool && unary;
    default: return false;  // not element-wise: no template applies
  }
}


// The code of a primitive with a template in ir/primitives.def (the
// column `cxx` documents the placeholders).
std::optional<std::string> OpEmitter::FromTemplate(const PrimOp& op) const {
  if (!FitsElementwiseRule(op)) return std::nullopt;
  const std::string_view text = Info(op.prim).cxx;
  const absl::string_view cxx(text.data(), text.size());
  const VarId out = op.outputs[0];
  const VarId x = op.inputs[0];
  const int64_t n = Elements(out);
  if (absl::StrContains(cxx, "$x")) {  // a routine over the chunk
    return absl::StrCat("      ",
                        absl::StrReplaceAll(cxx, {{"$x", Local(x)},
                                                  {"$n", absl::StrCat(n * kFusedChunk)}}),
                        ";\n");
  }
  std::vector<std::pair<std::string, std::string>> values = {
      {"$t", CType(Dt(out))}, {"$a", CType(Dt(x))}, {"$0", At(x)}};
  if (op.inputs.size() > 1) values.push_back({"$1", At(op.inputs[1])});
  return Loop(n, absl::StrReplaceAll(cxx, values));
}


// The code of every other primitive.
std::optional<std::string> OpEmitter::Body(const PrimOp& op) {
  if (!Info(op.prim).cxx.empty()) return FromTemplate(op);
  using P = Primitive;
  const VarId out = op.outputs[0];
  const DType od = Dt(out);
  const int64_t n = Elements(out);
  const std::string t = CType(od);
  const auto in = [&](size_t k) { return op.inputs[k]; };
  switch (op.prim) {
    case P::kConstant:
    case P::kFillLike: {
      // The bytes the kernel writes, computed here by the kernel itself.
      if (op.prim == P::kFillLike && (Dt(in(0)) != od || Elements(in(0)) != n)) {
        return std::nullopt;
      }
      const int64_t bytes = n * DTypeSize(od);
      std::vector<std::byte> zeros(static_cast<size_t>(std::max<int64_t>(bytes, 1)));
      std::vector<std::byte> value(zeros.size());
      std::vector<ConstLanesView> ins;
      for (VarId v : op.inputs) ins.push_back({Type(v), zeros.data()});
      const LanesView outs[1] = {{Type(out), value.data()}};
      if (!RunPrimitive(op, ins, outs, /*num_lanes=*/1, /*kernels=*/nullptr).ok()) {
        return std::nullopt;
      }
      std::vector<std::string> values;
      for (int64_t e = 0; e < n; ++e) {
        values.push_back(StoredLiteral(od, value.data() + e * DTypeSize(od)));
      }
      return Loop(n, absl::StrCat(NewConstant(StoredType(od), values), "[e]"));
    }
    case P::kCopy:
      if (Type(in(0)).dtype != od || Elements(in(0)) != n) return std::nullopt;
      return Loop(n, At(in(0)));
    case P::kSelect: {
      const int64_t nc = Elements(in(0));
      if (Dt(in(0)) != DType::kBool || Dt(in(1)) != od || Dt(in(2)) != od ||
          Elements(in(1)) != n || Elements(in(2)) != n || (nc != 1 && nc != n)) {
        return std::nullopt;
      }
      return Loop(n, absl::StrCat("(", At(in(0)), " != 0) ? ", At(in(1)), " : ",
                                  At(in(2))));
    }
    case P::kCast:
      if ((op.attrs.dtype && *op.attrs.dtype != od) || Elements(in(0)) != n) {
        return std::nullopt;
      }
      return Loop(n, absl::StrFormat("E::Store<%s>(E::Convert<%s>(E::Load<%s>(%s)))", t, t,
                                     CType(Dt(in(0))), At(in(0))));
    case P::kBroadcast:
      if (Elements(in(0)) != 1 || Dt(in(0)) != od) return std::nullopt;
      return Loop(n, absl::StrCat(Local(in(0)), "[k]"));
    case P::kSlice: {
      const std::vector<int64_t>& ints = op.attrs.ints;
      const int64_t size_in = Elements(in(0));
      if (ints.size() != 2 || ints[0] < 0 || ints[1] < 0 || ints[0] > size_in ||
          ints[1] > size_in - ints[0] || ints[1] != n || Dt(in(0)) != od) {
        return std::nullopt;
      }
      return Loop(n, absl::StrCat(Local(in(0)), "[k * ", size_in, " + ", ints[0], " + e]"));
    }
    case P::kConcat: {
      std::string code;
      int64_t offset = 0;
      for (VarId v : op.inputs) {
        if (Dt(v) != od) return std::nullopt;
        absl::StrAppend(&code, "      for (int64_t k = 0; k < K; ++k) {\n",
                        "        for (int64_t e = 0; e < ", Elements(v), "; ++e) r[k * ", n,
                        " + ", offset, " + e] = ", Local(v), "[k * ", Elements(v),
                        " + e];\n      }\n");
        offset += Elements(v);
      }
      if (offset != n) return std::nullopt;
      return code;
    }
    case P::kReduceSum: case P::kSquaredNorm: case P::kDot: {
      const DType d = Dt(in(0));
      const int64_t m = Elements(in(0));
      if (d == DType::kBool || od != d || n != 1) return std::nullopt;
      if (op.prim == P::kDot && (Dt(in(1)) != d || Elements(in(1)) != m)) return std::nullopt;
      const std::string ct = CType(d);
      const std::string a = Local(in(0));
      auto term = [&](const std::string& i) {
        const std::string at = absl::StrCat("[k * ", m, " + ", i, "]");
        if (op.prim == P::kReduceSum) return absl::StrCat(a, at);
        const std::string b = op.prim == P::kDot ? Local(in(1)) : a;
        return absl::StrFormat("E::Mul<%s>(%s%s, %s%s)", ct, a, at, b, at);
      };
      return absl::StrCat(
          "      for (int64_t k = 0; k < K; ++k) {\n", "        ", ct, " acc = ",
          m > 0 ? term("0") : ct + "{0}", ";\n", "        for (int64_t i = 1; i < ", m,
          "; ++i) acc = E::Add<", ct, ">(acc, ", term("i"), ");\n",
          "        r[k] = E::Canon(acc);\n      }\n");
    }
    case P::kLogSumExp: {
      const DType d = Dt(in(0));
      if (!IsFloat(d) || od != d || n != 1) return std::nullopt;
      return absl::StrCat("      E::EvalLogSumExp(", Local(in(0)), ", r, K, ", Elements(in(0)),
                          ");\n");
    }
    case P::kMatVec: {
      const DenseMatrix* mat = op.attrs.matrix.get();
      const DType d = Dt(in(0));
      if (mat == nullptr || !IsFloat(d) || od != d || mat->rows < 0 || mat->cols < 0 ||
          static_cast<int64_t>(mat->data.size()) != mat->rows * mat->cols ||
          Elements(in(0)) != mat->cols || n != mat->rows) {
        return std::nullopt;
      }
      const int64_t rows = mat->rows, cols = mat->cols;
      if (rows == 0) return std::string();
      if (cols == 0) return Loop(n, absl::StrCat(t, "{0}"));
      // Column-major, converted to the operand's dtype, as the kernel does.
      std::vector<std::string> values;
      for (int64_t j = 0; j < cols; ++j) {
        for (int64_t i = 0; i < rows; ++i) {
          const double x = mat->data[static_cast<size_t>(i * cols + j)];
          if (d == DType::kF32) {
            const float f = static_cast<float>(x);
            values.push_back(StoredLiteral(d, reinterpret_cast<const std::byte*>(&f)));
          } else {
            values.push_back(StoredLiteral(d, reinterpret_cast<const std::byte*>(&x)));
          }
        }
      }
      const std::string m = NewConstant(t, values);
      const std::string x = Local(in(0));
      return absl::StrCat(
          "      for (int64_t k = 0; k < K; ++k) {\n", "        ", t, "* o = r + k * ", rows,
          ";\n", "        const ", t, "* xk = ", x, " + k * ", cols, ";\n",
          "        for (int64_t i = 0; i < ", rows, "; ++i) o[i] = ", m, "[i] * xk[0];\n",
          "        for (int64_t j = 1; j < ", cols, "; ++j) {\n",
          "          for (int64_t i = 0; i < ", rows, "; ++i) o[i] = o[i] + ", m, "[j * ",
          rows, " + i] * xk[j];\n", "        }\n",
          "        for (int64_t i = 0; i < ", rows, "; ++i) o[i] = E::Canon(o[i]);\n",
          "      }\n");
    }
    case P::kRandomUniform: case P::kRandomNormal: {
      for (size_t k = 0; k < 2; ++k) {
        if (Dt(in(k)) != DType::kU64 || Elements(in(k)) != 1) return std::nullopt;
      }
      if (od != DType::kF64) return std::nullopt;
      return absl::StrCat("      autobatch::RandomLanes(", Local(in(0)), ", ", Local(in(1)),
                          ", K, ", n, ", /*normal=*/",
                          op.prim == P::kRandomNormal ? "true" : "false", ", r);\n");
    }
    default:
      return std::nullopt;
  }
}



// Vars read by the ops of `block` from `from` on, and by its terminator.
std::vector<bool> ReadFrom(const Module& module, const Block& block, size_t from) {
  std::vector<bool> read(module.variables.size(), false);
  for (size_t i = from; i < block.ops.size(); ++i) {
    for (VarId v : OpReads(block.ops[i])) read[static_cast<size_t>(v.value)] = true;
  }
  if (const auto* branch = std::get_if<Branch>(&block.terminator)) {
    read[static_cast<size_t>(branch->cond.value)] = true;
  }
  return read;
}

SegmentPlan PlanSegment(const Module& module, FunctionId fn, BlockId b, const Block& block,
                 int32_t first, int32_t end) {
  SegmentPlan plan{fn, b, first, end, {}, {}};
  std::vector<VarId> written;
  auto has = [](const std::vector<VarId>& vars, VarId v) {
    return std::find(vars.begin(), vars.end(), v) != vars.end();
  };
  for (int32_t i = first; i < end; ++i) {
    const Op& op = block.ops[static_cast<size_t>(i)];
    if (std::holds_alternative<PopOp>(op)) continue;  // run by the VM after the segment
    for (VarId v : OpReads(op)) {
      if (!has(written, v) && !has(plan.inputs, v)) plan.inputs.push_back(v);
    }
    for (VarId v : OpWrites(op)) {
      if (!has(written, v)) written.push_back(v);
    }
  }
  const std::vector<bool> read_after = ReadFrom(module, block, static_cast<size_t>(end));
  for (VarId v : written) {
    const StorageClass storage = module.var(v).storage;
    if (storage == StorageClass::kNull) continue;
    if (storage == StorageClass::kTemporary && !read_after[static_cast<size_t>(v.value)]) continue;
    plan.outputs.push_back(v);
  }
  return plan;
}

// Whether the stack VM moves `op`'s lanes storage to storage when it runs
// it unfused (StoragePeephole, vm/stack/block_plan.h): a
// copy or a keep-or-replace select of a value wider than 8 bytes into a
// variable that outlives its block. Unfused, it moves only the lanes that
// change; in a segment, it would load and store every lane.
bool MovesInStorage(const Module& module, const PrimOp& op) {
  if (op.outputs.size() != 1) return false;
  const VarId out = op.outputs[0];
  const Variable& var = module.var(out);
  if (!var.type || var.type->NumElements() * DTypeSize(var.type->dtype) <= 8 ||
      var.storage == StorageClass::kTemporary || var.storage == StorageClass::kNull) {
    return false;
  }
  if (op.prim == Primitive::kCopy) return true;
  return op.prim == Primitive::kSelect && op.inputs.size() == 3 &&
         (op.inputs[1] == out || op.inputs[2] == out);
}

int32_t RunEnd(const Module& module, const Block& block, int32_t first,
               absl::FunctionRef<bool(const PrimOp&, std::span<const VarId>)> joins) {
  const int32_t num_ops = static_cast<int32_t>(block.ops.size());
  std::vector<VarId> popped;
  std::vector<VarId> locals;  // the variables of the prims so far
  int64_t local_bytes = 0;
  auto chunk_bytes = [&](VarId v) {
    const TensorType& type = *module.var(v).type;
    return std::max<int64_t>(type.NumElements(), 1) * DTypeSize(type.dtype) * kFusedChunk;
  };
  auto has = [](const std::vector<VarId>& vars, VarId v) {
    return std::find(vars.begin(), vars.end(), v) != vars.end();
  };
  int32_t last_prim = first, prims = 0;
  for (int32_t end = first; end < num_ops && prims < kMaxSegmentOps; ++end) {
    const Op& op = block.ops[static_cast<size_t>(end)];
    if (const auto* pop = std::get_if<PopOp>(&op)) {
      popped.insert(popped.end(), pop->vars.begin(), pop->vars.end());
      continue;
    }
    const auto* prim = std::get_if<PrimOp>(&op);
    if (prim == nullptr || !joins(*prim, locals)) break;
    bool touches_popped = false;
    for (const std::vector<VarId>& vars : {prim->inputs, prim->outputs}) {
      for (VarId v : vars) touches_popped = touches_popped || has(popped, v);
    }
    if (touches_popped) break;
    // The bytes this op adds to the locals (emitted ops have typed operands
    // of at most kMaxFusedElements elements); a matvec also copies its result.
    int64_t added = prim->prim == Primitive::kMatVec ? chunk_bytes(prim->outputs[0]) : 0;
    std::vector<VarId> fresh;
    for (const std::vector<VarId>& vars : {prim->inputs, prim->outputs}) {
      for (VarId v : vars) {
        if (has(locals, v) || has(fresh, v)) continue;
        fresh.push_back(v);
        added += chunk_bytes(v);
      }
    }
    if (prims > 0 && local_bytes + added > kMaxSegmentLocalBytes) break;
    local_bytes += added;
    locals.insert(locals.end(), fresh.begin(), fresh.end());
    last_prim = end + 1;
    ++prims;
  }
  return last_prim;
}

// Whether `op` reads or writes a uniform variable: generated code indexes
// every operand by lane, so such ops run through the kernels (a stride-0
// view) and never in a fused segment.
bool TouchesUniform(const Module& module, const PrimOp& op) {
  for (const std::vector<VarId>& vars : {op.inputs, op.outputs}) {
    for (VarId v : vars) {
      if (module.var(v).uniform) return true;
    }
  }
  return false;
}

}  // namespace autobatch::codegen_internal
