// The same-bits check of the cleanup passes' tests.
#include "tests/passes/same_bits.h"

#include <bit>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "passes/registry.h"
#include "vm/reference_interpreter.h"

namespace autobatch::testing {
namespace {

template <typename F>
std::vector<uint64_t> FloatBits() {
  using Bits = std::conditional_t<sizeof(F) == 8, uint64_t, uint32_t>;
  using L = std::numeric_limits<F>;
  std::vector<F> values = {F(0),       -F(0),         F(1),       F(-1),      F(2),
                           F(0.5),     F(3.25),       F(-7.5),    L::infinity(), -L::infinity(),
                           L::quiet_NaN(), -L::quiet_NaN(), L::denorm_min(), -L::denorm_min(),
                           L::max(),   L::lowest(),   L::min(),   F(1e30)};
  std::vector<uint64_t> bits;
  for (F v : values) bits.push_back(std::bit_cast<Bits>(v));
  // NaNs with a payload, quiet and signalling.
  const Bits exponent = std::bit_cast<Bits>(L::infinity());
  bits.push_back(exponent | 1);
  bits.push_back(std::bit_cast<Bits>(L::quiet_NaN()) | 0x123);
  return bits;
}

template <typename I>
std::vector<uint64_t> IntBits() {
  using L = std::numeric_limits<I>;
  std::vector<I> values = {I(0), I(1), I(2), I(3), I(100), L::min(), L::max()};
  if constexpr (std::is_signed_v<I>) {
    values.push_back(I(-1));
    values.push_back(I(-7));
  }
  std::vector<uint64_t> bits;
  for (I v : values) bits.push_back(static_cast<uint64_t>(v));
  return bits;
}

// Raw bit patterns of the special values of `dtype` (the low DTypeSize
// bytes of each).
std::vector<uint64_t> SpecialBits(DType dtype) {
  switch (dtype) {
    case DType::kF64: return FloatBits<double>();
    case DType::kF32: return FloatBits<float>();
    case DType::kI64: return IntBits<int64_t>();
    case DType::kI32: return IntBits<int32_t>();
    case DType::kU64: return IntBits<uint64_t>();
    case DType::kBool: return {0, 1, 2, 255};
  }
  return {0};
}

uint64_t Mix(uint64_t x) {  // splitmix64's finalizer
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

std::string TextDir() { return AUTOBATCH_SOURCE_DIR "/tests/passes/text"; }

}  // namespace

std::vector<std::vector<Tensor>> SpecialInputs(const Program& program, int lanes) {
  const Function& entry = program.entry_function();
  std::vector<std::vector<Tensor>> inputs(static_cast<size_t>(lanes));
  for (int lane = 0; lane < lanes; ++lane) {
    for (size_t p = 0; p < entry.params.size(); ++p) {
      const TensorType& type = *program.module.var(entry.params[p]).type;
      const std::vector<uint64_t> bits = SpecialBits(type.dtype);
      const int size = DTypeSize(type.dtype);
      Tensor t(type, /*batch=*/1);
      for (int64_t e = 0; e < type.NumElements(); ++e) {
        const uint64_t pick = Mix(static_cast<uint64_t>(lane) * 1000003 + p * 131 +
                                  static_cast<uint64_t>(e));
        const uint64_t value = bits[pick % bits.size()];
        std::memcpy(t.bytes() + e * size, &value, static_cast<size_t>(size));  // little endian
      }
      inputs[static_cast<size_t>(lane)].push_back(std::move(t));
    }
  }
  return inputs;
}

::testing::AssertionResult SameBits(const Program& before, const Program& after,
                                    const KernelRegistry* kernels, int lanes) {
  absl::StatusOr<ReferenceInterpreter> run_before = ReferenceInterpreter::Create(before, kernels);
  absl::StatusOr<ReferenceInterpreter> run_after = ReferenceInterpreter::Create(after, kernels);
  if (!run_before.ok() || !run_after.ok()) {
    return ::testing::AssertionFailure()
           << "cannot run: " << run_before.status() << " / " << run_after.status();
  }
  const ReferenceOptions options{.max_steps = 100000};
  int ran = 0;
  for (std::vector<Tensor>& lane : SpecialInputs(before, lanes)) {
    absl::StatusOr<std::vector<Tensor>> want = run_before->Run(lane, options);
    absl::StatusOr<std::vector<Tensor>> got = run_after->Run(lane, options);
    if (want.ok() != got.ok() || (!want.ok() && want.status().code() != got.status().code())) {
      return ::testing::AssertionFailure()
             << "lane " << ran << ": before " << want.status() << ", after " << got.status();
    }
    if (want.ok() && *want != *got) {
      std::string where;
      for (size_t r = 0; r < want->size(); ++r) {
        if ((*want)[r] == (*got)[r]) continue;
        absl::StrAppend(&where, " result ", r, ":");
        const Tensor& w = (*want)[r];
        const Tensor& g = (*got)[r];
        for (int64_t b = 0; b < std::min(w.size_bytes(), g.size_bytes()); ++b) {
          absl::StrAppend(&where, " ", std::to_integer<int>(w.bytes()[b]), "/",
                          std::to_integer<int>(g.bytes()[b]));
        }
      }
      return ::testing::AssertionFailure()
             << "lane " << ran << " differs (bytes before/after):" << where << "\n--- after ---\n"
             << PrintProgram(after);
    }
    ++ran;
  }
  return ::testing::AssertionSuccess() << ran << " lanes agree";
}

KernelRegistry TextCaseKernels(int64_t* recorded) {
  KernelRegistry kernels;
  const TensorType f64 = Scalar(DType::kF64);
  auto check = [](absl::Status s) { EXPECT_TRUE(s.ok()) << s; };
  check(kernels.Register(
      "model", KernelSignature{{f64}, {f64, f64}, true, /*pure=*/true},
      [](const KernelCall& call) {
        const auto* x = reinterpret_cast<const double*>(call.inputs[0].data);
        auto* lp = reinterpret_cast<double*>(call.outputs[0].data);
        auto* g = reinterpret_cast<double*>(call.outputs[1].data);
        for (int64_t i = 0; i < call.num_lanes; ++i) {
          lp[i] = x[i] * x[i];
          g[i] = x[i] + x[i];
        }
        return absl::OkStatus();
      }));
  check(kernels.Register("record", KernelSignature{{f64}, {f64}},
                         [recorded](const KernelCall& call) {
                           std::memcpy(call.outputs[0].data, call.inputs[0].data,
                                       static_cast<size_t>(call.num_lanes) * sizeof(double));
                           for (int64_t i = 0; i < call.num_lanes; ++i) {
                             *recorded += call.IsActive(i) ? 1 : 0;
                           }
                           return absl::OkStatus();
                         }));
  check(kernels.Register("sum_lanes", KernelSignature{{f64}, {f64}, false, /*pure=*/true},
                         [](const KernelCall& call) {
                           std::memcpy(call.outputs[0].data, call.inputs[0].data,
                                       static_cast<size_t>(call.num_lanes) * sizeof(double));
                           return absl::OkStatus();
                         }));
  return kernels;
}

void ExpectTextCasesKeepTheBits(const std::string& pass) {
  absl::StatusOr<const PassInfo*> info = FindPass(pass);
  ASSERT_TRUE(info.ok()) << info.status();
  int cases = 0;
  for (const auto& entry : std::filesystem::directory_iterator(TextDir())) {
    const std::string name = entry.path().filename().string();
    if (!name.starts_with(pass + "_") || entry.path().extension() != ".ir") continue;
    SCOPED_TRACE(name);
    std::ifstream in(entry.path(), std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    const std::string input = text.str().substr(0, text.str().find("// ----- expected output"));
    absl::StatusOr<Program> program = ParseProgram(input);
    ASSERT_TRUE(program.ok()) << program.status();
    // The inputs come from the entry's param types.
    ASSERT_NE(program->stage, Stage::kUntyped)
        << "a text case run for its bits must be a typed program";
    absl::StatusOr<Program> output = (*info)->run(*program, PassContext{});
    ASSERT_TRUE(output.ok()) << output.status();
    ASSERT_TRUE(VerifyProgram(*output).ok()) << VerifyProgram(*output);
    int64_t recorded = 0;
    const KernelRegistry kernels = TextCaseKernels(&recorded);
    EXPECT_TRUE(SameBits(*program, *output, &kernels));
    ++cases;
  }
  EXPECT_GT(cases, 0) << "no text case of " << pass;
}

}  // namespace autobatch::testing
