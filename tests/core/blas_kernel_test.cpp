#include "core/cpu/blas_kernel.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "core/cpu/cpu_backend.h"

namespace llmft {
namespace {

using namespace cpu;

constexpr CpuFeatures kAvx512Intel{true, true, true, false};
constexpr CpuFeatures kAvx2Intel{true, true, false, false};
constexpr CpuFeatures kAvx2Amd{true, true, false, true};
constexpr CpuFeatures kNoAvx2{false, false, false, false};

TEST_CASE("the generic kernel on a CPU with AVX2 or AVX-512 is replaced by the matching one") {
  CHECK(better_blas_kernel("Prescott", kAvx512Intel, false) == "SkylakeX");
  CHECK(better_blas_kernel("Prescott", kAvx2Intel, false) == "Haswell");
  CHECK(better_blas_kernel("Prescott", kAvx2Amd, false) == "Zen");
  // Nothing faster to offer; a kernel OpenBLAS recognised; the user's choice.
  CHECK(better_blas_kernel("Prescott", kNoAvx2, false).empty());
  CHECK(better_blas_kernel("Haswell", kAvx512Intel, false).empty());
  CHECK(better_blas_kernel("Zen", kAvx2Amd, false).empty());
  CHECK(better_blas_kernel("Prescott", kAvx512Intel, true).empty());
}

// C = A B^T for A (m, k), B (n, k) (the CPU backend's linear layer: one sgemm) on the
// current kernel, against a double-precision sum. Each f32 result is a sum of k rounded
// products, so whatever the order of addition (and with or without FMA) it differs from
// the exact value by at most gamma_k sum|a b|, gamma_k = k u / (1 - k u) < (k + 1) u,
// u = 2^-24 (Higham, Accuracy and Stability of Numerical Algorithms, 3.1).
void check_sgemm_on_current_kernel() {
  const int m = 37, n = 29, k = 41;
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  std::vector<float> a(m * k), b(n * k), c(m * n);
  for (float& x : a) x = value(rng);
  for (float& x : b) x = value(rng);
  CpuBackend be;
  be.linear_forward(Tensor(c.data(), DType::f32, {m, n}), Tensor(a.data(), DType::f32, {m, k}),
                    Tensor(b.data(), DType::f32, {n, k}), Tensor());
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j) {
      double exact = 0.0, magnitude = 0.0;
      for (int l = 0; l < k; ++l) {
        exact += double(a[i * k + l]) * b[j * k + l];
        magnitude += std::fabs(double(a[i * k + l]) * b[j * k + l]);
      }
      CHECK(std::fabs(c[i * n + j] - exact) <= (k + 1) * std::ldexp(1.0, -24) * magnitude);
    }
  }
}

TEST_CASE("OpenBLAS switches kernels in the running process and computes correctly on each") {
  const BlasReport& report = select_blas_kernel();
  CHECK(report.library.rfind("OpenBLAS", 0) == 0);
  CHECK(report.kernel == blas_kernel());
  CHECK(!report.how.empty());
  const std::string original = blas_kernel();
  const char* variable = std::getenv("OPENBLAS_CORETYPE");
  const std::string environment_before = variable ? variable : "<unset>";
  // Prescott needs only SSE3, so every x86-64 CPU runs it.
  REQUIRE(switch_blas_kernel("Prescott"));
  CHECK(blas_kernel() == "Prescott");
  check_sgemm_on_current_kernel();
  REQUIRE(switch_blas_kernel(original));
  CHECK(blas_kernel() == original);
  check_sgemm_on_current_kernel();
  variable = std::getenv("OPENBLAS_CORETYPE");
  CHECK((variable ? variable : "<unset>") == environment_before);
}

}  // namespace
}  // namespace llmft
