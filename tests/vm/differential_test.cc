// Differential tests: every sample, and programs aimed at particular VM
// paths, give bit-identical per-lane results on the reference interpreter, the
// stackless VM and the stack VM (also with every block forced compact or
// dense, and with the whole program compiled: CallOptions::jit_compiled_program,
// cached beside this test's binary unless AUTOBATCH_CACHE_DIR says where), on
// every backend, at several batch sizes and with lanes permuted.
//
// AUTOBATCH_DIFFERENTIAL_DUMP=FILE appends every program's expected outputs
// (the bits every executor matched), in test order, to FILE:
// tools/check_portable_bits.sh compares two builds' dumps byte for byte.
#include <algorithm>
#include <filesystem>
#include <bit>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <optional>
#include <random>
#include <string>
#include <variant>
#include <vector>

#include "backends/backend.h"
#include "frontend/context.h"
#include "ir/printer.h"
#include "passes/pipeline.h"
#include "gtest/gtest.h"
#include "samples/collatz/collatz.h"
#include "samples/fibonacci/fibonacci.h"
#include "samples/mutual_recursion/even_odd.h"
#include "samples/peanuts/peanuts.h"
#include "ir/testing/tape_programs.h"
#include "tests/passes/test_programs.h"
#include "frontend/run.h"

namespace autobatch {
namespace {

// Lane `perm[i]` of the result is lane i of `t`.
Tensor PermuteLanes(const Tensor& t, const std::vector<int64_t>& perm) {
  Tensor out(t.type(), t.batch());
  for (int64_t i = 0; i < t.batch(); ++i) out.CopyLaneFrom(t, i, perm[i]);
  return out;
}

// Appends `outputs` to the file AUTOBATCH_DIFFERENTIAL_DUMP names (if set):
// a header line naming the test and each output's type, then one line per
// lane with the lane's bytes in hex.
void DumpOutputs(const std::vector<Tensor>& outputs) {
  const char* path = std::getenv("AUTOBATCH_DIFFERENTIAL_DUMP");
  if (path == nullptr || *path == '\0') return;
  std::FILE* file = std::fopen(path, "ab");
  ASSERT_NE(file, nullptr) << "AUTOBATCH_DIFFERENTIAL_DUMP: cannot open '" << path
                           << "' for appending; name a writable file";
  const ::testing::TestInfo* test = ::testing::UnitTest::GetInstance()->current_test_info();
  std::fprintf(file, "%s.%s\n", test->test_suite_name(), test->name());
  for (size_t k = 0; k < outputs.size(); ++k) {
    const Tensor& t = outputs[k];
    std::fprintf(file, "output %zu: %s, %lld lanes\n", k, t.type().ToString().c_str(),
                 static_cast<long long>(t.batch()));
    for (int64_t lane = 0; lane < t.batch(); ++lane) {
      const auto* bytes = reinterpret_cast<const unsigned char*>(t.lane_bytes_ptr(lane));
      for (int64_t i = 0; i < t.lane_bytes(); ++i) std::fprintf(file, "%02x", bytes[i]);
      std::fputc('\n', file);
    }
  }
  ASSERT_EQ(std::fclose(file), 0) << "AUTOBATCH_DIFFERENTIAL_DUMP: cannot write '" << path << "'";
}

struct Executor {
  std::string name;
  CallOptions options;
};

std::vector<Executor> AllExecutors() {
  std::vector<Executor> out;
  for (BackendKind kind : AllBackendKinds()) {
    std::string backend(BackendKindName(kind));
    out.push_back({"stack/" + backend, {.vm = Vm::kStack, .backend = backend}});
    out.push_back(
        {"stackless/" + backend, {.vm = Vm::kStackless, .backend = backend}});
    // Every block with an idle lane COMPACT, then every block DENSE.
    for (double fraction : {1.0, 0.0}) {
      out.push_back({"stack/" + backend + (fraction > 0 ? "/compact" : "/dense"),
                     {.vm = Vm::kStack,
                      .backend = backend,
                      .dense_fraction = fraction,
                      .dense_fraction_heavy = fraction,
                      .time_dense_or_compact = false}});
    }
    // Every block with an idle lane compact, in tiles of the fewest lanes.
    out.push_back({"stack/" + backend + "/tiled",
                   {.vm = Vm::kStack,
                    .backend = backend,
                    .dense_fraction = 1.0,
                    .dense_fraction_heavy = 1.0,
                    .time_dense_or_compact = false,
                    .tile_bytes = 1}});
    // Every Full variable a frame stack, with blocks compact, dense and tiled.
    for (double fraction : {1.0, 0.0}) {
      out.push_back({"stack/" + backend + (fraction > 0 ? "/frames/compact" : "/frames/dense"),
                     {.vm = Vm::kStack,
                      .backend = backend,
                      .dense_fraction = fraction,
                      .dense_fraction_heavy = fraction,
                      .time_dense_or_compact = false,
                      .frame_stack_min_lane_bytes = 1}});
    }
    // The whole program compiled (the JIT compiles each program once; the
    // backends share it), with stacks of both kinds.
    out.push_back({"stack/" + backend + "/compiled",
                   {.vm = Vm::kStack, .backend = backend, .jit_compiled_program = true}});
    out.push_back({"stack/" + backend + "/frames/compiled",
                   {.vm = Vm::kStack,
                    .backend = backend,
                    .frame_stack_min_lane_bytes = 1,
                    .jit_compiled_program = true}});
    out.push_back({"stack/" + backend + "/frames/tiled",
                   {.vm = Vm::kStack,
                    .backend = backend,
                    .dense_fraction = 1.0,
                    .dense_fraction_heavy = 1.0,
                    .time_dense_or_compact = false,
                    .tile_bytes = 1,
                    .frame_stack_min_lane_bytes = 1}});
  }
  return out;
}

// Runs `program` on every executor and checks every result, and the results
// with permuted inputs, against the reference interpreter bit for bit.
void ExpectAllExecutorsAgree(const Program& program,
                             const KernelRegistry& kernels,
                             const std::vector<Tensor>& inputs) {
  CallOptions dry{.dry_run = true};
  absl::StatusOr<std::vector<Tensor>> expected =
      RunProgram(program, inputs, &kernels, dry);
  ASSERT_TRUE(expected.ok()) << expected.status();
  DumpOutputs(*expected);
  const int64_t batch = inputs.front().batch();
  std::vector<int64_t> perm(static_cast<size_t>(batch));
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), std::mt19937_64(batch));
  std::vector<Tensor> permuted_inputs;
  for (const Tensor& t : inputs) permuted_inputs.push_back(PermuteLanes(t, perm));

