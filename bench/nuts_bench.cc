// Batched NUTS (stack VM: eigen and threaded:2 backends, and the eigen
// backend on two shards, CallOptions::shards; most-lanes schedule) against the
// scalar reference NUTS looped over the same chains: same seed, chain ids,
// fixed step size, identity metric, no warmup, same number of draws.
//
// Usage: nuts_bench [--draws N] [--chains-list 1,64,256,1024]
//                   [--targets ar1,ar1_batched,eight_schools] [--quick]
//                     (a target is BATCHED[:SCALAR]: ar1, ar1_batched (one GEMM
//                     per gradient; against scalar ar1 unless named),
//                     ar1_dense (a matvec per lane), eight_schools; e.g.
//                     ar1_batched:ar1_dense; eight_schools_program and
//                     logistic_regression_program, the example models as
//                     programs, against the hand-written target with the C
//                     library's math, <base>_libm, unless named: ":<base>"
//                     is the built-in target, support/math's one-value path)
//                   [--backends eigen/most-lanes,threaded:2,eigen/shards:2]
//                   [--json FILE]
//                   [--profile FILE]   (the VM profile of the last batched run)
// Prints one row per (target, chains, executor): wall seconds, gradient
// evaluations taken (sum of n_leapfrog__), useful gradients per second, the
// speedup in useful gradients per second over the scalar loop, bulk ESS of
// lp__ per second (chains >= 4), batch utilization (leapfrogs taken /
// computed) with the free-running and lock-step bounds, and whether the
// draws equal the scalar draws bit for bit: OK / MISMATCH for
// batch-bit-stable models, "(equal)" / "(differ)" for information otherwise.
// Compilation is excluded from the timings (one untimed warm-up run per
// executor); so is chain initialization (MakeBatchedChains, shared by both).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include <Eigen/Core>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "bench/libm_targets.h"
#include "bench/scalar_loop.h"
#include "nlohmann/json.hpp"
#include "mcmc/batched/batched_sampler.h"
#include "mcmc/output/diagnostics.h"
#include "mcmc/sampler_config.h"
#include "mcmc/scalar/scalar_nuts.h"
#include "mcmc/model/program_model.h"
#include "mcmc/model/targets/registry.h"
#include "samples/models/models.h"
#include "vm/fused_blocks.h"
#include "vm/options.h"

// Generated at build time by emit_nuts_fused_blocks.
const autobatch::FusedProgram& FusedBlocks_eight_schools();
const autobatch::FusedProgram& FusedBlocks_ar1();
const autobatch::FusedProgram& FusedBlocks_ar1_batched();
const autobatch::FusedProgram& FusedBlocks_ar1_dense();

