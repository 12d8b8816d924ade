#include "comm/communicator_registry.h"

#include "comm/mpi_communicator.h"
#include "comm/staged_communicator.h"
#include "core/error.h"

#ifdef LLMFT_WITH_NCCL
#include "comm/nccl_communicator.h"
#endif

namespace llmft {
namespace {

// NCCL's world communicator when `name` asks for it or leaves the choice ("auto") and it
// can serve; null otherwise.
std::unique_ptr<Communicator> nccl_world(const std::string& name, double timeout_seconds,
                                         Backend& backend, bool shared_device) {
#ifdef LLMFT_WITH_NCCL
  auto* cuda = dynamic_cast<CudaBackend*>(&backend);
  if (name == "nccl") {
    LLMFT_REQUIRE(cuda != nullptr,
                  "--comm nccl needs --device cuda (NCCL moves GPU memory); "
                  "use --comm mpi or auto");
    LLMFT_REQUIRE(!shared_device,
                  "--comm nccl: NCCL cannot run two ranks on one GPU "
                  "(--share-devices); use --comm mpi or auto");
  }
  if ((name == "nccl" || name == "auto") && cuda != nullptr && !shared_device) {
    return std::make_unique<NcclCommunicator>(MPI_COMM_WORLD, *cuda, timeout_seconds);
  }
#else
  (void)name, (void)timeout_seconds, (void)backend, (void)shared_device;
#endif
  return nullptr;
}

}  // namespace

std::vector<std::string> available_communicators() {
#ifdef LLMFT_WITH_NCCL
  return {"mpi", "nccl"};
#else
  return {"mpi"};
#endif
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
                                                      double timeout_seconds, Backend& backend,
                                                      bool shared_device) {
  require_communicator(name);
  if (auto nccl = nccl_world(name, timeout_seconds, backend, shared_device)) return nccl;
  auto mpi = std::make_unique<MpiCommunicator>(MPI_COMM_WORLD, timeout_seconds);
  if (backend.host_memory()) return mpi;
  return std::make_unique<StagedCommunicator>(std::move(mpi), backend);
}

}  // namespace llmft
