// The llmft executable: initialises MPI, dispatches to a subcommand, and is the one
// place that catches errors: it prints "rank N: error: ..." and ends the whole job.
#include <cstdio>
#include <exception>
#include <string>

#include "launch/commands.h"

int main(int argc, char** argv) {
  llmft::MpiRuntime mpi(&argc, &argv);
  try {
    llmft::Args args(argv + 1, argv + argc);
    std::string command = "train";
    if (!args.empty() && (args[0] == "train" || args[0] == "prepare" || args[0] == "generate")) {
      command = args[0];
      args.erase(args.begin());
    }
    if (command == "prepare") return llmft::run_prepare(args, mpi);
    if (command == "generate") return llmft::run_generate(args, mpi);
    return llmft::run_train(args, mpi);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rank %d: error: %s\n", mpi.rank(), e.what());
    std::fflush(stderr);
    mpi.abort(1);
  }
}
