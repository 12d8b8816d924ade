// bench_train_step: times llmft training steps (AdamW, fp32, CPU) and prints them beside
// two peers measured in the same run: OpenBLAS sgemm on this machine (the step's MFU
// against its rate, parallel/flops.h; the rate is taken right after each step and the MFU
// is the median of the step-by-step ratios, so that a shared machine's drift in speed
// during the run cancels), and optionally the same step in PyTorch (transformers'
// GPT2LMHeadModel or LlamaForCausalLM + torch.optim.AdamW, bench/torch_train_step.py) as a
// time ratio, with PyTorch's own 1024^3 product rate beside OpenBLAS's. Then the step's
// floor (bench/step_floor.h): its products (weights from memory where a step cannot keep
// them in cache) plus AdamW's pass, and the MFU and the PyTorch ratio that floor allows,
// which no faster kernel for the rest of the step's work can pass. Last, the CPU's FMA
// peak (bench/fma_peak.h) and the share of it the floor's products reach: what a faster
// BLAS could still win, and the PyTorch ratio of the floor with its products at the peak.
//
// --model takes a preset or a config.json (bench/configs/llama_gqa_125m.json: a LLaMA of
// gpt2's size with grouped-query attention, 12 heads over 4 key/value heads).
//
// usage: bench_train_step [--model gpt2] [--batch 4] [--seq 64] [--steps 5] [--warmup 1]
//                         [--threads 2] [--python PATH --peer-script PATH]
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "bench/bench_args.h"
#include "bench/fma_peak.h"
#include "bench/host_matrix.h"
#include "bench/step_floor.h"
#include "core/backend_registry.h"
#include "core/error.h"
#include "core/model_factory.h"
#include "io/hf_config.h"
#include "launch/guarded_main.h"
#include "parallel/engine.h"
#include "parallel/flops.h"

using namespace llmft;

namespace {

using bench::Clock;
using bench::seconds_since;
using bench::sgemm_gflops;

// The middle value (the mean of the two middle ones for an even count). REQUIRES: non-empty.
double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t half = values.size() / 2;
  return values.size() % 2 ? values[half] : (values[half - 1] + values[half]) / 2;
}

// The PyTorch peer's mean step and its own 1024^3 product rate (the median of those taken
// right after each step).
struct PeerStep {
  double ms = 0;
  double sgemm_gflops = 0;
};

PeerStep torch_step(const bench::Args& args, const ModelConfig& c) {
  std::string cmd =
      args.at("python") + " " + args.at("peer-script") + " --family " + family_name(c.family) +
      " --n-kv-head " + std::to_string(c.n_kv_head) + " --intermediate " +
      std::to_string(c.intermediate) + " --rope-theta " + std::to_string(c.rope_theta) + " --tie " +
      std::to_string(c.tie_embeddings ? 1 : 0) + " --n-layer " + std::to_string(c.n_layer) +
      " --n-head " + std::to_string(c.n_head) + " --n-embd " + std::to_string(c.hidden) +
      " --vocab " + std::to_string(c.vocab_size) + " --n-positions " +
      std::to_string(c.max_seq_len) + " --batch " + args.at("batch") + " --seq " + args.at("seq") +
      " --steps " + args.at("steps") + " --warmup " + args.at("warmup") + " --threads " +
      args.at("threads");
  const io::Json peer = bench::run_peer(cmd);
  return {peer.at("ms_per_step").as_number(), peer.at("sgemm_gflops").as_number()};
}

