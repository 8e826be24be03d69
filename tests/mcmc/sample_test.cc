// Tests of Sample(): free-running warmup equals the scalar warmup bit for bit,
// chunked sampling continues the scalar chain, moments of a known target,
// Stan CSV round trip, summary text and JSON, progress and option errors.
#include "mcmc/sample.h"

#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mcmc/warmup/initialize.h"
#include "mcmc/scalar/scalar_nuts.h"
#include "mcmc/scalar/scalar_warmup.h"
#include "mcmc/model/targets/registry.h"

namespace autobatch::mcmc {
namespace {

using json = nlohmann::json;
using ::testing::HasSubstr;

bool SameBits(double a, double b) { return std::memcmp(&a, &b, sizeof(double)) == 0; }

std::unique_ptr<Target> Make(std::string_view name, const json& params = json::object()) {
  absl::StatusOr<std::unique_ptr<Target>> target = MakeTarget(name, params);
  EXPECT_TRUE(target.ok()) << target.status();
  return *std::move(target);
}

SampleOptions Small(int64_t chains, int64_t warmup, int64_t samples) {
  SampleOptions o;
  o.num_chains = chains;
  o.num_warmup = warmup;
  o.num_samples = samples;
  o.seed = 7;
  return o;
}

// The scalar reference of chain `id`: init, RunScalarWarmup, then
// `samples` ScalarNuts transitions with the adapted parameters.
struct ScalarRun {
  WarmupResult warmup;
  std::vector<DrawStats> stats;
  std::vector<std::vector<double>> q;
};

ScalarRun RunScalar(const Model& model, const SampleOptions& o, uint64_t id) {
  ChainRng rng = MakeChainRng(o.seed, id);
  absl::StatusOr<InitialPoint> init = InitializeChain(model, rng.key, &rng.counter);
  EXPECT_TRUE(init.ok()) << init.status();
  ChainState state{init->q, init->log_density, init->gradient};
  WarmupOptions w;
  w.num_warmup = o.num_warmup;
  w.delta = o.adaptation.delta;
  absl::StatusOr<WarmupResult> warmup = RunScalarWarmup(model, o.sampler, rng, state, w);
  EXPECT_TRUE(warmup.ok()) << warmup.status();
  ScalarRun run;
  run.warmup = *warmup;
  SamplerConfig config = o.sampler;
  config.step_size = warmup->step_size;
  config.inv_metric = warmup->inv_metric;
  ScalarNuts nuts(model, config);
  for (int64_t n = 0; n < o.num_samples; ++n) {
    DrawStats stats;
    nuts.Transition(state, rng, &stats);
    run.stats.push_back(stats);
    run.q.push_back(state.q);
  }
  return run;
}

TEST(SampleTest, FreeRunningWarmupAndChunkedSamplingMatchTheScalarChainBitForBit) {
  // Eight schools: transforms, generated quantities and varied tree depths;
  // 60 warmup iterations use the 15% / 75% / 10% schedule (one window end,
  // so the heuristic runs twice per chain).
  std::unique_ptr<Target> model = Make("eight_schools");
  SampleOptions o = Small(3, 60, 25);
  o.adaptation.delta = 0.9;
  o.num_chunks = 4;
  absl::StatusOr<SampleResult> result = Sample(*model, o);
  ASSERT_TRUE(result.ok()) << result.status();
  const int64_t d = model->dimension();
  for (uint64_t id = 0; id < 3; ++id) {
    SCOPED_TRACE(id);
    const ScalarRun scalar = RunScalar(*model, o, id);
    const ChainSummary& chain = result->chains[id];
    EXPECT_EQ(chain.chain_id, id);
    EXPECT_TRUE(SameBits(chain.step_size, scalar.warmup.step_size))
        << chain.step_size << " vs " << scalar.warmup.step_size;
    ASSERT_EQ(chain.inv_metric.size(), scalar.warmup.inv_metric.size());
    for (int64_t i = 0; i < d; ++i) {
      EXPECT_TRUE(SameBits(chain.inv_metric[i], scalar.warmup.inv_metric[i])) << i;
    }
    EXPECT_EQ(scalar.warmup.metric_updates, 1);
    EXPECT_EQ(chain.heuristic_trials, scalar.warmup.heuristic_trials);
    int64_t warmup_divergences = 0;
    for (const DrawStats& s : scalar.warmup.stats) warmup_divergences += s.divergent;
    EXPECT_EQ(chain.warmup_divergences, warmup_divergences);
    // Sampling, split into 4 VM calls, continues the scalar chain exactly.
    const Eigen::MatrixXd& draws = result->draws[id];
    ASSERT_EQ(draws.rows(), o.num_samples);
    std::vector<double> constrained(d);
    for (int64_t n = 0; n < o.num_samples; ++n) {
      const auto stats = DrawStatValues(scalar.stats[n]);
      for (int j = 0; j < kNumDrawStats; ++j) {
        ASSERT_TRUE(SameBits(draws(n, j), stats[j])) << "draw " << n << " column " << j;
      }
      Constrain(*model, scalar.q[n], constrained);
      for (int64_t j = 0; j < d; ++j) {
        ASSERT_TRUE(SameBits(draws(n, kNumDrawStats + j), constrained[j]));
      }
    }
  }
  // Columns: sampler stats, then mu, tau, eta.1..8, then theta.1..8.
  EXPECT_EQ(result->column_names.front(), "lp__");
  EXPECT_EQ(result->column_names[kNumDrawStats], "mu");
  EXPECT_EQ(result->column_names.size(), static_cast<size_t>(kNumDrawStats + d + 8));
  EXPECT_EQ(result->column_names.back(), "theta.8");
  // Warmup is one VM call: the chains adapt inside it (WarmupAdapter).
  EXPECT_EQ(result->vm_calls, 1 + 4);
  EXPECT_GE(result->warmup_leapfrogs_computed, result->warmup_leapfrogs_taken);
  EXPECT_GT(result->sampling_leapfrogs_taken, 0);
}

TEST(SampleTest, IidGaussianMomentsAndConvergence) {
  std::unique_ptr<Target> model = Make("iid_gaussian", {{"dimension", 2}});
  absl::StatusOr<SampleResult> result = Sample(*model, Small(8, 200, 200));
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->summary.size(), result->column_names.size());
  for (const char* name : {"x.1", "x.2"}) {
    SCOPED_TRACE(name);
    const Eigen::Index col = result->ColumnIndex(name);
    ASSERT_GE(col, 0) << testing::PrintToString(result->column_names);
    const SummaryRow& s = result->summary[col];
    // Two means tested: a z of 3.5 is far beyond Bonferroni's 2.8 at 1%.
    EXPECT_LT(std::abs(s.mean), 3.5 * s.mcse) << s.mean << " mcse " << s.mcse;
    EXPECT_GT(s.mcse, 0);
    EXPECT_LT(s.mcse, 0.1);
    EXPECT_LT(s.rhat, 1.05);
    EXPECT_GT(s.ess_bulk, 200);
    EXPECT_NEAR(s.stddev, 1.0, 0.15);
  }
  const SummaryRow& divergent = result->summary[result->ColumnIndex("divergent__")];
  EXPECT_EQ(divergent.mean, 0);
  EXPECT_TRUE(std::isnan(divergent.rhat));  // constant column
  // Per-chain step sizes differ: no R-hat for stepsize__ (nor treedepth__),
  // but lp__ has every diagnostic.
  const SummaryRow& stepsize = result->summary[result->ColumnIndex("stepsize__")];
  EXPECT_GT(stepsize.mean, 0);
  EXPECT_TRUE(std::isnan(stepsize.rhat));
  EXPECT_TRUE(std::isnan(result->summary[result->ColumnIndex("treedepth__")].ess_bulk));
  const SummaryRow& lp = result->summary[0];
  EXPECT_LT(lp.rhat, 1.05);
  EXPECT_GT(lp.ess_bulk, 100);
  // Early warmup (step sizes still far too large) may diverge; sampling
  // on N(0, I) with an adapted step size must not.
  for (const ChainSummary& c : result->chains) {
    EXPECT_EQ(c.sampling_divergences, 0);
    EXPECT_GT(c.step_size, 0.3);
    EXPECT_GT(c.ebfmi, 0.3);
    ASSERT_EQ(c.inv_metric.size(), 2u);
    // The last window has 50 draws: a variance estimate, not exactly 1.
    EXPECT_GT(c.inv_metric[0], 0.3);
    EXPECT_LT(c.inv_metric[0], 3.0);
  }
  EXPECT_EQ(result->gradient_evaluations,
            result->warmup_gradient_evaluations + result->sampling_gradient_evaluations);
  EXPECT_EQ(result->sampling_gradient_evaluations, result->sampling_leapfrogs_taken);
  EXPECT_GT(result->sampling_utilization, 0);
  EXPECT_LE(result->sampling_utilization, 1);
  EXPECT_GT(result->warmup_seconds, 0);
  EXPECT_GT(result->sampling_seconds, 0);
}

std::string FileText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The chains' files are written on several threads: the same bytes as on
// one, and every chain whose file cannot be written is named in the error.
TEST(SampleTest, CsvFilesAreTheSameOnAnyNumberOfThreads) {
  std::unique_ptr<Target> model = Make("eight_schools");
  absl::StatusOr<SampleResult> result = Sample(*model, Small(5, 20, 10));
  ASSERT_TRUE(result.ok()) << result.status();
  const std::string dir = ::testing::TempDir() + "sample_test_csv_threads";
  std::filesystem::remove_all(dir);
  std::vector<std::string> texts[2];
  for (int i = 0; i < 2; ++i) {
    const int threads = i == 0 ? 1 : 3;
    absl::StatusOr<std::vector<std::string>> paths =
        WriteChainCsvFiles(*result, dir + "/t" + std::to_string(threads), 6, threads);
    ASSERT_TRUE(paths.ok()) << paths.status();
    ASSERT_EQ(paths->size(), 5u);
    for (size_t k = 0; k < 5; ++k) {
      EXPECT_THAT((*paths)[k], HasSubstr("output_" + std::to_string(k + 1) + ".csv"));
      EXPECT_EQ((*paths)[k], ChainCsvPath(dir + "/t" + std::to_string(threads), k));
      texts[i].push_back(FileText((*paths)[k]));
    }
  }
  EXPECT_EQ(texts[0], texts[1]);
  EXPECT_THAT(texts[0][4], HasSubstr("id = 5"));
  // output_3.csv and output_5.csv are directories: chains 2 and 4 are the
  // error, both named (only the first used to be). An earlier run's file of
  // a failing chain is removed, not left looking like this run's.
  std::filesystem::create_directories(dir + "/bad/output_3.csv");
  std::filesystem::create_directories(dir + "/bad/output_5.csv");
  absl::StatusOr<std::vector<std::string>> bad = WriteChainCsvFiles(*result, dir + "/bad", 6, 3);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(),
              HasSubstr("2 of 5 chains' CSV files could not be written and are absent"));
  EXPECT_THAT(bad.status().message(), HasSubstr("writing the CSV file of chain 2"));
  EXPECT_THAT(bad.status().message(), HasSubstr("writing the CSV file of chain 4"));
  EXPECT_THAT(bad.status().message(), HasSubstr("is a directory"));
  EXPECT_EQ(FileText(dir + "/bad/output_4.csv"), texts[0][3]);
  std::filesystem::remove(dir + "/bad/output_3.csv");
  std::filesystem::remove(dir + "/bad/output_5.csv");
  std::filesystem::create_symlink(dir + "/bad/output_4.csv", dir + "/bad/output_5.csv");
  bad = WriteChainCsvFiles(*result, dir + "/bad", 6, 3);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("1 of 5 chains' CSV files"));
  EXPECT_THAT(bad.status().message(), HasSubstr("is a symbolic link"));
  EXPECT_EQ(FileText(dir + "/bad/output_4.csv"), texts[0][3]);  // the link's target, kept
}

