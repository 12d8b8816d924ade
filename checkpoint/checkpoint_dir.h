// The checkpoint directory: one file per checkpoint, "step_00000120.h5" for the state
// after step 120. A checkpoint is written as ".step_00000120.h5.partial" and renamed to
// its name only once complete, so a name that matches is a whole checkpoint; a partial
// file is what an interrupted write left, and the next write removes it. The directory
// keeps the newest `keep` checkpoints. Only one rank (rank 0) touches the directory.
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

// Removes all but the newest `keep` checkpoints (keep <= 0 keeps every one).
void prune_checkpoints(const std::string& dir, int keep);

}  // namespace llmft
