// A collective waited for on the device that does not complete within the communicator's
// timeout ends the process through the watchdog (comm/nccl_watchdog.h), with an error
// naming the collective, its group and context, instead of leaving the host blocked behind
// the stalled compute stream. The compute stream is held by a host function that never
// returns, so the all-reduce ordered after it can never start: only the watchdog can end
// the program (ctest's TIMEOUT fails it otherwise). Exits 77 where no GPU can run.
#include <cuda_runtime.h>
#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>

#include "comm/failure_notice.h"
#include "comm/mpi_runtime.h"
#include "comm/nccl_communicator.h"
#include "core/allocator.h"
#include "core/backend_registry.h"

namespace {

// Holds the stream it was queued on for good.
void CUDART_CB hold_stream_forever(void*) {
  while (true) std::this_thread::sleep_for(std::chrono::seconds(1));
}

}  // namespace

int main(int argc, char** argv) {
  llmft::MpiRuntime mpi(&argc, &argv);
  llmft::init_failure_notices();
  const std::string reason = llmft::device_unavailable_reason("cuda");
  if (!reason.empty()) {
    std::printf("skipped: %s\n", reason.c_str());
    return 77;
  }
  std::unique_ptr<llmft::Backend> backend = llmft::make_backend(
      "cuda", llmft::NodePlacement{mpi.local_rank(), mpi.local_size(), false, {}, {}},
      size_t{256} << 20);
  auto& cuda = dynamic_cast<llmft::CudaBackend&>(*backend);
  llmft::NcclCommunicator nccl(MPI_COMM_SELF, cuda, 1.0, "alone");
  nccl.set_context("step 9");
  llmft::Allocator alloc(backend->memory(), 0);
  llmft::Buffer buffer = alloc.allocate(4, llmft::MemoryCategory::other, "the sum");
  if (cudaLaunchHostFunc(cuda.compute_stream(), hold_stream_forever, nullptr) != cudaSuccess) {
    std::fprintf(stderr, "error: could not hold the compute stream\n");
    return 1;
  }
  nccl.all_reduce(buffer.as(llmft::DType::f32, {1}), llmft::ReduceOp::sum)->wait_on_device();
  backend->synchronize();  // blocks behind the held stream until the watchdog ends it all
  std::fprintf(stderr, "error: the program outlived the watchdog\n");
  return 0;
}
