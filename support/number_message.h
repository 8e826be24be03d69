// Messages of numbers between processes (support/communicator.h): a run's
// figures, chains and progress travel as the bytes of doubles (integers
// below 2^53 exactly), written straight into the message and read back.
#ifndef AUTOBATCH_SUPPORT_NUMBER_MESSAGE_H_
#define AUTOBATCH_SUPPORT_NUMBER_MESSAGE_H_

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "support/status.h"

namespace autobatch {

class NumberWriter {
 public:
  void Add(double v) { Add(std::span<const double>(&v, 1)); }
  void Add(int64_t v) { Add(static_cast<double>(v)); }
  void Add(std::span<const double> v) {
    bytes_.append(reinterpret_cast<const char*>(v.data()), v.size_bytes());
  }
  const std::string& Bytes() const { return bytes_; }

 private:
  std::string bytes_;
};

// Reads what a NumberWriter wrote, in order. `what` names the message in
// the error a short one gives ("a rank's chains").
class NumberReader {
 public:
  NumberReader(std::string_view bytes, std::string_view what) : bytes_(bytes), what_(what) {}
  absl::StatusOr<double> Next() {
    double v = 0;
    AB_RETURN_IF_ERROR(Fill(&v, 1));
    return v;
  }
  absl::StatusOr<int64_t> NextInt() {
    AB_ASSIGN_OR_RETURN(const double v, Next());
    return static_cast<int64_t>(v);
  }
  absl::Status Fill(double* out, size_t n) {
    if ((bytes_.size() - at_) / sizeof(double) < n) {
      return absl::InternalError(absl::StrCat(
          "a message of ", bytes_.size(), " bytes holds fewer numbers than ", std::string(what_), " need"));
    }
    if (n > 0) std::memcpy(out, bytes_.data() + at_, n * sizeof(double));
    at_ += n * sizeof(double);
    return absl::OkStatus();
  }

 private:
  std::string_view bytes_;
  std::string_view what_;
  size_t at_ = 0;
};

}  // namespace autobatch

#endif  // AUTOBATCH_SUPPORT_NUMBER_MESSAGE_H_
