// CmdStan's everyday options of Sample(): initial values (a radius or
// constrained values), thinning, saved warmup draws, per-chain seeds, and
// the default shard count.
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "support/communicator.h"
#include "mcmc/batched/batched_sampler.h"
#include "mcmc/model/program_model.h"
#include "mcmc/sample.h"
#include "backends/run_on_threads.h"
#include "tests/mcmc/eight_schools_program.h"
#include "tests/mcmc/batched_test_util.h"

namespace autobatch::mcmc {
namespace {

using ::testing::HasSubstr;

SampleOptions SmallRun() {
  SampleOptions options;
  options.num_chains = 3;
  options.num_warmup = 60;
  options.num_samples = 40;
  options.seed = 20261130;
  return options;
}

// Every cell of rows `rows` of a's chains (all columns) has b's bits at
// rows first_b, first_b + step, ...
void ExpectRows(const std::vector<Eigen::MatrixXd>& a, const std::vector<Eigen::MatrixXd>& b,
                int64_t step, const std::string& what) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t k = 0; k < a.size(); ++k) {
    ASSERT_EQ(a[k].cols(), b[k].cols());
    for (Eigen::Index n = 0; n < a[k].rows(); ++n) {
      ASSERT_LT(n * step, b[k].rows()) << what;
      for (Eigen::Index j = 0; j < a[k].cols(); ++j) {
        ASSERT_TRUE(SameBits(a[k](n, j), b[k](n * step, j)))
            << what << ": chain " << k << ", row " << n << ", column " << j;
      }
    }
  }
}

// Thinning keeps iterations 0, thin, 2 thin, ... of the unthinned run, bit
// for bit, generated quantities included; saved warmup draws are thinned the
// same way and change no sampling draw.
TEST(SampleOptionsTest, ThinAndSaveWarmupKeepTheUnthinnedRunsRows) {
  std::unique_ptr<ProgramModel> model = EightSchoolsProgram(/*generated_quantities=*/true);
  SampleOptions all = SmallRun();
  all.save_warmup = true;
  absl::StatusOr<SampleResult> full = Sample(*model, all);
  ASSERT_TRUE(full.ok()) << full.status();
  ASSERT_EQ(full->warmup_draws.size(), 3u);
  EXPECT_EQ(full->warmup_draws[0].rows(), 60);
  EXPECT_EQ(full->draws[0].rows(), 40);

  SampleOptions thinned = SmallRun();
  thinned.thin = 3;
  thinned.save_warmup = true;
  absl::StatusOr<SampleResult> every_third = Sample(*model, thinned);
  ASSERT_TRUE(every_third.ok()) << every_third.status();
  EXPECT_EQ(every_third->num_draws(), 14);  // ceil(40 / 3)
  EXPECT_EQ(every_third->warmup_draws[0].rows(), 20);
  ExpectRows(every_third->draws, full->draws, 3, "sampling");
  ExpectRows(every_third->warmup_draws, full->warmup_draws, 3, "warmup");
  // Every transition's divergences are counted, kept or not.
  EXPECT_EQ(every_third->total_divergences(), full->total_divergences());

  absl::StatusOr<SampleResult> plain = Sample(*model, SmallRun());
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_TRUE(plain->warmup_draws.empty());
  ExpectRows(plain->draws, full->draws, 1, "save_warmup changed a sampling draw");

  thinned.thin = 0;
  EXPECT_THAT(std::string(Sample(*model, thinned).status().message()),
              HasSubstr("thin = 0; it must be in [1, 2^31 - 1]"));

  // CmdStan's layout: warmup rows, the adaptation block, sampling rows.
  const StanCsv csv = MakeChainCsv(*every_third, 1);
  ASSERT_TRUE(csv.adaptation.has_value());
  EXPECT_EQ(csv.adaptation->draws_before, 20);
  EXPECT_EQ(csv.draws.rows(), 34);
  EXPECT_THAT(csv.config, ::testing::Contains("    thin = 3"));
  EXPECT_THAT(csv.config, ::testing::Contains("    save_warmup = 1"));
  absl::StatusOr<std::string> text = FormatStanCsv(csv, 17);
  ASSERT_TRUE(text.ok()) << text.status();
  absl::StatusOr<StanCsv> back = ParseStanCsv(*text, "thinned.csv");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->adaptation->draws_before, 20);
  EXPECT_TRUE(SameBits(back->draws(20, 0), every_third->draws[1](0, 0)));
}

