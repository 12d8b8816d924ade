// The checkpoint directory: one file per checkpoint, "step_00000120.h5" for the state
// after step 120. A checkpoint is written as ".step_00000120.h5.partial" and renamed to
// its name only once complete, so a name that matches is a whole checkpoint; a partial
// file is what an interrupted write left, and the next write removes it. The directory
// keeps the newest `keep` verified checkpoints (checkpoint/checkpointer.h) and any newer;
// a checkpoint of a state that diverged is renamed "step_00000120.h5.diverged". Only one
// rank (rank 0) touches the directory.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace llmft {

std::string checkpoint_path(const std::string& dir, int64_t step);
std::string partial_checkpoint_path(const std::string& dir, int64_t step);

// The checkpoints in `dir` by name, oldest first (none when the directory does not exist).
std::vector<std::string> checkpoints_in(const std::string& dir);

// Removes the partial files of interrupted writes.
void remove_partial_checkpoints(const std::string& dir);

// Flushes a finished partial file to disk, renames it to its checkpoint name, and
// flushes the directory entry.
void publish_checkpoint(const std::string& partial, const std::string& final_path);

// The step a checkpoint's path names.
int64_t checkpoint_step(const std::string& path);

// Removes all but the newest `keep` of the checkpoints before step `verified_before` (keep
// <= 0 keeps every one); checkpoints of that step and later stay.
void prune_checkpoints(const std::string& dir, int keep, int64_t verified_before);

// Renames the checkpoints of step `from_step` and later to "<name>.diverged"; returns their
// new paths.
std::vector<std::string> set_aside_checkpoints(const std::string& dir, int64_t from_step);

}  // namespace llmft
