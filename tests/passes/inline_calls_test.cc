// Tests for inline_calls (passes/inline_calls.h).
#include "passes/inline_calls.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "frontend/run.h"
#include "ir/printer.h"
#include "ir/testing/call_trees.h"
#include "ir/testing/fib_program.h"
#include "passes/allocate_variables.h"
#include "passes/lower_calls.h"
#include "passes/pipeline.h"
#include "tests/passes/machine.h"
#include "tests/passes/test_programs.h"
#include "tests/passes/test_util.h"

namespace autobatch {
namespace {

const TensorType kI64 = Scalar(DType::kI64);

// main(d, x) -> r:  s = twice(x); t = twice(s); r = tree(d, t)
// tree(d, x) -> r:  d <= 0 ? r = fold(x) : { a = tree(d - 1, x);
//                   b = tree(d - 1, a); r = add(a, b) }
// fold(x) -> y:     x > 0 ? y = add(x, x) (one Return) : y = neg(x) (another)
// twice(x) -> y:    y = add(x, x)
// twice has two call sites and one op (inlined at both); fold one site, in
// a recursive function (inlined, as NUTS' leaf is into build_tree); tree is
// recursive (kept). File "inline.cc".
Program MakeInlineProgram() {
  Program program;
  testing::FunctionBuilder main_fn(program, "main", "inline.cc", 1);
  testing::FunctionBuilder tree(program, "tree", "inline.cc", 10);
  testing::FunctionBuilder fold(program, "fold", "inline.cc", 20);
  testing::FunctionBuilder twice(program, "twice", "inline.cc", 30);
  program.entry = main_fn.id();
  {
    VarId d = main_fn.Param("d");
    VarId x = main_fn.Param("x");
    VarId r = main_fn.Result("r");
    VarId s = main_fn.Var("s"), t = main_fn.Var("t");
    BlockId entry = main_fn.Block("entry");
    main_fn.Call(entry, 2, twice.id(), {x}, {s});
    main_fn.Call(entry, 3, twice.id(), {s}, {t});
    main_fn.Call(entry, 4, tree.id(), {d, t}, {r});
    main_fn.Return(entry, 5);
  }
  {
    VarId d = tree.Param("d");
    VarId x = tree.Param("x");
    VarId r = tree.Result("r");
    VarId zero = tree.Var("zero"), c = tree.Var("c"), one = tree.Var("one");
    VarId d1 = tree.Var("d1"), a = tree.Var("a"), b = tree.Var("b");
    BlockId entry = tree.Block("entry");
    BlockId leaf = tree.Block("leaf");
    BlockId rec = tree.Block("recurse");
    BlockId done = tree.Block("done");
    tree.Fill(entry, 11, d, 0, zero);
    tree.Prim(entry, 11, Primitive::kLe, {d, zero}, c);
    tree.Branch(entry, 11, c, leaf, rec);
    tree.Call(leaf, 12, fold.id(), {x}, {r});
    tree.Goto(leaf, 12, done);
    tree.Fill(rec, 13, d, 1, one);
    tree.Prim(rec, 13, Primitive::kSub, {d, one}, d1);
    tree.Call(rec, 14, tree.id(), {d1, x}, {a});
    tree.Call(rec, 15, tree.id(), {d1, a}, {b});
    tree.Prim(rec, 16, Primitive::kAdd, {a, b}, r);
    tree.Goto(rec, 16, done);
    tree.Return(done, 17);
  }
  {
    VarId x = fold.Param("x");
    VarId y = fold.Result("y");
    VarId zero = fold.Var("zero"), c = fold.Var("c");
    BlockId entry = fold.Block("entry");
    BlockId pos = fold.Block("pos");
    BlockId neg = fold.Block("neg");
    fold.Fill(entry, 21, x, 0, zero);
    fold.Prim(entry, 21, Primitive::kGt, {x, zero}, c);
    fold.Branch(entry, 21, c, pos, neg);
    fold.Prim(pos, 22, Primitive::kAdd, {x, x}, y);
    fold.Return(pos, 22);
    fold.Prim(neg, 23, Primitive::kNeg, {x}, y);
    fold.Return(neg, 23);
  }
  {
    VarId x = twice.Param("x");
    VarId y = twice.Result("y");
    BlockId entry = twice.Block("entry");
    twice.Prim(entry, 31, Primitive::kAdd, {x, x}, y);
    twice.Return(entry, 31);
  }
  return program;
}

const std::vector<TensorType> kTypes = {kI64, kI64};

std::vector<testing::Values> Inputs() {
  std::vector<testing::Values> inputs;
  for (int d = 0; d <= 3; ++d) {
    for (int x : {-5, 0, 1, 4}) inputs.push_back({static_cast<double>(d), static_cast<double>(x)});
  }
  return inputs;
}

bool IsCall(const Op& op) { return std::holds_alternative<CallOp>(op); }

Program Inlined(Program untyped, std::vector<TensorType> types) {
  return testing::Checked(InlineCalls(testing::Typed(std::move(untyped), std::move(types))),
                          "inline_calls");
}

// The pipeline with inlining, up to lower_calls.
Program InlinedAndLowered(Program untyped, std::vector<TensorType> types) {
  Program allocated =
      testing::Checked(AllocateVariables(Inlined(std::move(untyped), std::move(types))),
                       "allocate_variables");
  return testing::Checked(LowerCalls(allocated), "lower_calls");
}

TEST(InlineCallsTest, InlinesNonRecursiveCalleesAndKeepsRecursion) {
  Program p = Inlined(MakeInlineProgram(), kTypes);
  // The whole text: tests/passes/text/inline_calls_tree.ir (text_test.cc).
  // fold and twice are gone; the only calls left are main's call of tree and
  // tree's two self-calls.
  ASSERT_EQ(p.module.functions.size(), 2u) << PrintProgram(p);
  EXPECT_EQ(p.module.functions[0].name, "main");
  EXPECT_EQ(p.module.functions[1].name, "tree");
  EXPECT_EQ(testing::CountOps(p, IsCall), 3) << PrintProgram(p);
  // Two copies of twice in main, with distinct variables.
  testing::FindVar(p, "main", "twice.x");
  testing::FindVar(p, "main", "twice.x#2");
  EXPECT_GE(testing::FindBlock(p, "tree", "fold.pos"), 0);
  EXPECT_GE(testing::FindBlock(p, "tree", "leaf.ret"), 0);
}

TEST(InlineCallsTest, ComputesWhatTheCallsComputed) {
  Program reference = testing::Allocated(MakeInlineProgram(), kTypes);
  Program with_calls = testing::Lowered(MakeInlineProgram(), kTypes);
  Program inlined = InlinedAndLowered(MakeInlineProgram(), kTypes);
  testing::StackRun before, after;
  ASSERT_TRUE(testing::AgreesWithReference(reference, with_calls, Inputs(), &before));
  ASSERT_TRUE(testing::AgreesWithReference(reference, inlined, Inputs(), &after));
  // The leaf no longer costs a call: fewer block executions per lane.
  EXPECT_LT(after.lane_block_executions, before.lane_block_executions);
}

TEST(InlineCallsTest, LeavesRecursiveProgramsAlone) {
  for (auto make : {testing::MakeFibonacciProgram, testing::MakeEvenOddProgram,
                    testing::MakeEvenOddNonTailProgram, testing::MakeSwapProgram,
                    testing::MakeEdgeProgram, testing::MakeCollatzProgram}) {
    Program typed = testing::Typed(make(), std::vector<TensorType>(
                                               make().entry_function().params.size(), kI64));
    Program p = testing::Checked(InlineCalls(typed), "inline_calls");
    EXPECT_EQ(p, typed) << PrintProgram(p);
  }
}

// A callee above kInlineMaxOps ops with two call sites stays a function; with
// one call site it is inlined whatever its size.
TEST(InlineCallsTest, BigCalleesWithSeveralCallersStayFunctions) {
  for (int sites : {1, 2}) {
    Program program;
    testing::FunctionBuilder main_fn(program, "main", "big.cc", 1);
    testing::FunctionBuilder big(program, "big", "big.cc", 10);
    program.entry = main_fn.id();
    VarId x = main_fn.Param("x");
    VarId r = main_fn.Result("r");
    BlockId entry = main_fn.Block("entry");
    VarId v = x;
    for (int i = 0; i < sites; ++i) {
      VarId out = i + 1 == sites ? r : main_fn.Var("s" + std::to_string(i));
      main_fn.Call(entry, 2 + i, big.id(), {v}, {out});
      v = out;
    }
    main_fn.Return(entry, 9);
    VarId bx = big.Param("x");
    VarId by = big.Result("y");
    BlockId body = big.Block("entry");
    VarId acc = bx;
    for (int i = 0; i <= kInlineMaxOps; ++i) {
      VarId next = i == kInlineMaxOps ? by : big.Var("v" + std::to_string(i));
      big.Prim(body, 11, Primitive::kAdd, {acc, bx}, next);
      acc = next;
    }
    big.Return(body, 12);
    Program p = Inlined(program, {kI64});
    EXPECT_EQ(testing::CountOps(p, IsCall), sites == 1 ? 0 : 2) << PrintProgram(p);
    EXPECT_TRUE(testing::AgreesWithReference(testing::Allocated(program, {kI64}),
                                             InlinedAndLowered(program, {kI64}),
                                             testing::SmallLaneInputs(1)));
  }
}

TEST(InlineCallsTest, PipelineInlinesUnlessDisabled) {
  absl::StatusOr<Program> inlined = LowerProgram(MakeInlineProgram(), kTypes);
  absl::StatusOr<Program> kept =
      LowerProgram(MakeInlineProgram(), kTypes, PipelineOptions{.inline_calls = false});
  ASSERT_TRUE(inlined.ok()) << inlined.status();
  ASSERT_TRUE(kept.ok()) << kept.status();
  EXPECT_EQ(inlined->module.functions.size(), 2u);
  EXPECT_EQ(kept->module.functions.size(), 4u);
  EXPECT_TRUE(testing::AgreesWithReference(testing::Allocated(MakeInlineProgram(), kTypes),
                                           *inlined, Inputs()));
}

// f0(x) = x + x; fk(x) = f(k-1)(f(k-1)(x)); main(x) = f_levels(x). Every
// function is tiny before inlining; inlined bottom-up, each level doubles.
Program MakeDoublingChain(int levels) {
  Program program;
  testing::FunctionBuilder main_fn(program, "main", "chain.cc", 1);
  program.entry = main_fn.id();
  FunctionId previous;
  {
    testing::FunctionBuilder f0(program, "f0", "chain.cc", 10);
    VarId x = f0.Param("x");
    VarId y = f0.Result("y");
    BlockId b = f0.Block("entry");
    f0.Prim(b, 11, Primitive::kAdd, {x, x}, y);
    f0.Return(b, 11);
    previous = f0.id();
  }
  for (int k = 1; k <= levels; ++k) {
    testing::FunctionBuilder fk(program, "f" + std::to_string(k), "chain.cc", 20 + k);
    VarId x = fk.Param("x");
    VarId y = fk.Result("y");
    VarId t = fk.Var("t");
    BlockId b = fk.Block("entry");
    fk.Call(b, 20 + k, previous, {x}, {t});
    fk.Call(b, 20 + k, previous, {t}, {y});
    fk.Return(b, 20 + k);
    previous = fk.id();
  }
  VarId x = main_fn.Param("x");
  VarId r = main_fn.Result("r");
  BlockId b = main_fn.Block("entry");
  main_fn.Call(b, 2, previous, {x}, {r});
  main_fn.Return(b, 3);
  return program;
}

// The size limit applies to the callee as it is after its own inlining, so
// code grows by a bounded factor, not 2^levels.
TEST(InlineCallsTest, CodeGrowthIsBounded) {
  for (int levels : {4, 12, 20}) {
    Program p = Inlined(MakeDoublingChain(levels), {kI64});
    EXPECT_LT(testing::CountOps(p, [](const Op&) { return true; }), 40 * (levels + 1))
        << "levels " << levels;
    if (levels > 12) continue;  // the reference runs 2^levels ops
    EXPECT_TRUE(testing::AgreesWithReference(testing::Allocated(MakeDoublingChain(levels), {kI64}),
                                             InlinedAndLowered(MakeDoublingChain(levels), {kI64}),
                                             testing::SmallLaneInputs(1)));
  }
}

// Compiling a chain of calls is linear in its length: inlining clones each
// callee once, as written (not its grown body into each caller), the copies
// the inlined calls leave are coalesced with indexed lookups, and type
// inference re-sweeps only what changed. Timed in bench/compile_bench
// (docs/BENCHMARKS.md); here the work is checked by what it leaves: one
// function, names that do not nest, the right answer.
// (A chain of 2,000 calls was still compiling after 60 s at 14 GB; 5,000
// now take about 2 s.)
TEST(InlineCallsTest, LongChainsAndTreesOfCallsCompileLinearly) {
  constexpr int kCount = 5000;
  for (const auto& [program, value] :
       {std::pair{testing::CallChain(kCount), int64_t{kCount}},
        std::pair{testing::CallTree(kCount), testing::CallTreeValue(kCount)}}) {
    absl::StatusOr<Program> lowered = LowerProgram(program, {kI64});
    ASSERT_TRUE(lowered.ok()) << lowered.status();
    EXPECT_EQ(lowered->module.functions.size(), 1u);
    size_t longest = 0;
    for (const Variable& var : lowered->module.variables) {
      longest = std::max(longest, var.name.size());
    }
    EXPECT_LE(longest, 16u);  // "f4999.y4999", not "f2.f3.f4..."
    EXPECT_LE(testing::CountOps(*lowered, [](const Op&) { return true; }), 3 * kCount);
    absl::StatusOr<std::vector<Tensor>> out =
        RunProgram(*lowered, {*Tensor::FromVector(std::vector<int64_t>{1, -2})}, nullptr, {});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].ToVector<int64_t>(), (std::vector<int64_t>{value, -2 * value}));
  }
}

