// Tests of user kernels registered on a Context and called from bodies.
#include <cstdint>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "frontend/context.h"
#include "ir/json.h"
#include "ir/verifier.h"
#include "tests/frontend/test_util.h"
#include "vm/reference_interpreter.h"

namespace autobatch {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using testing::ErrorOf;

std::string At(int line) { return "kernel_test.cc:" + std::to_string(line) + ":"; }

// The message names "file:line:" for *line_ptr, read when matching (bodies
// are built lazily, so `line` is set only once the module is requested).
MATCHER_P(MentionsLine, line_ptr, "") {
  return std::string(arg).find(At(*line_ptr)) != std::string::npos;
}

// out = v * s for a vector v: f64[3] and a scalar s; counts its calls.
Kernel RegisterScale(Context& ctx, int* calls, bool bit_stable = true) {
  return ctx.RegisterKernel(
      "scale", KernelSignature{{Vector(DType::kF64, 3), Scalar(DType::kF64)},
                               {Vector(DType::kF64, 3)}, bit_stable},
      [calls](const KernelCall& call) -> absl::Status {
        ++*calls;
        const double* v = reinterpret_cast<const double*>(call.inputs[0].data);
        const double* s = reinterpret_cast<const double*>(call.inputs[1].data);
        double* out = reinterpret_cast<double*>(call.outputs[0].data);
        for (int64_t lane = 0; lane < call.num_lanes; ++lane) {
          if (!call.IsActive(lane)) continue;
          for (int i = 0; i < 3; ++i) out[lane * 3 + i] = v[lane * 3 + i] * s[lane];
        }
        return absl::OkStatus();
      });
}

// (a, b) -> (a + b, a - b) on f64 scalars.
Kernel RegisterSumDiff(Context& ctx) {
  return ctx.RegisterKernel(
      "sum_diff",
      KernelSignature{{Scalar(DType::kF64), Scalar(DType::kF64)},
                      {Scalar(DType::kF64), Scalar(DType::kF64)}},
      [](const KernelCall& call) -> absl::Status {
        const double* a = reinterpret_cast<const double*>(call.inputs[0].data);
        const double* b = reinterpret_cast<const double*>(call.inputs[1].data);
        double* s = reinterpret_cast<double*>(call.outputs[0].data);
        double* d = reinterpret_cast<double*>(call.outputs[1].data);
        for (int64_t lane = 0; lane < call.num_lanes; ++lane) {
          s[lane] = a[lane] + b[lane];
          d[lane] = a[lane] - b[lane];
        }
        return absl::OkStatus();
      });
}

TEST(KernelTest, KernelsAreCalledLikeFunctions) {
  Context ctx;
  int calls = 0;
  Kernel scale = RegisterScale(ctx, &calls, /*bit_stable=*/false);
  Kernel sum_diff = RegisterSumDiff(ctx);
  BatchFunction f = ctx.Batch("f")([&](Value v, Value x) {
    Value scaled = scale(v, 2.0);  // the literal gets the declared input type
    auto [s, d] = sum_diff(x, reduce_sum(scaled)).Get<2>();
    return std::tuple<Value, Value, Value>{scaled, s, d};
  });
  absl::StatusOr<Program> program = ctx.Program(f);
  ASSERT_TRUE(program.ok()) << program.status();
  EXPECT_TRUE(VerifyProgram(*program).ok()) << VerifyProgram(*program);
  ASSERT_EQ(program->module.kernels.size(), 2u);
  EXPECT_FALSE(program->module.kernels.at("scale").bit_stable);
  EXPECT_TRUE(program->module.kernels.at("sum_diff").bit_stable);
  int kernel_ops = 0;
  for (const Block& b : program->entry_function().blocks) {
    for (const Op& op : b.ops) {
      const PrimOp* p = std::get_if<PrimOp>(&op);
      if (p && p->prim == Primitive::kUserKernel) {
        ++kernel_ops;
        EXPECT_THAT(p->attrs.kernel, ::testing::AnyOf("scale", "sum_diff"));
      }
      if (p && p->prim == Primitive::kConstant) {
        EXPECT_EQ(*p->attrs.literal, Literal::F64(2.0));
      }
    }
  }
  EXPECT_EQ(kernel_ops, 2);

  std::vector<Tensor> in = {*Tensor::FromVector<double>({1, 2, 3, 4, 5, 6}, {3}),
                            *Tensor::FromVector<double>({10, 20})};
  absl::StatusOr<std::vector<Tensor>> out = f.Run(in, {.dry_run = true});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].ToVector<double>(), (std::vector<double>{2, 4, 6, 8, 10, 12}));
  EXPECT_EQ((*out)[1].ToVector<double>(), (std::vector<double>{22, 50}));
  EXPECT_EQ((*out)[2].ToVector<double>(), (std::vector<double>{-2, -10}));
  EXPECT_EQ(calls, 2);  // dry run: one lane at a time
}

