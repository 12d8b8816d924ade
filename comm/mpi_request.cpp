#include "comm/mpi_request.h"

#include "comm/mpi_runtime.h"
#include "comm/poll_wait.h"

namespace llmft {

MpiRequest::MpiRequest(MPI_Request request, std::string description, double timeout_seconds)
    : request_(request), description_(std::move(description)), timeout_seconds_(timeout_seconds) {}

bool MpiRequest::test() {
  int done = 0;
  LLMFT_MPI_CHECK(MPI_Test(&request_, &done, MPI_STATUS_IGNORE));
  return done != 0;
}

void MpiRequest::wait() {
  poll_wait([this] { return test(); }, description_, timeout_seconds_);
}

}  // namespace llmft
