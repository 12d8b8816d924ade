#include "comm/communicator_registry.h"

#include "comm/mpi_communicator.h"
#include "comm/mpi_runtime.h"
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
                  "--comm nccl: NCCL cannot run two ranks on one GPU, and ranks of this job "
                  "share one (--share-devices); use --comm mpi or auto");
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

std::vector<std::string> describe_communicators() {
  std::vector<std::string> lines = {"mpi: " + mpi_library_version()};
#ifdef LLMFT_WITH_NCCL
  lines.push_back("nccl: " + nccl_library_version());
#endif
  return lines;
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
                                                      double timeout_seconds, Backend& backend) {
  require_communicator(name);
  // Every rank must choose the same kind: one rank sharing its GPU keeps all off NCCL.
  const int sharing_here = backend.ranks_sharing_device() > 1 ? 1 : 0;
  int sharing_anywhere = 0;
  LLMFT_MPI_CHECK(
      MPI_Allreduce(&sharing_here, &sharing_anywhere, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
  const bool shared_device = sharing_anywhere != 0;
  if (auto nccl = nccl_world(name, timeout_seconds, backend, shared_device)) return nccl;
  auto mpi = std::make_unique<MpiCommunicator>(MPI_COMM_WORLD, timeout_seconds);
  if (backend.host_memory()) return mpi;
  return std::make_unique<StagedCommunicator>(std::move(mpi), backend);
}

}  // namespace llmft
