// Tests of RunPrimitive: one definition per lane, accuracy, totality on junk,
// documented edge-case values, randomness, user kernels and input checks.
#include "backends/kernels.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backends/kernel_registry.h"
#include "backends/random.h"
#include "backends/tensor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "support/math/math.h"
#include "tests/backends/test_util.h"

namespace autobatch {
namespace {

using ::autobatch::testing::LaneHex;
using ::autobatch::testing::MakeOp;
using ::autobatch::testing::RunAll;
using ::autobatch::testing::RunOneLane;
using ::autobatch::testing::ValueGen;
using ::testing::HasSubstr;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

template <typename T>
Tensor Make(const std::vector<T>& values, std::vector<int64_t> shape = {}) {
  absl::StatusOr<Tensor> t = Tensor::FromVector(values, std::move(shape));
  AB_CHECK(t.ok());
  return *std::move(t);
}

// A bool tensor holding the given raw bytes (junk allowed).
Tensor BoolBytes(const std::vector<uint8_t>& bytes, std::vector<int64_t> shape = {}) {
  TensorType type{DType::kBool, std::move(shape)};
  Tensor t(type, static_cast<int64_t>(bytes.size()) / type.NumElements());
  std::memcpy(t.bytes(), bytes.data(), bytes.size());
  return t;
}

std::vector<uint8_t> RawBytes(const Tensor& t) {
  const auto* p = reinterpret_cast<const uint8_t*>(t.bytes());
  return std::vector<uint8_t>(p, p + t.size_bytes());
}

// Runs op over the inputs (batch from the first input, or `batch`) and
// returns the output tensor; the run must succeed.
Tensor Eval(const PrimOp& op, const std::vector<const Tensor*>& ins,
            const TensorType& out_type, int64_t batch = -1,
            const KernelRegistry* kernels = nullptr) {
  if (batch < 0) batch = ins.empty() ? 1 : ins[0]->batch();
  Tensor out(out_type, batch);
  absl::Status s = RunAll(op, ins, &out, kernels);
  EXPECT_TRUE(s.ok()) << s;
  return out;
}

template <typename T>
bool SameBits(T a, T b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

// Distance in units in the last place (via the monotone integer order).
template <typename T>
__int128 Ordered(T x) {
  if constexpr (sizeof(T) == 8) {
    int64_t i = std::bit_cast<int64_t>(x);
    return i < 0 ? -static_cast<__int128>(i & std::numeric_limits<int64_t>::max()) : i;
  } else {
    int32_t i = std::bit_cast<int32_t>(x);
    return i < 0 ? -static_cast<__int128>(i & std::numeric_limits<int32_t>::max()) : i;
  }
}
template <typename T>
double UlpDistance(T a, T b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b) ? 0 : 1e300;
  if (std::isinf(a) || std::isinf(b)) return a == b ? 0 : 1e300;
  __int128 d = Ordered(a) - Ordered(b);
  return static_cast<double>(d < 0 ? -d : d);
}

// ---------------------------------------------------------------------------
// One definition per lane.

// Builds a pool of `pool` lanes per input (values from ValueGen, a quarter of
// the lanes junk, the first lanes overwritten by `specials`), computes every
// lane alone, then runs batches of 1, 3, 17 and 1000 lanes drawn from the
// pool at every offset, and requires every lane's bits to equal its
// single-lane bits.
void ExpectOneDefinition(const PrimOp& op, const std::vector<TensorType>& in_types,
                         const TensorType& out_type, uint64_t seed,
                         const std::vector<double>& specials = {}) {
  constexpr int64_t kPool = 1000;
  ValueGen gen(seed);
  std::vector<Tensor> pool;
  std::vector<uint8_t> junk(kPool);
  for (auto& j : junk) j = gen.Coin(0.25);
  for (const TensorType& t : in_types) {
    pool.emplace_back(t, kPool);
    gen.FillTensor(&pool.back(), junk);
    if (IsFloat(t.dtype)) {
      const int64_t n = std::min<int64_t>(static_cast<int64_t>(specials.size()),
                                          kPool * t.NumElements());
      for (int64_t i = 0; i < n; ++i) {
        if (t.dtype == DType::kF64) {
          pool.back().data<double>()[i] = specials[i];
        } else {
          pool.back().data<float>()[i] = static_cast<float>(specials[i]);
        }
      }
    }
  }
  std::vector<const Tensor*> pool_ptrs;
  for (const Tensor& t : pool) pool_ptrs.push_back(&t);
  Tensor reference(out_type, kPool);
  for (int64_t l = 0; l < kPool; ++l) {
    absl::Status s;
    std::vector<std::byte> bytes = RunOneLane(op, pool_ptrs, out_type, l, nullptr, &s);
    ASSERT_TRUE(s.ok()) << s;
    std::memcpy(reference.lane_bytes_ptr(l), bytes.data(), bytes.size());
  }
  int64_t mismatches = 0;
  std::string first;
  for (int64_t batch : {1, 3, 17, 1000}) {
    std::vector<int64_t> offsets;
    if (batch < 1000) {
      for (int64_t s = 0; s < kPool; ++s) offsets.push_back(s);
    } else {
      for (int64_t s = 0; s < 17; ++s) offsets.push_back(s);
      offsets.push_back(501);
    }
    std::vector<Tensor> ins;
    for (const TensorType& t : in_types) ins.emplace_back(t, batch);
    std::vector<const Tensor*> in_ptrs;
    for (const Tensor& t : ins) in_ptrs.push_back(&t);
    Tensor out(out_type, batch);
    for (int64_t offset : offsets) {
      for (size_t k = 0; k < ins.size(); ++k) {
        for (int64_t j = 0; j < batch; ++j) {
          ins[k].CopyLaneFrom(pool[k], (offset + j) % kPool, j);
        }
      }
      absl::Status s = RunAll(op, in_ptrs, &out);
      ASSERT_TRUE(s.ok()) << s;
      for (int64_t j = 0; j < batch; ++j) {
        const int64_t src = (offset + j) % kPool;
        if (!testing::LaneBytesEqual(out, j, reference.lane_bytes_ptr(src))) {
          if (mismatches++ == 0) {
            first = absl::StrCat("batch ", batch, " offset ", offset, " lane ", j,
                                 ": got ", LaneHex(out.lane_bytes_ptr(j), out.lane_bytes()),
                                 ", alone ",
                                 LaneHex(reference.lane_bytes_ptr(src), out.lane_bytes()));
          }
        }
      }
    }
  }
  EXPECT_EQ(mismatches, 0) << PrimitiveName(op.prim) << " " << out_type.ToString()
                           << ": first mismatch at " << first;
}

const std::vector<double>& TranscendentalSpecials() {
  static const std::vector<double> kValues = {
      -745.2, -745.0, -740.0, -720.5, -709.9, -709.7, -708.5, -708.3964185322641,
      -708.39, -700.0, -103.9, -100.5, -88.0, -87.4, 88.7, 89.0, 709.78, 710.0,
      -1.0, -0.999999, -0.5, 5e-324, 1e-310, 2.2250738585072014e-308, 1e-300,
      1e-20, -1e-20, 1.0, 2.0, 0.5, 19.0, 20.0, 40.0, -40.0, kInf, -kInf, kNaN,
      0.0, -0.0, 1e308};
  return kValues;
}

TEST(OneDefinitionTest, FloatUnaryPrimitivesAreBitIdenticalAcrossBatches) {
  const Primitive kPrims[] = {
      Primitive::kExp,     Primitive::kLog,      Primitive::kLog1p,    Primitive::kExpm1,
      Primitive::kTanh,    Primitive::kSqrt,     Primitive::kFloor,    Primitive::kNeg,
      Primitive::kAbs,     Primitive::kSin,      Primitive::kCos,      Primitive::kAtan,
      Primitive::kLgamma,  Primitive::kErfc,     Primitive::kDigamma,  Primitive::kLog1pExp,
      Primitive::kLogistic, Primitive::kTrigamma};
  uint64_t seed = 1;
  for (Primitive prim : kPrims) {
    for (DType d : {DType::kF64, DType::kF32}) {
      for (std::vector<int64_t> shape : {std::vector<int64_t>{}, std::vector<int64_t>{3}}) {
        TensorType t{d, shape};
        ExpectOneDefinition(MakeOp(prim, 1), {t}, t, seed++, TranscendentalSpecials());
      }
    }
  }
}

// The transcendental primitives are support/math/math.h's functions, bit for
// bit: f64 as they are, f32 widened and rounded once.
TEST(OneDefinitionTest, TranscendentalsAreTheSupportMathFunctions) {
  const std::pair<Primitive, math::Fn> kPairs[] = {
      {Primitive::kExp, math::Fn::kExp},         {Primitive::kLog, math::Fn::kLog},
      {Primitive::kLog1p, math::Fn::kLog1p},     {Primitive::kExpm1, math::Fn::kExpm1},
      {Primitive::kTanh, math::Fn::kTanh},       {Primitive::kSin, math::Fn::kSin},
      {Primitive::kCos, math::Fn::kCos},         {Primitive::kAtan, math::Fn::kAtan},
      {Primitive::kLgamma, math::Fn::kLgamma},   {Primitive::kErfc, math::Fn::kErfc},
      {Primitive::kDigamma, math::Fn::kDigamma}, {Primitive::kLog1pExp, math::Fn::kLog1pExp},
      {Primitive::kLogistic, math::Fn::kLogistic}, {Primitive::kTrigamma, math::Fn::kTrigamma}};
  ValueGen gen(77);
  std::vector<double> xs = TranscendentalSpecials();
  for (int i = 0; i < 1000; ++i) xs.push_back(gen.Uniform(-30, 30));
  const Tensor in64 = Make(xs);
  std::vector<float> narrow(xs.begin(), xs.end());
  const Tensor in32 = Make(narrow);
  for (const auto& [prim, fn] : kPairs) {
    const std::vector<double> got = Eval(MakeOp(prim, 1), {&in64}, in64.type()).ToVector<double>();
    const std::vector<float> got32 =
        Eval(MakeOp(prim, 1), {&in32}, in32.type()).ToVector<float>();
    for (size_t i = 0; i < xs.size(); ++i) {
      ASSERT_TRUE(SameBits(got[i], math::Eval(fn, xs[i]))) << PrimitiveName(prim) << " " << xs[i];
      const float want32 = static_cast<float>(math::Eval(fn, static_cast<double>(narrow[i])));
      ASSERT_TRUE(SameBits(got32[i], want32 != want32 ? std::numeric_limits<float>::quiet_NaN()
                                                      : want32))
          << PrimitiveName(prim) << " f32 " << narrow[i];
    }
  }
  // pow, with a scalar operand broadcast either way.
  const Tensor base = Make(std::vector<double>{-2.0, 0.5, 3.0, kInf, kNaN, 1.0}, {6});
  const Tensor two = Make(std::vector<double>{2.5});
  const std::vector<double> pow_got =
      Eval(MakeOp(Primitive::kPow, 2), {&base, &two}, base.type()).ToVector<double>();
  const std::vector<double> pow_rev =
      Eval(MakeOp(Primitive::kPow, 2), {&two, &base}, base.type()).ToVector<double>();
  const std::vector<double> b = base.ToVector<double>();
  for (size_t i = 0; i < b.size(); ++i) {
    EXPECT_TRUE(SameBits(pow_got[i], math::Pow(b[i], 2.5))) << b[i];
    EXPECT_TRUE(SameBits(pow_rev[i], math::Pow(2.5, b[i]))) << b[i];
  }
  // log_sum_exp per lane.
  const Tensor lanes = Make(std::vector<double>{1, 2, 3, -kInf, -kInf, -kInf, 0, kInf, 5},
                            {3});
  const std::vector<double> lse =
      Eval(MakeOp(Primitive::kLogSumExp, 1), {&lanes}, Scalar(DType::kF64)).ToVector<double>();
  const std::vector<double> lv = lanes.ToVector<double>();
  ASSERT_EQ(lse.size(), 3u);
  for (size_t l = 0; l < 3; ++l) {
    EXPECT_TRUE(SameBits(lse[l], math::LogSumExp(lv.data() + 3 * l, 3))) << l;
  }
  EXPECT_EQ(lse[1], -kInf);
  EXPECT_EQ(lse[2], kInf);
}

TEST(OneDefinitionTest, FloatBinaryPrimitivesAreBitIdenticalAcrossBatches) {
  const Primitive kPrims[] = {Primitive::kPow, Primitive::kAdd, Primitive::kSub,
                              Primitive::kMul, Primitive::kDiv, Primitive::kMod,
                              Primitive::kMin, Primitive::kMax, Primitive::kLt,
                              Primitive::kEq,  Primitive::kNe};
  uint64_t seed = 100;
  for (Primitive prim : kPrims) {
    const bool compare = Info(prim).rule == TypeRule::kCompare;
    for (DType d : {DType::kF64, DType::kF32}) {
      const TensorType s{d, {}}, v{d, {3}};
      const std::pair<TensorType, TensorType> kShapes[] = {{s, s}, {v, v}, {s, v}, {v, s}};
      for (const auto& [a, b] : kShapes) {
        TensorType out{compare ? DType::kBool : d, a.IsScalar() ? b.shape : a.shape};
        ExpectOneDefinition(MakeOp(prim, 2), {a, b}, out, seed++, TranscendentalSpecials());
      }
    }
  }
}

TEST(OneDefinitionTest, ReductionsCastsAndMatVecAreBitIdenticalAcrossBatches) {
  uint64_t seed = 200;
  for (DType d : {DType::kF64, DType::kF32}) {
    const TensorType v{d, {5}};
    const TensorType s{d, {}};
    ExpectOneDefinition(MakeOp(Primitive::kReduceSum, 1), {v}, s, seed++);
    ExpectOneDefinition(MakeOp(Primitive::kSquaredNorm, 1), {v}, s, seed++);
    ExpectOneDefinition(MakeOp(Primitive::kDot, 2), {v, v}, s, seed++);
    ExpectOneDefinition(MakeOp(Primitive::kLogSumExp, 1), {v}, s, seed++,
                        TranscendentalSpecials());
    for (DType to : kAllDTypes) {
      Attributes attrs;
      attrs.dtype = to;
      ExpectOneDefinition(MakeOp(Primitive::kCast, 1, attrs), {v}, TensorType{to, {5}},
                          seed++, TranscendentalSpecials());
    }
    auto m = std::make_shared<DenseMatrix>();
    m->rows = 4;
    m->cols = 5;
    ValueGen gen(seed++);
    for (int i = 0; i < 20; ++i) m->data.push_back(gen.Uniform(-2, 2));
    Attributes attrs;
    attrs.matrix = m;
    ExpectOneDefinition(MakeOp(Primitive::kMatVec, 1, attrs), {v}, TensorType{d, {4}},
                        seed++);
  }
}

// ---------------------------------------------------------------------------
// Accuracy of the transcendental functions.

struct AccuracyCase {
  Primitive prim;
  long double (*reference)(long double);
  double lo, hi;
  bool log_uniform;  // draw |x| log-uniformly in [lo, hi] (positive)
};

template <typename T>
void ExpectAccurate(const AccuracyCase& c, double max_ulps, uint64_t seed) {
  ValueGen gen(seed);
  std::vector<T> xs;
  for (int i = 0; i < 20000; ++i) {
    double x = c.log_uniform ? std::exp(gen.Uniform(std::log(c.lo), std::log(c.hi)))
                             : gen.Uniform(c.lo, c.hi);
    xs.push_back(static_cast<T>(x));
  }
  for (double x : TranscendentalSpecials()) xs.push_back(static_cast<T>(x));
  xs.push_back(std::numeric_limits<T>::denorm_min());
  xs.push_back(std::numeric_limits<T>::min());
  xs.push_back(std::numeric_limits<T>::max());
  Tensor in = Make(xs);
  Tensor out = Eval(MakeOp(c.prim, 1), {&in}, in.type());
  std::vector<T> ys = out.ToVector<T>();
  double worst = 0;
  int reported = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    const T want = static_cast<T>(c.reference(static_cast<long double>(xs[i])));
    const double ulps = UlpDistance(ys[i], want);
    worst = std::max(worst, ulps);
    if (ulps > max_ulps && reported++ < 5) {
      ADD_FAILURE() << PrimitiveName(c.prim) << "(" << xs[i] << ") = " << ys[i]
                    << ", correctly rounded " << want << " (" << ulps << " ulps)";
    }
  }
  ::testing::Test::RecordProperty(std::string(PrimitiveName(c.prim)) + (sizeof(T) == 8 ? "_f64" : "_f32"),
                 std::to_string(worst));
}

long double Expl(long double x) { return std::exp(x); }
long double Logl(long double x) { return std::log(x); }
long double Log1pl(long double x) { return std::log1p(x); }
long double Expm1l(long double x) { return std::expm1(x); }
long double Tanhl(long double x) { return std::tanh(x); }
long double Sqrtl(long double x) { return std::sqrt(x); }
long double Sinl(long double x) { return std::sin(x); }
long double Cosl(long double x) { return std::cos(x); }
long double Atanl(long double x) { return std::atan(x); }
long double Lgammal(long double x) { return std::lgamma(x); }
long double Erfcl(long double x) { return std::erfc(x); }
long double Log1pExpl(long double x) {
  return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
}
long double Logisticl(long double x) { return 1 / (1 + std::exp(-x)); }

TEST(AccuracyTest, TranscendentalsAreWithinAFewUlps) {
  const AccuracyCase kCases[] = {
      {Primitive::kExp, Expl, -760, 720, false},
      {Primitive::kExp, Expl, -5, 5, false},
      {Primitive::kLog, Logl, 1e-320, 1e308, true},
      {Primitive::kLog, Logl, 0.5, 2, false},
      {Primitive::kLog1p, Log1pl, -1, 1, false},
      {Primitive::kLog1p, Log1pl, 1e-300, 1e300, true},
      {Primitive::kExpm1, Expm1l, -50, 50, false},
      {Primitive::kExpm1, Expm1l, 1e-300, 1e-3, true},
      {Primitive::kTanh, Tanhl, -25, 25, false},
      {Primitive::kSqrt, Sqrtl, 1e-320, 1e308, true},
      {Primitive::kSin, Sinl, -50, 50, false},
      {Primitive::kCos, Cosl, -50, 50, false},
      {Primitive::kAtan, Atanl, -1e6, 1e6, false},
      {Primitive::kLgamma, Lgammal, 2.5, 1e6, true},
      {Primitive::kErfc, Erfcl, -5, 26, false},
      {Primitive::kLog1pExp, Log1pExpl, -700, 700, false},
      {Primitive::kLogistic, Logisticl, -700, 700, false},
  };
  uint64_t seed = 300;
  for (const AccuracyCase& c : kCases) {
    // The long double reference rounds twice, so even sqrt may be 1 ulp off it.
    ExpectAccurate<double>(c, /*max_ulps=*/c.prim == Primitive::kSqrt ? 1 : 3, seed++);
    // f32 is computed in f64 and rounded once more: at most 1 ulp off.
    ExpectAccurate<float>(c, /*max_ulps=*/c.prim == Primitive::kSqrt ? 0 : 1, seed++);
  }
}

TEST(AccuracyTest, TranscendentalSpecialValuesAreExact) {
  struct Expect {
    Primitive prim;
    double x, want;
  };
  const Expect kCases[] = {
      {Primitive::kExp, -kInf, 0.0},          {Primitive::kExp, -1000, 0.0},
      {Primitive::kExp, kInf, kInf},          {Primitive::kExp, 710, kInf},
      {Primitive::kExp, 0.0, 1.0},            {Primitive::kExp, kNaN, kNaN},
      {Primitive::kExp, -745.2, 0.0},         {Primitive::kExp, -745.0, 5e-324},
      {Primitive::kLog, 0.0, -kInf},          {Primitive::kLog, -0.0, -kInf},
      {Primitive::kLog, -1.0, kNaN},          {Primitive::kLog, kInf, kInf},
      {Primitive::kLog, 1.0, 0.0},            {Primitive::kLog, kNaN, kNaN},
      {Primitive::kLog1p, -1.0, -kInf},       {Primitive::kLog1p, -2.0, kNaN},
      {Primitive::kLog1p, kInf, kInf},        {Primitive::kLog1p, 0.0, 0.0},
      {Primitive::kExpm1, -kInf, -1.0},       {Primitive::kExpm1, kInf, kInf},
      {Primitive::kExpm1, 0.0, 0.0},          {Primitive::kTanh, kInf, 1.0},
      {Primitive::kTanh, -kInf, -1.0},        {Primitive::kTanh, 0.0, 0.0},
      {Primitive::kSqrt, -1.0, kNaN},         {Primitive::kSqrt, kInf, kInf},
      {Primitive::kSqrt, 4.0, 2.0},           {Primitive::kFloor, -2.5, -3.0},
      {Primitive::kFloor, kInf, kInf},        {Primitive::kFloor, 2.0, 2.0},
      {Primitive::kSin, kInf, kNaN},          {Primitive::kCos, 0.0, 1.0},
      {Primitive::kAtan, kInf, 1.5707963267948966}, {Primitive::kLgamma, 0.0, kInf},
      {Primitive::kLgamma, -2.0, kInf},       {Primitive::kErfc, -kInf, 2.0},
      {Primitive::kErfc, kInf, 0.0},          {Primitive::kDigamma, -1.0, kNaN},
      {Primitive::kDigamma, kInf, kInf},      {Primitive::kLog1pExp, kInf, kInf},
      {Primitive::kLog1pExp, -kInf, 0.0},     {Primitive::kLog1pExp, 1e300, 1e300},
      {Primitive::kLogistic, kInf, 1.0},      {Primitive::kLogistic, -kInf, 0.0},
      {Primitive::kLogistic, 0.0, 0.5},
  };
  for (const Expect& c : kCases) {
    for (DType d : {DType::kF64, DType::kF32}) {
      Tensor in = d == DType::kF64 ? Make(std::vector<double>{c.x})
                                   : Make(std::vector<float>{static_cast<float>(c.x)});
      Tensor out = Eval(MakeOp(c.prim, 1), {&in}, in.type());
      double got = d == DType::kF64 ? out.ToVector<double>()[0] : out.ToVector<float>()[0];
      if (std::isnan(c.want)) {
        EXPECT_TRUE(std::isnan(got)) << PrimitiveName(c.prim) << "(" << c.x << ") = " << got;
      } else {
        // exp(-745) is subnormal in f64 and 0 in f32.
        double want = d == DType::kF32 ? static_cast<float>(c.want) : c.want;
        EXPECT_EQ(got, want) << PrimitiveName(c.prim) << "(" << c.x << ") " << DTypeName(d);
        EXPECT_EQ(std::signbit(got), std::signbit(want));
      }
    }
  }
}

TEST(AccuracyTest, SqrtIsCorrectlyRounded) {
  ValueGen gen(399);
  std::vector<double> xs;
  for (int i = 0; i < 20000; ++i) xs.push_back(std::exp(gen.Uniform(-700, 700)));
  Tensor in = Make(xs);
  std::vector<double> got = Eval(MakeOp(Primitive::kSqrt, 1), {&in}, in.type()).ToVector<double>();
  for (size_t i = 0; i < xs.size(); ++i) {
    ASSERT_TRUE(SameBits(got[i], std::sqrt(xs[i]))) << "sqrt(" << xs[i] << ")";
  }
}

// pow is SLEEF's (support/math/math.h): within 1 ulp of the exact value, and
// C99 Annex F's special values, as the C library's pow.
TEST(AccuracyTest, PowIsAccurateWithTheC99SpecialValues) {
  ValueGen gen(400);
  std::vector<double> a, b;
  for (int i = 0; i < 5000; ++i) {
    a.push_back(std::exp(gen.Uniform(-7, 7)));
    b.push_back(gen.Uniform(-20, 20));
  }
  const size_t random = a.size();  // the rest: the special values' grid
  const double kA[] = {0.0, -0.0, -8.0, -1.0, 1.0, kInf, -kInf, kNaN, 2.0, 0.5};
  const double kB[] = {-1.0, 0.0, -0.0, 1.0 / 3, kInf, -kInf, kNaN, 0.5, 3.0, -3.0, 2.0};
  for (double x : kA) {
    for (double y : kB) {
      a.push_back(x);
      b.push_back(y);
    }
  }
  Tensor ta = Make(a), tb = Make(b);
  std::vector<double> got = Eval(MakeOp(Primitive::kPow, 2), {&ta, &tb}, ta.type())
                                .ToVector<double>();
  for (size_t i = 0; i < a.size(); ++i) {
    const double want = std::pow(a[i], b[i]);
    if (i < random || (std::isfinite(want) && want != 0)) {
      const long double exact =
          std::pow(static_cast<long double>(a[i]), static_cast<long double>(b[i]));
      const double w = static_cast<double>(exact);
      const double ulp = std::nextafter(std::fabs(w), kInf) - std::fabs(w);
      EXPECT_LE(std::fabs(static_cast<long double>(got[i]) - exact), ulp)
          << "pow(" << a[i] << ", " << b[i] << ") = " << got[i];
    } else {  // 0, infinities and NaN exactly as C99 says
      EXPECT_TRUE(SameBits(got[i], want) || (std::isnan(got[i]) && std::isnan(want)))
          << "pow(" << a[i] << ", " << b[i] << ") = " << got[i] << ", want " << want;
    }
  }
}

// ---------------------------------------------------------------------------
// Totality and integer semantics.

// The documented integer semantics, computed independently in 128 bits.
template <typename T>
T Wrap(__int128 v) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(static_cast<unsigned __int128>(v)));
}
template <typename T>
T WrapProduct(__int128 x, __int128 y) {  // unsigned: the product may exceed 2^127
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(static_cast<unsigned __int128>(x) *
                                       static_cast<unsigned __int128>(y)));
}

