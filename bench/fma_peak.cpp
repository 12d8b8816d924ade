// bench/fma_peak.h: kChains independent accumulators, each updated acc = acc * m + a per
// iteration, which the compiler contracts into one FMA (the build keeps GCC's default
// -ffp-contract=fast). One FMA's result is the next one's input in the same chain only, so
// with more chains than the FMA units' latency times their count (4 cycles x 2 units on
// current x86 cores) the units never wait.
#include "bench/fma_peak.h"

#include <omp.h>

#include <cstdint>

#include "bench/bench_args.h"

namespace llmft::bench {

namespace {

constexpr int kLanes = LLMFT_VECTOR_FLOATS;  // CMakeLists.txt: 16 with AVX-512, else 8
typedef float Vec __attribute__((vector_size(sizeof(float) * kLanes)));
// 12 chains plus the multiplier and the addend fit AVX2's 16 registers as well as
// AVX-512's 32, and pass the 8 that keep two 4-cycle FMA units busy.
constexpr int kChains = 12;
constexpr int64_t kIterations = int64_t{1} << 25;  // about 0.1-0.3 s a thread

volatile float multiplier = 0.999999f;  // read at run time, so nothing folds
volatile float addend = 1e-7f;
volatile float sink = 0.0f;

void fma_chains() {
  const Vec m = Vec{} + multiplier, a = Vec{} + addend;
  Vec acc[kChains];
  for (int c = 0; c < kChains; ++c) acc[c] = Vec{} + static_cast<float>(c);
  for (int64_t i = 0; i < kIterations; ++i) {
#pragma GCC unroll kChains
    for (int c = 0; c < kChains; ++c) acc[c] = acc[c] * m + a;
  }
  float total = 0.0f;
  for (int c = 0; c < kChains; ++c) {
    for (int l = 0; l < kLanes; ++l) total += acc[c][l];
  }
  sink = sink + total;
}

}  // namespace

double fma_peak_gflops() {
  const double seconds = best_seconds(3, [] {
#pragma omp parallel
    fma_chains();
  });
  const double flops =
      2.0 * kLanes * kChains * static_cast<double>(kIterations) * omp_get_max_threads();
  return flops / seconds * 1e-9;
}

int fma_vector_floats() {
  return kLanes;
}

}  // namespace llmft::bench