namespace autobatch::mcmc {
namespace {

constexpr uint64_t kSeed = 20261122;

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

[[noreturn]] void Die(const std::string& what, const absl::Status& status) {
  std::fprintf(stderr, "nuts_bench: %s: %s\n", what.c_str(), status.ToString().c_str());
  std::exit(1);
}

struct BenchTarget {
  std::string name;       // registry name of the batched model
  std::string scalar;     // registry name of the scalar reference model
  nlohmann::json params;
  double step_size;
};

struct Row {
  std::string target;
  int64_t chains = 0;
  int64_t draws = 0;
  std::string executor;
  double seconds = 0;
  int64_t gradients = 0;
  double speedup = 0;          // useful gradients/s over the scalar loop's
  double ess_bulk = NAN;       // bulk ESS of lp__ (NaN when chains < 4)
  double utilization = -1;     // -1: not a batched run
  double free_running = -1;
  double lock_step = -1;
  std::string bits;            // "OK", "MISMATCH", or "-" (not checked)
};

std::vector<Row> rows;

void PrintHeader() {
  std::printf("%-14s %6s %5s %-20s %9s %11s %11s %8s %9s %8s %7s %7s %7s %s\n", "target",
              "chains", "draws", "executor", "seconds", "gradients", "grad/s", "speedup",
              "ESS_bulk", "ESS/s", "util", "free", "lockstp", "bits");
}

void Print(const Row& r) {
  const double rate = static_cast<double>(r.gradients) / r.seconds;
  std::printf("%-14s %6lld %5lld %-20s %9.4f %11lld %11.4g %7.2fx", r.target.c_str(),
              static_cast<long long>(r.chains), static_cast<long long>(r.draws),
              r.executor.c_str(), r.seconds, static_cast<long long>(r.gradients), rate,
              r.speedup);
  if (std::isnan(r.ess_bulk)) {
    std::printf(" %9s %8s", "-", "-");
  } else {
    std::printf(" %9.1f %8.1f", r.ess_bulk, r.ess_bulk / r.seconds);
  }
  if (r.utilization >= 0) {
    std::printf(" %6.1f%% %6.1f%% %6.1f%%", 100 * r.utilization, 100 * r.free_running,
                100 * r.lock_step);
  } else {
    std::printf(" %7s %7s %7s", "-", "-", "-");
  }
  std::printf(" %s\n", r.bits.c_str());
  std::fflush(stdout);
  rows.push_back(r);
}

// Bulk ESS of lp__ over the chains (draws x chains); NaN below 4 chains.
double LpEssBulk(const std::vector<ScalarChainResult>& chains, int64_t draws) {
  if (chains.size() < 4 || draws < 1) return NAN;
  Eigen::MatrixXd lp(draws, static_cast<Eigen::Index>(chains.size()));
  for (size_t c = 0; c < chains.size(); ++c) {
    for (int64_t n = 0; n < draws; ++n) {
      lp(n, static_cast<Eigen::Index>(c)) = chains[c].stats[static_cast<size_t>(n)].lp;
    }
  }
  return EssBulk(lp);
}

int64_t GradientsTaken(const std::vector<ScalarChainResult>& chains) {
  int64_t total = 0;
  for (const ScalarChainResult& c : chains) {
    for (const DrawStats& s : c.stats) total += s.n_leapfrog;
  }
  return total;
}

bool SameBits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// Draws and statistics equal bit for bit (chain k against chain k).
bool SameDraws(const std::vector<ScalarChainResult>& a, const std::vector<ScalarChainResult>& b) {
  if (a.size() != b.size()) return false;
  for (size_t c = 0; c < a.size(); ++c) {
    const ScalarChainResult& x = a[c];
    const ScalarChainResult& y = b[c];
    if (x.chain_id != y.chain_id || x.draws.size() != y.draws.size() ||
        x.stats.size() != y.stats.size()) {
      return false;
    }
    if (!x.draws.empty() &&
        std::memcmp(x.draws.data(), y.draws.data(), x.draws.size() * sizeof(double)) != 0) {
      return false;
    }
    for (size_t n = 0; n < x.stats.size(); ++n) {
      const DrawStats& s = x.stats[n];
      const DrawStats& t = y.stats[n];
      if (!SameBits(s.lp, t.lp) || !SameBits(s.accept_stat, t.accept_stat) ||
          !SameBits(s.stepsize, t.stepsize) || !SameBits(s.energy, t.energy) ||
          s.treedepth != t.treedepth || s.n_leapfrog != t.n_leapfrog ||
          s.divergent != t.divergent) {
        return false;
      }
    }
    if (x.final_rng.counter != y.final_rng.counter) return false;
  }
  return true;
}

// A built-in target, or "<example model>_program": the example model
// written as a program (samples/models/) with its data file.
constexpr char kProgramSuffix[] = "_program";

bool IsProgramModel(const std::string& name) {
  return name.size() > sizeof(kProgramSuffix) - 1 &&
         name.compare(name.size() - (sizeof(kProgramSuffix) - 1), std::string::npos,
                      kProgramSuffix) == 0;
}

std::unique_ptr<Model> Make(const std::string& name, const nlohmann::json& params) {
  if (IsProgramModel(name)) {
    const std::string base = name.substr(0, name.size() - (sizeof(kProgramSuffix) - 1));
    absl::StatusOr<std::unique_ptr<ProgramModel>> model = samples::MakeExampleModel(base);
    if (!model.ok()) Die("MakeExampleModel(" + base + ")", model.status());
    const std::string path = std::string(AUTOBATCH_SOURCE_DIR) + "/samples/models/" + base +
                             ".data.json";
    std::ifstream file(path);
    std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    if (absl::Status s = (*model)->LoadData(text, path); !s.ok()) Die("LoadData", s);
    return *std::move(model);
  }
  if (std::unique_ptr<Target> libm = autobatch::bench::MakeLibmTarget(name, params)) {
    return libm;
  }
  absl::StatusOr<std::unique_ptr<Target>> t = MakeTarget(name, params);
  if (!t.ok()) Die("MakeTarget(" + name + ")", t.status());
  return *std::move(t);
}

// The stack VM options of an executor spec
// "BACKEND[/POLICY][/shards:N][/threads:N][/dense:F][/tile:BYTES][/densemax:BYTES][/frames:BYTES][/fixedmode][/fused]" (e.g.
// "eigen/most-lanes", "eigen/most-lanes/shards:4/threads:1",
// "eigen/most-lanes/dense:0.8"; vm/options.h, BlockPolicy,
// CallOptions::shards, shard_threads, dense_fraction, tile_bytes,
// dense_max_bytes and frame_stack_min_lane_bytes; "fixedmode": dense or
// compact by those fractions, not by time (time_dense_or_compact = false); "fused": the target's fused blocks, generated at build
// time by emit_nuts_fused_blocks, CallOptions::fused_blocks; "jit": the same
// blocks compiled at run time, CallOptions::jit_fused_blocks; "compiled": the
// whole program compiled at run time, CallOptions::jit_compiled_program).
// Sets *value from a part "NAME:VALUE" of an executor spec if the part has
// that name and its value parses and lies in [min, max].
template <typename T>
bool PartValue(const std::string& part, const std::string& name, T min, T max, T* value) {
  if (part.rfind(name + ":", 0) != 0) return false;
  const std::string text = part.substr(name.size() + 1);
  T parsed{};
  bool ok = false;
  if constexpr (std::is_floating_point_v<T>) {
    ok = absl::SimpleAtod(text, &parsed);
  } else {
    ok = absl::SimpleAtoi(text, &parsed);
  }
  if (!ok || parsed < min || parsed > max) return false;
  *value = parsed;
  return true;
}

// The fused blocks of a batched target's program.
const FusedProgram* FusedBlocksOf(const std::string& target) {
  if (target == "eight_schools") return &FusedBlocks_eight_schools();
  if (target == "ar1") return &FusedBlocks_ar1();
  if (target == "ar1_batched") return &FusedBlocks_ar1_batched();
  if (target == "ar1_dense") return &FusedBlocks_ar1_dense();
  return nullptr;
}

CallOptions ExecutorOptions(const std::string& spec, const FusedProgram* fused) {
  std::vector<std::string> parts = absl::StrSplit(spec, '/');
  CallOptions options{.vm = Vm::kStack, .backend = parts[0]};
  constexpr int kIntMax = std::numeric_limits<int>::max();
  constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
  for (size_t i = 1; i < parts.size(); ++i) {
    const std::string& part = parts[i];
    if (PartValue(part, "shards", 1, kIntMax, &options.shards) ||
        PartValue(part, "threads", 1, kIntMax, &options.shard_threads) ||
        PartValue(part, "dense", 0.0, 1.0, &options.dense_fraction) ||
        PartValue<int64_t>(part, "tile", 0, kInt64Max, &options.tile_bytes) ||
        PartValue<int64_t>(part, "densemax", std::numeric_limits<int64_t>::min(), kInt64Max,
                           &options.dense_max_bytes) ||
        PartValue<int64_t>(part, "frames", 1, kInt64Max, &options.frame_stack_min_lane_bytes)) {
      continue;
    }
    if (part == "fixedmode") {  // dense or compact by dense_fraction, not timed
      options.time_dense_or_compact = false;
      continue;
    }
    if (part == "jit") {  // compiled at run time (codegen/jit.h); warmed up before timing
      options.jit_fused_blocks = true;
      continue;
    }
    if (part == "compiled") {  // the whole program compiled at run time, warmed up likewise
      options.jit_compiled_program = true;
      continue;
    }
    if (part == "fused") {
      if (fused == nullptr) {
        Die("--backends", absl::InvalidArgumentError(
                              "'" + spec + "': no fused blocks were generated for this target"));
      }
      options.fused_blocks = fused;
      continue;
    }
    const std::optional<BlockPolicy> policy = BlockPolicyFromName(part);
    if (!policy) {
      Die("--backends", absl::InvalidArgumentError(
                            "unknown part '" + part + "' in '" + spec +
                            "' (a block policy lowest-index or most-lanes, shards:N, threads:N, dense:F with F in [0, 1], tile:BYTES, densemax:BYTES, frames:BYTES, fixedmode, fused, jit or compiled)"));
    }
    options.block_policy = *policy;
  }
  return options;
}

// Where --profile writes the VM profile of each batched run (the last wins).
std::string profile_path;

void Bench(const BenchTarget& bt, const std::vector<int64_t>& chain_counts, int64_t draws,
           std::vector<std::string> backends) {
  std::unique_ptr<Model> scalar_model = Make(bt.scalar, bt.params);
  std::unique_ptr<Model> batched_model = Make(bt.name, bt.params);
  // Sharded calls need bit-stable kernels (vm/options.h); skip them for the
  // others rather than fail.
  if (!batched_model->batch_bit_stable()) {
    std::erase_if(backends, [&](const std::string& spec) {
      if (ExecutorOptions(spec, FusedBlocksOf(bt.name)).shards == 1) return false;
      std::printf("%s: skipping %s (its model kernel is not bit-stable, so it is not sharded)\n",
                  bt.name.c_str(), spec.c_str());
      return true;
    });
  }
  SamplerConfig config;
  config.step_size = bt.step_size;  // identity metric (inv_metric empty), max_depth 10

  absl::StatusOr<std::unique_ptr<BatchedSampler>> sampler =
      BatchedSampler::Create(*batched_model, Algorithm::kNuts, config);
  if (!sampler.ok()) Die("BatchedSampler::Create(" + bt.name + ")", sampler.status());

  // Untimed warm-up per executor: compiles and caches the program.
  {
    const std::vector<uint64_t> one = {0};
    absl::StatusOr<std::vector<BatchedChain>> warm =
        MakeBatchedChains(*batched_model, config, kSeed, one);
    if (!warm.ok()) Die("MakeBatchedChains", warm.status());
    for (const std::string& backend : backends) {
      const CallOptions options = ExecutorOptions(backend, FusedBlocksOf(bt.name));
      absl::StatusOr<BatchedRunResult> run = (*sampler)->Run(*warm, 1, options);
      if (!run.ok()) Die("warm-up " + bt.name + " " + backend, run.status());
    }
  }

  for (int64_t chains : chain_counts) {
    std::vector<uint64_t> ids(static_cast<size_t>(chains));
    for (size_t k = 0; k < ids.size(); ++k) ids[k] = k;
    // The same starting points for both (InitializeChain from each chain's
    // stream, exactly as RunScalarChains does); the scalar model's
    // initialization is used so both start from identical states.
    absl::StatusOr<std::vector<BatchedChain>> starts =
        MakeBatchedChains(*scalar_model, config, kSeed, ids);
    if (!starts.ok()) Die("MakeBatchedChains(" + bt.scalar + ")", starts.status());
    if (bt.scalar.ends_with("_libm")) {
      // The C library target must compute the built-in target's model.
      const std::unique_ptr<Model> builtin =
          Make(bt.scalar.substr(0, bt.scalar.size() - 5), bt.params);
      for (const BatchedChain& c : *starts) {
        if (absl::Status ok = autobatch::bench::CheckAgrees(*scalar_model, *builtin, c.state.q);
            !ok.ok()) {
          Die("the C library target", ok);
        }
      }
    }
    if (bt.scalar != bt.name) {
      // Recompute logp and grad with the batched model (its bits may differ).
      for (BatchedChain& c : *starts) {
        absl::StatusOr<ChainState> s = MakeChainState(*batched_model, c.state.q);
        if (!s.ok()) Die("MakeChainState(" + bt.name + ")", s.status());
        c.state = *std::move(s);
      }
    }

    const int reps = chains <= 64 ? 3 : 1;
    double scalar_seconds = 1e300;
    std::vector<ScalarChainResult> scalar;
    for (int r = 0; r < reps; ++r) {
      const double start = Now();
      scalar = RunScalarLoop(*scalar_model, config, *starts, draws);
      scalar_seconds = std::min(scalar_seconds, Now() - start);
    }
    const int64_t scalar_gradients = GradientsTaken(scalar);
    const double scalar_rate = static_cast<double>(scalar_gradients) / scalar_seconds;
    Row srow;
    srow.target = bt.name;
    srow.chains = chains;
    srow.draws = draws;
    srow.executor = "scalar (" + bt.scalar + ")";
    srow.seconds = scalar_seconds;
    srow.gradients = scalar_gradients;
    srow.speedup = 1.0;
    srow.ess_bulk = LpEssBulk(scalar, draws);
    srow.bits = "-";
    Print(srow);

    for (const std::string& backend : backends) {
      const CallOptions options = ExecutorOptions(backend, FusedBlocksOf(bt.name));
      double best = 1e300;
      absl::StatusOr<BatchedRunResult> run;
      for (int r = 0; r < reps; ++r) {
        const double start = Now();
        run = (*sampler)->Run(*starts, draws, options);
        const double t = Now() - start;
        if (!run.ok()) Die(bt.name + " stack/" + backend, run.status());
        best = std::min(best, t);
      }
      Row row;
      row.target = bt.name;
      row.chains = chains;
      row.draws = draws;
      row.executor = "stack/" + backend;
      row.seconds = best;
      row.gradients = run->utilization.gradients_taken;
      if (row.gradients != GradientsTaken(run->chains)) {
        std::fprintf(stderr, "nuts_bench: %s: utilization.gradients_taken %lld != sum of "
                     "n_leapfrog__ %lld\n", row.executor.c_str(),
                     static_cast<long long>(row.gradients),
                     static_cast<long long>(GradientsTaken(run->chains)));
      }
      row.speedup = (static_cast<double>(row.gradients) / best) / scalar_rate;
      row.ess_bulk = LpEssBulk(run->chains, draws);
      row.utilization = run->utilization.utilization;
      row.free_running = run->utilization.free_running_bound;
      row.lock_step = run->utilization.lock_step_utilization;
      if (batched_model->batch_bit_stable() && bt.scalar == bt.name) {
        row.bits = SameDraws(scalar, run->chains) ? "OK" : "MISMATCH";
      } else {
        // Not expected to match; say whether it happens to (rank-based ESS
        // and tree shapes hide last-bit differences).
        row.bits = SameDraws(scalar, run->chains) ? "(equal)" : "(differ)";
      }
      Print(row);
      if (!profile_path.empty()) {
        // Once more with per-block and per-primitive timing.
        CallOptions timed = options;
        timed.profile_timing = true;
        absl::StatusOr<BatchedRunResult> profiled = (*sampler)->Run(*starts, draws, timed);
        if (!profiled.ok()) Die(bt.name + " profiled run", profiled.status());
        std::ofstream(profile_path) << profiled->profile.ToJson().dump(1) << "\n";
      }
    }
  }
}

std::vector<std::string> SplitList(const std::string& text) {
  return absl::StrSplit(text, ',', absl::SkipEmpty());
}

[[noreturn]] void Usage(const char* problem) {
  std::fprintf(stderr,
               "nuts_bench: %s\nusage: nuts_bench [--draws N] [--chains-list 1,64,256,1024] "
               "[--targets ar1,ar1_batched[:ar1_dense],ar1_dense,eight_schools] [--backends eigen,threaded:2,eigen/most-lanes] "
               "[--quick] [--json FILE] [--profile FILE]\n",
               problem);
  std::exit(2);
}

int64_t ParsePositive(const std::string& text, const char* what) {
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || v < 1) {
    Usage((std::string(what) + " must be a positive integer, got '" + text + "'").c_str());
  }
  return v;
}

int Main(int argc, char** argv) {
  std::string json_path;
  bool quick = false;
  int64_t draws = -1;
  std::vector<int64_t> chain_counts;
  std::vector<std::string> target_names = {"ar1", "ar1_batched", "eight_schools"};
  std::vector<std::string> backends = {"eigen/most-lanes", "threaded:2/most-lanes",
                                      "eigen/most-lanes/shards:2"};
  for (int i = 1; i < argc; ++i) {
    const bool has_value = i + 1 < argc;
    if (!std::strcmp(argv[i], "--json") && has_value) {
      json_path = argv[++i];
    } else if (!std::strcmp(argv[i], "--quick")) {
      quick = true;
    } else if (!std::strcmp(argv[i], "--draws") && has_value) {
      draws = ParsePositive(argv[++i], "--draws");
    } else if (!std::strcmp(argv[i], "--chains-list") && has_value) {
      for (const std::string& c : SplitList(argv[++i])) {
        chain_counts.push_back(ParsePositive(c, "--chains-list entry"));
      }
    } else if (!std::strcmp(argv[i], "--targets") && has_value) {
      target_names = SplitList(argv[++i]);
    } else if (!std::strcmp(argv[i], "--backends") && has_value) {
      backends = SplitList(argv[++i]);
    } else if (!std::strcmp(argv[i], "--profile") && has_value) {
      profile_path = argv[++i];
    } else {
      Usage((std::string("unknown or incomplete argument '") + argv[i] + "'").c_str());
    }
  }
  if (draws < 0) draws = quick ? 20 : 100;
  if (chain_counts.empty()) {
    chain_counts = quick ? std::vector<int64_t>{1, 64} : std::vector<int64_t>{1, 64, 256, 1024};
  }
  const nlohmann::json ar1_params = {{"dimension", 100}};
  std::vector<BenchTarget> targets;
  for (const std::string& spec : target_names) {
    // BATCHED[:SCALAR]: the batched model against the scalar reference of
    // another model of the same target (e.g. ar1_batched:ar1_dense, one GEMM
    // against a matrix-vector product per chain).
    auto is_ar1 = [](const std::string& n) {
      return n == "ar1" || n == "ar1_batched" || n == "ar1_dense";
    };
    const size_t colon = spec.find(':');
    const std::string name = spec.substr(0, colon);
    std::string scalar = colon == std::string::npos ? "" : spec.substr(colon + 1);
    const bool ar1_family = is_ar1(name);
    // A program model runs against the hand-written target of its name.
    const bool program = name == "eight_schools_program" || name == "logistic_regression_program";
    const std::string base = program ? name.substr(0, name.size() - 8) : name;
    if (!ar1_family && name != "eight_schools" && !program) {
      Usage(("unknown target '" + name +
             "' (ar1, ar1_batched, ar1_dense, eight_schools, eight_schools_program, "
             "logistic_regression_program)")
                .c_str());
    }
    // A program model's default reference is the target a user would write,
    // with the C library's math (bench/libm_targets.h); ":<base>" picks the
    // built-in target (support/math's one-value path) instead.
    if (scalar.empty()) scalar = name == "ar1_batched" ? "ar1" : name;
    if (program && scalar == name) scalar = base + "_libm";
    if (is_ar1(scalar) != ar1_family ||
        (!ar1_family && scalar != name && scalar != base && scalar != base + "_libm")) {
      Usage(("target '" + spec + "': the scalar reference must be a model of the same target").c_str());
    }
    if (ar1_family) {
      targets.push_back({name, scalar, ar1_params, 0.15});
    } else if (base == "logistic_regression") {
      // The example model's data: 1000 rows, 24 features (samples/models).
      targets.push_back({name, scalar, {{"rows", 1000}, {"features", 24}}, 0.05});
    } else {
      targets.push_back({name, scalar, nlohmann::json::object(), 0.3});
    }
  }

  std::printf("NUTS, identity metric, no warmup, seed %llu, %lld draws per chain\n",
              static_cast<unsigned long long>(kSeed), static_cast<long long>(draws));
  PrintHeader();
  for (const BenchTarget& t : targets) Bench(t, chain_counts, draws, backends);

  if (!json_path.empty()) {
    nlohmann::json out = nlohmann::json::array();
    for (const Row& r : rows) {
      nlohmann::json j = {{"target", r.target},
                          {"chains", r.chains},
                          {"draws", r.draws},
                          {"executor", r.executor},
                          {"seconds", r.seconds},
                          {"gradients", r.gradients},
                          {"gradients_per_second", static_cast<double>(r.gradients) / r.seconds},
                          {"speedup_vs_scalar", r.speedup},
                          {"bits", r.bits}};
      j["ess_bulk_lp"] = std::isnan(r.ess_bulk) ? nlohmann::json(nullptr) : nlohmann::json(r.ess_bulk);
      j["ess_bulk_lp_per_second"] = std::isnan(r.ess_bulk) ? nlohmann::json(nullptr)
                                                           : nlohmann::json(r.ess_bulk / r.seconds);
      if (r.utilization >= 0) {
        j["utilization"] = r.utilization;
        j["free_running_bound"] = r.free_running;
        j["lock_step_utilization"] = r.lock_step;
      }
      out.push_back(std::move(j));
    }
    std::ofstream(json_path) << out.dump(2) << "\n";
  }
  return 0;
}

}  // namespace
}  // namespace autobatch::mcmc

int main(int argc, char** argv) { return autobatch::mcmc::Main(argc, argv); }
