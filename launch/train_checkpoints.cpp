#include "launch/train_checkpoints.h"

#include <mpi.h>

#include <cstdio>
#include <cstring>

#include "checkpoint/checkpoint_dir.h"
#include "core/version.h"
#include "io/hf_config.h"
#include "io/json.h"
#include "io/output_directory.h"

namespace llmft {
namespace {

std::string schedule_json(const TrainOptions& o) {
  io::Json j = io::Json::object({});
  j.set("shape", io::Json::string(o.lr_schedule));
  j.set("lr", io::Json::number(o.lr));
  j.set("min_lr", io::Json::number(o.min_lr));
  j.set("warmup", io::Json::number(o.warmup));
  j.set("steps", io::Json::number(o.steps));
  return j.dump();
}

std::string layout_json(const TrainOptions& o, MeshShape mesh) {
  io::Json j = io::Json::object({});
  j.set("ranks", io::Json::number(mesh.dp * mesh.tp));
  j.set("dp", io::Json::number(mesh.dp));
  j.set("tp", io::Json::number(mesh.tp));
  j.set("zero", io::Json::number(o.zero));
  j.set("micro_batch", io::Json::number(o.micro_batch));
  j.set("grad_accum", io::Json::number(o.grad_accum));
  return j.dump();
}

}  // namespace

TrainCheckpoints::TrainCheckpoints(const TrainOptions& options, const ModelConfig& config,
                                   Engine& engine, Backend& backend, RankPlace place,
                                   MeshShape mesh)
    : options_(options),
      config_(config),
      engine_(engine),
      backend_(backend),
      place_(place),
      mesh_(mesh) {
  // The checkpoint to resume is found first: a wrong --resume creates nothing.
  if (!options.resume.empty()) {
    resume_path_ = resolve_resume_path(options.resume, options.checkpoint_dir, place.lead);
  }
  if (options.checkpoint_dir.empty()) return;
  if (place.lead) {
    const uint64_t weight_bytes =
        static_cast<uint64_t>(parameter_count(config)) * dtype_size(parse_dtype(options.dtype));
    io::prepare_output_directory(options.checkpoint_dir, "--checkpoint-dir", weight_bytes,
                                 "one checkpoint's weights");
  }
  checkpointer_.emplace(options.checkpoint_dir, options.keep_checkpoints);
  watch_.emplace();
}

TrainCheckpoints::Start TrainCheckpoints::resume() {
  if (options_.resume.empty()) return Start{};
  const std::string& path = resume_path_;
  if (path.empty()) {
    if (place_.lead) {
      std::printf("llmft: no checkpoint in %s yet: starting at step 1\n",
                  options_.checkpoint_dir.c_str());
    }
    return Start{};
  }
  const ResumeTarget target{config_,
                            vocabulary_fingerprint(config_.vocab_size, options_.init_from),
                            options_.optimizer,
                            options_.dtype,
                            options_.seed,
                            options_.resume_weights_only};
  const CheckpointInfo info = resume_from(path, target, engine_, backend_, place_);
  if (options_.resume_weights_only) {
    if (place_.lead) {
      std::printf("llmft: took the weights of %s (step %lld, %s); starting a fresh run on them\n",
                  path.c_str(), static_cast<long long>(info.step), info.optimizer.c_str());
    }
    return Start{};
  }
  if (place_.lead) {
    std::printf(
        "llmft: resumed from %s: step %lld done, %lld windows consumed, written by "
        "layout %s\n",
        path.c_str(), static_cast<long long>(info.step),
        static_cast<long long>(info.windows_consumed), info.layout.c_str());
  }
  return Start{static_cast<int>(info.step) + 1, info.windows_consumed};
}

bool TrainCheckpoints::after_step(int step, int64_t windows_consumed) {
  if (!checkpointer_) return false;
  const bool periodic = options_.checkpoint_every > 0 && step % options_.checkpoint_every == 0;
  const bool due = periodic || step == options_.steps;
  if (due) save(step, windows_consumed);
  // After the last step there is nothing left to stop: the run ends as usual.
  if (step == options_.steps) return false;
  // Asked after a save too, so that a signal during the write stops the job before the
  // next step.
  if (!watch_->stop_agreed(options_.comm_timeout)) return false;
  if (!due) save(step, windows_consumed);
  if (place_.lead) {
    const int signal = watch_->signal_received();
    std::printf(
        "llmft: stopping after step %d (%s); the state is saved in %s: resume with "
        "--resume (exit code %d)\n",
        step, signal ? strsignal(signal) : "another rank was signalled",
        options_.checkpoint_dir.c_str(), kPreemptedExitCode);
    std::fflush(stdout);
  }
  return true;
}

void TrainCheckpoints::save(int step, int64_t windows_consumed) {
  const Engine::Progress progress = engine_.progress();
  CheckpointInfo info;
  info.llmft_version = llmft_version();
  info.step = step;
  info.updates = progress.updates;
  info.loss_scale = progress.loss_scale;
  info.clean_steps = progress.clean_steps;
  info.windows_consumed = windows_consumed;
  info.global_batch = options_.micro_batch * options_.grad_accum * mesh_.dp;
  info.seed = options_.seed;
  info.optimizer = options_.optimizer;
  info.dtype = options_.dtype;
  info.schedule = schedule_json(options_);
  info.layout = layout_json(options_, mesh_);
  info.model_config = io::hf_config_json(config_).dump();
  info.vocabulary = vocabulary_fingerprint(config_.vocab_size, options_.init_from);
  const double start = MPI_Wtime();
  const std::string path = checkpointer_->save(engine_, backend_, place_, info);
  if (place_.lead) {
    std::printf("checkpoint | step %d | %s | %.2f s\n", step, path.c_str(), MPI_Wtime() - start);
    std::fflush(stdout);
  }
}

}  // namespace llmft
