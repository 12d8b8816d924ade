#include "checkpoint/checkpointer.h"

#include <mpi.h>

#include <filesystem>
#include <utility>

#include "checkpoint/checkpoint_dir.h"
#include "checkpoint/engine_state.h"
#include "comm/mpi_runtime.h"
#include "core/error.h"
#include "io/hdf5_file.h"

namespace llmft {
namespace {

// Rank 0's answer to every rank: a value, or the error every rank then throws.
struct Decision {
  bool ok = true;
  std::string text;
};

Decision broadcast(Decision decision) {
  int header[2] = {decision.ok ? 1 : 0, static_cast<int>(decision.text.size())};
  LLMFT_MPI_CHECK(MPI_Bcast(header, 2, MPI_INT, 0, MPI_COMM_WORLD));
  decision.ok = header[0] == 1;
  decision.text.resize(static_cast<size_t>(header[1]));
  LLMFT_MPI_CHECK(MPI_Bcast(decision.text.data(), header[1], MPI_CHAR, 0, MPI_COMM_WORLD));
  return decision;
}

// The newest checkpoint of `dir` whose "complete" mark is set ("" when none).
std::string newest_complete(const std::string& dir) {
  const std::vector<std::string> paths = checkpoints_in(dir);
  for (auto it = paths.rbegin(); it != paths.rend(); ++it) {
    try {
      io::Hdf5File file = io::Hdf5File::open(*it, MPI_COMM_SELF);
      if (file.has_attribute(kCompleteAttribute) && file.attribute(kCompleteAttribute) == "1") {
        return *it;
      }
    } catch (const Error&) {
      // Not readable as a checkpoint: an older one may be.
    }
  }
  return "";
}

std::string find_checkpoint(const std::string& resume, const std::string& dir) {
  namespace fs = std::filesystem;
  if (resume == "latest") {
    LLMFT_REQUIRE(!dir.empty(),
                  "--resume without a path needs --checkpoint-dir (the directory "
                  "to resume from); or give one: --resume=PATH");
    return newest_complete(dir);
  }
  if (fs::is_directory(resume)) {
    const std::string path = newest_complete(resume);
    LLMFT_REQUIRE(!path.empty(), "--resume=" << resume
                                             << ": the directory holds no complete checkpoint "
                                                "(step_N.h5); give a checkpoint file or another "
                                                "directory");
    return path;
  }
  LLMFT_REQUIRE(fs::is_regular_file(resume),
                "--resume=" << resume << ": no such checkpoint file or directory");
  return resume;
}

}  // namespace

Checkpointer::Checkpointer(std::string dir, int keep) : dir_(std::move(dir)), keep_(keep) {}

std::string Checkpointer::save(const Engine& engine, Backend& backend, RankPlace place,
                               const CheckpointInfo& info) const {
  const std::string partial = partial_checkpoint_path(dir_, info.step);
  const std::string final_path = checkpoint_path(dir_, info.step);
  if (place.lead) remove_partial_checkpoints(dir_);
  LLMFT_MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));  // no rank creates before the clean-up
  try {
    io::Hdf5File file = io::Hdf5File::create(partial, MPI_COMM_WORLD);
    write_info(file, info);
    write_engine_state(file, engine, backend, place.slice, place.dp_rank);
    file.set_attribute(kCompleteAttribute, "1");
    file.close();
    if (place.lead) {
      publish_checkpoint(partial, final_path);
      prune_checkpoints(dir_, keep_);
    }
  } catch (const std::exception& e) {
    std::error_code ec;
    std::filesystem::remove(partial, ec);
    throw Error(std::string("writing the checkpoint of step ") + std::to_string(info.step) +
                " failed: " + e.what() + "; earlier checkpoints in " + dir_ + " are intact");
  }
  return final_path;
}

std::string resolve_resume_path(const std::string& resume, const std::string& dir, bool lead) {
  Decision decision;
  if (lead) {
    try {
      decision.text = find_checkpoint(resume, dir);
    } catch (const Error& e) {
      decision = Decision{false, e.what()};
    }
  }
  decision = broadcast(decision);
  if (!decision.ok) throw Error(decision.text);
  return decision.text;
}

CheckpointInfo resume_from(const std::string& path, const ResumeTarget& run, Engine& engine,
                           Backend& backend, RankPlace place) {
  io::Hdf5File file = io::Hdf5File::open(path, MPI_COMM_WORLD);
  const CheckpointInfo info = read_info(file);
  check_resumable(info, run, path);
  if (run.weights_only) {
    read_engine_weights(file, engine, place.slice);
  } else {
    read_engine_state(file, engine, backend, place.slice);
    engine.restore(Engine::Progress{info.updates, info.loss_scale, info.clean_steps});
  }
  file.close();
  return info;
}

}  // namespace llmft
