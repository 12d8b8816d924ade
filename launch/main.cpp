// The llmft executable: initialises MPI, dispatches to a subcommand (launch/commands.h),
// and is the one place that catches errors: it ends the whole job as comm/job_failure.h
// says (the other ranks told, so that none waits in a collective; an error every rank
// found printed once).
#include <exception>
#include <string>

#include "comm/failure_notice.h"
#include "comm/job_failure.h"
#include "core/error.h"
#include "launch/commands.h"

int main(int argc, char** argv) {
  llmft::MpiRuntime mpi(&argc, &argv);
  try {
    llmft::init_failure_notices();
    const auto [command, args] = llmft::select_command(llmft::Args(argv + 1, argv + argc));
    return command->run(args, mpi);
  } catch (const std::exception& e) {
    return llmft::end_job_after_error(
        e, dynamic_cast<const llmft::DivergedError*>(&e) ? llmft::kDivergedExitCode : 1, mpi);
  }
}
