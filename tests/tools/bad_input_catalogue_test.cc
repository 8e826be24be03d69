// The bad-input catalogue: every kind of bad input a user can hand autobatch,
// the entry point it goes through, and the exact error (or result) it gets.
//
// Part 1 (BadInputCatalogue) is a table: one entry per (bad input, entry
// point, executor) with the status (absl code, or the CLI's exit status) and
// the WHOLE message, compared for equality or matched by a full-message
// regex. Entry points: LoadProgramJson, a Context call (BatchFunction::Run),
// RunProgram on a loaded program (what `autobatch run` calls), the
// `autobatch run` command line itself, and mcmc::Sample(). Executors: the
// reference interpreter (dry_run), the stackless VM and the stack VM.
//
// Part 2 (valid edge values) checks results: NaN and inf inputs propagate and
// round-trip through JSON, a target whose log density is NaN makes divergent
// transitions that stay put, and an empty batch gives an empty result.
//
// Neighbouring suites check more variants of some entries with substrings:
// tests/ir/json_test.cc (every JSON field), tests/frontend/errors_test.cc
// (frontend misuse), tests/vm/vm_test.cc and reference_interpreter_test.cc
// (limits), tests/tools/autobatch_cli_test.cc (the command line),
// tests/mcmc/batched_nuts_test.cc (NaN energies on a mock target).
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <ostream>
#include <regex>
#include <span>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "backends/kernel_registry.h"
#include "backends/tensor.h"
#include "frontend/context.h"
#include "gtest/gtest.h"
#include "ir/json.h"
#include "nlohmann/json.hpp"
#include "passes/pipeline.h"
#include "mcmc/batched/batched_sampler.h"
#include "mcmc/model/model.h"
#include "mcmc/sample.h"
#include "frontend/run.h"
#include "tests/testing/files.h"