template <typename T>
T ReferenceBinary(Primitive p, T a, T b) {
  const __int128 x = a, y = b;
  switch (p) {
    case Primitive::kAdd: return Wrap<T>(x + y);
    case Primitive::kSub: return Wrap<T>(x - y);
    case Primitive::kMul: return WrapProduct<T>(x, y);
    case Primitive::kDiv: return y == 0 ? T{0} : Wrap<T>(x / y);
    case Primitive::kMod: return y == 0 ? a : Wrap<T>(x % y);
    case Primitive::kMin: return a < b ? a : b;
    case Primitive::kMax: return a > b ? a : b;
    default: AB_CHECK(false);
  }
  return T{};
}

template <typename T>
void ExpectIntegerSemantics(DType d) {
  std::vector<T> values = {T(0), T(1), T(2), T(3), T(7), static_cast<T>(-1),
                           static_cast<T>(-2), static_cast<T>(-7),
                           std::numeric_limits<T>::min(), std::numeric_limits<T>::max(),
                           static_cast<T>(std::numeric_limits<T>::min() + 1),
                           static_cast<T>(std::numeric_limits<T>::max() - 1),
                           static_cast<T>(123456789), static_cast<T>(-987654321)};
  std::vector<T> a, b;
  for (T x : values) {
    for (T y : values) {
      a.push_back(x);
      b.push_back(y);
    }
  }
  Tensor ta = Make(a), tb = Make(b);
  for (Primitive p : {Primitive::kAdd, Primitive::kSub, Primitive::kMul, Primitive::kDiv,
                      Primitive::kMod, Primitive::kMin, Primitive::kMax}) {
    std::vector<T> got = Eval(MakeOp(p, 2), {&ta, &tb}, Scalar(d)).template ToVector<T>();
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(got[i], ReferenceBinary<T>(p, a[i], b[i]))
          << PrimitiveName(p) << "(" << static_cast<int64_t>(a[i]) << ", "
          << static_cast<int64_t>(b[i]) << ") " << DTypeName(d);
    }
  }
  const struct {
    Primitive prim;
    bool (*ref)(T, T);
  } kCompares[] = {
      {Primitive::kLt, [](T x, T y) { return x < y; }},
      {Primitive::kLe, [](T x, T y) { return x <= y; }},
      {Primitive::kGt, [](T x, T y) { return x > y; }},
      {Primitive::kGe, [](T x, T y) { return x >= y; }},
      {Primitive::kEq, [](T x, T y) { return x == y; }},
      {Primitive::kNe, [](T x, T y) { return x != y; }},
  };
  for (const auto& c : kCompares) {
    std::vector<uint8_t> got = RawBytes(Eval(MakeOp(c.prim, 2), {&ta, &tb}, Scalar(DType::kBool)));
    for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(got[i], c.ref(a[i], b[i]) ? 1 : 0);
  }
  Tensor tv = Make(values);
  std::vector<T> neg = Eval(MakeOp(Primitive::kNeg, 1), {&tv}, Scalar(d)).template ToVector<T>();
  std::vector<T> abs = Eval(MakeOp(Primitive::kAbs, 1), {&tv}, Scalar(d)).template ToVector<T>();
  for (size_t i = 0; i < values.size(); ++i) {
    const __int128 v = values[i];
    EXPECT_EQ(neg[i], Wrap<T>(-v));
    EXPECT_EQ(abs[i], std::is_signed_v<T> && v < 0 ? Wrap<T>(-v) : values[i]);
  }
}

