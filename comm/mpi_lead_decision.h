// Lead decisions: work that one rank does for the whole job (the lead, world rank 0: it
// alone touches output directories, scans checkpoints, opens the metrics file), with every
// rank learning its outcome. When the work fails, every rank throws the same error, so the
// job reports it once and ends cleanly (comm/job_failure.h) instead of the lead failing
// while the others wait in their next collective and then report that wait as a second
// error.
// Thread-safety: one thread, the one that calls MPI.
#pragma once

#include <functional>
#include <string>

namespace llmft {

// Collective over MPI_COMM_WORLD: runs `work` on the lead alone and returns the text it
// returned on every rank; if it threw, every rank throws an llmft::Error with its message.
// Waits at most `timeout_seconds` for the lead (and fails at once on a failure notice).
std::string decided_on_lead(bool lead, const std::function<std::string()>& work,
                            double timeout_seconds);

}  // namespace llmft