int run(int argc, char** argv) {
  const bench::Args args = bench::parse_args(argc, argv,
                                             {{"model", "gpt2"},
                                              {"batch", "4"},
                                              {"seq", "64"},
                                              {"steps", "5"},
                                              {"warmup", "1"},
                                              {"threads", "2"},
                                              {"python", ""},
                                              {"peer-script", ""}},
                                             "bench/train_step.cpp");
  ModelConfig config = io::resolve_model(args.at("model"));
  const int B = std::stoi(args.at("batch")), T = std::stoi(args.at("seq"));
  if (T > config.max_seq_len) {
    // A longer context for the same shape (GPT-2's learned positions grow by a table row
    // per position), so that its fine-tuning lengths can be timed; the peer gets it too.
    std::printf("note: context extended from %d to %d positions\n", config.max_seq_len, T);
    config.max_seq_len = T;
  }
  const int steps = std::stoi(args.at("steps")), warmup = std::stoi(args.at("warmup"));
  auto backend = make_backend("cpu");
  backend->set_threads(std::stoi(args.at("threads")));

  Allocator allocator(backend->memory(), 0);
  auto model = make_model(config, *backend, allocator);
  EngineOptions options;
  options.optimizer.weight_decay = 0.1f;
  options.schedule = LrSchedule{LrShape::constant, 1e-4f, 0.0f, 0, warmup + steps};
  Engine engine(*model, *backend, allocator, options);
  const bench::RandomBatch tokens(B, T, config.vocab_size);
  const MicroBatch& batch = tokens.micro_batch;
  for (int s = 1; s <= warmup; ++s) engine.train_step({batch}, s);
  const double flops_per_token = training_flops_per_token(config, T);
  std::vector<double> times, blas_rates, mfus;
  for (int s = 1; s <= steps; ++s) {
    auto start = Clock::now();
    engine.train_step({batch}, warmup + s);
    backend->synchronize();
    times.push_back(seconds_since(start));
    blas_rates.push_back(sgemm_gflops(1024));
    mfus.push_back(step_throughput(static_cast<double>(B) * T, times.back(), flops_per_token, 1,
                                   blas_rates.back() * 1e9)
                       .mfu);
  }
  double mean = 0;
  for (double t : times) mean += t / times.size();
  const double blas = median(blas_rates);
  const Throughput throughput =
      step_throughput(static_cast<double>(B) * T, mean, flops_per_token, 1, blas * 1e9);

  std::printf("model %s (%lld params), batch %d x seq %d, AdamW fp32, %s threads\n",
              config.name.c_str(), static_cast<long long>(parameter_count(config)), B, T,
              args.at("threads").c_str());
  std::printf("llmft step:      %8.1f ms (min %.1f) | %8.1f tokens/s | %7.1f GFLOP/s\n", mean * 1e3,
              *std::min_element(times.begin(), times.end()) * 1e3, throughput.tokens_per_s,
              throughput.model_flops_per_s * 1e-9);
  std::printf("openblas sgemm:  %8.1f GFLOP/s (1024^3, median) | llmft step's MFU %.1f%% of it\n",
              blas, 100.0 * median(mfus));
  PeerStep torch;
  if (!args.at("python").empty()) {
    torch = torch_step(args, config);
    std::printf("pytorch step:    %8.1f ms | %s | its own 1024^3 product %.1f GFLOP/s (median)\n",
                torch.ms, bench::peer_ratio(torch.ms, mean * 1e3).c_str(), torch.sgemm_gflops);
  }
  // "; 1.80x PyTorch": the PyTorch ratio of a step that took `ms`, where the peer ran.
  auto torch_bound = [&](double ms) {
    char text[48] = "";
    if (torch.ms > 0) std::snprintf(text, sizeof text, "; %.2fx PyTorch", torch.ms / ms);
    return std::string(text);
  };
  const bench::StepFloor floor = bench::measure_step_floor(config, B, T);
  std::printf(
      "step floor:      %8.1f ms = products %.1f (weights from memory where a step cannot keep "
      "them; %.1f all in cache) + AdamW %.1f | at most: MFU %.1f%% of sgemm%s\n",
      floor.total_s() * 1e3, floor.products_s * 1e3, floor.products_warm_s * 1e3,
      floor.optimizer_s * 1e3, 100.0 * flops_per_token * B * T / floor.sgemm_flops,
      torch_bound(floor.total_s() * 1e3).c_str());
  const double peak = bench::fma_peak_gflops() * 1e9;
  const double products_at_peak_s = floor.products_flops / peak;
  const double floor_at_peak_ms = (products_at_peak_s + floor.optimizer_s) * 1e3;
  std::printf(
      "cpu fma peak:    %8.1f GFLOP/s (%s threads, vectors of %d floats on registers) | the "
      "floor's products run at %.1f%% of it (at the peak they would take %.1f ms, the floor "
      "%.1f%s)\n",
      peak * 1e-9, args.at("threads").c_str(), bench::fma_vector_floats(),
      100.0 * floor.products_flops / floor.products_s / peak, products_at_peak_s * 1e3,
      floor_at_peak_ms, torch_bound(floor_at_peak_ms).c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return llmft::guarded_main("bench_train_step", run, argc, argv);
}
