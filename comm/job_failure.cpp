#include "comm/job_failure.h"

#include <chrono>
#include <cstdio>
#include <thread>

#include "comm/failure_notice.h"

namespace llmft {

int end_job_after_error(const std::exception& error, int exit_code, MpiRuntime& mpi) {
  if (mpi.size() == 1) {
    std::fprintf(stderr, "error: %s\n", error.what());
    mpi.abort(exit_code);
  }
  const bool peer_failed = dynamic_cast<const PeerFailedError*>(&error) != nullptr;
  if (peer_failed) {
    std::fprintf(stderr, "rank %d: error: %s\n", mpi.rank(), error.what());
    std::fflush(stderr);
  }
  if (report_failure(error.what()) && !peer_failed) {
    if (mpi.rank() == 0) std::fprintf(stderr, "error: %s\n", error.what());
    return exit_code;
  }
  if (peer_failed) {
    std::this_thread::sleep_for(std::chrono::duration<double>(kFailureReportGraceSeconds));
  } else {
    std::fprintf(stderr, "rank %d: error: %s\n", mpi.rank(), error.what());
    std::fflush(stderr);
  }
  mpi.abort(exit_code);
}

}  // namespace llmft
