#include "checkpoint/preemption.h"

#include <mpi.h>
#include <unistd.h>

#include "comm/mpi_request.h"
#include "comm/mpi_runtime.h"
#include "core/error.h"

namespace llmft {
namespace {

constexpr int kSignals[3] = {SIGTERM, SIGINT, SIGUSR1};
volatile std::sig_atomic_t first_signal = 0;
bool watching = false;

extern "C" void on_signal(int signal) {
  if (first_signal != 0) _exit(128 + signal);  // the second one: stop now
  first_signal = signal;
}

}  // namespace

PreemptionWatch::PreemptionWatch() {
  LLMFT_REQUIRE(!watching, "internal: a second PreemptionWatch");
  watching = true;
  first_signal = 0;
  struct sigaction action = {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;  // a write or an MPI poll in progress carries on
  for (int i = 0; i < 3; ++i) sigaction(kSignals[i], &action, &previous_[i]);
}

PreemptionWatch::~PreemptionWatch() {
  for (int i = 0; i < 3; ++i) sigaction(kSignals[i], &previous_[i], nullptr);
  watching = false;
}

int PreemptionWatch::signal_received() const {
  return first_signal;
}

bool PreemptionWatch::stop_agreed(double timeout_seconds) const {
  int local = first_signal != 0 ? 1 : 0, any = 0;
  MPI_Request request;
  LLMFT_MPI_CHECK(MPI_Iallreduce(&local, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &request));
  MpiRequest(request, "the preemption check at a step boundary", timeout_seconds).wait();
  return any != 0;
}

}  // namespace llmft
