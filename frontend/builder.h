// Builder: control flow (If/Else, While, Return, Break, Continue) and locals
// of a function body under construction.
//
//   ctx.Batch(fib)([&](Builder& b, Value n) {
//     Var ans = b.Local("ans");
//     b.If(n > 1)
//         .Then([&] { ans = fib(n - 1) + fib(n - 2); })
//         .Else([&] { ans = 1; });
//     return ans;
//   });
//
// Statements build IR in order: Then/Else/Do run their lambda immediately,
// in the block they open. An If or While is complete at the end of the full
// expression that created it (its destructor joins the control flow), so
// write each as one statement. A Var assigned in several branches is one IR
// variable; Values made inside a branch are only defined on that branch.
//
// A body ends by returning from its lambda (its value, a tuple, a struct, or
// nothing) or by b.Return(...) anywhere; every reachable return of a
// function must return the same number of values.
#ifndef AUTOBATCH_FRONTEND_BUILDER_H_
#define AUTOBATCH_FRONTEND_BUILDER_H_

#include <cstdint>
#include <functional>
#include <source_location>
#include <string>
#include <string_view>
#include <utility>

#include "frontend/structs.h"
#include "frontend/value.h"

namespace autobatch {

class Builder;
namespace frontend_internal {
class Body;
}  // namespace frontend_internal

// b.If(cond).Then(...)[.ElseIf(cond).Then(...)...][.Else(...)];
class IfStatement {
 public:
  IfStatement(const IfStatement&) = delete;
  IfStatement& operator=(const IfStatement&) = delete;
  ~IfStatement();

  // Builds the code run when the last condition holds.
  IfStatement&& Then(const std::function<void()>& body) &&;
  // Another condition, tested when the previous ones do not hold; a Then
  // must follow.
  IfStatement&& ElseIf(const Operand& cond) &&;
  // Builds the code run when no condition holds; ends the statement.
  void Else(const std::function<void()>& body) &&;

 private:
  friend class Builder;
  explicit IfStatement(const Operand& cond);
  void Branch(const Operand& cond);
  int32_t Join(frontend_internal::Body& body);
  void Finish();

  enum class State : uint8_t { kNeedThen, kInBranch, kAfterThen, kNeedJoin, kDone };
  uint64_t body_id_ = 0;
  int32_t pending_else_ = -1;  // where control goes if no condition holds yet
  int32_t join_ = -1;          // created on first use
  State state_ = State::kDone;
  std::source_location loc_;
};

// b.While([&] { return cond; }).Do([&] { ... });
class WhileStatement {
 public:
  WhileStatement(const WhileStatement&) = delete;
  WhileStatement& operator=(const WhileStatement&) = delete;
  ~WhileStatement();

  // Builds the loop body (run while the condition holds).
  void Do(const std::function<void()>& body) &&;

 private:
  friend class Builder;
  WhileStatement(uint64_t body_id, int32_t header, int32_t body, int32_t exit,
                 std::source_location loc)
      : body_id_(body_id), header_(header), body_(body), exit_(exit), loc_(loc) {}

  uint64_t body_id_;
  int32_t header_, body_, exit_;
  bool done_ = false;
  std::source_location loc_;
};

class Builder {
 public:
  Builder(const Builder&) = delete;
  Builder& operator=(const Builder&) = delete;

  // A new local variable, unassigned; `name` (optional) is its IR name.
  Var Local(std::string name = "",
            std::source_location loc = std::source_location::current());
  // A new named local initialized to `init`.
  Var Local(std::string name, const Operand& init);

  // Conditional code; `cond` is a bool scalar.
  IfStatement If(const Operand& cond);

  // A loop (a real CFG loop, not recursion). `cond` is a lambda returning the
  // condition (a Value, Var or bool); it is built once, in the loop header,
  // and evaluated before every iteration.
  template <typename F>
  WhileStatement While(F&& cond, std::source_location loc = std::source_location::current()) {
    int32_t header = BeginLoop(loc);
    return EndLoopHeader(Operand(std::invoke(std::forward<F>(cond)), loc), header, loc);
  }
  template <typename F, typename G>
  void While(F&& cond, G&& body, std::source_location loc = std::source_location::current()) {
    While(std::forward<F>(cond), loc).Do(std::forward<G>(body));
  }
  // Leaves / restarts the innermost While.
  void Break(std::source_location loc = std::source_location::current());
  void Continue(std::source_location loc = std::source_location::current());

  // Returns from the function with the given values (flattened: a struct
  // counts as its fields). Code after it on the same path is unreachable.
  void Return(AUTOBATCH_ARG_PARAMS);

  // The name of the function being built.
  const std::string& function_name() const;

 private:
  friend class frontend_internal::Body;
  explicit Builder(uint64_t body_id) : body_id_(body_id) {}
  int32_t BeginLoop(std::source_location loc);
  WhileStatement EndLoopHeader(const Operand& cond, int32_t header, std::source_location loc);

  uint64_t body_id_;
};

}  // namespace autobatch

#endif  // AUTOBATCH_FRONTEND_BUILDER_H_
