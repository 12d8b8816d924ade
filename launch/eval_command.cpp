// `llmft eval`: the loss, perplexity and token counts of a model's weights on a token file,
// on any number of ranks and layout. The windows (io::evaluation_batches) and the mean
// (Engine::evaluate) are the ones the validation line of `llmft train` prints, so a model
// scores here what its training run's validation said.
#include <mpi.h>

#include <climits>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>

#include "checkpoint/checkpoint_info.h"
#include "checkpoint/checkpointer.h"
#include "checkpoint/engine_state.h"
#include "comm/rank_agreement.h"
#include "core/error.h"
#include "core/model_factory.h"
#include "io/data_loader.h"
#include "io/hdf5_file.h"
#include "io/hf_config.h"
#include "io/json.h"
#include "io/token_file.h"
#include "launch/commands.h"
#include "launch/cpu_share.h"
#include "launch/initial_weights.h"
#include "launch/job_devices.h"
#include "launch/run_record.h"
#include "launch/run_settings.h"
#include "launch/train_options.h"
#include "parallel/engine.h"

namespace llmft {

namespace {

const char* kUsage =
    "usage: llmft eval --data FILE.tok --model DIR [options]\n"
    "       llmft eval --data FILE.tok --checkpoint STEP.h5|DIR [options]\n"
    "       llmft eval --data FILE.tok --init-from FILE.safetensors [--model NAME|DIR] "
    "[options]";

// Decides where the weights come from: --checkpoint (a training checkpoint, which holds its
// model), --init-from (as train takes it), or the --model directory itself.
void choose_weights(TrainOptions& o, const po::variables_map& values,
                    const std::string& checkpoint) {
  if (!checkpoint.empty()) {
    LLMFT_REQUIRE(o.init_from.empty() && values["model"].defaulted(),
                  "--checkpoint " << checkpoint
                                  << " holds its model and weights; drop --model and --init-from");
    return;
  }
  imply_model_from_weights(o, values);
  if (!o.init_from.empty()) return;
  LLMFT_REQUIRE(std::filesystem::is_directory(o.model),
                "--model " << o.model
                           << " has no weights to score; give a model directory (--model DIR), "
                              "--init-from FILE.safetensors or --checkpoint STEP.h5");
  o.init_from = o.model;
}

int64_t target_tokens(const std::vector<io::Batch>& batches) {
  int64_t targets = 0;
  for (const io::Batch& b : batches) {
    for (int32_t t : b.targets) targets += t >= 0 ? 1 : 0;
  }
  return targets;
}

}  // namespace

int run_eval(const Args& args, MpiRuntime& mpi) {
  TrainOptions o;
  std::string checkpoint;
  bool json = false;
  po::options_description weights("Model");
  add_weights_options(weights, o);
  weights.add_options()("checkpoint", po::value(&checkpoint)->default_value(""),
                        "score a training checkpoint's weights: a step_N.h5 file, or a "
                        "--checkpoint-dir for its newest (the model comes from it)");
  po::options_description data("Data");
  add_window_options(data, o);
  data.add_options()("eval-windows", po::value(&o.eval_windows)->default_value(0),
                     "windows to score, from the start of the file (0 = all)")(
      "json", po::bool_switch(&json),
      "print one JSON object: loss, perplexity, tokens, target_tokens, windows, ...");
  po::options_description layout("Layout");
  add_layout_options(layout, o);
  po::options_description all;
  all.add(weights).add(data).add(layout);
  po::variables_map values;
  const auto check_config_file = [&o] { validate_layout_values(o); };
  if (!parse_options(args, all, values, kUsage, mpi.rank() == 0, check_config_file)) return 0;
  validate_layout_values(o);
  validate_layout(o);
  LLMFT_REQUIRE(!o.data.empty(),
                "--data is required: the token file to score (`llmft prepare --input FILE "
                "--output val.tok`)");
  LLMFT_REQUIRE(o.eval_windows >= 0, "--eval-windows must not be negative (0 scores them all)");
  io::TokenFile file(o.data);
  choose_weights(o, values, checkpoint);
  const bool lead = mpi.rank() == 0;

  // A training checkpoint is read by every rank together; it says which model it holds.
  std::optional<io::Hdf5File> checkpoint_file;
  ModelConfig config;
  std::string source = o.init_from;
  if (!checkpoint.empty()) {
    source = resolve_resume_path(checkpoint, "", lead, "--checkpoint", o.comm_timeout);
    checkpoint_file.emplace(io::Hdf5File::open(source, MPI_COMM_WORLD, o.comm_timeout));
    config = checkpoint_model(read_info(*checkpoint_file), source);
  } else {
    config = io::resolve_model(o.model);
  }
  require_context(o, config);
  if (o.threads == 0) o.threads = default_threads(mpi);
  std::vector<Setting> settings = option_settings(values);
  settings.push_back(model_setting(config));
  settings.push_back(data_file_setting("--data", o.data));
  require_ranks_agree(settings);

  check_vocab(file, config, "--data");
  const std::vector<io::Batch> batches = io::evaluation_batches(
      file, o.seq_len, o.micro_batch, o.eval_windows > 0 ? o.eval_windows : INT_MAX);

  EngineOptions engine_options;
  engine_options.trainable = false;
  engine_options.dtype = parse_dtype(o.dtype);
  engine_options.zero_stage = o.zero;
  JobDevices devices = start_devices(o, mpi, engine_options.dtype);
  const JobMesh mesh = split_mesh(o, devices.world.get(), mpi.size(), config, engine_options.dtype);
  engine_options.data_parallel = mesh.data_parallel;
  engine_options.tensor_parallel = mesh.tensor_parallel;
  o.sequence = parse_layout_switch(o.sequence_parallel, "--sequence-parallel").value_or(false);
  Backend& backend = *devices.backend;
  Allocator allocator(backend.memory(), devices.requested_memory > 0 ? devices.requested_memory
                                                                     : backend.memory_capacity());
  std::unique_ptr<Model> model = make_model(config, backend, allocator, model_options_for(o, mesh));
  Engine engine(*model, backend, allocator, engine_options);
  std::string loaded;
  if (checkpoint_file) {
    io::Progress progress("checkpoint: reading the weights of " + source,
                          engine_progress_total(engine), io::ProgressCount::items("model units"));
    read_engine_weights(*checkpoint_file, engine, mesh.tp_slice(), mesh.dp_rank(), progress);
    progress.finish();
    checkpoint_file->close();
  } else {
    loaded = load_initial_weights(o.init_from, engine, unit_layouts(config), model->units(),
                                  mesh.tp_slice(), devices.world.get(), backend);
  }

  const double loss = engine.evaluate(io::micro_batch_views(batches));
  if (!lead) return 0;
  int64_t tokens = 0;
  for (const io::Batch& b : batches) tokens += int64_t{b.batch} * b.seq_len;
  int64_t windows = 0;
  for (const io::Batch& b : batches) windows += b.batch;
  const int64_t targets = target_tokens(batches);
  const io::Json record =
      read_run_record(std::filesystem::is_directory(source)
                          ? source
                          : std::filesystem::absolute(source).parent_path().string());
  if (json) {
    io::Json j = io::Json::object({});
    j.set("loss", io::Json::number(loss));
    j.set("perplexity", io::Json::number(std::exp(loss)));
    j.set("tokens", io::Json::number(static_cast<double>(tokens)));
    j.set("target_tokens", io::Json::number(static_cast<double>(targets)));
    j.set("windows", io::Json::number(static_cast<double>(windows)));
    j.set("seq_len", io::Json::number(o.seq_len));
    j.set("weights", io::Json::string(source));
    j.set("data", io::Json::string(o.data));
    j.set("dp", io::Json::number(mesh.shape.dp));
    j.set("tp", io::Json::number(mesh.shape.tp));
    if (!record.is_null()) j.set("run_record", record);
    std::printf("%s\n", j.dump().c_str());
    return 0;
  }
  if (!loaded.empty()) std::printf("%s\n", loaded.c_str());
  if (!record.is_null()) std::printf("%s\n", run_record_source(record).c_str());
  std::printf(
      "eval | %s on %s | %lld windows of %d tokens | %lld tokens, %lld targets | "
      "loss %.4f | perplexity %.4g\n",
      source.c_str(), o.data.c_str(), static_cast<long long>(windows), o.seq_len,
      static_cast<long long>(tokens), static_cast<long long>(targets), loss, std::exp(loss));
  return 0;
}

}  // namespace llmft