TEST(IntegerTest, AllPairsOfEdgeValuesFollowTheDocumentedSemantics) {
  ExpectIntegerSemantics<int32_t>(DType::kI32);
  ExpectIntegerSemantics<int64_t>(DType::kI64);
  ExpectIntegerSemantics<uint64_t>(DType::kU64);
}

TEST(IntegerTest, DocumentedEdgeCases) {
  const int64_t kMin = std::numeric_limits<int64_t>::min();
  const int64_t kMax = std::numeric_limits<int64_t>::max();
  Tensor a = Make<int64_t>({kMin, 7, 7, kMin, -7, -7, kMax});
  Tensor b = Make<int64_t>({-1, 0, 0, -1, 2, 2, 1});
  std::vector<int64_t> div = Eval(MakeOp(Primitive::kDiv, 2), {&a, &b}, Scalar(DType::kI64)).ToVector<int64_t>();
  std::vector<int64_t> mod = Eval(MakeOp(Primitive::kMod, 2), {&a, &b}, Scalar(DType::kI64)).ToVector<int64_t>();
  std::vector<int64_t> add = Eval(MakeOp(Primitive::kAdd, 2), {&a, &b}, Scalar(DType::kI64)).ToVector<int64_t>();
  EXPECT_EQ(div[0], kMin);  // INT_MIN / -1 = INT_MIN
  EXPECT_EQ(div[1], 0);     // x / 0 = 0
  EXPECT_EQ(mod[2], 7);     // x % 0 = x
  EXPECT_EQ(mod[3], 0);     // INT_MIN % -1 = 0
  EXPECT_EQ(div[4], -3);    // truncation toward zero
  EXPECT_EQ(mod[5], -1);    // sign of the dividend
  EXPECT_EQ(add[6], kMin);  // wraps
  Tensor s = Make<int32_t>({std::numeric_limits<int32_t>::max(), 1, std::numeric_limits<int32_t>::min()}, {3});
  EXPECT_EQ(Eval(MakeOp(Primitive::kReduceSum, 1), {&s}, Scalar(DType::kI32)).ToVector<int32_t>()[0], 0);
  EXPECT_EQ(Eval(MakeOp(Primitive::kSquaredNorm, 1), {&s}, Scalar(DType::kI32)).ToVector<int32_t>()[0], 2);
  EXPECT_EQ(Eval(MakeOp(Primitive::kDot, 2), {&s, &s}, Scalar(DType::kI32)).ToVector<int32_t>()[0], 2);
}

