// Programs with tapes in the IR's text form, and their C++ models.
#include "ir/testing/tape_programs.h"

#include <cstdio>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/parser.h"
#include "support/status.h"

namespace autobatch::testing {
namespace {

Program Parse(std::string_view text) {
  absl::StatusOr<Program> program = ParseProgram(text);
  if (!program.ok()) std::fprintf(stderr, "%s\n", std::string(program.status().message()).c_str());
  AB_CHECK(program.ok(), "a tape test program parses");
  return *std::move(program);
}

}  // namespace

const std::string_view kTapeLoopText = R"(program stage=untyped entry=@main

func @main(%n: ?, %x: ?) -> (%s: ?) {
^0 entry:
  %i: ? = fill_like %n {literal = i64 0}
  %zero: ? = fill_like %n {literal = i64 0}
  %one: ? = fill_like %n {literal = i64 1}
  %three: ? = fill_like %n {literal = i64 3}
  %v: ? = copy %x
  %grow: ? = fill_like %x {literal = f64 1.5}
  tape_push %first, %x
  goto ^1
^1 push_head:
  %more: ? = lt %i, %n
  branch %more, ^2, ^6
^2 push_body:
  %r: ? = mod %i, %three
  %is0: ? = eq %r, %zero
  branch %is0, ^3, ^4
^3 negate:
  %w: ? = neg %v
  tape_push %t, %w
  goto ^5
^4 double:
  %two: ? = fill_like %x {literal = f64 2}
  %w2: ? = mul %v, %two
  %w2: ? = add %w2, %x
  tape_push %t, %w2
  goto ^5
^5 push_next:
  tape_push %flags, %r
  %v: ? = mul %v, %grow
  %i: ? = add %i, %one
  goto ^1
^6 pop_init:
  %s: ? = fill_like %x {literal = f64 0}
  %weight: ? = fill_like %x {literal = f64 0.75}
  %j: ? = fill_like %n {literal = i64 0}
  goto ^7
^7 pop_head:
  %more2: ? = lt %j, %n
  branch %more2, ^8, ^10
^8 pop_body:
  %p: ? = tape_pop %t
  %k: ? = tape_pop %flags
  %s: ? = mul %s, %weight
  %s: ? = add %s, %p
  %j: ? = add %j, %one
  %is1: ? = eq %k, %one
  branch %is1, ^9, ^7
^9 minus_flag:
  %kf: ? = cast %k {dtype = f64}
  %s: ? = sub %s, %kf
  goto ^7
^10 exit:
  %unused: ? = tape_pop %first
  return
}
)";

Program TapeLoopProgram() { return Parse(kTapeLoopText); }

double TapeLoopModel(int64_t n, double x) {
  std::vector<double> t;
  std::vector<int64_t> flags;
  double v = x;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t r = i % 3;
    t.push_back(r == 0 ? -v : v * 2.0 + x);
    flags.push_back(r);
    v = v * 1.5;
  }
  double s = 0;
  for (int64_t j = 0; j < n; ++j) {
    const double p = t.back();
    t.pop_back();
    const int64_t k = flags.back();
    flags.pop_back();
    s = s * 0.75;
    s = s + p;
    if (k == 1) s = s - static_cast<double>(k);
  }
  return s;
}

const std::string_view kRecursiveTapeText = R"(program stage=untyped entry=@main

func @main(%n: ?, %x: ?) -> (%r: ?) {
^0 entry:
  %r: ? = call @rec(%n, %x)
  return
}

func @rec(%n: ?, %x: ?) -> (%y: ?) {
^0 entry:
  %one: ? = fill_like %n {literal = i64 1}
  %deep: ? = gt %n, %one
  branch %deep, ^1, ^2
^1 recurse:
  tape_push %saved, %x
  tape_push %twin, %x
  %shape: ? = tape_pop %twin
  %n1: ? = sub %n, %one
  %c: ? = fill_like %x {literal = f64 1.25}
  %x1: ? = mul %x, %c
  %y1: ? = call @rec(%n1, %x1)
  %back: ? = tape_pop %saved
  %g: ? = call @accum(%back, %n)
  %half: ? = fill_like %shape {literal = f64 0.5}
  %h: ? = mul %y1, %half
  %y: ? = add %h, %g
  goto ^3
^2 base:
  %y: ? = call @accum(%x, %n)
  goto ^3
^3 exit:
  return
}

