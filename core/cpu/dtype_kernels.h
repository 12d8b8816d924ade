// CPU kernels that read or write any stored dtype (f32, bf16, fp16): conversion,
// filling, accumulation of f32 values into a stored tensor, and squared norms.
#pragma once

#include <cstdint>

#include "core/dtype.h"

namespace llmft::cpu {

// x[i] = value (rounded to x's dtype), n elements.
void fill(void* x, DType type, float value, int64_t n);
// dst = src converted, n elements.
void convert(void* dst, DType dst_type, const void* src, DType src_type, int64_t n);
// dst += src (src is f32), rounding once to dst's dtype.
void accumulate(void* dst, DType dst_type, const float* src, int64_t n);
// sum of x^2 in f64 (inf or NaN when x holds any).
double sum_squares(const void* x, DType type, int64_t n);

}  // namespace llmft::cpu