namespace autobatch {
namespace {

using testing::ReadFile;

using Json = nlohmann::json;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr char kThisFile[] = "bad_input_catalogue_test.cc";

// ---------------------------------------------------------------------------
// Helpers.

// The 1-based line of this file holding `marker` (a "// @name" comment next
// to the code that an error message points at), so expected messages name
// the line without hard-coding it.
int LineOf(std::string_view marker) {
  std::ifstream in(std::string(AUTOBATCH_SOURCE_DIR "/tests/tools/") + kThisFile);
  std::string line;
  const std::string tag = absl::StrCat("// @", std::string(marker));
  for (int number = 1; std::getline(in, line); ++number) {
    // The marker must end the line, so "@count" does not match "@count-call".
    if (line.size() >= tag.size() &&
        line.compare(line.size() - tag.size(), tag.size(), tag) == 0) {
      return number;
    }
  }
  ADD_FAILURE() << "marker @" << marker << " not found in " << kThisFile;
  return -1;
}
std::string At(std::string_view marker) {
  return absl::StrCat(kThisFile, ":", LineOf(marker));
}

// `text` as a regex matching exactly itself.
std::string Quote(std::string_view text) {
  static const std::string kSpecial = R"(\^$.|?*+()[]{})";
  std::string out;
  for (char c : text) {
    if (kSpecial.find(c) != std::string::npos) out += '\\';
    out += c;
  }
  return out;
}

// A file under the test's temporary directory, unique to this process (CTest
// may run several cases of this binary at once).
std::string TempPath(const std::string& name) {
  return absl::StrCat(::testing::TempDir(), "catalogue_", getpid(), "_", name);
}
std::string WriteTemp(const std::string& name, const std::string& text) {
  std::string path = TempPath(name);
  std::ofstream(path) << text;
  return path;
}
Tensor I64(const std::vector<int64_t>& v) { return *Tensor::FromVector(v); }
Tensor I32(const std::vector<int32_t>& v) { return *Tensor::FromVector(v); }
Tensor F64(const std::vector<double>& v, std::vector<int64_t> shape = {}) {
  return *Tensor::FromVector(v, std::move(shape));
}

// The executors, with the options that select them in a Context call or
// RunProgram, and the `--vm` value that selects them on the command line.
struct Executor {
  std::string name;
  CallOptions options;
  std::string cli;
};
std::vector<Executor> Executors() {
  return {{"Reference", {.dry_run = true}, "reference"},
          {"Stackless", {.vm = Vm::kStackless}, "stackless"},
          {"Stack", {.vm = Vm::kStack}, "stack"}};
}
void PrintTo(const Executor& x, std::ostream* os) { *os << x.name; }
CallOptions With(CallOptions options, const std::function<void(CallOptions&)>& edit) {
  edit(options);
  return options;
}

// ---------------------------------------------------------------------------
// What an entry point gave back: a status code (in process) or an exit
// status (command line, "exit 1"), and the whole message (the status
// message, or everything the command line wrote to stderr).

struct Outcome {
  std::string status;
  std::string message;
};
Outcome Of(const absl::Status& s) {
  return {absl::StatusCodeToString(s.code()), std::string(s.message())};
}
// The test's own setup went wrong (never an expected outcome).
Outcome SetupFailed(std::string what) { return {"test setup failed", std::move(what)}; }
template <typename T>
Outcome Of(const absl::StatusOr<T>& s) {
  return Of(s.status());
}

struct CliResult {
  std::string status;  // "exit N" or "signal N"
  std::string out, err;
};
CliResult RunCli(const std::string& args) {
  static int calls = 0;
  const std::string base = TempPath(absl::StrCat("cli", calls++));
  const std::string command = absl::StrCat(AUTOBATCH_CLI, " ", args, " >", base, ".out 2>",
                                           base, ".err");
  const int raw = std::system(command.c_str());
  CliResult r;
  if (WIFEXITED(raw)) {
    r.status = absl::StrCat("exit ", WEXITSTATUS(raw));
  } else {
    r.status = absl::StrCat("signal ", WIFSIGNALED(raw) ? WTERMSIG(raw) : -1);
  }
  r.out = ReadFile(base + ".out");
  r.err = ReadFile(base + ".err");
  std::remove((base + ".out").c_str());
  std::remove((base + ".err").c_str());
  return r;
}
// A failed run gives its stderr; a successful one its "outputs" as one-line
// JSON.
Outcome CliOutcome(const std::string& args) {
  CliResult r = RunCli(args);
  if (r.status != "exit 0") return {r.status, r.err};
  Json out = Json::parse(r.out, nullptr, /*allow_exceptions=*/false);
  if (out.is_discarded() || !out.contains("outputs")) return {r.status, "stdout: " + r.out};
  return {r.status, out["outputs"].dump()};
}

// ---------------------------------------------------------------------------
// The programs the catalogue feeds bad input to.

// count(n) = n <= 0 ? n : count(n - 1) + 1: recursion n + 1 frames deep.
BatchFunction DefineCount(Context& ctx) {
  BatchFunction count = ctx.Declare("count", {.param_names = {"n"}});
  ctx.Batch(count)([count](Builder& b, Value n) {
    Var out = b.Local("out");
    b.If(n <= 0).Then([&] { out = n; }).Else([&] {
      out = count(n - 1) + 1;  // @count-call
    });
    return out;
  });
  return count;
}

// spin(x): a loop that never ends (for i64 x; it wraps around).
BatchFunction DefineSpin(Context& ctx) {
  return ctx.Batch("spin", {.param_names = {"x"}})([](Builder& b, Value x0) {
    Var x = b.Local("x", x0);
    b.While([&] { return x == x; }).Do([&] { x = x + 1; });
    return x;
  });
}

// add(a i64, b i64) -> i64, with a declared signature.
BatchFunction DefineAdd(Context& ctx) {
  return ctx.Batch("add", {.param_names = {"a", "b"},
                           .signature = Signature{{Scalar(DType::kI64), Scalar(DType::kI64)},
                                                  {Scalar(DType::kI64)}}})(
      [](Value a, Value b) { return a + b; });
}

// scale(x f64[3], s f64) -> f64[3], with a declared signature.
BatchFunction DefineScale(Context& ctx) {
  return ctx.Batch("scale", {.param_names = {"x", "s"},
                             .signature = Signature{{Vector(DType::kF64, 3), Scalar(DType::kF64)},
                                                    {Vector(DType::kF64, 3)}}})(
      [](Value x, Value s) { return x * s; });
}

// mixed(a, b) = a + b: a type error when a and b have different dtypes.
BatchFunction DefineMixed(Context& ctx) {
  return ctx.Batch("mixed", {.param_names = {"a", "b"}})([](Value a, Value b) {  // @mixed
    return a + b;  // @mixed-add
  });
}

// A user kernel twice(x f64) -> f64 and a function calling it.
BatchFunction DefineTwice(Context& ctx) {
  Kernel twice = ctx.RegisterKernel(
      "twice", KernelSignature{{Scalar(DType::kF64)}, {Scalar(DType::kF64)}},
      [](const KernelCall& call) -> absl::Status {
        const double* x = reinterpret_cast<const double*>(call.inputs[0].data);
        double* out = reinterpret_cast<double*>(call.outputs[0].data);
        for (int64_t lane = 0; lane < call.num_lanes; ++lane) out[lane] = 2 * x[lane];
        return absl::OkStatus();
      });
  return ctx.Batch("double_it", {.param_names = {"x"}})([twice](Value x) {
    return twice(x);  // @twice-call
  });
}

// Arithmetic on non-finite inputs: results (y, i64, i32, positive, truthy,
// finite_or_inf) of x f64.
BatchFunction DefineNonFinite(Context& ctx) {
  return ctx.Batch("non_finite", {.param_names = {"x"},
                                  .result_names = {"y", "as_i64", "as_i32", "positive",
                                                   "truthy", "nan_to_inf"}})(
      [](Builder& b, Value x) {
        Var y = b.Local("y");
        b.If(x > 0.0).Then([&] { y = x * 2.0 + 1.0; }).Else([&] { y = x - x; });
        return std::tuple<Value, Value, Value, Value, Value, Value>{
            y,
            cast(x, DType::kI64),
            cast(x, DType::kI32),
            x > 0.0,
            cast(x, DType::kBool),
            select(x != x, kInf, x)};
      });
}

// The program of `define`'s function as JSON text (untyped, as the command
// line loads it).
std::string ProgramJson(BatchFunction (*define)(Context&)) {
  Context ctx;
  BatchFunction f = define(ctx);
  absl::StatusOr<Program> program = ctx.Program(f);
  if (!program.ok()) {
    ADD_FAILURE() << program.status();
    return "";
  }
  return DumpProgramJson(*program);
}

// ---------------------------------------------------------------------------
// Part 1: the error catalogue.

enum class Via { kJsonLoad, kContextCall, kRunProgram, kCli, kSample };

std::string_view ViaName(Via via) {
  switch (via) {
    case Via::kJsonLoad: return "LoadProgramJson";
    case Via::kContextCall: return "Context call";
    case Via::kRunProgram: return "RunProgram";
    case Via::kCli: return "autobatch run";
    case Via::kSample: return "mcmc::Sample";
  }
  return "?";
}

struct BadInput {
  std::string name;          // the test's name
  std::string input;         // what is wrong with the input
  Via via = Via::kJsonLoad;  // the entry point it goes through
  std::string status;        // "INVALID_ARGUMENT"..., or "exit 1" for the CLI
  // The whole message (CLI: all of stderr; its outputs when it succeeds).
  std::string message;
  bool regex = false;  // `message` is a regex the whole message must match
  std::function<Outcome()> run;
  // Non-empty: a known defect whose fix lies in a file this suite does not
  // own; the entry is skipped with this text until it is fixed.
  std::string todo;
};

BadInput Entry(std::string name, std::string input, Via via, std::string status,
               std::string message, bool regex, std::function<Outcome()> run) {
  BadInput e;
  e.name = std::move(name);
  e.input = std::move(input);
  e.via = via;
  e.status = std::move(status);
  e.message = std::move(message);
  e.regex = regex;
  e.run = std::move(run);
  return e;
}

void PrintTo(const BadInput& e, std::ostream* os) {
  *os << e.name << " (" << e.input << ", via " << ViaName(e.via) << ")";
}

constexpr char kInvalid[] = "INVALID_ARGUMENT";
constexpr char kExhausted[] = "RESOURCE_EXHAUSTED";
constexpr char kDeadline[] = "DEADLINE_EXCEEDED";
constexpr char kNotFound[] = "NOT_FOUND";
constexpr char kFailedPrecondition[] = "FAILED_PRECONDITION";
constexpr char kExit0[] = "exit 0";
constexpr char kExit1[] = "exit 1";
constexpr char kCliError[] = "autobatch: error: ";

// What nlohmann's parser says about a syntax error (third-party text: only
// its form is pinned).
constexpr char kParserSays[] =
    R"(\[json\.exception\.parse_error\.101\] parse error at line \d+, column \d+: )";

// `autobatch run <program file> --inputs <inputs file> <flags>`, with the two
// files written first.
Outcome RunFiles(const std::string& program_name, const std::string& program_text,
                 const std::string& inputs_name, const std::string& inputs_text,
                 const std::string& flags = "") {
  const std::string program = WriteTemp(program_name, program_text);
  const std::string inputs = WriteTemp(inputs_name, inputs_text);
  Outcome outcome =
      CliOutcome("run " + program + " --inputs " + inputs + (flags.empty() ? "" : " ") + flags);
  std::remove(program.c_str());
  std::remove(inputs.c_str());
  return outcome;
}

// --- malformed, truncated and unknown JSON ----------------------------------

// The count program's JSON after `edit`, loaded.
Outcome LoadEdited(const std::function<void(Json&)>& edit) {
  Json json = Json::parse(ProgramJson(DefineCount));
  edit(json);
  return Of(LoadProgramJson(json.dump()));
}

std::string FirstHalf(const std::string& text) { return text.substr(0, text.size() / 2); }

std::vector<BadInput> JsonEntries() {
  std::vector<BadInput> e;
  e.push_back(Entry("NotJson", "text that is not JSON", Via::kJsonLoad, kInvalid,
                    Quote("malformed autobatch IR JSON: not valid JSON at byte 2 (the text has "
                          "16 bytes): ") +
                        kParserSays + "syntax error while parsing value - invalid literal; " +
                        Quote("last read: 'th'"),
                    true, [] { return Of(LoadProgramJson("this is not json")); }));
  e.push_back(Entry("TruncatedJson", "a program's JSON cut in half", Via::kJsonLoad, kInvalid,
                    R"(malformed autobatch IR JSON: not valid JSON: the text ends \(after \d+ )"
                    R"(bytes\) before the JSON does; the file looks truncated, write it again )"
                    R"(in full \()" +
                        std::string(kParserSays) + R"([^\n]*\))",
                    true, [] { return Of(LoadProgramJson(FirstHalf(ProgramJson(DefineCount)))); }));
  e.push_back(Entry("DuplicateKey", "a program's JSON naming \"entry\" twice", Via::kJsonLoad,
                    kInvalid,
                    "malformed autobatch IR JSON: not valid JSON: the key \"entry\" appears "
                    "twice in the object at the top level; readers disagree on which one "
                    "counts, so give each key once",
                    false, [] {
                      std::string text = Json::parse(ProgramJson(DefineCount)).dump();
                      text.insert(1, R"("entry": 0, )");
                      return Of(LoadProgramJson(text));
                    }));
  e.push_back(Entry("UnknownFormat", "format \"tfp-ir\"", Via::kJsonLoad, kInvalid,
                    "invalid autobatch IR JSON at /format: unknown format \"tfp-ir\"; expected "
                    "\"autobatch-ir\"",
                    false, [] { return LoadEdited([](Json& j) { j["format"] = "tfp-ir"; }); }));
  e.push_back(Entry("UnknownVersion", "version 2", Via::kJsonLoad, kInvalid,
                    "invalid autobatch IR JSON at /version: unsupported version 2; this build "
                    "reads version 1 (a newer autobatch may read it)",
                    false, [] { return LoadEdited([](Json& j) { j["version"] = 2; }); }));
  e.push_back(Entry("UnknownPrimitive", "prim \"frobnicate\"", Via::kJsonLoad, kInvalid,
                    "invalid autobatch IR JSON at /functions/0/blocks/0/ops/0/prim: unknown "
                    "primitive \"frobnicate\"; the built-in primitives are listed in "
                    "ir/primitives.def, user kernels use \"kernel\"",
                    false, [] {
                      return LoadEdited([](Json& j) {
                        j["functions"][0]["blocks"][0]["ops"][0]["prim"] = "frobnicate";
                      });
                    }));
  e.push_back(Entry("UnknownDType", "variable type \"f16\"", Via::kJsonLoad, kInvalid,
                    "invalid autobatch IR JSON at /variables/0/type: unknown dtype \"f16\" in "
                    "type \"f16\"; known dtypes are f64, f32, i64, i32, bool, u64",
                    false,
                    [] { return LoadEdited([](Json& j) { j["variables"][0]["type"] = "f16"; }); }));
  e.push_back(Entry("MisspelledInfinityLiteral",
                    "a literal written \"Infinity\" (JSON spells it \"inf\")", Via::kJsonLoad,
                    kInvalid,
                    "invalid autobatch IR JSON at "
                    "/functions/0/blocks/3/ops/6/attrs/literal/values/0: expected a number, "
                    "\"nan\", \"inf\" or \"-inf\", got \"Infinity\"",
                    false, [] {
                      // The literal of select(x != x, inf, x), the program's only "inf".
                      std::string text = Json::parse(ProgramJson(DefineNonFinite)).dump();
                      const size_t at = text.find("\"inf\"");
                      if (at == std::string::npos) return SetupFailed("no \"inf\" literal");
                      text.replace(at, 5, "\"Infinity\"");
                      return Of(LoadProgramJson(text));
                    }));
  // The command line names the file.
  e.push_back(Entry("CliTruncatedProgram", "a program file cut in half", Via::kCli, kExit1,
                    Quote(kCliError + TempPath("truncated.json")) +
                        R"(: malformed autobatch IR JSON: not valid JSON: the text ends )"
                        R"(\(after \d+ bytes\) )"
                        R"(before the JSON does; the file looks truncated, write it again in )"
                        R"(full \()" +
                        kParserSays + R"([^\n]*\)\n)",
                    true, [] {
                      return RunFiles("truncated.json", FirstHalf(ProgramJson(DefineCount)),
                                      "truncated_in.json", R"({"inputs": [[1]]})");
                    }));
  e.push_back(Entry("CliTruncatedInputs", "an inputs file cut short", Via::kCli, kExit1,
                    Quote(kCliError + TempPath("cut_in.json") +
                          ": not valid JSON: the text ends (after ") +
                        R"(\d+)" +
                        Quote(" bytes) before the JSON does; the file looks truncated, write it "
                              "again in full (") +
                        kParserSays + R"([^\n]*unexpected end of input[^\n]*)" +
                        Quote(R"(); expected {"inputs": [[lane values...], ...]})") + "\n",
                    true, [] {
                      return RunFiles("cut.json", ProgramJson(DefineCount), "cut_in.json",
                                      R"({"inputs": [[1, 2)");
                    }));
  e.push_back(Entry("CliUnknownVersion", "a program file of version 2", Via::kCli, kExit1,
                    kCliError + TempPath("v2.json") +
                        ": invalid autobatch IR JSON at /version: unsupported version 2; this "
                        "build reads version 1 (a newer autobatch may read it)\n",
                    false, [] {
                      Json json = Json::parse(ProgramJson(DefineCount));
                      json["version"] = 2;
                      return RunFiles("v2.json", json.dump(), "v2_in.json", R"({"inputs": [[1]]})");
                    }));
  return e;
}

// --- unknown kernels ----------------------------------------------------------

std::vector<BadInput> KernelEntries() {
  std::vector<BadInput> e;
  for (const Executor& x : Executors()) {
    // The reference interpreter checks the kernels before running; the
    // batched VMs find out when the op runs.
    const std::string message =
        x.options.dry_run
            ? "function 'double_it', block ^0 (entry), op 0 (" + At("twice-call") +
                  "): user kernel 'twice' is not registered; register it "
                  "(Context::RegisterKernel or KernelRegistry::Register) before running the "
                  "program"
            : "in function 'double_it' at " + At("twice-call") +
                  ": RunPrimitive: user kernel 'twice' at " + At("twice-call") +
                  " is not registered; register it with KernelRegistry::Register and pass that "
                  "registry to the executor";
    e.push_back(Entry("UnregisteredKernel" + x.name,
                      "a loaded program whose user kernel is not registered", Via::kRunProgram,
                      kNotFound, message, false, [x] {
                        absl::StatusOr<Program> program =
                            LoadProgramJson(ProgramJson(DefineTwice));
                        if (!program.ok()) return SetupFailed(program.status().ToString());
                        KernelRegistry none;
                        return Of(RunProgram(*program, {F64({1.0})}, &none, x.options));
                      }));
  }
  e.push_back(Entry("CliUnregisteredKernel",
                    "a program file using a kernel the command line does not have", Via::kCli,
                    kExit1,
                    kCliError + TempPath("twice.json") +
                        ": user kernel 'twice' ((f64) -> (f64)) is used by the program but not "
                        "registered; register it with KernelRegistry::Register before running\n"
                        "(the command line has only the kernels of its samples; run a program "
                        "with other kernels from C++, through RunProgram with your "
                        "KernelRegistry)\n",
                    false, [] {
                      return RunFiles("twice.json", ProgramJson(DefineTwice), "twice_in.json",
                                      R"({"inputs": [[1.5]]})");
                    }));
  e.push_back(Entry("CliUndeclaredKernel",
                    "a kernel op naming a kernel the program does not declare", Via::kCli, kExit1,
                    kCliError + TempPath("thrice.json") +
                        ": the program is not valid IR:\nfunction 'double_it', block ^0 (entry), "
                        "op 0: kernel 'thrice' is not declared in Module::kernels (at " +
                        At("twice-call") +
                        "); register the kernel so its signature is recorded in the module\n",
                    false, [] {
                      // Rename the op's kernel but not the declaration.
                      std::string text = Json::parse(ProgramJson(DefineTwice)).dump();
                      const size_t at = text.find("\"kernel\":\"twice\"");
                      if (at == std::string::npos) return SetupFailed("no kernel attribute");
                      text.replace(at, 16, "\"kernel\":\"thrice\"");
                      return RunFiles("thrice.json", text, "thrice_in.json",
                                      R"({"inputs": [[1.5]]})");
                    }));
  return e;
}

// --- type errors ----------------------------------------------------------------

// infer_types' error for mixed(i64, f64): the pass, the op, both types, and
// how to see the IR it was given (the program as written, typed before the
// compiler tidies it, so that every executor refuses what the reference
// interpreter would); with CallOptions::dump_ir_on_error, that IR.
std::string MixedTypeError(bool dump_ir = false) {
  const std::string add = At("mixed-add"), fn = At("mixed");
  const std::string error =
      "pass infer_types failed: type error in function 'mixed', block ^0 (entry): add (at " +
      add +
      "): operand 1 has type f64 but operand 0 has type i64; elementwise operands need one "
      "dtype (cast one of them) (operands 'a': i64, 'b': f64)\n";
  if (!dump_ir) return error + std::string(kIrOnErrorHint);
  return error +
         "--- IR given to infer_types ---\n"
         "program stage=untyped entry=@mixed\n\n"
         "func @mixed(%a: ?, %b: ?) -> (%r0: ?) {  // " + fn + "\n"
         "^0 entry:\n"
         "  %t0: ? = add %a, %b  // " + add + "\n"
         "  %r0: ? = copy %t0  // " + fn + "\n"
         "  return  // " + fn + "\n"
         "}\n";
}

std::vector<BadInput> TypeEntries() {
  std::vector<BadInput> e;
  for (const Executor& x : Executors()) {
    // The dry run, dynamically typed, refuses it as the compiler does (every
    // executor gives the same error).
    const std::string message = MixedTypeError();
    e.push_back(Entry("AddI64ToF64" + x.name, "a + b with a i64 and b f64", Via::kContextCall,
                      kInvalid, message, false, [x] {
                        Context ctx;
                        BatchFunction mixed = DefineMixed(ctx);
                        return Of(mixed.Run({I64({1, 2}), F64({0.5, 1.5})}, x.options));
                      }));
    e.push_back(Entry("AddI64ToF64WithIr" + x.name, "a + b with a i64 and b f64, IR asked for",
                      Via::kContextCall, kInvalid, MixedTypeError(/*dump_ir=*/true), false, [x] {
                        Context ctx;
                        BatchFunction mixed = DefineMixed(ctx);
                        CallOptions options = x.options;
                        options.dump_ir_on_error = true;
                        return Of(mixed.Run({I64({1, 2}), F64({0.5, 1.5})}, options));
                      }));
  }
  e.push_back(Entry("CliAddI64ToF64", "a + b with a declared i64 and b f64", Via::kCli, kExit1,
                    kCliError + MixedTypeError() +
                        "\n(the input types were read from the values in " +
                        TempPath("mixed_in.json") +
                        ": 'b' f64; if the program expects other types, pass --types or "
                        "declare \"dtype\" in the file)\n",
                    false, [] {
                      return RunFiles("mixed.json", ProgramJson(DefineMixed), "mixed_in.json",
                                      R"({"inputs": [{"dtype": "i64", "values": [1]}, [0.5]]})");
                    }));
  // Integers written for what the program needs as f64: read as i64, they
  // would make the type error above; the error is about the inputs file.
  e.push_back(Entry("CliIntegersForF64", "a + b with a written 1 and b 0.5", Via::kCli, kExit1,
                    kCliError + TempPath("mixed_ints_in.json") +
                        ": inputs[0] holds only integers, so it was read as i64, but it is for "
                        "parameter 'a' (1 of 2) of 'mixed', which the program needs as f64: "
                        "write its values as floats (2.0, not 2), declare \"dtype\": \"f64\" "
                        "on it, or pass --types f64,f64\n",
                    false, [] {
                      return RunFiles("mixed_ints.json", ProgramJson(DefineMixed),
                                      "mixed_ints_in.json", R"({"inputs": [[1], [0.5]]})");
                    }));
  return e;
}

// --- wrong inputs: dtype, rank, shape, batch size, count ----------------------

std::vector<BadInput> InputEntries() {
  std::vector<BadInput> e;
  // A Context call checks the inputs against the signature before choosing
  // an executor, so one entry each covers every executor.
  e.push_back(Entry("I32ForI64", "an i32 tensor for an i64 parameter", Via::kContextCall,
                    kInvalid,
                    "input 0 (parameter 'a' of 'add') has type i32 but the parameter is "
                    "declared i64",
                    false, [] {
                      Context ctx;
                      return Of(DefineAdd(ctx).Run({I32({1}), I64({2})}));
                    }));
  e.push_back(Entry("F64ForI64", "an f64 tensor for an i64 parameter", Via::kContextCall,
                    kInvalid,
                    "input 1 (parameter 'b' of 'add') has type f64 but the parameter is "
                    "declared i64",
                    false, [] {
                      Context ctx;
                      return Of(DefineAdd(ctx).Run({I64({1}), F64({2.0})}));
                    }));
  e.push_back(Entry("ScalarForVector", "a scalar for an f64[3] parameter (rank)",
                    Via::kContextCall, kInvalid,
                    "input 0 (parameter 'x' of 'scale') has type f64 but the parameter is "
                    "declared f64[3]",
                    false, [] {
                      Context ctx;
                      return Of(DefineScale(ctx).Run({F64({1, 2, 3}), F64({2, 2, 2})}));
                    }));
  e.push_back(Entry("WrongVectorLength", "an f64[2] for an f64[3] parameter (shape)",
                    Via::kContextCall, kInvalid,
                    "input 0 (parameter 'x' of 'scale') has type f64[2] but the parameter is "
                    "declared f64[3]",
                    false, [] {
                      Context ctx;
                      return Of(DefineScale(ctx).Run({F64({1, 2}, {2}), F64({2})}));
                    }));
  e.push_back(Entry("LaneCountsDiffer", "3 lanes of a, 2 lanes of b", Via::kContextCall,
                    kInvalid,
                    "input 1 (parameter 'b') has batch size 2 but input 0 (parameter 'a') has "
                    "batch size 3; every input needs the same batch size",
                    false, [] {
                      Context ctx;
                      return Of(DefineAdd(ctx).Run({I64({1, 2, 3}), I64({1, 2})}));
                    }));
  e.push_back(Entry("TooFewInputs", "one input for two parameters", Via::kContextCall, kInvalid,
                    "'add' takes 2 input(s) (a, b) but 1 were given", false, [] {
                      Context ctx;
                      return Of(DefineAdd(ctx).Run({I64({1})}));
                    }));
  // Each executor checks the inputs of a program compiled for other types.
  for (const Executor& x : Executors()) {
    e.push_back(Entry("I32ForCompiledI64" + x.name, "i32 inputs for a program compiled for i64",
                      Via::kRunProgram, kInvalid,
                      "input 0 (parameter 'n' of 'count') has type i32 but the parameter is "
                      "declared i64",
                      false, [x] {
                        Context ctx;
                        BatchFunction count = DefineCount(ctx);
                        std::vector<TensorType> types = {Scalar(DType::kI64)};
                        absl::StatusOr<const Program*> compiled =
                            x.options.vm == Vm::kStack && !x.options.dry_run
                                ? ctx.LoweredProgram(count, types)
                                : ctx.CompiledProgram(count, types);
                        if (!compiled.ok()) return SetupFailed(compiled.status().ToString());
                        return Of(
                            RunProgram(**compiled, {I32({1, 2})}, &ctx.kernels(), x.options));
                      }));
  }
  // The command line: the same checks, before anything is compiled, naming
  // the inputs file and the parameter; and the JSON form of the values.
  e.push_back(Entry("CliI32ForI64", "inputs declared i32 for an i64 parameter", Via::kCli, kExit1,
                    kCliError + TempPath("add_i32_in.json") +
                        ": inputs[0] is i32 (its \"dtype\" or \"shape\" says so) but it is for "
                        "parameter 'a' (1 of 2) of 'add', which is i64 as the program declares: "
                        "write \"dtype\": \"i64\", \"shape\": [] there, or drop both\n",
                    false, [] {
                      return RunFiles("add_i32.json", ProgramJson(DefineAdd), "add_i32_in.json",
                                      R"({"inputs": [{"dtype": "i32", "values": [1]}, [2]]})");
                    }));
  e.push_back(Entry("CliLaneCountsDiffer", "3 lanes of a, 2 lanes of b", Via::kCli, kExit1,
                    std::string(kCliError) +
                        "input 1 (parameter 'b') has batch size 2 but input 0 (parameter 'a') "
                        "has batch size 3; every input needs the same batch size\n",
                    false, [] {
                      return RunFiles("add_lanes.json", ProgramJson(DefineAdd),
                                      "add_lanes_in.json", R"({"inputs": [[1, 2, 3], [1, 2]]})");
                    }));
  e.push_back(Entry("CliValueOutOfRange", "3000000000 for an i32 input", Via::kCli, kExit1,
                    kCliError + TempPath("add_range_in.json") +
                        ": inputs[0] element 0: 3000000000 does not fit dtype i32 (inputs[0] is "
                        "for parameter 'a' (1 of 2) of 'add', which is i64 as the program "
                        "declares)\n",
                    false, [] {
                      return RunFiles(
                          "add_range.json", ProgramJson(DefineAdd), "add_range_in.json",
                          R"({"inputs": [{"dtype": "i32", "values": [3000000000]}, [2]]})");
                    }));
  e.push_back(Entry("CliMisspelledNan", "\"NaN\" for an f64 input (JSON spells it \"nan\")",
                    Via::kCli, kExit1,
                    kCliError + TempPath("nan_spelling_in.json") +
                        ": inputs[0] element 1: expected a number or \"nan\"/\"inf\"/\"-inf\", "
                        "got \"NaN\" (inputs[0] is for parameter 'x' (1 of 1) of 'non_finite')\n",
                    false, [] {
                      return RunFiles("nan_spelling.json", ProgramJson(DefineNonFinite),
                                      "nan_spelling_in.json", R"({"inputs": [[1.5, "NaN"]]})");
                    }));
  e.push_back(Entry("CliRankMismatch", "lanes of f64[2] for an f64[3] parameter", Via::kCli,
                    kExit1,
                    kCliError + TempPath("scale_rank_in.json") +
                        ": inputs[0] is f64[2] (its \"dtype\" or \"shape\" says so) but it is "
                        "for parameter 'x' (1 of 2) of 'scale', which is f64[3] as the program "
                        "declares: write \"dtype\": \"f64\", \"shape\": [3] there, or drop "
                        "both\n",
                    false, [] {
                      return RunFiles(
                          "scale_rank.json", ProgramJson(DefineScale), "scale_rank_in.json",
                          R"({"inputs": [{"dtype": "f64", "shape": [2], "values": [[1, 2]]},)"
                          R"( [2.0]]})");
                    }));
  return e;
}

// --- recursion deeper than each executor's limit -----------------------------

// The error of count(n) needing more than `limit` frames in lane `lane`.
std::string RecursionError(const Executor& x, int64_t limit, int lane) {
  if (x.options.dry_run) {
    return absl::StrCat("lane ", lane, ": recursion depth limit of ", limit,
                        " activations exceeded by the call of 'count' at function 'count', "
                        "block ^2 (else0), op 2 (",
                        At("count-call"),
                        "); raise max_depth (CallOptions::max_stack_depth, --max-stack-depth) "
                        "if the recursion is meant to go deeper, or check for unbounded "
                        "recursion");
  }
  if (x.options.vm == Vm::kStackless) {
    return absl::StrCat("stack overflow: calling 'count' from 'count' at ", At("count-call"),
                        " exceeds max_stack_depth = ", limit, " frames (first lane: ", lane,
                        ") \u2014 raise it (--max-stack-depth) or check for unbounded recursion");
  }
  return absl::StrCat("stack overflow: lane ", lane, " calling 'count' from 'count' exceeds ",
                      "max_stack_depth = ", limit,
                      " frames \u2014 raise it (--max-stack-depth) or check for unbounded "
                      "recursion");
}

std::vector<BadInput> RecursionEntries() {
  std::vector<BadInput> e;
  for (const Executor& x : Executors()) {
    // A limit set by the caller: lane 1 needs 11 frames, the limit is 5.
    e.push_back(Entry("RecursionOverLimit" + x.name, "count(10) with max_stack_depth = 5",
                      Via::kContextCall, kExhausted, RecursionError(x, 5, 1), false, [x] {
                        Context ctx;
                        return Of(DefineCount(ctx).Run(
                            {I64({1, 10})},
                            With(x.options, [](CallOptions& o) { o.max_stack_depth = 5; })));
                      }));
    // The default limit (10000 frames) stops a million-frame recursion.
    e.push_back(Entry("RecursionOverDefaultLimit" + x.name,
                      "count(1000000) with the default limits", Via::kContextCall, kExhausted,
                      RecursionError(x, 10000, 1), false, [x] {
                        Context ctx;
                        return Of(DefineCount(ctx).Run({I64({3, 1'000'000})}, x.options));
                      }));
    e.push_back(Entry("CliRecursionOverLimit" + x.name, "count(10) with --max-stack-depth 5",
                      Via::kCli, kExit1, kCliError + RecursionError(x, 5, 1) + "\n", false, [x] {
                        return RunFiles("count_limit.json", ProgramJson(DefineCount),
                                        "count_limit_in.json", R"({"inputs": [[1, 10]]})",
                                        "--vm " + x.cli + " --max-stack-depth 5");
                      }));
    // A limit raised far above the default: the reference interpreter and
    // the stack VM keep their frames on the heap and run the million frames;
    // the stackless VM recurses on the host and must stop cleanly.
    BadInput raised =
        Entry("RaisedRecursionLimit" + x.name,
              "count(1000000) with --max-stack-depth 100000000", Via::kCli, kExit0,
              R"([{"dtype":"i64","shape":[],"values":[1000000]}])", false, [x] {
                return RunFiles("count_raised.json", ProgramJson(DefineCount),
                                "count_raised_in.json", R"({"inputs": [[1000000]]})",
                                "--vm " + x.cli + " --max-stack-depth 100000000");
              });
    if (x.options.vm == Vm::kStackless && !x.options.dry_run) {
      // The stackless VM recurses on the host, on a stack sized for
      // max_stack_depth (vm/host_stack.h): a depth beyond what a host stack
      // can hold is refused up front.
      raised.status = kExit1;
      raised.message = Quote(kCliError) +
                       R"(max_stack_depth = 100000000 is deeper than the stackless VM can )"
                       R"(recurse on the host \(at most [0-9]+ levels\); lower it, or use the )"
                       R"(stack VM \(--vm stack\), whose stacks live on the heap\n)";
      raised.regex = true;
    }
    e.push_back(std::move(raised));
  }
  return e;
}

// --- a lowered program that pops what it never pushed -------------------------

// The verifier does not check the balance of pushes and pops (ir/verifier.h),
// so a program given lowered may pop an empty stack: bad input, not a bug of
// ours (fuzzer finding F6 in docs/FUZZING.md). Only the stack VM runs
// lowered programs.
std::vector<BadInput> StackDisciplineEntries() {
  std::vector<BadInput> e;
  e.push_back(Entry(
      "PopOfAnEmptyStack", "a lowered program that pops a variable it never pushed",
      Via::kRunProgram, kFailedPrecondition,
      "pop of 'x' in function 'f' at f.cc:3 found an empty stack: pop of an empty stack at "
      "lane 0 (the program pops a value that was never pushed); the lowered program breaks "
      "the stack discipline, which the verifier does not check: pop only what was pushed, or "
      "pass the unlowered program",
      false, [] {
        absl::StatusOr<Program> program = LoadProgramJson(
            R"({"format":"autobatch-ir","version":1,"stage":"lowered","entry":0,)"
            R"("variables":[{"name":"x","function":0,"type":"i32","storage":"full"}],)"
            R"("functions":[{"name":"f","params":[],"results":[],"blocks":[{"label":"entry",)"
            R"("ops":[{"kind":"pop","vars":[0],"loc":{"file":"f.cc","line":3}}],)"
            R"("terminator":{"kind":"halt"}}]}]})");
        if (!program.ok()) return SetupFailed(program.status().ToString());
        return Of(RunProgram(*program, {}, nullptr, {.vm = Vm::kStack}));
      }));
  return e;
}

// --- programs that never halt, against the step and time budgets -------------

std::string StepBudgetError(const Executor& x) {
  if (x.options.dry_run) {
    return "lane 0: step budget exhausted: 1000 blocks executed, at function 'spin', block ^2 "
           "(body0); raise max_steps (CallOptions::max_steps, --max-steps) if the program is "
           "just long, or look for a loop that never ends";
  }
  return "step budget exhausted: the program ran more than 1000 block executions without "
         "halting; raise CallOptions::max_steps (--max-steps) if it is just long, or look for a "
         "loop that never ends";
}

// A regex: the reference interpreter says how many blocks ran, and the
// block it was in, the loop's test or its body (the clock is read after ops
// as well as on entering a block, Budget in vm/run_support.h).
std::string TimeBudgetError(const Executor& x) {
  if (x.options.dry_run) {
    return R"(lane 0: deadline exceeded after \d+ blocks, at function 'spin', )"
           R"((block \^1 \(loop0\)|block \^2 \(body0\)); raise the time budget )"
           R"(\(CallOptions::timeout_seconds, --timeout\) if the program is just long, or )"
           R"(look for a loop that never ends)";
  }
  return Quote(
      "time budget exhausted: the program ran longer than 0.2 s; raise "
      "CallOptions::timeout_seconds (--timeout) if it is just long, or look for a loop that "
      "never ends");
}

std::vector<BadInput> BudgetEntries() {
  std::vector<BadInput> e;
  for (const Executor& x : Executors()) {
    e.push_back(Entry("StepBudget" + x.name, "a loop that never ends, max_steps = 1000",
                      Via::kContextCall, kExhausted, StepBudgetError(x), false, [x] {
                        Context ctx;
                        return Of(DefineSpin(ctx).Run(
                            {I64({1, 2, 3})},
                            With(x.options, [](CallOptions& o) { o.max_steps = 1000; })));
                      }));
    e.push_back(Entry("TimeBudget" + x.name, "a loop that never ends, timeout_seconds = 0.2",
                      Via::kContextCall, kDeadline, TimeBudgetError(x), true, [x] {
                        Context ctx;
                        return Of(DefineSpin(ctx).Run({I64({1, 2, 3})},
                                                      With(x.options, [](CallOptions& o) {
                                                        o.max_steps = 0;
                                                        o.timeout_seconds = 0.2;
                                                      })));
                      }));
    e.push_back(Entry("CliStepBudget" + x.name, "a loop that never ends, --max-steps 1000",
                      Via::kCli, kExit1, kCliError + StepBudgetError(x) + "\n", false, [x] {
                        return RunFiles("spin_steps.json", ProgramJson(DefineSpin),
                                        "spin_steps_in.json", R"({"inputs": [[1, 2]]})",
                                        "--vm " + x.cli + " --max-steps 1000");
                      }));
    e.push_back(Entry("CliTimeBudget" + x.name, "a loop that never ends, --timeout 0.2",
                      Via::kCli, kExit1, Quote(kCliError) + TimeBudgetError(x) + "\n", true,
                      [x] {
                        return RunFiles("spin_time.json", ProgramJson(DefineSpin),
                                        "spin_time_in.json", R"({"inputs": [[1, 2]]})",
                                        "--vm " + x.cli + " --max-steps 0 --timeout 0.2");
                      }));
  }
  return e;
}

// --- Sample() -------------------------------------------------------------------

// A standard normal on the open box (-1, 1)^2 whose log density and gradient
// are NaN outside it: a model with a NaN region.
class NanOutsideBox final : public mcmc::Model {
 public:
  std::string name() const override { return "nan_outside_box"; }
  std::vector<mcmc::ParameterSpec> parameters() const override { return {{"x", {2}}}; }
  double LogDensityGradient(std::span<const double> q, std::span<double> grad) const override {
    if (!Inside(q)) {
      for (double& g : grad) g = kNaN;
      return kNaN;
    }
    for (size_t i = 0; i < q.size(); ++i) grad[i] = -q[i];
    return LogDensityInside(q);
  }
  static bool Inside(std::span<const double> q) {
    for (double x : q) {
      if (!(x > -1 && x < 1)) return false;
    }
    return true;
  }
  static double LogDensityInside(std::span<const double> q) {
    double logp = 0;
    for (double x : q) logp -= 0.5 * x * x;
    return logp;
  }
};

std::vector<BadInput> SampleEntries() {
  std::vector<BadInput> e;
  // An empty batch of chains is an error here: Sample() summarizes chains.
  e.push_back(Entry("SampleZeroChains", "num_chains = 0", Via::kSample, kInvalid,
                    "Sample: num_chains = 0; give at least 1 chain", false, [] {
                      NanOutsideBox model;
                      mcmc::SampleOptions options;
                      options.num_chains = 0;
                      return Of(mcmc::Sample(model, options));
                    }));
  return e;
}

std::vector<BadInput> Catalogue() {
  std::vector<BadInput> all;
  for (auto part : {JsonEntries, KernelEntries, TypeEntries, InputEntries, RecursionEntries,
                    StackDisciplineEntries, BudgetEntries, SampleEntries}) {
    for (BadInput& entry : part()) all.push_back(std::move(entry));
  }
  return all;
}

class BadInputCatalogue : public ::testing::TestWithParam<BadInput> {};

TEST_P(BadInputCatalogue, GivesItsExactError) {
  const BadInput& entry = GetParam();
  if (!entry.todo.empty()) GTEST_SKIP() << "TODO: " << entry.todo;
  const Outcome got = entry.run();
  EXPECT_EQ(got.status, entry.status) << got.message;
  if (entry.regex) {
    EXPECT_TRUE(std::regex_match(got.message, std::regex(entry.message)))
        << "message:\n"
        << got.message << "\ndoes not match:\n"
        << entry.message;
  } else {
    EXPECT_EQ(got.message, entry.message);
  }
}

INSTANTIATE_TEST_SUITE_P(Entries, BadInputCatalogue, ::testing::ValuesIn(Catalogue()),
                         [](const ::testing::TestParamInfo<BadInput>& info) {
                           return info.param.name;
                         });

// ---------------------------------------------------------------------------
// Part 2: valid edge values and their exact results.

class EveryExecutor : public ::testing::TestWithParam<Executor> {};

INSTANTIATE_TEST_SUITE_P(Executors, EveryExecutor, ::testing::ValuesIn(Executors()),
                         [](const ::testing::TestParamInfo<Executor>& info) {
                           return info.param.name;
                         });

// --- NaN and inf inputs: valid values that propagate -------------------------

// NaN lanes compare equal here (the values are otherwise exact).
void ExpectSameDoubles(const std::vector<double>& got, const std::vector<double>& want,
                       const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < want.size(); ++i) {
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << what << " lane " << i << ": " << got[i];
    } else {
      EXPECT_EQ(got[i], want[i]) << what << " lane " << i;
    }
  }
}

