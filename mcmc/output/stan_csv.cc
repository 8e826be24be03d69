// Reading and writing CmdStan's CSV output files.
#include "mcmc/output/stan_csv.h"

#include <Eigen/Core>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <unordered_set>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "support/output_file.h"

namespace autobatch::mcmc {
namespace {

constexpr std::string_view kAdaptationTerminated = "Adaptation terminated";
constexpr std::string_view kStepSize = "Step size =";
constexpr std::string_view kDiagonalMetric =
    "Diagonal elements of inverse mass matrix:";
constexpr std::string_view kDenseMetric = "Elements of inverse mass matrix:";
constexpr std::string_view kElapsedTime = "Elapsed Time:";
constexpr std::string_view kWarmupSeconds = "seconds (Warm-up)";
constexpr std::string_view kSamplingSeconds = "seconds (Sampling)";
constexpr std::string_view kTotalSeconds = "seconds (Total)";

// absl::StrCat and friends take absl::string_view, which is not
// std::string_view in Debian's Abseil.
absl::string_view Absl(std::string_view s) {
  return absl::string_view(s.data(), s.size());
}

std::string_view Trim(std::string_view s) {
  constexpr std::string_view kBlank = " \t";
  const std::size_t begin = s.find_first_not_of(kBlank);
  if (begin == std::string_view::npos) return {};
  return s.substr(begin, s.find_last_not_of(kBlank) - begin + 1);
}

std::vector<std::string_view> SplitCommas(std::string_view line) {
  std::vector<std::string_view> cells;
  while (true) {
    const std::size_t comma = line.find(',');
    cells.push_back(line.substr(0, comma));
    if (comma == std::string_view::npos) return cells;
    line.remove_prefix(comma + 1);
  }
}

// Parses one number as CmdStan writes it (also "nan", "inf", "-inf" and a
// leading '+'), ignoring surrounding blanks. Returns an error text if not.
absl::StatusOr<double> ParseNumber(std::string_view cell) {
  std::string_view text = Trim(cell);
  if (text.size() > 1 && text[0] == '+' && text[1] != '-') {
    text.remove_prefix(1);
  }
  double value = 0.0;
  const auto [end, error] =
      std::from_chars(text.data(), text.data() + text.size(), value);
  if (error == std::errc::result_out_of_range) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", Absl(cell), "' is outside the range of a double"));
  }
  if (error != std::errc() || end != text.data() + text.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot parse '", Absl(cell), "' as a number"));
  }
  return value;
}

// Parses "# a, b, c" metric rows (the text after '#').
absl::StatusOr<std::vector<double>> ParseNumberList(std::string_view text) {
  std::vector<double> values;
  for (std::string_view cell : SplitCommas(text)) {
    absl::StatusOr<double> value = ParseNumber(cell);
    if (!value.ok()) return value.status();
    values.push_back(*value);
  }
  return values;
}

// Incremental parser: one call per line, state carried between lines.
class Parser {
 public:
  explicit Parser(std::string_view source_name) : source_(source_name) {}

  absl::Status Line(int line_number, std::string_view line) {
    line_number_ = line_number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (expected_metric_rows_ > 0) return MetricRow(line);
    if (Trim(line).empty()) return absl::OkStatus();
    if (line[0] == '#') {
      std::string_view body = line.substr(1);
      if (!body.empty() && body[0] == ' ') body.remove_prefix(1);
      if (!have_header_) {
        csv_.config.emplace_back(body);
        return absl::OkStatus();
      }
      return CommentAfterHeader(Trim(body));
    }
    if (!have_header_) return Header(line);
    return DrawRow(line);
  }

  absl::StatusOr<StanCsv> Finish() && {
    if (expected_metric_rows_ > 0) {
      return Error(absl::StrCat("the file ends inside the inverse metric; ",
                                expected_metric_rows_,
                                " more row(s) expected"));
    }
    if (!have_header_) {
      return absl::InvalidArgumentError(absl::StrCat(
          Absl(source_),
          ": no header line (a line of column names after the '#' comments); "
          "is this a Stan CSV file?"));
    }
    const auto columns = static_cast<Eigen::Index>(csv_.column_names.size());
    csv_.draws =
        Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic,
                                       Eigen::RowMajor>>(values_.data(), rows_,
                                                         columns);
    return std::move(csv_);
  }