// The chains' CSV paths are checked before a run (CheckChainCsvFiles), by
// the names the writer uses (ChainCsvPath): a directory or a pipe where a
// chain's file goes is the error, naming the path and the chain.
TEST(SampleTest, ChainCsvFilesAreCheckedBeforeARun) {
  const std::string dir = ::testing::TempDir() + "sample_test_csv_check";
  std::filesystem::remove_all(dir);
  EXPECT_EQ(ChainCsvPath(dir, 0), dir + "/output_1.csv");
  EXPECT_EQ(ChainCsvPath(dir, 9), dir + "/output_10.csv");
  ASSERT_TRUE(CheckChainCsvFiles(dir + "/new", 3).ok());
  EXPECT_TRUE(std::filesystem::is_directory(dir + "/new"));  // made, as the writer would
  EXPECT_TRUE(std::filesystem::is_empty(dir + "/new"));      // and nothing left in it

  std::filesystem::create_directories(dir + "/bad/output_2.csv");
  absl::Status s = CheckChainCsvFiles(dir + "/bad", 4);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("the CSV file of chain 1: '" + dir +
                                     "/bad/output_2.csv' is a directory; remove or rename it"));
  EXPECT_TRUE(CheckChainCsvFiles(dir + "/bad", 1).ok());  // chain 0's file only
  ASSERT_EQ(mkfifo(ChainCsvPath(dir + "/bad", 0).c_str(), 0600), 0);
  s = CheckChainCsvFiles(dir + "/bad", 1);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("output_1.csv' is not a regular file"));

  { std::ofstream(dir + "/a_file") << "x"; }
  s = CheckChainCsvFiles(dir + "/a_file/sub", 1);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("cannot create output directory '" + dir + "/a_file/sub'"));
}