const std::vector<double> kNonFiniteInputs = {kNaN, kInf, -kInf, 1.5, -2.5, 0.0};

TEST_P(EveryExecutor, NanAndInfInputsPropagate) {
  Context ctx;
  BatchFunction f = DefineNonFinite(ctx);
  absl::StatusOr<std::vector<Tensor>> out = f.Run({F64(kNonFiniteInputs)}, GetParam().options);
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 6u);
  // NaN > 0 is false, so NaN takes the else branch (NaN - NaN); -inf too
  // (-inf - -inf = NaN); inf * 2 + 1 = inf.
  ExpectSameDoubles((*out)[0].ToVector<double>(), {kNaN, kInf, kNaN, 4.0, 0.0, 0.0}, "y");
  // Float-to-integer casts saturate and send NaN to 0 (ir/primitives.def).
  constexpr int64_t kMax64 = std::numeric_limits<int64_t>::max();
  constexpr int64_t kMin64 = std::numeric_limits<int64_t>::min();
  EXPECT_EQ((*out)[1].ToVector<int64_t>(), (std::vector<int64_t>{0, kMax64, kMin64, 1, -2, 0}));
  constexpr int32_t kMax32 = std::numeric_limits<int32_t>::max();
  constexpr int32_t kMin32 = std::numeric_limits<int32_t>::min();
  EXPECT_EQ((*out)[2].ToVector<int32_t>(), (std::vector<int32_t>{0, kMax32, kMin32, 1, -2, 0}));
  EXPECT_EQ((*out)[3].ToVector<bool>(),
            (std::vector<bool>{false, true, false, true, false, false}));
  // Casts to bool test != 0: NaN is true.
  EXPECT_EQ((*out)[4].ToVector<bool>(), (std::vector<bool>{true, true, true, true, true, false}));
  ExpectSameDoubles((*out)[5].ToVector<double>(), {kInf, kInf, -kInf, 1.5, -2.5, 0.0},
                    "nan_to_inf");
}

