// The speed of light of program-counter batching on fibonacci: the stack
// VM's execution model (a program counter and explicit stacks per lane; each
// step runs one block for every lane waiting there, the lowest-numbered
// block first) written by hand for this one program, with nothing
// interpreted, beside the native recursive code looped over the batch and
// the stack VM itself. It answers whether "within 5x of native" (issue 6) is
// reachable by ANY executor of this model, and how far the VM is from the
// model's floor.
//
// Usage: fib_bound [--batch N] [--reps R]
// n is uniform in [15, 20] from seed 42, as in vm_bench.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <immintrin.h>
#include <random>
#include <string>
#include <vector>

#include "frontend/context.h"
#include "passes/pipeline.h"
#include "samples/fibonacci/fibonacci.h"
#include "frontend/run.h"
#include "codegen/jit.h"

namespace autobatch {
namespace {

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Program-counter batching of
//   fib(n) = n > 1 ? fib(n - 1) + fib(n - 2) : 1
// in four blocks, as the lowered program has them:
//   kEntry:  n > 1 ? -> kCall1 : (ans = 1; return)
//   kCall1:  push a frame {n, return to kCall2}; n = n - 1; -> kEntry
//   kCall2:  frame.left = ans; frame returns to kAdd; n = frame.n - 2; -> kEntry
//   kAdd:    ans = frame.left + ans; pop the frame; return
// A return goes to the top frame's return block, or ends the lane at depth 0.
// Lanes waiting at a block are a list of lane indices; a step takes the
// list of the lowest-numbered block that has lanes and appends each lane to
// the list of the block it goes to next. One frame pointer per lane serves
// every saved value (the VM keeps a depth per variable: this is cheaper).
class PcBatchedFibonacci {
 public:
  enum Block : int32_t { kEntry = 0, kCall1 = 1, kCall2 = 2, kAdd = 3, kNumBlocks = 4 };

  PcBatchedFibonacci(int64_t batch, bool fold_call1) : batch_(batch), fold_call1_(fold_call1) {
    const auto b = static_cast<size_t>(batch);
    n_.resize(b);
    ans_.resize(b);
    depth_.resize(b);
    for (auto& list : waiting_) list.resize(b);
    taken_.resize(b);
    leaf_.resize(b);
    // Depth is at most max n; frames are [depth][lane].
    const size_t frames = static_cast<size_t>(kMaxDepth) * b;
    saved_n_.resize(frames);
    saved_left_.resize(frames);
    return_to_.resize(frames);
  }

  // Returns the number of steps (block executions).
  int64_t Run(const std::vector<int64_t>& n, std::vector<int64_t>* out) {
    std::copy(n.begin(), n.end(), n_.begin());
    std::fill(depth_.begin(), depth_.end(), 0);
    for (int32_t b = 0; b < kNumBlocks; ++b) count_[b] = 0;
    for (int64_t l = 0; l < batch_; ++l) waiting_[kEntry][count_[kEntry]++] = l;
    int64_t steps = 0;
    for (;;) {
      int32_t block = 0;
      while (block < kNumBlocks && count_[block] == 0) ++block;
      if (block == kNumBlocks) break;
      ++steps;
      const int64_t count = count_[block];
      std::swap(taken_, waiting_[block]);
      count_[block] = 0;
      switch (block) {
        case kEntry: RunEntry(count); break;
        case kCall1: RunCall1(count); break;
        case kCall2: RunCall2(count); break;
        case kAdd: RunAdd(count); break;
      }
    }
    out->assign(ans_.begin(), ans_.end());
    return steps;
  }

 private:
  static constexpr int64_t kMaxDepth = 64;

  size_t Frame(int64_t lane, int32_t depth) const {
    return static_cast<size_t>(depth) * static_cast<size_t>(batch_) + static_cast<size_t>(lane);
  }

  // Branch-free routing: each lane is written to every list it may join and
  // only the list it joins advances, so a data-dependent branch (taken half
  // the time at random, about 4 ns a miss) never decides where a lane goes.
  // The counts live in locals for the length of a block.
  struct Counts {
    int64_t c[kNumBlocks + 1];  // the last: lanes that are done
  };
  Counts Load() const {
    Counts k;
    for (int32_t b = 0; b < kNumBlocks; ++b) k.c[b] = count_[b];
    k.c[kNumBlocks] = 0;
    return k;
  }
  void Store(const Counts& k) {
    for (int32_t b = 0; b < kNumBlocks; ++b) count_[b] = k.c[b];
  }

