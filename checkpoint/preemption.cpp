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
volatile std::sig_atomic_t world_rank = 0;
bool watching = false;

// write(2) of a C string: what a signal handler may call.
void say(const char* text) {
  size_t length = 0;
  while (text[length] != '\0') ++length;
  const ssize_t written = write(STDERR_FILENO, text, length);
  (void)written;  // nothing better to do in a handler
}

const char* name_of(int signal) {
  return signal == SIGTERM ? "SIGTERM" : signal == SIGINT ? "SIGINT" : "SIGUSR1";
}

extern "C" void on_signal(int signal) {
  if (first_signal == signal) {  // the same one again: stop now
    say("llmft: a second ");
    say(name_of(signal));
    say(": ending at once without saving; complete checkpoints are kept\n");
    _exit(128 + signal);
  }
  if (first_signal != 0) return;
  first_signal = signal;
  if (world_rank != 0) return;
  say("llmft: got ");
  say(name_of(signal));
  say(": stopping after this step (saving a checkpoint when there is a --checkpoint-dir); the "
      "same signal again ends the job at once\n");
}

}  // namespace

PreemptionWatch::PreemptionWatch() {
  LLMFT_REQUIRE(!watching, "internal: a second PreemptionWatch");
  watching = true;
  first_signal = 0;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  world_rank = rank;
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