TEST(NonFiniteJson, ValuesRoundTripThroughTheCommandLine) {
  // The program keeps its "inf" literal through the JSON form of the IR...
  const std::string program_text = ProgramJson(DefineNonFinite);
  ASSERT_NE(program_text.find("\"inf\""), std::string::npos);
  absl::StatusOr<Program> loaded = LoadProgramJson(program_text);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(DumpProgramJson(*loaded), program_text);
  // ... and the inputs and outputs spell non-finite values "nan", "inf" and
  // "-inf", on every executor.
  const std::string program = WriteTemp("non_finite.json", program_text);
  const std::string inputs = WriteTemp(
      "non_finite_in.json", R"({"inputs": [["nan", "inf", "-inf", 1.5, -2.5, 0.0]]})");
  const Json want = Json::parse(R"([
      {"dtype": "f64", "shape": [], "values": ["nan", "inf", "nan", 4.0, 0.0, 0.0]},
      {"dtype": "i64", "shape": [], "values": [0, 9223372036854775807, -9223372036854775808,
                                               1, -2, 0]},
      {"dtype": "i32", "shape": [], "values": [0, 2147483647, -2147483648, 1, -2, 0]},
      {"dtype": "bool", "shape": [], "values": [false, true, false, true, false, false]},
      {"dtype": "bool", "shape": [], "values": [true, true, true, true, true, false]},
      {"dtype": "f64", "shape": [], "values": ["inf", "inf", "-inf", 1.5, -2.5, 0.0]}])");
  for (const Executor& x : Executors()) {
    CliResult r = RunCli("run " + program + " --inputs " + inputs + " --vm " + x.cli);
    ASSERT_EQ(r.status, "exit 0") << x.name << ": " << r.err;
    Json out = Json::parse(r.out);
    EXPECT_EQ(out["outputs"], want) << x.name;
    // An output tensor, fed back as an input, reads back to the same JSON.
    const std::string again =
        WriteTemp("non_finite_again.json", Json{{"inputs", {out["outputs"][5]}}}.dump());
    CliResult r2 = RunCli("run " + program + " --inputs " + again + " --vm " + x.cli);
    ASSERT_EQ(r2.status, "exit 0") << x.name << ": " << r2.err;
    EXPECT_EQ(Json::parse(r2.out)["outputs"][5], out["outputs"][5]) << x.name;
    std::remove(again.c_str());
  }
  std::remove(program.c_str());
  std::remove(inputs.c_str());
}

