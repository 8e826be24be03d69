// The compiler pipelines: the only lists of passes, and the runner that
// verifies between passes.
#include "passes/pipeline.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "passes/analysis/definedness.h"
#include "support/status.h"

namespace autobatch {
namespace {

// A step of a pipeline list: pass-list text, and the PipelineOptions switch
// that turns it off (none: always runs).
struct ListedStep {
  std::string_view passes;
  bool PipelineOptions::*enabled = nullptr;
};

// The tidy passes, which clean up the frontend's statement-by-statement
// output: each rewrite can enable another (a removed copy empties a block,
// whose jumps are then threaded, which lets blocks merge, which puts copies
// and their uses in one block), so this round repeats until it changes
// nothing; remove_unreachable_blocks runs before it and compact_variables,
// which drops the variables it orphaned, after it.
constexpr ListedStep kTidyRound[] = {
    {"thread_jumps", &PipelineOptions::thread_jumps},
    {"fold_branches"},
    {"merge_blocks"},
    {"fold_copies"},
    {"propagate_copies"},
    {"remove_dead_ops"},
};

// CompileProgram after the tidy passes. The cleanup group repeats because
// each rewrite can enable another (a folded constant makes x * c an
// identity, whose copy propagates and lets cse match).
constexpr ListedStep kCompile[] = {
    {"infer_types"},
    {"differentiate"},
    {"infer_uniformity"},
    {"repeat(fold_constants,simplify_arithmetic,cse,propagate_copies,remove_dead_ops)",
     &PipelineOptions::cleanup},
    {"fuse_glm", &PipelineOptions::cleanup},
    {"thread_jumps", &PipelineOptions::thread_jumps},
    {"allocate_variables"},
};

// LowerProgram after the tidy passes.
constexpr ListedStep kLower[] = {
    {"infer_types"},
    {"differentiate"},
    {"infer_uniformity"},
    {"repeat(fold_constants,simplify_arithmetic,cse,propagate_copies,remove_dead_ops)",
     &PipelineOptions::cleanup},
    {"fuse_glm", &PipelineOptions::cleanup},
    {"inline_calls", &PipelineOptions::inline_calls},
    {"thread_jumps", &PipelineOptions::thread_jumps},
    {"allocate_variables"},
    {"lower_calls"},
    {"fuse_pop_push", &PipelineOptions::fuse_pop_push},
    {"coalesce_copies", &PipelineOptions::coalesce_copies},
    {"coalesce_registers", &PipelineOptions::coalesce_registers},
    {"coalesce_copies(any_reads)", &PipelineOptions::coalesce_copies},
    // Coalescing empties blocks (a join that only copied the result into
    // the function's result): thread jumps through them again.
    {"thread_jumps", &PipelineOptions::thread_jumps},
    {"order_blocks", &PipelineOptions::order_blocks},
};

void AppendSteps(std::string& text, std::span<const ListedStep> steps,
                 const PipelineOptions& options) {
  for (const ListedStep& step : steps) {
    if (step.enabled != nullptr && !(options.*step.enabled)) continue;
    absl::StrAppend(&text, text.empty() ? "" : ",", std::string(step.passes));
  }
}

// A safety net: every tidy rewrite removes an op, a block or a Branch, or
// retargets a jump once, so a group settles long before this.
constexpr int kMaxRounds = 10000;

// Splits `text` at the commas outside parentheses; InvalidArgument for
// unbalanced parentheses.
absl::StatusOr<std::vector<std::string>> SplitTopLevel(std::string_view text) {
  std::vector<std::string> parts(1);
  int depth = 0;
  for (char c : text) {
    if (c == ' ') continue;
    if (c == '(') ++depth;
    if (c == ')' && --depth < 0) break;
    if (c == ',' && depth == 0) {
      parts.emplace_back();
    } else {
      parts.back() += c;
    }
  }
  if (depth != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the pass list '", std::string(text),
        "' has unbalanced parentheses; write names separated by commas, e.g. "
        "infer_types,allocate_variables, or repeat(a,b) for a repeated group"));
  }
  return parts;
}

absl::StatusOr<const PassInfo*> NamedPass(const std::string& name, std::string_view text) {
  if (name.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the pass list '", std::string(text),
        "' has an empty name (two commas in a row, or a comma at an end)"));
  }
  if (name.starts_with("repeat(")) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the pass list '", std::string(text), "' nests repeat(...) groups; they do not nest"));
  }
  return FindPass(name);
}

// Runs passes one after the other on one program, with the checks and dumps
// the options ask for.
class PassRunner {
 public:
  PassRunner(Program program, const PassContext& context, const PipelineOptions& options)
      : program_(std::move(program)), context_(context), options_(options) {
    context_.deadline = options.deadline;
  }

