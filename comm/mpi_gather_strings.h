// Every rank's string over an MPI communicator, in rank order: for the host-side facts
// ranks compare before any device collective exists (which GPU each one chose).
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

namespace llmft {

// Collective over `comm`; strings of any length, empty ones included.
std::vector<std::string> mpi_gather_strings(MPI_Comm comm, const std::string& value);

}  // namespace llmft
