// llmft's subcommands. Each takes the arguments after the subcommand name, returns the
// process exit code, and throws llmft::Error on failure (main() reports and aborts).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "comm/mpi_runtime.h"

namespace llmft {

using Args = std::vector<std::string>;

int run_train(const Args& args, MpiRuntime& mpi);
int run_prepare(const Args& args, MpiRuntime& mpi);
int run_generate(const Args& args, MpiRuntime& mpi);
int run_plan(const Args& args, MpiRuntime& mpi);
int run_export(const Args& args, MpiRuntime& mpi);
int run_eval(const Args& args, MpiRuntime& mpi);
int run_plot(const Args& args, MpiRuntime& mpi);

struct Command {
  const char* name;
  int (*run)(const Args& args, MpiRuntime& mpi);
};

// Every subcommand, train first (what `llmft` runs when the first word is an option).
const std::vector<Command>& commands();

// The subcommand `args` names and the arguments after its name: train when the first
// word is an option (or there is none). Throws llmft::Error naming an unknown first word
// and the nearest command.
std::pair<const Command*, Args> select_command(const Args& args);

// "; did you mean 'eval'?" for a word near a command's name ("evaluate", "genrate"), else
// the list of commands: the end of an error about `word`.
std::string command_hint(const std::string& word);

}  // namespace llmft
