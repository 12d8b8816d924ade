#include "launch/plan_options.h"

#include <optional>
#include <sstream>

#include "core/byte_size.h"
#include "core/error.h"
#include "core/model.h"
#include "io/hf_config.h"
#include "launch/option_checks.h"

namespace llmft {

namespace {

constexpr double kGB = 1e9;

std::string joined(const std::vector<std::string>& names) {
  std::ostringstream os;
  for (const std::string& n : names) os << (os.tellp() > 0 ? ", " : "") << n;
  return os.str();
}

// The planner's constraint: kAllBlocks for every block, else a count within the model's.
std::optional<int> checkpointing_constraint(const std::string& value, int blocks) {
  if (value == "auto") return std::nullopt;
  const int checkpointed = checkpointed_blocks_of(value, blocks, "--activation-checkpointing");
  return checkpointed == blocks ? ModelOptions::kAllBlocks : checkpointed;
}

}  // namespace

const char* const kOffloadHelp =
    "keep SGD's or AdamW's f32 master weights, gradient sums and state in host memory and "
    "update them there (ZeRO-Offload): auto (the planner decides; off without --auto-plan), "
    "on, off; alone it means on";

const char* const kGradAccumDtypeHelp =
    "what sgd and adamw sum a step's micro-batch gradients (and tied weights' uses) in: "
    "fp32 (an fp32 gradient buffer, as Megatron and DeepSpeed keep; with bf16 or fp16 "
    "weights it doubles the gradients' memory) or stored (the --dtype of the weights, "
    "rounding each micro-batch's addition); the same with fp32 weights; lomo and adalomo "
    "keep no summed gradient and ignore it";

const char* const kSequenceParallelHelp =
    "with --tp: the norm and residual regions hold 1/tp of each micro-batch's rows and the "
    "tensor-parallel all-reduces become reduce-scatter + all-gather pairs (Megatron's "
    "sequence parallelism): auto (the planner decides; off without --auto-plan), on, off; "
    "alone it means on";

std::optional<bool> parse_layout_switch(const std::string& value, const char* option) {
  if (value == "auto") return std::nullopt;
  if (value == "on") return true;
  if (value == "off") return false;
  LLMFT_FAIL(option << " " << value << ": use auto, on or off");
}

po::options_description cluster_option_descriptions(ClusterOptions& o) {
  const std::string presets =
      "device preset: " + joined(device_preset_names()) + " (cpu: this machine's memory and cores)";
  // clang-format off
  po::options_description cluster("Cluster");
  cluster.add_options()
      ("gpu", po::value(&o.gpu)->default_value("a100-80g"), presets.c_str())
      ("gpu-memory", po::value(&o.gpu_memory)->default_value(""),
       "memory per device, e.g. 24GiB (default: the preset's)")
      ("gpus-per-node", po::value(&o.gpus_per_node)->default_value(0),
       "devices per node; tensor-parallel groups up to this size stay in a node (0 = the "
       "preset's, 8 for GPUs)")
      ("intra-node-bandwidth", po::value(&o.intra_node_bandwidth)->default_value(0, "0"),
       "GB/s each device sends to the others of its node (0 = the preset's NVLink or PCIe)")
      ("inter-node-bandwidth", po::value(&o.inter_node_bandwidth)->default_value(0, "0"),
       "GB/s each device sends across nodes (0 = the preset's InfiniBand)")
      ("memory-margin", po::value(&o.memory_margin)->default_value(0.05, "0.05"),
       "share of each device's memory kept free: a layout fits when its predicted peak is at "
       "most memory x (1 - margin)")
      ("host-memory", po::value(&o.host_memory)->default_value(""),
       "host memory per device for an offloaded optimizer, e.g. 64GiB (default: a GPU "
       "preset's assumption; cpu and training runs: this machine's available memory over "
       "its ranks)");
  // clang-format on
  return cluster;
}

DeviceDescription describe_device(const ClusterOptions& o) {
  DeviceDescription d = device_preset(o.gpu);
  if (!o.gpu_memory.empty()) d.memory_bytes = parse_byte_size(o.gpu_memory, "--gpu-memory");
  LLMFT_REQUIRE(d.memory_bytes > 0, "--gpu-memory must be more than 0");
  LLMFT_REQUIRE(o.gpus_per_node >= 0, "--gpus-per-node must not be negative");
  LLMFT_REQUIRE(o.intra_node_bandwidth >= 0 && o.inter_node_bandwidth >= 0,
                "--intra-node-bandwidth and --inter-node-bandwidth must not be negative");
  if (o.gpus_per_node > 0) d.gpus_per_node = o.gpus_per_node;
  if (!o.host_memory.empty()) {
    d.host_memory_bytes = parse_byte_size(o.host_memory, "--host-memory");
    d.host_memory_measured = true;  // given
  }
  if (o.intra_node_bandwidth > 0) {
    d.intra_node = uniform_link(o.intra_node_bandwidth * kGB, d.intra_node.all_reduce.latency_s);
  }
  if (o.inter_node_bandwidth > 0) {
    d.inter_node = uniform_link(o.inter_node_bandwidth * kGB, d.inter_node.all_reduce.latency_s);
  }
  return d;
}

std::string model_option_help() {
  return "preset (" + joined(preset_names()) + ") or a Hugging Face config.json / model directory";
}

po::options_description plan_option_descriptions(PlanOptions& o) {
  const std::string models = model_option_help();
  // clang-format off
  po::options_description job("Job (fixed by you)");
  job.add_options()
      ("model", po::value(&o.model)->default_value("gpt2-tiny"), models.c_str())
      ("gpus", po::value(&o.gpus)->default_value(1), "devices of the job (the world size)")
      ("optimizer", po::value(&o.optimizer)->default_value("adamw"), "sgd, adamw, lomo or adalomo")
      ("dtype", po::value(&o.dtype)->default_value("fp32"),
       "stored dtype of weights and gradients: fp32, bf16 or fp16")
      ("grad-accum-dtype", po::value(&o.grad_accum_dtype)->default_value("fp32"),
       kGradAccumDtypeHelp)
      ("seq-len", po::value(&o.seq_len)->default_value(128), "tokens per training window")
      ("global-batch", po::value(&o.global_batch)->default_value(8),
       "windows per optimizer step over all ranks: micro-batch x grad-accum x dp")
      ("clip-grad", po::value(&o.clip_grad)->default_value(1.0f, "1.0"),
       "gradient clipping as training will use it (0 disables; with lomo or adalomo it "
       "costs a second backward)");
  po::options_description layout("Layout (searched unless given)");
  layout.add_options()
      ("tp", po::value(&o.tp), "tensor-parallel size")
      ("zero", po::value(&o.zero), "ZeRO stage, 0-3")
      ("micro-batch", po::value(&o.micro_batch), "windows per micro-batch")
      ("activation-checkpointing",
       po::value(&o.activation_checkpointing)->default_value("auto")->implicit_value("on"),
       "auto (searched: none, all, or the fewest first blocks that fit), all, none, or how "
       "many of the first blocks; alone it means all")
      ("offload-optimizer",
       po::value(&o.offload_optimizer)->default_value("auto")->implicit_value("on"),
       kOffloadHelp)
      ("sequence-parallel",
       po::value(&o.sequence_parallel)->default_value("auto")->implicit_value("on"),
       kSequenceParallelHelp);
  po::options_description output("Output");
  output.add_options()
      ("top", po::value(&o.top)->default_value(10),
       "fitting and rejected layouts to list in the table")
      ("json", po::bool_switch(&o.json),
       "print the whole search as one JSON object instead of the table");
  // clang-format on
  po::options_description all;
  all.add(job).add(cluster_option_descriptions(o.cluster)).add(layout).add(output);
  return all;
}

PlanRequest plan_request(const PlanOptions& o, const po::variables_map& values) {
  LLMFT_REQUIRE(o.top >= 1, "--top must be at least 1 (got " << o.top << ")");
  LLMFT_REQUIRE(o.clip_grad >= 0, "--clip-grad must not be negative");
  PlanRequest r;
  r.workload.model = io::resolve_model(o.model);
  r.workload.optimizer.kind = parse_optimizer_kind(o.optimizer);
  r.workload.optimizer.grad_accum_dtype = parse_grad_accum_dtype(o.grad_accum_dtype);
  r.workload.dtype = parse_dtype(o.dtype);
  LLMFT_REQUIRE(r.workload.dtype != DType::i32,
                "--dtype " << o.dtype << ": weights are fp32, bf16 or fp16");
  r.workload.seq_len = o.seq_len;
  r.workload.global_batch = o.global_batch;
  r.workload.clip_grad = o.clip_grad > 0;
  r.world = o.gpus;
  r.device = describe_device(o.cluster);
  r.memory_margin = o.cluster.memory_margin;
  if (values.count("tp")) r.constraints.tp = o.tp;
  if (values.count("zero")) r.constraints.zero_stage = o.zero;
  if (values.count("micro-batch")) r.constraints.micro_batch = o.micro_batch;
  r.constraints.checkpointed_blocks =
      checkpointing_constraint(o.activation_checkpointing, r.workload.model.n_layer);
  r.constraints.offload_optimizer = parse_layout_switch(o.offload_optimizer, "--offload-optimizer");
  r.constraints.sequence_parallel = parse_layout_switch(o.sequence_parallel, "--sequence-parallel");
  return r;
}

}  // namespace llmft
