// Output directories checked before a run does the work whose results they will hold
// (--save-dir, --checkpoint-dir): each is created if needed, proven writable with a probe
// file of a fixed name (removed at once), and its free space compared with a lower bound
// of what the run will write there, so that a read-only or full filesystem fails the job
// at startup rather than after training.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace llmft::io {

// The bytes free for this user on the filesystem of `dir` (or, before it exists, of its
// nearest existing ancestor); none when the filesystem does not say.
std::optional<uint64_t> free_bytes(const std::string& dir);

// Creates `dir` (and its parents) if needed; an Error naming `option` when it cannot.
void ensure_directory(const std::string& dir, const std::string& option);

// Throws llmft::Error naming `option` and `dir` when the directory cannot be created or
// written, or when its filesystem has fewer than `bytes_to_write` bytes free for this user.
// `what` names the bytes in the message ("the model's f32 weights").
void prepare_output_directory(const std::string& dir, const std::string& option,
                              uint64_t bytes_to_write, const std::string& what);

}  // namespace llmft::io
