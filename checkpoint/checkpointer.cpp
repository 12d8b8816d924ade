#include "checkpoint/checkpointer.h"

#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <utility>

#include "checkpoint/checkpoint_dir.h"
#include "checkpoint/engine_state.h"
#include "comm/mpi_lead_decision.h"
#include "core/byte_size.h"
#include "core/error.h"
#include "io/hdf5_file.h"
#include "io/output_directory.h"

namespace llmft {
namespace {

namespace fs = std::filesystem;

// Why `path` is not a checkpoint to resume from ("" when it is one).
std::string unusable_reason(const std::string& path) {
  try {
    io::Hdf5File file = io::Hdf5File::open(path, MPI_COMM_SELF, 60);
    if (!file.has_attribute(kCompleteAttribute) || file.attribute(kCompleteAttribute) != "1") {
      return "its write did not complete";
    }
    read_info(file);
    return "";
  } catch (const Error& e) {
    return e.what();
  }
}

// The newest checkpoint of `dir` that is complete and readable ("" when none). Newer files
// passed over are named on stdout with the reason (`say`).
std::string newest_complete(const std::string& dir, bool say) {
  const std::vector<std::string> paths = checkpoints_in(dir);
  for (auto it = paths.rbegin(); it != paths.rend(); ++it) {
    const std::string reason = unusable_reason(*it);
    if (reason.empty()) return *it;
    if (say) std::printf("llmft: passing over %s: %s\n", it->c_str(), reason.c_str());
  }
  return "";
}

// The newest usable checkpoint of `dir` for `option`; "" when the directory holds none at
// all. A directory whose checkpoints are all unusable is refused: starting afresh there
// would overwrite and prune them (a format this llmft does not read, damage).
std::string newest_to_resume(const std::string& dir, const std::string& option) {
  const std::string path = newest_complete(dir, true);
  const size_t present = checkpoints_in(dir).size();
  LLMFT_REQUIRE(!path.empty() || present == 0,
                option << " " << dir << ": none of its " << present
                       << " checkpoints can be resumed (the lines above say why); move them "
                          "away to start afresh there, or resume from another directory");
  return path;
}

std::string find_checkpoint(const std::string& resume, const std::string& dir,
                            const std::string& option) {
  if (resume == "latest") {
    LLMFT_REQUIRE(!dir.empty(),
                  "--resume without a path needs --checkpoint-dir (the directory "
                  "to resume from); or give one: --resume=PATH");
    return newest_to_resume(dir, "--checkpoint-dir");
  }
  if (fs::is_directory(resume)) {
    const std::string path = newest_to_resume(resume, option);
    LLMFT_REQUIRE(!path.empty(), option << " " << resume
                                        << ": the directory holds no complete checkpoint "
                                           "(step_N.h5); give a checkpoint file or another "
                                           "directory");
    return path;
  }
  LLMFT_REQUIRE(fs::is_regular_file(resume),
                option << " " << resume << ": no such checkpoint file or directory");
  return resume;
}

// "the newest complete checkpoint, X, is intact" or "no checkpoint was completed before".
std::string what_is_left(const std::string& newest, const std::string& dir) {
  return newest.empty() ? "no checkpoint in " + dir + " was completed before it"
                        : "the newest complete checkpoint, " + newest + ", is intact";
}

}  // namespace

Checkpointer::Checkpointer(std::string dir, int keep, double timeout_seconds, bool lead)
    : dir_(std::move(dir)), keep_(keep), timeout_seconds_(timeout_seconds), lead_(lead) {
  newest_ = decided_on_lead(
      lead_, [this] { return newest_complete(dir_, false); }, timeout_seconds_);
}

std::string Checkpointer::save(const Engine& engine, Backend& backend, RankPlace place,
                               const CheckpointInfo& info) {
  const std::string partial = partial_checkpoint_path(dir_, info.step);
  const std::string final_path = checkpoint_path(dir_, info.step);
  const uint64_t bytes = checkpoint_file_bytes(engine, place.slice);
  try {
    // No rank creates before the clean-up. A disk that has filled since the last write is
    // refused here, on every rank alike: parallel HDF5 does not fail cleanly inside a
    // collective (the ranks may part in its own collectives; io/stall_watchdog.h bounds
    // that, but ends the job instead of reporting the error).
    decided_on_lead(
        lead_,
        [&] {
          remove_partial_checkpoints(dir_);
          const std::optional<uint64_t> free = io::free_bytes(dir_);
          LLMFT_REQUIRE(!free || *free >= bytes,
                        dir_ << " has " << format_bytes(static_cast<double>(*free))
                             << " free but the checkpoint takes "
                             << format_bytes(static_cast<double>(bytes))
                             << " (free some space, or lower --keep-checkpoints)");
          return std::string();
        },
        timeout_seconds_);
    io::Hdf5File file = io::Hdf5File::create(partial, MPI_COMM_WORLD, timeout_seconds_);
    write_info(file, info);
    io::Progress progress("checkpoint: writing step " + std::to_string(info.step) + " to " + dir_,
                          engine_progress_total(engine), io::ProgressCount::items("model units"));
    write_engine_state(file, engine, backend, place.slice, place.dp_rank, progress);
    progress.finish();
    file.set_attribute(kCompleteAttribute, "1");
    file.close();
    decided_on_lead(
        lead_,
        [&] {
          publish_checkpoint(partial, final_path);
          return std::string();
        },
        timeout_seconds_);
  } catch (const std::exception& e) {
    std::error_code ec;
    if (lead_) fs::remove(partial, ec);
    throw Error("writing the checkpoint of step " + std::to_string(info.step) +
                " failed: " + e.what() + "; " + what_is_left(newest_, dir_));
  }
  newest_ = final_path;
  unconfirmed_ = info.step;
  if (lead_) prune_checkpoints(dir_, keep_, verified_before_);
  return final_path;
}

void Checkpointer::confirm(int64_t verified_before) {
  verified_before_ = std::max(verified_before_, verified_before);
  if (unconfirmed_ < 0 || unconfirmed_ >= verified_before_) return;
  unconfirmed_ = -1;
  if (lead_) prune_checkpoints(dir_, keep_, verified_before_);
}

std::string Checkpointer::set_aside(int64_t from_step) {
  const std::string set_aside_text = decided_on_lead(
      lead_,
      [&] {
        std::string names;
        for (const std::string& path : set_aside_checkpoints(dir_, from_step)) {
          names += (names.empty() ? "" : ", ") + path;
        }
        return names;
      },
      timeout_seconds_);
  newest_ = decided_on_lead(
      lead_, [this] { return newest_complete(dir_, false); }, timeout_seconds_);
  const std::string resume = newest_.empty() ? "no healthy checkpoint is left in " + dir_ +
                                                   ": start again without --resume"
                                             : "resume from " + newest_ + " (--resume picks it)";
  if (set_aside_text.empty()) return "no checkpoint holds the unhealthy state; " + resume;
  return "the checkpoints of that state were set aside as " + set_aside_text + "; " + resume;
}

std::string resolve_resume_path(const std::string& resume, const std::string& dir, bool lead,
                                const std::string& option, double timeout_seconds) {
  return decided_on_lead(
      lead, [&] { return find_checkpoint(resume, dir, option); }, timeout_seconds);
}

CheckpointInfo resume_from(const std::string& path, const ResumeTarget& run, Engine& engine,
                           Backend& backend, RankPlace place, double timeout_seconds) {
  io::Hdf5File file = io::Hdf5File::open(path, MPI_COMM_WORLD, timeout_seconds);
  const CheckpointInfo info = read_info(file);
  check_resumable(info, run, path);
  io::Progress progress("checkpoint: reading " + path, engine_progress_total(engine),
                        io::ProgressCount::items("model units"));
  if (run.weights_only) {
    read_engine_weights(file, engine, place.slice, place.dp_rank, progress);
  } else {
    read_engine_state(file, engine, backend, place.slice, place.dp_rank, progress);
    engine.restore(Engine::Progress{info.updates, info.loss_scale, info.clean_steps});
  }
  file.close();
  return info;
}

}  // namespace llmft
