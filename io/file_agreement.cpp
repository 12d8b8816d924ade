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
  auto first_failed = std::make_unique<int>(local_failure.empty() ? INT_MAX : rank);
  MPI_Request request;
  LLMFT_REQUIRE(MPI_Iallreduce(MPI_IN_PLACE, first_failed.get(), 1, MPI_INT, MPI_MIN, comm_,
                               &request) == MPI_SUCCESS,
                "MPI_Iallreduce failed while the ranks agreed on " << path_);
  try {
    wait_for(request, "agree on a file operation", first_failed);
  } catch (const Error& e) {
    if (local_failure.empty()) throw;
    throw Error(local_failure + ", and " + e.what());
  }
  const int failed = *first_failed;
  if (failed == INT_MAX) return;
  // The failing rank's message, so that every rank reports the same error.
  auto length = std::make_unique<int>(static_cast<int>(local_failure.size()));
  LLMFT_REQUIRE(MPI_Ibcast(length.get(), 1, MPI_INT, failed, comm_, &request) == MPI_SUCCESS,
                "MPI_Ibcast failed on " << path_);
  wait_for(request, "share an error", length);
  auto message =
      std::make_unique<std::string>(rank == failed ? local_failure : std::string(*length, '\0'));
  LLMFT_REQUIRE(
      MPI_Ibcast(message->data(), *length, MPI_CHAR, failed, comm_, &request) == MPI_SUCCESS,
      "MPI_Ibcast failed on " << path_);
  wait_for(request, "share an error", message);
  throw Error(*message);
}

uint64_t FileAgreement::sum(uint64_t value) const {
  auto total = std::make_unique<uint64_t>(value);
  MPI_Request request;
  LLMFT_REQUIRE(MPI_Iallreduce(MPI_IN_PLACE, total.get(), 1, MPI_UINT64_T, MPI_SUM, comm_,
                               &request) == MPI_SUCCESS,
                "MPI_Iallreduce failed while summing digests of " << path_);
  wait_for(request, "sum a digest", total);
  return *total;
}

}  // namespace llmft::io
