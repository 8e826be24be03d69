// Tests for mcmc/output/stan_csv: reading CmdStan's files, writing the same
// layout back, exact round trips and every error path.
#include "mcmc/output/stan_csv.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <Eigen/Core>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"

namespace autobatch::mcmc {
namespace {

using ::testing::HasSubstr;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

std::string BernPath(int i) {
  return std::string(AUTOBATCH_SOURCE_DIR "/tests/mcmc/data/bern") +
         std::to_string(i) + ".csv";
}

std::string FileContents(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream contents;
  contents << in.rdbuf();
  return contents.str();
}

// Bitwise equality, NaN == NaN (the writer does not keep NaN payloads).
void ExpectSameValues(const Eigen::MatrixXd& actual,
                      const Eigen::MatrixXd& expected) {
  ASSERT_EQ(actual.rows(), expected.rows());
  ASSERT_EQ(actual.cols(), expected.cols());
  for (Eigen::Index i = 0; i < actual.size(); ++i) {
    const double a = actual.data()[i];
    const double e = expected.data()[i];
    if (std::isnan(e)) {
      EXPECT_TRUE(std::isnan(a)) << "entry " << i;
    } else {
      EXPECT_EQ(a, e) << "entry " << i;
      EXPECT_EQ(std::signbit(a), std::signbit(e)) << "entry " << i;
    }
  }
}

absl::Status ParseError(const std::string& text) {
  absl::StatusOr<StanCsv> csv = ParseStanCsv(text, "f.csv");
  EXPECT_FALSE(csv.ok()) << "parsed:\n" << text;
  return csv.ok() ? absl::OkStatus() : csv.status();
}

// ---------------------------------------------------------------------------
// Reading CmdStan's own output.

TEST(ReadStanCsvTest, ReadsCmdStanOutput) {
  absl::StatusOr<StanCsv> csv = ReadStanCsv(BernPath(1));
  ASSERT_TRUE(csv.ok()) << csv.status();
  EXPECT_THAT(csv->column_names,
              ::testing::ElementsAre("lp__", "accept_stat__", "stepsize__",
                                     "treedepth__", "n_leapfrog__",
                                     "divergent__", "energy__", "theta"));
  ASSERT_EQ(csv->draws.rows(), 1000);
  ASSERT_EQ(csv->draws.cols(), 8);
  Eigen::RowVectorXd first(8);
  first << -6.80778, 0.991604, 0.883328, 2, 3, 0, 6.81551, 0.208532;
  EXPECT_EQ(csv->draws.row(0), first);
  Eigen::RowVectorXd last(8);
  last << -6.75167, 0.944383, 0.883328, 2, 3, 0, 7.80575, 0.239427;
  EXPECT_EQ(csv->draws.row(999), last);

  // 56 comment lines: 47 config, 4 adaptation, 5 timing.
  ASSERT_EQ(csv->config.size(), 47u);
  EXPECT_EQ(csv->config.front(), "stan_version_major = 2");
  EXPECT_EQ(csv->config[7], "    num_samples = 1000 (Default)");
  EXPECT_EQ(csv->config.back(), "stancflags = ");  // Trailing blank kept.

  ASSERT_TRUE(csv->adaptation.has_value());
  EXPECT_EQ(csv->adaptation->draws_before, 0);
  EXPECT_EQ(csv->adaptation->step_size, 0.883328);
  EXPECT_EQ(csv->adaptation->inverse_metric_diagonal,
            Eigen::VectorXd::Constant(1, 0.512256));
  EXPECT_EQ(csv->adaptation->inverse_metric_dense.size(), 0);

  ASSERT_TRUE(csv->timing.has_value());
  EXPECT_EQ(csv->timing->warmup_seconds, 0.003);
  EXPECT_EQ(csv->timing->sampling_seconds, 0.009);
  EXPECT_EQ(csv->timing->total_seconds, 0.012);
}

TEST(ReadStanCsvTest, ColumnAcrossChainsGathersOneColumnPerChain) {
  std::vector<StanCsv> chains;
  for (int i = 1; i <= 4; ++i) {
    absl::StatusOr<StanCsv> csv = ReadStanCsv(BernPath(i));
    ASSERT_TRUE(csv.ok()) << csv.status();
    chains.push_back(*std::move(csv));
  }
  EXPECT_EQ(FindColumn(chains[0], "theta"), 7);
  EXPECT_EQ(FindColumn(chains[0], "nope"), std::nullopt);
  absl::StatusOr<Eigen::MatrixXd> theta = ColumnAcrossChains(chains, "theta");
  ASSERT_TRUE(theta.ok()) << theta.status();
  ASSERT_EQ(theta->rows(), 1000);
  ASSERT_EQ(theta->cols(), 4);
  for (int m = 0; m < 4; ++m) EXPECT_EQ(theta->col(m), chains[m].draws.col(7));

  EXPECT_THAT(ColumnAcrossChains(chains, "mu").status().message(),
              HasSubstr("chain 0 has no column 'mu'"));
  EXPECT_THAT(ColumnAcrossChains({}, "theta").status().message(),
              HasSubstr("no chains"));
  chains[2].draws.conservativeResize(999, Eigen::NoChange);
  EXPECT_THAT(ColumnAcrossChains(chains, "theta").status().message(),
              HasSubstr("chain 2 has 999 draws but chain 0 has 1000"));
}

TEST(ReadStanCsvTest, AcceptsCrlfBlankLinesAndNonFiniteCells) {
  absl::StatusOr<StanCsv> csv = ParseStanCsv(
      "# model = m\r\n\r\nlp__,theta.1,theta.2\r\n1,nan,inf\r\n\r\n"
      "-2, -inf ,+3.5e-1\r\n# some other remark\r\n",
      "crlf.csv");
  ASSERT_TRUE(csv.ok()) << csv.status();
  EXPECT_THAT(csv->config, ::testing::ElementsAre("model = m"));
  EXPECT_THAT(csv->column_names,
              ::testing::ElementsAre("lp__", "theta.1", "theta.2"));
  ASSERT_EQ(csv->draws.rows(), 2);
  EXPECT_TRUE(std::isnan(csv->draws(0, 1)));
  EXPECT_EQ(csv->draws(0, 2), kInf);
  EXPECT_EQ(csv->draws(1, 1), -kInf);
  EXPECT_EQ(csv->draws(1, 2), 0.35);
  EXPECT_FALSE(csv->adaptation.has_value());
  EXPECT_FALSE(csv->timing.has_value());
}

TEST(ReadStanCsvTest, HeaderWithoutDraws) {
  absl::StatusOr<StanCsv> csv = ParseStanCsv("lp__,x\n", "empty.csv");
  ASSERT_TRUE(csv.ok()) << csv.status();
  EXPECT_EQ(csv->draws.rows(), 0);
  EXPECT_EQ(csv->draws.cols(), 2);
}

TEST(ReadStanCsvTest, SavedWarmupAndDenseMetric) {
  absl::StatusOr<StanCsv> csv = ParseStanCsv(
      "a,b\n1,2\n3,4\n"
      "# Adaptation terminated\n# Step size = 0.5\n"
      "# Elements of inverse mass matrix:\n# 2, 0.5\n# 0.5, 1\n"
      "5,6\n",
      "dense.csv");
  ASSERT_TRUE(csv.ok()) << csv.status();
  EXPECT_EQ(csv->draws.rows(), 3);
  ASSERT_TRUE(csv->adaptation.has_value());
  EXPECT_EQ(csv->adaptation->draws_before, 2);
  EXPECT_EQ(csv->adaptation->step_size, 0.5);
  EXPECT_EQ(csv->adaptation->inverse_metric_diagonal.size(), 0);
  Eigen::Matrix2d expected;
  expected << 2, 0.5, 0.5, 1;
  EXPECT_EQ(csv->adaptation->inverse_metric_dense, expected);
}

// ---------------------------------------------------------------------------
// Reader errors: every one names the file and line.

TEST(ReadStanCsvErrorTest, MissingFile) {
  absl::StatusOr<StanCsv> csv = ReadStanCsv("/nonexistent/dir/out.csv");
  EXPECT_EQ(csv.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(csv.status().message(), HasSubstr("'/nonexistent/dir/out.csv'"));
}

TEST(ReadStanCsvErrorTest, DirectoryInsteadOfFile) {
  absl::StatusOr<StanCsv> csv = ReadStanCsv(AUTOBATCH_SOURCE_DIR);
  EXPECT_FALSE(csv.ok());
  EXPECT_THAT(csv.status().message(), HasSubstr(AUTOBATCH_SOURCE_DIR));
}

TEST(ReadStanCsvErrorTest, RaggedRow) {
  const absl::Status status = ParseError("# c\na,b,c\n1,2,3\n4,5\n");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(),
            "f.csv:4: row has 2 values but the header names 3 columns");
  EXPECT_EQ(ParseError("a,b\n1,2,3\n").message(),
            "f.csv:2: row has 3 values but the header names 2 columns");
}

TEST(ReadStanCsvErrorTest, NonNumericCell) {
  EXPECT_EQ(ParseError("a,b,c\n1,2,3\n4,x5,6\n").message(),
            "f.csv:3: column 2 ('b'): cannot parse 'x5' as a number");
  EXPECT_EQ(ParseError("a,b\n1,\n").message(),
            "f.csv:2: column 2 ('b'): cannot parse '' as a number");
  EXPECT_EQ(ParseError("a\n0x10\n").message(),
            "f.csv:2: column 1 ('a'): cannot parse '0x10' as a number");
  EXPECT_EQ(ParseError("a\n1e999\n").message(),
            "f.csv:2: column 1 ('a'): '1e999' is outside the range of a "
            "double");
}

TEST(ReadStanCsvErrorTest, NoHeader) {
  for (const std::string text : {"", "# only\n# comments\n", "\n\n"}) {
    const absl::Status status = ParseError(text);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(status.message(), HasSubstr("f.csv: no header line"));
  }
}

TEST(ReadStanCsvErrorTest, BadHeader) {
  EXPECT_EQ(ParseError("# c\na,,b\n").message(),
            "f.csv:2: empty column name in the header (column 2)");
  EXPECT_EQ(ParseError("a,b,a\n").message(),
            "f.csv:1: duplicate column name 'a' in the header");
}

TEST(ReadStanCsvErrorTest, BadAdaptationBlock) {
  EXPECT_EQ(ParseError("a\n# Step size = fast\n").message(),
            "f.csv:2: step size: cannot parse ' fast' as a number");
  EXPECT_THAT(
      ParseError("a\n# Diagonal elements of inverse mass matrix:\n1\n")
          .message(),
      HasSubstr("f.csv:3: expected the inverse metric as a '# a, b, ...' "
                "comment line"));
  EXPECT_EQ(
      ParseError("a\n# Diagonal elements of inverse mass matrix:\n# 1, z\n")
          .message(),
      "f.csv:3: inverse metric: cannot parse ' z' as a number");
  EXPECT_EQ(ParseError("a\n# Elements of inverse mass matrix:\n# 1, 2\n# 3\n")
                .message(),
            "f.csv:4: inverse metric row has 1 values, expected 2");
  EXPECT_THAT(
      ParseError("a\n# Elements of inverse mass matrix:\n# 1, 2\n").message(),
      HasSubstr("f.csv:3: the file ends inside the inverse metric"));
  EXPECT_EQ(ParseError("a\n# Diagonal elements of inverse mass matrix:\n# 1\n"
                       "# Diagonal elements of inverse mass matrix:\n# 1\n")
                .message(),
            "f.csv:4: a second inverse metric in the adaptation block");
}

TEST(ReadStanCsvErrorTest, BadTiming) {
  EXPECT_EQ(
      ParseError("a\n#  Elapsed Time: soon seconds (Warm-up)\n").message(),
      "f.csv:2: elapsed time: cannot parse ' soon ' as a number");
}

TEST(ReadStanCsvErrorTest, DamagedFilesGiveErrorsNotCrashes) {
  // Truncations and byte flips of a real file (run under ASan in CI): every
  // outcome is a parse or an error that names the source.
  const std::string original = FileContents(BernPath(3));
  ASSERT_FALSE(original.empty());
  std::mt19937_64 rng(99);
  std::uniform_int_distribution<std::size_t> position(0, original.size() - 1);
  const char replacements[] = {',', '\n', '#', 'x', '\r', ' ', '-', 'e', '\0'};
  std::uniform_int_distribution<std::size_t> replacement(
      0, std::size(replacements) - 1);
  int errors = 0;
  for (int trial = 0; trial < 400; ++trial) {
    std::string damaged = original.substr(0, position(rng));
    if (trial % 2 == 1) {
      damaged = original;
      for (int flips = 0; flips < 3; ++flips) {
        damaged[position(rng)] = replacements[replacement(rng)];
      }
    }
    absl::StatusOr<StanCsv> csv = ParseStanCsv(damaged, "damaged.csv");
    if (!csv.ok()) {
      ++errors;
      EXPECT_THAT(csv.status().message(), HasSubstr("damaged.csv:"));
    } else {
      EXPECT_EQ(csv->draws.cols(),
                static_cast<Eigen::Index>(csv->column_names.size()));
    }
  }
  EXPECT_GT(errors, 100);  // The damage is real.
}

// ---------------------------------------------------------------------------
// Writing.

TEST(FormatStanCsvTest, ReproducesCmdStanFilesByteForByte) {
  for (int i = 1; i <= 4; ++i) {
    absl::StatusOr<StanCsv> csv = ReadStanCsv(BernPath(i));
    ASSERT_TRUE(csv.ok()) << csv.status();
    absl::StatusOr<std::string> text = FormatStanCsv(*csv);
    ASSERT_TRUE(text.ok()) << text.status();
    EXPECT_EQ(*text, FileContents(BernPath(i))) << BernPath(i);
  }
}

TEST(FormatStanCsvTest, LayoutWithDefaultSixDigits) {
  StanCsv csv;
  csv.config = {"model = demo", "  seed = 42", ""};
  csv.column_names = {"lp__", "theta.1", "theta.2"};
  csv.draws.resize(2, 3);
  csv.draws << -1.234567890, 1e-7, kNaN,  //
      2.0, -kInf, 123456789.0;
  csv.adaptation.emplace();
  csv.adaptation->step_size = 0.123456789;
  csv.adaptation->inverse_metric_diagonal = Eigen::Vector2d(1.5, 2.0 / 3.0);
  csv.timing = StanTiming{
      .warmup_seconds = 0.25, .sampling_seconds = 1.5, .total_seconds = 1.75};
  absl::StatusOr<std::string> text = FormatStanCsv(csv);
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(*text,
            "# model = demo\n"
            "#   seed = 42\n"
            "# \n"
            "lp__,theta.1,theta.2\n"
            "# Adaptation terminated\n"
            "# Step size = 0.123457\n"
            "# Diagonal elements of inverse mass matrix:\n"
            "# 1.5, 0.666667\n"
            "-1.23457,1e-07,nan\n"
            "2,-inf,1.23457e+08\n"
            "# \n"
            "#  Elapsed Time: 0.25 seconds (Warm-up)\n"
            "#                1.5 seconds (Sampling)\n"
            "#                1.75 seconds (Total)\n"
            "# \n");
}

TEST(FormatStanCsvTest, RoundTripsExactlyAtSeventeenDigits) {
  std::mt19937_64 rng(2024);
  std::uniform_real_distribution<double> mantissa(-1.0, 1.0);
  std::uniform_int_distribution<int> exponent(-300, 300);
  StanCsv csv;
  csv.config = {"method = sample", "  seed = 7"};
  csv.column_names = {"lp__", "accept_stat__", "x.1", "x.2"};
  csv.draws.resize(60, 4);
  for (Eigen::Index i = 0; i < csv.draws.size(); ++i) {
    csv.draws.data()[i] = std::ldexp(mantissa(rng), exponent(rng));
  }
  csv.draws(0, 0) = kNaN;
  csv.draws(1, 0) = kInf;
  csv.draws(2, 0) = -kInf;
  csv.draws(3, 0) = -0.0;
  csv.draws(4, 0) = std::numeric_limits<double>::denorm_min();
  csv.draws(5, 0) = std::numeric_limits<double>::max();
  csv.draws(6, 0) = std::numeric_limits<double>::lowest();
  csv.draws(7, 0) = 0.1;
  csv.adaptation.emplace();
  csv.adaptation->draws_before = 10;  // Saved warmup.
  csv.adaptation->step_size = 0.1 + 0.2;
  csv.adaptation->inverse_metric_dense.resize(2, 2);
  csv.adaptation->inverse_metric_dense << 1.0 / 3.0, 1e-300, 1e-300, 2.0 / 7.0;
  csv.timing = StanTiming{.warmup_seconds = 1.0 / 3.0,
                          .sampling_seconds = 2.0 / 3.0,
                          .total_seconds = 1.0};

  absl::StatusOr<std::string> text = FormatStanCsv(csv, /*sig_figs=*/17);
  ASSERT_TRUE(text.ok()) << text.status();
  absl::StatusOr<StanCsv> back = ParseStanCsv(*text, "round_trip.csv");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->config, csv.config);
  EXPECT_EQ(back->column_names, csv.column_names);
  ExpectSameValues(back->draws, csv.draws);
  ASSERT_TRUE(back->adaptation.has_value());
  EXPECT_EQ(back->adaptation->draws_before, 10);
  EXPECT_EQ(back->adaptation->step_size, 0.1 + 0.2);
  EXPECT_EQ(back->adaptation->inverse_metric_dense,
            csv.adaptation->inverse_metric_dense);
  ASSERT_TRUE(back->timing.has_value());
  EXPECT_EQ(back->timing->warmup_seconds, 1.0 / 3.0);
  EXPECT_EQ(back->timing->sampling_seconds, 2.0 / 3.0);
  EXPECT_EQ(back->timing->total_seconds, 1.0);
  // And formatting what was read gives the same text again.
  EXPECT_EQ(FormatStanCsv(*back, 17).value(), *text);
}

TEST(FormatStanCsvTest, SixDigitsRoundTripToSixDigits) {
  std::mt19937_64 rng(77);
  std::normal_distribution<double> normal;
  StanCsv csv;
  csv.column_names = {"lp__", "mu"};
  csv.draws.resize(200, 2);
  for (Eigen::Index i = 0; i < csv.draws.size(); ++i) {
    csv.draws.data()[i] = 1e3 * normal(rng);
  }
  absl::StatusOr<StanCsv> back =
      ParseStanCsv(FormatStanCsv(csv).value(), "six.csv");
  ASSERT_TRUE(back.ok()) << back.status();
  for (Eigen::Index i = 0; i < csv.draws.size(); ++i) {
    const double x = csv.draws.data()[i];
    EXPECT_NEAR(back->draws.data()[i], x, 5e-6 * std::abs(x));
  }
  // The loss is real: six digits do not round-trip in general.
  EXPECT_NE(back->draws, csv.draws);
}

TEST(WriteStanCsvTest, WritesAFileThatReadsBack) {
  absl::StatusOr<StanCsv> csv = ReadStanCsv(BernPath(2));
  ASSERT_TRUE(csv.ok()) << csv.status();
  const std::string path = ::testing::TempDir() + "/stan_csv_test_out.csv";
  ASSERT_TRUE(WriteStanCsv(path, *csv, /*sig_figs=*/17).ok());
  absl::StatusOr<StanCsv> back = ReadStanCsv(path);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->draws, csv->draws);
  EXPECT_EQ(back->config, csv->config);
  std::remove(path.c_str());
}

