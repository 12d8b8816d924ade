#include "io/stall_watchdog.h"

#include <mpi.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <thread>

namespace llmft::io {
namespace {

using Clock = std::chrono::steady_clock;

// The one watchdog thread of the process, started by the first guard.
class Watchdog {
 public:
  static Watchdog& instance() {
    static Watchdog* watchdog = new Watchdog();  // never destroyed: its thread runs to exit
    return *watchdog;
  }

  void arm(std::string what, double limit_seconds) {
    int initialized = 0, rank = 0;
    MPI_Initialized(&initialized);
    if (initialized) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      what_ = std::move(what);
      limit_seconds_ = limit_seconds;
      rank_ = rank;
      deadline_ = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                     std::chrono::duration<double>(limit_seconds));
      armed_ = true;
    }
    changed_.notify_one();
  }

  void disarm() {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      armed_ = false;
    }
    changed_.notify_one();
  }

 private:
  Watchdog() : thread_([this] { watch(); }) { thread_.detach(); }

  void watch() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      changed_.wait(lock, [this] { return armed_; });
      if (changed_.wait_until(lock, deadline_, [this] { return !armed_; })) continue;
      std::fprintf(stderr,
                   "rank %d: error: %s has not returned after %g s: the file "
                   "system or another rank is stuck; ending the job\n",
                   rank_, what_.c_str(), limit_seconds_);
      std::fflush(stderr);
      _exit(1);
    }
  }

  std::mutex mutex_;
  std::condition_variable changed_;
  bool armed_ = false;
  std::string what_;
  double limit_seconds_ = 0;
  int rank_ = 0;
  Clock::time_point deadline_;
  std::thread thread_;
};

}  // namespace

StallGuard::StallGuard(std::string what, double limit_seconds) {
  Watchdog::instance().arm(std::move(what), limit_seconds);
}

StallGuard::~StallGuard() {
  Watchdog::instance().disarm();
}

}  // namespace llmft::io
