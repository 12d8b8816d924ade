// `llmft [train]`: fine-tune a model on a token file and report every step.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <utility>

#include "comm/mpi_gather_strings.h"
#include "comm/rank_agreement.h"
#include "core/backend_registry.h"
#include "core/byte_size.h"
#include "core/error.h"
#include "core/model_factory.h"
#include "io/batch_cut.h"
#include "io/data_loader.h"
#include "io/hf_checkpoint.h"
#include "io/hf_config.h"
#include "io/metrics.h"
#include "io/model_directory_files.h"
#include "io/output_directory.h"
#include "io/token_file.h"
#include "launch/auto_plan.h"
#include "launch/calibration_cache.h"
#include "launch/commands.h"
#include "launch/cpu_share.h"
#include "launch/device_peak.h"
#include "launch/divergence_guard.h"
#include "launch/initial_weights.h"
#include "launch/job_devices.h"
#include "launch/output_checks.h"
#include "launch/run_outputs.h"
#include "launch/run_record.h"
#include "launch/run_settings.h"
#include "launch/train_checkpoints.h"
#include "launch/train_options.h"
#include "launch/train_report.h"
#include "parallel/engine.h"
#include "parallel/memory_model.h"
#include "parallel/mesh.h"
#include "parallel/tp_gather.h"