  // The verifier's checks, and for an unlowered program the definedness
  // check (passes/analysis/definedness.h) on the program as given: passes
  // such as fold_constants can remove a read before its assignment, so the
  // one allocate_variables runs would let through a program that the
  // reference interpreter refuses.
  absl::Status VerifyInput() {
    if (!options_.verify) return absl::OkStatus();
    absl::Status status = VerifyProgram(program_);
    if (status.ok() && program_.stage != Stage::kLowered) {
      status = CheckDefinedBeforeUse(program_);
    }
    if (status.ok()) return status;
    return absl::Status(status.code(),
                        absl::StrCat("the program given to the compiler is malformed:\n",
                                     std::string(status.message()), IrSuffix("the compiler")));
  }

  absl::Status RunStep(const PipelineStep& step) {
    if (!step.repeat) {
      for (const PassInfo* pass : step.passes) AB_RETURN_IF_ERROR(Run(*pass, /*round=*/1));
      return absl::OkStatus();
    }
    for (int round = 1; round <= kMaxRounds; ++round) {
      const Program before = program_;
      for (const PassInfo* pass : step.passes) AB_RETURN_IF_ERROR(Run(*pass, round));
      if (program_ == before) return absl::OkStatus();
    }
    return absl::InternalError(absl::StrCat(
        "the repeated passes ", PipelineText({step}), " still changed the program after ",
        kMaxRounds, " rounds (a bug in autobatch; please report it)"));
  }

  // After the last pass (and its verification): OK, or DeadlineExceeded
  // if the compile used up the time budget, rather than leaving the run
  // no time.
  absl::Status CheckTimeAfter(const Pipeline& pipeline) const {
    if (pipeline.empty() || !options_.deadline.Passed()) return absl::OkStatus();
    return OutOfTime(absl::StrCat("after pass ", std::string(pipeline.back().passes.back()->name)));
  }

  Program Take() { return std::move(program_); }

 private:
  absl::Status Run(const PassInfo& pass, int round) {
    const std::string name(pass.name);
    if (options_.deadline.Passed()) return OutOfTime(absl::StrCat("before pass ", name), round);
    absl::StatusOr<Program> out = pass.run(program_, context_);
    if (out.status().code() == absl::StatusCode::kDeadlineExceeded) {
      return OutOfTime(absl::StrCat("in pass ", name), round);
    }
    if (!out.ok()) {
      return absl::Status(out.status().code(),
                          absl::StrCat("pass ", name, " failed: ",
                                       std::string(out.status().message()), IrSuffix(name)));
    }
    if (options_.verify) {
      absl::Status status = VerifyProgram(*out);
      if (!status.ok()) {
        return absl::InternalError(absl::StrCat(
            "pass ", name,
            " produced an invalid program (a bug in autobatch; please report it):\n",
            std::string(status.message()), IrSuffix(name),
            options_.show_ir_on_error
                ? absl::StrCat("\n--- IR it produced ---\n",
                               PrintProgram(*out, PrintOptions{.locations = true}))
                : ""));
      }
    }
    if (options_.print_ir_after_each_pass != nullptr) {
      *options_.print_ir_after_each_pass
          << "=== after " << name << (round > 1 ? absl::StrCat(" (round ", round, ")") : "")
          << " ===\n"
          << (*out == program_ ? std::string("(unchanged)\n") : PrintProgram(*out));
    }
    program_ = *std::move(out);
    return absl::OkStatus();
  }

  // The error of a compile stopped by its deadline, the kind a batched VM
  // returns for a run over its time budget (Budget, vm/run_support.h); no
  // IR: the program is big, and nothing is wrong with it.
  absl::Status OutOfTime(const std::string& where, int round = 1) const {
    return absl::DeadlineExceededError(absl::StrCat(
        "time budget exhausted while compiling: the compile was stopped by the time budget (",
        options_.deadline.seconds(), " s) ", where,
        round > 1 ? absl::StrCat(" (round ", round, ")") : "",
        "; raise the time budget (CallOptions::timeout_seconds, --timeout) if the program "
        "is just big"));
  }

  std::string IrSuffix(std::string_view receiver) const {
    if (!options_.show_ir_on_error) return absl::StrCat("\n", kIrOnErrorHint);
    return absl::StrCat("\n--- IR given to ", std::string(receiver), " ---\n",
                        PrintProgram(program_, PrintOptions{.locations = true}));
  }

  Program program_;
  PassContext context_;  // the caller's, with options_.deadline
  const PipelineOptions& options_;
};

// An allocated program (e.g. the JSON `autobatch ir --stage typed` writes)
// goes through the pipeline again from its types: its storage classes are
// chosen again by allocate_variables, after inline_calls has had its turn.
// (allocate_variables sets every storage class; resetting them only keeps
// the typed program free of stale ones.)
Program Unallocated(Program program) {
  if (program.stage != Stage::kAllocated) return program;
  for (Variable& v : program.module.variables) v.storage = StorageClass::kFull;
  program.stage = Stage::kTyped;
  return program;
}

