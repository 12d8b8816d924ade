// The llmft executable: initialises MPI, dispatches to a subcommand, and is the one
// place that catches errors: it ends the whole job as comm/job_failure.h says (the other
// ranks told, so that none waits in a collective; an error every rank found printed once).
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
    llmft::Args args(argv + 1, argv + argc);
    std::string command = "train";
    if (!args.empty() && (args[0] == "train" || args[0] == "prepare" || args[0] == "generate" ||
                          args[0] == "plan" || args[0] == "export")) {
      command = args[0];
      args.erase(args.begin());
    }
    if (command == "prepare") return llmft::run_prepare(args, mpi);
    if (command == "generate") return llmft::run_generate(args, mpi);
    if (command == "plan") return llmft::run_plan(args, mpi);
    if (command == "export") return llmft::run_export(args, mpi);
    return llmft::run_train(args, mpi);
  } catch (const std::exception& e) {
    return llmft::end_job_after_error(
        e, dynamic_cast<const llmft::DivergedError*>(&e) ? llmft::kDivergedExitCode : 1, mpi);
  }
}
