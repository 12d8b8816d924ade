#include "launch/train_checkpoints.h"

#include <mpi.h>

#include <cstdio>
#include <cstring>
#include <sstream>
#include <utility>

#include "checkpoint/checkpoint_dir.h"
#include "checkpoint/engine_state.h"
#include "comm/mpi_lead_decision.h"
#include "core/byte_size.h"
#include "core/version.h"
#include "io/hf_config.h"
#include "io/json.h"
#include "io/output_directory.h"
#include "optim/lr_schedule.h"

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

LrSchedule schedule_of(const io::Json& j) {
  return LrSchedule{
      parse_lr_shape(j.at("shape").as_string()), static_cast<float>(j.at("lr").as_number()),
      static_cast<float>(j.at("min_lr").as_number()), static_cast<int>(j.at("warmup").as_int()),
      static_cast<int>(j.at("steps").as_int())};
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

int global_batch(const TrainOptions& o, MeshShape mesh) {
  return o.micro_batch * o.grad_accum * mesh.dp;
}

// How many checkpoints the run writes unless signalled: every --checkpoint-every steps and
// the last, when that is not one of them.
int64_t saves_at_most(const TrainOptions& o) {
  if (o.checkpoint_every <= 0) return 1;
  return o.steps / o.checkpoint_every + (o.steps % o.checkpoint_every != 0 ? 1 : 0);
}

// Prepares and locks the checkpoint directory, refusing a filesystem too small for the
// checkpoints this run keeps at its peak: the newest --keep-checkpoints verified ones and
// one more (being written, or not yet verified), less those already there (every one, with
// --keep-checkpoints 0). Rank 0 only.
void prepare_checkpoint_dir(const TrainOptions& o, uint64_t checkpoint_bytes,
                            std::optional<io::DirectoryLock>& lock) {
  const int64_t existing = static_cast<int64_t>(checkpoints_in(o.checkpoint_dir).size());
  const int64_t peak =
      o.keep_checkpoints > 0 ? o.keep_checkpoints + 1 : existing + saves_at_most(o);
  const int64_t more = std::max<int64_t>(1, std::min(saves_at_most(o), peak - existing));
  std::ostringstream what;
  what << more << " more checkpoint" << (more > 1 ? "s" : "") << " of "
       << format_bytes(static_cast<double>(checkpoint_bytes)) << " (with --keep-checkpoints "
       << o.keep_checkpoints << ", " << existing << " already there)";
  io::prepare_output_directory(o.checkpoint_dir, "--checkpoint-dir",
                               static_cast<uint64_t>(more) * checkpoint_bytes, what.str());
  lock.emplace(o.checkpoint_dir, "--checkpoint-dir",
               "llmft train --data " + o.data + " --model " + o.model);
}

}  // namespace

std::string resume_checkpoint(const TrainOptions& options, bool lead) {
  if (options.resume.empty()) return "";
  return resolve_resume_path(options.resume, options.checkpoint_dir, lead, "--resume",
                             options.comm_timeout);
}

TrainCheckpoints::TrainCheckpoints(const TrainOptions& options, std::string resume_path,
                                   const ModelConfig& config, Engine& engine, Backend& backend,
                                   RankPlace place, MeshShape mesh)
    : options_(options),
      config_(config),
      engine_(engine),
      backend_(backend),
      place_(place),
      mesh_(mesh),
      data_(data_fingerprint(options.data)),
      resume_path_(std::move(resume_path)) {
  if (options.checkpoint_dir.empty()) return;
  const uint64_t checkpoint_bytes = checkpoint_file_bytes(engine, place.slice);
  decided_on_lead(
      place.lead,
      [&] {
        prepare_checkpoint_dir(options, checkpoint_bytes, lock_);
        return std::string();
      },
      options.comm_timeout);
  checkpointer_.emplace(options.checkpoint_dir, options.keep_checkpoints, options.comm_timeout,
                        place.lead);
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
                            options_.resume_weights_only,
                            data_,
                            options_.seq_len,
                            options_.resume_new_data};
  const CheckpointInfo info =
      resume_from(path, target, engine_, backend_, place_, options_.comm_timeout);
  if (options_.resume_weights_only) {
    if (place_.lead) {
      std::printf("llmft: took the weights of %s (step %lld, %s); starting a fresh run on them\n",
                  path.c_str(), static_cast<long long>(info.step), info.optimizer.c_str());
    }
    return Start{};
  }
  // Every rank reads the schedules, so that a failure there is every rank's alike.
  const std::string changed = changed_settings(info);
  if (place_.lead) {
    std::printf(
        "llmft: resumed from %s: step %lld done, %lld windows consumed, written by "
        "layout %s\n",
        path.c_str(), static_cast<long long>(info.step),
        static_cast<long long>(info.windows_consumed), info.layout.c_str());
    if (!changed.empty()) std::printf("llmft: note: %s\n", changed.c_str());
    std::fflush(stdout);
  }
  return Start{static_cast<int>(info.step) + 1, info.windows_consumed};
}