TEST(KernelTest, UnknownKernelsInALoadedProgramAreAClearError) {
  Context ctx;
  int calls = 0;
  Kernel scale = RegisterScale(ctx, &calls);
  BatchFunction f = ctx.Batch("f")([&](Value v) { return scale(v, 3.0); });
  absl::StatusOr<Program> program = ctx.Program(f);
  ASSERT_TRUE(program.ok()) << program.status();
  absl::StatusOr<Program> loaded = LoadProgramJson(DumpProgramJson(*program));
  ASSERT_TRUE(loaded.ok()) << loaded.status();

  Tensor lane = *Tensor::FromVector<double>({1, 2, 3}, {3});
  KernelRegistry empty;
  absl::StatusOr<std::vector<LaneValue>> r = RunReference(*loaded, {lane}, &empty);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(ErrorOf(r), AllOf(HasSubstr("'scale'"), HasSubstr("function 'f'"),
                                HasSubstr("not registered")));
  r = RunReference(*loaded, {lane}, nullptr);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kNotFound);
  // With the context's registry it runs.
  r = RunReference(*loaded, {lane}, &ctx.kernels());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].ToVector<double>(), (std::vector<double>{3, 6, 9}));
  // A registry binding the name to another signature is rejected too.
  KernelRegistry other;
  ASSERT_TRUE(other.Register("scale", KernelSignature{{Scalar(DType::kF64)}, {Scalar(DType::kF64)}},
                             [](const KernelCall&) { return absl::OkStatus(); })
                  .ok());
  EXPECT_FALSE(RunReference(*loaded, {lane}, &other).ok());
}

TEST(KernelTest, KernelErrorsPropagate) {
  Context ctx;
  Kernel fail = ctx.RegisterKernel(
      "fail", KernelSignature{{Scalar(DType::kF64)}, {Scalar(DType::kF64)}},
      [](const KernelCall&) { return absl::DataLossError("the kernel is unhappy"); });
  BatchFunction f = ctx.Batch("f")([&](Value x) { return fail(x); });
  absl::StatusOr<std::vector<Tensor>> out =
      f.Run({*Tensor::FromVector<double>({1.0})}, {.dry_run = true});
  EXPECT_THAT(ErrorOf(out), AllOf(HasSubstr("the kernel is unhappy"), HasSubstr("lane 0"),
                                  HasSubstr("function 'f'")));
}

TEST(KernelTest, MisusedKernelsAreErrorsAtTheUsersLine) {
  {
    Context ctx;
    int calls = 0;
    RegisterScale(ctx, &calls);
    int line = __LINE__ + 1;
    RegisterScale(ctx, &calls);
    absl::StatusOr<Module> m = ctx.Module();
    EXPECT_EQ(m.status().code(), absl::StatusCode::kAlreadyExists);
    EXPECT_THAT(ErrorOf(m), HasSubstr("kernel_test.cc:"));
    (void)line;
  }
  {
    Context ctx;
    int calls = 0;
    Kernel scale = RegisterScale(ctx, &calls);
    int line = 0;
    ctx.Batch("f")([&](Value v) {
      line = __LINE__ + 1;
      return scale(v);
    });
    EXPECT_THAT(ErrorOf(ctx.Module()),
                AllOf(MentionsLine(&line), HasSubstr("kernel 'scale' takes 2 inputs")));
  }
  {
    Context ctx;
    Kernel sum_diff = RegisterSumDiff(ctx);
    int line = 0;
    ctx.Batch("f")([&](Value x) {
      line = __LINE__ + 1;
      Value only = sum_diff(x, x);
      return only;
    });
    EXPECT_THAT(ErrorOf(ctx.Module()),
                AllOf(MentionsLine(&line), HasSubstr("has 2 outputs but is used as 1 value")));
  }
  {
    Context ctx;
    Kernel never;
    int line = 0;
    ctx.Batch("f")([&](Value x) {
      line = __LINE__ + 1;
      return never(x);
    });
    EXPECT_THAT(ErrorOf(ctx.Module()), AllOf(MentionsLine(&line), HasSubstr("never registered")));
  }
  {
    Context ctx;
    int line = __LINE__ + 1;
    ctx.RegisterKernel("empty", KernelSignature{}, KernelFn());
    EXPECT_THAT(ErrorOf(ctx.Module()),
                AllOf(MentionsLine(&line), HasSubstr("the implementation is empty")));
  }
}

}  // namespace
}  // namespace autobatch