TEST(FloatTest, NaNsAreCanonicalAndMinMaxPropagateThem) {
  const double kPayloadNaN = std::bit_cast<double>(uint64_t{0xfff0000000000123});  // signalling, negative
  const double kCanonical = std::numeric_limits<double>::quiet_NaN();
  Tensor a = Make<double>({kPayloadNaN, 1.0, kPayloadNaN, 0.0, kInf});
  Tensor b = Make<double>({1.0, -kPayloadNaN, 2.0, 0.0, -kInf});
  for (Primitive p : {Primitive::kAdd, Primitive::kSub, Primitive::kMul, Primitive::kDiv,
                      Primitive::kMod, Primitive::kMin, Primitive::kMax, Primitive::kPow}) {
    std::vector<double> got = Eval(MakeOp(p, 2), {&a, &b}, Scalar(DType::kF64)).ToVector<double>();
    for (int i = 0; i < 3; ++i) {
      if (p == Primitive::kPow && i == 1) continue;  // pow(1, NaN) = 1
      EXPECT_TRUE(SameBits(got[i], kCanonical)) << PrimitiveName(p) << " lane " << i;
    }
  }
  std::vector<double> div = Eval(MakeOp(Primitive::kDiv, 2), {&a, &b}, Scalar(DType::kF64)).ToVector<double>();
  EXPECT_TRUE(SameBits(div[3], kCanonical));  // 0 / 0
  std::vector<double> mod = Eval(MakeOp(Primitive::kMod, 2), {&a, &b}, Scalar(DType::kF64)).ToVector<double>();
  EXPECT_TRUE(SameBits(mod[3], kCanonical));  // fmod(0, 0)
  for (Primitive p : {Primitive::kNeg, Primitive::kAbs, Primitive::kExp, Primitive::kLog,
                      Primitive::kSqrt, Primitive::kFloor, Primitive::kTanh}) {
    std::vector<double> got = Eval(MakeOp(p, 1), {&a}, Scalar(DType::kF64)).ToVector<double>();
    EXPECT_TRUE(SameBits(got[0], kCanonical)) << PrimitiveName(p);
  }
  Tensor cmp_a = Make<double>({kNaN, kNaN, 1.0});
  Tensor cmp_b = Make<double>({kNaN, 1.0, kNaN});
  for (Primitive p : {Primitive::kLt, Primitive::kLe, Primitive::kGt, Primitive::kGe, Primitive::kEq}) {
    EXPECT_EQ(RawBytes(Eval(MakeOp(p, 2), {&cmp_a, &cmp_b}, Scalar(DType::kBool))),
              (std::vector<uint8_t>{0, 0, 0}))
        << PrimitiveName(p);
  }
  EXPECT_EQ(RawBytes(Eval(MakeOp(Primitive::kNe, 2), {&cmp_a, &cmp_b}, Scalar(DType::kBool))),
            (std::vector<uint8_t>{1, 1, 1}));
}

// ---------------------------------------------------------------------------
// Casts.

Attributes CastAttrs(DType to) {
  Attributes attrs;
  attrs.dtype = to;
  return attrs;
}

template <typename To>
std::vector<To> CastTo(const Tensor& in) {
  Attributes attrs;
  attrs.dtype = DTypeOf<To>::value;
  return Eval(MakeOp(Primitive::kCast, 1, attrs), {&in},
              TensorType{DTypeOf<To>::value, in.type().shape})
      .template ToVector<To>();
}

