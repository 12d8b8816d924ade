// Matrices of floats in the host memory the CPU backend's tensors get
// (core/cpu/host_blocks.h: huge pages where the kernel offers them), and OpenBLAS sgemm's
// rate on square ones: the machine's BLAS ceiling that the CPU benchmarks measure against.
#pragma once

#include <cblas.h>

#include <algorithm>
#include <cstdlib>
#include <memory>

#include "bench/bench_args.h"
#include "core/cpu/host_blocks.h"
#include "core/error.h"

namespace llmft::bench {

struct HostMatrix {
  HostMatrix(int64_t rows, int64_t cols, float value)
      : data(static_cast<float*>(cpu::allocate_host_block(sizeof(float) * rows * cols)),
             &std::free) {
    LLMFT_REQUIRE(data != nullptr,
                  "bench: no host memory for a " << rows << " x " << cols << " matrix");
    std::fill(data.get(), data.get() + rows * cols, value);
  }
  float* get() const { return data.get(); }
  std::unique_ptr<float, decltype(&std::free)> data;
};

// Best-of-3 sgemm rate on an (n x n) @ (n x n) product after one untimed run, in GFLOP/s.
inline double sgemm_gflops(int n) {
  const HostMatrix a(n, n, 0.5f), b(n, n, 0.25f), c(n, n, 0.0f);
  auto product = [&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, n, n, 1.0f, a.get(), n, b.get(), n,
                0.0f, c.get(), n);
  };
  product();
  return 2.0 * n * n * n / best_seconds(3, product) * 1e-9;
}

}  // namespace llmft::bench