absl::StatusOr<Program> RunListed(Program program, const std::string& text,
                                  std::vector<TensorType> input_types,
                                  const PipelineOptions& options) {
  absl::StatusOr<Pipeline> pipeline = ParsePipeline(text);
  AB_CHECK(pipeline.ok(), "a pipeline of passes/pipeline.cc does not parse");
  // Typed as given first: the tidy round before typing can rename an
  // ill-typed assignment away (fold_copies), which the reference
  // interpreter, running the program as written, refuses.
  if (options.verify && program.stage == Stage::kUntyped) {
    AB_RETURN_IF_ERROR(CheckProgram(program, input_types, options));
  }
  return RunPipeline(Unallocated(std::move(program)), *pipeline,
                     PassContext{.input_types = std::move(input_types)}, options);
}

}  // namespace

absl::StatusOr<Pipeline> ParsePipeline(std::string_view text) {
  AB_ASSIGN_OR_RETURN(std::vector<std::string> parts, SplitTopLevel(text));
  Pipeline pipeline;
  if (parts.size() == 1 && parts[0].empty()) return pipeline;
  for (const std::string& part : parts) {
    PipelineStep step;
    if (part.starts_with("repeat(")) {
      if (!part.ends_with(")")) {
        return absl::InvalidArgumentError(absl::StrCat(
            "in the pass list '", std::string(text), "', '", part,
            "' goes on after its repeat(...) group closes; put a comma after the ')'"));
      }
      step.repeat = true;
      AB_ASSIGN_OR_RETURN(std::vector<std::string> names,
                          SplitTopLevel(std::string_view(part).substr(7, part.size() - 8)));
      for (const std::string& name : names) {
        AB_ASSIGN_OR_RETURN(const PassInfo* pass, NamedPass(name, text));
        step.passes.push_back(pass);
      }
    } else {
      AB_ASSIGN_OR_RETURN(const PassInfo* pass, NamedPass(part, text));
      step.passes.push_back(pass);
    }
    pipeline.push_back(std::move(step));
  }
  return pipeline;
}

std::string PipelineText(const Pipeline& pipeline) {
  std::vector<std::string> steps;
  for (const PipelineStep& step : pipeline) {
    std::vector<std::string> names;
    for (const PassInfo* pass : step.passes) names.emplace_back(pass->name);
    const std::string joined = absl::StrJoin(names, ",");
    steps.push_back(step.repeat ? absl::StrCat("repeat(", joined, ")") : joined);
  }
  return absl::StrJoin(steps, ",");
}

std::string TidyPipelineText(const PipelineOptions& options) {
  std::string round;
  AppendSteps(round, kTidyRound, options);
  return absl::StrCat("remove_unreachable_blocks,repeat(", round, "),compact_variables");
}

std::string CompilePipelineText(const PipelineOptions& options) {
  std::string text = TidyPipelineText(options);
  AppendSteps(text, kCompile, options);
  return text;
}

std::string LowerPipelineText(const PipelineOptions& options) {
  std::string text = TidyPipelineText(options);
  AppendSteps(text, kLower, options);
  return text;
}

absl::StatusOr<Program> RunPipeline(Program program, const Pipeline& pipeline,
                                    const PassContext& context,
                                    const PipelineOptions& options) {
  PassRunner runner(std::move(program), context, options);
  AB_RETURN_IF_ERROR(runner.VerifyInput());
  for (const PipelineStep& step : pipeline) AB_RETURN_IF_ERROR(runner.RunStep(step));
  AB_RETURN_IF_ERROR(runner.CheckTimeAfter(pipeline));
  return runner.Take();
}

absl::Status CheckProgram(const Program& program, std::vector<TensorType> input_types,
                          const PipelineOptions& options) {
  // RunPipeline verifies its input (with the definedness check) first.
  const std::string_view typing =
      program.stage == Stage::kUntyped ? "remove_unreachable_blocks,infer_types" : "";
  absl::StatusOr<Pipeline> check = ParsePipeline(typing);
  AB_CHECK(check.ok(), "the check's pipeline does not parse");
  PipelineOptions verified = options;
  verified.verify = true;
  return RunPipeline(Unallocated(program), *check,
                     PassContext{.input_types = std::move(input_types)}, verified)
      .status();
}

absl::StatusOr<Program> CompileProgram(Program untyped, std::vector<TensorType> input_types,
                                       const PipelineOptions& options) {
  return RunListed(std::move(untyped), CompilePipelineText(options), std::move(input_types),
                   options);
}

absl::StatusOr<Program> LowerProgram(Program untyped, std::vector<TensorType> input_types,
                                     const PipelineOptions& options) {
  return RunListed(std::move(untyped), LowerPipelineText(options), std::move(input_types),
                   options);
}

}  // namespace autobatch
