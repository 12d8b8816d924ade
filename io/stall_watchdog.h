// StallWatchdog: a bound on calls that wait inside a library llmft cannot interrupt (the
// collectives parallel HDF5 runs inside MPI-IO). A StallGuard arms it for one call; if
// the call has not returned when its limit passes, a background thread prints one line
// naming the rank, the call and the limit on stderr and ends this process (exit code 1),
// which makes the MPI launcher end the whole job. A call that returns in time costs a
// mutex and a condition variable signal.
// Thread-safety: guards may be armed from any thread, one at a time per process.
#pragma once

#include <string>

namespace llmft::io {

class StallGuard {
 public:
  // Arms the watchdog: `what` names the call ("writing dataset 'x' of FILE").
  // REQUIRES: limit_seconds > 0, no other guard is armed.
  StallGuard(std::string what, double limit_seconds);
  // Disarms it.
  ~StallGuard();
  StallGuard(const StallGuard&) = delete;
  StallGuard& operator=(const StallGuard&) = delete;
};

}  // namespace llmft::io