  // Return: to the top frame's block (kCall2 or kAdd), or done at depth 0.
  void Return(int64_t lane, Counts& k) {
    const int32_t depth = depth_[lane];
    const int32_t to = depth > 0 ? return_to_[Frame(lane, depth - 1)] : kNumBlocks;
    waiting_[kCall2][k.c[kCall2]] = lane;
    waiting_[kAdd][k.c[kAdd]] = lane;
    k.c[kCall2] += to == kCall2;
    k.c[kAdd] += to == kAdd;
  }

  void RunEntry(int64_t count) {
    Counts k = Load();
    // Lanes that return at once are gathered first, then routed. With
    // `fold_call1_`, a lane that recurses makes its first call here (the
    // work of kCall1) and waits at kEntry again: one block visit fewer per
    // call, the best block structure for this program.
    int64_t leaves = 0;
    const int32_t recurse_to = fold_call1_ ? kEntry : kCall1;
    for (int64_t i = 0; i < count; ++i) {
      const int64_t lane = taken_[i];
      const bool recurse = n_[lane] > 1;
      if (fold_call1_) {
        const int32_t depth = depth_[lane];
        const size_t frame = Frame(lane, depth);
        saved_n_[frame] = n_[lane];
        return_to_[frame] = kCall2;
        depth_[lane] = depth + recurse;
        n_[lane] -= recurse;
      }
      waiting_[recurse_to][k.c[recurse_to]] = lane;
      k.c[recurse_to] += recurse;
      leaf_[leaves] = lane;
      leaves += !recurse;
    }
    for (int64_t i = 0; i < leaves; ++i) {
      const int64_t lane = leaf_[i];
      ans_[lane] = 1;
      Return(lane, k);
    }
    Store(k);
  }

  void RunCall1(int64_t count) {
    int64_t& to = count_[kEntry];
    for (int64_t i = 0; i < count; ++i) {
      const int64_t lane = taken_[i];
      const size_t frame = Frame(lane, depth_[lane]++);
      saved_n_[frame] = n_[lane];
      return_to_[frame] = kCall2;
      n_[lane] -= 1;
      waiting_[kEntry][to++] = lane;
    }
  }

  void RunCall2(int64_t count) {
    int64_t& to = count_[kEntry];
    for (int64_t i = 0; i < count; ++i) {
      const int64_t lane = taken_[i];
      const size_t frame = Frame(lane, depth_[lane] - 1);
      saved_left_[frame] = ans_[lane];
      return_to_[frame] = kAdd;
      n_[lane] = saved_n_[frame] - 2;
      waiting_[kEntry][to++] = lane;
    }
  }

  void RunAdd(int64_t count) {
    Counts k = Load();
    for (int64_t i = 0; i < count; ++i) {
      const int64_t lane = taken_[i];
      const size_t frame = Frame(lane, --depth_[lane]);
      ans_[lane] += saved_left_[frame];
      Return(lane, k);
    }
    Store(k);
  }

  int64_t batch_;
  bool fold_call1_;
  std::vector<int64_t> n_, ans_;
  std::vector<int32_t> depth_;
  std::vector<int64_t> saved_n_, saved_left_;
  std::vector<int32_t> return_to_;
  std::vector<int64_t> waiting_[kNumBlocks];
  int64_t count_[kNumBlocks] = {};
  std::vector<int64_t> taken_, leaf_;
};

// The lowered program's own five blocks (`autobatch ir fibonacci --stage
// lowered`) with the stack VM's layout, by hand: what a compiled program
// (codegen/codegen.h, EmitCompiledProgram) does at best without changing the
// program or the layout. Each Full variable has a stack of its own (a top
// holding the current value, saved frames [depth][lane], a depth per lane),
// and so do the return addresses; a call pushes them, a return pops them.
//   0 entry:   n > 1 ? -> 1 : -> 4
//   1 then0:   push n; n = n - 1; push return 2; -> 0
//   2 ret1:    push t4; t4 = r0; n = n - 2 (in place); push return 3; -> 0
//   3 ret2:    r0 = t4 + r0; pop t4; return
//   4 else0:   pop n; r0 = 1; return
// The entry's Full parameter n starts with one frame saved (the VM pushes
// one for it on entry).
class LoweredFibonacci {
 public:
  enum Block : int32_t { kEntry, kThen, kRet1, kRet2, kElse, kNumBlocks, kDone = kNumBlocks };