TEST(SampleTest, StanCsvFilesReadBack) {
  std::unique_ptr<Target> model = Make("eight_schools");
  SampleOptions o = Small(2, 40, 30);
  absl::StatusOr<SampleResult> result = Sample(*model, o);
  ASSERT_TRUE(result.ok()) << result.status();
  const std::string dir = ::testing::TempDir() + "sample_test_csv";
  std::filesystem::remove_all(dir);
  for (const int sig_figs : {17, 6}) {
    absl::StatusOr<std::vector<std::string>> paths =
        WriteChainCsvFiles(*result, dir + "/sub", sig_figs);
    ASSERT_TRUE(paths.ok()) << paths.status();
    ASSERT_EQ(paths->size(), 2u);
    EXPECT_THAT((*paths)[1], HasSubstr("output_2.csv"));
    for (size_t k = 0; k < 2; ++k) {
      absl::StatusOr<StanCsv> csv = ReadStanCsv((*paths)[k]);
      ASSERT_TRUE(csv.ok()) << csv.status();
      EXPECT_EQ(csv->column_names, result->column_names);
      ASSERT_EQ(csv->draws.rows(), 30);
      ASSERT_EQ(csv->draws.cols(), result->draws[k].cols());
      ASSERT_TRUE(csv->adaptation.has_value());
      ASSERT_TRUE(csv->adaptation->step_size.has_value());
      ASSERT_EQ(csv->adaptation->inverse_metric_diagonal.size(), model->dimension());
      ASSERT_TRUE(csv->timing.has_value());
      EXPECT_NEAR(csv->timing->sampling_seconds, result->sampling_seconds,
                  1e-5 * result->sampling_seconds + 1e-12);
      if (sig_figs == 17) {
        EXPECT_EQ(csv->draws, result->draws[k]);
        EXPECT_EQ(*csv->adaptation->step_size, result->chains[k].step_size);
        for (int64_t i = 0; i < model->dimension(); ++i) {
          EXPECT_EQ(csv->adaptation->inverse_metric_diagonal(i), result->chains[k].inv_metric[i]);
        }
      } else {
        const Eigen::MatrixXd diff = (csv->draws - result->draws[k]).cwiseAbs();
        const Eigen::MatrixXd scale = result->draws[k].cwiseAbs().array() + 1e-300;
        EXPECT_LT((diff.array() / scale.array()).maxCoeff(), 1e-5);
      }
      bool has_seed = false, has_id = false;
      for (const std::string& line : csv->config) {
        has_seed |= line == "  seed = 7";
        has_id |= line == "id = " + std::to_string(k + 1);
      }
      EXPECT_TRUE(has_seed && has_id) << testing::PrintToString(csv->config);
    }
  }
  // The column gathered from the files gives the same diagnostics.
  std::vector<StanCsv> files;
  for (int k = 1; k <= 2; ++k) {
    files.push_back(*ReadStanCsv(dir + "/sub/output_" + std::to_string(k) + ".csv"));
  }
  // (the last write used 6 significant digits)
  absl::StatusOr<Eigen::MatrixXd> mu = ColumnAcrossChains(files, "mu");
  ASSERT_TRUE(mu.ok()) << mu.status();
  EXPECT_NEAR(Summarize(*mu).mean, result->summary[result->ColumnIndex("mu")].mean, 1e-4);
  // An output "directory" that is a file cannot be created.
  const std::string file = dir + "/a_file";
  { std::ofstream(file) << "x"; }
  absl::StatusOr<std::vector<std::string>> bad = WriteChainCsvFiles(*result, file + "/sub");
  EXPECT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("a_file"));
}

