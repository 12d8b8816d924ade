// The startup benchmarks behind --auto-plan's time model: the GEMM rate each rank
// achieves on its device in the run's compute dtype (the slowest rank's, since ranks
// sharing a machine compete for it in training too), what other kernels cost (bytes/s
// streaming from memory, seconds per call), the bandwidth and latency of each collective a
// step runs (all-reduce, reduce-scatter, all-gather) within a node and, when the job spans
// nodes, across them, and attention's cost at the run's head shape. A few seconds at most;
// the result is cached (calibration.h) so that later jobs on the same machines skip it.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "comm/communicator.h"
#include "core/allocator.h"
#include "core/backend.h"
#include "core/model_config.h"
#include "parallel/planner/calibration.h"

namespace llmft {

// Collective over `world` (null: a one-rank job, no links measured). `node` holds the
// ranks on this rank's machine; GEMMs run in `gemm_dtype` (the run's compute dtype).
Calibration measure_devices(Backend& backend, Allocator& allocator, Communicator* world,
                            Communicator* node, const std::string& device_name, DType gemm_dtype);

// The probe of a cached calibration: the rate gemm_flops stands for, measured again on the
// square GEMM of `cached`.gemm_size rows in `gemm_dtype`, timed and extrapolated with its
// gemm_half_rate_rows as measure_devices times and extrapolates it (the fastest of five
// timings; a fraction of a second on a CPU); the slowest rank's. Collective
// over `world` (null: one rank).
double probe_gemm_flops(Backend& backend, Allocator& allocator, Communicator* world,
                        DType gemm_dtype, const Calibration& cached);

// Seconds of attention's forward and backward over `batch` sequences of T queries of
// `model`'s heads in the dtype the backend computes a `stored` run in, on the slowest rank
// of `world` (null: one rank).
std::pair<double, double> attention_seconds(Backend& backend, Allocator& allocator,
                                            Communicator* world, const ModelConfig& model,
                                            int64_t T, DType stored, int64_t batch = 1);

// Attention's cost for `model`'s head shape on this backend, in the dtype it computes a
// `stored` run in: its forward and backward over sequences of seq_len and seq_len / 2
// queries, fitted to quadratic + linear terms (device.h's AttentionCost); the slowest
// rank's. Collective over `world` (null: one rank).
AttentionCost measure_attention(Backend& backend, Allocator& allocator, Communicator* world,
                                const ModelConfig& model, int seq_len, DType stored);

}  // namespace llmft