  explicit LoweredFibonacci(int64_t batch) : batch_(batch) {
    const auto b = static_cast<size_t>(batch);
    for (Stack* s : {&n_, &t4_}) {
      s->top.resize(b);
      s->saved.resize(static_cast<size_t>(kMaxDepth) * b);
      s->depth.resize(b);
    }
    r0_.resize(b);
    pc_saved_.resize(static_cast<size_t>(kMaxDepth) * b);
    pc_depth_.resize(b);
    for (auto& list : waiting_) list.resize(b + 1);
    taken_.resize(b);
  }

  int64_t Run(const std::vector<int64_t>& n, std::vector<int64_t>* out) {
    std::copy(n.begin(), n.end(), n_.top.begin());
    std::fill(n_.depth.begin(), n_.depth.end(), 1);
    std::fill(t4_.depth.begin(), t4_.depth.end(), 0);
    std::fill(pc_depth_.begin(), pc_depth_.end(), 0);
    for (int64_t& c : count_) c = 0;
    for (int64_t l = 0; l < batch_; ++l) waiting_[kEntry][count_[kEntry]++] = l;
    int64_t steps = 0;
    for (;;) {
      int32_t block = 0;
      while (block < kNumBlocks && count_[block] == 0) ++block;
      if (block == kNumBlocks) break;
      ++steps;
      const int64_t count = count_[block];
      std::swap(taken_, waiting_[block]);
      count_[block] = 0;
      for (int64_t i = 0; i < count; ++i) {
        const int64_t lane = taken_[i];
        switch (block) {
          case kEntry: {
            const bool recurse = n_.top[lane] > 1;
            waiting_[kThen][count_[kThen]] = lane;
            waiting_[kElse][count_[kElse]] = lane;
            count_[kThen] += recurse;
            count_[kElse] += !recurse;
            break;
          }
          case kThen:
            Push(n_, lane);
            n_.top[lane] -= 1;
            Call(lane, kRet1);
            break;
          case kRet1:
            Push(t4_, lane);
            t4_.top[lane] = r0_[lane];
            n_.top[lane] -= 2;
            Call(lane, kRet2);
            break;
          case kRet2:
            r0_[lane] = t4_.top[lane] + r0_[lane];
            Pop(t4_, lane);
            Return(lane);
            break;
          case kElse:
            Pop(n_, lane);
            r0_[lane] = 1;
            Return(lane);
            break;
        }
      }
    }
    out->assign(r0_.begin(), r0_.end());
    return steps;
  }

 private:
  static constexpr int64_t kMaxDepth = 64;
  struct Stack {
    std::vector<int64_t> top, saved;
    std::vector<int32_t> depth;
  };
  size_t Frame(int64_t lane, int32_t depth) const {
    return static_cast<size_t>(depth) * static_cast<size_t>(batch_) + static_cast<size_t>(lane);
  }
  void Push(Stack& s, int64_t lane) {
    int32_t& depth = s.depth[static_cast<size_t>(lane)];
    s.saved[Frame(lane, depth++)] = s.top[static_cast<size_t>(lane)];
  }
  void Pop(Stack& s, int64_t lane) {
    int32_t& depth = s.depth[static_cast<size_t>(lane)];
    s.top[static_cast<size_t>(lane)] = s.saved[Frame(lane, --depth)];
  }
  void Call(int64_t lane, int32_t return_to) {
    int32_t& depth = pc_depth_[static_cast<size_t>(lane)];
    pc_saved_[Frame(lane, depth++)] = return_to;
    waiting_[kEntry][count_[kEntry]++] = lane;
  }
  // To the top return address, or done at depth 0: written to every list it
  // may join, only the one it joins advances (branch-free).
  void Return(int64_t lane) {
    int32_t& depth = pc_depth_[static_cast<size_t>(lane)];
    const int32_t to = depth > 0 ? pc_saved_[Frame(lane, --depth)] : kDone;
    waiting_[kRet1][count_[kRet1]] = lane;
    waiting_[kRet2][count_[kRet2]] = lane;
    count_[kRet1] += to == kRet1;
    count_[kRet2] += to == kRet2;
  }

