#include "comm/poll_wait.h"

#include <chrono>
#include <string>
#include <thread>

#include "comm/failure_notice.h"
#include "core/error.h"

namespace llmft {
namespace {

constexpr auto kSpinTime = std::chrono::milliseconds(10);
constexpr auto kPollInterval = std::chrono::microseconds(100);

}  // namespace

void poll_wait(const std::function<bool()>& done, const std::string& description,
               double timeout_seconds, const std::function<void()>& give_up) {
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + std::chrono::duration<double>(timeout_seconds);
  while (true) {
    if (done()) return;
    if (const auto notice = receive_failure_notice()) {
      if (give_up) give_up();
      throw PeerFailedError(description + " aborted: rank " + std::to_string(notice->rank) +
                            " failed: " + notice->message);
    }
    const auto now = std::chrono::steady_clock::now();
    if (now > deadline) {
      if (give_up) give_up();
      LLMFT_FAIL(description << " did not complete within " << timeout_seconds
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
