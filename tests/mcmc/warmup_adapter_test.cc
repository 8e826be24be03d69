// Tests of WarmupAdapter (mcmc/warmup/warmup_adapter.h) called directly:
// its errors name the chain and warmup iteration, inactive lanes are not
// touched, and out-of-range slots are refused. (sample_test.cc checks that a
// whole warmup through it equals RunScalarWarmup bit for bit.)
#include "mcmc/warmup/warmup_adapter.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "mcmc/model/targets/registry.h"

namespace autobatch::mcmc {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kDim = 2;

// One lane's inputs and room for its outputs, as the VM hands them over.
struct Lanes {
  std::vector<int64_t> slot, iteration;
  std::vector<double> q, logp, grad;
  std::vector<uint64_t> key, counter;
  std::vector<double> accept;
  std::vector<double> step_out, metric_out;
  std::vector<uint64_t> counter_out;

  void Add(int64_t s, int64_t i, double q_value, double accept_stat) {
    slot.push_back(s);
    iteration.push_back(i);
    q.insert(q.end(), kDim, q_value);
    logp.push_back(-0.5 * kDim * q_value * q_value);
    grad.insert(grad.end(), kDim, -q_value);
    key.push_back(11);
    counter.push_back(5);
    accept.push_back(accept_stat);
    step_out.push_back(-1);
    metric_out.insert(metric_out.end(), kDim, -1);
    counter_out.push_back(0);
  }
};

template <typename T>
ConstLanesView In(const TensorType& type, const std::vector<T>& v) {
  return {type, reinterpret_cast<const std::byte*>(v.data())};
}
template <typename T>
LanesView Out(const TensorType& type, std::vector<T>& v) {
  return {type, reinterpret_cast<std::byte*>(v.data())};
}

absl::Status Call(WarmupAdapter& adapter, Lanes& l, const uint8_t* active = nullptr) {
  const KernelSignature sig = adapter.Signature();
  const std::vector<ConstLanesView> inputs = {
      In(sig.inputs[0], l.slot),  In(sig.inputs[1], l.iteration), In(sig.inputs[2], l.q),
      In(sig.inputs[3], l.logp),  In(sig.inputs[4], l.grad),      In(sig.inputs[5], l.key),
      In(sig.inputs[6], l.counter), In(sig.inputs[7], l.accept)};
  const std::vector<LanesView> outputs = {Out(sig.outputs[0], l.step_out),
                                          Out(sig.outputs[1], l.metric_out),
                                          Out(sig.outputs[2], l.counter_out)};
  KernelCall call{inputs, outputs, static_cast<int64_t>(l.slot.size()), active};
  return adapter.Adapt(call);
}

class WarmupAdapterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto target = MakeTarget("iid_gaussian", {{"dimension", kDim}});
    ASSERT_TRUE(target.ok()) << target.status();
    model_ = *std::move(target);
    auto schedule = WindowSchedule::Create({/*num_warmup=*/20, 75, 50, 25});
    ASSERT_TRUE(schedule.ok()) << schedule.status();
    ASSERT_TRUE(schedule->adapts_metric());  // the 15/75/10 fallback
    window_end_ = schedule->window_ends().front();
    adapter_ = std::make_unique<WarmupAdapter>(
        *model_, WarmupAdapter::Settings{*schedule, /*adapt_step_size=*/true,
                                         /*adapt_metric=*/true, StepSizeHeuristicOptions{}});
  }

  WarmupAdapter::Chain MakeChain(uint64_t id) const {
    WarmupAdapter::Chain c;
    c.chain_id = id;
    c.da.Restart(DualAveragingMu(0.5));
    c.welford = WelfordVariance(kDim);
    c.step_size = 0.5;
    c.inv_metric.assign(kDim, 1.0);
    return c;
  }

  std::unique_ptr<Target> model_;
  std::unique_ptr<WarmupAdapter> adapter_;
  int64_t window_end_ = 0;
};

