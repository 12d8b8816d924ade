// NcclCommunicator: the Communicator on GPU memory over NCCL, one rank per GPU.
//
// Bootstrap: rank 0 of the group makes the NCCL unique id and broadcasts it over the
// group's MPI communicator (MPI stays for bootstrap, barriers and failure notices); every
// rank joins non-blocking and waits as a collective does (comm/poll_wait.h). split()
// splits the NCCL communicator itself (ncclCommSplit, sharing resources) and the MPI one
// beside it; a split is named after its parent, the split's ordinal and its color
// ("world/split2:0": the world's second split, color 0), so that the data- and
// tensor-parallel groups, both split from the world, have names of their own.
//
// Ordering: each communicator queues its collectives on a stream of its own (a group's
// collective does not queue behind another group's on the device's stream order). A
// collective first makes that stream wait for the work queued so far on the compute stream
// (an event), runs there, and records a completion event. wait() polls the completion
// event and NCCL's asynchronous error until done, then makes the compute stream wait for
// it, so later kernels see the result; wait_on_device() only makes the compute stream wait
// for it (the host does not block), checking NCCL's asynchronous error once and handing the
// completion event to the watchdog, which ends the process if it is not done within the
// timeout (comm/nccl_watchdog.h). Groups split with shared resources still run one
// after another inside NCCL (it orders the kernels of communicators sharing resources on
// one internal stream): overlapping a data-parallel with a tensor-parallel collective needs
// splits with resources of their own (splitShare = 0), which costs NCCL's buffers again
// per group (0.5-1.5 GiB per GPU on NVLink, parallel/planner/device.cpp, whose presets
// count one communicator's worth for all the groups, as sharing allows).
//
// Aborts: a wait that passes the timeout, that a failure notice from another rank ends,
// or that finds NCCL's asynchronous error aborts the NCCL communicator (ncclCommAbort)
// before failing, naming the collective, the group and the context. Aborting one of a
// family sharing resources can leave the others unusable, so every communicator of the
// family is aborted with it and marked (comm/abort_family.h): the next collective on any
// of them fails at once, naming its group, the group that failed and why.
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

#include "comm/abort_family.h"
#include "comm/communicator.h"
#include "comm/cuda_stream_order.h"
#include "comm/nccl_watchdog.h"
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

  // The NCCL communicator (null once aborted or destroyed) and its place in the family of
  // communicators sharing its resources. Shared with requests, which may outlive the
  // communicator.
  struct Handle {
    Handle(std::shared_ptr<AbortFamily> family, const std::string& group);
    ~Handle();
    Handle(const Handle&) = delete;
    Handle& operator=(const Handle&) = delete;
    ncclComm_t comm = nullptr;
    std::shared_ptr<AbortFamily> family;
    AbortFamily::Member member;
  };

 private:
  NcclCommunicator(MPI_Comm comm, std::shared_ptr<Handle> nccl, CudaBackend& backend,
                   double timeout_seconds, std::string group_name);
  // Orders this group's stream after the compute stream's queued work, counts the
  // call, runs `launch` there, and returns the request that waits for it.
  template <typename Launch>
  std::unique_ptr<CommRequest> run(Collective collective, size_t bytes, Launch&& launch);
  std::string describe(const char* name) const;

  MPI_Comm mpi_;
  std::shared_ptr<Handle> nccl_;
  CudaBackend& backend_;
  OwnedStream stream_;         // where this group's collectives run
  OwnedEvent compute_queued_;  // marks the compute stream's work a collective waits for
  // Bounds the collectives waited for on the device; shared with requests.
  std::shared_ptr<NcclWatchdog> watchdog_;
  double timeout_seconds_;
  std::string group_name_;
  std::string context_;
  int rank_ = 0;
  int size_ = 1;
  int splits_made_ = 0;
  CommCounters counters_;
};

}  // namespace llmft