TEST(SampleTest, SummaryTextAndJson) {
  std::unique_ptr<Target> model = Make("iid_gaussian", {{"dimension", 3}});
  absl::StatusOr<SampleResult> result = Sample(*model, Small(4, 100, 100));
  ASSERT_TRUE(result.ok()) << result.status();
  const std::string text = FormatSummary(*result);
  for (const std::string_view column : kSummaryColumnNames) {
    EXPECT_THAT(text, HasSubstr(std::string(column)));
  }
  for (const char* line : {"lp__", "x.3", "Divergences:", "Max tree depth", "E-BFMI",
                           "Gradient evaluations:", "ESS_bulk(lp__)", "per second",
                           "Batch utilization"}) {
    EXPECT_THAT(text, HasSubstr(line));
  }
  const nlohmann::ordered_json j = SummaryJson(*result);
  ASSERT_EQ(j["columns"].size(), result->column_names.size());
  const json& x1 = j["columns"][kNumDrawStats];
  EXPECT_EQ(x1["name"], "x.1");
  for (const char* key : {"mean", "mcse", "stddev", "mad", "q5", "q50", "q95", "ess_bulk",
                          "ess_tail", "rhat"}) {
    ASSERT_TRUE(x1.contains(key)) << key;
    EXPECT_TRUE(x1[key].is_number()) << key;
  }
  EXPECT_EQ(j["columns"][5]["name"], "divergent__");
  EXPECT_EQ(j["columns"][5]["rhat"], "nan");
  EXPECT_EQ(j["gradient_evaluations"].get<int64_t>(), result->gradient_evaluations);
  EXPECT_EQ(j["leapfrogs_taken"]["sampling"].get<int64_t>(), result->sampling_leapfrogs_taken);
  EXPECT_EQ(j["chains"].size(), 4u);
  EXPECT_TRUE(j.contains("warmup_seconds"));
  EXPECT_TRUE(j.contains("sampling_seconds"));
  EXPECT_TRUE(j["ess_bulk_lp_per_second"].is_number());
}

// The summary JSON reads top down: the run, the per-column summary, the
// totals (divergences with their note), the per-chain details last.
TEST(SampleTest, SummaryJsonPutsColumnsFirstAndChainsLast) {
  std::unique_ptr<Target> model = Make("iid_gaussian", {{"dimension", 2}});
  absl::StatusOr<SampleResult> result = Sample(*model, Small(2, 50, 20));
  ASSERT_TRUE(result.ok()) << result.status();
  const nlohmann::ordered_json j = SummaryJson(*result);
  std::vector<std::string> keys;
  for (auto it = j.begin(); it != j.end(); ++it) keys.push_back(it.key());
  const auto at = [&](const std::string& key) {
    return std::find(keys.begin(), keys.end(), key) - keys.begin();
  };
  EXPECT_EQ(keys.front(), "model");
  EXPECT_EQ(keys.back(), "chains");
  EXPECT_LT(at("num_draws"), at("columns"));
  EXPECT_LT(at("columns"), at("divergences"));
  EXPECT_LT(at("divergences"), at("gradient_evaluations"));
  // Also as text: the file a user opens shows the columns before the chains.
  const std::string text = j.dump(2);
  EXPECT_LT(text.find("\"columns\""), text.find("\"chains\""));
  const nlohmann::ordered_json& d = j["divergences"];
  for (const char* key : {"sampling", "sampling_chains", "warmup", "warmup_chains"}) {
    EXPECT_TRUE(d[key].is_number_integer()) << key;
  }
  EXPECT_THAT(d["warmup_note"].get<std::string>(), HasSubstr("expected while the step size adapts"));
  EXPECT_EQ(j["chains"][1]["chain_id"], 1);
}

// Warmup divergences are reported apart from sampling's, per chain, with
// what they mean. A fixed step size far too large for the funnel diverges in
// both phases.
TEST(SampleTest, SummaryReportsWarmupDivergencesApartWithANote) {
  std::unique_ptr<Target> model = Make("funnel", {{"dimension", 3}});
  SampleOptions o = Small(3, 30, 30);
  o.adaptation.engaged = false;
  o.sampler.step_size = 20;
  absl::StatusOr<SampleResult> result = Sample(*model, o);
  ASSERT_TRUE(result.ok()) << result.status();
  int64_t warmup = 0, sampling = 0;
  for (const ChainSummary& c : result->chains) {
    warmup += c.warmup_divergences;
    sampling += c.sampling_divergences;
  }
  ASSERT_GT(warmup, 0);
  ASSERT_GT(sampling, 0);
  const std::string text = FormatSummary(*result);
  EXPECT_THAT(text, HasSubstr(absl::StrCat("Divergences: ", sampling, " during sampling (")));
  EXPECT_THAT(text, HasSubstr(absl::StrCat(warmup, " during warmup (")));
  EXPECT_THAT(text, HasSubstr("; ids 0: " + std::to_string(result->chains[0].warmup_divergences)));
  EXPECT_THAT(text, HasSubstr("expected while the step size adapts"));
  EXPECT_THAT(text, HasSubstr("the draws may be biased"));
  const nlohmann::ordered_json j = SummaryJson(*result);
  EXPECT_EQ(j["divergences"]["warmup"], warmup);
  EXPECT_EQ(j["divergences"]["sampling"], sampling);
}

