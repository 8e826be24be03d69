// Gradients by the compiler: eight schools' log density and its gradient at
// a few points, for a batch of lanes each at its own point.
#include <cstdio>
#include <vector>

#include "frontend/context.h"
#include "samples/gradients/log_densities.h"

int main() {
  using autobatch::Tensor;
  autobatch::Context ctx;
  autobatch::BatchFunction log_density = autobatch::samples::RegisterEightSchools(ctx);
  autobatch::BatchFunction gradient = ctx.Gradient(log_density);
  constexpr int kLanes = 4;
  std::vector<double> q;
  for (int lane = 0; lane < kLanes; ++lane) {
    for (int i = 0; i < 10; ++i) q.push_back(0.1 * (i - 4) + 0.5 * lane);
  }
  absl::StatusOr<Tensor> input = Tensor::FromVector(q, {10});
  absl::StatusOr<std::vector<Tensor>> out = gradient.Run({*input});
  if (!out.ok()) {
    std::fprintf(stderr, "%s\n", std::string(out.status().message()).c_str());
    return 1;
  }
  const std::vector<double> value = (*out)[0].ToVector<double>();
  const std::vector<double> grad = (*out)[1].ToVector<double>();
  for (int lane = 0; lane < kLanes; ++lane) {
    std::printf("lane %d: log p = %.6f, d/dmu = %.6f, d/dlog tau = %.6f\n", lane, value[lane],
                grad[lane * 10], grad[lane * 10 + 1]);
  }
  return 0;
}
