// Preemption: how a job that a scheduler is about to stop saves its state and asks to be
// requeued. While a PreemptionWatch lives, SIGTERM, SIGINT and SIGUSR1 (SLURM's
// --signal=USR1@SECONDS, scancel, mpirun's forwarding) only set a flag; the training loop
// asks stop_agreed() at every step boundary — one tiny all-reduce over the job, so all
// ranks stop after the same step even when only one of them got the signal — writes a
// checkpoint and ends with kPreemptedExitCode (without a checkpoint directory it ends with
// kInterruptedExitCode, saying nothing was saved). Rank 0 says on stderr when it got one.
// The same signal a second time ends the process at once (exit status 128 + the signal's
// number), saying so, without touching any complete checkpoint; a different one (mpirun's
// SIGTERM after the SIGINT of a Ctrl-C, which reached every rank already) changes nothing.
// Thread-safety: one watch per process, used from the thread that calls MPI.
#pragma once

#include <csignal>

namespace llmft {

// The exit code of a job that saved a checkpoint because it was signalled: requeue it
// and it resumes (EX_TEMPFAIL: "temporary failure, try again").
constexpr int kPreemptedExitCode = 75;
// The exit code of a job stopped by a signal with nothing to save (no --checkpoint-dir):
// 128 + SIGINT, as a shell reports a job it interrupted.
constexpr int kInterruptedExitCode = 130;

class PreemptionWatch {
 public:
  // Installs the handlers (only one watch may exist at a time).
  PreemptionWatch();
  // Restores the handlers that were there before.
  ~PreemptionWatch();
  PreemptionWatch(const PreemptionWatch&) = delete;
  PreemptionWatch& operator=(const PreemptionWatch&) = delete;

  // The first signal this process received (0: none).
  int signal_received() const;
  // Collective over MPI_COMM_WORLD: whether any rank has received a signal.
  bool stop_agreed(double timeout_seconds) const;

 private:
  struct sigaction previous_[3];
};

}  // namespace llmft
