// Error handling: AB_CHECK for our own bugs, Status macros for user errors.
#ifndef AUTOBATCH_SUPPORT_STATUS_H_
#define AUTOBATCH_SUPPORT_STATUS_H_

#include <cstdio>
#include <cstdlib>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace autobatch::internal {

[[noreturn]] inline void CheckFailed(const char* condition, const char* file,
                                     int line, const char* message) {
  std::fprintf(stderr, "autobatch internal error at %s:%d: check failed: %s%s%s\n"
               "This is a bug in autobatch, not in your program; please report it.\n",
               file, line, condition, message[0] ? ": " : "", message);
  std::fflush(stderr);
  std::abort();
}

}  // namespace autobatch::internal

// AB_CHECK(cond) / AB_CHECK(cond, "why"): an invariant of autobatch itself.
// Always on. User mistakes must never reach an AB_CHECK: they get a Status.
#define AB_CHECK(cond, ...)                                                   \
  do {                                                                        \
    if (!(cond)) [[unlikely]] {                                               \
      ::autobatch::internal::CheckFailed(#cond, __FILE__, __LINE__,           \
                                         "" __VA_ARGS__);                     \
    }                                                                         \
  } while (false)

// AB_DCHECK: an internal check too expensive for optimized builds; on in
// debug builds and when configured with -DAUTOBATCH_INTERNAL_CHECKS=ON (CI).
#if !defined(NDEBUG) || defined(AUTOBATCH_INTERNAL_CHECKS)
#define AB_DCHECK(cond, ...) AB_CHECK(cond, __VA_ARGS__)
#define AB_DCHECK_IS_ON 1
#else
#define AB_DCHECK(cond, ...) \
  do {                       \
  } while (false && (cond))
#define AB_DCHECK_IS_ON 0
#endif

#define AB_INTERNAL_CONCAT_IMPL(a, b) a##b
#define AB_INTERNAL_CONCAT(a, b) AB_INTERNAL_CONCAT_IMPL(a, b)

// Returns from the enclosing function if `expr` (a Status) is not OK.
#define AB_RETURN_IF_ERROR(expr)                      \
  do {                                                \
    ::absl::Status ab_status_ = (expr);               \
    if (!ab_status_.ok()) [[unlikely]] return ab_status_; \
  } while (false)

// AB_ASSIGN_OR_RETURN(lhs, expr): evaluates `expr` (a StatusOr<T>); on error
// returns its status, otherwise move-assigns the value to `lhs`, which may be
// a declaration (`auto x`).
#define AB_ASSIGN_OR_RETURN(lhs, expr)                                       \
  AB_INTERNAL_ASSIGN_OR_RETURN(AB_INTERNAL_CONCAT(ab_statusor_, __LINE__), \
                               lhs, expr)
#define AB_INTERNAL_ASSIGN_OR_RETURN(tmp, lhs, expr) \
  auto tmp = (expr);                                 \
  if (!tmp.ok()) [[unlikely]] return tmp.status();   \
  lhs = std::move(tmp).value()

#endif  // AUTOBATCH_SUPPORT_STATUS_H_