TEST(ParameterColumnNamesTest, FlattensFirstIndexFastest) {
  using ::testing::ElementsAre;
  EXPECT_THAT(ParameterColumnNames("mu", {}), ElementsAre("mu"));
  EXPECT_THAT(ParameterColumnNames("theta", {3}),
              ElementsAre("theta.1", "theta.2", "theta.3"));
  EXPECT_THAT(ParameterColumnNames("sigma", {2, 3}),
              ElementsAre("sigma.1.1", "sigma.2.1", "sigma.1.2", "sigma.2.2",
                          "sigma.1.3", "sigma.2.3"));
  EXPECT_EQ(ParameterColumnNames("a", {2, 2, 2})[5], "a.2.1.2");
  EXPECT_TRUE(ParameterColumnNames("empty", {4, 0}).empty());
}

// ---------------------------------------------------------------------------
// Writer errors.

StanCsv SmallCsv() {
  StanCsv csv;
  csv.column_names = {"lp__", "x"};
  csv.draws = Eigen::MatrixXd::Zero(3, 2);
  return csv;
}

TEST(FormatStanCsvErrorTest, SigFigsOutOfRange) {
  for (int sig_figs : {0, -1, 19}) {
    const absl::Status status = FormatStanCsv(SmallCsv(), sig_figs).status();
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(status.message(), HasSubstr("sig_figs must be in [1, 18]"));
  }
  EXPECT_TRUE(FormatStanCsv(SmallCsv(), 18).ok());
}

