// TrainReport: what `llmft train` tells its user on rank 0 — the resolved configuration
// and memory prediction first, then one line per logged step (throughput by
// parallel/flops.h's definition: processed tokens, padding included, in total and per
// rank, the loss targets apart, MFU against launch/device_peak.h's peak, elapsed time and
// ETA), validation losses, and a closing throughput summary and memory comparison — and
// the JSON object of each step for --metrics.
#pragma once

#include <chrono>
#include <optional>

#include "comm/communicator.h"
#include "core/allocator.h"
#include "core/model_config.h"
#include "io/json.h"
#include "io/window_layout.h"
#include "launch/device_peak.h"
#include "launch/rank_peaks.h"
#include "launch/train_options.h"
#include "parallel/engine.h"
#include "parallel/flops.h"
#include "parallel/memory_model.h"
#include "parallel/mesh.h"

namespace llmft {

struct StepRecord {
  int step;
  StepStats stats;
  double seconds;
  size_t measured_peak;  // this rank's (rank 0's) allocator peak so far
  RankPeak worst_rank;   // the largest peak of any rank so far
  CommCounters comm;     // this rank's data-parallel collectives during the step
  CommCounters tp_comm;  // and its tensor-parallel ones
  size_t host_peak = 0;  // this rank's (rank 0's) host pool peak so far (an offloaded optimizer)
  double epochs = 0;     // passes over the training windows after the step (1.4: 40% into the 2nd)
};

class TrainReport {
 public:
  // Prints the configuration lines; `device` is the backend's describe(), and
  // `fixed_overhead` and `communicators` the device memory it measured outside the
  // allocator before the run (Backend::fixed_overhead, communicator_overhead); `peak` what
  // MFU is measured against. Elapsed time counts from here.
  TrainReport(const TrainOptions& options, const ModelConfig& config,
              const MemoryPrediction& predicted, const io::WindowLayout& windows, MeshShape mesh,
              const std::string& device, size_t fixed_overhead, size_t communicators,
              const DevicePeak& peak);
  void validation(int step, double loss);
  // Takes the step into the elapsed time and the mean step time the ETA and the summary
  // use (every step of this run after its first, which warms up), and prints its line.
  void step(const StepRecord& record, const std::optional<double>& val_loss);
  // The metrics of the step last passed to step().
  io::Json metrics_json(const StepRecord& record, const std::optional<double>& val_loss) const;
  // Prints the throughput over the steps after the first, then measured vs predicted peak
  // memory per category, of the device and (an offloaded optimizer) of the host pool, and
  // the device's whole peak: `worst` (the last step's worst_rank_peak) against the
  // prediction plus the memory outside the allocator.
  void finish(const Allocator& allocator, const Allocator* host_allocator, const RankPeak& worst);

 private:
  size_t predicted_device_peak() const {
    return predicted_.peak_total + fixed_overhead_ + communicators_;
  }
  Throughput throughput(double seconds) const;
  // " | MFU 4.1% of the calibrated GEMM rate", or nothing when the peak is unknown.
  std::string mfu_text(const Throughput& t) const;

  const TrainOptions& options_;
  MemoryPrediction predicted_;
  size_t fixed_overhead_;
  size_t communicators_;
  double uniform_loss_;
  double processed_tokens_;  // input positions a step computes over the data-parallel ranks
  int devices_;              // ranks: dp x tp
  double flops_per_token_;
  DevicePeak peak_;
  std::chrono::steady_clock::time_point start_;
  // This run's steps after its first: how many, their seconds and loss targets.
  int first_step_ = 0;
  int timed_steps_ = 0;
  double timed_seconds_ = 0;
  double timed_targets_ = 0;
  // Of the step last passed to step().
  double elapsed_seconds_ = 0;
  std::optional<double> eta_seconds_;
};

}  // namespace llmft
