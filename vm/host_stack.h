// Host stacks for executors that recurse on the host (the stackless VM).
#ifndef AUTOBATCH_VM_HOST_STACK_H_
#define AUTOBATCH_VM_HOST_STACK_H_

#include <cstdint>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"

namespace autobatch {

// Host stack bytes one level of a host-recursive executor may use: measured
// at well under a quarter of this (more under AddressSanitizer, whose
// redzones grow every frame).
#if defined(__SANITIZE_ADDRESS__)
inline constexpr int64_t kHostStackBytesPerLevel = 32 << 10;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr int64_t kHostStackBytesPerLevel = 32 << 10;
#else
inline constexpr int64_t kHostStackBytesPerLevel = 4 << 10;
#endif
#else
inline constexpr int64_t kHostStackBytesPerLevel = 4 << 10;
#endif
// The largest host stack asked of the system (address space, committed only
// as it is touched).
inline constexpr int64_t kMaxHostStackBytes = int64_t{4} << 30;
// The deepest recursion (levels) a host stack can hold.
inline constexpr int64_t kMaxHostRecursionLevels = kMaxHostStackBytes / kHostStackBytesPerLevel;

// Runs `body` on a new thread whose stack holds `levels` levels of host
// recursion (levels <= kMaxHostRecursionLevels) and waits for it; body's
// status is returned, an exception it throws rethrown here, and its
// allocations charge the calling thread's memory budget (support/memory.h).
// ResourceExhausted if the system cannot make the thread. This is how the stackless VM honours any max_stack_depth without
// overflowing the caller's stack, whatever thread calls it.
absl::Status RunWithHostStack(int64_t levels, absl::FunctionRef<absl::Status()> body);

}  // namespace autobatch

#endif  // AUTOBATCH_VM_HOST_STACK_H_