 private:
  absl::Status Error(std::string_view message) const {
    return absl::InvalidArgumentError(
        absl::StrCat(Absl(source_), ":", line_number_, ": ", Absl(message)));
  }

  absl::Status Header(std::string_view line) {
    have_header_ = true;
    std::unordered_set<std::string_view> seen;
    for (std::string_view name : SplitCommas(line)) {
      if (name.empty()) {
        return Error(absl::StrCat("empty column name in the header (column ",
                                  csv_.column_names.size() + 1, ")"));
      }
      if (!seen.insert(name).second) {
        return Error(absl::StrCat("duplicate column name '", Absl(name),
                                  "' in the header"));
      }
      csv_.column_names.emplace_back(name);
    }
    return absl::OkStatus();
  }

  absl::Status DrawRow(std::string_view line) {
    const std::vector<std::string_view> cells = SplitCommas(line);
    if (cells.size() != csv_.column_names.size()) {
      return Error(absl::StrCat("row has ", cells.size(),
                                " values but the header names ",
                                csv_.column_names.size(), " columns"));
    }
    for (std::size_t c = 0; c < cells.size(); ++c) {
      absl::StatusOr<double> value = ParseNumber(cells[c]);
      if (!value.ok()) {
        return Error(absl::StrCat("column ", c + 1, " ('", csv_.column_names[c],
                                  "'): ", value.status().message()));
      }
      values_.push_back(*value);
    }
    ++rows_;
    return absl::OkStatus();
  }

  StanAdaptation& Adaptation() {
    if (!csv_.adaptation.has_value()) {
      csv_.adaptation.emplace();
      csv_.adaptation->draws_before = rows_;
    }
    return *csv_.adaptation;
  }

  absl::Status CommentAfterHeader(std::string_view text) {
    if (text == kAdaptationTerminated) {
      Adaptation();
      return absl::OkStatus();
    }
    if (text.starts_with(kStepSize)) {
      absl::StatusOr<double> step = ParseNumber(text.substr(kStepSize.size()));
      if (!step.ok()) {
        return Error(absl::StrCat("step size: ", step.status().message()));
      }
      Adaptation().step_size = *step;
      return absl::OkStatus();
    }
    if (text == kDiagonalMetric || text == kDenseMetric) {
      if (Adaptation().inverse_metric_diagonal.size() > 0 ||
          Adaptation().inverse_metric_dense.size() > 0) {
        return Error("a second inverse metric in the adaptation block");
      }
      dense_metric_ = text == kDenseMetric;
      expected_metric_rows_ = 1;  // The first row tells the dimension.
      metric_values_.clear();
      return absl::OkStatus();
    }
    for (std::string_view label :
         {kWarmupSeconds, kSamplingSeconds, kTotalSeconds}) {
      if (text.ends_with(label)) return TimingLine(text, label);
    }
    // Notes follow the timing block (StanCsv::notes); any other comment is
    // nothing we keep.
    if (csv_.timing.has_value() && !text.empty()) csv_.notes.emplace_back(text);
    return absl::OkStatus();
  }

  absl::Status MetricRow(std::string_view line) {
    if (line.empty() || line[0] != '#') {
      return Error(absl::StrCat(
          "expected the inverse metric as a '# a, b, ...' comment line after ",
          Absl(dense_metric_ ? kDenseMetric : kDiagonalMetric)));
    }
    absl::StatusOr<std::vector<double>> row = ParseNumberList(line.substr(1));
    if (!row.ok()) {
      return Error(absl::StrCat("inverse metric: ", row.status().message()));
    }
    const bool first_row = metric_values_.empty();
    const std::size_t dimension = first_row ? row->size() : metric_dimension_;
    if (row->size() != dimension) {
      return Error(absl::StrCat("inverse metric row has ", row->size(),
                                " values, expected ", dimension));
    }
    metric_dimension_ = dimension;
    metric_values_.insert(metric_values_.end(), row->begin(), row->end());
    const auto size = static_cast<Eigen::Index>(dimension);
    if (!dense_metric_) {
      Adaptation().inverse_metric_diagonal =
          Eigen::Map<const Eigen::VectorXd>(metric_values_.data(), size);
      expected_metric_rows_ = 0;
      return absl::OkStatus();
    }
    expected_metric_rows_ =
        first_row ? dimension - 1 : expected_metric_rows_ - 1;
    if (expected_metric_rows_ == 0) {
      Adaptation().inverse_metric_dense =
          Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic,
                                         Eigen::RowMajor>>(
              metric_values_.data(), size, size);
    }
    return absl::OkStatus();
  }

