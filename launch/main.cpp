// The llmft executable: initialises MPI, dispatches to a subcommand, and is the one
// place that catches errors: it prints "rank N: error: ...", tells the other ranks
// (so that a rank waiting in a collective names this one instead of hanging), and ends
// the whole job.
#include <cstdio>
#include <exception>
#include <string>

#include "comm/failure_notice.h"
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
    std::fprintf(stderr, "rank %d: error: %s\n", mpi.rank(), e.what());
    std::fflush(stderr);
    if (mpi.size() > 1) llmft::report_failure(e.what());
    mpi.abort(1);
  }
}