// One Stan CSV file holds every chain, with chain__ first.
TEST(SampleTest, CombinedCsvHoldsEveryChainWithAChainColumn) {
  std::unique_ptr<Target> model = Make("eight_schools");
  absl::StatusOr<SampleResult> result = Sample(*model, Small(3, 40, 25));
  ASSERT_TRUE(result.ok()) << result.status();
  const std::string dir = ::testing::TempDir() + "/sample_test_combined";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/all.csv";
  ASSERT_TRUE(WriteCombinedCsvFile(*result, path, /*sig_figs=*/17).ok());
  absl::StatusOr<StanCsv> csv = ReadStanCsv(path);
  ASSERT_TRUE(csv.ok()) << csv.status();
  ASSERT_EQ(csv->column_names.size(), result->column_names.size() + 1);
  EXPECT_EQ(csv->column_names[0], "chain__");
  EXPECT_EQ(std::vector<std::string>(csv->column_names.begin() + 1, csv->column_names.end()),
            result->column_names);
  ASSERT_EQ(csv->draws.rows(), 3 * 25);
  for (int k = 0; k < 3; ++k) {
    EXPECT_TRUE((csv->draws.block(25 * k, 0, 25, 1).array() == k + 1).all()) << k;
    EXPECT_EQ(csv->draws.block(25 * k, 1, 25, csv->draws.cols() - 1), result->draws[k]) << k;
  }
  EXPECT_FALSE(csv->adaptation.has_value());
  ASSERT_TRUE(csv->timing.has_value());
  ASSERT_EQ(csv->notes.size(), 3u);
  EXPECT_THAT(csv->notes[2], HasSubstr("chain 3: step size = "));
  bool chains_line = false;
  for (const std::string& line : csv->config) {
    EXPECT_FALSE(absl::StartsWith(line, "id = ")) << line;
    chains_line |= absl::StartsWith(line, "chains = 3, all in this file");
  }
  EXPECT_TRUE(chains_line);
  // Replaced whole, never through a symbolic link.
  std::filesystem::create_symlink(path, dir + "/link.csv");
  const absl::Status linked = WriteCombinedCsvFile(*result, dir + "/link.csv");
  EXPECT_FALSE(linked.ok());
  EXPECT_THAT(linked.message(), HasSubstr("symbolic link"));
}

TEST(SampleTest, ProgressIsReportedInOrder) {
  std::unique_ptr<Target> model = Make("iid_gaussian", {{"dimension", 2}});
  SampleOptions o = Small(2, 30, 50);
  o.num_chunks = 5;
  o.progress_interval_seconds = 0;  // only between VM calls: a fixed count
  std::vector<SampleProgress> events;
  o.progress = [&](const SampleProgress& p) { events.push_back(p); };
  absl::StatusOr<SampleResult> result = Sample(*model, o);
  ASSERT_TRUE(result.ok()) << result.status();
  // The warmup call, 5 sampling chunks, done.
  ASSERT_EQ(events.size(), 1u + 5u + 1u);
  EXPECT_EQ(events[0].phase, SamplePhase::kWarmup);
  EXPECT_EQ(events[0].iteration, 30);
  EXPECT_EQ(events[1].phase, SamplePhase::kSampling);
  EXPECT_EQ(events[1].iteration, 10);
  EXPECT_EQ(events.back().phase, SamplePhase::kDone);
  for (size_t i = 1; i < events.size(); ++i) {
    EXPECT_GE(events[i].total_iteration, events[i - 1].total_iteration);
    EXPECT_GE(events[i].gradient_evaluations, events[i - 1].gradient_evaluations);
  }
  EXPECT_EQ(events.back().total_iteration, 80);
  EXPECT_EQ(events.back().gradient_evaluations, result->gradient_evaluations);
  EXPECT_THAT(ProgressPrinter::FormatLine(events[2]), HasSubstr("sampling"));
  // Plain mode prints a line when the run passes another tenth (here every
  // event: 30, 40, ..., 80 of 80 iterations) and at the end.
  std::FILE* sink = std::tmpfile();
  ASSERT_NE(sink, nullptr);
  ProgressPrinter printer(sink, /*terminal=*/false);
  for (const SampleProgress& p : events) printer.Report(p);
  std::rewind(sink);
  int lines = 0;
  for (int c = std::fgetc(sink); c != EOF; c = std::fgetc(sink)) lines += c == '\n';
  std::fclose(sink);
  EXPECT_EQ(lines, 7);
  // Terminal mode redraws one line with '\r' and ends it at kDone.
  sink = std::tmpfile();
  ASSERT_NE(sink, nullptr);
  ProgressPrinter bar(sink, /*terminal=*/true, /*min_redraw_seconds=*/0);
  for (const SampleProgress& p : events) bar.Report(p);
  std::rewind(sink);
  int returns = 0, newlines = 0;
  for (int c = std::fgetc(sink); c != EOF; c = std::fgetc(sink)) {
    returns += c == '\r';
    newlines += c == '\n';
  }
  std::fclose(sink);
  EXPECT_EQ(returns, static_cast<int>(events.size()));
  EXPECT_EQ(newlines, 1);
}

// While a VM call runs, a helper thread reports the draws recorded so far:
// events between the calls' boundaries, in order, within the phase.
TEST(SampleTest, ProgressIsReportedWhileAVmCallRuns) {
  std::unique_ptr<Target> model = Make("iid_gaussian", {{"dimension", 2}});
  SampleOptions o = Small(4, 300, 1200);
  o.progress_interval_seconds = 1e-4;
  std::vector<SampleProgress> events;
  o.progress = [&](const SampleProgress& p) { events.push_back(p); };
  absl::StatusOr<SampleResult> result = Sample(*model, o);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->vm_calls, 2);
  int64_t inside_a_call = 0;
  for (size_t i = 0; i < events.size(); ++i) {
    const SampleProgress& p = events[i];
    EXPECT_LE(p.iteration, p.phase_iterations);
    if (p.phase != SamplePhase::kDone && p.iteration < p.phase_iterations) ++inside_a_call;
    if (i > 0) {
      EXPECT_GE(p.total_iteration, events[i - 1].total_iteration);
    }
  }
  EXPECT_GT(inside_a_call, 0) << events.size() << " events";
  EXPECT_EQ(events.back().phase, SamplePhase::kDone);
  EXPECT_EQ(events.back().total_iteration, 1500);
}