  // "[Elapsed Time:] <seconds> <label>".
  absl::Status TimingLine(std::string_view text, std::string_view label) {
    if (text.starts_with(kElapsedTime)) text.remove_prefix(kElapsedTime.size());
    text.remove_suffix(label.size());
    absl::StatusOr<double> seconds = ParseNumber(text);
    if (!seconds.ok()) {
      return Error(absl::StrCat("elapsed time: ", seconds.status().message()));
    }
    StanTiming& timing =
        csv_.timing.has_value() ? *csv_.timing : csv_.timing.emplace();
    if (label == kWarmupSeconds) {
      timing.warmup_seconds = *seconds;
    } else if (label == kSamplingSeconds) {
      timing.sampling_seconds = *seconds;
    } else {
      timing.total_seconds = *seconds;
    }
    return absl::OkStatus();
  }

  std::string_view source_;
  int line_number_ = 0;
  StanCsv csv_;
  bool have_header_ = false;
  std::vector<double> values_;  // Draws, row-major.
  Eigen::Index rows_ = 0;
  // Inside a metric block: rows still expected, and those read so far.
  bool dense_metric_ = false;
  std::size_t expected_metric_rows_ = 0;
  std::size_t metric_dimension_ = 0;
  std::vector<double> metric_values_;
};

// Appends x with `sig_figs` significant digits exactly as printf's "%.*g"
// (and so C++ streams, hence CmdStan) would, but "nan" for every NaN.
void AppendNumber(std::string& out, double x, int sig_figs) {
  if (std::isnan(x)) {
    out += "nan";
    return;
  }
  char buffer[64];
  const std::to_chars_result result = std::to_chars(
      buffer, buffer + sizeof(buffer), x, std::chars_format::general, sig_figs);
  out.append(buffer, result.ptr);
}

template <typename Values>
void AppendList(std::string& out, const Values& values, std::string_view sep,
                int sig_figs) {
  for (Eigen::Index i = 0; i < values.size(); ++i) {
    if (i > 0) out += sep;
    AppendNumber(out, values(i), sig_figs);
  }
}

absl::Status Validate(const StanCsv& csv, int sig_figs) {
  if (sig_figs < 1 || sig_figs > kStanCsvMaxSigFigs) {
    return absl::InvalidArgumentError(
        absl::StrFormat("FormatStanCsv: sig_figs must be in [1, %d], got %d",
                        kStanCsvMaxSigFigs, sig_figs));
  }
  if (csv.draws.cols() != static_cast<Eigen::Index>(csv.column_names.size())) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "FormatStanCsv: the draws have %d columns but there are %d column "
        "names",
        csv.draws.cols(), csv.column_names.size()));
  }
  for (const std::string& name : csv.column_names) {
    if (name.empty() || name[0] == '#' ||
        name.find_first_of(", \t\r\n") != std::string::npos) {
      return absl::InvalidArgumentError(absl::StrCat(
          "FormatStanCsv: column name '", name,
          "' is empty, starts with '#' or contains a comma or whitespace; "
          "use names like theta.1"));
    }
  }
  for (const std::string& line : csv.config) {
    if (line.find_first_of("\r\n") != std::string::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("FormatStanCsv: config line contains a line break: '",
                       line, "'; pass one entry per line"));
    }
  }
  for (const std::string& note : csv.notes) {
    if (note.find_first_of("\r\n") != std::string::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("FormatStanCsv: note contains a line break: '", note,
                       "'; pass one entry per line"));
    }
  }
  if (csv.adaptation.has_value()) {
    const StanAdaptation& adaptation = *csv.adaptation;
    if (adaptation.draws_before < 0 ||
        adaptation.draws_before > csv.draws.rows()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "FormatStanCsv: adaptation.draws_before is %d, outside [0, %d] "
          "(the number of draws)",
          adaptation.draws_before, csv.draws.rows()));
    }
    if (adaptation.inverse_metric_diagonal.size() > 0 &&
        adaptation.inverse_metric_dense.size() > 0) {
      return absl::InvalidArgumentError(
          "FormatStanCsv: the adaptation has both a diagonal and a dense "
          "inverse metric; keep one");
    }
    if (adaptation.inverse_metric_dense.rows() !=
        adaptation.inverse_metric_dense.cols()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "FormatStanCsv: the dense inverse metric is %d x %d, not square",
          adaptation.inverse_metric_dense.rows(),
          adaptation.inverse_metric_dense.cols()));
    }
  }
  return absl::OkStatus();
}