  for (const Executor& ex : AllExecutors()) {
    SCOPED_TRACE(ex.name + " batch " + std::to_string(batch));
    absl::StatusOr<std::vector<Tensor>> got =
        RunProgram(program, inputs, &kernels, ex.options);
    ASSERT_TRUE(got.ok()) << got.status();
    ASSERT_EQ(got->size(), expected->size());
    for (size_t k = 0; k < got->size(); ++k) {
      EXPECT_TRUE((*got)[k] == (*expected)[k]) << "output " << k;
    }
    absl::StatusOr<std::vector<Tensor>> got_permuted =
        RunProgram(program, permuted_inputs, &kernels, ex.options);
    ASSERT_TRUE(got_permuted.ok()) << got_permuted.status();
    for (size_t k = 0; k < got->size(); ++k) {
      EXPECT_TRUE((*got_permuted)[k] == PermuteLanes((*expected)[k], perm))
          << "permuted output " << k;
    }
  }
}

// ExpectAllExecutorsAgree on the program of the function `define` registers.
void ExpectDefinedFunctionAgrees(BatchFunction (*define)(Context&),
                                 const std::vector<Tensor>& inputs) {
  Context ctx;
  BatchFunction fn = define(ctx);
  absl::StatusOr<Program> program = ctx.Program(fn);
  ASSERT_TRUE(program.ok()) << program.status();
  ExpectAllExecutorsAgree(*program, ctx.kernels(), inputs);
}

// The JIT's cache (the compiled executors above): beside the test's
// binary, unless AUTOBATCH_CACHE_DIR names one; and its programs compiled at
// -O1 unless AUTOBATCH_JIT_FLAGS says otherwise (the bits do not depend on
// the level, and CI's portable-bits stage compiles them all from scratch:
// at -O3 that took about 4 of its 9 minutes).
class JitCacheBesideTheBinary : public ::testing::Environment {
 public:
  void SetUp() override {
    std::error_code error;
    const std::filesystem::path binary = std::filesystem::read_symlink("/proc/self/exe", error);
    ASSERT_FALSE(error) << "cannot find the test's binary: " << error.message();
    setenv("AUTOBATCH_CACHE_DIR", (binary.parent_path() / "jit_cache").c_str(),
           /*overwrite=*/0);
    setenv("AUTOBATCH_JIT_FLAGS", "-O1", /*overwrite=*/0);
  }
};
const auto* const jit_cache = ::testing::AddGlobalTestEnvironment(new JitCacheBesideTheBinary);

