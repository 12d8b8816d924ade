// NcclWatchdog: the bound on collectives that the compute stream waits for on the device
// (CommRequest::wait_on_device). Such a wait returns to the host at once, so no host poll
// sees a collective that never completes (a peer died or hung): the compute stream stalls
// behind it, and with it the host's next blocking call on that stream (a copy of the loss,
// a synchronize), which has no timeout of its own. A thread of the communicator's watches
// each such collective's completion event against its deadline (the communicator's timeout,
// counted from the wait); one that passes it ends the process with an error naming the
// collective, the group and the context, and the launcher then ends the job as it does for
// a rank that fails. (Aborting NCCL from the watchdog instead would let the stalled stream
// run on with garbage in place of the result, into the step's loss and a checkpoint.)
// Thread-safety: watch() from the communicator's thread; the watching thread touches
// nothing but the watched CUDA events and its own list.
#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "comm/cuda_stream_order.h"

namespace llmft {

class NcclWatchdog {
 public:
  // Watches events of GPU `device` (the watching thread makes it current); `rank` names the
  // process in the error.
  NcclWatchdog(int device, int rank);
  ~NcclWatchdog();
  NcclWatchdog(const NcclWatchdog&) = delete;
  NcclWatchdog& operator=(const NcclWatchdog&) = delete;

  // Ends the process unless `done` completes within `timeout_seconds` from now.
  // `description` names the collective, its group and context.
  void watch(std::shared_ptr<const OwnedEvent> done, std::string description,
             double timeout_seconds);

 private:
  struct Watched {
    std::shared_ptr<const OwnedEvent> done;
    std::string description;
    double timeout_seconds;
    std::chrono::steady_clock::time_point deadline;
  };
  void run();
  // Ends the process: `late` did not complete in time.
  [[noreturn]] void give_up(const Watched& late) const;

  int device_;
  int rank_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<Watched> watched_;
  bool stopping_ = false;
  std::thread thread_;  // started at the first watch
};

}  // namespace llmft
