// NcclCommunicator: the Communicator on GPU memory over NCCL, one rank per GPU.
//
// Bootstrap: rank 0 of the group makes the NCCL unique id and broadcasts it over the
// group's MPI communicator (MPI stays for bootstrap, barriers and failure notices); every
// rank joins non-blocking and waits as a collective does (comm/poll_wait.h). split()
// splits the NCCL communicator itself (ncclCommSplit, sharing resources) and the MPI one
// beside it.
//
// Ordering: a collective first makes the backend's communication stream wait for the work
// queued so far on its compute stream (an event), runs there, and records a completion
// event. One stream serves every group: the groups split from the world share its
// resources, and NCCL runs the collectives of communicators that share resources one
// after another anyway (overlapping a data-parallel with a tensor-parallel collective
// would need splits with resources of their own: NCCL's buffers again per group). wait()
// polls the completion event and NCCL's asynchronous error until done, then makes the
// compute stream wait for it, so later kernels see the result. A wait that passes the
// timeout, or that a failure notice from another rank ends, aborts the NCCL communicator
// (ncclCommAbort) before failing, naming the collective, the group and the context.
//
// Memory: NCCL allocates its buffers outside the backend's allocator, when a communicator
// is created and when an algorithm first runs; warm_up runs every collective at three sizes
// on scratch of its own, so a run creates and warms its communicators before the backend
// reserves its slab and measures what they took (CudaBackend's communicator overhead).
//
// Sums are NCCL's (its order and, for bf16 and fp16, its rounding per step), not the MPI
// communicator's rank-order f32 sums: results agree with one rank within the parity
// tolerances, not bit for bit. Ranks sharing one GPU cannot use NCCL: the registry then
// chooses the staged MPI communicator (comm/staged_communicator.h).
// Thread-safety: one thread per communicator, the one that calls MPI.
#pragma once

#include <mpi.h>
#include <nccl.h>

#include <memory>
#include <string>

#include "comm/communicator.h"
#include "core/cuda/cuda_backend.h"

namespace llmft {

// The NCCL library this process loaded, e.g. "NCCL 2.28.3".
std::string nccl_library_version();

class NcclCommunicator : public Communicator {
 public:
  // Collective over `comm`'s ranks (duplicated; the caller keeps `comm`).
  NcclCommunicator(MPI_Comm comm, CudaBackend& backend, double timeout_seconds,
                   std::string group_name = "world");
  ~NcclCommunicator() override;
  NcclCommunicator(const NcclCommunicator&) = delete;
  NcclCommunicator& operator=(const NcclCommunicator&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::unique_ptr<CommRequest> all_reduce(Tensor data, ReduceOp op) override;
  std::unique_ptr<CommRequest> reduce_scatter(Tensor send, Tensor recv) override;
  std::unique_ptr<CommRequest> all_gather(Tensor send, Tensor recv) override;
  std::unique_ptr<CommRequest> broadcast(Tensor data, int root) override;
  void barrier() override;
  std::unique_ptr<Communicator> split(int color, int key) override;
  void set_context(const std::string& context) override { context_ = context; }
  void warm_up(DType dtype) override;
  bool overlaps_compute() const override { return true; }
  const CommCounters& counters() const override { return counters_; }
  void reset_counters() override { counters_ = {}; }

  // The NCCL communicator and whether it is unusable: a failed wait aborted it, or it was
  // destroyed (comm then null). Shared with requests, which may outlive the communicator.
  struct Handle {
    ncclComm_t comm = nullptr;
    bool aborted = false;
  };

 private:
  NcclCommunicator(MPI_Comm comm, std::shared_ptr<Handle> nccl, CudaBackend& backend,
                   double timeout_seconds, std::string group_name);
  // Orders the communication stream after the compute stream's queued work, counts the
  // call, runs `launch` there, and returns the request that waits for it.
  template <typename Launch>
  std::unique_ptr<CommRequest> run(Collective collective, size_t bytes, Launch&& launch);
  std::string describe(const char* name) const;

  MPI_Comm mpi_;
  std::shared_ptr<Handle> nccl_;
  CudaBackend& backend_;
  double timeout_seconds_;
  std::string group_name_;
  std::string context_;
  int rank_ = 0;
  int size_ = 1;
  CommCounters counters_;
};

}  // namespace llmft