class DifferentialTest : public ::testing::TestWithParam<int64_t> {};

TEST_P(DifferentialTest, Fibonacci) {
  Context ctx;
  BatchFunction fib = samples::DefineFibonacci(ctx);
  absl::StatusOr<Program> program = ctx.Program(fib);
  ASSERT_TRUE(program.ok()) << program.status();
  std::mt19937_64 rng(GetParam());
  std::vector<int64_t> n(static_cast<size_t>(GetParam()));
  for (int64_t& v : n) v = std::uniform_int_distribution<int64_t>(-2, 14)(rng);
  ExpectAllExecutorsAgree(*program, ctx.kernels(), {*Tensor::FromVector(n)});
}

TEST_P(DifferentialTest, EvenOdd) {
  Context ctx;
  samples::EvenOdd fns = samples::DefineEvenOdd(ctx);
  absl::StatusOr<Program> program = ctx.Program(fns.is_even);
  ASSERT_TRUE(program.ok()) << program.status();
  std::mt19937_64 rng(GetParam() + 1);
  std::vector<int64_t> n(static_cast<size_t>(GetParam()));
  for (int64_t& v : n) v = std::uniform_int_distribution<int64_t>(0, 40)(rng);
  ExpectAllExecutorsAgree(*program, ctx.kernels(), {*Tensor::FromVector(n)});
}

TEST_P(DifferentialTest, Collatz) {
  Context ctx;
  BatchFunction collatz = samples::DefineCollatz(ctx);
  absl::StatusOr<Program> program = ctx.Program(collatz);
  ASSERT_TRUE(program.ok()) << program.status();
  std::mt19937_64 rng(GetParam() + 2);
  std::vector<int64_t> n(static_cast<size_t>(GetParam()));
  for (int64_t& v : n) v = std::uniform_int_distribution<int64_t>(-3, 1000)(rng);
  ExpectAllExecutorsAgree(*program, ctx.kernels(), {*Tensor::FromVector(n)});
}

TEST_P(DifferentialTest, PeaNuts) {
  Context ctx;
  const samples::PeaNutsConfig config{.dimension = 8, .max_depth = 4};
  BatchFunction peanuts = samples::DefinePeaNuts(ctx, config);
  absl::StatusOr<Program> program = ctx.Program(peanuts);
  ASSERT_TRUE(program.ok()) << program.status();
  const int64_t batch = GetParam();
  std::mt19937_64 rng(GetParam() + 3);
  std::vector<double> x(static_cast<size_t>(batch * config.dimension));
  for (double& v : x) v = std::normal_distribution<double>()(rng);
  std::vector<int64_t> seed(static_cast<size_t>(batch)), traj(seed.size());
  for (size_t i = 0; i < seed.size(); ++i) {
    seed[i] = static_cast<int64_t>(rng());
    traj[i] = std::uniform_int_distribution<int64_t>(0, 3)(rng);
  }
  ExpectAllExecutorsAgree(
      *program, ctx.kernels(),
      {*Tensor::FromVector(x, {config.dimension}), *Tensor::FromVector(seed),
       *Tensor::FromVector(traj)});
}

// walk(n, x) recurses n deep and on the way back copies into variables that
// live across blocks (vm/stack/compact.cc runs such copies storage to storage in
// compact blocks), each case of it once (WalkTest checks the lowered IR):
// * `flag = keep` is flag's first write in the activation, and flag lives
//   across the second call: the copy pushes a frame; flag is then read and
//   branched on in the same block;
// * `flag = even` overwrites flag (in place) after `flag = !flag` wrote its
//   compact copy and a select read it; flag is read and branched on again;
// * `side = even` overwrites side after `side = !side`, and nothing in the
//   block reads side again;
// * `last = acc` copies from a variable written earlier in its block.
BatchFunction DefineWalk(Context& ctx) {
  BatchFunction walk = ctx.Declare("walk", {.param_names = {"n", "x"}});
  ctx.Batch(walk)([walk](Builder& b, Value n, Value x) {
    Var acc = b.Local("acc", x);
    Var last = b.Local("last", n);
    Var side = b.Local("side", x > 5);
    Var keep = b.Local("keep", x % 3 == 0);
    Var even = b.Local("even", n % 2 == 0);
    b.If(n > 0).Then([&] {
      Value r = walk(n - 1, x + n);
      Var flag = b.Local("flag", keep);
      acc = acc + select(flag, r, -r);
      b.If(flag).Then([&] { acc = acc + walk(0, acc); });
      flag = !flag;
      side = !side;
      acc = select(flag, acc * 2, acc + 1) + cast(side, DType::kI64);
      flag = even;
      side = even;
      acc = acc + select(flag, acc, -acc);
      b.If(flag).Then([&] {
        acc = acc - 7;
        last = acc;
      });
    });
    return acc * 3 + last + cast(side, DType::kI64);
  });
  return walk;
}