TEST(CastTest, FloatToIntegerTruncatesSaturatesAndSendsNaNToZero) {
  const int32_t kI32Min = std::numeric_limits<int32_t>::min();
  const int32_t kI32Max = std::numeric_limits<int32_t>::max();
  const int64_t kI64Min = std::numeric_limits<int64_t>::min();
  const int64_t kI64Max = std::numeric_limits<int64_t>::max();
  const uint64_t kU64Max = std::numeric_limits<uint64_t>::max();
  Tensor x = Make<double>({kNaN, -kNaN, kInf, -kInf, 3e9, -3e9, 2147483647.9, -2147483648.9,
                           3.7, -3.7, -0.0, 9.3e18, -9.3e18, 9223372036854775807.0, -0.5,
                           -1.0, 1.8446744073709552e19, 1e30, 1e-300});
  EXPECT_EQ(CastTo<int32_t>(x),
            (std::vector<int32_t>{0, 0, kI32Max, kI32Min, kI32Max, kI32Min, kI32Max, kI32Min,
                                  3, -3, 0, kI32Max, kI32Min, kI32Max, 0, -1, kI32Max,
                                  kI32Max, 0}));
  EXPECT_EQ(CastTo<int64_t>(x),
            (std::vector<int64_t>{0, 0, kI64Max, kI64Min, 3000000000, -3000000000, 2147483647,
                                  -2147483648, 3, -3, 0, kI64Max, kI64Min, kI64Max, 0, -1,
                                  kI64Max, kI64Max, 0}));
  EXPECT_EQ(CastTo<uint64_t>(x),
            (std::vector<uint64_t>{0, 0, kU64Max, 0, 3000000000, 0, 2147483647, 0, 3, 0, 0,
                                   9300000000000000000u, 0, 9223372036854775808u, 0, 0,
                                   kU64Max, kU64Max, 0}));
  Tensor f = Make<float>({std::nanf(""), 3e9f, -3e9f, -2.5f, 1e20f});
  EXPECT_EQ(CastTo<int32_t>(f), (std::vector<int32_t>{0, kI32Max, kI32Min, -2, kI32Max}));
  EXPECT_EQ(CastTo<uint64_t>(f), (std::vector<uint64_t>{0, 3000000000, 0, 0, kU64Max}));
}

TEST(CastTest, BoolIntegerAndFloatConversions) {
  Tensor x = Make<double>({kNaN, 0.0, -0.0, 1e-300, -kInf});
  EXPECT_EQ(RawBytes(Eval(MakeOp(Primitive::kCast, 1, CastAttrs(DType::kBool)), {&x},
                          Scalar(DType::kBool))),
            (std::vector<uint8_t>{1, 0, 0, 1, 1}));
  Tensor i = Make<int64_t>({(int64_t{1} << 40) + 5, -1, int64_t{0x80000000}, 0});
  EXPECT_EQ(CastTo<int32_t>(i), (std::vector<int32_t>{5, -1, std::numeric_limits<int32_t>::min(), 0}));
  EXPECT_EQ(CastTo<uint64_t>(i),
            (std::vector<uint64_t>{(uint64_t{1} << 40) + 5, std::numeric_limits<uint64_t>::max(),
                                   0x80000000u, 0}));
  Tensor u = Make<uint64_t>({std::numeric_limits<uint64_t>::max(), 5});
  EXPECT_EQ(CastTo<int64_t>(u), (std::vector<int64_t>{-1, 5}));
  EXPECT_EQ(CastTo<int32_t>(u), (std::vector<int32_t>{-1, 5}));
  EXPECT_EQ(CastTo<float>(u), (std::vector<float>{1.8446744e19f, 5.0f}));
  Tensor junk_bool = BoolBytes({0, 1, 2, 255});
  EXPECT_EQ(CastTo<int32_t>(junk_bool), (std::vector<int32_t>{0, 1, 1, 1}));
  EXPECT_EQ(CastTo<double>(junk_bool), (std::vector<double>{0, 1, 1, 1}));
  EXPECT_EQ(RawBytes(Eval(MakeOp(Primitive::kCast, 1, CastAttrs(DType::kBool)), {&junk_bool},
                          Scalar(DType::kBool))),
            (std::vector<uint8_t>{0, 1, 1, 1}));
  Tensor big = Make<double>({1e300, -1e300, 1.0000000001});
  EXPECT_EQ(CastTo<float>(big), (std::vector<float>{std::numeric_limits<float>::infinity(),
                                                    -std::numeric_limits<float>::infinity(), 1.0f}));
}

TEST(CastTest, EveryPairOfDTypesIsTotalOnJunk) {
  ValueGen gen(500);
  for (DType from : kAllDTypes) {
    Tensor in(TensorType{from, {}}, 2000);
    gen.FillTensor(&in, std::vector<uint8_t>(2000, 1));
    for (DType to : kAllDTypes) {
      Attributes attrs;
      attrs.dtype = to;
      Tensor out = Eval(MakeOp(Primitive::kCast, 1, attrs), {&in}, Scalar(to));
      if (to == DType::kBool) {
        for (uint8_t byte : RawBytes(out)) EXPECT_LE(byte, 1);
      }
    }
  }
}

// ---------------------------------------------------------------------------
// Bool inputs with junk bytes.

TEST(BoolTest, AnyNonzeroByteIsTrue) {
  Tensor a = BoolBytes({2, 0, 255, 0, 7});
  Tensor b = BoolBytes({4, 9, 0, 0, 1});
  EXPECT_EQ(RawBytes(Eval(MakeOp(Primitive::kAnd, 2), {&a, &b}, Scalar(DType::kBool))),
            (std::vector<uint8_t>{1, 0, 0, 0, 1}));
  EXPECT_EQ(RawBytes(Eval(MakeOp(Primitive::kOr, 2), {&a, &b}, Scalar(DType::kBool))),
            (std::vector<uint8_t>{1, 1, 1, 0, 1}));
  EXPECT_EQ(RawBytes(Eval(MakeOp(Primitive::kNot, 1), {&a}, Scalar(DType::kBool))),
            (std::vector<uint8_t>{0, 1, 0, 1, 0}));
  EXPECT_EQ(RawBytes(Eval(MakeOp(Primitive::kEq, 2), {&a, &b}, Scalar(DType::kBool))),
            (std::vector<uint8_t>{1, 0, 0, 1, 1}));
  EXPECT_EQ(RawBytes(Eval(MakeOp(Primitive::kLt, 2), {&a, &b}, Scalar(DType::kBool))),
            (std::vector<uint8_t>{0, 1, 0, 0, 0}));
  Tensor x = Make<double>({1, 2, 3, 4, 5});
  Tensor y = Make<double>({-1, -2, -3, -4, -5});
  EXPECT_EQ(Eval(MakeOp(Primitive::kSelect, 3), {&a, &x, &y}, Scalar(DType::kF64)).ToVector<double>(),
            (std::vector<double>{1, -2, 3, -4, 5}));
}

// ---------------------------------------------------------------------------
// Constants and data movement.

TEST(DataMovementTest, ConstantConvertsAndBroadcastsTheLiteral) {
  Attributes attrs;
  attrs.literal = Literal{TensorType{DType::kF32, {2}}, {1.5, -0.1}, {}};
  EXPECT_EQ(Eval(MakeOp(Primitive::kConstant, 0, attrs), {}, TensorType{DType::kF32, {2}}, 3)
                .ToVector<float>(),
            (std::vector<float>{1.5f, -0.1f, 1.5f, -0.1f, 1.5f, -0.1f}));
  attrs.literal = Literal{TensorType{DType::kU64, {}}, {}, {-1}};
  EXPECT_EQ(Eval(MakeOp(Primitive::kConstant, 0, attrs), {}, Scalar(DType::kU64), 2)
                .ToVector<uint64_t>(),
            (std::vector<uint64_t>{~uint64_t{0}, ~uint64_t{0}}));
  attrs.literal = Literal{TensorType{DType::kI32, {3}}, {}, {7}};  // one value, broadcast
  EXPECT_EQ(Eval(MakeOp(Primitive::kConstant, 0, attrs), {}, TensorType{DType::kI32, {3}}, 1)
                .ToVector<int32_t>(),
            (std::vector<int32_t>{7, 7, 7}));
  attrs.literal = Literal::Bool(true);
  EXPECT_EQ(RawBytes(Eval(MakeOp(Primitive::kConstant, 0, attrs), {}, Scalar(DType::kBool), 2)),
            (std::vector<uint8_t>{1, 1}));
}