// A deadline that has passed stops the inlining at its first reading of
// the clock (after 1,024 ops or blocks scanned; kPassOpWork).
TEST(InlineCallsTest, StopsOnceItsDeadlinePasses) {
  const Program typed = testing::Typed(testing::CallChain(3000), {kI64});
  absl::StatusOr<Program> stopped = InlineCalls(typed, testing::PassedDeadline());
  EXPECT_EQ(stopped.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(stopped.status().message(),
            "pass inline_calls was stopped by the compile's time budget");
  EXPECT_EQ(*InlineCalls(typed, Deadline::In(1e6)), *InlineCalls(typed));
}

// g(x) -> y: a loop whose header is g's entry, called twice by main:
//   ^0 entry: one; zero; x = sub(x, one); c = gt(x, zero); branch c ^0 ^1
//   ^1 done:  y = add(x, x); return
// main(a) -> r: s = g(a); r = g(s)
Program MakeLoopEntryProgram() {
  Program program;
  testing::FunctionBuilder main_fn(program, "main", "loop.cc", 1);
  testing::FunctionBuilder g(program, "g", "loop.cc", 10);
  program.entry = main_fn.id();
  {
    VarId x = g.Param("x");
    VarId y = g.Result("y");
    VarId one = g.Var("one"), zero = g.Var("zero"), c = g.Var("c");
    BlockId entry = g.Block("entry");
    BlockId done = g.Block("done");
    g.Fill(entry, 11, x, 1, one);
    g.Fill(entry, 11, x, 0, zero);
    g.Prim(entry, 12, Primitive::kSub, {x, one}, x);
    g.Prim(entry, 12, Primitive::kGt, {x, zero}, c);
    g.Branch(entry, 13, c, entry, done);
    g.Prim(done, 14, Primitive::kAdd, {x, x}, y);
    g.Return(done, 14);
  }
  VarId a = main_fn.Param("a");
  VarId r = main_fn.Result("r");
  VarId s = main_fn.Var("s");
  BlockId b = main_fn.Block("entry");
  main_fn.Call(b, 2, g.id(), {a}, {s});
  main_fn.Call(b, 3, g.id(), {s}, {r});
  main_fn.Return(b, 4);
  return program;
}

// A loop back to the callee's entry keeps that block (it has two
// predecessors); the second copy gets labels of its own.
TEST(InlineCallsTest, CalleeWhoseEntryIsALoopHeader) {
  Program p = Inlined(MakeLoopEntryProgram(), {kI64});
  EXPECT_EQ(testing::CountOps(p, IsCall), 0) << PrintProgram(p);
  EXPECT_GE(testing::FindBlock(p, "main", "g.entry"), 0) << PrintProgram(p);
  EXPECT_GE(testing::FindBlock(p, "main", "g#2.entry"), 0) << PrintProgram(p);
  EXPECT_TRUE(testing::AgreesWithReference(testing::Allocated(MakeLoopEntryProgram(), {kI64}),
                                           InlinedAndLowered(MakeLoopEntryProgram(), {kI64}),
                                           testing::SmallLaneInputs(1)));
}

// A callee that may Halt stays a function: inlined into the entry, its Halt
// would make the entry's results look unassigned on that path.
//   g(x) -> y: x > 0 ? (y = copy x; return) : halt.   main(x) -> r = g(x)
TEST(InlineCallsTest, CalleesThatHaltAreNotInlined) {
  Program program;
  testing::FunctionBuilder main_fn(program, "main", "halt.cc", 1);
  testing::FunctionBuilder g(program, "g", "halt.cc", 10);
  program.entry = main_fn.id();
  VarId gx = g.Param("x");
  VarId gy = g.Result("y");
  VarId zero = g.Var("zero"), c = g.Var("c");
  BlockId entry = g.Block("entry");
  BlockId pos = g.Block("pos");
  g.Block("stop");  // its terminator is Halt
  g.Fill(entry, 11, gx, 0, zero);
  g.Prim(entry, 11, Primitive::kGt, {gx, zero}, c);
  g.Branch(entry, 11, c, pos, BlockId(2));
  g.Prim(pos, 12, Primitive::kCopy, {gx}, gy);
  g.Return(pos, 12);
  VarId x = main_fn.Param("x");
  VarId r = main_fn.Result("r");
  BlockId b = main_fn.Block("entry");
  main_fn.Call(b, 2, g.id(), {x}, {r});
  main_fn.Return(b, 3);
  Program p = Inlined(program, {kI64});
  EXPECT_EQ(testing::CountOps(p, IsCall), 1) << PrintProgram(p);
  absl::StatusOr<Program> lowered = LowerProgram(program, {kI64});
  EXPECT_TRUE(lowered.ok()) << lowered.status();
}

// A call to a gradient stub stays a call (the stub has no body yet); its
// primal, inlined at its own call site, stays a function for the stub.
TEST(InlineCallsTest, GradientStubsAreNotInlinedAndKeepTheirPrimal) {
  Program program = testing::MakeGradientStubCallerProgram();
  const FunctionId f = *program.module.FindFunction("f");
  const FunctionId main_id = *program.module.FindFunction("main");
  Function& main = program.module.function(main_id);
  const VarId w = program.module.AddVariable(Variable{"w", main_id, {}, StorageClass::kFull});
  main.results.push_back(w);
  main.blocks[1].ops.push_back(CallOp{f, {main.params[0], main.params[1]}, {w}, {"grad.cc", 3}});
  const TensorType f64 = Scalar(DType::kF64);
  Program p = Inlined(program, {f64, f64});
  EXPECT_EQ(testing::CountOps(p, IsCall), 1) << PrintProgram(p);
  const Function& stub = testing::FindFunction(p, "grad_f");
  ASSERT_TRUE(stub.gradient_of.has_value());
  EXPECT_EQ(p.module.function(stub.gradient_of->function).name, "f");
  EXPECT_TRUE(stub.blocks.empty());
  EXPECT_THAT(PrintProgram(p), ::testing::HasSubstr("= call @grad_f("));
}

TEST(InlineCallsTest, RejectsUntypedPrograms) {
  absl::StatusOr<Program> p = InlineCalls(MakeInlineProgram());
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(p.status().message(), ::testing::HasSubstr("run infer_types first"));
}

}  // namespace
}  // namespace autobatch
