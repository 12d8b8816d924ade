#include "comm/nccl_watchdog.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <utility>

namespace llmft {
namespace {

// How often the thread looks at the events it watches: far below any timeout, and rare
// enough to cost nothing beside the training thread.
constexpr auto kPollInterval = std::chrono::milliseconds(10);

}  // namespace

NcclWatchdog::NcclWatchdog(int device, int rank) : device_(device), rank_(rank) {}

NcclWatchdog::~NcclWatchdog() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void NcclWatchdog::watch(std::shared_ptr<const OwnedEvent> done, std::string description,
                         double timeout_seconds) {
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                            std::chrono::duration<double>(timeout_seconds));
  {
    std::lock_guard<std::mutex> lock(mutex_);
    watched_.push_back(Watched{std::move(done), std::move(description), timeout_seconds, deadline});
    if (!thread_.joinable()) thread_ = std::thread([this] { run(); });
  }
  changed_.notify_all();
}

void NcclWatchdog::run() {
  cudaSetDevice(device_);
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    changed_.wait_for(lock, kPollInterval, [this] { return stopping_; });
    if (stopping_) return;
    const auto now = std::chrono::steady_clock::now();
    // An event that reports an error counts as complete: the training thread meets the
    // error at its next CUDA call.
    watched_.erase(std::remove_if(watched_.begin(), watched_.end(),
                                  [](const Watched& w) {
                                    return cudaEventQuery(w.done->get()) != cudaErrorNotReady;
                                  }),
                   watched_.end());
    for (const Watched& w : watched_) {
      if (now > w.deadline) give_up(w);
    }
  }
}

void NcclWatchdog::give_up(const Watched& late) const {
  std::fprintf(stderr,
               "rank %d: error: %s did not complete within %g s after the compute stream was "
               "made to wait for it: a rank may have died or hung; raise --comm-timeout if a "
               "step legitimately takes longer\n",
               rank_, late.description.c_str(), late.timeout_seconds);
  std::fflush(stderr);
  std::_Exit(EXIT_FAILURE);
}

}  // namespace llmft