void AppendAdaptation(std::string& out, const StanAdaptation& adaptation,
                      int sig_figs) {
  out += "# ";
  out += kAdaptationTerminated;
  out += '\n';
  if (adaptation.step_size.has_value()) {
    out += "# ";
    out += kStepSize;
    out += ' ';
    AppendNumber(out, *adaptation.step_size, sig_figs);
    out += '\n';
  }
  if (adaptation.inverse_metric_diagonal.size() > 0) {
    out += "# ";
    out += kDiagonalMetric;
    out += "\n# ";
    AppendList(out, adaptation.inverse_metric_diagonal, ", ", sig_figs);
    out += '\n';
  }
  if (adaptation.inverse_metric_dense.size() > 0) {
    out += "# ";
    out += kDenseMetric;
    out += '\n';
    for (Eigen::Index r = 0; r < adaptation.inverse_metric_dense.rows(); ++r) {
      out += "# ";
      AppendList(out, adaptation.inverse_metric_dense.row(r), ", ", sig_figs);
      out += '\n';
    }
  }
}

void AppendTiming(std::string& out, const StanTiming& timing, int sig_figs) {
  // CmdStan aligns the three figures under each other.
  constexpr std::string_view kFirstPrefix = "#  Elapsed Time: ";
  const std::string other_prefix =
      "#" + std::string(kFirstPrefix.size() - 1, ' ');
  const std::pair<double, std::string_view> lines[] = {
      {timing.warmup_seconds, kWarmupSeconds},
      {timing.sampling_seconds, kSamplingSeconds},
      {timing.total_seconds, kTotalSeconds}};
  out += "# \n";
  for (std::size_t i = 0; i < std::size(lines); ++i) {
    out += i == 0 ? std::string(kFirstPrefix) : other_prefix;
    AppendNumber(out, lines[i].first, sig_figs);
    out += ' ';
    out += lines[i].second;
    out += '\n';
  }
  out += "# \n";
}

}  // namespace

absl::StatusOr<StanCsv> ParseStanCsv(std::string_view text,
                                     std::string_view source_name) {
  Parser parser(source_name);
  int line_number = 0;
  while (!text.empty()) {
    const std::size_t newline = text.find('\n');
    const std::string_view line = text.substr(0, newline);
    text.remove_prefix(newline == std::string_view::npos ? text.size()
                                                         : newline + 1);
    absl::Status status = parser.Line(++line_number, line);
    if (!status.ok()) return status;
  }
  return std::move(parser).Finish();
}

absl::StatusOr<StanCsv> ReadStanCsv(const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) {
    return absl::ErrnoToStatus(
        errno, absl::StrCat("cannot open Stan CSV file '", path, "'"));
  }
  std::string text;
  char buffer[1 << 16];
  std::size_t read;
  while ((read = std::fread(buffer, 1, sizeof(buffer), file)) > 0) {
    text.append(buffer, read);
  }
  const int read_errno = std::ferror(file) ? errno : 0;
  std::fclose(file);
  if (read_errno != 0) {
    return absl::ErrnoToStatus(
        read_errno, absl::StrCat("cannot read Stan CSV file '", path, "'"));
  }
  return ParseStanCsv(text, path);
}

