// The CPU kernels that reduce (sums of squares, the cross-entropy's loss, AdaLomo's row,
// column and norm statistics, blocked attention) give the same bits with 1, 2 and 3 OpenMP
// threads: they add in a fixed order (core/cpu/ordered_reduce.h, or one writer per output),
// not in the order threads finish.
#include <doctest/doctest.h>
#include <omp.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "core/cpu/cpu_kernels.h"
#include "core/cpu/dtype_kernels.h"
#include "tests/core/gradcheck.h"

namespace llmft {
namespace {

using testing::random_vector;

// What `run` returns (raw bytes) with each thread count; the thread count is restored.
std::vector<std::string> with_thread_counts(const std::function<std::string()>& run) {
  const int saved = omp_get_max_threads();
  std::vector<std::string> results;
  for (int threads : {1, 2, 3}) {
    omp_set_num_threads(threads);
    results.push_back(run());
  }
  omp_set_num_threads(saved);
  return results;
}

template <typename T>
void append(std::string& bytes, const T* values, size_t count) {
  bytes.append(reinterpret_cast<const char*>(values), count * sizeof(T));
}

void check_all_equal(const std::vector<std::string>& results) {
  for (size_t i = 1; i < results.size(); ++i) CHECK(results[i] == results[0]);
}

TEST_CASE("a sum of squares is the same whatever the thread count") {
  std::mt19937_64 rng(1);
  // Many blocks (and a short last one), of scales from 1 to 2^20.
  std::vector<float> x = random_vector(100003, rng);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::ldexp(x[i], static_cast<int>(i / 1024 % 21));
  check_all_equal(with_thread_counts([&] {
    const double sum = cpu::sum_squares(x.data(), DType::f32, static_cast<int64_t>(x.size()));
    std::string bytes;
    append(bytes, &sum, 1);
    return bytes;
  }));
}

TEST_CASE("the cross-entropy's loss and gradient are the same whatever the thread count") {
  std::mt19937_64 rng(2);
  const int64_t N = 301, V = 67;
  const std::vector<float> logits = random_vector(N * V, rng, 3.0f);
  std::vector<int32_t> targets(N);
  for (int64_t n = 0; n < N; ++n) targets[n] = n % 7 == 0 ? -1 : static_cast<int32_t>(n % V);
  check_all_equal(with_thread_counts([&] {
    std::vector<float> work = logits, stats(3 * N);
    cpu::cross_entropy_max(stats.data(), work.data(), N, V, V);
    cpu::cross_entropy_sums(stats.data(), work.data(), targets.data(), N, V, V, 0);
    const double loss = cpu::cross_entropy_finish(work.data(), stats.data(), targets.data(), N, V,
                                                  0, 1.0f / static_cast<float>(N));
    std::string bytes;
    append(bytes, &loss, 1);
    append(bytes, work.data(), work.size());
    return bytes;
  }));
}

TEST_CASE("blocked attention's outputs and gradients are the same whatever the thread count") {
  // Several query and key tiles (128 rows) and grouped heads: tasks run in any order on any
  // thread, and each output has one writer. Two (batch, key/value head) tasks: 1 and 2
  // threads run backward's one-pass schedule, 3 threads its two-pass one, which must give
  // the same bits.
  std::mt19937_64 rng(4);
  const int64_t B = 1, T = 300, H = 4, KVH = 2, D = 8, W = (H + 2 * KVH) * D;
  const std::vector<float> qkv = random_vector(B * T * W, rng);
  const std::vector<float> dout = random_vector(B * T * H * D, rng);
  // Samples of 100, 150 and 50 tokens packed into the row: tiles see part of the keys.
  std::vector<int32_t> positions(B * T);
  for (int64_t t = 0; t < T; ++t)
    positions[t] = static_cast<int32_t>(t < 100 ? t : t < 250 ? t - 100 : t - 250);
  check_all_equal(with_thread_counts([&] {
    std::vector<float> out(dout.size()), lse(B * H * T), dqkv(qkv.size());
    cpu::attention_forward(out.data(), lse.data(), qkv.data(), positions.data(), B, T, H, KVH, D, T,
                           0);
    cpu::attention_backward(dqkv.data(), dout.data(), qkv.data(), out.data(), lse.data(),
                            positions.data(), B, T, H, KVH, D);
    std::string bytes;
    append(bytes, out.data(), out.size());
    append(bytes, lse.data(), lse.size());
    append(bytes, dqkv.data(), dqkv.size());
    return bytes;
  }));
}

TEST_CASE("AdaLomo's statistics and update are the same whatever the thread count") {
  std::mt19937_64 rng(3);
  const int64_t rows = 203, cols = 131;
  const std::vector<float> grad = random_vector(rows * cols, rng);
  const std::vector<float> param = random_vector(rows * cols, rng, 0.1f);
  check_all_equal(with_thread_counts([&] {
    std::vector<float> row_sums(rows), col_sums(cols), row_state(rows, 0.0f), col_state(cols, 0.0f),
        stats(3, 0.0f), updated = param;
    cpu::adalomo_square_sums(row_sums.data(), col_sums.data(), grad.data(), DType::f32, rows, cols,
                             0.5f);
    cpu::adalomo_moments(row_state.data(), col_state.data(), stats.data(), row_sums.data(),
                         col_sums.data(), rows, cols, rows, cols, 0.9f);
    cpu::adalomo_norms(stats.data(), updated.data(), DType::f32, grad.data(), DType::f32,
                       row_state.data(), col_state.data(), rows, cols, rows, 0.5f);
    cpu::adalomo_apply(updated.data(), DType::f32, grad.data(), DType::f32, row_state.data(),
                       col_state.data(), stats.data(), rows, cols, rows, rows * cols, 0.01f, 0.01f,
                       0.5f);
    std::string bytes;
    append(bytes, row_sums.data(), rows);
    append(bytes, col_sums.data(), cols);
    append(bytes, stats.data(), stats.size());
    append(bytes, updated.data(), updated.size());
    return bytes;
  }));
}

}  // namespace
}  // namespace llmft
