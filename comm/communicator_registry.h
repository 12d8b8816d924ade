// The one place that maps a communicator name ("mpi"; "nccl" where built) to the
// Communicator over all of a job's ranks. Which communicators exist is decided by CMake:
// MPI always.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "comm/communicator.h"

namespace llmft {

// The communicators this build has, the default first.
std::vector<std::string> available_communicators();

// Throws llmft::Error naming `name` and the kinds this build has, unless it is one of
// them or "auto" (the default).
void require_communicator(const std::string& name);

// The world communicator of kind `name` ("auto": the default), every collective bounded by
// timeout_seconds. Collective over the job's ranks. Throws llmft::Error naming the kind
// and the kinds this build has. REQUIRES: MPI is initialised (it bootstraps every kind).
std::unique_ptr<Communicator> make_world_communicator(const std::string& name,
                                                      double timeout_seconds);

}  // namespace llmft
