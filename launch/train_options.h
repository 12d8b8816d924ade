// The options of `llmft [train]`, their defaults, and their validation.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "launch/command_line.h"

namespace llmft {

struct TrainOptions {
  std::string model, data, val_data, init_from, save_dir, metrics, device;
  int seq_len, micro_batch, grad_accum, steps, warmup, log_every, eval_every, eval_windows;
  int threads, zero, dp, tp;
  double comm_timeout;
  float lr, min_lr, weight_decay, clip_grad, beta1, beta2, eps, momentum;
  std::string lr_schedule, optimizer, device_memory, dtype;
  bool activation_checkpointing = false;
  float initial_loss_scale;
  int loss_scale_window;
  uint64_t seed;
  bool print_params = false;
};

po::options_description train_option_descriptions(TrainOptions& o);
// Checks values that Boost cannot (ranges, required files); errors name the option.
void validate_train_options(const TrainOptions& o, const po::variables_map& values);

}  // namespace llmft
