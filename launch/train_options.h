// The options of `llmft [train]`, their defaults, and their validation.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/model_config.h"
#include "launch/command_line.h"
#include "launch/plan_options.h"

namespace llmft {

struct TrainOptions {
  std::string model, data, val_data, init_from, save_dir, metrics, device, comm;
  int seq_len, micro_batch, grad_accum, steps, warmup, log_every, eval_every, eval_windows;
  double epochs = 0;  // --epochs (0: not given); resolve_epochs turns it into steps
  int threads, zero, dp, tp;
  int global_batch;  // windows per optimizer step over all data-parallel ranks (0: derived)
  double comm_timeout;
  float lr, min_lr, weight_decay, clip_grad, beta1, beta2, eps, momentum;
  std::string lr_schedule, optimizer, device_memory, dtype, save_max_shard_size;
  std::string grad_accum_dtype;          // fp32 or stored (optim/grad_accumulation.h)
  std::string activation_checkpointing;  // as given: all, none or a count
  int checkpointed_blocks = 0;           // resolved for the model (resolve_checkpointing)
  std::string offload_optimizer;         // as given: auto, on or off
  bool offload = false;                  // resolved: by the value, or by --auto-plan
  std::string sequence_parallel;         // as given: auto, on or off
  bool sequence = false;  // resolved: by the value (tp > 1, checked), or by --auto-plan
  float initial_loss_scale;
  int loss_scale_window;
  int max_skipped_steps;
  std::string max_loss;  // auto, none or a number (launch/divergence_guard.h)
  uint64_t seed;
  bool print_params = false;
  bool share_devices = false;
  // Checkpoints of the whole training state (launch/train_checkpoints.h).
  std::string checkpoint_dir, resume;
  int checkpoint_every = 0, keep_checkpoints = 2;
  bool resume_weights_only = false;
  bool resume_new_data = false;
  // --auto-plan: the planner picks the layout; the cluster options describe the device.
  bool auto_plan = false, plan_only = false, no_calibrate = false;
  std::string plan_json;
  ClusterOptions cluster;
};

// The option groups `llmft train` and `llmft eval` share: the model and its weights
// (--model, --init-from, --dtype); the data's windows (--data, --seq-len, --micro-batch);
// the devices and the layout (--device, --threads, --dp, --tp, --zero, --sequence-parallel,
// --comm, ...).
void add_weights_options(po::options_description& group, TrainOptions& o);
void add_window_options(po::options_description& group, TrainOptions& o);
void add_layout_options(po::options_description& group, TrainOptions& o);
po::options_description train_option_descriptions(TrainOptions& o);
// Checks the values of the shared window and layout options, and how they fit together
// (--comm nccl on a GPU, --sequence-parallel with --tp).
void validate_layout_values(const TrainOptions& o);
void validate_layout(const TrainOptions& o);
// Checks each option's own value (ranges, finite numbers, thread counts): what a value
// in a --config file is checked against even where the command line overrides it.
void validate_option_values(const TrainOptions& o);
// Checks the effective options of a job of `world_size` ranks: each value, the options
// that need one another, and that the tokens of a step fit 32 bits. Errors name the
// options.
void validate_train_options(const TrainOptions& o, int world_size);
// --epochs: refused beside an explicit --steps, and must be a positive number.
void check_run_length(const TrainOptions& o, const po::variables_map& values);
// With --epochs, sets steps to ceil(epochs x windows / global_windows).
void resolve_epochs(TrainOptions& o, size_t windows, int global_windows);
// --init-from without --model: the model is the config.json in the weights' directory (or
// beside the weights file); an error when there is none.
void imply_model_from_weights(TrainOptions& o, const po::variables_map& values);
// --seq-len must fit the model's context.
void require_context(const TrainOptions& o, const ModelConfig& config);
// The host pool's budget per rank: --host-memory, else this machine's available memory
// divided by the ranks on it.
size_t host_memory_budget(const TrainOptions& o, int ranks_per_node);
// Sets checkpointed_blocks from --activation-checkpointing for a model of `blocks` blocks.
void resolve_checkpointing(TrainOptions& o, int blocks);
// With --global-batch and an explicit layout: derives --grad-accum (or checks a given
// one) so that micro-batch x grad-accum x data-parallel ranks is the global batch.
void apply_global_batch(TrainOptions& o, const po::variables_map& values, int data_parallel);

}  // namespace llmft