namespace llmft {

namespace {

const char* kUsage =
    "usage: llmft [train] --data FILE.tok [options]\n"
    "       llmft prepare --input FILE --output FILE.tok   (see llmft prepare --help)\n"
    "       llmft generate --checkpoint DIR --prompt TEXT  (see llmft generate --help)\n"
    "       llmft plan --model MODEL --gpus N --gpu PRESET  (see llmft plan --help)\n"
    "       llmft export --checkpoint STEP.h5 --save-dir DIR (see llmft export --help)";

EngineOptions engine_options_from(const TrainOptions& o) {
  EngineOptions e;
  e.optimizer.kind = parse_optimizer_kind(o.optimizer);
  e.optimizer.beta1 = o.beta1;
  e.optimizer.beta2 = o.beta2;
  e.optimizer.eps = o.eps;
  e.optimizer.weight_decay = o.weight_decay;
  e.optimizer.momentum = o.momentum;
  e.optimizer.grad_accum_dtype = parse_grad_accum_dtype(o.grad_accum_dtype);
  e.clip_grad = o.clip_grad;
  e.dtype = parse_dtype(o.dtype);
  e.loss_scale = LossScaleConfig{e.dtype == DType::f16, o.initial_loss_scale, o.loss_scale_window};
  e.seed = o.seed;
  return e;
}

// Data smaller than one global batch still trains, but every step repeats windows.
void warn_if_data_under_batch(const TrainOptions& o, size_t windows, int global_windows) {
  if (windows >= static_cast<size_t>(global_windows)) return;
  std::fprintf(stderr,
               "warning: --data %s holds %zu windows of --seq-len %d, fewer than one global "
               "batch of %d windows: windows repeat within a step\n",
               o.data.c_str(), windows, o.seq_len, global_windows);
}

}  // namespace

int run_train(const Args& args, MpiRuntime& mpi) {
  TrainOptions o;
  po::variables_map values;
  const auto check_config_file = [&o] { validate_option_values(o); };
  if (!parse_options(args, train_option_descriptions(o), values, kUsage, mpi.rank() == 0,
                     check_config_file)) {
    return 0;
  }
  check_run_length(o, values);
  validate_train_options(o, mpi.size());
  check_train_outputs(o, values);
  imply_model_from_weights(o, values);
  const ModelConfig config = io::resolve_model(o.model);
  resolve_checkpointing(o, config.n_layer);
  o.offload = parse_layout_switch(o.offload_optimizer, "--offload-optimizer").value_or(false);
  o.sequence = parse_layout_switch(o.sequence_parallel, "--sequence-parallel").value_or(false);
  if (o.print_params) {
    if (mpi.rank() == 0) std::printf("%lld\n", static_cast<long long>(parameter_count(config)));
    return 0;
  }
  require_context(o, config);
  if (o.threads == 0) o.threads = default_threads(mpi);
  // What --save-dir holds besides the weights (the tokenizer beside --init-from, else
  // beside a --model config that is a file or directory, not a preset), read now so that a
  // bad tokenizer file fails before training, not after it; by rank 0 alone, which writes
  // the directory (reading it may start Python to render the chat template).
  io::ModelDirectoryFiles save_files;
  if (!o.save_dir.empty() && mpi.rank() == 0) {
    std::string tokenizer = io::tokenizer_beside(o.init_from);
    if (tokenizer.empty() && std::filesystem::exists(o.model)) {
      tokenizer = io::tokenizer_beside(o.model);
    }
    save_files = io::model_directory_files(config, tokenizer, "");
  }
  std::vector<Setting> settings = option_settings(values);
  settings.push_back(model_setting(config));
  settings.push_back(data_file_setting("--data", o.data));
  settings.push_back(data_file_setting("--val-data", o.val_data));
  require_ranks_agree(settings);

  EngineOptions engine_options = engine_options_from(o);
  JobDevices devices = start_devices(o, mpi, engine_options.dtype);
  const size_t requested_memory = devices.requested_memory;
  const std::unique_ptr<Backend>& backend = devices.backend;
  const std::unique_ptr<Communicator>& world = devices.world;
  if (o.auto_plan) {
    const Layout chosen =
        auto_plan(o, values, config, engine_options.optimizer, *backend, world.get(), mpi.size());
    if (o.plan_only) return 0;
    apply_layout(o, chosen);
    backend->release_memory();  // calibration's; the mesh's communicators come first
  }
  const JobMesh mesh = split_mesh(o, world.get(), mpi.size(), config, engine_options.dtype);
  const MeshShape shape = mesh.shape;
  if (!o.auto_plan) apply_global_batch(o, values, shape.dp);
  Communicator* const data_parallel = mesh.data_parallel;
  Communicator* const tensor_parallel = mesh.tensor_parallel;
  engine_options.data_parallel = data_parallel;
  engine_options.tensor_parallel = tensor_parallel;

  io::TokenFile train_file(o.data);
  check_vocab(train_file, config, "--data");
  std::unique_ptr<io::TokenFile> val_file;
  if (!o.val_data.empty()) {
    val_file = std::make_unique<io::TokenFile>(o.val_data);
    check_vocab(*val_file, config, "--val-data");
  }
  io::DataLoader loader(train_file, o.seq_len, o.seed);
  // The windows of a step depend only on the seed, the global batch and the step; the
  // layout only decides which rank reads which of them when (io/batch_cut.h).
  const io::BatchCut cut{o.micro_batch, o.grad_accum, shape.dp};
  resolve_epochs(o, loader.num_windows(), cut.global_windows());
  engine_options.schedule =
      LrSchedule{parse_lr_shape(o.lr_schedule), o.lr, o.min_lr, o.warmup, o.steps};
  if (mpi.rank() == 0) warn_if_data_under_batch(o, loader.num_windows(), cut.global_windows());
  std::vector<io::Batch> val_batches;
  if (val_file) {
    val_batches = io::evaluation_batches(*val_file, o.seq_len, o.micro_batch, o.eval_windows);
  }

  // A GPU's budget is the memory its backend reserved; host memory has none unless asked.
  const size_t budget = requested_memory > 0 ? requested_memory : backend->memory_capacity();
  const size_t host_budget = o.offload ? host_memory_budget(o, mpi.local_size()) : 0;
  // Every rank checks the worst rank's prediction, so they all refuse (or start) together.
  const Workload workload{config,
                          engine_options.optimizer,
                          engine_options.dtype,
                          o.seq_len,
                          o.micro_batch * o.grad_accum * shape.dp,
                          o.clip_grad > 0};
  const Layout layout{shape.dp,      shape.tp,     o.zero,
                      o.micro_batch, o.grad_accum, o.checkpointed_blocks,
                      o.offload,     o.sequence};
  MemoryPrediction predicted;
  size_t predicted_host = 0;  // the largest host pool of any rank (offload)
  MemoryPrediction rank0;     // its host pool is what rank 0's report measures
  for (int rank = 0; rank < mpi.size(); ++rank) {
    RunShape rank_shape = run_shape(workload, layout, rank / shape.tp, rank % shape.tp);
    rank_shape.compute = backend->compute_rule();
    rank_shape.attention = backend->attention_workspace_rule();
    rank_shape.overlapped_comm = data_parallel && data_parallel->overlaps_compute();
    const MemoryPrediction p = predict_memory(config, rank_shape);
    if (rank == 0) rank0 = p;
    if (p.peak_total > predicted.peak_total) predicted = p;
    predicted_host = std::max(predicted_host, p.host_peak_total);
  }
  predicted.host_peak_by_category = rank0.host_peak_by_category;
  predicted.host_peak_total = rank0.host_peak_total;
  LLMFT_REQUIRE(budget == 0 || predicted.peak_total <= budget,
                "this run will not fit: the memory model predicts a peak of "
                    << format_bytes(predicted.peak_total) << " ("
                    << describe_bytes(predicted.at_peak) << ") against --device-memory "
                    << format_bytes(budget)
                    << "; lower --micro-batch (use --grad-accum to keep the batch) or --seq-len, "
                    << "or raise --device-memory");
  LLMFT_REQUIRE(predicted_host <= host_budget,
                "this run's offloaded optimizer will not fit in host memory: the memory model "
                "predicts "
                    << format_bytes(static_cast<double>(predicted_host))
                    << " of host memory per rank against --host-memory "
                    << format_bytes(static_cast<double>(host_budget))
                    << (o.cluster.host_memory.empty() ? " (this machine's available memory over "
                                                        "its ranks)"
                                                      : "")
                    << "; use a higher --zero to shard it over more ranks, raise --host-memory, "
                       "or drop --offload-optimizer");

  const TpSlice tp_slice = mesh.tp_slice();
  engine_options.zero_stage = o.zero;
  const int dp_rank = mesh.dp_rank();
  const bool lead = mpi.rank() == 0;

  Allocator allocator(backend->memory(), budget);
  // --offload-optimizer: the host pool, its own budget and the CPU backend's kernels.
  std::unique_ptr<Backend> host_kernels;
  std::unique_ptr<Allocator> host_allocator;
  if (o.offload) {
    host_kernels = make_backend("cpu");
    if (o.threads > 0) host_kernels->set_threads(o.threads);
    host_allocator = std::make_unique<Allocator>(backend->host_pool_memory(), host_budget);
    engine_options.offload = HostPool{host_kernels.get(), host_allocator.get()};
  }
  std::unique_ptr<Model> model =
      make_model(config, *backend, allocator, model_options_for(o, mesh));
  Engine engine(*model, *backend, allocator, engine_options);
  // Checkpoints hold the whole model; each rank keeps its tensor-parallel slice.
  const std::vector<UnitLayout> whole_units = unit_layouts(config);
  // A wrong --resume, an unwritable --checkpoint-dir or --save-dir should fail now, not
  // after training; the checkpoint to resume replaces every weight, so --init-from is
  // read only when there is none.
  std::string resume_path = resume_checkpoint(o, lead);
  if (!o.init_from.empty() && resume_path.empty()) {
    const std::string loaded = load_initial_weights(
        o.init_from, engine, whole_units, model->units(), tp_slice, world.get(), *backend);
    if (lead) std::printf("%s\n", loaded.c_str());
  } else if (!o.init_from.empty() && lead) {
    std::printf("llmft: --init-from %s not read: the weights come from %s\n", o.init_from.c_str(),
                resume_path.c_str());
  }
  TrainCheckpoints checkpoints(o, std::move(resume_path), config, engine, *backend,
                               RankPlace{tp_slice, dp_rank, lead}, shape);
  RunOutputs outputs;
  open_run_outputs(o, config, lead, outputs);
  const std::vector<std::string> hosts = mpi_gather_strings(MPI_COMM_WORLD, this_host());
  if (lead) {
    const io::Json record = run_record(values, o, shape, hosts);
    outputs.metrics.write(io::Json::object({{"run_record", record}}));
    if (!o.checkpoint_dir.empty()) write_run_record(o.checkpoint_dir, record);
    if (!o.save_dir.empty()) save_files.files.emplace_back(kRunRecordFile, run_record_text(record));
  }
  const TrainCheckpoints::Start start = checkpoints.resume();
  std::optional<TrainReport> report;
  if (lead)
    report.emplace(o, config, predicted, loader.layout(), shape, backend->describe(),
                   backend->fixed_overhead(), backend->communicator_overhead(),
                   device_peak(o, mpi.size(), !values["gpu"].defaulted(), backend->device_model()));
  io::MetricsWriter& metrics = outputs.metrics;
  if (!val_batches.empty()) {
    const double loss = engine.evaluate(io::micro_batch_views(val_batches));
    if (report) report->validation(0, loss);
  }

  const std::unique_ptr<Event> step_start = backend->create_event(),
                               step_end = backend->create_event();
  DivergenceGuard divergence(engine_options.dtype, o.max_skipped_steps,
                             DivergenceGuard::max_loss(o.max_loss, config.vocab_size));
  int64_t windows_consumed = start.windows_consumed;
  for (int step = start.step; step <= o.steps; ++step) {
    const std::vector<size_t> windows = loader.windows_at(windows_consumed, cut.global_windows());
    windows_consumed += cut.global_windows();
    std::vector<io::Batch> batches;
    for (int m = 0; m < o.grad_accum; ++m) {
      batches.push_back(loader.rows(windows, cut.first_window(m, dp_rank), o.micro_batch));
    }
    backend->record(*step_start, Queue::compute);
    StepStats stats = engine.train_step(io::micro_batch_views(batches), step);
    backend->record(*step_end, Queue::compute);
    backend->synchronize(*step_end);
    const double seconds = backend->elapsed_seconds(*step_start, *step_end);
    try {
      divergence.after_step(step, stats);
    } catch (const DivergedError& e) {
      // Collective: every rank diverges at the same step and learns the same outcome.
      std::string checkpoints_left;
      try {
        checkpoints_left = checkpoints.after_divergence(divergence.unhealthy_from());
      } catch (const Error& set_aside_error) {
        checkpoints_left =
            std::string("setting aside its checkpoints failed: ") + set_aside_error.what();
      }
      throw DivergedError(std::string(e.what()) + "; " + checkpoints_left);
    }
    StepRecord record{
        step,
        stats,
        seconds,
        allocator.total_peak(),
        worst_rank_peak(world.get(), *backend, allocator),
        {},
        {},
        host_allocator ? host_allocator->total_peak() : 0,
        static_cast<double>(windows_consumed) / static_cast<double>(loader.num_windows())};
    if (data_parallel) {
      record.comm = data_parallel->counters();
      data_parallel->reset_counters();
    }
    if (tensor_parallel) {
      record.tp_comm = tensor_parallel->counters();
      tensor_parallel->reset_counters();
    }
    std::optional<double> val_loss;
    if (!val_batches.empty() &&
        (step == o.steps || (o.eval_every > 0 && step % o.eval_every == 0))) {
      val_loss = engine.evaluate(io::micro_batch_views(val_batches));
    }
    if (report) {
      report->step(record, val_loss);
      metrics.write(report->metrics_json(record, val_loss));
    }
    if (const std::optional<int> stop =
            checkpoints.after_step(step, windows_consumed, divergence.healthy_through(step))) {
      return *stop;
    }
  }
  const RankPeak final_peak = worst_rank_peak(world.get(), *backend, allocator);
  if (report) report->finish(allocator, host_allocator.get(), final_peak);

  if (!o.save_dir.empty()) {
    // Every rank takes part (with ZeRO-3 reading the weights gathers them, with tensor
    // parallelism the slices are gathered); rank 0 writes them, a shard at a time.
    std::optional<io::HfModelWriter> writer;
    if (lead) {
      writer.emplace(o.save_dir, config, whole_units,
                     parse_byte_size(o.save_max_shard_size, "--save-max-shard-size"),
                     engine_options.dtype, std::move(save_files));
    }
    for (size_t u = 0; u < model->units().size(); ++u) {
      const std::vector<float> values =
          gather_tp_unit(tensor_parallel, *backend, allocator, whole_units[u], model->units()[u],
                         engine.read_params(static_cast<int>(u)));
      if (writer) writer->add_unit(values);
    }
    if (writer) {
      writer->finish();
      std::printf("saved the model to %s (%s)\n", o.save_dir.c_str(), writer->describe().c_str());
    }
  }
  return 0;
}

}  // namespace llmft
