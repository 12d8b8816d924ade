// Rank agreement: before any collective whose shape depends on them, the ranks of a job
// check that they run with the same settings (the options, the model, the data), so that
// a job started with different commands on different ranks (`mpirun -np 1 llmft ... :
// -np 1 llmft ... --zero 3`, another --seed or --data on one node) stops with an error
// naming the setting and the ranks instead of crashing inside MPI or silently training
// replicas that diverge. One all-gather of a 64-bit hash per setting; the values of the
// first setting that differs are gathered only when one does.
#pragma once

#include <string>
#include <vector>

namespace llmft {

struct Setting {
  std::string name;   // e.g. "--seed", "model config", "--data file"
  std::string value;  // its effective value as text
};

// Collective over MPI_COMM_WORLD (every rank calls it with its settings, in the same
// order). Returns when every rank has the same settings; otherwise every rank throws the
// same llmft::Error, naming the first setting that differs and each rank's value.
void require_ranks_agree(const std::vector<Setting>& settings);

}  // namespace llmft
