#include "launch/train_options.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>

#include "comm/communicator_registry.h"
#include "core/byte_size.h"
#include "core/error.h"
#include "launch/divergence_guard.h"
#include "launch/option_checks.h"
#include "optim/optimizer.h"
#include "parallel/optimizer_offload.h"
#include "parallel/planner/device.h"

namespace llmft {

void add_weights_options(po::options_description& group, TrainOptions& o) {
  const std::string models = model_option_help();
  // clang-format off
  group.add_options()
      ("model", po::value(&o.model)->default_value("gpt2-tiny"), models.c_str())
      ("init-from", po::value(&o.init_from)->default_value(""),
       "start from these weights: a Hugging Face model directory, its "
       "model.safetensors.index.json (sharded weights) or one .safetensors file; F32, BF16 "
       "or F16; each rank reads only its own slices; without --model, the model is the "
       "config.json beside them")
      ("dtype", po::value(&o.dtype)->default_value("fp32"),
       "stored dtype of weights and gradients: fp32, bf16 or fp16 (the step computes in fp32 "
       "on cpu, in this dtype with fp32 accumulation on cuda; bf16 and fp16 keep an fp32 "
       "master copy for the optimizer)");
  // clang-format on
}

void add_window_options(po::options_description& group, TrainOptions& o) {
  // clang-format off
  group.add_options()
      ("data", po::value(&o.data)->default_value(""), "token file (llmft prepare)")
      ("seq-len", po::value(&o.seq_len)->default_value(128), "tokens per window")
      ("micro-batch", po::value(&o.micro_batch)->default_value(8), "windows per micro-batch");
  // clang-format on
}

void add_layout_options(po::options_description& group, TrainOptions& o) {
  // clang-format off
  group.add_options()
      ("device", po::value(&o.device)->default_value("cpu"),
       "cpu, or in CUDA builds cuda (each rank the GPU of its place on the node) or cuda:N")
      ("share-devices", po::bool_switch(&o.share_devices),
       "let more ranks than GPUs run on a node, sharing GPUs and their memory")
      ("device-memory", po::value(&o.device_memory)->default_value("0"),
       "device memory budget, e.g. 2GiB (0 = unlimited on cpu; on cuda what is free, less "
       "256 MiB for the runtime)")
      ("threads", po::value(&o.threads)->default_value(0),
       "CPU threads per rank (0 = OMP_NUM_THREADS if set, else this rank's share of the CPUs "
       "it may run on, divided with the node's other ranks)")
      ("dp", po::value(&o.dp)->default_value(0),
       "data-parallel ranks (0 = ranks / --tp)")
      ("tp", po::value(&o.tp)->default_value(1),
       "tensor-parallel ranks per model replica (Megatron-style; must divide the ranks, the "
       "attention heads, the key/value heads and the MLP width)")
      ("zero", po::value(&o.zero)->default_value(0),
       "ZeRO stage across the ranks: 0 replicates everything (DDP); 1 shards optimizer state "
       "and master weights; 2 also gradients; 3 also weights")
      ("sequence-parallel",
       po::value(&o.sequence_parallel)->default_value("auto")->implicit_value("on"),
       kSequenceParallelHelp)
      ("comm", po::value(&o.comm)->default_value("auto"),
       "collectives between ranks: auto (NCCL on GPUs when built and each rank has its own "
       "GPU, else MPI, through host copies for GPU memory), mpi, nccl")
      ("comm-timeout", po::value(&o.comm_timeout)->default_value(300.0, "300"),
       "seconds a collective may wait for the other ranks before the job aborts");
  // clang-format on
}

po::options_description train_option_descriptions(TrainOptions& o) {
  po::options_description model("Model");
  add_weights_options(model, o);
  // clang-format off
  model.add_options()
      ("activation-checkpointing",
       po::value(&o.activation_checkpointing)->default_value("none")->implicit_value("all"),
       "all, none, or K: the first K blocks keep only their input in forward and recompute "
       "the rest in backward (the first ones, backpropagated last, give the lowest peak); "
       "alone it means all")
      ("print-params", po::bool_switch(&o.print_params),
       "print the model's exact parameter count and exit");
  po::options_description data("Data");
  add_window_options(data, o);
  data.add_options()
      ("val-data", po::value(&o.val_data)->default_value(""), "validation token file")
      ("grad-accum", po::value(&o.grad_accum)->default_value(1),
       "micro-batches accumulated per optimizer step")
      ("grad-accum-dtype", po::value(&o.grad_accum_dtype)->default_value("fp32"),
       kGradAccumDtypeHelp)
      ("seed", po::value<std::string>()->default_value("1234")->notifier(
           [&o](const std::string& text) { o.seed = parse_seed(text, "--seed"); }),
       "seed of the weights and data order (0 to 2^64 - 1)");
  po::options_description optim("Optimisation");
  optim.add_options()
      ("steps", po::value(&o.steps)->default_value(100), "optimizer steps")
      ("epochs", po::value(&o.epochs),
       "instead of --steps: passes over the --data windows (may be fractional); the steps "
       "are ceil(epochs x windows / global batch), so the last step may reach a little "
       "into the next pass")
      ("optimizer", po::value(&o.optimizer)->default_value("adamw"),
       "sgd, adamw, lomo (SGD fused into backward: no gradients kept, no state) or adalomo "
       "(LOMO with a factored second moment)")
      ("lr", po::value(&o.lr)->default_value(3e-4f, "3e-4"), "peak learning rate")
      ("min-lr", po::value(&o.min_lr)->default_value(0.0f, "0"), "learning rate at the last step")
      ("lr-schedule", po::value(&o.lr_schedule)->default_value("cosine"),
       "constant, cosine or linear (after warmup)")
      ("warmup", po::value(&o.warmup)->default_value(0), "linear warmup steps")
      ("weight-decay", po::value(&o.weight_decay)->default_value(0.0f, "0"),
       "decoupled weight decay of matrices and embeddings")
      ("clip-grad", po::value(&o.clip_grad)->default_value(1.0f, "1.0"),
       "clip the global gradient norm to this (0 disables)")
      ("beta1", po::value(&o.beta1)->default_value(0.9f, "0.9"), "AdamW beta1")
      ("beta2", po::value(&o.beta2)->default_value(0.95f, "0.95"), "AdamW beta2")
      ("eps", po::value(&o.eps)->default_value(1e-8f, "1e-8"), "AdamW epsilon")
      ("momentum", po::value(&o.momentum)->default_value(0.0f, "0"), "SGD momentum")
      ("initial-loss-scale", po::value(&o.initial_loss_scale)->default_value(65536.0f, "65536"),
       "fp16: the starting dynamic loss scale")
      ("loss-scale-window", po::value(&o.loss_scale_window)->default_value(1000),
       "fp16: clean steps before the loss scale doubles (it halves on overflow)")
      ("max-skipped-steps", po::value(&o.max_skipped_steps)->default_value(10),
       "fp16: overflow-skipped steps in a row after which the run stops as diverged (exit "
       "code 65); in fp32 and bf16 the first non-finite loss or gradient norm stops it")
      ("max-loss", po::value(&o.max_loss)->default_value("auto"),
       "a finite loss above this also stops the run as diverged (exit code 65): auto (20 x "
       "ln(vocabulary), far above any healthy run), none, or a number");
  po::options_description run("Run");
  add_layout_options(run, o);
  run.add_options()
      ("offload-optimizer",
       po::value(&o.offload_optimizer)->default_value("auto")->implicit_value("on"),
       kOffloadHelp)
      ("global-batch", po::value(&o.global_batch)->default_value(0),
       "windows per optimizer step over all data-parallel ranks (0 = micro-batch x "
       "grad-accum x dp); with an explicit layout it sets --grad-accum")
      ("auto-plan", po::bool_switch(&o.auto_plan),
       "let the planner choose dp x tp, --zero, --micro-batch, --grad-accum and activation "
       "checkpointing for the launched ranks (layout options given explicitly are kept); "
       "prints the ranked candidates, and refuses to start when none fits")
      ("plan-only", po::bool_switch(&o.plan_only), "with --auto-plan: plan, then exit")
      ("plan-json", po::value(&o.plan_json)->default_value(""),
       "with --auto-plan: also write the plan as JSON (the `llmft plan --json` contract)")
      ("no-calibrate", po::bool_switch(&o.no_calibrate),
       "with --auto-plan: use the device preset's figures instead of startup benchmarks "
       "(which are cached per host and world)")
      ("log-every", po::value(&o.log_every)->default_value(10), "print a step line every N steps")
      ("eval-every", po::value(&o.eval_every)->default_value(0),
       "validation loss every N steps (0 = only before and after training)")
      ("eval-windows", po::value(&o.eval_windows)->default_value(64),
       "validation windows per evaluation")
      ("metrics", po::value(&o.metrics)->default_value(""), "append one JSON object per step here")
      ("save-dir", po::value(&o.save_dir)->default_value(""),
       "write the trained model here (Hugging Face config.json + model.safetensors, or "
       "shards + model.safetensors.index.json when larger than --save-max-shard-size)")
      ("save-max-shard-size", po::value(&o.save_max_shard_size)->default_value("50GB"),
       "largest weights file --save-dir writes (as transformers' max_shard_size: 50GB, 5GB, "
       "500MB, ...)");
  po::options_description checkpoints("Checkpoints (training state in HDF5; README \"Checkpoints\")");
  checkpoints.add_options()
      ("checkpoint-dir", po::value(&o.checkpoint_dir)->default_value(""),
       "save the whole training state here (step_N.h5), after the last step and when "
       "signalled (SIGTERM, SIGINT, SIGUSR1: save, then exit with code 75)")
      ("checkpoint-every", po::value(&o.checkpoint_every)->default_value(0),
       "also save every N steps (0: only at the end and when signalled)")
      ("keep-checkpoints", po::value(&o.keep_checkpoints)->default_value(2),
       "keep the newest K checkpoints that a later healthy step verified, and any newer "
       "(0: keep all)")
      ("resume", po::value(&o.resume)->implicit_value("latest")->default_value(""),
       "continue from the newest complete checkpoint in --checkpoint-dir (starting afresh "
       "when there is none yet), or --resume=PATH: a checkpoint file or directory; any layout "
       "may resume any other's")
      ("resume-new-data", po::bool_switch(&o.resume_new_data),
       "with --resume: accept a checkpoint drawn from other --data or another --seq-len, "
       "continuing its window count on this run's windows (printed as a note)")
      ("resume-weights-only", po::bool_switch(&o.resume_weights_only),
       "with --resume: take the checkpoint's weights only and start a fresh run on them (new "
       "optimizer state, step 1, the data from the start; any optimizer and dtype)");
  // clang-format on
  po::options_description all;
  all.add(model)
      .add(data)
      .add(optim)
      .add(run)
      .add(checkpoints)
      .add(cluster_option_descriptions(o.cluster));
  return all;
}

namespace {

bool finite_positive(double v) {
  return std::isfinite(v) && v > 0;
}

// The tokens of one optimizer step over all ranks, in 64 bits, must fit the 32-bit counts
// the loader and the report use; a product of options that would wrap is refused here.
void require_step_size(const TrainOptions& o, int world_size) {
  // Each factor is below 2^31, so neither product overflows 64 bits.
  const int64_t windows =
      std::max<int64_t>(o.global_batch, int64_t{o.micro_batch} * o.grad_accum * world_size);
  const int64_t tokens = windows * o.seq_len;
  LLMFT_REQUIRE(tokens <= INT32_MAX,
                "one step would hold " << tokens << " tokens (" << windows
                                       << " windows of --seq-len " << o.seq_len
                                       << ": --micro-batch x --grad-accum x " << world_size
                                       << " ranks, or --global-batch), more than " << INT32_MAX
                                       << "; lower --grad-accum, --micro-batch or --global-batch");
}

}  // namespace

void validate_layout_values(const TrainOptions& o) {
  // One token per window trains each token on itself alone: attention over one position
  // weighs it 1 whatever the queries and keys, so they get no gradient, and only
  // position 0 is ever trained (io/data_loader.cpp cuts windows of --seq-len inputs).
  LLMFT_REQUIRE(o.seq_len >= 2, "--seq-len " << o.seq_len
                                             << ": a window needs at least 2 tokens (with one, "
                                                "each token learns the next from itself alone: "
                                                "attention has no context and only position 0 "
                                                "trains); use --seq-len 2 or more");
  LLMFT_REQUIRE(o.micro_batch > 0,
                "--micro-batch must be at least 1 (got " << o.micro_batch << ")");
  require_thread_count(o.threads, "--threads");
  LLMFT_REQUIRE(finite_positive(o.comm_timeout),
                "--comm-timeout must be a positive finite number of seconds");
  require_communicator(o.comm);
  LLMFT_REQUIRE(o.zero >= 0 && o.zero <= 3,
                "--zero " << o.zero << ": ZeRO stages are 0, 1, 2 and 3");
  LLMFT_REQUIRE(o.dtype == "fp32" || o.dtype == "bf16" || o.dtype == "fp16",
                "--dtype " << o.dtype << ": unknown dtype; use fp32, bf16 or fp16");
  parse_layout_switch(o.sequence_parallel, "--sequence-parallel");
}

void validate_option_values(const TrainOptions& o) {
  validate_layout_values(o);
  LLMFT_REQUIRE(o.steps > 0, "--steps must be at least 1 (got " << o.steps << ")");
  LLMFT_REQUIRE(o.grad_accum > 0, "--grad-accum must be at least 1 (got " << o.grad_accum << ")");
  LLMFT_REQUIRE(o.warmup >= 0, "--warmup must not be negative");
  LLMFT_REQUIRE(finite_positive(o.lr),
                "--lr must be a positive finite number (got " << o.lr << ")");
  LLMFT_REQUIRE(std::isfinite(o.min_lr) && o.min_lr >= 0,
                "--min-lr must be a finite number >= 0 (got " << o.min_lr << ")");
  LLMFT_REQUIRE(std::isfinite(o.weight_decay) && o.weight_decay >= 0,
                "--weight-decay must be a finite number >= 0 (got " << o.weight_decay << ")");
  LLMFT_REQUIRE(std::isfinite(o.clip_grad) && o.clip_grad >= 0,
                "--clip-grad must be a finite number >= 0, 0 to disable clipping (got "
                    << o.clip_grad << ")");
  LLMFT_REQUIRE(o.log_every > 0, "--log-every must be at least 1");
  LLMFT_REQUIRE(o.eval_every >= 0, "--eval-every must not be negative");
  LLMFT_REQUIRE(o.eval_windows > 0, "--eval-windows must be at least 1");
  LLMFT_REQUIRE(parse_byte_size(o.save_max_shard_size, "--save-max-shard-size") > 0,
                "--save-max-shard-size must be positive (got " << o.save_max_shard_size << ")");
  LLMFT_REQUIRE(o.beta1 >= 0 && o.beta1 < 1 && o.beta2 >= 0 && o.beta2 < 1,
                "--beta1 and --beta2 must lie in [0, 1)");
  LLMFT_REQUIRE(finite_positive(o.eps),
                "--eps must be a positive finite number (got " << o.eps << ")");
  LLMFT_REQUIRE(o.momentum >= 0 && o.momentum < 1, "--momentum must lie in [0, 1)");
  parse_optimizer_kind(o.optimizer);
  parse_grad_accum_dtype(o.grad_accum_dtype);
  LLMFT_REQUIRE(
      std::isfinite(o.initial_loss_scale) && o.initial_loss_scale >= 1,
      "--initial-loss-scale must be a finite number >= 1 (got " << o.initial_loss_scale << ")");
  LLMFT_REQUIRE(o.loss_scale_window > 0, "--loss-scale-window must be at least 1");
  LLMFT_REQUIRE(o.max_skipped_steps >= 0, "--max-skipped-steps must not be negative");
  parse_checkpointed_blocks(o.activation_checkpointing, "--activation-checkpointing");
  parse_layout_switch(o.offload_optimizer, "--offload-optimizer");
  if (!o.cluster.host_memory.empty()) parse_byte_size(o.cluster.host_memory, "--host-memory");
  DivergenceGuard::max_loss(o.max_loss, 2);  // the option's form; the bound needs the model
  LLMFT_REQUIRE(o.global_batch >= 0, "--global-batch must not be negative");
  LLMFT_REQUIRE(o.checkpoint_every >= 0, "--checkpoint-every must not be negative");
  LLMFT_REQUIRE(o.keep_checkpoints >= 0, "--keep-checkpoints must not be negative");
}

void validate_layout(const TrainOptions& o) {
  LLMFT_REQUIRE(o.comm != "nccl" || o.device.rfind("cuda", 0) == 0,
                "--comm nccl needs --device cuda (NCCL moves GPU memory); use --comm mpi or auto");
  const bool sequence =
      parse_layout_switch(o.sequence_parallel, "--sequence-parallel").value_or(false);
  LLMFT_REQUIRE(o.auto_plan || o.tp > 1 || !sequence,
                "--sequence-parallel splits the sequence over the tensor-parallel group: it "
                "needs --tp 2 or more (or --auto-plan)");
  LLMFT_REQUIRE(o.tp <= 1 || !sequence || int64_t{o.micro_batch} * o.seq_len % o.tp == 0,
                "--sequence-parallel with --tp "
                    << o.tp << ": a micro-batch's " << int64_t{o.micro_batch} * o.seq_len
                    << " rows (--micro-batch x --seq-len) must be a multiple "
                       "of --tp; change --seq-len or --micro-batch");
}

void validate_train_options(const TrainOptions& o, int world_size) {
  validate_option_values(o);
  validate_layout(o);
  LLMFT_REQUIRE(o.min_lr <= o.lr, "--min-lr must lie between 0 and --lr");
  check_accumulation(parse_optimizer_kind(o.optimizer), o.grad_accum);
  if (parse_layout_switch(o.offload_optimizer, "--offload-optimizer").value_or(false)) {
    check_offload(parse_optimizer_kind(o.optimizer));
  }
  LLMFT_REQUIRE(o.checkpoint_every == 0 || !o.checkpoint_dir.empty(),
                "--checkpoint-every needs --checkpoint-dir (where to save)");
  LLMFT_REQUIRE(!o.resume_weights_only || !o.resume.empty(),
                "--resume-weights-only needs --resume (which checkpoint)");
  LLMFT_REQUIRE(o.auto_plan || (!o.plan_only && o.plan_json.empty()),
                "--plan-only and --plan-json need --auto-plan");
  LLMFT_REQUIRE(o.print_params || o.plan_only || !o.data.empty(),
                "--data is required: make a token file with `llmft prepare --input FILE "
                "--output train.tok`");
  require_step_size(o, world_size);
}

size_t host_memory_budget(const TrainOptions& o, int ranks_per_node) {
  if (!o.cluster.host_memory.empty())
    return parse_byte_size(o.cluster.host_memory, "--host-memory");
  return available_host_memory() / static_cast<size_t>(std::max(ranks_per_node, 1));
}

void check_run_length(const TrainOptions& o, const po::variables_map& values) {
  if (!values.count("epochs")) return;
  LLMFT_REQUIRE(values["steps"].defaulted(),
                "--epochs " << o.epochs << " and --steps " << o.steps
                            << " both set the length of the run; give one of them");
  LLMFT_REQUIRE(
      finite_positive(o.epochs),
      "--epochs must be a positive number of passes over --data (got " << o.epochs << ")");
}

void resolve_epochs(TrainOptions& o, size_t windows, int global_windows) {
  if (o.epochs <= 0) return;
  const double steps = std::ceil(o.epochs * static_cast<double>(windows) / global_windows);
  LLMFT_REQUIRE(steps <= INT32_MAX,
                "--epochs " << o.epochs << " of " << windows << " windows in global batches of "
                            << global_windows << " would be " << steps << " steps, more than "
                            << INT32_MAX << "; give fewer --epochs");
  o.steps = static_cast<int>(steps);
}

void imply_model_from_weights(TrainOptions& o, const po::variables_map& values) {
  if (o.init_from.empty() || !values["model"].defaulted()) return;
  namespace fs = std::filesystem;
  std::error_code error;
  const fs::path weights(o.init_from);
  const fs::path dir = fs::is_directory(weights, error) ? weights : weights.parent_path();
  LLMFT_REQUIRE(fs::is_regular_file(dir / "config.json", error),
                "--init-from " << o.init_from << ": no config.json "
                               << (dir == weights ? "in it" : "beside it")
                               << " to take the model from; name the model with --model");
  o.model = dir.empty() ? "." : dir.string();
}

void require_context(const TrainOptions& o, const ModelConfig& config) {
  LLMFT_REQUIRE(o.seq_len <= config.max_seq_len,
                "--seq-len " << o.seq_len << " is longer than the context of --model "
                             << config.name << " (" << config.max_seq_len
                             << " positions); use --seq-len " << config.max_seq_len << " or less");
}

void resolve_checkpointing(TrainOptions& o, int blocks) {
  o.checkpointed_blocks =
      checkpointed_blocks_of(o.activation_checkpointing, blocks, "--activation-checkpointing");
}

void apply_global_batch(TrainOptions& o, const po::variables_map& values, int data_parallel) {
  if (o.global_batch == 0) return;
  const int64_t per_accumulation = int64_t{o.micro_batch} * data_parallel;
  LLMFT_REQUIRE(o.global_batch % per_accumulation == 0,
                "--global-batch " << o.global_batch << " is not a multiple of --micro-batch "
                                  << o.micro_batch << " x " << data_parallel
                                  << " data-parallel ranks; change one of them, or use "
                                     "--auto-plan to choose");
  const int accum = static_cast<int>(o.global_batch / per_accumulation);
  LLMFT_REQUIRE(values["grad-accum"].defaulted() || o.grad_accum == accum,
                "--global-batch " << o.global_batch << " needs --grad-accum " << accum
                                  << " with --micro-batch " << o.micro_batch << " on "
                                  << data_parallel << " data-parallel ranks, not " << o.grad_accum);
  o.grad_accum = accum;
  check_accumulation(parse_optimizer_kind(o.optimizer), o.grad_accum);
}

}  // namespace llmft
