#include "comm/nccl_communicator.h"

#include <exception>
#include <functional>
#include <utility>
#include <vector>

#include "comm/mpi_runtime.h"
#include "comm/poll_wait.h"
#include "core/cuda/cuda_check.h"
#include "core/error.h"

namespace llmft {
namespace {

ncclDataType_t nccl_type(DType dtype) {
  switch (dtype) {
    case DType::f32:
      return ncclFloat32;
    case DType::bf16:
      return ncclBfloat16;
    case DType::f16:
      return ncclFloat16;
    case DType::i32:
      return ncclInt32;
  }
  LLMFT_FAIL("internal: no NCCL type for " << dtype_name(dtype));
}

// A call's immediate result: done, or still in progress (non-blocking communicators).
void check_launch(ncclResult_t result, const std::string& what) {
  LLMFT_REQUIRE(result == ncclSuccess || result == ncclInProgress,
                "NCCL: " << what << " failed: " << ncclGetErrorString(result));
}

// Aborts the communicator and every one sharing its resources (comm/abort_family.h); the
// cause is the error the abort ends with.
void abort_nccl(NcclCommunicator::Handle& nccl, const std::string& cause) {
  nccl.family->abort(nccl.member, cause);
}

// Refuses work on a communicator that was aborted (naming the groups and the cause) or
// destroyed.
void require_usable(const NcclCommunicator::Handle& nccl, const std::string& what) {
  LLMFT_REQUIRE(!nccl.family->aborted(nccl.member),
                "NCCL: " << what << " refused: " << nccl.family->why_aborted(nccl.member));
  LLMFT_REQUIRE(nccl.comm != nullptr, "NCCL: " << what << ": the communicator was destroyed");
}

// Whether the communicator has finished what it was asked. On its asynchronous error it
// is aborted (its kernels would otherwise spin, and destroying it would wait for them)
// and the error thrown.
bool settled(NcclCommunicator::Handle& nccl, const std::string& what) {
  require_usable(nccl, what);
  ncclResult_t state = ncclSuccess;
  const ncclResult_t query = ncclCommGetAsyncError(nccl.comm, &state);
  if (query != ncclSuccess) state = query;
  if (state == ncclSuccess || state == ncclInProgress) return state == ncclSuccess;
  const std::string error = "NCCL: " + what + " failed: " + ncclGetErrorString(state);
  abort_nccl(nccl, error);
  throw Error(error);
}

// poll_wait on `nccl`: a wait that fails (the timeout, a failure notice, NCCL's error)
// aborts the communicator's family first, with the failure as the cause.
void poll_or_abort(NcclCommunicator::Handle& nccl, const std::function<bool()>& done,
                   const std::string& what, double timeout_seconds) {
  try {
    poll_wait(done, what, timeout_seconds);
  } catch (const std::exception& e) {
    abort_nccl(nccl, e.what());
    throw;
  }
}

// Waits until the (non-blocking) communicator has settled, within the timeout.
void wait_settled(NcclCommunicator::Handle& nccl, const std::string& what, double timeout_seconds) {
  poll_or_abort(
      nccl, [&] { return settled(nccl, what); }, what, timeout_seconds);
}

// Non-blocking, so that waits can time out; a split shares its parent's resources
// (buffers, proxy threads) instead of allocating its own.
ncclConfig_t non_blocking() {
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  config.splitShare = 1;
  return config;
}

class NcclRequest : public CommRequest {
 public:
  NcclRequest(std::shared_ptr<NcclCommunicator::Handle> nccl, std::shared_ptr<OwnedEvent> done,
              std::shared_ptr<NcclWatchdog> watchdog, cudaStream_t compute, std::string description,
              double timeout_seconds)
      : nccl_(std::move(nccl)),
        done_(std::move(done)),
        watchdog_(std::move(watchdog)),
        compute_(compute),
        description_(std::move(description)),
        timeout_seconds_(timeout_seconds) {}
  void wait() override {
    poll_or_abort(
        *nccl_,
        [this] {
          if (!settled(*nccl_, description_)) return false;
          const cudaError_t state = cudaEventQuery(done_->get());
          if (state == cudaErrorNotReady) return false;
          LLMFT_CUDA_CHECK(state);
          return true;
        },
        description_, timeout_seconds_);
    LLMFT_CUDA_CHECK(cudaStreamWaitEvent(compute_, done_->get(), 0));
  }

