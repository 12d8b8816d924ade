// llmft's subcommands. Each takes the arguments after the subcommand name, returns the
// process exit code, and throws llmft::Error on failure (main() reports and aborts).
#pragma once

#include <string>
#include <vector>

#include "comm/mpi_runtime.h"

namespace llmft {

using Args = std::vector<std::string>;

int run_train(const Args& args, MpiRuntime& mpi);
int run_prepare(const Args& args, MpiRuntime& mpi);
int run_generate(const Args& args, MpiRuntime& mpi);
int run_plan(const Args& args, MpiRuntime& mpi);
int run_export(const Args& args, MpiRuntime& mpi);

}  // namespace llmft
