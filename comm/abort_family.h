// AbortFamily: which communicators an abort takes down when communicators share resources.
// NCCL communicators split with shared resources (ncclCommSplit with splitShare = 1) use
// their parent's buffers and proxy thread, so aborting one (a timed-out wait, an
// asynchronous error, a failure notice from another rank) can leave every other member of
// the family unusable: a collective on a sibling would then hang to its own timeout, or
// fail naming only itself. Each member joins with its group's name and the action that
// aborts it; aborting one aborts every member still joined, and each remembers the group
// whose failure took it down, why, and the groups that went down together, so that the
// next collective on any of them fails at once naming them all.
//
// Bookkeeping only: the abort actions are the communicators'. Thread-safety: one thread.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace llmft {

class AbortFamily {
 public:
  // A member's place in the family; not reused.
  using Member = int;

  // `abort` is called at most once, when the family is aborted while the member is joined.
  Member join(std::string group, std::function<void()> abort);
  // The member's communicator is gone: a later abort neither calls its action nor names it.
  void leave(Member member);

  // Aborts `member` (whose group's failure is `cause`) and every other member still joined
  // and not yet aborted, `member`'s action first. Members already aborted keep their cause;
  // nothing happens when `member` was already aborted or has left.
  void abort(Member member, const std::string& cause);

  bool aborted(Member member) const;
  // Why `member` can no longer be used: "" while it can; else the group whose failure
  // aborted it and the cause, and the groups that went down with it.
  std::string why_aborted(Member member) const;

 private:
  struct Record {
    std::string group;
    std::function<void()> abort;
    bool joined = true;
    // -1 while usable; else the index of the abort (in aborts_) that took it down.
    int abort_index = -1;
  };
  struct Abort {
    Member failed;
    std::string cause;
    std::vector<std::string> groups;  // every group this abort took down, the failed one first
  };
  Record& record(Member member);
  const Record& record(Member member) const;

  std::vector<Record> members_;
  std::vector<Abort> aborts_;
};

}  // namespace llmft
