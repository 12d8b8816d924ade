#include "core/compute_dtype.h"

namespace llmft {

DType compute_dtype(ComputeRule rule, DType stored) {
  return rule == ComputeRule::f32 ? DType::f32 : stored;
}

}  // namespace llmft