  int64_t batch_;
  Stack n_, t4_;
  std::vector<int64_t> r0_;
  std::vector<int32_t> pc_saved_, pc_depth_;
  std::vector<int64_t> waiting_[kNumBlocks];
  int64_t count_[kNumBlocks] = {};
  std::vector<int64_t> taken_;
};

// The same four blocks run DENSE, eight lanes per AVX-512 instruction: every
// step passes over the whole batch and keeps the results of the lanes whose
// program counter is at the block (mask registers), reading and writing the
// frames with gathers and scatters, and counting the lanes per block for the
// schedule in the same pass. (GCC 12 does not vectorize the plain loop, so
// the intrinsics are written out.) Built only where the compiler targets
// AVX-512 (F and DQ) and for batches that are a multiple of 8.
#if defined(__AVX512F__) && defined(__AVX512DQ__)
class DenseBatchedFibonacci {
 public:
  static constexpr int64_t kEntry = 0, kCall1 = 1, kCall2 = 2, kAdd = 3, kDone = 4;
  static constexpr bool kAvailable = true;

  explicit DenseBatchedFibonacci(int64_t batch) : batch_(batch) {
    const auto b = static_cast<size_t>(batch);
    n_.resize(b);
    ans_.resize(b);
    depth_.resize(b);
    pc_.resize(b);
    const size_t frames = static_cast<size_t>(kMaxDepth) * b;
    saved_n_.resize(frames);
    saved_left_.resize(frames);
    return_to_.resize(frames);
  }

  int64_t Run(const std::vector<int64_t>& n, std::vector<int64_t>* out) {
    std::copy(n.begin(), n.end(), n_.begin());
    std::fill(depth_.begin(), depth_.end(), 0);
    std::fill(pc_.begin(), pc_.end(), kEntry);
    std::fill(ans_.begin(), ans_.end(), 0);
    int64_t counts[kDone] = {batch_, 0, 0, 0};
    int64_t steps = 0;
    for (;;) {
      int64_t block = 0;
      while (block < kDone && counts[block] == 0) ++block;
      if (block == kDone) break;
      ++steps;
      Step(block, counts);
    }
    out->assign(ans_.begin(), ans_.end());
    return steps;
  }

 private:
  static constexpr int64_t kMaxDepth = 64;

  void Step(int64_t block, int64_t* counts) {
    const __m512i at = _mm512_set1_epi64(block);
    const __m512i one = _mm512_set1_epi64(1), two = _mm512_set1_epi64(2);
    const __m512i zero = _mm512_setzero_si512();
    const __m512i stride = _mm512_set1_epi64(batch_);
    const __m512i entry = _mm512_set1_epi64(kEntry), call1 = _mm512_set1_epi64(kCall1),
                  call2 = _mm512_set1_epi64(kCall2), add = _mm512_set1_epi64(kAdd),
                  done = _mm512_set1_epi64(kDone);
    const __m512i lane_step = _mm512_set1_epi64(8);
    __m512i lanes = _mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7);
    int64_t c0 = 0, c1 = 0, c2 = 0, c3 = 0;
    for (int64_t l = 0; l < batch_; l += 8, lanes = _mm512_add_epi64(lanes, lane_step)) {
      __m512i pc = _mm512_loadu_si512(pc_.data() + l);
      const __mmask8 here = _mm512_cmpeq_epi64_mask(pc, at);
      if (here != 0) {
        __m512i n = _mm512_loadu_si512(n_.data() + l);
        __m512i ans = _mm512_loadu_si512(ans_.data() + l);
        __m512i d = _mm512_loadu_si512(depth_.data() + l);
        const __m512i below = _mm512_max_epi64(_mm512_sub_epi64(d, one), zero);
        if (block == kEntry) {
          const __mmask8 recurse = _mm512_mask_cmpgt_epi64_mask(here, n, one);
          const __mmask8 leaf = here & static_cast<__mmask8>(~recurse);
          const __m512i top = _mm512_add_epi64(_mm512_mullo_epi64(below, stride), lanes);
          const __mmask8 returns = _mm512_mask_cmpgt_epi64_mask(leaf, d, zero);
          __m512i back = _mm512_mask_i64gather_epi64(done, returns, top, return_to_.data(), 8);
          pc = _mm512_mask_mov_epi64(pc, recurse, call1);
          pc = _mm512_mask_mov_epi64(pc, leaf, back);
          ans = _mm512_mask_mov_epi64(ans, leaf, one);
          _mm512_storeu_si512(ans_.data() + l, ans);
        } else if (block == kCall1) {
          const __m512i frame = _mm512_add_epi64(_mm512_mullo_epi64(d, stride), lanes);
          _mm512_mask_i64scatter_epi64(saved_n_.data(), here, frame, n, 8);
          _mm512_mask_i64scatter_epi64(return_to_.data(), here, frame, call2, 8);
          _mm512_storeu_si512(depth_.data() + l, _mm512_mask_add_epi64(d, here, d, one));
          _mm512_storeu_si512(n_.data() + l, _mm512_mask_sub_epi64(n, here, n, one));
          pc = _mm512_mask_mov_epi64(pc, here, entry);
        } else if (block == kCall2) {
          const __m512i frame = _mm512_add_epi64(_mm512_mullo_epi64(below, stride), lanes);
          _mm512_mask_i64scatter_epi64(saved_left_.data(), here, frame, ans, 8);
          _mm512_mask_i64scatter_epi64(return_to_.data(), here, frame, add, 8);
          const __m512i saved = _mm512_mask_i64gather_epi64(n, here, frame, saved_n_.data(), 8);
          _mm512_storeu_si512(n_.data() + l, _mm512_mask_sub_epi64(n, here, saved, two));
          pc = _mm512_mask_mov_epi64(pc, here, entry);
        } else {
          const __m512i frame = _mm512_add_epi64(_mm512_mullo_epi64(below, stride), lanes);
          const __m512i left = _mm512_mask_i64gather_epi64(zero, here, frame, saved_left_.data(), 8);
          _mm512_storeu_si512(ans_.data() + l, _mm512_mask_add_epi64(ans, here, ans, left));
          _mm512_storeu_si512(depth_.data() + l, _mm512_mask_mov_epi64(d, here, below));
          const __m512i under = _mm512_max_epi64(_mm512_sub_epi64(below, one), zero);
          const __m512i top = _mm512_add_epi64(_mm512_mullo_epi64(under, stride), lanes);
          const __mmask8 returns = _mm512_mask_cmpgt_epi64_mask(here, below, zero);
          const __m512i back = _mm512_mask_i64gather_epi64(done, returns, top, return_to_.data(), 8);
          pc = _mm512_mask_mov_epi64(pc, here, back);
        }
        _mm512_storeu_si512(pc_.data() + l, pc);
      }
      c0 += __builtin_popcount(_mm512_cmpeq_epi64_mask(pc, entry));
      c1 += __builtin_popcount(_mm512_cmpeq_epi64_mask(pc, call1));
      c2 += __builtin_popcount(_mm512_cmpeq_epi64_mask(pc, call2));
      c3 += __builtin_popcount(_mm512_cmpeq_epi64_mask(pc, add));
    }
    counts[kEntry] = c0;
    counts[kCall1] = c1;
    counts[kCall2] = c2;
    counts[kAdd] = c3;
  }

