// The one place that maps a communicator name ("mpi"; "nccl" where built) to the
// Communicator over all of a job's ranks. Which communicators exist is decided by CMake:
// MPI always, NCCL when the CUDA toolkit has it.
//
// "auto" (the default) picks NCCL for GPU tensors when this build has it and each rank has
// its own GPU; otherwise MPI, through host copies (comm/staged_communicator.h) when the
// backend's tensors live in device memory (ranks sharing a GPU, builds without NCCL).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "comm/communicator.h"
#include "core/backend.h"

namespace llmft {

// The communicators this build has, the default first.
std::vector<std::string> available_communicators();
// One line per communicator this build has, in that order: "name: " and its library.
std::vector<std::string> describe_communicators();

// Throws llmft::Error naming `name` and the kinds this build has, unless it is one of
// them or "auto" (the default).
void require_communicator(const std::string& name);

// The world communicator of kind `name` for tensors of `backend`, every collective
// bounded by timeout_seconds. Where any rank's GPU runs other ranks too
// (backend.ranks_sharing_device(), agreed over the world first), every rank takes the
// staged MPI path, which NCCL cannot replace. Collective over the job's ranks. Throws llmft::Error
// naming the kind, why it cannot serve, and what to use. REQUIRES: MPI is initialised (it
// bootstraps every kind).
std::unique_ptr<Communicator> make_world_communicator(const std::string& name,
                                                      double timeout_seconds, Backend& backend);

}  // namespace llmft
