#include "core/cpu/dtype_kernels.h"

#include "core/cpu/ordered_reduce.h"
#include "core/cpu/streaming_fill.h"
#include "core/float_traits.h"

namespace llmft::cpu {

void fill(void* x, DType type, float value, int64_t n) {
  with_float_type(type, [&](auto traits) {
    using T = decltype(traits);
    auto* out = static_cast<typename T::Storage*>(x);
    const auto stored = T::store(value);
    const int64_t bytes = n * static_cast<int64_t>(sizeof(stored));
    if (bytes >= kStreamingFillBytes) {
      streaming_fill(out, repeated_word(stored), bytes);
      return;
    }
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; ++i) out[i] = stored;
  });
}

void convert(void* dst, DType dst_type, const void* src, DType src_type, int64_t n) {
  with_float_type(dst_type, [&](auto out_traits) {
    using Out = decltype(out_traits);
    with_float_type(src_type, [&](auto in_traits) {
      using In = decltype(in_traits);
      auto* out = static_cast<typename Out::Storage*>(dst);
      const auto* in = static_cast<const typename In::Storage*>(src);
#pragma omp parallel for schedule(static)
      for (int64_t i = 0; i < n; ++i) out[i] = Out::store(In::load(in[i]));
    });
  });
}

void accumulate(void* dst, DType dst_type, const float* src, int64_t n) {
  with_float_type(dst_type, [&](auto traits) {
    using T = decltype(traits);
    auto* out = static_cast<typename T::Storage*>(dst);
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; ++i) out[i] = T::store(T::load(out[i]) + src[i]);
  });
}

double sum_squares(const void* x, DType type, int64_t n) {
  double sum = 0.0;
  with_float_type(type, [&](auto traits) {
    using T = decltype(traits);
    const auto* in = static_cast<const typename T::Storage*>(x);
    // f32 partial sums over short blocks (vectorised), added up in f64 in block order.
    sum = ordered_sum<double>(n, 1024, [&](int64_t begin, int64_t end) {
      // A pointer and length of the block's own (a loop over in[begin, end) through the
      // captured pointer compiles to gathers).
      const auto* block_in = in + begin;
      const int64_t length = end - begin;
      float block = 0.0f;
#pragma omp simd reduction(+ : block)
      for (int64_t i = 0; i < length; ++i) {
        const float v = T::load(block_in[i]);
        block += v * v;
      }
      return static_cast<double>(block);
    });
  });
  return sum;
}

}  // namespace llmft::cpu