std::vector<Tensor> WalkInputs(int64_t batch) {
  std::mt19937_64 rng(static_cast<uint64_t>(batch) + 4);
  std::vector<int64_t> n(static_cast<size_t>(batch)), x(n.size());
  for (size_t i = 0; i < n.size(); ++i) {
    n[i] = std::uniform_int_distribution<int64_t>(0, 12)(rng);
    x[i] = std::uniform_int_distribution<int64_t>(-40, 40)(rng);
  }
  return {*Tensor::FromVector(n), *Tensor::FromVector(x)};
}

TEST_P(DifferentialTest, CopiesIntoVariablesThatLiveAcrossBlocks) {
  ExpectDefinedFunctionAgrees(DefineWalk, WalkInputs(GetParam()));
}

// ladder(n, x) copies `c = a` where both live across calls (Full) but are
// pushed in different activations: a in every one, c only after a first
// recursive call. At that copy a lane's frame of a and its frame of c sit
// at different depths, which frame stacks (every executor ".../frames")
// must address separately.
TEST_P(DifferentialTest, CopiesBetweenStacksAtDifferentDepths) {
  Context ctx;
  BatchFunction ladder = ctx.Declare("ladder", {.param_names = {"n", "x"}});
  ctx.Batch(ladder)([ladder](Builder& b, Value n, Value x) {
    Var a = b.Local("a", x * 3 + n);
    Var out = b.Local("out", x);
    b.If(n > 0).Then([&] {
      Value r = ladder(n - 1, x + 2);
      Var c = b.Local("c", a);
      Value s = ladder(n / 2 - 1, x - c);
      out = c * 5 + r - s + a;
    });
    return out;
  });
  absl::StatusOr<Program> program = ctx.Program(ladder);
  ASSERT_TRUE(program.ok()) << program.status();
  ExpectAllExecutorsAgree(*program, ctx.kernels(), WalkInputs(GetParam()));
}

// A copy op between two variables that outlive its block (Register or
// Full): the copies the stack VM may run storage to storage in compact blocks.
struct LastingCopy {
  BlockId block;
  bool full = false;            // into a Full variable
  bool pushes = false;          // ... not in place: it pushes a frame
  bool output_written = false;  // the block writes the output before the copy
  bool output_read = false;     // ... and reads it after the copy
  bool branches = false;        // the block branches on the output
  bool source_written = false;  // the block writes the source before the copy
};

std::vector<LastingCopy> LastingCopies(const Module& module, const Function& fn) {
  auto lasting = [&](VarId v) {
    const StorageClass storage = module.var(v).storage;
    return storage == StorageClass::kRegister || storage == StorageClass::kFull;
  };
  auto has = [](const std::vector<VarId>& vars, VarId v) {
    return std::find(vars.begin(), vars.end(), v) != vars.end();
  };
  std::vector<LastingCopy> found;
  for (size_t b = 0; b < fn.blocks.size(); ++b) {
    const Block& block = fn.blocks[b];
    std::vector<const PrimOp*> ops;
    for (const Op& op : block.ops) {
      if (const auto* prim = std::get_if<PrimOp>(&op)) ops.push_back(prim);
    }
    for (size_t i = 0; i < ops.size(); ++i) {
      const PrimOp& op = *ops[i];
      if (op.prim != Primitive::kCopy || !lasting(op.inputs[0]) || !lasting(op.outputs[0])) {
        continue;
      }
      const VarId in = op.inputs[0], out = op.outputs[0];
      LastingCopy copy{.block = BlockId(static_cast<int32_t>(b))};
      copy.full = module.var(out).storage == StorageClass::kFull;
      copy.pushes = copy.full && op.in_place.empty();
      for (size_t j = 0; j < ops.size(); ++j) {
        if (j < i) copy.output_written |= has(ops[j]->outputs, out);
        if (j < i) copy.source_written |= has(ops[j]->outputs, in);
        if (j > i) copy.output_read |= has(ops[j]->inputs, out);
      }
      const auto* branch = std::get_if<Branch>(&block.terminator);
      copy.branches = branch != nullptr && branch->cond == out;
      found.push_back(copy);
    }
  }
  return found;
}

