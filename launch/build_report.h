// What `llmft --version` prints: the release, then the devices and communicators this
// build has (the registries decide which) with the libraries each runs on and, for GPUs,
// the driver and devices of this machine, so that a user can check a build and a node
// before submitting a job.
#pragma once

#include <string>

namespace llmft {

// "llmft X.Y.Z", then "devices:" and "communicators:", each followed by one indented line
// per kind (core/backend_registry.h, comm/communicator_registry.h). REQUIRES: MPI is
// initialised.
std::string build_report();

}  // namespace llmft
