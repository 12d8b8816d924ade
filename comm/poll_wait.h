// poll_wait: how every communicator waits for a collective (comm/communicator.h): poll
// until it is done, failing at once when another rank has reported a failure
// (comm/failure_notice.h) and after the timeout otherwise. Short waits poll as fast as the
// scheduler allows; longer ones sleep between polls so that a waiting rank leaves the
// cores to the ranks still computing.
// Thread-safety: the thread that calls MPI.
#pragma once

#include <functional>
#include <string>

namespace llmft {

// Polls `done` until it returns true. Before failing (a notice or the timeout) it calls
// `give_up`, which may abort the transport so that nothing is left in flight. The error
// names `description` (the collective and its context).
void poll_wait(const std::function<bool()>& done, const std::string& description,
               double timeout_seconds, const std::function<void()>& give_up = {});

}  // namespace llmft
