// bench_gpu_step: llmft training steps on a GPU (--device cuda), timed with CUDA events,
// with the model FLOP utilisation (MFU: 6 x matrix parameters + attention FLOPs per token
// over the device's peak dense bf16 FLOP/s), the memory model's prediction beside the
// allocator's peak and the device's peak (the allocator's plus what cudaMemGetInfo shows
// outside its slab), and optionally the same step in PyTorch on the same GPU
// (bench/torch_gpu_step.py) as a time ratio.
//
// usage: bench_gpu_step [--model gpt2] [--batch 8] [--seq 1024] [--dtype bf16]
//                       [--optimizer adamw] [--checkpointing 0] [--clip-grad 1] [--steps 5]
//                       [--warmup 2]
//                       [--peak-tflops 989] [--python PATH --peer-script PATH]
#include <cstdio>
#include <string>
#include <vector>

#include "bench/bench_args.h"
#include "core/backend_registry.h"
#include "core/byte_size.h"
#include "core/error.h"
#include "core/model.h"
#include "core/model_factory.h"
#include "io/hf_config.h"
#include "launch/guarded_main.h"
#include "parallel/engine.h"
#include "parallel/flops.h"
#include "parallel/memory_model.h"

using namespace llmft;

namespace {

double torch_ms_per_step(const bench::Args& args, const ModelConfig& c) {
  const std::string family = c.family == ModelFamily::gpt2 ? "gpt2" : "llama";
  const std::string cmd =
      args.at("python") + " " + args.at("peer-script") + " --family " + family + " --vocab " +
      std::to_string(c.vocab_size) + " --hidden " + std::to_string(c.hidden) + " --layers " +
      std::to_string(c.n_layer) + " --heads " + std::to_string(c.n_head) + " --kv-heads " +
      std::to_string(c.n_kv_head) + " --intermediate " + std::to_string(c.intermediate) +
      " --positions " + std::to_string(c.max_seq_len) + " --batch " + args.at("batch") + " --seq " +
      args.at("seq") + " --dtype " + args.at("dtype") + " --checkpointing " +
      args.at("checkpointing") + " --clip-grad " + args.at("clip-grad") + " --steps " +
      args.at("steps") + " --warmup " + args.at("warmup");
  return bench::run_peer(cmd).at("ms_per_step").as_number();
}

// The llmft steps: prints the step's time, rates and memory; returns ms per step. Its
// backend (and the slab of all free device memory it reserves) is gone when it returns,
// so that a PyTorch peer run afterwards has the GPU to itself.
double llmft_ms_per_step(const bench::Args& args, const ModelConfig& config) {
  const int B = std::stoi(args.at("batch")), T = std::stoi(args.at("seq"));
  const int steps = std::stoi(args.at("steps")), warmup = std::stoi(args.at("warmup"));
  const bool checkpointing = args.at("checkpointing") == "1";
  auto backend = make_backend("cuda");
  Allocator allocator(backend->memory(), backend->memory_capacity());
  auto model = make_model(config, *backend, allocator, ModelOptions{checkpointing});
  EngineOptions options;
  options.dtype = parse_dtype(args.at("dtype"));
  options.optimizer.kind = parse_optimizer_kind(args.at("optimizer"));
  options.optimizer.weight_decay = 0.1f;
  options.clip_grad = std::stof(args.at("clip-grad"));
  options.loss_scale = LossScaleConfig{options.dtype == DType::f16, 1024.0f, 1000};
  options.schedule = LrSchedule{LrShape::constant, 1e-4f, 0.0f, 0, warmup + steps};
  Engine engine(*model, *backend, allocator, options);
  const bench::RandomBatch tokens(B, T, config.vocab_size);
  const MicroBatch& batch = tokens.micro_batch;
  for (int s = 1; s <= warmup; ++s) engine.train_step({batch}, s);
  const auto start = backend->create_event(), end = backend->create_event();
  backend->record(*start, Queue::compute);
  for (int s = 1; s <= steps; ++s) engine.train_step({batch}, warmup + s);
  backend->record(*end, Queue::compute);
  backend->synchronize(*end);
  const double seconds = backend->elapsed_seconds(*start, *end) / steps;
  const Throughput throughput =
      step_throughput(static_cast<double>(B) * T, seconds, training_flops_per_token(config, T), 1,
                      std::stod(args.at("peak-tflops")) * 1e12);

  RunShape shape{
      B, T, options.dtype, checkpointing ? ModelOptions::kAllBlocks : 0, options.optimizer, true};
  shape.compute = backend->compute_rule();
  shape.attention = backend->attention_workspace_rule();  // cuDNN's backward workspace
  const MemoryPrediction predicted = predict_memory(config, shape);
  std::printf("model %s (%lld params), batch %d x seq %d, %s %s%s, clip %s\n", config.name.c_str(),
              static_cast<long long>(parameter_count(config)), B, T, args.at("optimizer").c_str(),
              args.at("dtype").c_str(), checkpointing ? ", activation checkpointing" : "",
              args.at("clip-grad").c_str());
  if (is_fused(options.optimizer.kind) && options.clip_grad > 0) {
    std::printf(
        "  (%s with clipping runs a second backward for the norm: the MFU below counts "
        "one)\n",
        args.at("optimizer").c_str());
  }
  std::printf("device: %s\n", backend->describe().c_str());
  std::printf("llmft step:   %8.1f ms | %10.0f tokens/s | %7.1f TFLOP/s | MFU %.1f%%\n",
              seconds * 1e3, throughput.tokens_per_s, throughput.model_flops_per_s * 1e-12,
              100.0 * throughput.mfu);
  const double predicted_device =
      static_cast<double>(predicted.peak_total + backend->fixed_overhead());
  const double device_peak =
      static_cast<double>(allocator.total_peak() + backend->memory_outside_allocator());
  std::printf(
      "memory: predicted peak %s, allocator peak %s (%s), fixed overhead %s (measured); "
      "device peak %s (cudaMemGetInfo), predicted %s (%+.2f%%)\n",
      format_bytes(static_cast<double>(predicted.peak_total)).c_str(),
      format_bytes(static_cast<double>(allocator.total_peak())).c_str(),
      predicted.peak_total == allocator.total_peak() ? "equal" : "DIFFERENT",
      format_bytes(static_cast<double>(backend->fixed_overhead())).c_str(),
      format_bytes(device_peak).c_str(), format_bytes(predicted_device).c_str(),
      100.0 * (predicted_device - device_peak) / device_peak);
  return seconds * 1e3;
}

int run(int argc, char** argv) {
  const bench::Args args = bench::parse_args(argc, argv,
                                             {{"model", "gpt2"},
                                              {"batch", "8"},
                                              {"seq", "1024"},
                                              {"dtype", "bf16"},
                                              {"optimizer", "adamw"},
                                              {"checkpointing", "0"},
                                              {"clip-grad", "1"},
                                              {"steps", "5"},
                                              {"warmup", "2"},
                                              {"peak-tflops", "989"},
                                              {"python", ""},
                                              {"peer-script", ""}},
                                             "bench/gpu_step.cpp");
  const ModelConfig config = io::resolve_model(args.at("model"));
  const bool peer = !args.at("python").empty();
  LLMFT_REQUIRE(!peer || args.at("optimizer") == "adamw",
                "--python: the PyTorch peer runs AdamW only; drop --python for --optimizer "
                    << args.at("optimizer"));
  const double llmft_ms = llmft_ms_per_step(args, config);
  if (peer) {
    const double torch_ms = torch_ms_per_step(args, config);
    std::printf("pytorch step: %8.1f ms | %s\n", torch_ms,
                bench::peer_ratio(torch_ms, llmft_ms).c_str());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return llmft::guarded_main("bench_gpu_step", run, argc, argv);
}
