// Tests that misusing the frontend API is an error naming the user's file and
// line, returned by Context::Module() / Program() (the first error wins).
#include <optional>
#include <string>
#include <tuple>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "frontend/context.h"
#include "passes/infer_types.h"
#include "tests/frontend/test_util.h"

namespace autobatch {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::ErrorOf;

std::string At(int line) { return "errors_test.cc:" + std::to_string(line) + ":"; }

// The message names "file:line:" for *line_ptr, read when matching (bodies
// are built lazily, so `line` is set only once the module is requested).
MATCHER_P(MentionsLine, line_ptr, "") {
  return std::string(arg).find(At(*line_ptr)) != std::string::npos;
}

// The error of building `ctx`'s module.
std::string ModuleError(Context& ctx) { return ErrorOf(ctx.Module()); }

TEST(ErrorsTest, CallingAnUnregisteredHandle) {
  Context ctx;
  BatchFunction never;
  int line = 0;
  ctx.Batch("f")([&](Value x) {
    line = __LINE__ + 1;
    return never(x);
  });
  absl::StatusOr<Module> m = ctx.Module();
  EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(ErrorOf(m), AllOf(MentionsLine(&line), HasSubstr("in function 'f'"),
                                HasSubstr("never registered")));
}

TEST(ErrorsTest, CallingAHandleWhoseBodyWasNeverDefined) {
  Context ctx;
  BatchFunction g = ctx.Declare("g");
  int line = 0;
  BatchFunction f = ctx.Batch("f")([&](Value x) {
    line = __LINE__ + 1;
    return g(x);
  });
  absl::StatusOr<Program> p = ctx.Program(f);
  EXPECT_EQ(p.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(ErrorOf(p), AllOf(MentionsLine(&line), HasSubstr("calls 'g'"),
                                HasSubstr("never defined"), HasSubstr("ctx.Batch(g)")));
  EXPECT_THAT(ModuleError(ctx), HasSubstr("function 'g'"));
  // Not sticky: defining g fixes it.
  ctx.Batch(g)([](Value x) { return x; });
  EXPECT_TRUE(ctx.Program(f).ok()) << ctx.Program(f).status();
}

TEST(ErrorsTest, DifferentNumbersOfValuesOnDifferentPaths) {
  Context ctx;
  int two_line = 0, batch_line = __LINE__ + 1;
  ctx.Batch("f")([&](Builder& b, Value x) {
    two_line = __LINE__ + 1;
    b.If(x > 0).Then([&] { b.Return(x, x); });
    return x;
  });
  std::string error = ModuleError(ctx);
  EXPECT_THAT(error, AllOf(HasSubstr(At(batch_line)), HasSubstr("returns 1 value here but 2 values"),
                           HasSubstr(At(two_line).substr(0, At(two_line).size() - 1))));
}

TEST(ErrorsTest, UnreachableReturnsDoNotCount) {
  Context ctx;
  BatchFunction f = ctx.Batch("f")([&](Builder& b, Value x) {
    b.If(x > 0).Then([&] { b.Return(x); }).Else([&] { b.Return(-x); });
    // The end of the body is unreachable: its (void) return does not count.
  });
  EXPECT_TRUE(ctx.Program(f).ok()) << ctx.Program(f).status();
}

TEST(ErrorsTest, UsingAValueOfAnotherFunction) {
  Context ctx;
  std::optional<Value> leaked;
  ctx.Batch("f")([&](Value x) {
    leaked = x + 1;
    return x;
  });
  int line = 0;
  ctx.Batch("g")([&](Value y) {
    line = __LINE__ + 1;
    return y + *leaked;
  });
  EXPECT_THAT(ModuleError(ctx), AllOf(MentionsLine(&line), HasSubstr("in function 'g'"),
                                      HasSubstr("belongs to function 'f'")));
}

TEST(ErrorsTest, IfWithoutACondition) {
  Context ctx;
  int line = 0;
  ctx.Batch("f")([&](Builder& b, Value x) {
    Var r = b.Local("r", x);
    line = __LINE__ + 1;
    b.If(Value()).Then([&] { r = 0; });
    return r;
  });
  EXPECT_THAT(ModuleError(ctx), AllOf(MentionsLine(&line), HasSubstr("the If condition"),
                                      HasSubstr("empty Value")));
}

TEST(ErrorsTest, IfWithAnUnassignedVarAsCondition) {
  Context ctx;
  int line = 0;
  ctx.Batch("f")([&](Builder& b, Value x) {
    Var cond;
    line = __LINE__ + 1;
    b.If(cond).Then([&] { b.Return(x); });
    return x;
  });
  EXPECT_THAT(ModuleError(ctx),
              AllOf(MentionsLine(&line), HasSubstr("reads a Var that was never assigned")));
}

TEST(ErrorsTest, IfWithoutThenAndWhileWithoutDo) {
  {
    Context ctx;
    int line = 0;
    ctx.Batch("f")([&](Builder& b, Value x) {
      line = __LINE__ + 1;
      b.If(x > 0);
      return x;
    });
    EXPECT_THAT(ModuleError(ctx), AllOf(MentionsLine(&line), HasSubstr("If without Then")));
  }
  {
    Context ctx;
    int line = 0;
    ctx.Batch("f")([&](Builder& b, Value x) {
      line = __LINE__ + 1;
      b.While([&] { return x > 0; });
      return x;
    });
    EXPECT_THAT(ModuleError(ctx), AllOf(MentionsLine(&line), HasSubstr("While without Do")));
  }
  {
    Context ctx;
    int line = 0;
    ctx.Batch("f")([&](Builder& b, Value x) {
      line = __LINE__ + 1;
      b.If(x > 0).Then([] {}).Then([] {});
      return x;
    });
    EXPECT_THAT(ModuleError(ctx), AllOf(MentionsLine(&line), HasSubstr("Then must follow")));
  }
}

TEST(ErrorsTest, BreakAndContinueOutsideALoop) {
  Context ctx;
  int line = 0;
  ctx.Batch("f")([&](Builder& b, Value x) {
    line = __LINE__ + 1;
    b.Break();
    return x;
  });
  EXPECT_THAT(ModuleError(ctx), AllOf(MentionsLine(&line), HasSubstr("Break outside a While")));
  Context ctx2;
  ctx2.Batch("f")([&](Builder& b, Value x) {
    line = __LINE__ + 1;
    b.Continue();
    return x;
  });
  EXPECT_THAT(ModuleError(ctx2), AllOf(MentionsLine(&line), HasSubstr("Continue outside")));
}

TEST(ErrorsTest, ReadingAnUnassignedVar) {
  Context ctx;
  int line = 0;
  ctx.Batch("f")([&](Value x) {
    Var v;
    line = __LINE__ + 1;
    return x + v;
  });
  EXPECT_THAT(ModuleError(ctx), AllOf(MentionsLine(&line), HasSubstr("operand 2 of 'add'"),
                                      HasSubstr("never assigned")));
}

TEST(ErrorsTest, WrongNumberOfArguments) {
  Context ctx;
  BatchFunction g = ctx.Batch("g")([](Value x) { return x; });
  int line = 0;
  ctx.Batch("f")([&](Value x) {
    line = __LINE__ + 1;
    return g(x, x);
  });
  EXPECT_THAT(ModuleError(ctx), AllOf(MentionsLine(&line), HasSubstr("passes 2 values"),
                                      HasSubstr("'g' takes 1 value")));
}

TEST(ErrorsTest, WrongNumberOfArgumentsToAFunctionDefinedLater) {
  Context ctx;
  BatchFunction g = ctx.Declare("g");
  int line = 0;
  ctx.Batch("f")([&](Value x) {
    line = __LINE__ + 1;
    return g(x, x);
  });
  ctx.Batch(g)([](Value x) { return x; });
  EXPECT_THAT(ModuleError(ctx), AllOf(MentionsLine(&line), HasSubstr("passes 2 values"),
                                      HasSubstr("'g' takes 1 value")));
}

TEST(ErrorsTest, UsingACallAsTheWrongNumberOfValues) {
  Context ctx;
  BatchFunction divmod = ctx.Declare("divmod");
  int line = 0;
  ctx.Batch("f")([&](Value x) {
    line = __LINE__ + 1;
    Value q = divmod(x, x);
    return q;
  });
  ctx.Batch(divmod)([](Value a, Value b) { return std::tuple<Value, Value>{a / b, a % b}; });
  EXPECT_THAT(ModuleError(ctx), AllOf(MentionsLine(&line), HasSubstr("is used as 1 value"),
                                      HasSubstr("'divmod' returns 2 values")));
}

TEST(ErrorsTest, RegistrationErrors) {
  {
    Context ctx;
    int first = __LINE__ + 1;
    ctx.Batch("f")([](Value x) { return x; });
    int second = __LINE__ + 1;
    ctx.Batch("f")([](Value x) { return x; });
    absl::StatusOr<Module> m = ctx.Module();
    EXPECT_EQ(m.status().code(), absl::StatusCode::kAlreadyExists);
    EXPECT_THAT(ErrorOf(m), AllOf(HasSubstr(At(second)), HasSubstr("already registered"),
                                  HasSubstr("errors_test.cc:" + std::to_string(first))));
  }
  {
    Context ctx;
    BatchFunction f = ctx.Declare("f");
    ctx.Batch(f)([](Value x) { return x; });
    int line = __LINE__ + 1;
    ctx.Batch(f)([](Value x) { return x; });
    EXPECT_THAT(ModuleError(ctx), AllOf(MentionsLine(&line), HasSubstr("already has a body")));
  }
  {
    Context ctx, other;
    BatchFunction foreign = other.Declare("foreign");
    int line = __LINE__ + 1;
    ctx.Batch(foreign)([](Value x) { return x; });
    EXPECT_THAT(ModuleError(ctx), AllOf(MentionsLine(&line), HasSubstr("another Context")));
  }
  {
    Context ctx;
    int line = __LINE__ + 1;
    ctx.Batch("f", {.param_names = {"a", "b"}})([](Value x) { return x; });
    EXPECT_THAT(ModuleError(ctx), AllOf(MentionsLine(&line), HasSubstr("param_names has 2 names")));
  }
  {
    Context ctx;
    int line = __LINE__ + 1;
    ctx.Batch("f", {.signature = Signature{{Scalar(DType::kF64)}, {}}})([](Value x) { return x; });
    EXPECT_THAT(ModuleError(ctx), AllOf(MentionsLine(&line), HasSubstr("signature declares 0 results")));
  }
}

TEST(ErrorsTest, CallingAFunctionOfAnotherContext) {
  Context ctx, other;
  BatchFunction foreign = other.Batch("foreign")([](Value x) { return x; });
  int line = 0;
  ctx.Batch("f")([&](Value x) {
    line = __LINE__ + 1;
    return foreign(x);
  });
  EXPECT_THAT(ModuleError(ctx), AllOf(MentionsLine(&line), HasSubstr("of another Context")));
}

TEST(ErrorsTest, UsingTheBuilderOfAnotherFunction) {
  Context ctx;
  Builder* leaked = nullptr;
  ctx.Batch("f")([&](Builder& b, Value x) {
    leaked = &b;
    return x;
  });
  int line = 0;
  ctx.Batch("g")([&](Value x) {
    line = __LINE__ + 1;
    Var v = leaked->Local("v");
    v = x;
    return v;
  });
  EXPECT_THAT(ModuleError(ctx), AllOf(MentionsLine(&line), HasSubstr("in function 'g'"),
                                      HasSubstr("another function's body")));
}

TEST(ErrorsTest, TheFirstErrorWinsAndStays) {
  Context ctx;
  int first = 0;
  BatchFunction f = ctx.Batch("f")([&](Builder& b, Value x) {
    first = __LINE__ + 1;
    b.Break();
    b.Continue();
    return x;
  });
  std::string error = ModuleError(ctx);
  EXPECT_THAT(error, AllOf(HasSubstr(At(first)), Not(HasSubstr("Continue"))));
  EXPECT_EQ(ErrorOf(ctx.Program(f)), error);
  EXPECT_EQ(ErrorOf(f.Run({*Tensor::FromVector<int64_t>({1})}, {.dry_run = true})), error);
}

TEST(ErrorsTest, LaterTypeErrorsPointAtTheUsersLine) {
  Context ctx;
  int line = 0;
  BatchFunction f = ctx.Batch("f")([&](Builder& b, Value x) {
    Var r = b.Local("r");
    b.If(x > 0).Then([&] { r = x; }).Else([&] {
      line = __LINE__ + 1;
      r = true;  // bool here, x's dtype on the other path
    });
    return r;
  });
  absl::StatusOr<Program> program = ctx.Program(f);
  ASSERT_TRUE(program.ok()) << program.status();
  absl::StatusOr<Program> typed = InferTypes(*program, std::vector<TensorType>{Scalar(DType::kF64)});
  ASSERT_FALSE(typed.ok());
  EXPECT_THAT(ErrorOf(typed), HasSubstr("errors_test.cc:"));
  // The dry run, dynamically typed, would find each lane alone consistent
  // (the lanes disagree on the result's type); it refuses the program as the
  // compiler does, so that every executor gives the same error.
  absl::StatusOr<std::vector<Tensor>> run = f.Run({*Tensor::FromVector<double>({-1.0, 2.0})},
                                                  {.dry_run = true});
  EXPECT_THAT(ErrorOf(run), HasSubstr("type mismatch in function 'f': variable 'r' is f64"));
  EXPECT_THAT(ErrorOf(run), HasSubstr("errors_test.cc:"));
  EXPECT_GT(line, 0);
}

// A literal takes the dtype of the value it is combined with; one whose
// value that changes (0.5 as i64 is 0) is a type error at the user's line
// that says what to write, on every executor. Exact ones (2.0 as i64) run.
TEST(ErrorsTest, LiteralsThatChangeValueInTheOtherDtypeAreTypeErrors) {
  Context ctx;
  int line = 0;
  BatchFunction half = ctx.Batch("half")([&](Value n) {
    line = __LINE__ + 1;
    return n * 0.5;
  });
  BatchFunction twice = ctx.Batch("twice")([&](Value n) { return n * 2.0; });
  for (const CallOptions& options :
       {CallOptions{.dry_run = true}, CallOptions{.vm = Vm::kStackless}, CallOptions{}}) {
    const std::string error = ErrorOf(half.Run({*Tensor::FromVector<int64_t>({3})}, options));
    EXPECT_THAT(error, AllOf(HasSubstr("fill_like (at errors_test.cc:" + std::to_string(line) +
                                       "): the literal 0.5 would become 0 as i64"),
                             HasSubstr("cast the other operand to f64"),
                             Not(HasSubstr("--- IR"))))
        << error;
    absl::StatusOr<std::vector<Tensor>> doubled =
        twice.Run({*Tensor::FromVector<int64_t>({3})}, options);
    ASSERT_TRUE(doubled.ok()) << doubled.status();
    EXPECT_EQ((*doubled)[0].data<int64_t>()[0], 6);
  }
  // The IR comes with the error only on request.
  EXPECT_THAT(ErrorOf(half.Run({*Tensor::FromVector<int64_t>({3})},
                               {.dump_ir_on_error = true})),
              HasSubstr("--- IR given to infer_types ---"));
  // The same literal is fine where the other operand is a float.
  absl::StatusOr<std::vector<Tensor>> halved = half.Run({*Tensor::FromVector<double>({3.0})});
  ASSERT_TRUE(halved.ok()) << halved.status();
  EXPECT_EQ((*halved)[0].data<double>()[0], 1.5);
}

}  // namespace
}  // namespace autobatch
