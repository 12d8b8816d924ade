// FileAgreement: how the ranks that share one parallel file keep in step. Parallel HDF5
// runs collectives inside its calls, so a rank that fails one call and leaves (closing the
// file, itself a collective) while another rank goes on to the next call would leave both
// waiting in different collectives forever. Every collective step of an Hdf5File is
// therefore followed by agree(): all ranks learn whether any failed, and all throw the same
// error (the lowest failing rank's), so they close the file together and the job reports
// the error once. Every wait here is bounded by the job's --comm-timeout.
// Thread-safety: one thread, the one that calls MPI.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <exception>
#include <memory>
#include <string>

namespace llmft::io {

// The text of an error thrown by `work`, "" when it succeeded: what a rank brings to the
// agreement that follows a collective step.
template <typename Work>
std::string failure_of(Work work) {
  try {
    work();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

class FileAgreement {
 public:
  // `path` names the file in errors; `timeout_seconds` bounds every wait (> 0).
  FileAgreement(MPI_Comm comm, double timeout_seconds, std::string path);

  // Collective: `local_failure` is this rank's error ("" when it succeeded). Throws, on
  // every rank alike, an llmft::Error with the message of the lowest rank that failed. When
  // the other ranks do not come within the timeout (one of them is stuck inside a library
  // call), throws this rank's own failure and the wait's, and the ranks have parted.
  void agree(const std::string& local_failure) const;

  // Whether a wait timed out: the ranks are no longer in step, and no further collective
  // on the file (closing it included) may be started.
  bool parted() const { return parted_; }

  // Collective: the sum over the ranks of `value`, modulo 2^64.
  uint64_t sum(uint64_t value) const;

  double timeout_seconds() const { return timeout_seconds_; }
  MPI_Comm comm() const { return comm_; }

 private:
  // Waits for `request` at most the timeout; throws naming `what` when it passes.
  void wait(MPI_Request& request, const char* what) const;
  // The same for a collective on `buffer`, which is left to MPI when the wait times out
  // (the collective may still write it) instead of being freed under it.
  template <typename T>
  void wait_for(MPI_Request& request, const char* what, std::unique_ptr<T>& buffer) const {
    try {
      wait(request, what);
    } catch (...) {
      buffer.release();
      throw;
    }
  }

  MPI_Comm comm_;
  double timeout_seconds_;
  std::string path_;
  mutable bool parted_ = false;
};

}  // namespace llmft::io