TEST(FormatStanCsvErrorTest, ColumnsAndNames) {
  StanCsv csv = SmallCsv();
  csv.column_names.push_back("y");
  EXPECT_THAT(FormatStanCsv(csv).status().message(),
              HasSubstr("the draws have 2 columns but there are 3 column "
                        "names"));
  for (const std::string bad : {"", "a,b", "a b", "#x", "a\nb"}) {
    csv = SmallCsv();
    csv.column_names[1] = bad;
    EXPECT_THAT(FormatStanCsv(csv).status().message(),
                HasSubstr("column name '" + bad + "'"));
  }
}

// Notes (an interrupted run's "Sampling interrupted ..." line) follow the
// timing block as comments, and read back from there; a comment elsewhere
// after the header is not a note.
TEST(FormatStanCsvTest, NotesFollowTheTimingBlockAndReadBack) {
  StanCsv csv = SmallCsv();
  csv.timing = StanTiming{.warmup_seconds = 1, .sampling_seconds = 2, .total_seconds = 3};
  csv.notes = {"Sampling interrupted by SIGINT after 1 of 1000 draws"};
  absl::StatusOr<std::string> text = FormatStanCsv(csv);
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_TRUE(absl::EndsWith(*text,
                             "#                3 seconds (Total)\n"
                             "# \n"
                             "# Sampling interrupted by SIGINT after 1 of 1000 draws\n"))
      << *text;
  absl::StatusOr<StanCsv> back = ParseStanCsv(*text, "notes");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->notes, csv.notes);
  EXPECT_EQ(back->draws, csv.draws);

  // CmdStan's own files have none.
  absl::StatusOr<StanCsv> bern = ReadStanCsv(BernPath(1));
  ASSERT_TRUE(bern.ok()) << bern.status();
  EXPECT_TRUE(bern->notes.empty());

  csv.notes = {"two\nlines"};
  EXPECT_THAT(FormatStanCsv(csv).status().message(), HasSubstr("note contains a line break"));
}