  void wait_on_device() override {
    settled(*nccl_, description_);  // refuses an aborted communicator, throws NCCL's error
    LLMFT_CUDA_CHECK(cudaStreamWaitEvent(compute_, done_->get(), 0));
    watchdog_->watch(done_, description_, timeout_seconds_);
  }

 private:
  std::shared_ptr<NcclCommunicator::Handle> nccl_;
  std::shared_ptr<OwnedEvent> done_;
  std::shared_ptr<NcclWatchdog> watchdog_;
  cudaStream_t compute_;
  std::string description_;
  double timeout_seconds_;
};

}  // namespace

NcclCommunicator::Handle::Handle(std::shared_ptr<AbortFamily> abort_family,
                                 const std::string& group)
    : family(std::move(abort_family)), member(family->join(group, [this] {
        if (comm) ncclCommAbort(comm);  // null: not made yet, or destroyed
        comm = nullptr;
      })) {}

NcclCommunicator::Handle::~Handle() {
  family->leave(member);
}

std::string nccl_library_version() {
  int version = 0;
  check_launch(ncclGetVersion(&version), "reading the version");
  // 10000 x major + 100 x minor + patch (NCCL 2.9 and later)
  return "NCCL " + std::to_string(version / 10000) + "." + std::to_string(version / 100 % 100) +
         "." + std::to_string(version % 100);
}

NcclCommunicator::NcclCommunicator(MPI_Comm comm, CudaBackend& backend, double timeout_seconds,
                                   std::string group_name)
    : NcclCommunicator(comm, nullptr, backend, timeout_seconds, std::move(group_name)) {}

NcclCommunicator::NcclCommunicator(MPI_Comm comm, std::shared_ptr<Handle> nccl,
                                   CudaBackend& backend, double timeout_seconds,
                                   std::string group_name)
    : nccl_(std::move(nccl)),
      backend_(backend),
      stream_(backend.device()),
      timeout_seconds_(timeout_seconds),
      group_name_(std::move(group_name)) {
  LLMFT_MPI_CHECK(MPI_Comm_dup(comm, &mpi_));
  // The destructor does not run for a constructor that throws: what was made so far (the
  // duplicate, a half-made NCCL communicator) is undone here.
  try {
    LLMFT_MPI_CHECK(MPI_Comm_rank(mpi_, &rank_));
    LLMFT_MPI_CHECK(MPI_Comm_size(mpi_, &size_));
    int world_rank = 0;  // what the watchdog's error names
    LLMFT_MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &world_rank));
    watchdog_ = std::make_shared<NcclWatchdog>(backend_.device(), world_rank);
    if (nccl_) return;  // made by split()
    ncclUniqueId id;
    if (rank_ == 0) check_launch(ncclGetUniqueId(&id), "making the unique id");
    LLMFT_MPI_CHECK(MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, mpi_));
    nccl_ = std::make_shared<Handle>(std::make_shared<AbortFamily>(), group_name_);
    ncclConfig_t config = non_blocking();
    check_launch(ncclCommInitRankConfig(&nccl_->comm, size_, id, rank_, &config),
                 describe("creating the communicator"));
    wait_settled(*nccl_, describe("creating the communicator"), timeout_seconds_);
  } catch (const std::exception& e) {
    if (nccl_) abort_nccl(*nccl_, e.what());
    MPI_Comm_free(&mpi_);
    throw;
  }
}