// --- a target kernel returning NaN: divergent, never a crash ---------------

// Columns of one chain's draws.
struct DrawColumns {
  Eigen::Index divergent, n_leapfrog, treedepth, lp, x1, x2;
};
DrawColumns Columns(const mcmc::SampleResult& r) {
  return {r.ColumnIndex("divergent__"), r.ColumnIndex("n_leapfrog__"),
          r.ColumnIndex("treedepth__"), r.ColumnIndex("lp__"),
          r.ColumnIndex("x.1"),         r.ColumnIndex("x.2")};
}

mcmc::SampleOptions NanTargetOptions(const Executor& x, double step_size) {
  mcmc::SampleOptions options;
  options.num_chains = 3;
  options.num_warmup = 0;
  options.num_samples = 40;
  options.adaptation.engaged = false;
  options.sampler.step_size = step_size;
  options.call = x.options;
  return options;
}

// A step so large that every first leapfrog leaves the box: the log density
// there is NaN, so every transition diverges at once and the chain stays
// exactly where it was.
TEST_P(EveryExecutor, NanLogDensityIsADivergenceThatStaysPut) {
  NanOutsideBox model;
  absl::StatusOr<mcmc::SampleResult> result =
      mcmc::Sample(model, NanTargetOptions(GetParam(), /*step_size=*/100.0));
  ASSERT_TRUE(result.ok()) << result.status();
  const DrawColumns c = Columns(*result);
  ASSERT_GE(std::min({c.divergent, c.n_leapfrog, c.treedepth, c.lp, c.x1, c.x2}), 0);
  for (size_t chain = 0; chain < result->draws.size(); ++chain) {
    SCOPED_TRACE("chain " + std::to_string(chain));
    const Eigen::MatrixXd& d = result->draws[chain];
    ASSERT_EQ(d.rows(), 40);
    EXPECT_EQ(result->chains[chain].sampling_divergences, 40);
    const double x1 = d(0, c.x1), x2 = d(0, c.x2);
    EXPECT_TRUE(NanOutsideBox::Inside(std::vector<double>{x1, x2}));
    for (Eigen::Index row = 0; row < d.rows(); ++row) {
      EXPECT_EQ(d(row, c.divergent), 1.0) << "draw " << row;
      EXPECT_EQ(d(row, c.n_leapfrog), 1.0) << "draw " << row;
      EXPECT_EQ(d(row, c.treedepth), 0.0) << "draw " << row;
      // The chain never moved: the same point (the initial one) every draw.
      EXPECT_EQ(d(row, c.x1), x1) << "draw " << row;
      EXPECT_EQ(d(row, c.x2), x2) << "draw " << row;
      EXPECT_EQ(d(row, c.lp), NanOutsideBox::LogDensityInside(std::vector<double>{x1, x2}));
    }
  }
}