TEST_F(WarmupAdapterTest, UpdatesOnlyActiveLanesAndTheirOwnChains) {
  // It keeps each chain's state: impure, never merged nor dropped.
  EXPECT_FALSE(adapter_->Signature().pure);
  adapter_->Reset({MakeChain(40), MakeChain(41)});
  Lanes l;
  l.Add(/*slot=*/1, /*iteration=*/0, 0.3, /*accept_stat=*/0.9);
  l.Add(/*slot=*/0, /*iteration=*/0, 0.1, /*accept_stat=*/0.2);
  const uint8_t active[] = {1, 0};
  ASSERT_TRUE(Call(*adapter_, l, active).ok());
  // Chain 41 took one dual-averaging step, exactly DualAveraging::Update's.
  DualAveraging expected = MakeChain(41).da;
  const double step = expected.Update(0.9);
  EXPECT_EQ(adapter_->chains()[1].step_size, step);
  EXPECT_EQ(l.step_out[0], ClampStepSize(step));
  EXPECT_EQ(l.metric_out[0], 1.0);
  EXPECT_EQ(l.counter_out[0], 5u);  // no heuristic: the stream is untouched
  // The inactive lane's chain and outputs are untouched.
  EXPECT_EQ(adapter_->chains()[0].step_size, 0.5);
  EXPECT_EQ(adapter_->chains()[0].da.t, 0);
  EXPECT_EQ(l.step_out[1], -1);
}

TEST_F(WarmupAdapterTest, WindowEndUpdatesTheMetricAndRunsTheHeuristic) {
  adapter_->Reset({MakeChain(7)});
  for (int64_t i = 0; i <= window_end_; ++i) {
    Lanes l;
    l.Add(0, i, 0.1 * static_cast<double>(i % 5), 0.8);
    ASSERT_TRUE(Call(*adapter_, l).ok()) << i;
    if (i == window_end_) {
      EXPECT_NE(l.metric_out[0], 1.0);  // the regularized window variance
      EXPECT_GT(l.counter_out[0], 5u);  // the heuristic drew momenta
      EXPECT_GT(adapter_->chains()[0].heuristic_trials, 0);
      EXPECT_EQ(adapter_->chains()[0].da.t, 0);  // restarted
    }
  }
}

TEST_F(WarmupAdapterTest, NonFiniteMetricNamesChainAndIteration) {
  adapter_->Reset({MakeChain(3)});
  absl::Status last;
  for (int64_t i = 0; i <= window_end_ && last.ok(); ++i) {
    Lanes l;
    // Draws of +-1e300 have an infinite variance.
    l.Add(0, i, i % 2 == 0 ? 1e300 : -1e300, 0.8);
    last = Call(*adapter_, l);
  }
  EXPECT_EQ(last.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(last.message(),
              HasSubstr(absl::StrCat("chain 3, warmup iteration ", window_end_, ":")));
}

TEST_F(WarmupAdapterTest, NanStepSizeNamesTheNextIteration) {
  WarmupAdapter::Chain chain = MakeChain(9);
  chain.da.Restart(std::numeric_limits<double>::quiet_NaN());
  adapter_->Reset({chain});
  Lanes l;
  l.Add(0, 4, 0.1, 0.8);
  const absl::Status s = Call(*adapter_, l);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("chain 9, warmup iteration 5: step size adaptation "
                                     "produced a NaN step size"));
}

TEST_F(WarmupAdapterTest, OutOfRangeSlotOrIterationIsRefused) {
  adapter_->Reset({MakeChain(0)});
  for (const auto& [slot, iteration] :
       std::vector<std::pair<int64_t, int64_t>>{{1, 0}, {-1, 0}, {0, 20}, {0, -1}}) {
    Lanes l;
    l.Add(slot, iteration, 0.1, 0.8);
    const absl::Status s = Call(*adapter_, l);
    EXPECT_EQ(s.code(), absl::StatusCode::kOutOfRange) << slot << " " << iteration;
    EXPECT_THAT(s.message(), HasSubstr("Reset it with every chain"));
  }
}

TEST_F(WarmupAdapterTest, WrongTypesAreAnError) {
  adapter_->Reset({MakeChain(0)});
  KernelCall call{{}, {}, 0, nullptr};
  const absl::Status s = adapter_->Adapt(call);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("adapt_warmup: called with the wrong inputs"));
}

}  // namespace
}  // namespace autobatch::mcmc
