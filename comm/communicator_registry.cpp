#include "comm/communicator_registry.h"

#include "comm/mpi_communicator.h"
#include "core/error.h"

namespace llmft {

std::vector<std::string> available_communicators() {
  return {"mpi"};
}

void require_communicator(const std::string& name) {
  if (name == "auto") return;
  std::string kinds;
  for (const std::string& kind : available_communicators()) {
    if (kind == name) return;
    kinds += " " + kind;
  }
  LLMFT_FAIL("--comm " << name << ": unknown communicator; this build has:" << kinds
                       << " (or auto)");
}

std::unique_ptr<Communicator> make_world_communicator(const std::string& name,
                                                      double timeout_seconds) {
  require_communicator(name);
  return std::make_unique<MpiCommunicator>(MPI_COMM_WORLD, timeout_seconds);
}

}  // namespace llmft