TEST(DataMovementTest, ConstantFillsEveryLaneOfAnyBatch) {
  // The fill copies lane 0 in doubling blocks; every count of lanes ends on
  // the right value, with nothing written past the last lane.
  Attributes attrs;
  attrs.literal = Literal{TensorType{DType::kI64, {3}}, {}, {4, -5, 6}};
  const TensorType type{DType::kI64, {3}};
  for (int64_t batch : {1, 2, 3, 5, 7, 8, 9, 64, 1000, 1025}) {
    const std::vector<int64_t> out =
        Eval(MakeOp(Primitive::kConstant, 0, attrs), {}, type, batch).ToVector<int64_t>();
    ASSERT_EQ(out.size(), static_cast<size_t>(3 * batch));
    for (int64_t l = 0; l < batch; ++l) {
      EXPECT_EQ(out[3 * l], 4) << "batch " << batch << " lane " << l;
      EXPECT_EQ(out[3 * l + 1], -5) << "batch " << batch << " lane " << l;
      EXPECT_EQ(out[3 * l + 2], 6) << "batch " << batch << " lane " << l;
    }
  }
}

TEST(DataMovementTest, FillLikeCastsTheLiteralToTheOperandsDType) {
  Tensor i = Make<int32_t>({1, 2, 3, 4}, {2});
  Tensor u = Make<uint64_t>({1, 2});
  Tensor d = Make<double>({1, 2});
  Tensor b = BoolBytes({0, 0});
  auto fill = [](const Literal& lit, const Tensor& x) {
    Attributes attrs;
    attrs.literal = lit;
    return Eval(MakeOp(Primitive::kFillLike, 1, attrs), {&x}, x.type());
  };
  EXPECT_EQ(fill(Literal::F64(2.9), i).ToVector<int32_t>(), (std::vector<int32_t>{2, 2, 2, 2}));
  EXPECT_EQ(fill(Literal::F64(kNaN), i).ToVector<int32_t>(), (std::vector<int32_t>{0, 0, 0, 0}));
  EXPECT_EQ(fill(Literal::I64(-1), u).ToVector<uint64_t>(),
            (std::vector<uint64_t>{~uint64_t{0}, ~uint64_t{0}}));
  EXPECT_EQ(fill(Literal::Bool(true), d).ToVector<double>(), (std::vector<double>{1, 1}));
  EXPECT_EQ(RawBytes(fill(Literal::F64(0.5), b)), (std::vector<uint8_t>{1, 1}));
}

TEST(DataMovementTest, SelectBroadcastSliceConcatCopy) {
  Tensor c = BoolBytes({1, 0});
  Tensor a = Make<int64_t>({1, 2, 3, 4, 5, 6}, {3});
  Tensor b = Make<int64_t>({-1, -2, -3, -4, -5, -6}, {3});
  EXPECT_EQ(Eval(MakeOp(Primitive::kSelect, 3), {&c, &a, &b}, a.type()).ToVector<int64_t>(),
            (std::vector<int64_t>{1, 2, 3, -4, -5, -6}));
  Tensor cv = BoolBytes({1, 0, 1, 0, 0, 1}, {3});
  EXPECT_EQ(Eval(MakeOp(Primitive::kSelect, 3), {&cv, &a, &b}, a.type()).ToVector<int64_t>(),
            (std::vector<int64_t>{1, -2, 3, -4, -5, 6}));
  Tensor s = Make<float>({1.5f, -2.5f});
  Attributes shape;
  shape.ints = {2, 2};
  EXPECT_EQ(Eval(MakeOp(Primitive::kBroadcast, 1, shape), {&s}, TensorType{DType::kF32, {2, 2}})
                .ToVector<float>(),
            (std::vector<float>{1.5f, 1.5f, 1.5f, 1.5f, -2.5f, -2.5f, -2.5f, -2.5f}));
  Attributes slice;
  slice.ints = {1, 2};
  EXPECT_EQ(Eval(MakeOp(Primitive::kSlice, 1, slice), {&a}, TensorType{DType::kI64, {2}})
                .ToVector<int64_t>(),
            (std::vector<int64_t>{2, 3, 5, 6}));
  Tensor scalar = Make<int64_t>({10, 20});
  EXPECT_EQ(Eval(MakeOp(Primitive::kConcat, 3), {&scalar, &a, &scalar}, TensorType{DType::kI64, {5}})
                .ToVector<int64_t>(),
            (std::vector<int64_t>{10, 1, 2, 3, 10, 20, 4, 5, 6, 20}));
  Tensor junk = BoolBytes({7, 0});
  EXPECT_EQ(RawBytes(Eval(MakeOp(Primitive::kCopy, 1), {&junk}, junk.type())),
            (std::vector<uint8_t>{7, 0}));  // copy moves bytes unchanged
}

// ---------------------------------------------------------------------------
// Reductions and linear algebra.

TEST(ReductionTest, SumsInIndexOrder) {
  // (1e16 + 1) - 1e16 = 0 in index order; any other order could give 1.
  Tensor x = Make<double>({1e16, 1.0, -1e16, -0.0}, {4});
  EXPECT_EQ(Eval(MakeOp(Primitive::kReduceSum, 1), {&x}, Scalar(DType::kF64)).ToVector<double>()[0], 0.0);
  Tensor y = Make<double>({1.0, -1e16, 1e16, 1.0}, {4});
  EXPECT_EQ(Eval(MakeOp(Primitive::kReduceSum, 1), {&y}, Scalar(DType::kF64)).ToVector<double>()[0], 1.0);
  Tensor neg_zero = Make<double>({-0.0}, {1});
  EXPECT_TRUE(std::signbit(
      Eval(MakeOp(Primitive::kReduceSum, 1), {&neg_zero}, Scalar(DType::kF64)).ToVector<double>()[0]));
  Tensor empty(TensorType{DType::kF64, {0}}, 2);
  std::vector<double> sums = Eval(MakeOp(Primitive::kReduceSum, 1), {&empty}, Scalar(DType::kF64)).ToVector<double>();
  EXPECT_EQ(sums, (std::vector<double>{0.0, 0.0}));
  EXPECT_FALSE(std::signbit(sums[0]));
  Tensor a = Make<double>({1, 2, 3}, {3});
  Tensor b = Make<double>({4, 5, 6}, {3});
  EXPECT_EQ(Eval(MakeOp(Primitive::kDot, 2), {&a, &b}, Scalar(DType::kF64)).ToVector<double>()[0], 32.0);
  EXPECT_EQ(Eval(MakeOp(Primitive::kSquaredNorm, 1), {&a}, Scalar(DType::kF64)).ToVector<double>()[0], 14.0);
}

template <typename T>
void ExpectMatVec() {
  ValueGen gen(600);
  auto m = std::make_shared<DenseMatrix>();
  m->rows = 7;
  m->cols = 5;
  for (int i = 0; i < 35; ++i) m->data.push_back(gen.Uniform(-1, 1));
  Attributes attrs;
  attrs.matrix = m;
  const int64_t lanes = 33;
  std::vector<T> xs;
  for (int i = 0; i < lanes * 5; ++i) xs.push_back(static_cast<T>(gen.Uniform(-10, 10)));
  Tensor x = Make(xs, {5});
  const TensorType out_type{DTypeOf<T>::value, {7}};
  std::vector<T> got = Eval(MakeOp(Primitive::kMatVec, 1, attrs), {&x}, out_type).template ToVector<T>();
  std::vector<T> batched =
      Eval(MakeOp(Primitive::kMatVecBatched, 1, attrs), {&x}, out_type).template ToVector<T>();
  for (int64_t l = 0; l < lanes; ++l) {
    for (int64_t i = 0; i < 7; ++i) {
      // The documented order: first product, then += in j order, M rounded to T.
      T want = static_cast<T>(m->data[i * 5]) * xs[l * 5];
      double scale = std::abs(static_cast<double>(want));
      for (int64_t j = 1; j < 5; ++j) {
        T term = static_cast<T>(m->data[i * 5 + j]) * xs[l * 5 + j];
        want = want + term;
        scale += std::abs(static_cast<double>(term));
      }
      EXPECT_TRUE(SameBits(got[l * 7 + i], want)) << "lane " << l << " row " << i;
      const double tolerance = (sizeof(T) == 8 ? 1e-12 : 1e-5) * scale;
      EXPECT_NEAR(batched[l * 7 + i], want, tolerance) << "lane " << l << " row " << i;
    }
  }
}

TEST(MatVecTest, PerLaneIsExactlyTheDocumentedSumAndBatchedIsClose) {
  ExpectMatVec<double>();
  ExpectMatVec<float>();
}

TEST(MatVecTest, JunkInOtherLanesDoesNotLeakIntoBatchedProducts) {
  auto m = std::make_shared<DenseMatrix>(DenseMatrix{2, 2, {1, 2, 3, 4}});
  Attributes attrs;
  attrs.matrix = m;
  Tensor x = Make<double>({1, 1, kNaN, kInf, 2, -1}, {2});
  std::vector<double> out = Eval(MakeOp(Primitive::kMatVecBatched, 1, attrs), {&x},
                                 TensorType{DType::kF64, {2}})
                                .ToVector<double>();
  EXPECT_EQ(out[0], 3.0);
  EXPECT_EQ(out[1], 7.0);
  EXPECT_TRUE(std::isnan(out[2]));
  EXPECT_EQ(out[4], 0.0);
  EXPECT_EQ(out[5], 2.0);
}

