// main() of the tests run under mpirun: see mpi_test_main.h.
#include "tests/support/mpi_test_main.h"

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace autobatch {
namespace {
MpiCommunicator* world = nullptr;
}  // namespace

MpiCommunicator& MpiWorld() { return *world; }

}  // namespace autobatch

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  absl::StatusOr<std::unique_ptr<autobatch::MpiCommunicator>> world =
      autobatch::MpiCommunicator::Create(&argc, &argv);
  if (!world.ok()) {
    std::fprintf(stderr, "%s\n", std::string(world.status().message()).c_str());
    return 1;
  }
  autobatch::world = world->get();
  if ((*world)->rank() != 0) {
    ::testing::TestEventListeners& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  const int failed = RUN_ALL_TESTS();
  absl::StatusOr<std::vector<int64_t>> failures = (*world)->SumAll(std::vector<int64_t>{failed});
  const int status = failures.ok() && (*failures)[0] == 0 ? 0 : 1;
  world->reset();
  return status;
}
