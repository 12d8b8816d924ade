// How a rank's error ends an MPI job (launch/main.cpp and the test programs that stand in
// for it), so that the user reads the error once and no rank is left waiting:
//  - one rank: "error: ..." on stderr and `exit_code` (MpiRuntime::abort);
//  - every rank found the very same error on its own (a bad option or input, a plan that
//    does not fit, a diverged loss that every rank sees): rank 0 prints "error: ..." once
//    and every rank ends with `exit_code` through MPI_Finalize, without MPI_Abort's report;
//  - otherwise each failing rank prints "rank N: error: ..." and the job ends through
//    MPI_Abort with `exit_code`. A rank that only learnt of another's failure (a
//    PeerFailedError) leaves the abort to the rank that failed, for at most the grace
//    period, so that rank's own message is printed before the job ends.
#pragma once

#include <exception>

#include "comm/mpi_runtime.h"

namespace llmft {

// Returns the code main() should return when the error was unanimous (main's MpiRuntime
// then finalizes MPI); otherwise does not return.
int end_job_after_error(const std::exception& error, int exit_code, MpiRuntime& mpi);

}  // namespace llmft