// The counts of a report sent while a VM call runs are live: divergences,
// gradient evaluations and utilization move during the call, not only when
// it returns, and the ETA is an estimate from the pace so far.
TEST(SampleTest, ProgressCountsAreLiveDuringAVmCall) {
  std::unique_ptr<Target> model = Make("iid_gaussian", {{"dimension", 2}});
  SampleOptions o = Small(4, 0, 1500);
  // A fixed step size past the leapfrog's stability limit (2 for a unit
  // Gaussian): most transitions diverge.
  o.adaptation.engaged = false;
  o.sampler.step_size = 2.5;
  o.progress_interval_seconds = 1e-4;
  std::vector<SampleProgress> events;
  o.progress = [&](const SampleProgress& p) { events.push_back(p); };
  absl::StatusOr<SampleResult> result = Sample(*model, o);
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->vm_calls, 1);
  ASSERT_GT(result->total_divergences(), 0);
  int64_t live_divergences = 0, live_gradients = 0, with_eta = 0;
  for (size_t i = 0; i < events.size(); ++i) {
    const SampleProgress& p = events[i];
    if (i > 0) {
      EXPECT_GE(p.divergences, events[i - 1].divergences);
      EXPECT_GE(p.gradient_evaluations, events[i - 1].gradient_evaluations);
    }
    EXPECT_TRUE(std::isnan(p.utilization) || (p.utilization > 0 && p.utilization <= 1))
        << p.utilization;
    const bool inside = p.phase == SamplePhase::kSampling && p.iteration < p.phase_iterations;
    if (!inside) continue;
    live_divergences += p.divergences > 0 ? 1 : 0;
    live_gradients += p.gradient_evaluations > 0 ? 1 : 0;
    if (p.iteration > 0) {
      EXPECT_TRUE(std::isfinite(p.eta_seconds) && p.eta_seconds >= 0) << p.eta_seconds;
      ++with_eta;
      EXPECT_THAT(ProgressPrinter::FormatLine(p), HasSubstr("ETA"));
    }
  }
  EXPECT_GT(live_divergences, 0) << events.size() << " events";
  EXPECT_GT(live_gradients, 0);
  EXPECT_GT(with_eta, 0);
  const SampleProgress& done = events.back();
  EXPECT_EQ(done.phase, SamplePhase::kDone);
  EXPECT_EQ(done.divergences, result->total_divergences());
  EXPECT_EQ(done.gradient_evaluations, result->gradient_evaluations);
  EXPECT_EQ(done.compile_seconds, result->compile_seconds);
  EXPECT_GT(result->compile_seconds, 0);
}

// A plain progress log (not a terminal) gets a line per tenth of the run
// and, between tenths, one whenever max_plain_silence_seconds have passed.
TEST(SampleTest, PlainProgressLinesAreNeverFarApart) {
  std::FILE* sink = std::tmpfile();
  ASSERT_NE(sink, nullptr);
  ProgressPrinter printer(sink, /*terminal=*/false, /*min_redraw_seconds=*/0.1,
                          /*max_plain_silence_seconds=*/10);
  SampleProgress p;
  p.total_iterations = 1000;
  for (int second = 0; second <= 60; ++second) {
    p.elapsed_seconds = second;
    p.total_iteration = second;  // under a tenth (100 iterations) all along
    printer.Report(p);
  }
  std::rewind(sink);
  int lines = 0;
  for (int c = std::fgetc(sink); c != EOF; c = std::fgetc(sink)) lines += c == '\n';
  std::fclose(sink);
  EXPECT_EQ(lines, 7);  // at 0, 10, 20, ..., 60 s
}

// SampleOptions::cancel set at a chunk boundary (the progress report after
// the first of four sampling calls): Sample() stops there and returns that
// chunk's draws, the same as a run of that many draws, marked interrupted in
// the result, the summary, the JSON and each CSV file's closing note.
TEST(SampleTest, CancelAtAChunkBoundaryKeepsTheDrawsSoFar) {
  std::unique_ptr<Target> model = Make("iid_gaussian", {{"dimension", 2}});
  SampleOptions o = Small(3, 200, 400);
  o.num_chunks = 4;
  o.progress_interval_seconds = 0;  // reports only between calls
  std::atomic<bool> cancel{false};
  o.cancel = &cancel;
  o.progress = [&](const SampleProgress& p) {
    if (p.phase == SamplePhase::kSampling) cancel.store(true);
  };
  absl::StatusOr<SampleResult> result = Sample(*model, o);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE(result->interrupted);
  EXPECT_EQ(result->num_draws(), 100);
  EXPECT_EQ(result->vm_calls, 2);  // warmup and one sampling chunk

  absl::StatusOr<SampleResult> reference = Sample(*model, Small(3, 200, 100));
  ASSERT_TRUE(reference.ok()) << reference.status();
  EXPECT_FALSE(reference->interrupted);
  for (size_t k = 0; k < 3; ++k) {
    EXPECT_EQ(result->draws[k], reference->draws[k]) << "chain " << k;
  }
  EXPECT_THAT(FormatSummary(*result),
              HasSubstr("Sampling interrupted by SampleOptions::cancel after 100 of 400 draws"));
  EXPECT_EQ(SummaryJson(*result)["interrupted"], "SampleOptions::cancel");
  EXPECT_EQ(SummaryJson(*result)["num_draws"], 100);
  EXPECT_EQ(SummaryJson(*reference)["interrupted"], false);

  absl::StatusOr<std::string> text = FormatStanCsv(MakeChainCsv(*result, 1));
  ASSERT_TRUE(text.ok()) << text.status();
  absl::StatusOr<StanCsv> csv = ParseStanCsv(*text, "chain 1");
  ASSERT_TRUE(csv.ok()) << csv.status();
  EXPECT_EQ(csv->draws.rows(), 100);
  EXPECT_THAT(csv->notes, ::testing::ElementsAre(
                              "Sampling interrupted by SampleOptions::cancel after 100 of 400 "
                              "draws"));
  EXPECT_TRUE(csv->timing.has_value());
}

