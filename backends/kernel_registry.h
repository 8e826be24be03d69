// User kernels: named batched implementations with declared signatures.
#ifndef AUTOBATCH_BACKENDS_KERNEL_REGISTRY_H_
#define AUTOBATCH_BACKENDS_KERNEL_REGISTRY_H_

#include <functional>
#include <map>
#include <span>
#include <string>

#include "absl/status/status.h"
#include "backends/kernels.h"
#include "ir/ir.h"

namespace autobatch {

// What a user kernel receives: `num_lanes` consecutive lanes of each input
// and output (types as in its KernelSignature), and which of them are active
// (null = all). Inactive lanes may hold junk; their outputs are discarded.
struct KernelCall {
  std::span<const ConstLanesView> inputs;
  std::span<const LanesView> outputs;
  int64_t num_lanes = 0;
  const uint8_t* active = nullptr;
  bool IsActive(int64_t lane) const { return active == nullptr || active[lane]; }
};
using KernelFn = std::function<absl::Status(const KernelCall&)>;

struct UserKernel {
  KernelSignature signature;
  KernelFn fn;
};

class KernelRegistry {
 public:
  // Registers `name`; re-registering a name is an AlreadyExists error.
  absl::Status Register(std::string name, KernelSignature signature, KernelFn fn);
  // nullptr if unknown.
  const UserKernel* Find(std::string_view name) const;
  // Every kernel the module names must be registered with the same signature;
  // otherwise NotFound / InvalidArgument naming the kernel and what to do.
  absl::Status CheckBound(const Module& module) const;
  const std::map<std::string, UserKernel, std::less<>>& kernels() const {
    return kernels_;
  }

 private:
  std::map<std::string, UserKernel, std::less<>> kernels_;
};

}  // namespace autobatch

#endif  // AUTOBATCH_BACKENDS_KERNEL_REGISTRY_H_
