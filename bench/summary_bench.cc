// The posterior summary's cost: for one column of D draws x C chains (the
// README demo has 1000 x 1024 in each of its 30 columns), the time of
// std::sort of (value, index) pairs, of SortedOrder (the radix sort the
// summary uses in its place) and of a whole Summarize. Times are the minimum
// over --trials runs, on one thread.
//
// Usage: summary_bench [--draws N] [--chains N] [--trials N]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <utility>
#include <vector>

#include "mcmc/output/diagnostics.h"

namespace autobatch::mcmc {
namespace {

double MinSeconds(int trials, const std::function<void()>& run) {
  double best = 1e300;
  for (int t = 0; t < trials; ++t) {
    const auto start = std::chrono::steady_clock::now();
    run();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
                              .count());
  }
  return best;
}

int Main(int argc, char** argv) {
  Eigen::Index draws = 1000;
  Eigen::Index chains = 1024;
  int trials = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    const long value = std::strtol(argv[i + 1], nullptr, 10);
    if (std::strcmp(argv[i], "--draws") == 0) {
      draws = value;
    } else if (std::strcmp(argv[i], "--chains") == 0) {
      chains = value;
    } else if (std::strcmp(argv[i], "--trials") == 0) {
      trials = static_cast<int>(value);
    } else {
      std::fprintf(stderr, "usage: summary_bench [--draws N] [--chains N] [--trials N]\n");
      return 2;
    }
  }
  if (argc % 2 == 0 || draws < 4 || chains < 1 || trials < 1) {
    std::fprintf(stderr, "usage: summary_bench [--draws N >= 4] [--chains N] [--trials N]\n");
    return 2;
  }
  // AR(1) chains with phi = 0.5, as a sampler's draws are correlated.
  std::mt19937_64 gen(20261125);
  std::normal_distribution<double> normal;
  Eigen::MatrixXd x(draws, chains);
  for (Eigen::Index c = 0; c < chains; ++c) {
    double v = normal(gen);
    for (Eigen::Index d = 0; d < draws; ++d) x(d, c) = v = 0.5 * v + normal(gen);
  }
  const double std_sort = MinSeconds(trials, [&] {
    std::vector<std::pair<double, Eigen::Index>> order;
    order.reserve(static_cast<size_t>(x.size()));
    for (Eigen::Index i = 0; i < x.size(); ++i) order.emplace_back(x.data()[i], i);
    std::sort(order.begin(), order.end());
  });
  const double radix = MinSeconds(trials, [&] { (void)SortedOrder(x); });
  const double summarize = MinSeconds(trials, [&] { (void)Summarize(x); });
  std::printf("draws %ld x chains %ld, min of %d trials, one thread\n",
              static_cast<long>(draws), static_cast<long>(chains), trials);
  std::printf("%-32s %10s %8s\n", "step", "seconds", "vs sort");
  std::printf("%-32s %10.4f %7.2fx\n", "std::sort of (value, index)", std_sort, 1.0);
  std::printf("%-32s %10.4f %7.2fx\n", "SortedOrder (radix)", radix, radix / std_sort);
  std::printf("%-32s %10.4f %7.2fx\n", "Summarize (whole column)", summarize,
              summarize / std_sort);
  return 0;
}

}  // namespace
}  // namespace autobatch::mcmc

int main(int argc, char** argv) { return autobatch::mcmc::Main(argc, argv); }