NcclCommunicator::~NcclCommunicator() {
  // Finalizing waits for the communicator's queued collectives, which may never finish
  // while an error unwinds (another group's wait failed): abort instead.
  if (std::uncaught_exceptions() > 0) {
    abort_nccl(*nccl_, describe("destroying the communicator") + " while an error unwinds");
  }
  if (nccl_->comm) {
    // Non-blocking: finalize flushes what is queued (in progress until done, within the
    // timeout), then destroy frees the local resources; a failure on the way aborts.
    try {
      check_launch(ncclCommFinalize(nccl_->comm), describe("finalizing the communicator"));
      wait_settled(*nccl_, describe("finalizing the communicator"), timeout_seconds_);
    } catch (const std::exception& e) {
      abort_nccl(*nccl_, e.what());
    }
    if (nccl_->comm) ncclCommDestroy(nccl_->comm);
  }
  // Requests that outlive the communicator find it gone instead of a freed handle, and a
  // later abort of its family leaves it alone.
  nccl_->comm = nullptr;
  nccl_->family->leave(nccl_->member);
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Comm_free(&mpi_);
}

template <typename Launch>
std::unique_ptr<CommRequest> NcclCommunicator::run(Collective collective, size_t bytes,
                                                   Launch&& launch) {
  const std::string description = describe(collective_name(collective));
  require_usable(*nccl_, description);
  CollectiveCounter& counter = counters_[static_cast<int>(collective)];
  counter.calls += 1;
  counter.bytes += static_cast<int64_t>(bytes);
  const cudaStream_t compute = backend_.compute_stream();
  // The collective reads what the compute stream has queued so far.
  order_after(stream_.get(), compute, compute_queued_);
  const ncclResult_t launched = launch(stream_.get());
  check_launch(launched, description);
  // A non-blocking communicator may still be enqueueing the collective (ncclInProgress):
  // it is on the stream, and the communicator usable again, once it has settled.
  if (launched == ncclInProgress) wait_settled(*nccl_, description, timeout_seconds_);
  auto done = std::make_shared<OwnedEvent>();
  LLMFT_CUDA_CHECK(cudaEventRecord(done->get(), stream_.get()));
  return std::make_unique<NcclRequest>(nccl_, std::move(done), watchdog_, compute, description,
                                       timeout_seconds_);
}

std::unique_ptr<CommRequest> NcclCommunicator::all_reduce(Tensor data, ReduceOp op) {
  const ncclRedOp_t nccl_op = op == ReduceOp::sum ? ncclSum : ncclMax;
  return run(Collective::all_reduce, data.bytes(), [&](cudaStream_t stream) {
    return ncclAllReduce(data.data, data.data, static_cast<size_t>(data.numel()),
                         nccl_type(data.dtype), nccl_op, nccl_->comm, stream);
  });
}

std::unique_ptr<CommRequest> NcclCommunicator::reduce_scatter(Tensor send, Tensor recv) {
  LLMFT_REQUIRE(send.numel() == recv.numel() * size_ && send.dtype == recv.dtype,
                "internal: reduce_scatter of " << send.numel() << " into " << recv.numel()
                                               << " elements over " << size_ << " ranks");
  return run(Collective::reduce_scatter, send.bytes(), [&](cudaStream_t stream) {
    return ncclReduceScatter(send.data, recv.data, static_cast<size_t>(recv.numel()),
                             nccl_type(send.dtype), ncclSum, nccl_->comm, stream);
  });
}

std::unique_ptr<CommRequest> NcclCommunicator::all_gather(Tensor send, Tensor recv) {
  LLMFT_REQUIRE(recv.numel() == send.numel() * size_ && send.dtype == recv.dtype,
                "internal: all_gather of " << send.numel() << " into " << recv.numel()
                                           << " elements over " << size_ << " ranks");
  return run(Collective::all_gather, send.bytes(), [&](cudaStream_t stream) {
    return ncclAllGather(send.data, recv.data, static_cast<size_t>(send.numel()),
                         nccl_type(send.dtype), nccl_->comm, stream);
  });
}

std::unique_ptr<CommRequest> NcclCommunicator::broadcast(Tensor data, int root) {
  return run(Collective::broadcast, data.bytes(), [&](cudaStream_t stream) {
    return ncclBroadcast(data.data, data.data, static_cast<size_t>(data.numel()),
                         nccl_type(data.dtype), root, nccl_->comm, stream);
  });
}