// Chains started at constrained values run as chains started at their
// unconstrained image: the draws of RunBatchedChains from those points.
TEST(SampleOptionsTest, InitialValuesAreMappedThroughTheInverseTransforms) {
  std::unique_ptr<ProgramModel> model = EightSchoolsProgram();
  const std::string init_json =
      R"({"mu": 1.5, "tau": 2.0, "eta": [0.1, -0.2, 0.3, 0, 0, 0.5, -1, 1]})";
  absl::StatusOr<std::vector<double>> values = ReadInitValues(*model, init_json, "init.json");
  ASSERT_TRUE(values.ok()) << values.status();
  ASSERT_EQ(values->size(), 10u);
  EXPECT_EQ((*values)[1], 2.0);

  SampleOptions o = SmallRun();
  o.num_warmup = 0;
  o.adaptation.engaged = false;
  o.sampler.step_size = 0.3;
  o.init_values = {*values};
  absl::StatusOr<SampleResult> sampled = Sample(*model, o);
  ASSERT_TRUE(sampled.ok()) << sampled.status();

  std::vector<double> q(10);
  ASSERT_TRUE(Unconstrain(*model, *values, q).ok());
  EXPECT_DOUBLE_EQ(q[1], std::log(2.0));
  SamplerConfig config = o.sampler;
  config.inv_metric.assign(10, 1.0);
  const std::vector<uint64_t> ids = {0, 1, 2};
  BatchedRunOptions run_options;
  run_options.inits.assign(3, q);
  absl::StatusOr<BatchedRunResult> direct =
      RunBatchedChains(*model, config, o.seed, ids, o.num_samples, run_options);
  ASSERT_TRUE(direct.ok()) << direct.status();
  for (size_t k = 0; k < 3; ++k) {
    for (int64_t n = 0; n < o.num_samples; ++n) {
      ASSERT_TRUE(SameBits(sampled->draws[k](n, 0), direct->chains[k].stats[n].lp))
          << "chain " << k << ", draw " << n;
    }
  }

  // One point per chain works too; the wrong count, size or support does not.
  o.init_values = {*values, *values, *values};
  EXPECT_TRUE(Sample(*model, o).ok());
  o.init_values = {*values, *values};
  EXPECT_THAT(std::string(Sample(*model, o).status().message()),
              HasSubstr("one point for every chain or one per chain (3)"));
  o.init_values = {std::vector<double>(9, 0.0)};
  EXPECT_THAT(std::string(Sample(*model, o).status().message()),
              HasSubstr("has 10 constrained values"));
  std::vector<double> negative_tau = *values;
  negative_tau[1] = -1;
  o.init_values = {negative_tau};
  const absl::Status outside = Sample(*model, o).status();
  EXPECT_EQ(outside.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(outside.message()), HasSubstr("chain 0: initial values:"));
  EXPECT_THAT(std::string(outside.message()), HasSubstr("tau"));
  // A missing parameter in the file names it.
  absl::StatusOr<std::vector<double>> missing =
      ReadInitValues(*model, R"({"mu": 1, "tau": 2})", "init.json");
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(std::string(missing.status().message()), HasSubstr("init.json"));
  EXPECT_THAT(std::string(missing.status().message()), HasSubstr("eta"));
}

