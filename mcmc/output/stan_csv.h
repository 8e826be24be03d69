// Reading and writing CmdStan's CSV output files ("Stan CSV").
//
// Layout of a CmdStan sampling output file, which both directions follow:
//
//   # stan_version_major = 2          config: the comment lines before the
//   # ...                             header
//   lp__,accept_stat__,theta.1,...    header: column names
//   ...                               saved warmup draws (save_warmup only)
//   # Adaptation terminated           adaptation block (absent without
//   # Step size = 0.883328            adaptation); a dense_e metric is
//   # Diagonal elements of inverse mass matrix:
//   # 0.512256, 1.02                  "# Elements of inverse mass matrix:"
//   -6.80778,0.991604,0.208532,...    then one "# a, b, ..." line per row
//   ...                               draws
//   #
//   #  Elapsed Time: 0.003 seconds (Warm-up)
//   #                0.009 seconds (Sampling)
//   #                0.012 seconds (Total)
//   #
//
// Vector and matrix parameters are flattened CmdStan style, one column per
// element, first index fastest: `theta.1`, `theta.2`, `sigma.1.1`,
// `sigma.2.1`, ... (see ParameterColumnNames()). Numbers are written with
// "%.<sig_figs>g" ("nan", "inf", "-inf" for non-finite values), so the
// default of 6 significant digits reproduces CmdStan's default output byte
// for byte, and 17 round-trips every double exactly.
//
// Errors are user errors (bad files, inconsistent structs) and come back as
// absl::Status; nothing here crashes on bad input.
#ifndef AUTOBATCH_MCMC_OUTPUT_STAN_CSV_H_
#define AUTOBATCH_MCMC_OUTPUT_STAN_CSV_H_

#include <Eigen/Core>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace autobatch::mcmc {

// The adaptation block CmdStan writes after warmup.
struct StanAdaptation {
  // Draw rows that precede the block in the file: the saved warmup draws
  // (0 unless the run used save_warmup).
  Eigen::Index draws_before = 0;
  // "# Step size = X"; absent if the block has no such line.
  std::optional<double> step_size;
  // diag_e metric ("# Diagonal elements of inverse mass matrix:"); empty if
  // the file has none.
  Eigen::VectorXd inverse_metric_diagonal;
  // dense_e metric ("# Elements of inverse mass matrix:"), square; empty
  // (0 x 0) if the file has none. At most one of the two metrics is set.
  Eigen::MatrixXd inverse_metric_dense;
};

// The elapsed-time block at the end of the file.
struct StanTiming {
  double warmup_seconds = 0.0;
  double sampling_seconds = 0.0;
  double total_seconds = 0.0;
};

// The contents of one Stan CSV file.
struct StanCsv {
  // Comment lines before the header, without the leading "# " (or "#"), in
  // order; e.g. "  sample", "seed = 86520". Written back as "# " + line.
  std::vector<std::string> config;
  // Column names from the header, e.g. "lp__", "theta.1".
  std::vector<std::string> column_names;
  // One row per draw, one column per name (rows include saved warmup).
  Eigen::MatrixXd draws;
  std::optional<StanAdaptation> adaptation;
  std::optional<StanTiming> timing;
  // Comment lines after the elapsed-time block, without the leading "# ",
  // e.g. "Sampling interrupted by SIGINT after 12 of 1000 draws" (a run that
  // ended early; CmdStan readers skip comments). Read back only after a
  // timing block.
  std::vector<std::string> notes;
};

// CmdStan's default `sig_figs` (its -1 setting means the stream default, 6).
inline constexpr int kStanCsvDefaultSigFigs = 6;
// Largest `sig_figs` CmdStan accepts; 17 already round-trips any double.
inline constexpr int kStanCsvMaxSigFigs = 18;

// Parses Stan CSV text. `source_name` (usually the file path) prefixes every
// error message as "<source_name>:<line>: ...", lines counted from 1.
//
// Accepts "\n" or "\r\n" line ends and ignores blank lines and comment lines
// after the header that are not part of the adaptation or timing blocks.
// Errors (InvalidArgument):
//   - no header line (empty file, or comments only);
//   - an empty or duplicated column name;
//   - a draw row with a different number of cells than the header (names
//     the line and both counts);
//   - a cell that is not a number (names line, 1-based column and its name);
//     "nan", "inf" and "-inf" are numbers;
//   - a malformed adaptation or timing block (names the line).
absl::StatusOr<StanCsv> ParseStanCsv(std::string_view text,
                                     std::string_view source_name);

// Reads and parses the file at `path`. NotFound if it cannot be opened;
// otherwise as ParseStanCsv() with the path as source name.
absl::StatusOr<StanCsv> ReadStanCsv(const std::string& path);

// Renders `csv` in CmdStan's layout (see top) with `sig_figs` significant
// digits for draws, step size, metric and timing. Parsing the result gives
// back `csv` exactly when sig_figs >= 17, and CmdStan's own bytes for a file
// CmdStan wrote with its defaults when sig_figs == 6.
// InvalidArgument if sig_figs is outside [1, kStanCsvMaxSigFigs], the draws'
// column count differs from the number of names, a column name is empty or
// contains ',', '#', whitespace or a line break, a config line or note
// contains a line break, or the adaptation block is inconsistent (draws_before outside
// [0, rows], both metrics set, a non-square dense metric).
absl::StatusOr<std::string> FormatStanCsv(
    const StanCsv& csv, int sig_figs = kStanCsvDefaultSigFigs);

// FormatStanCsv() written to `path` by WriteFileAtomically
// (support/output_file.h): replaced whole or left untouched; a symbolic link
// is refused. Errors as FormatStanCsv(), or WriteFileAtomically's (the
// errno's code and reason, with the path).
absl::Status WriteStanCsv(const std::string& path, const StanCsv& csv,
                          int sig_figs = kStanCsvDefaultSigFigs);

// CmdStan's column names for a parameter of the given dimensions, first
// index fastest: ("mu", {}) -> {"mu"}; ("theta", {3}) -> {"theta.1",
// "theta.2", "theta.3"}; ("sigma", {2, 2}) -> {"sigma.1.1", "sigma.2.1",
// "sigma.1.2", "sigma.2.2"}. A zero dimension gives no columns.
std::vector<std::string> ParameterColumnNames(std::string_view name,
                                              const std::vector<int>& dims);

// Index of the column called `name`, if any.
std::optional<Eigen::Index> FindColumn(const StanCsv& csv,
                                       std::string_view name);

// Gathers column `name` from one file per chain into the N draws x M chains
// matrix that the diagnostics take. Takes every row, so saved warmup draws
// (adaptation->draws_before of them) are included. InvalidArgument if
// `chains` is empty, a file lacks the column (names the chain index) or the
// files have different numbers of draws.
absl::StatusOr<Eigen::MatrixXd> ColumnAcrossChains(
    const std::vector<StanCsv>& chains, std::string_view name);

}  // namespace autobatch::mcmc

#endif  // AUTOBATCH_MCMC_OUTPUT_STAN_CSV_H_
