// Builder: control flow and locals of the body under construction.
#include "frontend/builder.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "frontend/body.h"

namespace autobatch {

using frontend_internal::Access;
using frontend_internal::Body;
using frontend_internal::BodyIfCurrent;
using frontend_internal::CurrentBody;
using frontend_internal::ToSourceLoc;
using frontend_internal::VarKind;

namespace {

// The body `id` if it is being built; otherwise records why not (when some
// other body is current) and returns nullptr.
Body* ActiveBody(uint64_t id, const std::source_location& loc, const char* what) {
  Body* body = BodyIfCurrent(id);
  if (body == nullptr && CurrentBody() != nullptr) {
    CurrentBody()->Error(ToSourceLoc(loc),
                         absl::StrCat(what, " belongs to another function's body (",
                                      CurrentBody()->DescribeBody(id),
                                      "); use the Builder passed to this body's lambda"));
  }
  return body;
}

// The condition variable of a branch; on error a placeholder so that the
// control flow stays well formed (the module is discarded anyway).
int32_t ConditionVar(Body& body, const Operand& cond, const char* what) {
  int32_t c = body.Materialize(cond.value(), ToSourceLoc(cond.loc()), what);
  return c >= 0 ? c : body.NewTemp();
}

}  // namespace

// --- IfStatement -------------------------------------------------------------

IfStatement::IfStatement(const Operand& cond) : loc_(cond.loc()) {
  Body* body = CurrentBody();
  if (body == nullptr) return;
  body_id_ = body->id();
  Branch(cond);
}

void IfStatement::Branch(const Operand& cond) {
  Body* body = BodyIfCurrent(body_id_);
  if (body == nullptr) return;
  int32_t c = ConditionVar(*body, cond, "the If condition");
  int k = body->NextStatementId();
  int32_t then_block = body->NewBlock(absl::StrCat("then", k));
  // The else block exists from the start: whatever is built between Then and
  // the next link of the chain (an ElseIf's condition) belongs there.
  pending_else_ = body->NewBlock(absl::StrCat("else", k));
  body->TerminateBlock(body->current_block(),
                       autobatch::Branch{VarId(c), BlockId(then_block), BlockId(pending_else_)},
                       ToSourceLoc(cond.loc()));
  body->SetCurrent(then_block);
  state_ = State::kNeedThen;
}

int32_t IfStatement::Join(Body& body) {
  if (join_ < 0) join_ = body.NewBlock(absl::StrCat("join", body.NextStatementId()));
  return join_;
}

IfStatement&& IfStatement::Then(const std::function<void()>& body_fn) && {
  Body* body = BodyIfCurrent(body_id_);
  if (body == nullptr) return std::move(*this);
  if (state_ != State::kNeedThen) {
    body->Error(ToSourceLoc(loc_), "Then must follow If or ElseIf (once)");
    return std::move(*this);
  }
  state_ = State::kInBranch;  // a nested Then/Else of this statement is an error
  if (body_fn) body_fn();
  body->Terminate(Goto{BlockId(Join(*body))}, ToSourceLoc(loc_));
  body->SetCurrent(pending_else_);
  state_ = State::kAfterThen;
  return std::move(*this);
}

IfStatement&& IfStatement::ElseIf(const Operand& cond) && {
  Body* body = BodyIfCurrent(body_id_);
  if (body == nullptr) return std::move(*this);
  if (state_ != State::kAfterThen) {
    body->Error(ToSourceLoc(cond.loc()), "ElseIf must follow Then");
    return std::move(*this);
  }
  Branch(cond);  // in the pending else block, where `cond` was computed
  return std::move(*this);
}

void IfStatement::Else(const std::function<void()>& body_fn) && {
  Body* body = BodyIfCurrent(body_id_);
  if (body == nullptr) return;
  if (state_ != State::kAfterThen) {
    body->Error(ToSourceLoc(loc_), "Else must follow Then (once)");
    return;
  }
  state_ = State::kInBranch;
  if (body_fn) body_fn();
  state_ = State::kNeedJoin;
  Finish();
}

void IfStatement::Finish() {
  Body* body = BodyIfCurrent(body_id_);
  if (body == nullptr || state_ == State::kDone || state_ == State::kInBranch) return;
  if (state_ == State::kNeedThen) {
    body->Error(ToSourceLoc(loc_), "If without Then: write b.If(cond).Then([&] { ... })");
    body->Terminate(Goto{BlockId(Join(*body))}, ToSourceLoc(loc_));
    body->SetCurrent(pending_else_);
  }
  // The current block is the pending else block (or the end of Else).
  body->Terminate(Goto{BlockId(Join(*body))}, ToSourceLoc(loc_));
  body->SetCurrent(join_);
  state_ = State::kDone;
}

IfStatement::~IfStatement() { Finish(); }

// --- WhileStatement ----------------------------------------------------------

void WhileStatement::Do(const std::function<void()>& body_fn) && {
  Body* body = BodyIfCurrent(body_id_);
  if (body == nullptr) return;
  if (done_) {
    body->Error(ToSourceLoc(loc_), "Do must follow While (once)");
    return;
  }
  done_ = true;
  body->SetCurrent(body_);
  body->loops().push_back({header_, exit_});
  if (body_fn) body_fn();
  body->loops().pop_back();
  body->Terminate(Goto{BlockId(header_)}, ToSourceLoc(loc_));
  body->SetCurrent(exit_);
}

WhileStatement::~WhileStatement() {
  Body* body = BodyIfCurrent(body_id_);
  if (body == nullptr || done_) return;
  body->Error(ToSourceLoc(loc_), "While without Do: write b.While(cond).Do([&] { ... })");
  std::move(*this).Do(nullptr);
}

// --- Builder -------------------------------------------------------------------

Var Builder::Local(std::string name, std::source_location loc) {
  Body* body = ActiveBody(body_id_, loc, "this Builder");
  if (body == nullptr) return Var(loc);
  int32_t var = body->NewVar(name.empty() ? VarKind::kLocal : VarKind::kNamedLocal, name);
  return Access::MakeBoundVar(body->id(), var, loc);
}

Var Builder::Local(std::string name, const Operand& init) {
  Var v = Local(std::move(name), init.loc());
  v = init;
  return v;
}

IfStatement Builder::If(const Operand& cond) {
  ActiveBody(body_id_, cond.loc(), "this Builder");
  return IfStatement(cond);
}

int32_t Builder::BeginLoop(std::source_location loc) {
  Body* body = ActiveBody(body_id_, loc, "this Builder");
  if (body == nullptr) return -1;
  int32_t header = body->NewBlock(absl::StrCat("loop", body->NextStatementId()));
  body->Terminate(Goto{BlockId(header)}, ToSourceLoc(loc));
  body->SetCurrent(header);
  return header;
}

WhileStatement Builder::EndLoopHeader(const Operand& cond, int32_t header,
                                      std::source_location loc) {
  Body* body = BodyIfCurrent(body_id_);
  if (body == nullptr || header < 0) return WhileStatement(0, -1, -1, -1, loc);
  int32_t c = ConditionVar(*body, cond, "the While condition");
  const std::string& label = body->ir().blocks[header].label;
  std::string k = label.substr(4);  // "loop<k>"
  int32_t loop_body = body->NewBlock("body" + k);
  int32_t exit = body->NewBlock("exit" + k);
  body->Terminate(autobatch::Branch{VarId(c), BlockId(loop_body), BlockId(exit)},
                  ToSourceLoc(loc));
  return WhileStatement(body->id(), header, loop_body, exit, loc);
}

void Builder::Break(std::source_location loc) {
  Body* body = ActiveBody(body_id_, loc, "this Builder");
  if (body == nullptr) return;
  if (body->loops().empty()) {
    body->Error(ToSourceLoc(loc), "Break outside a While loop");
    return;
  }
  body->Terminate(Goto{BlockId(body->loops().back().exit)}, ToSourceLoc(loc));
}

void Builder::Continue(std::source_location loc) {
  Body* body = ActiveBody(body_id_, loc, "this Builder");
  if (body == nullptr) return;
  if (body->loops().empty()) {
    body->Error(ToSourceLoc(loc), "Continue outside a While loop");
    return;
  }
  body->Terminate(Goto{BlockId(body->loops().back().header)}, ToSourceLoc(loc));
}

void Builder::Return(AUTOBATCH_ARG_PARAMS_NO_DEFAULTS) {
  Body* body = ActiveBody(body_id_, a0.loc(), "this Builder");
  if (body == nullptr) return;
  std::vector<Value> leaves;
  for (const Arg* a : AUTOBATCH_ARG_LIST) {
    if (!a->present()) break;
    leaves.insert(leaves.end(), a->leaves().begin(), a->leaves().end());
  }
  body->Return(leaves, ToSourceLoc(a0.loc()));
}

const std::string& Builder::function_name() const {
  static const std::string kNone;
  Body* body = BodyIfCurrent(body_id_);
  return body != nullptr ? body->function_name() : kNone;
}

}  // namespace autobatch