// walk's lowered IR has the four copies DefineWalk describes, and with
// blocks forced compact their blocks run compact.
TEST(WalkTest, CopiesIntoLastingVariablesRunInCompactBlocks) {
  Context ctx;
  BatchFunction walk = DefineWalk(ctx);
  absl::StatusOr<const Program*> lowered =
      ctx.LoweredProgram(walk, {Scalar(DType::kI64), Scalar(DType::kI64)});
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  const Program& program = **lowered;
  const Function& fn = program.module.function(program.entry);
  const std::vector<LastingCopy> copies = LastingCopies(program.module, fn);
  auto block_of = [&](auto&& matches) -> std::optional<BlockId> {
    const auto it = std::find_if(copies.begin(), copies.end(), matches);
    if (it == copies.end()) return std::nullopt;
    return it->block;
  };
  const std::optional<BlockId> blocks[] = {
      block_of([](const LastingCopy& c) { return c.pushes && c.output_read && c.branches; }),
      block_of([](const LastingCopy& c) {
        return c.full && c.output_written && c.output_read && c.branches;
      }),
      block_of([](const LastingCopy& c) { return c.output_written && !c.output_read; }),
      block_of([](const LastingCopy& c) { return c.source_written; }),
  };
  Profile profile;
  absl::StatusOr<std::vector<Tensor>> out =
      RunProgram(program, WalkInputs(64), &ctx.kernels(),
                 {.vm = Vm::kStack,
                  .dense_fraction = 1.0,
                  .dense_fraction_heavy = 1.0,
                  .time_dense_or_compact = false},
                 &profile);
  ASSERT_TRUE(out.ok()) << out.status();
  for (size_t k = 0; k < std::size(blocks); ++k) {
    ASSERT_TRUE(blocks[k].has_value()) << "copy " << k << " missing:\n" << PrintProgram(program);
    EXPECT_GT(profile.blocks[program.entry.value][blocks[k]->value].compact, 0)
        << "block " << fn.blocks[blocks[k]->value].label;
  }
}

// climb(n, s) recurses n deep through one of two call sites per level (chosen
// by s), and its result encodes the site every level returned to: a lane
// popping another lane's or another depth's return address gets a wrong
// result.
BatchFunction DefineClimb(Context& ctx) {
  BatchFunction climb = ctx.Declare("climb", {.param_names = {"n", "s"}});
  ctx.Batch(climb)([climb](Builder& b, Value n, Value s) {
    Var out = b.Local("out", s);
    b.If(n > 0).Then([&] {
      b.If(s % 3 == 0)
          .Then([&] { out = (climb(n - 1, s + 1) * 2 + 1) % 1000003; })
          .Else([&] { out = (climb(n - 1, s * 5 % 1009) * 3 + 2) % 1000003; });
    });
    return out;
  });
  return climb;
}

// Lanes at different depths in one batch, beyond the 4 frames per lane the
// stack VM's PC stacks start with: every 128th lane up to 50 or 1000 deep
// (lane 0 the deepest), the others up to 8 (which keeps the reference
// interpreter fast).
TEST_P(DifferentialTest, LanesAtDifferentRecursionDepths) {
  Context ctx;
  BatchFunction climb = DefineClimb(ctx);
  absl::StatusOr<Program> program = ctx.Program(climb);
  ASSERT_TRUE(program.ok()) << program.status();
  for (int64_t max_depth : {50, 1000}) {
    std::mt19937_64 rng(static_cast<uint64_t>(GetParam() + max_depth));
    std::vector<int64_t> n(static_cast<size_t>(GetParam())), s(n.size());
    for (size_t i = 0; i < n.size(); ++i) {
      const int64_t bound = i % 128 == 0 ? max_depth : 8;
      n[i] = i == 0 ? max_depth : std::uniform_int_distribution<int64_t>(0, bound)(rng);
      s[i] = std::uniform_int_distribution<int64_t>(0, 1008)(rng);
    }
    ExpectAllExecutorsAgree(*program, ctx.kernels(),
                            {*Tensor::FromVector(n), *Tensor::FromVector(s)});
  }
}

