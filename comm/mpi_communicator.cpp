#include "comm/mpi_communicator.h"

#include <climits>

#include "comm/mpi_reduce_ops.h"
#include "comm/mpi_request.h"
#include "comm/mpi_runtime.h"
#include "comm/ordered_sum.h"
#include "core/error.h"

namespace llmft {
namespace {

// MPI counts are ints; one collective moves at most INT_MAX elements per rank.
int mpi_count(int64_t elements, const char* collective) {
  LLMFT_REQUIRE(elements <= INT_MAX, collective << " of " << elements
                                                << " elements exceeds MPI's count limit of "
                                                << INT_MAX << "; split the buffer");
  return static_cast<int>(elements);
}

// REQUIRES of reduce_scatter and all_gather: `whole` is one `block` per rank.
void require_block_per_rank(const char* collective, const Tensor& whole, const Tensor& block,
                            int ranks) {
  LLMFT_REQUIRE(whole.dtype == block.dtype && whole.numel() == ranks * block.numel(),
                "internal: " << collective << " over " << ranks << " ranks of a "
                             << dtype_name(block.dtype) << " block " << shape_string(block.shape)
                             << " and a " << dtype_name(whole.dtype) << " whole "
                             << shape_string(whole.shape));
}

}  // namespace

MpiCommunicator::MpiCommunicator(MPI_Comm comm, double timeout_seconds) : comm_(comm) {
  set_timeout_seconds(timeout_seconds);
  LLMFT_MPI_CHECK(MPI_Comm_rank(comm_, &rank_));
  LLMFT_MPI_CHECK(MPI_Comm_size(comm_, &size_));
  LLMFT_MPI_CHECK(MPI_Comm_dup(comm_, &gather_comm_));
  sums_ = std::make_unique<OrderedSums>(comm_, gather_comm_);
}

MpiCommunicator::~MpiCommunicator() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  // A destructor cannot throw; a failure to free changes nothing for the caller.
  if (finalized) return;
  MPI_Comm_free(&gather_comm_);
  if (comm_ != MPI_COMM_WORLD) MPI_Comm_free(&comm_);
}

void MpiCommunicator::set_timeout_seconds(double seconds) {
  LLMFT_REQUIRE(seconds > 0, "the communication timeout must be positive, got " << seconds);
  timeout_seconds_ = seconds;
}

std::unique_ptr<CommRequest> MpiCommunicator::all_reduce(Tensor data, ReduceOp op) {
  const char* name = collective_name(Collective::all_reduce);
  sums_->progress();
  record_call(Collective::all_reduce, data.bytes());
  if (op == ReduceOp::sum) {
    return sums_->start(data, data, true, describe(name), timeout_seconds_);
  }
  MPI_Request request;
  LLMFT_MPI_CHECK(MPI_Iallreduce(MPI_IN_PLACE, data.data, mpi_count(data.numel(), name),
                                 mpi_element_type(data.dtype), mpi_max_op(data.dtype), comm_,
                                 &request));
  return std::make_unique<MpiRequest>(request, describe(name), timeout_seconds_);
}

std::unique_ptr<CommRequest> MpiCommunicator::reduce_scatter(Tensor send, Tensor recv) {
  const char* name = collective_name(Collective::reduce_scatter);
  require_block_per_rank(name, send, recv, size_);
  sums_->progress();
  record_call(Collective::reduce_scatter, send.bytes());
  return sums_->start(send, recv, false, describe(name), timeout_seconds_);
}

std::unique_ptr<CommRequest> MpiCommunicator::all_gather(Tensor send, Tensor recv) {
  const char* name = collective_name(Collective::all_gather);
  require_block_per_rank(name, recv, send, size_);
  const MPI_Datatype type = mpi_element_type(send.dtype);
  const int count = mpi_count(send.numel(), name);
  sums_->progress();
  MPI_Request request;
  LLMFT_MPI_CHECK(MPI_Iallgather(send.data, count, type, recv.data, count, type, comm_, &request));
  return started(Collective::all_gather, send.bytes(), request);
}

std::unique_ptr<CommRequest> MpiCommunicator::broadcast(Tensor data, int root) {
  const char* name = collective_name(Collective::broadcast);
  LLMFT_REQUIRE(root >= 0 && root < size_,
                "internal: " << name << " from rank " << root << " of " << size_);
  sums_->progress();
  MPI_Request request;
  LLMFT_MPI_CHECK(MPI_Ibcast(data.data, mpi_count(data.numel(), name), mpi_element_type(data.dtype),
                             root, comm_, &request));
  return started(Collective::broadcast, data.bytes(), request);
}

void MpiCommunicator::barrier() {
  MPI_Request request;
  LLMFT_MPI_CHECK(MPI_Ibarrier(comm_, &request));
  MpiRequest(request, describe("barrier"), timeout_seconds_).wait();
}

std::unique_ptr<Communicator> MpiCommunicator::split(int color, int key) {
  LLMFT_REQUIRE(color >= 0, "internal: split with negative color " << color);
  MPI_Comm group;
  LLMFT_MPI_CHECK(MPI_Comm_split(comm_, color, key, &group));
  auto communicator = std::make_unique<MpiCommunicator>(group, timeout_seconds_);
  communicator->set_context(context_);
  return communicator;
}

void MpiCommunicator::record_call(Collective collective, size_t bytes) {
  CollectiveCounter& counter = counters_[static_cast<int>(collective)];
  counter.calls += 1;
  counter.bytes += static_cast<int64_t>(bytes);
}

std::unique_ptr<CommRequest> MpiCommunicator::started(Collective collective, size_t bytes,
                                                      MPI_Request request) {
  record_call(collective, bytes);
  return std::make_unique<MpiRequest>(request, describe(collective_name(collective)),
                                      timeout_seconds_);
}

std::string MpiCommunicator::describe(const char* name) const {
  return context_.empty() ? std::string(name) : std::string(name) + " (" + context_ + ")";
}

}  // namespace llmft
