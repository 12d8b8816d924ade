// bench_attention: times the backend's attention (forward, backward) at fine-tuning
// lengths for a model's head shape over a batch of sequences, and prints its useful rate
// (the causal products: 4 x batch x heads x head size x T(T+1)/2 FLOPs forward, twice that
// backward) as a share of the same run's GEMM rate in the same dtype (a square product
// through the backend, 1024 wide or wider until it takes a millisecond). With several
// dtypes it also prints each one's time over the first's: on CUDA, `--dtypes f32,bf16`
// sets the tensor-core kernels (or cuDNN's) against the f32 ones.
//
// usage: bench_attention [--model gpt2] [--lengths 64,256,1024,2048] [--batch 1]
//                        [--threads 2] [--device cpu] [--dtypes f32]
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "bench/bench_args.h"
#include "core/allocator.h"
#include "core/backend_registry.h"
#include "core/compute_dtype.h"
#include "core/dtype.h"
#include "io/hf_config.h"
#include "launch/guarded_main.h"
#include "parallel/planner/device_benchmark.h"

using namespace llmft;

namespace {

// Seconds of an n^3 product through the backend in `dtype`, best of 3 after a warm-up.
double gemm_seconds(Backend& backend, Allocator& allocator, DType dtype, int64_t n) {
  Buffer buf = allocator.allocate(3 * n * n * dtype_size(dtype), MemoryCategory::workspace, "gemm");
  const Tensor all = buf.as(dtype, {3 * n * n});
  backend.fill(all, 0.01f);
  auto part = [&](int i) { return all.view(i * n * n, {n, n}); };
  auto product = [&] {
    backend.linear_forward(part(0), part(1), part(2), Tensor());
    backend.synchronize();
  };
  product();  // the warm-up
  return bench::best_seconds(3, product);
}

// A large product's FLOP/s in `dtype`: the size doubles from 1024 (to 8192 at most) until
// one product takes a millisecond, so that a GPU's figure is its rate, not its launch and
// synchronisation (a 1024^3 bf16 product takes microseconds there).
double gemm_flops(Backend& backend, Allocator& allocator, DType dtype) {
  int64_t n = 1024;
  double seconds = gemm_seconds(backend, allocator, dtype, n);
  while (seconds < 1e-3 && n < 8192) {
    n *= 2;
    seconds = gemm_seconds(backend, allocator, dtype, n);
  }
  return 2.0 * n * n * n / seconds;
}

int run(int argc, char** argv) {
  const bench::Args args = bench::parse_args(argc, argv,
                                             {{"model", "gpt2"},
                                              {"lengths", "64,256,1024,2048"},
                                              {"batch", "1"},
                                              {"threads", "2"},
                                              {"device", "cpu"},
                                              {"dtypes", "f32"}},
                                             "bench/attention.cpp");
  const ModelConfig model = io::resolve_model(args.at("model"));
  auto backend = make_backend(args.at("device"));
  backend->set_threads(std::stoi(args.at("threads")));
  Allocator allocator(backend->memory(), 0);
  std::vector<DType> dtypes;
  std::stringstream dtype_names(args.at("dtypes"));
  for (std::string item; std::getline(dtype_names, item, ',');) dtypes.push_back(parse_dtype(item));
  const int64_t batch = std::stoll(args.at("batch"));
  std::printf(
      "attention of %s: %d heads over %d key/value heads of %d, %lld sequences a call, %s "
      "threads\n",
      model.name.c_str(), model.n_head, model.n_kv_head, model.head_dim(),
      static_cast<long long>(batch), args.at("threads").c_str());
  std::vector<double> gemm;
  for (DType stored : dtypes) {
    const DType computed = compute_dtype(backend->compute_rule(), stored);
    gemm.push_back(gemm_flops(*backend, allocator, computed));
    std::printf("%s (computed in %s): gemm %.1f GFLOP/s\n", dtype_name(stored),
                dtype_name(computed), gemm.back() * 1e-9);
  }
  std::stringstream lengths(args.at("lengths"));
  for (std::string item; std::getline(lengths, item, ',');) {
    const int64_t T = std::stoll(item);
    const double products = 4.0 * batch * model.n_head * model.head_dim() * T * (T + 1) / 2.0;
    double first_forward = 0, first_backward = 0;
    for (size_t i = 0; i < dtypes.size(); ++i) {
      const auto [forward, backward] =
          attention_seconds(*backend, allocator, nullptr, model, T, dtypes[i], batch);
      if (i == 0) first_forward = forward, first_backward = backward;
      std::printf(
          "T %5lld %-4s: forward %9.3f ms (%6.1f GFLOP/s, %5.1f%% of gemm), backward %9.3f ms "
          "(%6.1f GFLOP/s, %5.1f%% of gemm)",
          static_cast<long long>(T), dtype_name(dtypes[i]), forward * 1e3,
          products / forward * 1e-9, 100.0 * products / forward / gemm[i], backward * 1e3,
          2 * products / backward * 1e-9, 100.0 * 2 * products / backward / gemm[i]);
      if (i > 0)
        std::printf("; time over %s: forward %.3f, backward %.3f", dtype_name(dtypes[0]),
                    forward / first_forward, backward / first_backward);
      std::printf("\n");
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return llmft::guarded_main("bench_attention", run, argc, argv);
}
