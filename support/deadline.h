// Deadline: a wall-clock deadline that work is charged against, so that a
// long computation (a VM's run, a compiler pass) reads the clock cheaply.
#ifndef AUTOBATCH_SUPPORT_DEADLINE_H_
#define AUTOBATCH_SUPPORT_DEADLINE_H_

#include <chrono>
#include <cstdint>
#include <optional>

namespace autobatch {

// A point in time, or none (never passes), and the work charged since the
// clock was last read. A clock reading costs about 20-80 ns (vDSO
// steady_clock, measured on the build machine), as much as a small block of
// the VM or a few ops of a pass, so a loop charges its work in units and
// the clock is read once kClockWork units have been charged since the last
// reading. Each user picks the units: the VMs' Budget (vm/run_support.h)
// charges the bytes its ops touch (a reading about every millisecond);
// the compiler's passes (passes/pipeline.h) charge kPassOpWork per op or
// block they visit.
//
// A value type: copying it copies the point in time and the work charged so
// far, so each pass can charge its own copy.
class Deadline {
 public:
  using Clock = std::chrono::steady_clock;

  // Work between two readings of the clock.
  static constexpr int64_t kClockWork = int64_t{1} << 20;

  // No deadline: Charge and Passed are always false.
  Deadline() = default;
  // `at`, a budget of `seconds` (for messages: what the caller was given).
  Deadline(Clock::time_point at, double seconds) : at_(at), seconds_(seconds) {}
  // `seconds` from now; none if seconds <= 0.
  static Deadline In(double seconds) {
    if (!(seconds > 0)) return Deadline();
    return Deadline(Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                       std::chrono::duration<double>(seconds)),
                    seconds);
  }

  // Whether there is a deadline.
  bool set() const { return at_.has_value(); }
  // The point in time, if any.
  std::optional<Clock::time_point> at() const { return at_; }
  // The budget this deadline was made from (0 without one).
  double seconds() const { return seconds_; }

  // Charges `work` (kClockWork or more: read the clock now). True if the
  // clock was read and found the deadline passed.
  bool Charge(int64_t work) {
    if (!at_) return false;
    work_ += work;
    if (work_ < kClockWork) [[likely]] return false;
    work_ = 0;
    return Clock::now() > *at_;
  }

  // Reads the clock: whether the deadline has passed.
  bool Passed() const { return at_.has_value() && Clock::now() > *at_; }

 private:
  std::optional<Clock::time_point> at_;
  double seconds_ = 0;
  int64_t work_ = 0;  // charged since the clock was last read
};

}  // namespace autobatch

#endif  // AUTOBATCH_SUPPORT_DEADLINE_H_