// A moderate step: some trajectories reach the NaN region, some do not. A
// NaN point is never accepted, a transition that diverges on its first
// leapfrog keeps the previous draw, and every executor gives the same bits.
TEST(NanTarget, DivergencesNeverAcceptANanPointAndAgreeAcrossExecutors) {
  NanOutsideBox model;
  std::vector<Eigen::MatrixXd> reference_draws;
  for (const Executor& x : Executors()) {
    SCOPED_TRACE(x.name);
    absl::StatusOr<mcmc::SampleResult> result =
        mcmc::Sample(model, NanTargetOptions(x, /*step_size=*/1.5));
    ASSERT_TRUE(result.ok()) << result.status();
    const DrawColumns c = Columns(*result);
    int64_t divergent = 0, fine = 0, stayed = 0;
    for (const Eigen::MatrixXd& d : result->draws) {
      for (Eigen::Index row = 0; row < d.rows(); ++row) {
        const std::vector<double> q = {d(row, c.x1), d(row, c.x2)};
        ASSERT_TRUE(NanOutsideBox::Inside(q)) << "draw " << row << " at " << q[0] << ", " << q[1];
        EXPECT_EQ(d(row, c.lp), NanOutsideBox::LogDensityInside(q));
        if (d(row, c.divergent) == 1.0) {
          ++divergent;
          if (row > 0 && d(row, c.n_leapfrog) == 1.0) {
            ++stayed;
            EXPECT_EQ(d(row, c.x1), d(row - 1, c.x1)) << "draw " << row;
            EXPECT_EQ(d(row, c.x2), d(row - 1, c.x2)) << "draw " << row;
          }
        } else {
          ++fine;
        }
      }
    }
    EXPECT_GT(divergent, 0);
    EXPECT_GT(stayed, 0);
    EXPECT_GT(fine, 0);
    EXPECT_EQ(result->total_divergences(), divergent);
    if (reference_draws.empty()) {
      reference_draws = result->draws;
    } else {
      ASSERT_EQ(result->draws.size(), reference_draws.size());
      for (size_t k = 0; k < reference_draws.size(); ++k) {
        EXPECT_TRUE(result->draws[k] == reference_draws[k]) << "chain " << k;
      }
    }
  }
}

