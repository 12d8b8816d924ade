// MpiRequest: a CommRequest over one MPI request of a non-blocking collective.
// wait() polls MPI_Test (yielding the core between polls, and sleeping briefly once the
// wait has lasted a while). It fails with an llmft::Error when the timeout passes, counted
// from the call to wait(), and at once when another rank has reported a failure
// (comm/failure_notice.h).
// A wait that failed leaves the collective in flight, its buffers still in MPI's use: MPI
// can neither cancel nor free the request of a collective. wait() may be called again
// (the timeout restarts); destroying the request leaves the collective to MPI, which is
// safe only if the job is about to abort or the buffers outlive the collective.
// Thread-safety: one thread, the one that calls MPI.
#pragma once

#include <mpi.h>

#include <string>

#include "comm/communicator.h"

namespace llmft {

class MpiRequest : public CommRequest {
 public:
  // `description` names the collective and the place, e.g. "all_reduce (step 12)".
  // REQUIRES: timeout_seconds > 0
  MpiRequest(MPI_Request request, std::string description, double timeout_seconds);
  MpiRequest(const MpiRequest&) = delete;
  MpiRequest& operator=(const MpiRequest&) = delete;

  void wait() override;
  // One poll, never blocking: whether the collective has completed.
  bool test();

 private:
  MPI_Request request_;
  std::string description_;
  double timeout_seconds_;
};

}  // namespace llmft
