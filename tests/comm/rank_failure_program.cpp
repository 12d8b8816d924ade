// A job in which rank 1 fails mid-collective (the comm_rank_failure test): every rank enters the
// step's all_reduce except rank 1, which throws first. Errors end the job the way
// launch/main.cpp does (comm/job_failure.h).
#include <mpi.h>

#include <cstdio>
#include <exception>
#include <string>

#include "comm/failure_notice.h"
#include "comm/job_failure.h"
#include "comm/mpi_communicator.h"
#include "comm/mpi_runtime.h"
#include "core/error.h"

int main(int argc, char** argv) {
  llmft::MpiRuntime mpi(&argc, &argv);
  try {
    llmft::init_failure_notices();
    // Far longer than the test allows: only the failure notice may end rank 0's wait.
    llmft::MpiCommunicator world(MPI_COMM_WORLD, /*timeout_seconds=*/600);
    world.set_context("step 2");
    float gradient[4] = {1, 2, 3, 4};
    llmft::Tensor data(gradient, llmft::DType::f32, {4});
    world.all_reduce(data, llmft::ReduceOp::sum)->wait();
    world.set_context("step 3");
    if (mpi.rank() == 1) throw llmft::Error("injected failure in the backward of step 3");
    world.all_reduce(data, llmft::ReduceOp::sum)->wait();
    std::printf("rank %d: step 3 completed without rank 1\n", mpi.rank());
    return 0;
  } catch (const std::exception& e) {
    return llmft::end_job_after_error(e, 1, mpi);
  }
}
