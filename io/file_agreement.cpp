#include "io/file_agreement.h"

#include <chrono>
#include <climits>
#include <thread>
#include <utility>

#include "core/error.h"

namespace llmft::io {

FileAgreement::FileAgreement(MPI_Comm comm, double timeout_seconds, std::string path)
    : comm_(comm), timeout_seconds_(timeout_seconds), path_(std::move(path)) {}

void FileAgreement::wait(MPI_Request& request, const char* what) const {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point deadline =
      Clock::now() +
      std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_seconds_));
  for (int polls = 0;; ++polls) {
    int done = 0;
    LLMFT_REQUIRE(MPI_Test(&request, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS,
                  "MPI_Test failed while the ranks " << what << " on " << path_);
    if (done) return;
    parted_ = Clock::now() >= deadline;
    LLMFT_REQUIRE(!parted_, "the ranks did not all reach the point where they "
                                << what << " on " << path_ << " within --comm-timeout "
                                << timeout_seconds_
                                << " s: another rank is "
                                   "stuck or has died");
    if (polls < 1000) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
}

void FileAgreement::agree(const std::string& local_failure) const {
  int rank = 0;
  MPI_Comm_rank(comm_, &rank);
  int first_failed = local_failure.empty() ? INT_MAX : rank;
  MPI_Request request;
  LLMFT_REQUIRE(MPI_Iallreduce(MPI_IN_PLACE, &first_failed, 1, MPI_INT, MPI_MIN, comm_, &request) ==
                    MPI_SUCCESS,
                "MPI_Iallreduce failed while the ranks agreed on " << path_);
  try {
    wait(request, "agree on a file operation");
  } catch (const Error& e) {
    if (local_failure.empty()) throw;
    throw Error(local_failure + ", and " + e.what());
  }
  if (first_failed == INT_MAX) return;
  // The failing rank's message, so that every rank reports the same error.
  int length = static_cast<int>(local_failure.size());
  LLMFT_REQUIRE(MPI_Ibcast(&length, 1, MPI_INT, first_failed, comm_, &request) == MPI_SUCCESS,
                "MPI_Ibcast failed on " << path_);
  wait(request, "share an error");
  std::string message = rank == first_failed ? local_failure : std::string(length, '\0');
  LLMFT_REQUIRE(
      MPI_Ibcast(message.data(), length, MPI_CHAR, first_failed, comm_, &request) == MPI_SUCCESS,
      "MPI_Ibcast failed on " << path_);
  wait(request, "share an error");
  throw Error(message);
}

uint64_t FileAgreement::sum(uint64_t value) const {
  MPI_Request request;
  LLMFT_REQUIRE(MPI_Iallreduce(MPI_IN_PLACE, &value, 1, MPI_UINT64_T, MPI_SUM, comm_, &request) ==
                    MPI_SUCCESS,
                "MPI_Iallreduce failed while summing digests of " << path_);
  wait(request, "sum a digest");
  return value;
}

}  // namespace llmft::io
