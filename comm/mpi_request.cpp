#include "comm/mpi_request.h"

#include <chrono>
#include <thread>

#include "comm/failure_notice.h"
#include "comm/mpi_runtime.h"
#include "core/error.h"

namespace llmft {
namespace {

// Short waits poll as fast as the scheduler allows; longer ones sleep between polls so
// that a waiting rank leaves the cores to the ranks still computing.
constexpr auto kSpinTime = std::chrono::milliseconds(10);
constexpr auto kPollInterval = std::chrono::microseconds(100);

}  // namespace

MpiRequest::MpiRequest(MPI_Request request, std::string description, double timeout_seconds)
    : request_(request), description_(std::move(description)), timeout_seconds_(timeout_seconds) {}

bool MpiRequest::test() {
  int done = 0;
  LLMFT_MPI_CHECK(MPI_Test(&request_, &done, MPI_STATUS_IGNORE));
  return done != 0;
}

void MpiRequest::wait() {
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + std::chrono::duration<double>(timeout_seconds_);
  while (true) {
    if (test()) return;
    if (const auto notice = receive_failure_notice()) {
      LLMFT_FAIL(description_ << " aborted: rank " << notice->rank
                              << " failed: " << notice->message);
    }
    const auto now = std::chrono::steady_clock::now();
    if (now > deadline) {
      LLMFT_FAIL(description_ << " did not complete within " << timeout_seconds_
                              << " s: a rank may have died or hung; raise --comm-timeout if a "
                                 "step legitimately takes longer");
    }
    if (now - start < kSpinTime) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(kPollInterval);
    }
  }
}

}  // namespace llmft
