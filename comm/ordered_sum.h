// OrderedSums: the sums over a group's ranks behind MpiCommunicator's all_reduce (sum) and
// reduce_scatter, built so that their results depend neither on the MPI library nor on
// the collective algorithm it would pick for the message size and the number of ranks:
// every element is accumulated in f32 from the contributions of ranks 0, 1, ..., n-1, in
// that order, and rounded once to the tensor's dtype. Every rank therefore receives the
// same values, and an all-reduce equals a reduce-scatter followed by an all-gather bit for
// bit (so ZeRO stages that differ only in how they reduce train identically).
//
// How: an exchange (MPI_Ialltoallv) hands rank r block r of every rank's buffer (per rank
// (n-1)/n of the buffer, what a ring reduce-scatter moves); rank r adds its block up in
// rank order; an all-reduce then all-gathers the summed blocks (MPI_Iallgatherv, another
// (n-1)/n). Both phases are non-blocking. MPI requires every rank to start the
// collectives of a communicator in the same order, but when an exchange completes differs
// from rank to rank, so the all-gathers run on a communicator of their own and start in
// the order the sums were started: a sum's all-gather starts only after every earlier
// sum's has. progress() (MpiCommunicator calls it whenever it starts a collective, the
// points where MPI progresses anyway) moves the oldest sums on without blocking; a wait
// finishes the exchanges up to its own. Waits fail as MpiRequest's do (a timeout per
// phase, failure notices).
// Thread-safety: the thread that calls MPI.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "comm/mpi_request.h"
#include "core/tensor.h"

namespace llmft {

// One sum in flight.
class OrderedSum {
 public:
  // Sums `send` (f32, bf16 or fp16) over the ranks of `exchange`. block_begin (size n + 1)
  // cuts send into one block per rank. Rank r's summed block is written to `result`: with
  // a `gather` communicator (the same ranks as exchange), result is a whole buffer like
  // send (it may be send itself) and every rank's block lands at its place in it; with
  // MPI_COMM_NULL, result holds rank r's block only. `description` names the collective
  // for errors, e.g. "all_reduce (step 3)".
  // REQUIRES: block_begin is non-decreasing from 0 to send.numel(), every offset fits an
  // int; result's size as above, of send's dtype.
  OrderedSum(MPI_Comm exchange, MPI_Comm gather, Tensor send, Tensor result,
             std::vector<int64_t> block_begin, std::string description, double timeout_seconds);
  OrderedSum(const OrderedSum&) = delete;
  OrderedSum& operator=(const OrderedSum&) = delete;

  // Whether the exchange is over (and the all-gather, if any, started).
  bool exchanged() const { return exchange_ == nullptr; }
  // Ends the exchange if it has completed, without blocking; returns exchanged().
  bool try_exchange();
  // Ends the exchange, blocking until it completes.
  void finish_exchange();
  // Blocks until the all-gather completes. REQUIRES: exchanged()
  void finish_gather();

 private:
  // Adds this rank's block up in rank order, then starts the all-gather, if any.
  void sum_received();

  MPI_Comm gather_;
  int rank_ = 0, ranks_ = 1;
  Tensor send_, result_;
  std::vector<int> counts_, offsets_;  // elements of each rank's block, and where it starts
  std::string description_;
  double timeout_seconds_;
  std::vector<uint8_t> received_;  // every rank's copy of this rank's block, in rank order
  std::unique_ptr<MpiRequest> exchange_, all_gather_;
};

// The sums of one communicator, in the order they were started.
class OrderedSums {
 public:
  // Sums over `exchange`; all-reduces gather over `gather` (a duplicate of exchange that
  // nothing else uses). Neither is owned.
  OrderedSums(MPI_Comm exchange, MPI_Comm gather) : exchange_(exchange), gather_(gather) {}

  // Starts an all-reduce (`all_reduce`: result is send itself, cut into near-equal
  // blocks) or a reduce-scatter (send is one result-sized block per rank). The request
  // may not outlive this object.
  std::unique_ptr<CommRequest> start(Tensor send, Tensor result, bool all_reduce,
                                     std::string description, double timeout_seconds);
  // Ends the exchanges that have completed, oldest first, without blocking.
  void progress();
  // Ends the exchanges of every sum up to `sum`, oldest first, blocking.
  void exchange_through(const OrderedSum& sum);

 private:
  MPI_Comm exchange_, gather_;
  std::deque<std::shared_ptr<OrderedSum>> exchanging_;  // oldest first
};

}  // namespace llmft