// The kernels keep the column-major form of the last matrix: a different
// matrix of the same shape, a matrix replaced at the same address, and the
// first matrix again each get their own products.
TEST(MatVecTest, EveryMatrixGetsItsOwnProduct) {
  Tensor x = Make<double>({1, 0, 0, 1}, {2});  // lanes e0, e1: the columns
  const TensorType out_type{DType::kF64, {2}};
  auto run = [&](const std::shared_ptr<const DenseMatrix>& m, Primitive prim) {
    Attributes attrs;
    attrs.matrix = m;
    return Eval(MakeOp(prim, 1, attrs), {&x}, out_type).ToVector<double>();
  };
  for (Primitive prim : {Primitive::kMatVec, Primitive::kMatVecBatched}) {
    SCOPED_TRACE(PrimitiveName(prim));
    auto a = std::make_shared<const DenseMatrix>(DenseMatrix{2, 2, {1, 2, 3, 4}});
    auto b = std::make_shared<const DenseMatrix>(DenseMatrix{2, 2, {5, 6, 7, 8}});
    EXPECT_EQ(run(a, prim), (std::vector<double>{1, 3, 2, 4}));
    EXPECT_EQ(run(b, prim), (std::vector<double>{5, 7, 6, 8}));
    EXPECT_EQ(run(a, prim), (std::vector<double>{1, 3, 2, 4}));
    // Freed, then most likely a new matrix in the same storage.
    a.reset();
    auto c = std::make_shared<const DenseMatrix>(DenseMatrix{2, 2, {9, 10, 11, 12}});
    EXPECT_EQ(run(c, prim), (std::vector<double>{9, 11, 10, 12}));
  }
}

// ---------------------------------------------------------------------------
// Randomness.

TEST(RandomTest, PhiloxMatchesRandom123KnownAnswers) {
  // Random123 tests/kat_vectors, "philox4x32 10" lines (ctr[4] key[2] -> r[4]).
  std::array<uint64_t, 2> zero = PhiloxBits(0, 0, 0);
  EXPECT_EQ(zero[0], 0xe169c58d6627e8d5u);
  EXPECT_EQ(zero[1], 0x9b00dbd8bc57ac4cu);
  std::array<uint64_t, 2> ones = PhiloxBits(~uint64_t{0}, ~uint64_t{0}, ~uint64_t{0});
  EXPECT_EQ(ones[0], 0x41c83b0e408f276du);
  EXPECT_EQ(ones[1], 0x6d5451fda20bc7c6u);
  std::array<uint64_t, 2> pi =
      PhiloxBits(/*key=*/0x299f31d0a4093822u, /*counter=*/0x0370734413198a2eu,
                 /*block=*/0x85a308d3243f6a88u);
  EXPECT_EQ(pi[0], 0x94fdccebd16cfe09u);
  EXPECT_EQ(pi[1], 0x24126ea15001e420u);
}

// The lane-batched Philox (every lane count around the group of 16 and the
// chunk of 256, keys and counters with high words set and at the extremes,
// blocks past 2^32) gives PhiloxBits' bits, and RandomLanes gives each lane's
// PhiloxUniform / PhiloxNormal.
TEST(RandomTest, LaneBatchedPhiloxIsPhiloxBitsPerLane) {
  std::mt19937_64 gen(5);
  for (int64_t lanes : {1, 2, 7, 8, 9, 15, 16, 17, 24, 25, 33, 255, 256, 257, 600}) {
    SCOPED_TRACE(lanes);
    std::vector<uint64_t> key(lanes), counter(lanes), b0(lanes), b1(lanes);
    for (int64_t l = 0; l < lanes; ++l) {
      key[l] = l % 5 == 0 ? ~uint64_t{0} : gen();
      counter[l] = l % 7 == 0 ? 0 : gen();
    }
    for (uint64_t block : {uint64_t{0}, uint64_t{3}, uint64_t{1} << 33 | 9, ~uint64_t{0}}) {
      PhiloxBitsLanes(key.data(), counter.data(), block, lanes, b0.data(), b1.data());
      for (int64_t l = 0; l < lanes; ++l) {
        const std::array<uint64_t, 2> want = PhiloxBits(key[l], counter[l], block);
        ASSERT_EQ(b0[l], want[0]) << "lane " << l << " block " << block;
        ASSERT_EQ(b1[l], want[1]) << "lane " << l << " block " << block;
      }
    }
    for (int64_t elements : {1, 2, 5}) {
      for (bool normal : {false, true}) {
        std::vector<double> out(lanes * elements);
        RandomLanes(key.data(), counter.data(), lanes, elements, normal, out.data());
        for (int64_t l = 0; l < lanes; ++l) {
          for (int64_t i = 0; i < elements; ++i) {
            const double want = normal ? PhiloxNormal(key[l], counter[l], i)
                                       : PhiloxUniform(key[l], counter[l], i);
            ASSERT_TRUE(SameBits(out[l * elements + i], want))
                << "lane " << l << " element " << i << " normal " << normal;
          }
        }
      }
    }
  }
}

TEST(RandomTest, UniformsStayInsideTheOpenInterval) {
  EXPECT_GT(UniformFromBits(0), 0.0);
  EXPECT_LT(UniformFromBits(~uint64_t{0}), 1.0);
  EXPECT_EQ(UniformFromBits(0), 0x1p-53);
  EXPECT_EQ(UniformFromBits(~uint64_t{0}), 1.0 - 0x1p-53);
  std::array<double, 2> extreme = BoxMuller(UniformFromBits(0), 0.0);
  EXPECT_TRUE(std::isfinite(extreme[0]));
  EXPECT_LT(std::abs(extreme[0]), 8.58);
}

// Draws n variates of one lane (shape [n]) through the primitive.
std::vector<double> Draw(Primitive prim, uint64_t key, uint64_t counter, int64_t n) {
  Tensor k = Make<uint64_t>({key});
  Tensor c = Make<uint64_t>({counter});
  Attributes attrs;
  attrs.ints = {n};
  return Eval(MakeOp(prim, 2, attrs), {&k, &c}, TensorType{DType::kF64, {n}}).ToVector<double>();
}

// Kolmogorov-Smirnov statistic of xs against cdf.
double KolmogorovSmirnov(std::vector<double> xs, double (*cdf)(double)) {
  std::sort(xs.begin(), xs.end());
  const double n = static_cast<double>(xs.size());
  double d = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    const double f = cdf(xs[i]);
    d = std::max({d, f - static_cast<double>(i) / n, static_cast<double>(i + 1) / n - f});
  }
  return d;
}

TEST(RandomTest, UniformAndNormalPassKolmogorovSmirnov) {
  constexpr int64_t kN = 100000;
  // P(D > 1.949 / sqrt(n)) ~ 0.001 for the true distribution.
  const double critical = 1.949 / std::sqrt(static_cast<double>(kN));
  std::vector<double> u = Draw(Primitive::kRandomUniform, 42, 7, kN);
  for (double x : u) ASSERT_TRUE(x > 0.0 && x < 1.0) << x;
  EXPECT_LT(KolmogorovSmirnov(u, [](double x) { return x; }), critical);
  std::vector<double> z = Draw(Primitive::kRandomNormal, 42, 7, kN);
  EXPECT_LT(KolmogorovSmirnov(z, [](double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }),
            critical);
  // Moments within 5 Monte Carlo standard errors.
  const double mean = std::accumulate(z.begin(), z.end(), 0.0) / kN;
  double var = 0;
  for (double x : z) var += (x - mean) * (x - mean);
  var /= kN - 1;
  EXPECT_NEAR(mean, 0.0, 5 / std::sqrt(kN));
  EXPECT_NEAR(var, 1.0, 5 * std::sqrt(2.0 / kN));
  // Even and odd elements (cos and sin halves of Box-Muller) are uncorrelated.
  double cross = 0;
  for (int64_t i = 0; i + 1 < kN; i += 2) cross += z[i] * z[i + 1];
  EXPECT_NEAR(cross / (kN / 2), 0.0, 5 / std::sqrt(kN / 2.0));
}

TEST(RandomTest, DifferentKeysAndCountersGiveDifferentStreams) {
  const std::vector<double> base = Draw(Primitive::kRandomUniform, 1, 0, 64);
  const std::vector<std::pair<uint64_t, uint64_t>> kOthers = {
      {2, 0}, {1, 1}, {uint64_t{1} << 32 | 1, 0}, {1, uint64_t{1} << 32}};
  for (auto [key, counter] : kOthers) {
    const std::vector<double> other = Draw(Primitive::kRandomUniform, key, counter, 64);
    int equal = 0;
    for (int i = 0; i < 64; ++i) equal += base[i] == other[i];
    EXPECT_EQ(equal, 0) << "key " << key << " counter " << counter;
  }
}