// The shape of NUTS's build_tree: `key` goes through every recursive call
// unchanged (a Register, no stack: passes/analysis/call_graph.h, CallMayWrite), and
// the second subtree's results come back in the result registers and are
// merged by selects that read and write the same register (coalesce_registers
// folds the copies that saved them).
TEST_P(DifferentialTest, TreeWithPassedThroughKeyAndInPlaceMerges) {
  Context ctx;
  BatchFunction tree = ctx.Declare("tree", {.param_names = {"depth", "x", "key"}});
  ctx.Batch(tree)([tree](Builder& b, Value depth, Value x, Value key) {
    b.If(depth <= 0).Then([&] { b.Return(x + key, x * 3 % 1009); });
    auto [lo1, hi1] = tree(depth - 1, x, key).Get<2>();
    auto [lo2, hi2] = tree(depth - 1, hi1, key).Get<2>();
    // As NUTS returns a subtree that U-turned: the second call's results
    // now live across blocks, in registers copied from the result registers.
    b.If(lo2 % 7 == 0).Then([&] { b.Return(lo2, hi2); });
    Value take = (lo2 + hi2 + key) % 2 == 0;
    return std::tuple<Value, Value>{select(take, lo2, lo1), select(take, hi2, hi1 + key)};
  });
  absl::StatusOr<Program> program = ctx.Program(tree);
  ASSERT_TRUE(program.ok()) << program.status();
  // What the test is about, in the lowered program.
  const TensorType i64 = Scalar(DType::kI64);
  absl::StatusOr<Program> lowered = LowerProgram(*program, {i64, i64, i64});
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  const Function& fn = lowered->entry_function();
  EXPECT_EQ(lowered->module.var(fn.params[2]).storage, StorageClass::kRegister)
      << PrintProgram(*lowered);
  bool in_place_merge = false;
  for (const Block& block : fn.blocks) {
    for (const Op& op : block.ops) {
      const auto* prim = std::get_if<PrimOp>(&op);
      if (prim == nullptr || prim->prim != Primitive::kSelect) continue;
      in_place_merge |= std::find(prim->inputs.begin(), prim->inputs.end(),
                                  prim->outputs[0]) != prim->inputs.end();
    }
  }
  EXPECT_TRUE(in_place_merge) << PrintProgram(*lowered);
  std::mt19937_64 rng(static_cast<uint64_t>(GetParam() + 5));
  std::vector<int64_t> depth(static_cast<size_t>(GetParam())), x(depth.size()), key(depth.size());
  for (size_t i = 0; i < depth.size(); ++i) {
    depth[i] = std::uniform_int_distribution<int64_t>(-1, 7)(rng);
    x[i] = std::uniform_int_distribution<int64_t>(0, 1000)(rng);
    key[i] = std::uniform_int_distribution<int64_t>(0, 99)(rng);
  }
  ExpectAllExecutorsAgree(
      *program, ctx.kernels(),
      {*Tensor::FromVector(depth), *Tensor::FromVector(x), *Tensor::FromVector(key)});
}

// NUTS's merge on vectors: a subtree's point is kept or replaced by the next
// subtree's, `x = select(c, y, x)` and `x = select(c, x, y)` on f64[3]
// values that outlive their block, which the stack VM runs in compact blocks
// by copying only the lanes that take y (StoragePeephole::kSelect, vm/stack),
// from registers and from stack frames at other depths; after the second
// select, x is read again in the same block.
BatchFunction DefineWideTree(Context& ctx) {
  BatchFunction tree = ctx.Declare("wide_tree", {.param_names = {"depth", "v", "key"}});
  ctx.Batch(tree)([tree](Builder& b, Value depth, Value v, Value key) {
    b.If(depth <= 0).Then([&] { b.Return(v * 0.5, v + 1.0); });
    auto [lo1, hi1] = tree(depth - 1, v, key).Get<2>();
    auto [lo2, hi2] = tree(depth - 1, hi1 * 0.5, key + depth).Get<2>();
    Var best = b.Local("best", lo1);
    best = select((key + depth) % 2 == 0, lo2, best);
    Var keep = b.Local("keep", hi2);
    keep = select(key % 3 == depth % 3, keep, hi1);
    best = select(reduce_sum(best) > 0.0, best, keep - best);
    return std::tuple<Value, Value>{best, keep};
  });
  return tree;
}