TEST(FormatStanCsvErrorTest, ConfigWithLineBreak) {
  StanCsv csv = SmallCsv();
  csv.config = {"ok", "two\nlines"};
  EXPECT_THAT(FormatStanCsv(csv).status().message(),
              HasSubstr("config line contains a line break"));
}

TEST(FormatStanCsvErrorTest, InconsistentAdaptation) {
  StanCsv csv = SmallCsv();
  csv.adaptation.emplace();
  csv.adaptation->draws_before = 4;
  EXPECT_THAT(FormatStanCsv(csv).status().message(),
              HasSubstr("draws_before is 4, outside [0, 3]"));
  csv.adaptation->draws_before = 3;
  EXPECT_TRUE(FormatStanCsv(csv).ok());
  csv.adaptation->inverse_metric_diagonal = Eigen::VectorXd::Ones(1);
  csv.adaptation->inverse_metric_dense = Eigen::MatrixXd::Ones(1, 1);
  EXPECT_THAT(FormatStanCsv(csv).status().message(),
              HasSubstr("both a diagonal and a dense inverse metric"));
  csv.adaptation->inverse_metric_diagonal.resize(0);
  csv.adaptation->inverse_metric_dense = Eigen::MatrixXd::Ones(1, 2);
  EXPECT_THAT(FormatStanCsv(csv).status().message(),
              HasSubstr("1 x 2, not square"));
}

TEST(WriteStanCsvErrorTest, UnwritablePath) {
  const absl::Status status =
      WriteStanCsv("/nonexistent/dir/out.csv", SmallCsv());
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("'/nonexistent/dir/out.csv'"));
  // Invalid content is reported before touching the file system.
  EXPECT_THAT(WriteStanCsv("/nonexistent/dir/out.csv", SmallCsv(), 0).message(),
              HasSubstr("sig_figs"));
}

}  // namespace
}  // namespace autobatch::mcmc
