// bench_memory_table: peak device memory per allocator category, measured by the real
// allocator over one training step, for adamw, sgd, lomo and adalomo with activation
// checkpointing off and on, beside the memory model's prediction; and each optimizer's
// total as a percentage of AdamW's (the LOMO paper reports 10.8% for LLaMA-7B with
// checkpointing).
//
// usage: bench_memory_table [--model PRESET|config.json] [--batch 1] [--seq 256]
//                           [--dtype bf16] [--threads 2] [--predict-only 0|1]
// The default model is a params-dominated LLaMA shape (hidden 1024, 8 layers, vocab 32000).
// --predict-only 1 prints the memory model's figures without running (for shapes such as
// llama-7b that do not fit this machine).
#include <cstdio>
#include <map>
#include <random>
#include <string>

#include "core/backend_registry.h"
#include "core/byte_size.h"
#include "core/error.h"
#include "core/model.h"
#include "core/model_factory.h"
#include "io/hf_config.h"
#include "launch/guarded_main.h"
#include "parallel/engine.h"
#include "parallel/memory_model.h"

using namespace llmft;

namespace {

ModelConfig default_model() {
  ModelConfig c = preset_config("llama-7b");
  c.name = "llama-7b shape scaled to hidden 1024, 8 layers";
  c.hidden = 1024;
  c.n_layer = 8;
  c.n_head = c.n_kv_head = 16;
  c.intermediate = 2752;
  c.max_seq_len = 2048;
  return c;
}

struct Measured {
  CategoryBytes peaks;
  size_t total;
  size_t predicted;
};

Measured predict(const ModelConfig& c, OptimizerKind kind, bool checkpointing, DType dtype, int B,
                 int T) {
  OptimizerConfig optimizer;
  optimizer.kind = kind;
  const MemoryPrediction p = predict_memory(
      c, RunShape{B, T, dtype, checkpointing ? ModelOptions::kAllBlocks : 0, optimizer, true});
  return Measured{p.peak_by_category, p.peak_total, p.peak_total};
}

Measured measure(const ModelConfig& c, OptimizerKind kind, bool checkpointing, DType dtype, int B,
                 int T, int threads) {
  auto backend = make_backend("cpu");
  backend->set_threads(threads);
  Allocator alloc(backend->memory(), 0);
  auto model = make_model(c, *backend, alloc, ModelOptions{checkpointing});
  EngineOptions o;
  o.dtype = dtype;
  o.optimizer.kind = kind;
  o.clip_grad = 1.0f;
  o.loss_scale = LossScaleConfig{dtype == DType::f16, 1024.0f, 1000};
  o.schedule = LrSchedule{LrShape::constant, 1e-5f, 0.0f, 0, 1};
  Engine engine(*model, *backend, alloc, o);
  std::mt19937_64 rng(1);
  std::vector<int32_t> tokens(static_cast<size_t>(B) * T);
  for (int32_t& t : tokens) t = static_cast<int32_t>(rng() % c.vocab_size);
  engine.train_step({MicroBatch{B, T, tokens.data(), tokens.data()}}, 1);
  const MemoryPrediction p = predict_memory(
      c, RunShape{B, T, dtype, checkpointing ? ModelOptions::kAllBlocks : 0, o.optimizer, true});
  return Measured{alloc.peak_by_category(), alloc.total_peak(), p.peak_total};
}

std::string mib(size_t bytes) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f", static_cast<double>(bytes) / (1024.0 * 1024.0));
  return text;
}

int run(int argc, char** argv) {
  std::map<std::string, std::string> args = {{"model", ""},    {"batch", "1"},
                                             {"seq", "256"},   {"dtype", "bf16"},
                                             {"threads", "2"}, {"predict-only", "0"}};
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i];
    LLMFT_REQUIRE(key.rfind("--", 0) == 0 && args.count(key.substr(2)),
                  "unknown argument " << key << " (see the header of bench/memory_table.cpp)");
    args[key.substr(2)] = argv[i + 1];
  }
  const ModelConfig c = args["model"].empty() ? default_model() : io::resolve_model(args["model"]);
  const int B = std::stoi(args["batch"]), T = std::stoi(args["seq"]);
  const DType dtype = parse_dtype(args["dtype"]);
  std::printf("model %s: %lld parameters; %s weights, micro-batch %d x seq %d, clip 1.0\n",
              c.name.c_str(), static_cast<long long>(parameter_count(c)), dtype_name(dtype), B, T);
  std::printf("%-8s %-5s %9s %9s %9s %9s %9s %9s %9s %10s %10s %8s\n", "optim", "ckpt", "params",
              "master", "grads", "opt", "activ", "work", "other", "total MiB", "predicted",
              "% adamw");
  for (bool checkpointing : {false, true}) {
    size_t adamw_total = 0;
    for (OptimizerKind kind :
         {OptimizerKind::adamw, OptimizerKind::sgd, OptimizerKind::lomo, OptimizerKind::adalomo}) {
      const Measured m = args["predict-only"] == "1" ? predict(c, kind, checkpointing, dtype, B, T)
                                                     : measure(c, kind, checkpointing, dtype, B, T,
                                                               std::stoi(args["threads"]));
      if (kind == OptimizerKind::adamw) adamw_total = m.total;
      auto peak = [&](MemoryCategory cat) { return mib(m.peaks[index_of(cat)]); };
      std::printf(
          "%-8s %-5s %9s %9s %9s %9s %9s %9s %9s %10s %10s %7.1f%%\n", optimizer_kind_name(kind),
          checkpointing ? "on" : "off", peak(MemoryCategory::params).c_str(),
          peak(MemoryCategory::master_params).c_str(), peak(MemoryCategory::grads).c_str(),
          peak(MemoryCategory::optimizer_state).c_str(), peak(MemoryCategory::activations).c_str(),
          peak(MemoryCategory::workspace).c_str(), peak(MemoryCategory::other).c_str(),
          mib(m.total).c_str(), mib(m.predicted).c_str(), 100.0 * m.total / adamw_total);
      std::fflush(stdout);
    }
  }
  std::printf(
      "category columns are each category's own peak (MiB); total is the peak of the sum%s\n",
      args["predict-only"] == "1" ? "; all figures predicted, nothing run" : "");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return guarded_main("bench_memory_table", run, argc, argv);
}