  int64_t batch_;
  std::vector<int64_t> n_, ans_, depth_, pc_;
  std::vector<int64_t> saved_n_, saved_left_, return_to_;
};
#else
class DenseBatchedFibonacci {
 public:
  static constexpr bool kAvailable = false;
  explicit DenseBatchedFibonacci(int64_t) {}
  int64_t Run(const std::vector<int64_t>&, std::vector<int64_t>*) { return 0; }
};
#endif

int Main(int argc, char** argv) {
  int64_t batch = 1024;
  int reps = 5;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--batch") && i + 1 < argc) batch = std::atoll(argv[++i]);
    else if (!std::strcmp(argv[i], "--reps") && i + 1 < argc) reps = std::atoi(argv[++i]);
    else {
      std::fprintf(stderr, "usage: fib_bound [--batch N] [--reps R]\n");
      return 2;
    }
  }
  if (batch < 1 || reps < 1) {
    std::fprintf(stderr, "fib_bound: --batch and --reps must be positive\n");
    return 2;
  }
  std::mt19937_64 rng(42);
  std::vector<int64_t> n(static_cast<size_t>(batch));
  for (int64_t& v : n) v = std::uniform_int_distribution<int64_t>(15, 20)(rng);

  std::vector<int64_t> expected(n.size());
  double native = 1e300;
  for (int r = 0; r < reps; ++r) {
    const double start = Now();
    for (size_t l = 0; l < n.size(); ++l) expected[l] = samples::FibonacciReference(n[l]);
    native = std::min(native, Now() - start);
  }

  std::vector<int64_t> got;
  double hand[2] = {1e300, 1e300};
  int64_t hand_steps[2] = {0, 0};
  for (int fold = 0; fold < 2; ++fold) {
    PcBatchedFibonacci by_hand(batch, fold == 1);
    for (int r = 0; r < reps; ++r) {
      const double start = Now();
      hand_steps[fold] = by_hand.Run(n, &got);
      hand[fold] = std::min(hand[fold], Now() - start);
    }
    if (got != expected) {
      std::fprintf(stderr, "fib_bound: the hand-batched program computed wrong values\n");
      return 1;
    }
  }

