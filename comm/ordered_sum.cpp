#include "comm/ordered_sum.h"

#include <climits>
#include <vector>

#include "comm/mpi_reduce_ops.h"
#include "comm/mpi_runtime.h"
#include "core/error.h"
#include "core/float_traits.h"

namespace llmft {
namespace {

// out[i] = the f32 sum over r = 0, 1, ..., ranks - 1 (in that order) of contributions
// r * count + i, rounded once to the dtype.
template <typename T>
void add_in_rank_order(typename T::Storage* out, const typename T::Storage* contributions,
                       int ranks, int64_t count) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < count; ++i) {
    float sum = T::load(contributions[i]);
    for (int r = 1; r < ranks; ++r) sum += T::load(contributions[r * count + i]);
    out[i] = T::store(sum);
  }
}

// end - begin as an MPI count (elements; MPI counts and offsets are ints).
int block_count(int64_t begin, int64_t end, const std::string& description) {
  LLMFT_REQUIRE(begin <= end,
                "internal: " << description << " with a block ending before it starts");
  LLMFT_REQUIRE(end <= INT_MAX, description << " of " << end
                                            << " elements exceeds MPI's count limit of " << INT_MAX
                                            << "; split the buffer");
  return static_cast<int>(end - begin);
}

// block_begin of `numel` elements cut into `ranks` near-equal blocks (floor(r numel /
// ranks)).
std::vector<int64_t> even_blocks(int64_t numel, int ranks) {
  std::vector<int64_t> begin(static_cast<size_t>(ranks) + 1);
  for (int r = 0; r <= ranks; ++r) begin[r] = numel * r / ranks;
  return begin;
}

// The CommRequest of a sum: finishes the exchanges up to it, then its all-gather.
class OrderedSumRequest : public CommRequest {
 public:
  OrderedSumRequest(OrderedSums& sums, std::shared_ptr<OrderedSum> sum)
      : sums_(sums), sum_(std::move(sum)) {}
  void wait() override {
    sums_.exchange_through(*sum_);
    sum_->finish_gather();
  }

 private:
  OrderedSums& sums_;
  std::shared_ptr<OrderedSum> sum_;
};

}  // namespace

OrderedSum::OrderedSum(MPI_Comm exchange, MPI_Comm gather, Tensor send, Tensor result,
                       std::vector<int64_t> block_begin, std::string description,
                       double timeout_seconds)
    : gather_(gather),
      send_(send),
      result_(result),
      description_(std::move(description)),
      timeout_seconds_(timeout_seconds) {
  LLMFT_MPI_CHECK(MPI_Comm_rank(exchange, &rank_));
  LLMFT_MPI_CHECK(MPI_Comm_size(exchange, &ranks_));
  LLMFT_REQUIRE(static_cast<int>(block_begin.size()) == ranks_ + 1 && block_begin.front() == 0 &&
                    block_begin.back() == send.numel(),
                "internal: " << description_ << " cut into blocks that do not cover the buffer");
  for (int r = 0; r < ranks_; ++r) {
    offsets_.push_back(block_count(0, block_begin[r], description_));
    counts_.push_back(block_count(block_begin[r], block_begin[r + 1], description_));
  }
  const int mine = counts_[rank_];
  const bool whole = gather_ != MPI_COMM_NULL;
  LLMFT_REQUIRE(result.dtype == send.dtype && result.numel() == (whole ? send.numel() : mine),
                "internal: " << description_ << " into a result of the wrong size or dtype");
  received_.resize(static_cast<size_t>(mine) * ranks_ * dtype_size(send.dtype));
  std::vector<int> received_counts(ranks_, mine), received_offsets(ranks_);
  for (int r = 0; r < ranks_; ++r) received_offsets[r] = r * mine;
  const MPI_Datatype type = mpi_element_type(send.dtype);
  MPI_Request request;
  LLMFT_MPI_CHECK(MPI_Ialltoallv(send.data, counts_.data(), offsets_.data(), type, received_.data(),
                                 received_counts.data(), received_offsets.data(), type, exchange,
                                 &request));
  exchange_ = std::make_unique<MpiRequest>(request, description_, timeout_seconds_);
}

void OrderedSum::sum_received() {
  exchange_.reset();
  const bool whole = gather_ != MPI_COMM_NULL;
  void* out = static_cast<uint8_t*>(result_.data) +
              (whole ? static_cast<size_t>(offsets_[rank_]) * dtype_size(result_.dtype) : 0);
  with_float_type(send_.dtype, [&](auto traits) {
    using T = decltype(traits);
    add_in_rank_order<T>(static_cast<typename T::Storage*>(out),
                         reinterpret_cast<const typename T::Storage*>(received_.data()), ranks_,
                         counts_[rank_]);
  });
  received_ = {};
  if (!whole) return;
  MPI_Request request;
  LLMFT_MPI_CHECK(MPI_Iallgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, result_.data, counts_.data(),
                                  offsets_.data(), mpi_element_type(result_.dtype), gather_,
                                  &request));
  all_gather_ = std::make_unique<MpiRequest>(request, description_, timeout_seconds_);
}

bool OrderedSum::try_exchange() {
  if (exchange_ && exchange_->test()) sum_received();
  return exchanged();
}

void OrderedSum::finish_exchange() {
  if (!exchange_) return;
  exchange_->wait();
  sum_received();
}

void OrderedSum::finish_gather() {
  LLMFT_REQUIRE(exchanged(), "internal: " << description_ << " gathered before its exchange");
  if (!all_gather_) return;
  all_gather_->wait();
  all_gather_.reset();
}

std::unique_ptr<CommRequest> OrderedSums::start(Tensor send, Tensor result, bool all_reduce,
                                                std::string description, double timeout_seconds) {
  int ranks = 1;
  LLMFT_MPI_CHECK(MPI_Comm_size(exchange_, &ranks));
  std::vector<int64_t> blocks = even_blocks(send.numel(), ranks);
  if (!all_reduce) {
    for (int r = 0; r <= ranks; ++r) blocks[r] = r * result.numel();
  }
  auto sum =
      std::make_shared<OrderedSum>(exchange_, all_reduce ? gather_ : MPI_COMM_NULL, send, result,
                                   std::move(blocks), std::move(description), timeout_seconds);
  exchanging_.push_back(sum);
  return std::make_unique<OrderedSumRequest>(*this, std::move(sum));
}

void OrderedSums::progress() {
  while (!exchanging_.empty() && exchanging_.front()->try_exchange()) exchanging_.pop_front();
}

void OrderedSums::exchange_through(const OrderedSum& sum) {
  while (!sum.exchanged()) {
    exchanging_.front()->finish_exchange();
    exchanging_.pop_front();
  }
}

}  // namespace llmft