TEST(RandomTest, LaneValuesDependOnlyOnKeyCounterAndIndex) {
  for (Primitive prim : {Primitive::kRandomUniform, Primitive::kRandomNormal}) {
    for (int64_t batch : {1, 3, 17, 1000}) {
      for (std::vector<int64_t> shape : {std::vector<int64_t>{}, std::vector<int64_t>{5},
                                         std::vector<int64_t>{2, 3}}) {
        std::vector<uint64_t> keys, counters;
        std::mt19937_64 rng(static_cast<uint64_t>(batch));
        for (int64_t l = 0; l < batch; ++l) {
          keys.push_back(rng());
          counters.push_back(l % 2 ? rng() : static_cast<uint64_t>(l));
        }
        Tensor k = Make(keys), c = Make(counters);
        Attributes attrs;
        attrs.ints = shape;
        TensorType out_type{DType::kF64, shape};
        Tensor out = Eval(MakeOp(prim, 2, attrs), {&k, &c}, out_type);
        const int64_t n = out_type.NumElements();
        for (int64_t l = 0; l < batch; ++l) {
          for (int64_t i = 0; i < n; ++i) {
            const double want = prim == Primitive::kRandomUniform
                                    ? PhiloxUniform(keys[l], counters[l], i)
                                    : PhiloxNormal(keys[l], counters[l], i);
            ASSERT_TRUE(SameBits(out.data<double>()[l * n + i], want))
                << PrimitiveName(prim) << " batch " << batch << " lane " << l << " element " << i;
          }
        }
      }
    }
  }
}

// ---------------------------------------------------------------------------
// User kernels.

TEST(UserKernelTest, MissingKernelIsNotFoundNamingIt) {
  Attributes attrs;
  attrs.kernel = "my_gradient";
  PrimOp op = MakeOp(Primitive::kUserKernel, 1, attrs);
  Tensor x = Make<double>({1, 2});
  Tensor out(Scalar(DType::kF64), 2);
  absl::Status s = RunAll(op, {&x}, &out, nullptr);
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(s.message(), HasSubstr("'my_gradient'"));
  EXPECT_THAT(s.message(), HasSubstr("test.cc:1"));
  KernelRegistry empty;
  EXPECT_EQ(RunAll(op, {&x}, &out, &empty).code(), absl::StatusCode::kNotFound);
}

TEST(UserKernelTest, KernelReceivesTheLanesAndItsErrorsArePropagated) {
  KernelRegistry registry;
  KernelSignature sig{{Scalar(DType::kF64)}, {Scalar(DType::kF64)}, true};
  int64_t seen_lanes = -1;
  const uint8_t* seen_active = nullptr;
  ASSERT_TRUE(registry
                  .Register("triple", sig,
                            [&](const KernelCall& call) {
                              seen_lanes = call.num_lanes;
                              seen_active = call.active;
                              const double* in = reinterpret_cast<const double*>(call.inputs[0].data);
                              double* out = reinterpret_cast<double*>(call.outputs[0].data);
                              for (int64_t l = 0; l < call.num_lanes; ++l) out[l] = 3 * in[l];
                              return absl::OkStatus();
                            })
                  .ok());
  ASSERT_TRUE(registry
                  .Register("fails", sig,
                            [](const KernelCall&) { return absl::InternalError("boom"); })
                  .ok());
  EXPECT_EQ(registry.Register("triple", sig, [](const KernelCall&) { return absl::OkStatus(); }).code(),
            absl::StatusCode::kAlreadyExists);
  Attributes attrs;
  attrs.kernel = "triple";
  Tensor x = Make<double>({1, 2, 3});
  Tensor out(Scalar(DType::kF64), 3);
  std::vector<ConstLanesView> ins = {{x.type(), x.bytes()}};
  std::vector<LanesView> outs = {{out.type(), out.bytes()}};
  const uint8_t active[3] = {1, 0, 1};
  ASSERT_TRUE(RunPrimitive(MakeOp(Primitive::kUserKernel, 1, attrs), ins, outs, 3, &registry, active).ok());
  EXPECT_EQ(out.ToVector<double>(), (std::vector<double>{3, 6, 9}));
  EXPECT_EQ(seen_lanes, 3);
  EXPECT_EQ(seen_active, active);
  attrs.kernel = "fails";
  absl::Status s = RunAll(MakeOp(Primitive::kUserKernel, 1, attrs), {&x}, &out, &registry);
  EXPECT_EQ(s.code(), absl::StatusCode::kInternal);
  EXPECT_THAT(s.message(), HasSubstr("'fails'"));
  EXPECT_THAT(s.message(), HasSubstr("boom"));
  // Called with types that differ from the registered signature.
  attrs.kernel = "triple";
  Tensor wrong = Make<int64_t>({1, 2, 3});
  Tensor wrong_out(Scalar(DType::kI64), 3);
  EXPECT_EQ(RunAll(MakeOp(Primitive::kUserKernel, 1, attrs), {&wrong}, &wrong_out, &registry).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(KernelRegistryTest, CheckBoundReportsMissingAndMismatchedKernels) {
  KernelRegistry registry;
  KernelSignature sig{{Scalar(DType::kF64)}, {Scalar(DType::kF64)}, true};
  ASSERT_TRUE(registry.Register("a", sig, [](const KernelCall&) { return absl::OkStatus(); }).ok());
  EXPECT_EQ(registry.Register("", sig, [](const KernelCall&) { return absl::OkStatus(); }).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(registry.Register("b", sig, nullptr).code(), absl::StatusCode::kInvalidArgument);
  Module module;
  module.kernels["a"] = sig;
  EXPECT_TRUE(registry.CheckBound(module).ok());
  KernelSignature other = sig;
  other.outputs[0] = Vector(DType::kF64, 2);
  module.kernels["a"] = other;
  absl::Status s = registry.CheckBound(module);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("f64[2]"));
  module.kernels["zzz"] = sig;
  s = registry.CheckBound(module);
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(s.message(), HasSubstr("'zzz'"));
  EXPECT_THAT(s.message(), HasSubstr("'a'"));
  ASSERT_NE(registry.Find("a"), nullptr);
  EXPECT_EQ(registry.Find("zzz"), nullptr);
}

// ---------------------------------------------------------------------------
// Ops that do not type-check are refused, never run out of bounds.

TEST(InputCheckTest, IllTypedOpsAreInvalidArgumentNamingThePrimitive) {
  Tensor f = Make<double>({1, 2});
  Tensor i = Make<int64_t>({1, 2});
  Tensor v = Make<double>({1, 2, 3, 4, 5, 6}, {3});
  Tensor out(Scalar(DType::kF64), 2);
  auto expect_invalid = [](absl::Status s, const char* prim) {
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    EXPECT_THAT(s.message(), HasSubstr(prim));
  };
  expect_invalid(RunAll(MakeOp(Primitive::kAdd, 2), {&f, &i}, &out), "add");
  expect_invalid(RunAll(MakeOp(Primitive::kAdd, 2), {&f, &v}, &out), "add");  // out too small
  expect_invalid(RunAll(MakeOp(Primitive::kAdd, 1), {&f}, &out), "add");
  expect_invalid(RunAll(MakeOp(Primitive::kExp, 1), {&i}, &out), "exp");
  Tensor bool_out(Scalar(DType::kBool), 2);
  expect_invalid(RunAll(MakeOp(Primitive::kNot, 1), {&f}, &bool_out), "not");
  Attributes slice;
  slice.ints = {2, 2};
  expect_invalid(RunAll(MakeOp(Primitive::kSlice, 1, slice), {&v}, &out), "slice");
  Attributes matrix;
  matrix.matrix = std::make_shared<DenseMatrix>(DenseMatrix{1, 2, {1, 2}});
  expect_invalid(RunAll(MakeOp(Primitive::kMatVec, 1, matrix), {&v}, &out), "matvec");
  matrix.matrix = std::make_shared<DenseMatrix>(DenseMatrix{1, 3, {1, 2}});
  expect_invalid(RunAll(MakeOp(Primitive::kMatVec, 1, matrix), {&v}, &out), "matvec");
  expect_invalid(RunAll(MakeOp(Primitive::kRandomNormal, 2), {&f, &f}, &out), "random_normal");
  expect_invalid(RunAll(MakeOp(Primitive::kConstant, 0), {}, &out), "constant");
  Attributes wrong_count;
  wrong_count.literal = Literal{Vector(DType::kF64, 2), {1, 2}, {}};
  expect_invalid(RunAll(MakeOp(Primitive::kConstant, 0, wrong_count), {}, &out), "constant");
  Attributes cast;
  cast.dtype = DType::kI32;
  expect_invalid(RunAll(MakeOp(Primitive::kCast, 1), {&v}, &out), "cast");
  expect_invalid(RunAll(MakeOp(Primitive::kCast, 1, cast), {&f}, &out), "cast");
}

}  // namespace
}  // namespace autobatch
