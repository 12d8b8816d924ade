#include "launch/train_report.h"

#include <cmath>
#include <cstdio>
#include <string>

#include "core/byte_size.h"
#include "core/duration_text.h"

namespace llmft {

namespace {

// ", activation checkpointing of 3 of 12 blocks" (or of every block), or nothing.
std::string checkpointing_text(int checkpointed, int blocks) {
  if (checkpointed == 0) return "";
  if (checkpointed >= blocks) return ", activation checkpointing";
  return ", activation checkpointing of the first " + std::to_string(checkpointed) + " of " +
         std::to_string(blocks) + " blocks";
}

// {"all_reduce": {"calls": .., "bytes": ..}, ...} for the collectives that ran.
io::Json counters_json(const CommCounters& counters) {
  io::Json json = io::Json::object({});
  for (int k = 0; k < kCollectiveCount; ++k) {
    const CollectiveCounter& counter = counters[k];
    if (counter.calls == 0) continue;
    io::Json entry = io::Json::object({});
    entry.set("calls", io::Json::number(static_cast<double>(counter.calls)));
    entry.set("bytes", io::Json::number(static_cast<double>(counter.bytes)));
    json.set(collective_name(static_cast<Collective>(k)), entry);
  }
  return json;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

TrainReport::TrainReport(const TrainOptions& o, const ModelConfig& c,
                         const MemoryPrediction& predicted, const io::WindowLayout& windows,
                         MeshShape mesh, const std::string& device, size_t fixed_overhead,
                         size_t communicators, const DevicePeak& peak)
    : options_(o),
      predicted_(predicted),
      fixed_overhead_(fixed_overhead),
      communicators_(communicators),
      uniform_loss_(std::log(static_cast<double>(c.vocab_size))),
      processed_tokens_(static_cast<double>(mesh.dp) * o.micro_batch * o.grad_accum * o.seq_len),
      devices_(mesh.dp * mesh.tp),
      flops_per_token_(training_flops_per_token(c, o.seq_len)),
      peak_(peak),
      start_(std::chrono::steady_clock::now()) {
  std::printf(
      "llmft: model %s (%s): %d layers, hidden %d, %d heads, MLP %d, vocab %d, context %d\n",
      c.name.c_str(), family_name(c.family), c.n_layer, c.hidden, c.n_head, c.intermediate,
      c.vocab_size, c.max_seq_len);
  std::printf("llmft: %lld parameters, stored as %s%s\n",
              static_cast<long long>(parameter_count(c)), o.dtype.c_str(),
              checkpointing_text(o.checkpointed_blocks, c.n_layer).c_str());
  std::printf("llmft: layout dp %d x tp %d, ZeRO %d%s%s\n", mesh.dp, mesh.tp, o.zero,
              o.sequence ? ", sequence parallel" : "", o.offload ? ", optimizer offloaded" : "");
  std::printf(
      "llmft: data %s: %zu windows of %d tokens%s; %d data-parallel ranks x %d x %d windows per "
      "step (%d tokens)\n",
      o.data.c_str(), windows.num_windows(), o.seq_len, windows.describe_packing().c_str(), mesh.dp,
      o.micro_batch, o.grad_accum, mesh.dp * o.micro_batch * o.grad_accum * o.seq_len);
  std::printf(
      "llmft: %s, lr %g (%s, warmup %d, min %g), weight decay %g, clip %g, %d steps, "
      "seed %llu\n",
      o.optimizer.c_str(), o.lr, o.lr_schedule.c_str(), o.warmup, o.min_lr, o.weight_decay,
      o.clip_grad, o.steps, static_cast<unsigned long long>(o.seed));
  std::printf("llmft: device %s\n", device.c_str());
  std::printf("llmft: predicted peak memory %s at %s: %s\n",
              format_bytes(static_cast<double>(predicted.peak_total)).c_str(),
              predicted.peak_phase.c_str(), describe_bytes(predicted.at_peak).c_str());
  if (fixed_overhead_ + communicators_ > 0) {
    std::printf(
        "llmft: predicted device peak %s: with the fixed overhead %s and communicators' buffers "
        "%s, measured\n",
        format_bytes(static_cast<double>(predicted_device_peak())).c_str(),
        format_bytes(static_cast<double>(fixed_overhead_)).c_str(),
        format_bytes(static_cast<double>(communicators_)).c_str());
  }
  if (predicted.host_peak_total > 0) {
    std::printf("llmft: optimizer offloaded: predicted host pool peak %s (rank 0): %s\n",
                format_bytes(static_cast<double>(predicted.host_peak_total)).c_str(),
                describe_bytes(predicted.host_peak_by_category).c_str());
  }
  if (!o.checkpoint_dir.empty() || !o.resume.empty()) {
    std::printf(
        "llmft: checkpoints stage at most %s of host memory per rank at a time and no "
        "device memory\n",
        format_bytes(static_cast<double>(predicted.checkpoint_staging)).c_str());
  }
  std::printf(
      "llmft: throughput counts the %.0f tokens a step processes (padding included) over %d "
      "ranks, loss targets apart; %.4g model FLOPs per token (6 x matrix parameters + "
      "attention)\n",
      processed_tokens_, devices_, flops_per_token_);
  if (peak_.flops > 0) {
    std::printf("llmft: MFU against %s, %.4g FLOP/s per rank\n", peak_.name.c_str(), peak_.flops);
  } else {
    std::printf("llmft: no MFU: %s\n", peak_.why_unknown.c_str());
  }
  std::printf("llmft: a uniform guess over the vocabulary has loss %.4f\n", uniform_loss_);
  std::fflush(stdout);
}

void TrainReport::validation(int step, double loss) {
  std::printf("validation | step %d | loss %.4f | %.1f%% of the uniform-guess loss\n", step, loss,
              100.0 * loss / uniform_loss_);
  std::fflush(stdout);
}

Throughput TrainReport::throughput(double seconds) const {
  return step_throughput(processed_tokens_, seconds, flops_per_token_, devices_, peak_.flops);
}

std::string TrainReport::mfu_text(const Throughput& t) const {
  if (peak_.flops <= 0) return "";
  char text[32];
  std::snprintf(text, sizeof(text), " | MFU %.1f%% of ", 100.0 * t.mfu);
  return text + peak_.name;
}

void TrainReport::step(const StepRecord& r, const std::optional<double>& val_loss) {
  if (first_step_ == 0) {
    first_step_ = r.step;
  } else {
    ++timed_steps_;
    timed_seconds_ += r.seconds;
    timed_targets_ += static_cast<double>(r.stats.target_tokens);
  }
  elapsed_seconds_ = seconds_since(start_);
  eta_seconds_.reset();
  if (timed_steps_ > 0) eta_seconds_ = timed_seconds_ / timed_steps_ * (options_.steps - r.step);
  if (r.step % options_.log_every == 0 || r.step == 1 || r.step == options_.steps) {
    const std::string epochs =
        options_.epochs > 0 ? "/" + io::Json::number(options_.epochs).dump() : "";
    const Throughput t = throughput(r.seconds);
    const std::string eta = eta_seconds_ ? " | ETA " + duration_text(*eta_seconds_) : "";
    std::printf(
        "step %5d/%d | epoch %.2f%s | loss %.4f | lr %.2e | grad norm %.3f | %.0f tok/s "
        "(%.0f per rank, %.0f targets/s) | %.2f GFLOP/s%s | %.0f ms | elapsed %s%s | "
        "peak mem %s (predicted %s)%s\n",
        r.step, options_.steps, r.epochs, epochs.c_str(), r.stats.loss, r.stats.lr,
        r.stats.grad_norm, t.tokens_per_s, t.tokens_per_s_per_device,
        static_cast<double>(r.stats.target_tokens) / r.seconds, t.model_flops_per_s * 1e-9,
        mfu_text(t).c_str(), r.seconds * 1e3, duration_text(elapsed_seconds_).c_str(), eta.c_str(),
        format_bytes(static_cast<double>(r.worst_rank.total)).c_str(),
        format_bytes(static_cast<double>(predicted_.peak_total)).c_str(),
        r.stats.skipped ? " | overflow: step skipped" : "");
  }
  if (val_loss) validation(r.step, *val_loss);
  std::fflush(stdout);
}

io::Json TrainReport::metrics_json(const StepRecord& r,
                                   const std::optional<double>& val_loss) const {
  io::Json j = io::Json::object({});
  j.set("step", io::Json::number(r.step));
  j.set("epoch", io::Json::number(r.epochs));
  j.set("loss", io::Json::number(r.stats.loss));
  j.set("lr", io::Json::number(r.stats.lr));
  j.set("grad_norm", io::Json::number(r.stats.grad_norm));
  j.set("loss_scale", io::Json::number(r.stats.loss_scale));
  j.set("skipped", io::Json::boolean(r.stats.skipped));
  const Throughput t = throughput(r.seconds);
  const double targets = static_cast<double>(r.stats.target_tokens);
  j.set("processed_tokens", io::Json::number(processed_tokens_));
  j.set("target_tokens", io::Json::number(targets));
  j.set("step_seconds", io::Json::number(r.seconds));
  j.set("tokens_per_s", io::Json::number(t.tokens_per_s));
  j.set("tokens_per_s_per_rank", io::Json::number(t.tokens_per_s_per_device));
  j.set("target_tokens_per_s", io::Json::number(targets / r.seconds));
  j.set("flops_per_token", io::Json::number(flops_per_token_));
  j.set("gflops_per_s", io::Json::number(t.model_flops_per_s * 1e-9));
  if (peak_.flops > 0) {
    j.set("mfu", io::Json::number(t.mfu));
    j.set("peak_flops_per_rank", io::Json::number(peak_.flops));
  }
  j.set("elapsed_seconds", io::Json::number(elapsed_seconds_));
  if (eta_seconds_) j.set("eta_seconds", io::Json::number(*eta_seconds_));
  j.set("peak_memory_bytes", io::Json::number(static_cast<double>(r.measured_peak)));
  j.set("worst_rank", io::Json::number(r.worst_rank.rank));
  j.set("worst_rank_peak_memory_bytes", io::Json::number(static_cast<double>(r.worst_rank.total)));
  io::Json by_category = io::Json::object({});
  for (int i = 0; i < kMemoryCategoryCount; ++i) {
    by_category.set(memory_category_name(static_cast<MemoryCategory>(i)),
                    io::Json::number(static_cast<double>(r.worst_rank.at_peak[i])));
  }
  j.set("worst_rank_peak_by_category", by_category);
  j.set("predicted_peak_memory_bytes",
        io::Json::number(static_cast<double>(predicted_.peak_total)));
  j.set("fixed_overhead_bytes", io::Json::number(static_cast<double>(fixed_overhead_)));
  j.set("communicator_bytes", io::Json::number(static_cast<double>(communicators_)));
  j.set("worst_rank_device_peak_bytes",
        io::Json::number(static_cast<double>(r.worst_rank.device_total)));
  j.set("predicted_device_peak_bytes",
        io::Json::number(static_cast<double>(predicted_device_peak())));
  if (predicted_.host_peak_total > 0) {
    j.set("host_peak_memory_bytes", io::Json::number(static_cast<double>(r.host_peak)));
    j.set("predicted_host_peak_memory_bytes",
          io::Json::number(static_cast<double>(predicted_.host_peak_total)));
  }
  if (val_loss) j.set("val_loss", io::Json::number(*val_loss));
  const io::Json comm = counters_json(r.comm), tp_comm = counters_json(r.tp_comm);
  if (!comm.as_object().empty()) j.set("comm", comm);
  if (!tp_comm.as_object().empty()) j.set("tp_comm", tp_comm);
  return j;
}

namespace {

void print_memory_table(const char* pool, const Allocator& allocator,
                        const CategoryBytes& predicted, size_t predicted_total) {
  std::printf("%-6s | category        |     measured peak |    predicted peak\n", pool);
  for (int i = 0; i < kMemoryCategoryCount; ++i) {
    const size_t measured = allocator.peak_by_category()[i];
    if (measured == 0 && predicted[i] == 0) continue;
    std::printf("%-6s | %-15s | %17s | %17s\n", pool,
                memory_category_name(static_cast<MemoryCategory>(i)),
                format_bytes(static_cast<double>(measured)).c_str(),
                format_bytes(static_cast<double>(predicted[i])).c_str());
  }
  std::printf("%-6s | %-15s | %17s | %17s\n", pool, "total",
              format_bytes(static_cast<double>(allocator.total_peak())).c_str(),
              format_bytes(static_cast<double>(predicted_total)).c_str());
}

}  // namespace

void TrainReport::finish(const Allocator& allocator, const Allocator* host_allocator,
                         const RankPeak& worst) {
  if (timed_steps_ > 0) {
    const Throughput t = throughput(timed_seconds_ / timed_steps_);
    std::printf(
        "throughput | mean of steps %d-%d: %.0f tok/s (%.0f per rank, %.0f targets/s) | %.2f "
        "GFLOP/s%s | %.0f ms a step | elapsed %s\n",
        first_step_ + 1, first_step_ + timed_steps_, t.tokens_per_s, t.tokens_per_s_per_device,
        timed_targets_ / timed_seconds_, t.model_flops_per_s * 1e-9, mfu_text(t).c_str(),
        timed_seconds_ / timed_steps_ * 1e3, duration_text(seconds_since(start_)).c_str());
  }
  print_memory_table("memory", allocator, predicted_.peak_by_category, predicted_.peak_total);
  if (fixed_overhead_ + communicators_ > 0) {
    std::printf("%-6s | %-15s | %17s | %17s\n", "device", "worst rank",
                format_bytes(static_cast<double>(worst.device_total)).c_str(),
                format_bytes(static_cast<double>(predicted_device_peak())).c_str());
  }
  if (host_allocator) {
    print_memory_table("host", *host_allocator, predicted_.host_peak_by_category,
                       predicted_.host_peak_total);
  }
  std::fflush(stdout);
}

}  // namespace llmft
