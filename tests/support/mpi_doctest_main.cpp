// main() of llmft's MPI test programs (run under mpiexec by ctest). Every rank runs every
// test case in the same order, so test cases use CHECK rather than REQUIRE: a failed
// check must not make one rank skip a collective the others enter. Rank 0 prints
// doctest's report; another rank prints its own, each line prefixed with its rank, only
// when it failed. Every rank exits non-zero when any rank failed.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>
#include <mpi.h>

#include <iostream>
#include <sstream>
#include <string>

#include "comm/failure_notice.h"
#include "comm/mpi_runtime.h"

int main(int argc, char** argv) {
  llmft::MpiRuntime mpi(&argc, &argv);
  llmft::init_failure_notices();
  doctest::Context context(argc, argv);
  context.setOption("no-colors", true);  // mpiexec gives ranks a terminal; logs want text
  std::ostringstream report;
  if (mpi.rank() != 0) context.setCout(&report);
  const int failed = context.run() != 0 ? 1 : 0;
  if (failed && mpi.rank() != 0) {
    std::istringstream lines(report.str());
    for (std::string line; std::getline(lines, line);) {
      std::cout << "rank " << mpi.rank() << ": " << line << "\n";
    }
    std::cout.flush();
  }
  int any_failed = 0;
  LLMFT_MPI_CHECK(MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
  if (any_failed && !failed) std::cout << "rank " << mpi.rank() << ": another rank failed\n";
  return any_failed;
}