// --- an empty batch (0 lanes) gives an empty result ---------------------------

TEST_P(EveryExecutor, EmptyBatchThroughAContextCall) {
  Context ctx;
  BatchFunction count = DefineCount(ctx);
  absl::StatusOr<std::vector<Tensor>> out = count.Run({I64({})}, GetParam().options);
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 1u);
  EXPECT_EQ((*out)[0].batch(), 0);
  EXPECT_EQ((*out)[0].type(), Scalar(DType::kI64));
  // Several inputs, vectors, and a user kernel.
  Context ctx2;
  BatchFunction scale = DefineScale(ctx2);
  BatchFunction twice = DefineTwice(ctx2);
  out = scale.Run({Tensor(Vector(DType::kF64, 3), 0), F64({})}, GetParam().options);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].batch(), 0);
  EXPECT_EQ((*out)[0].type(), Vector(DType::kF64, 3));
  out = twice.Run({F64({})}, GetParam().options);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].batch(), 0);
  EXPECT_EQ((*out)[0].type(), Scalar(DType::kF64));
}

// RunProgram on an untyped program (what `autobatch run` does with a sample
// or a dumped untyped program).
TEST_P(EveryExecutor, EmptyBatchThroughRunProgramOnAnUntypedProgram) {
  Context ctx;
  absl::StatusOr<Program> program = ctx.Program(DefineCount(ctx));
  ASSERT_TRUE(program.ok()) << program.status();
  absl::StatusOr<std::vector<Tensor>> out =
      RunProgram(*program, {I64({})}, &ctx.kernels(), GetParam().options);
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 1u);
  EXPECT_EQ((*out)[0].batch(), 0);
  EXPECT_EQ((*out)[0].type(), Scalar(DType::kI64));
}

TEST_P(EveryExecutor, EmptyBatchThroughTheCommandLine) {
  Outcome got = RunFiles("count_empty.json", ProgramJson(DefineCount), "count_empty_in.json",
                         R"({"inputs": [[]]})", "--vm " + GetParam().cli);
  EXPECT_EQ(got.status, kExit0) << got.message;
  EXPECT_EQ(got.message, R"([{"dtype":"i64","shape":[],"values":[]}])");
}

TEST_P(EveryExecutor, EmptyBatchOfChains) {
  NanOutsideBox model;
  mcmc::BatchedRunOptions options;
  options.call = GetParam().options;
  absl::StatusOr<mcmc::BatchedRunResult> run = mcmc::RunBatchedChains(
      model, mcmc::SamplerConfig{}, /*seed=*/1, std::span<const uint64_t>(), /*num_draws=*/5,
      options);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_TRUE(run->chains.empty());
  EXPECT_TRUE(run->leapfrogs.empty());
  EXPECT_TRUE(run->divergences.empty());
}

}  // namespace
}  // namespace autobatch