  LoweredFibonacci lowered_by_hand(batch);
  double lowered_hand = 1e300;
  int64_t lowered_hand_steps = 0;
  for (int r = 0; r < reps; ++r) {
    const double start = Now();
    lowered_hand_steps = lowered_by_hand.Run(n, &got);
    lowered_hand = std::min(lowered_hand, Now() - start);
  }
  if (got != expected) {
    std::fprintf(stderr, "fib_bound: the lowered program by hand computed wrong values\n");
    return 1;
  }

  const bool run_dense = DenseBatchedFibonacci::kAvailable && batch % 8 == 0;
  DenseBatchedFibonacci dense(batch);
  double dense_seconds = 1e300;
  int64_t dense_steps = 0;
  for (int r = 0; run_dense && r < reps; ++r) {
    const double start = Now();
    dense_steps = dense.Run(n, &got);
    dense_seconds = std::min(dense_seconds, Now() - start);
  }
  if (run_dense && got != expected) {
    std::fprintf(stderr, "fib_bound: the dense hand-batched program computed wrong values\n");
    return 1;
  }

  Context ctx;
  BatchFunction fib = samples::DefineFibonacci(ctx);
  Program lowered = *LowerProgram(*ctx.Program(fib), {Scalar(DType::kI64)});
  std::vector<Tensor> inputs = {*Tensor::FromVector(n)};
  double vm = 1e300;
  Profile profile;
  for (int r = 0; r < reps; ++r) {
    const double start = Now();
    auto out = RunProgram(lowered, inputs, &ctx.kernels(), {.vm = Vm::kStack}, &profile);
    vm = std::min(vm, Now() - start);
    if (!out.ok() || out->front().ToVector<int64_t>() != expected) {
      std::fprintf(stderr, "fib_bound: the stack VM failed or computed wrong values\n");
      return 1;
    }
  }

  // The same program compiled whole (codegen/codegen.h, EmitCompiledProgram),
  // by the JIT before the timing starts.
  absl::StatusOr<const FusedProgram*> compiled = JitCompiledProgram(lowered);
  if (!compiled.ok()) {
    std::fprintf(stderr, "fib_bound: the JIT failed: %s\n", compiled.status().ToString().c_str());
    return 1;
  }
  double compiled_seconds = 1e300;
  Profile compiled_profile;
  for (int r = 0; r < reps; ++r) {
    const double start = Now();
    auto out = RunProgram(lowered, inputs, &ctx.kernels(),
                          {.vm = Vm::kStack, .fused_blocks = *compiled}, &compiled_profile);
    compiled_seconds = std::min(compiled_seconds, Now() - start);
    if (!out.ok() || out->front().ToVector<int64_t>() != expected) {
      std::fprintf(stderr, "fib_bound: the compiled program failed or computed wrong values\n");
      return 1;
    }
  }

  int64_t calls = 0;
  for (int64_t v : n) calls += 2 * samples::FibonacciReference(v) - 1;
  std::printf("fibonacci, batch %lld, n uniform in [15, 20] (seed 42), best of %d\n",
              static_cast<long long>(batch), reps);
  std::printf("%-34s %10s %10s %8s %12s\n", "executor", "seconds", "vs native", "steps",
              "ns/lane-call");
  auto row = [&](const char* name, double s, int64_t steps) {
    std::printf("%-34s %10.5f %9.2fx %8lld %12.3f\n", name, s, s / native,
                static_cast<long long>(steps), s * 1e9 / static_cast<double>(calls));
  };
  row("native (recursive, looped)", native, 0);
  row("by hand, lane lists", hand[0], hand_steps[0]);
  row("by hand, lane lists, 3 blocks", hand[1], hand_steps[1]);
  row("by hand, lowered blocks, VM layout", lowered_hand, lowered_hand_steps);
  if (run_dense) row("by hand, dense, AVX-512", dense_seconds, dense_steps);
  row("stack VM", vm, profile.steps);
  row("stack VM, compiled program", compiled_seconds, compiled_profile.steps);
  std::printf("compiled / best lane-list executor by hand: %.2fx; / the lowered blocks by hand: "
              "%.2fx\n",
              compiled_seconds / std::min(hand[0], hand[1]), compiled_seconds / lowered_hand);
  return 0;
}

}  // namespace
}  // namespace autobatch

int main(int argc, char** argv) { return autobatch::Main(argc, argv); }