// init_radius is CmdStan's init=R: 0 starts every chain at the origin.
TEST(SampleOptionsTest, TheInitRadiusIsUsed) {
  std::unique_ptr<ProgramModel> model = EightSchoolsProgram();
  SampleOptions o = SmallRun();
  o.num_warmup = 0;
  o.num_samples = 5;
  o.adaptation.engaged = false;
  o.init_radius = 0;
  absl::StatusOr<SampleResult> at_origin = Sample(*model, o);
  ASSERT_TRUE(at_origin.ok()) << at_origin.status();
  SamplerConfig config = o.sampler;
  config.inv_metric.assign(10, 1.0);
  std::vector<ChainStart> starts = {{0, o.seed, {}}, {1, o.seed, {}}, {2, o.seed, {}}};
  absl::StatusOr<std::vector<BatchedChain>> chains =
      MakeBatchedChains(*model, config, starts, InitOptions{.radius = 0});
  ASSERT_TRUE(chains.ok()) << chains.status();
  EXPECT_EQ((*chains)[2].state.q, std::vector<double>(10, 0.0));
  o.init_radius = 0.5;
  absl::StatusOr<SampleResult> near = Sample(*model, o);
  ASSERT_TRUE(near.ok()) << near.status();
  EXPECT_FALSE(SameBits(near->draws[0](0, 0), at_origin->draws[0](0, 0)));
  for (const double bad : {-1.0, std::nan("")}) {
    o.init_radius = bad;
    EXPECT_THAT(std::string(Sample(*model, o).status().message()), HasSubstr("init_radius"));
  }
}

// Chain k with chain_seeds[k] = s is chain k of a run whose common seed is s.
TEST(SampleOptionsTest, PerChainSeedsGiveEachChainItsStream) {
  std::unique_ptr<ProgramModel> model = EightSchoolsProgram();
  SampleOptions o = SmallRun();
  o.num_chains = 2;
  o.chain_seeds = {11, 12};
  absl::StatusOr<SampleResult> mixed = Sample(*model, o);
  ASSERT_TRUE(mixed.ok()) << mixed.status();
  o.chain_seeds.clear();
  for (const uint64_t seed : {11, 12}) {
    o.seed = seed;
    absl::StatusOr<SampleResult> common = Sample(*model, o);
    ASSERT_TRUE(common.ok()) << common.status();
    const size_t k = seed - 11;
    ExpectRows({mixed->draws[k]}, {common->draws[k]}, 1, absl::StrCat("seed ", seed));
    EXPECT_THAT(MakeChainCsv(*mixed, k).config,
                ::testing::Contains(absl::StrCat("  seed = ", seed)));
  }
  o.chain_seeds = {1, 2, 3};
  EXPECT_THAT(std::string(Sample(*model, o).status().message()),
              HasSubstr("give one per chain (2)"));
}

// SampleOptions shard like the CLI's --shards auto unless told otherwise.
TEST(SampleOptionsTest, ShardsDefaultToTheCommandLinesChoice) {
  EXPECT_EQ(SampleOptions{}.call.shards, kAutoShards);
  std::unique_ptr<ProgramModel> model = EightSchoolsProgram();
  SampleOptions o = SmallRun();
  o.num_chains = 100;
  o.num_warmup = 10;
  o.num_samples = 10;
  o.adaptation.window = 1;
  o.adaptation.init_buffer = 3;
  o.adaptation.term_buffer = 3;
  absl::StatusOr<SampleResult> result = Sample(*model, o);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->options.call.shards,
            DefaultShards(100, model->dimension(), HardwareThreads()));
  o.call.shards = -1;
  EXPECT_THAT(std::string(Sample(*model, o).status().message()), HasSubstr("call.shards"));
}

// A run over processes splits chains (SampleOptions::communicator); a
// communicator in the VM calls' options is a mistake, named.
TEST(SampleOptionsTest, TheCallsOwnCommunicatorIsRefused) {
  std::unique_ptr<ProgramModel> model = EightSchoolsProgram();
  SampleOptions o = SmallRun();
  o.call.communicator = &SingleProcess();
  EXPECT_THAT(std::string(Sample(*model, o).status().message()),
              HasSubstr("call.communicator = set; a run over processes splits its chains"));
}

}  // namespace
}  // namespace autobatch::mcmc
