#include "io/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <ctime>

#include "core/error.h"

extern char** environ;

namespace llmft::io {
namespace {

// Both ends of a pipe, closed when it goes out of scope.
struct Pipe {
  int read_end = -1;
  int write_end = -1;

  Pipe() {
    int ends[2];
    LLMFT_REQUIRE(pipe2(ends, O_CLOEXEC) == 0, "cannot create a pipe: " << std::strerror(errno));
    read_end = ends[0];
    write_end = ends[1];
  }
  ~Pipe() {
    close_read();
    close_write();
  }
  Pipe(const Pipe&) = delete;
  Pipe& operator=(const Pipe&) = delete;

  void close_read() { close_fd(read_end); }
  void close_write() { close_fd(write_end); }

 private:
  static void close_fd(int& fd) {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
};

// Blocks SIGPIPE in this thread while alive, so that writing to a child that has exited
// fails with EPIPE instead of ending the process; discards a SIGPIPE raised meanwhile.
class SigpipeBlock {
 public:
  SigpipeBlock() {
    sigemptyset(&pipe_only_);
    sigaddset(&pipe_only_, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_only_, &previous_);
  }
  ~SigpipeBlock() {
    const timespec no_wait{0, 0};
    while (sigtimedwait(&pipe_only_, nullptr, &no_wait) > 0) {
    }
    pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
  }
  SigpipeBlock(const SigpipeBlock&) = delete;
  SigpipeBlock& operator=(const SigpipeBlock&) = delete;

 private:
  sigset_t pipe_only_;
  sigset_t previous_;
};

// The child process: stopped (SIGKILL) and reaped when it goes out of scope unreaped, so
// an error or a timeout leaves neither a running child nor a zombie.
class Child {
 public:
  explicit Child(pid_t pid) : pid_(pid) {}
  ~Child() {
    if (pid_ < 0) return;
    ::kill(pid_, SIGKILL);
    int status = 0;
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
  }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  // Waits for the child to end: its exit code, or 128 + the signal that ended it.
  int wait(const std::string& name) {
    int status = 0;
    while (waitpid(pid_, &status, 0) < 0) {
      LLMFT_REQUIRE(errno == EINTR,
                    "waiting for '" << name << "' failed: " << std::strerror(errno));
    }
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

 private:
  pid_t pid_;
};

pid_t spawn(const std::vector<std::string>& argv, Pipe& in, Pipe& out, Pipe& err) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in.read_end, STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, out.write_end, STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err.write_end, STDERR_FILENO);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t no_signals;
  sigemptyset(&no_signals);
  posix_spawnattr_setsigmask(&attributes, &no_signals);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK);
  std::vector<char*> args;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  const int error = posix_spawnp(&pid, args[0], &actions, &attributes, args.data(), environ);
  posix_spawnattr_destroy(&attributes);
  posix_spawn_file_actions_destroy(&actions);
  LLMFT_REQUIRE(error == 0, "cannot run '" << argv[0] << "': " << std::strerror(error));
  return pid;
}

// Writes `input` to in.write_end (non-blocking, so that a child busy writing its output
// never waits on us while we wait on it) and reads out.read_end and err.read_end until both
// end; throws when that takes longer than `timeout_seconds`.
void exchange(const std::string& name, const std::string& input, double timeout_seconds, Pipe& in,
              Pipe& out, Pipe& err, SubprocessResult& result) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point deadline =
      Clock::now() +
      std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_seconds));
  size_t written = 0;
  if (input.empty()) in.close_write();
  if (in.write_end >= 0) {
    LLMFT_REQUIRE(
        fcntl(in.write_end, F_SETFL, fcntl(in.write_end, F_GETFL) | O_NONBLOCK) == 0,
        "cannot make the pipe to '" << name << "' non-blocking: " << std::strerror(errno));
  }
  char buffer[65536];
  while (in.write_end >= 0 || out.read_end >= 0 || err.read_end >= 0) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    LLMFT_REQUIRE(left.count() > 0, "'" << name << "' did not finish within " << timeout_seconds
                                        << " s and was stopped");
    pollfd fds[3] = {
        {in.write_end, POLLOUT, 0}, {out.read_end, POLLIN, 0}, {err.read_end, POLLIN, 0}};
    if (poll(fds, 3, static_cast<int>(std::min<int64_t>(left.count(), 1000))) < 0) {
      LLMFT_REQUIRE(errno == EINTR,
                    "poll on the pipes of '" << name << "' failed: " << std::strerror(errno));
      continue;
    }
    if (fds[0].revents != 0) {
      const ssize_t n = ::write(in.write_end, input.data() + written, input.size() - written);
      if (n > 0) written += static_cast<size_t>(n);
      // EPIPE: the child closed its stdin; its exit status says why. EAGAIN: the pipe is
      // full again; poll says when it drains.
      if ((n < 0 && errno != EINTR && errno != EAGAIN) || written == input.size()) {
        in.close_write();
      }
    }
    for (int i = 1; i < 3; ++i) {
      if (fds[i].revents == 0) continue;
      Pipe& pipe = i == 1 ? out : err;
      const ssize_t n = ::read(pipe.read_end, buffer, sizeof buffer);
      if (n > 0) {
        (i == 1 ? result.out : result.err).append(buffer, static_cast<size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        pipe.close_read();
      }
    }
  }
}

}  // namespace

SubprocessResult run_subprocess(const std::vector<std::string>& argv, const std::string& input,
                                double timeout_seconds) {
  SigpipeBlock sigpipe_blocked;
  Pipe in, out, err;
  Child child(spawn(argv, in, out, err));
  in.close_read();
  out.close_write();
  err.close_write();
  SubprocessResult result;
  exchange(argv[0], input, timeout_seconds, in, out, err, result);
  result.exit_status = child.wait(argv[0]);
  return result;
}

}  // namespace llmft::io