func @accum(%a: ?, %k: ?) -> (%s: ?) {
^0 entry:
  %i: ? = fill_like %k {literal = i64 0}
  %zero: ? = fill_like %k {literal = i64 0}
  %one: ? = fill_like %k {literal = i64 1}
  %u: ? = copy %a
  %step: ? = fill_like %a {literal = f64 0.5}
  goto ^1
^1 push_head:
  %more: ? = lt %i, %k
  branch %more, ^2, ^3
^2 push_body:
  tape_push %vals, %u
  %u: ? = add %u, %step
  %i: ? = add %i, %one
  goto ^1
^3 pop_init:
  %s: ? = fill_like %a {literal = f64 0}
  %w: ? = fill_like %a {literal = f64 3}
  goto ^4
^4 pop_head:
  %left: ? = gt %i, %zero
  branch %left, ^5, ^6
^5 pop_body:
  %p: ? = tape_pop %vals
  %s: ? = mul %s, %w
  %s: ? = add %s, %p
  %i: ? = sub %i, %one
  goto ^4
^6 exit:
  return
}
)";

Program RecursiveTapeProgram() { return Parse(kRecursiveTapeText); }

namespace {

double AccumModel(double a, int64_t k) {
  std::vector<double> vals;
  double u = a;
  for (int64_t i = 0; i < k; ++i) {
    vals.push_back(u);
    u = u + 0.5;
  }
  double s = 0;
  while (!vals.empty()) {
    s = s * 3.0;
    s = s + vals.back();
    vals.pop_back();
  }
  return s;
}

}  // namespace

double RecursiveTapeModel(int64_t n, double x) {
  if (n > 1) {
    const double y1 = RecursiveTapeModel(n - 1, x * 1.25);
    const double h = y1 * 0.5;
    return h + AccumModel(x, n);
  }
  return AccumModel(x, n);
}

const std::string_view kTapePopEmptyText = R"(program stage=untyped entry=@main

func @main(%x: ?) -> (%y: ?) {
^0 entry:
  %zero: ? = fill_like %x {literal = f64 0}
  %positive: ? = gt %x, %zero
  branch %positive, ^1, ^2
^1 push:
  tape_push %t, %x
  goto ^2
^2 pop:
  %y: ? = tape_pop %t
  return
}
)";

Program TapePopEmptyProgram() { return Parse(kTapePopEmptyText); }

const std::string_view kTapeUnbalancedText = R"(program stage=untyped entry=@main

func @main(%x: ?) -> (%y: ?) {
^0 entry:
  %y: ? = call @leak(%x)
  return
}

func @leak(%a: ?) -> (%b: ?) {
^0 entry:
  %zero: ? = fill_like %a {literal = f64 0}
  %positive: ? = gt %a, %zero
  branch %positive, ^1, ^2
^1 push:
  tape_push %t, %a
  goto ^2
^2 check:
  %ten: ? = fill_like %a {literal = f64 10}
  %big: ? = gt %a, %ten
  branch %big, ^3, ^4
^3 pop:
  %p: ? = tape_pop %t
  goto ^4
^4 exit:
  %b: ? = copy %a
  return
}
)";

Program TapeUnbalancedProgram() { return Parse(kTapeUnbalancedText); }

const std::string_view kTapeRunawayText = R"(program stage=untyped entry=@main

func @main(%x: ?) -> (%y: ?) {
^0 entry:
  goto ^1
^1 loop:
  tape_push %t, %x
  %again: ? = eq %x, %x
  branch %again, ^1, ^2
^2 exit:
  %y: ? = tape_pop %t
  return
}
)";

Program TapeRunawayProgram() { return Parse(kTapeRunawayText); }

}  // namespace autobatch::testing