absl::StatusOr<std::string> FormatStanCsv(const StanCsv& csv, int sig_figs) {
  absl::Status valid = Validate(csv, sig_figs);
  if (!valid.ok()) return valid;
  std::string out;
  for (const std::string& line : csv.config) {
    out += "# ";
    out += line;
    out += '\n';
  }
  for (std::size_t c = 0; c < csv.column_names.size(); ++c) {
    if (c > 0) out += ',';
    out += csv.column_names[c];
  }
  out += '\n';
  for (Eigen::Index r = 0; r <= csv.draws.rows(); ++r) {
    if (csv.adaptation.has_value() && csv.adaptation->draws_before == r) {
      AppendAdaptation(out, *csv.adaptation, sig_figs);
    }
    if (r == csv.draws.rows()) break;
    AppendList(out, csv.draws.row(r), ",", sig_figs);
    out += '\n';
  }
  if (csv.timing.has_value()) AppendTiming(out, *csv.timing, sig_figs);
  for (const std::string& note : csv.notes) {
    out += "# ";
    out += note;
    out += '\n';
  }
  return out;
}

absl::Status WriteStanCsv(const std::string& path, const StanCsv& csv,
                          int sig_figs) {
  absl::StatusOr<std::string> text = FormatStanCsv(csv, sig_figs);
  if (!text.ok()) return text.status();
  // Whole or not at all: a full disk must not leave a file cut mid-row.
  return WriteFileAtomically(path, *text, "Stan CSV file");
}

std::vector<std::string> ParameterColumnNames(std::string_view name,
                                              const std::vector<int>& dims) {
  std::size_t count = 1;
  for (int dim : dims) count *= dim > 0 ? static_cast<std::size_t>(dim) : 0;
  std::vector<std::string> names;
  names.reserve(count);
  std::vector<int> index(dims.size(), 1);  // 1-based, first index fastest.
  for (std::size_t k = 0; k < count; ++k) {
    std::string column(name);
    for (int i : index) absl::StrAppend(&column, ".", i);
    names.push_back(std::move(column));
    for (std::size_t d = 0; d < index.size() && ++index[d] > dims[d]; ++d) {
      index[d] = 1;
    }
  }
  return names;
}

std::optional<Eigen::Index> FindColumn(const StanCsv& csv,
                                       std::string_view name) {
  for (std::size_t c = 0; c < csv.column_names.size(); ++c) {
    if (csv.column_names[c] == name) return static_cast<Eigen::Index>(c);
  }
  return std::nullopt;
}

absl::StatusOr<Eigen::MatrixXd> ColumnAcrossChains(
    const std::vector<StanCsv>& chains, std::string_view name) {
  if (chains.empty()) {
    return absl::InvalidArgumentError(
        "ColumnAcrossChains: no chains given; pass one StanCsv per chain");
  }
  const Eigen::Index draws = chains[0].draws.rows();
  Eigen::MatrixXd gathered(draws, static_cast<Eigen::Index>(chains.size()));
  for (std::size_t m = 0; m < chains.size(); ++m) {
    const std::optional<Eigen::Index> column = FindColumn(chains[m], name);
    if (!column.has_value()) {
      return absl::InvalidArgumentError(
          absl::StrCat("ColumnAcrossChains: chain ", m, " has no column '",
                       Absl(name), "'"));
    }
    if (chains[m].draws.rows() != draws) {
      return absl::InvalidArgumentError(
          absl::StrCat("ColumnAcrossChains: chain ", m, " has ",
                       chains[m].draws.rows(), " draws but chain 0 has ", draws,
                       "; diagnostics need equal-length "
                       "chains"));
    }
    gathered.col(static_cast<Eigen::Index>(m)) = chains[m].draws.col(*column);
  }
  return gathered;
}

}  // namespace autobatch::mcmc
