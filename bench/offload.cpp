// bench_offload: the step time of a 124M model with the optimizer offloaded to the host pool
// (parallel/optimizer_offload.h) against the same run with it on the device, in one
// process, steps interleaved so that both see the same machine. On the CPU backend the
// "device" and the host are the same cores: the ratio is what offload's bookkeeping costs
// here (each micro-batch's gradient copied out and added into the host sums, the updated
// weights rounded and copied back) beside the same AdamW update run in place, with the
// update during the last backward (no clipping) or after it (clipping).
//
// usage: bench_offload [--model gpt2] [--batch 4] [--seq 64] [--grad-accum 2] [--steps 5]
//                      [--threads 2]
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "bench/bench_args.h"
#include "core/backend_registry.h"
#include "core/model_factory.h"
#include "io/hf_config.h"
#include "launch/guarded_main.h"
#include "parallel/engine.h"

using namespace llmft;

namespace {

// One training run on its own CPU backend, optimizer on the device or in the host pool.
struct Run {
  std::unique_ptr<Backend> device, host;
  std::unique_ptr<Allocator> allocator, host_allocator;
  std::unique_ptr<Model> model;
  std::unique_ptr<Engine> engine;
  std::vector<double> seconds;

  Run(const ModelConfig& config, EngineOptions options, bool offload, int threads)
      : device(make_backend("cpu")), host(make_backend("cpu")) {
    device->set_threads(threads);
    host->set_threads(threads);
    allocator = std::make_unique<Allocator>(device->memory(), 0);
    host_allocator = std::make_unique<Allocator>(device->host_pool_memory(), 0);
    if (offload) options.offload = HostPool{host.get(), host_allocator.get()};
    model = make_model(config, *device, *allocator);
    engine = std::make_unique<Engine>(*model, *device, *allocator, options);
  }

  void step(const std::vector<MicroBatch>& batches, int step, bool timed) {
    const auto start = bench::Clock::now();
    engine->train_step(batches, step);
    device->synchronize();
    if (timed) seconds.push_back(bench::seconds_since(start));
  }

  double mean_ms() const {
    double sum = 0;
    for (double s : seconds) sum += s;
    return sum / static_cast<double>(seconds.size()) * 1e3;
  }
};

int run(int argc, char** argv) {
  const bench::Args args = bench::parse_args(argc, argv,
                                             {{"model", "gpt2"},
                                              {"batch", "4"},
                                              {"seq", "64"},
                                              {"grad-accum", "2"},
                                              {"steps", "5"},
                                              {"threads", "2"}},
                                             "bench/offload.cpp");
  const ModelConfig config = io::resolve_model(args.at("model"));
  const int B = std::stoi(args.at("batch")), T = std::stoi(args.at("seq"));
  const int accum = std::stoi(args.at("grad-accum")), steps = std::stoi(args.at("steps"));
  const int threads = std::stoi(args.at("threads"));
  std::vector<std::vector<int32_t>> tokens;
  std::vector<MicroBatch> batches;
  for (int m = 0; m < accum; ++m) {
    tokens.push_back(bench::random_tokens(static_cast<size_t>(B) * T, config.vocab_size, 1 + m));
  }
  for (const auto& t : tokens) batches.push_back(MicroBatch{B, T, t.data(), t.data()});
  std::printf("model %s (%lld params), batch %d x seq %d x %d accumulated, AdamW, %d threads\n",
              config.name.c_str(), static_cast<long long>(parameter_count(config)), B, T, accum,
              threads);
  std::printf("%-5s %-22s %10s %10s %7s %12s %12s %12s\n", "dtype", "update", "device ms",
              "offload ms", "ratio", "peak", "peak offload", "host pool");
  for (DType dtype : {DType::f32, DType::bf16}) {
    for (float clip : {0.0f, 1.0f}) {
      EngineOptions options;
      options.dtype = dtype;
      options.clip_grad = clip;
      options.optimizer.weight_decay = 0.1f;
      options.schedule = LrSchedule{LrShape::constant, 1e-4f, 0.0f, 0, steps + 1};
      Run on_device(config, options, false, threads), offloaded(config, options, true, threads);
      on_device.step(batches, 1, false);  // warm-up: first touches, state creation
      offloaded.step(batches, 1, false);
      for (int s = 2; s <= steps + 1; ++s) {
        on_device.step(batches, s, true);
        offloaded.step(batches, s, true);
      }
      const auto mib = [](const Allocator& a) {
        return static_cast<double>(a.total_peak()) / (1 << 20);
      };
      std::printf("%-5s %-22s %10.1f %10.1f %6.2fx %8.1f MiB %8.1f MiB %8.1f MiB\n",
                  dtype_name(dtype), clip > 0 ? "after backward (clip)" : "during last backward",
                  on_device.mean_ms(), offloaded.mean_ms(),
                  offloaded.mean_ms() / on_device.mean_ms(), mib(*on_device.allocator),
                  mib(*offloaded.allocator), mib(*offloaded.host_allocator));
    }
  }
  std::printf("ratio = offloaded / on-device step time (above 1: offload costs time here)\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return llmft::guarded_main("bench_offload", run, argc, argv);
}