// Set while the one sampling call runs (from the progress ticker), the flag
// stops the VM within a few blocks: every chain keeps as many draws as the
// slowest had completed, and they are the first draws of an uninterrupted
// run.
TEST(SampleTest, CancelDuringAVmCallKeepsTheCompletedDraws) {
  std::unique_ptr<Target> model = Make("iid_gaussian", {{"dimension", 2}});
  // Far more draws than run before the first tick: the call is cut short.
  SampleOptions o = Small(4, 200, 200000);
  o.progress_interval_seconds = 1e-3;
  std::atomic<bool> cancel{false};
  o.cancel = &cancel;
  o.progress = [&](const SampleProgress& p) {
    if (p.phase == SamplePhase::kSampling && p.iteration > 0) cancel.store(true);
  };
  absl::StatusOr<SampleResult> result = Sample(*model, o);
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_TRUE(result->interrupted);
  const int64_t kept = result->num_draws();
  EXPECT_GT(kept, 0);
  EXPECT_LT(kept, 200000);
  EXPECT_EQ(result->vm_calls, 2);
  for (const Eigen::MatrixXd& draws : result->draws) EXPECT_EQ(draws.rows(), kept);

  absl::StatusOr<SampleResult> reference = Sample(*model, Small(4, 200, kept));
  ASSERT_TRUE(reference.ok()) << reference.status();
  for (size_t k = 0; k < 4; ++k) {
    EXPECT_EQ(result->draws[k], reference->draws[k]) << "chain " << k;
    EXPECT_EQ(result->chains[k].sampling_divergences,
              reference->chains[k].sampling_divergences);
  }
  EXPECT_TRUE(std::isfinite(result->summary[0].mean));  // lp__
}

// Interrupted before any draw (during the one adaptive warmup call, or
// before the run): Cancelled, saying that nothing was kept.
TEST(SampleTest, CancelDuringWarmupIsCancelled) {
  std::unique_ptr<Target> model = Make("iid_gaussian", {{"dimension", 2}});
  SampleOptions o = Small(4, 100000, 100);
  o.progress_interval_seconds = 1e-3;
  std::atomic<bool> cancel{false};
  o.cancel = &cancel;
  o.progress = [&](const SampleProgress& p) {
    if (p.phase == SamplePhase::kWarmup && p.iteration > 0) cancel.store(true);
  };
  absl::StatusOr<SampleResult> result = Sample(*model, o);
  ASSERT_EQ(result.status().code(), absl::StatusCode::kCancelled) << result.status();
  EXPECT_THAT(result.status().message(), HasSubstr("interrupted during warmup"));
  EXPECT_THAT(result.status().message(), HasSubstr("of 100000 iterations done"));

  o.progress = nullptr;
  cancel.store(true);
  result = Sample(*model, o);
  ASSERT_EQ(result.status().code(), absl::StatusCode::kCancelled) << result.status();
  EXPECT_THAT(result.status().message(), HasSubstr("(0 of 100000 iterations done)"));
}

// Sharded calls (CallOptions::shards) run the chains on two threads, the
// warmup adapter and the draw recorder called from both at once: the same
// adaptation and draws as one call.
TEST(SampleTest, ShardedRunsGiveTheSameChains) {
  std::unique_ptr<Target> model = Make("eight_schools");
  SampleOptions o = Small(5, 60, 20);
  o.adaptation.delta = 0.9;
  absl::StatusOr<SampleResult> one = Sample(*model, o);
  ASSERT_TRUE(one.ok()) << one.status();
  o.call.shards = 2;
  absl::StatusOr<SampleResult> two = Sample(*model, o);
  ASSERT_TRUE(two.ok()) << two.status();
  for (size_t id = 0; id < 5; ++id) {
    SCOPED_TRACE(id);
    EXPECT_TRUE(SameBits(one->chains[id].step_size, two->chains[id].step_size));
    EXPECT_EQ(one->chains[id].inv_metric, two->chains[id].inv_metric);
    EXPECT_EQ(one->chains[id].warmup_divergences, two->chains[id].warmup_divergences);
    const Eigen::MatrixXd& a = one->draws[id];
    const Eigen::MatrixXd& b = two->draws[id];
    ASSERT_EQ(a.size(), b.size());
    EXPECT_EQ(std::memcmp(a.data(), b.data(), sizeof(double) * a.size()), 0);
  }
  EXPECT_EQ(one->sampling_leapfrogs_taken, two->sampling_leapfrogs_taken);
  EXPECT_EQ(one->warmup_leapfrogs_taken, two->warmup_leapfrogs_taken);
  // The summary, computed on two threads, has the same bits (NaN included).
  ASSERT_EQ(one->summary.size(), two->summary.size());
  for (size_t c = 0; c < one->summary.size(); ++c) {
    EXPECT_EQ(std::memcmp(&one->summary[c], &two->summary[c], sizeof(SummaryRow)), 0)
        << one->column_names[c];
  }
}

TEST(SampleTest, FixedParametersRwmhAndStacklessVm) {
  std::unique_ptr<Target> model = Make("iid_gaussian", {{"dimension", 2}});
  // Adaptation off: warmup is burn-in in chunks; step size and metric kept.
  SampleOptions fixed = Small(2, 20, 20);
  fixed.adaptation.engaged = false;
  fixed.sampler.step_size = 0.7;
  fixed.num_chunks = 2;
  absl::StatusOr<SampleResult> stack = Sample(*model, fixed);
  ASSERT_TRUE(stack.ok()) << stack.status();
  EXPECT_EQ(stack->chains[1].step_size, 0.7);
  EXPECT_EQ(stack->vm_calls, 4);
  EXPECT_EQ(stack->draws[0](0, 2), 0.7);  // stepsize__
  fixed.call.vm = Vm::kStackless;
  absl::StatusOr<SampleResult> stackless = Sample(*model, fixed);
  ASSERT_TRUE(stackless.ok()) << stackless.status();
  EXPECT_EQ(stack->draws, stackless->draws);
  // RWMH: no adaptation; burn-in only.
  SampleOptions rwmh = Small(2, 20, 40);
  rwmh.algorithm = Algorithm::kRwmh;
  absl::StatusOr<SampleResult> r = Sample(*model, rwmh);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->draws[0].rows(), 40);
  // Loaded adaptation: used as the fixed parameters.
  const std::string path = ::testing::TempDir() + "sample_test_adapt.json";
  ASSERT_TRUE(SaveAdaptation(path, {0.25, {2.0, 3.0}}).ok());
  SampleOptions loaded = Small(1, 0, 10);
  loaded.adaptation.engaged = false;
  loaded.adaptation.load_path = path;
  absl::StatusOr<SampleResult> l = Sample(*model, loaded);
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->chains[0].step_size, 0.25);
  EXPECT_EQ(l->chains[0].inv_metric, (std::vector<double>{2.0, 3.0}));
}