std::vector<Tensor> WideTreeInputs(int64_t batch) {
  std::mt19937_64 rng(static_cast<uint64_t>(batch) + 17);
  std::vector<int64_t> depth(static_cast<size_t>(batch)), key(depth.size());
  std::vector<double> v(3 * depth.size());
  for (size_t i = 0; i < depth.size(); ++i) {
    depth[i] = std::uniform_int_distribution<int64_t>(-1, 6)(rng);
    key[i] = std::uniform_int_distribution<int64_t>(0, 99)(rng);
  }
  for (double& x : v) x = std::uniform_real_distribution<double>(-4, 4)(rng);
  return {*Tensor::FromVector(depth), *Tensor::FromVector(v, {3}), *Tensor::FromVector(key)};
}

TEST_P(DifferentialTest, WideSelectsThatKeepOrReplaceAValue) {
  ExpectDefinedFunctionAgrees(DefineWideTree, WideTreeInputs(GetParam()));
}

// The lowered wide_tree has both forms of the select, writing a variable
// that outlives its block, in blocks that run compact.
TEST(WideTreeTest, HasInPlaceWideSelectsInCompactBlocks) {
  Context ctx;
  BatchFunction tree = DefineWideTree(ctx);
  absl::StatusOr<const Program*> lowered = ctx.LoweredProgram(
      tree, {Scalar(DType::kI64), TensorType{DType::kF64, {3}}, Scalar(DType::kI64)});
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  const Program& program = **lowered;
  const Function& fn = program.entry_function();
  std::optional<BlockId> keeps_if_false, keeps_if_true;  // x = select(c, y, x) / (c, x, y)
  for (size_t b = 0; b < fn.blocks.size(); ++b) {
    for (const Op& op : fn.blocks[b].ops) {
      const auto* prim = std::get_if<PrimOp>(&op);
      if (prim == nullptr || prim->prim != Primitive::kSelect) continue;
      const VarId out = prim->outputs[0];
      const StorageClass storage = program.module.var(out).storage;
      if (storage != StorageClass::kRegister && storage != StorageClass::kFull) continue;
      if (prim->inputs[2] == out) keeps_if_false = BlockId(static_cast<int32_t>(b));
      if (prim->inputs[1] == out) keeps_if_true = BlockId(static_cast<int32_t>(b));
    }
  }
  ASSERT_TRUE(keeps_if_false.has_value()) << PrintProgram(program);
  ASSERT_TRUE(keeps_if_true.has_value()) << PrintProgram(program);
  Profile profile;
  absl::StatusOr<std::vector<Tensor>> out =
      RunProgram(program, WideTreeInputs(64), &ctx.kernels(),
                 {.vm = Vm::kStack,
                  .dense_fraction = 1.0,
                  .dense_fraction_heavy = 1.0,
                  .time_dense_or_compact = false},
                 &profile);
  ASSERT_TRUE(out.ok()) << out.status();
  for (BlockId block : {*keeps_if_false, *keeps_if_true}) {
    EXPECT_GT(profile.blocks[program.entry.value][block.value].compact, 0)
        << fn.blocks[block.value].label;
  }
}

// Lanes that halt deep inside a recursive callee end there: every executor
// returns the entry's results as they were at the Halt, and the callers the
// lane was nested in do not run on for it.
TEST_P(DifferentialTest, HaltInsideARecursiveCallee) {
  KernelRegistry kernels;
  const Program program = testing::MakeHaltInCalleeProgram();
  std::mt19937_64 rng(static_cast<uint64_t>(GetParam() + 11));
  std::vector<int64_t> k(static_cast<size_t>(GetParam())), n(k.size());
  for (size_t i = 0; i < k.size(); ++i) {
    k[i] = std::uniform_int_distribution<int64_t>(0, 60)(rng);
    n[i] = std::uniform_int_distribution<int64_t>(-1, 9)(rng);
  }
  ExpectAllExecutorsAgree(program, kernels, {*Tensor::FromVector(k), *Tensor::FromVector(n)});
  // The reviewer's lane: k = 45 halts at the bottom; main's r is then 45 + 8.
  absl::StatusOr<std::vector<Tensor>> out = RunProgram(
      program, {*Tensor::FromVector<int64_t>({45}), *Tensor::FromVector<int64_t>({8})},
      &kernels, {.vm = Vm::kStackless});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->front().ToVector<int64_t>(), std::vector<int64_t>{53});
}

