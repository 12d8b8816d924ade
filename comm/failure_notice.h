// Failure notices: how a rank that fails tells every other rank why, so that none of
// them waits in a collective for a peer that is about to die, and each one's error
// names the rank that failed first.
//
// Start-up: init_failure_notices() duplicates MPI_COMM_WORLD into a communicator that
// carries nothing but notices. It is collective over the world: call it once on every
// rank, after MPI_Init and before the first collective.
// Failing: report_failure(message) sends the message to every other rank (non-blocking
// sends), then waits, at most kFailureReportGraceSeconds, until the sends have completed
// and every other rank has reported back. A rank whose wait a notice ended reports its own
// failure in turn, so the grace period lets the peers print their errors before the
// caller's MPI_Abort ends the job. Then it returns; the caller aborts, unless every
// other rank reported the very same message: then all of them found the same error on
// their own (a bad option, a bad input, a diverged loss), and the caller may print it once,
// on rank 0, and end without MPI_Abort (launch/main.cpp).
// Waiting: every collective's wait (comm/mpi_request.h) polls receive_failure_notice(),
// an MPI_Iprobe on the notices' communicator, and fails with the notice's rank and text.
// A notice is received once: it ends the one wait that finds it.
//
// Before init_failure_notices(), report_failure does nothing and no notice arrives; with
// one rank there is no one to tell, and report_failure returns at once.
// Thread-safety: call from the thread that calls MPI (MPI_THREAD_FUNNELED).
#pragma once

#include <optional>
#include <string>

#include "core/error.h"

namespace llmft {

// A wait that a notice ended: this rank did not fail itself, another one did.
class PeerFailedError : public Error {
 public:
  using Error::Error;
};

constexpr double kFailureReportGraceSeconds = 2;

struct FailureNotice {
  int rank = 0;  // the failed rank, in MPI_COMM_WORLD
  std::string message;
};

// REQUIRES: MPI is initialised. Collective over MPI_COMM_WORLD; later calls do nothing.
void init_failure_notices();

// Tells every other rank that this one failed with `message`. Best effort: it never
// throws (an MPI error here is ignored, since the caller is about to abort). Returns true
// when, within the grace period, every other rank reported exactly `message` too.
bool report_failure(const std::string& message) noexcept;

// The next notice that another rank sent, if one has arrived.
std::optional<FailureNotice> receive_failure_notice();

}  // namespace llmft