void NcclCommunicator::warm_up(DType dtype) {
  // NCCL picks an algorithm and protocol by a call's size and connects an algorithm's
  // channels (allocating their buffers) the first time it runs: a small, a middling and a
  // large call of every collective reach what the run's collectives will.
  constexpr size_t kSizes[] = {size_t{4} << 10, size_t{1} << 20, size_t{64} << 20};
  constexpr size_t kScratch = kSizes[2];
  void* scratch = nullptr;
  LLMFT_CUDA_CHECK(cudaMalloc(&scratch, kScratch));
  LLMFT_CUDA_CHECK(cudaMemsetAsync(scratch, 0, kScratch, backend_.compute_stream()));
  std::vector<DType> dtypes = {DType::f32};
  if (dtype != DType::f32) dtypes.push_back(dtype);
  for (DType type : dtypes) {
    for (size_t bytes : kSizes) {
      const int64_t per_rank = static_cast<int64_t>(bytes / dtype_size(type)) / size_;
      const Tensor whole(scratch, type, {per_rank * size_});
      // In place, as NCCL defines it: this rank's part of the whole.
      const Tensor mine(static_cast<char*>(scratch) + rank_ * per_rank * dtype_size(type), type,
                        {per_rank});
      all_reduce(whole, ReduceOp::sum)->wait();
      reduce_scatter(whole, mine)->wait();
      all_gather(mine, whole)->wait();
      broadcast(whole, 0)->wait();
    }
  }
  all_reduce(Tensor(scratch, DType::f32, {1}), ReduceOp::max)->wait();
  backend_.synchronize();
  LLMFT_CUDA_CHECK(cudaFree(scratch));
  counters_ = {};
}

void NcclCommunicator::barrier() {
  MPI_Request request;
  LLMFT_MPI_CHECK(MPI_Ibarrier(mpi_, &request));
  poll_wait(
      [&] {
        int done = 0;
        LLMFT_MPI_CHECK(MPI_Test(&request, &done, MPI_STATUS_IGNORE));
        return done != 0;
      },
      describe("barrier"), timeout_seconds_);
}

std::unique_ptr<Communicator> NcclCommunicator::split(int color, int key) {
  LLMFT_REQUIRE(color >= 0, "internal: split with negative color " << color);
  MPI_Comm group;
  LLMFT_MPI_CHECK(MPI_Comm_split(mpi_, color, key, &group));
  splits_made_ += 1;
  const std::string name =
      group_name_ + "/split" + std::to_string(splits_made_) + ":" + std::to_string(color);
  // Shares this communicator's resources (non_blocking), so it joins its abort family.
  auto nccl = std::make_shared<Handle>(nccl_->family, name);
  // On an error the split's MPI group is freed and its half-made NCCL communicator
  // aborted (once `part` owns it, its destructor aborts it while the error unwinds).
  try {
    require_usable(*nccl_, describe("splitting the communicator"));
    ncclConfig_t config = non_blocking();
    check_launch(ncclCommSplit(nccl_->comm, color, key, &nccl->comm, &config),
                 describe("splitting the communicator"));
    wait_settled(*nccl_, describe("splitting the communicator"), timeout_seconds_);
    std::unique_ptr<NcclCommunicator> part(
        new NcclCommunicator(group, nccl, backend_, timeout_seconds_, name));
    MPI_Comm_free(&group);
    wait_settled(*nccl, part->describe("joining the split communicator"), timeout_seconds_);
    part->set_context(context_);
    return part;
  } catch (const std::exception& e) {
    abort_nccl(*nccl, e.what());
    if (group != MPI_COMM_NULL) MPI_Comm_free(&group);
    throw;
  }
}

std::string NcclCommunicator::describe(const char* name) const {
  std::string text = std::string("NCCL ") + name + " in group " + group_name_;
  return context_.empty() ? text : text + " (" + context_ + ")";
}

}  // namespace llmft