TEST(SampleTest, DefaultShardsKeepBatchesSmallForBigModels) {
  // At least one shard per thread.
  EXPECT_EQ(DefaultShards(4, 10, 2), 2);
  EXPECT_EQ(DefaultShards(1, 2, 8), 8);
  // d = 10: 640 chains a shard; d = 100: 64; d >= 200: 32.
  EXPECT_EQ(DefaultShards(1024, 10, 2), 2);
  EXPECT_EQ(DefaultShards(1281, 10, 1), 3);
  EXPECT_EQ(DefaultShards(1024, 100, 2), 16);
  EXPECT_EQ(DefaultShards(1024, 1000, 2), 32);
  // Never more than 256; degenerate sizes give one shard per thread.
  EXPECT_EQ(DefaultShards(int64_t{1} << 24, 1000, 2), 256);
  EXPECT_EQ(DefaultShards(0, 0, 1), 1);
}

// Sample() refuses a run whose draws cannot fit in memory before any work
// (it used to die of std::bad_alloc part way), saying what to lower; the
// estimate cannot overflow, and small runs are far below the limit.
TEST(SampleTest, RunsTooBigForMemoryAreRefusedUpFront) {
  std::unique_ptr<Target> model = Make("iid_gaussian", {{"dimension", 1}});
  SampleOptions o = Small(1, 0, (int64_t{1} << 31) - 1);
  o.adaptation.engaged = false;
  // A fixed limit (the default follows the machine's memory).
  o.call.max_memory_bytes = int64_t{16} << 30;
  EXPECT_GT(SampleMemoryBytes(*model, o), static_cast<double>(SampleMemoryLimit(o)));
  absl::StatusOr<SampleResult> r = Sample(*model, o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(r.status().message(), HasSubstr("Sample: 1 chains x 2147483647 draws"));
  EXPECT_THAT(r.status().message(), HasSubstr("(max_memory_bytes = 17179869184, 16.0 GiB)"));
  EXPECT_THAT(r.status().message(), HasSubstr("lower num_samples (--samples) or num_chains"));
  EXPECT_EQ(CheckSampleMemory(*model, o).code(), absl::StatusCode::kResourceExhausted);

  // The most chains, warmup and samples at once: past any default limit.
  o = Small(int64_t{1} << 24, (int64_t{1} << 31) - 1, (int64_t{1} << 31) - 1);
  EXPECT_GT(SampleMemoryBytes(*model, o), 1e18);
  r = Sample(*model, o);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(r.status().message(), HasSubstr("3/4 of the smallest of physical memory"));

  // At least the draws kept: chains x samples x 8 columns (7 statistics, x).
  o = Small(4, 100, 100);
  EXPECT_GE(SampleMemoryBytes(*model, o), 4 * 100 * 8 * 8.0);
  EXPECT_LT(SampleMemoryBytes(*model, o), 1e6);
  EXPECT_TRUE(CheckSampleMemory(*model, o).ok());
}

// The limit is the caller's when given, and the pre-run check counts the
// sampler's program as well as the draws: with a million coordinates, the
// NUTS program's vectors and their first stack frames take far more than
// one draw of two chains, and the run stops before its first iteration.
TEST(SampleTest, ThePreRunCheckCountsTheSamplersProgram) {
  std::unique_ptr<Target> model = Make("iid_gaussian", {{"dimension", 1'000'000}});
  SampleOptions o = Small(2, 0, 1);
  o.adaptation.engaged = false;
  o.call.max_memory_bytes = int64_t{256} << 20;
  EXPECT_EQ(SampleMemoryLimit(o), int64_t{256} << 20);
  ASSERT_TRUE(CheckSampleMemory(*model, o).ok());  // the draws alone fit
  absl::StatusOr<SampleResult> r = Sample(*model, o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted) << r.status();
  EXPECT_THAT(r.status().message(),
              HasSubstr("as it starts: its variables and first stack frames for every chain"));
  EXPECT_THAT(r.status().message(), HasSubstr("(max_memory_bytes = 268435456, 256.0 MiB)"));
  o.call.max_memory_bytes = -1;
  EXPECT_EQ(Sample(*model, o).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(SampleTest, BadOptionsAreErrors) {
  std::unique_ptr<Target> model = Make("iid_gaussian", {{"dimension", 2}});
  SampleOptions o = Small(0, 10, 10);
  absl::StatusOr<SampleResult> r = Sample(*model, o);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("num_chains"));
  o = Small(1, 10, 0);
  EXPECT_THAT(Sample(*model, o).status().message(), HasSubstr("num_samples"));
  o = Small(1, 0, 10);  // adaptation on without warmup
  EXPECT_THAT(Sample(*model, o).status().message(), HasSubstr("num_warmup is 0"));
  o = Small(1, 10, 10);
  o.adaptation.delta = 1.5;
  EXPECT_THAT(Sample(*model, o).status().message(), HasSubstr("delta"));
  o = Small(1, 10, 10);
  o.sampler.max_depth = 0;
  EXPECT_THAT(Sample(*model, o).status().message(), HasSubstr("max_depth"));
  const std::string path = ::testing::TempDir() + "sample_test_adapt3.json";
  ASSERT_TRUE(SaveAdaptation(path, {0.25, {2.0, 3.0, 4.0}}).ok());
  o = Small(1, 10, 10);
  o.adaptation.load_path = path;
  EXPECT_THAT(Sample(*model, o).status().message(), HasSubstr("dimension"));
  o.adaptation.load_path = ::testing::TempDir() + "no_such_file.json";
  EXPECT_EQ(Sample(*model, o).status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace autobatch::mcmc
