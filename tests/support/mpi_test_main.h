// The main() of the tests run under mpirun (mpi_test_main.cc): MPI is
// initialized before the tests and finalized after them, only rank 0 prints
// GoogleTest's report, and every rank exits 1 if a test failed on any rank.
#ifndef AUTOBATCH_TESTS_SUPPORT_MPI_TEST_MAIN_H_
#define AUTOBATCH_TESTS_SUPPORT_MPI_TEST_MAIN_H_

#include "support/mpi/mpi_communicator.h"

namespace autobatch {

// MPI_COMM_WORLD, for the tests.
MpiCommunicator& MpiWorld();

}  // namespace autobatch

#endif  // AUTOBATCH_TESTS_SUPPORT_MPI_TEST_MAIN_H_
