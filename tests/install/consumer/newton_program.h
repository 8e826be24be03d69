// Newton's square root as a per-example program: a loop whose trip count
// depends on the example. newton.cc runs it; newton_dump.cc writes it as IR
// JSON for autobatch_compile_program, and newton_compiled.cc runs it
// compiled whole.
#ifndef CONSUMER_NEWTON_PROGRAM_H_
#define CONSUMER_NEWTON_PROGRAM_H_

#include "frontend/context.h"

inline autobatch::BatchFunction DefineNewton(autobatch::Context& ctx) {
  using autobatch::Builder;
  using autobatch::Value;
  using autobatch::Var;
  return ctx.Batch("newton_sqrt", {.param_names = {"a"}})([](Builder& b, Value a) {
    // (a + 1) / 2 >= sqrt(a): from there Newton's steps decrease to it.
    Var x = b.Local("x", (a + 1.0) / 2.0);
    Var steps = b.Local("steps", 0.0);
    b.While([&] { return x * x - a > 1e-12 * a; }).Do([&] {
      x = (x + a / x) / 2.0;
      steps = steps + 1.0;
    });
    return x + 0.0 * steps;
  });
}

#endif  // CONSUMER_NEWTON_PROGRAM_H_