std::string TrainCheckpoints::changed_settings(const CheckpointInfo& info) const {
  std::ostringstream changes;
  const auto changed = [&changes](const std::string& name, const auto& was, const auto& now) {
    if (was == now) return;
    changes << (changes.tellp() > 0 ? ", " : "") << name << " " << was << " -> " << now;
  };
  const io::Json stored = io::Json::parse(info.schedule);
  const LrSchedule before = schedule_of(stored);
  const LrSchedule now = schedule_of(io::Json::parse(schedule_json(options_)));
  changed("--lr-schedule", stored.at("shape").as_string(), options_.lr_schedule);
  changed("--lr", before.peak_lr, now.peak_lr);
  changed("--min-lr", before.min_lr, now.min_lr);
  changed("--warmup", before.warmup_steps, now.warmup_steps);
  changed("--steps", before.total_steps, now.total_steps);
  changed("the global batch", info.global_batch, global_batch(options_, mesh_));
  changed("--seq-len", info.seq_len, options_.seq_len);
  changed("the --data file", info.data, data_);
  if (changes.tellp() == 0) return "";
  const int next = static_cast<int>(info.step) + 1;
  char rates[160];
  std::snprintf(rates, sizeof(rates),
                "; step %d's learning rate is %.3g under this run's schedule, where the "
                "checkpoint's schedule gave %.3g",
                next, static_cast<double>(now.at(next)), static_cast<double>(before.at(next)));
  return "resuming with settings changed since the checkpoint: " + changes.str() +
         (before.at(next) != now.at(next) ? rates : "");
}

std::optional<int> TrainCheckpoints::after_step(int step, int64_t windows_consumed,
                                                int healthy_through) {
  if (!checkpointer_) {
    if (step == options_.steps || !watch_.stop_agreed(options_.comm_timeout)) return std::nullopt;
    return stop(step, "nothing is saved: this run has no --checkpoint-dir", kInterruptedExitCode);
  }
  checkpointer_->confirm(healthy_through);
  const bool periodic = options_.checkpoint_every > 0 && step % options_.checkpoint_every == 0;
  const bool due = periodic || step == options_.steps;
  if (due) save(step, windows_consumed);
  // After the last step there is nothing left to stop: the run ends as usual, its last
  // checkpoint counted among the kept ones.
  if (step == options_.steps) {
    checkpointer_->confirm(step + 1);
    return std::nullopt;
  }
  // Asked after a save too, so that a signal during the write stops the job before the
  // next step.
  if (!watch_.stop_agreed(options_.comm_timeout)) return std::nullopt;
  if (!due) save(step, windows_consumed);
  return stop(step, "the state is saved in " + options_.checkpoint_dir + ": resume with --resume",
              kPreemptedExitCode);
}

int TrainCheckpoints::stop(int step, const std::string& outcome, int exit_code) const {
  if (place_.lead) {
    const int signal = watch_.signal_received();
    std::fprintf(stderr, "llmft: stopping after step %d (%s); %s (exit code %d)\n", step,
                 signal ? strsignal(signal) : "another rank was signalled", outcome.c_str(),
                 exit_code);
  }
  return exit_code;
}

std::string TrainCheckpoints::after_divergence(int unhealthy_from) {
  if (!checkpointer_) return "nothing was saved from this state (no --checkpoint-dir)";
  return checkpointer_->set_aside(unhealthy_from);
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
  info.global_batch = global_batch(options_, mesh_);
  info.seed = options_.seed;
  info.optimizer = options_.optimizer;
  info.dtype = options_.dtype;
  info.schedule = schedule_json(options_);
  info.layout = layout_json(options_, mesh_);
  info.model_config = io::hf_config_json(config_).dump();
  info.vocabulary = vocabulary_fingerprint(config_.vocab_size, options_.init_from);
  info.data = data_;
  info.seq_len = options_.seq_len;
  const double start = MPI_Wtime();
  const std::string path = checkpointer_->save(engine_, backend_, place_, info);
  if (place_.lead) {
    std::printf("checkpoint | step %d | %s | %.2f s\n", step, path.c_str(), MPI_Wtime() - start);
    std::fflush(stdout);
  }
}

}  // namespace llmft
