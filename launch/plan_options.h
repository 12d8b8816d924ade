// The options of `llmft plan`, and the cluster options (device preset, its overrides
// and the memory margin) that training's --auto-plan can share with it.
#pragma once

#include <optional>
#include <string>

#include "launch/command_line.h"
#include "parallel/planner/planner.h"

namespace llmft {

struct ClusterOptions {
  std::string gpu, gpu_memory;
  int gpus_per_node = 0;            // 0: the preset's
  double intra_node_bandwidth = 0;  // GB/s; 0: the preset's
  double inter_node_bandwidth = 0;  // GB/s; 0: the preset's
  double memory_margin = 0.05;
  std::string host_memory;  // per device; "": the preset's (cpu: this machine's available)
};

po::options_description cluster_option_descriptions(ClusterOptions& o);
// The value of a layout switch the planner can search (--offload-optimizer,
// --sequence-parallel): auto (searched; off in a run without --auto-plan), on or off.
// Others are an Error naming `option`.
std::optional<bool> parse_layout_switch(const std::string& value, const char* option);
// Their help, shared by train and plan.
extern const char* const kOffloadHelp;
extern const char* const kSequenceParallelHelp;
extern const char* const kGradAccumDtypeHelp;
// The --gpu preset with the overrides applied; errors name the option.
DeviceDescription describe_device(const ClusterOptions& o);

struct PlanOptions {
  std::string model, optimizer, dtype, grad_accum_dtype;
  ClusterOptions cluster;
  int gpus = 1, seq_len = 0, global_batch = 0, top = 0;
  float clip_grad = 0;
  // Constraints, read only when given: --tp, --zero, --micro-batch, and
  // --activation-checkpointing (on, off, or auto to search it).
  int tp = 0, zero = 0, micro_batch = 0;
  std::string activation_checkpointing, offload_optimizer, sequence_parallel;
  bool json = false;
};

// The help of --model (train and plan): the presets by name, or a config.json.
std::string model_option_help();
po::options_description plan_option_descriptions(PlanOptions& o);
// Resolves the model and builds the planner's request; errors name the option.
PlanRequest plan_request(const PlanOptions& o, const po::variables_map& values);

}  // namespace llmft
