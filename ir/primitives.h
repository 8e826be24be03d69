// The built-in primitives, generated from ir/primitives.def.
#ifndef AUTOBATCH_IR_PRIMITIVES_H_
#define AUTOBATCH_IR_PRIMITIVES_H_

#include <optional>
#include <span>
#include <string_view>

namespace autobatch {

// How a primitive's output type follows from its inputs and attributes; the
// checker for each rule is InferPrimitiveType (ir/type_rules.h).
enum class TypeRule {
  kConstant,       // no inputs; out = attr literal's type
  kFillLike,       // out = type of x
  kSame,           // out = type of x
  kSelect,         // c: bool scalar or shape of a; a, b same type; out = a's type
  kCast,           // out = x's shape with attr dtype
  kBroadcast,      // x scalar; out = x's dtype with attr shape
  kSlice,          // x vector; out = [size]
  kConcat,         // scalars/vectors of one dtype; out = [total length]
  kArithmetic,     // non-bool a, b: same dtype, equal shapes or one scalar
  kNumericUnary,   // non-bool x; out = x's type
  kFloatUnary,     // float x; out = x's type
  kFloatBinary,    // float a, b like kArithmetic
  kCompare,        // like kArithmetic (any dtype), out bool
  kLogicalBinary,  // bool a, b like kArithmetic
  kLogicalNot,     // bool x
  kReduce,         // non-bool x; out = scalar of x's dtype
  kFloatReduce,    // float x; out = scalar of x's dtype
  kDot,            // non-bool a, b of one type; out = scalar
  kMatVec,         // float x = [n], attr matrix m x n; out = [m]
  kRandom,         // key u64 scalar, counter u64 scalar; out = f64 of attr shape
  kGather,         // x = [n] (any dtype), idx = i64[m]; out = x's dtype [m]
  kScatterAdd,     // numeric v = [m], idx = i64[m], attr ints {n}; out = v's dtype [n]
  kMatVecInput,    // float M = [m, n], x = [n] of M's dtype; out = [m]
  kMatVecTInput,   // float M = [m, n], y = [m] of M's dtype; out = [n]
  // X = f64[N, K], y = i64[N], alpha = f64 scalar, beta = f64[K]; out = f64
  // scalar (bernoulli_logit_glm), f64[K + 1] (bernoulli_logit_glm_grad) or
  // f64[K + 2] (bernoulli_logit_glm_value_grad)
  kBernoulliLogitGlm,
};

// What a primitive costs per lane, in units of one element read or written;
// the threaded backend (backends/threaded_backend.h) weighs each class with
// a measured factor to choose how many threads an op gets.
enum class CostClass {
  kLinear,          // the elements read and written
  kTranscendental,  // plus a transcendental function per result element
  kPow,             // plus pow per result element
  kRandom,          // plus a Philox draw (and a transform) per variate
  kMatrix,          // plus one multiply-add per entry of the attr matrix
  kUserKernel,      // unknown: a multiple of the elements read and written
};

enum class Primitive : int {
#define PRIMITIVE(Enum, name, num_inputs, rule, bit_stable, fusable, cost, op, cxx, doc) Enum,
#include "ir/primitives.def"
#undef PRIMITIVE
  kUserKernel,  // a registered user kernel, named by the op's attributes
};

// One row of ir/primitives.def (its header explains the columns).
struct PrimitiveInfo {
  std::string_view name;
  int num_inputs;  // -1 = one or more
  TypeRule rule;
  bool bit_stable;
  bool fusable;
  CostClass cost;
  std::string_view op;   // the frontend's C++ operator, or empty
  std::string_view cxx;  // the generated C++ where generic, or empty
  std::string_view doc;
};

// Every built-in primitive, in table order (kUserKernel excluded).
std::span<const PrimitiveInfo> AllPrimitives();
const PrimitiveInfo& Info(Primitive prim);  // also defined for kUserKernel
inline std::string_view PrimitiveName(Primitive p) { return Info(p).name; }
std::optional<Primitive> PrimitiveFromName(std::string_view name);
inline int NumBuiltinPrimitives() {
  return static_cast<int>(Primitive::kUserKernel);
}
// Whether an op of `prim` is an expensive kernel (a matrix product or a user
// kernel): RunsExpensiveKernel (ir/ir.h).
inline bool IsExpensive(Primitive prim) {
  const CostClass cost = Info(prim).cost;
  return cost == CostClass::kMatrix || cost == CostClass::kUserKernel;
}

}  // namespace autobatch

#endif  // AUTOBATCH_IR_PRIMITIVES_H_
