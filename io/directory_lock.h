// DirectoryLock: an output directory (--checkpoint-dir, --save-dir) belongs to one job at a
// time. The lock is an flock(2) on the file ".llmft.lock" inside the directory, held for
// the lock's lifetime; the file says who holds it (host, process, start time, command).
// The kernel releases the lock when the holder ends however it ends (kill -9 included), so
// a lock file left behind is stale and the next job takes it over; a job that finds the
// lock held is refused, naming the directory and the holder. On a filesystem without
// locks (some Lustre mounts) the lock cannot be taken: a warning says so and the job goes
// on unprotected.
// Thread-safety: one thread; one lock per directory per process.
#pragma once

#include <string>

namespace llmft::io {

class DirectoryLock {
 public:
  // Locks `dir` (which exists) for this job; `option` names it in errors and `command`
  // describes this job in the lock file. Throws llmft::Error when another job holds it.
  DirectoryLock(const std::string& dir, const std::string& option, const std::string& command);
  // Releases the lock (the file stays: an unheld lock file is stale by definition).
  ~DirectoryLock();
  DirectoryLock(const DirectoryLock&) = delete;
  DirectoryLock& operator=(const DirectoryLock&) = delete;

  // The lock file of `dir`.
  static std::string lock_path(const std::string& dir);

 private:
  int fd_ = -1;
};

}  // namespace llmft::io