// Inputs (n, x) of the tape programs (ir/testing/tape_programs.h): per-lane
// trip counts n in [-2, 12], x ~ N(0, 9).
std::vector<Tensor> TapeInputs(int64_t batch, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<int64_t> n(static_cast<size_t>(batch));
  std::vector<double> x(n.size());
  for (size_t i = 0; i < n.size(); ++i) {
    n[i] = std::uniform_int_distribution<int64_t>(-2, 12)(rng);
    x[i] = std::normal_distribution<double>(0, 3)(rng);
  }
  return {*Tensor::FromVector(n), *Tensor::FromVector(x)};
}

// The reference interpreter's result in every lane is the C++ model's, bit
// for bit (the model pops in LIFO order: another order changes the bits).
void ExpectTheModelsBits(const Program& program, const std::vector<Tensor>& inputs,
                         double (*model)(int64_t, double)) {
  KernelRegistry kernels;
  absl::StatusOr<std::vector<Tensor>> out =
      RunProgram(program, inputs, &kernels, {.dry_run = true});
  ASSERT_TRUE(out.ok()) << out.status();
  const std::vector<int64_t> n = inputs[0].ToVector<int64_t>();
  const std::vector<double> x = inputs[1].ToVector<double>();
  const std::vector<double> got = out->front().ToVector<double>();
  for (size_t i = 0; i < n.size(); ++i) {
    EXPECT_EQ(std::bit_cast<uint64_t>(got[i]), std::bit_cast<uint64_t>(model(n[i], x[i])))
        << "lane " << i << ": n = " << n[i] << ", x = " << x[i];
  }
}

// Tapes (ir/ir.h, "Tapes"): a loop pushes on two tapes with per-lane trip
// counts and an If inside, a second loop pops them in reverse and branches
// on a popped value; a value stays on a tape across the whole program.
TEST_P(DifferentialTest, TapesPushedInALoopAndPoppedInReverse) {
  const Program program = testing::TapeLoopProgram();
  const std::vector<Tensor> inputs = TapeInputs(GetParam(), static_cast<uint64_t>(GetParam()) + 21);
  ExpectTheModelsBits(program, inputs, testing::TapeLoopModel);
  ExpectAllExecutorsAgree(program, KernelRegistry(), inputs);
}

// A recursive function keeps a value on its tape across its recursive call
// (one per-lane stack serves every activation, each balanced), and calls a
// function whose loops push and pop its own tape: lanes at different
// recursion depths and loop trip counts.
TEST_P(DifferentialTest, TapesInARecursiveFunctionAndItsCallee) {
  const Program program = testing::RecursiveTapeProgram();
  const std::vector<Tensor> inputs = TapeInputs(GetParam(), static_cast<uint64_t>(GetParam()) + 22);
  ExpectTheModelsBits(program, inputs, testing::RecursiveTapeModel);
  ExpectAllExecutorsAgree(program, KernelRegistry(), inputs);
}

INSTANTIATE_TEST_SUITE_P(BatchSizes, DifferentialTest,
                         ::testing::Values(1, 7, 64, 1000));

// The native C++ pea-nuts and the program take the same number of leaves:
// the program really recurses to the depths the native code does.
TEST(PeaNutsTest, LeafCountMatchesNative) {
  Context ctx;
  const samples::PeaNutsConfig config{.dimension = 4, .max_depth = 5};
  BatchFunction peanuts = samples::DefinePeaNuts(ctx, config);
  absl::StatusOr<Program> program = ctx.Program(peanuts);
  ASSERT_TRUE(program.ok()) << program.status();
  std::vector<int64_t> seed = {1, 2, 3, 4, 5}, traj = {3, 0, 2, 5, 1};
  std::vector<double> x(seed.size() * 4, 0.5);
  Profile profile;
  absl::StatusOr<std::vector<Tensor>> out = RunProgram(
      *program,
      {*Tensor::FromVector(x, {4}), *Tensor::FromVector(seed),
       *Tensor::FromVector(traj)},
      &ctx.kernels(), CallOptions{}, &profile);
  ASSERT_TRUE(out.ok()) << out.status();
  int64_t leaves = 0;
  for (size_t i = 0; i < seed.size(); ++i) {
    leaves += samples::PeaNutsLeaves(seed[i], traj[i], config.max_depth);
  }
  EXPECT_EQ(profile.builtins[static_cast<size_t>(Primitive::kMatVec)].active_lanes,
            leaves);
}

}  // namespace
}  // namespace autobatch
