#include "optim/grad_accumulation.h"

#include "core/error.h"

namespace llmft {

GradAccumDtype parse_grad_accum_dtype(const std::string& name) {
  if (name == "fp32") return GradAccumDtype::fp32;
  if (name == "stored") return GradAccumDtype::stored;
  LLMFT_FAIL("--grad-accum-dtype " << name
                                   << ": unknown value; use fp32 (sum the micro-batches' "
                                      "gradients in fp32) or stored (in the --dtype of the "
                                      "weights)");
}

const char* grad_accum_dtype_name(GradAccumDtype accum) {
  return accum == GradAccumDtype::fp32 ? "fp32" : "stored";
}

DType accumulated_grad_dtype(GradAccumDtype accum, DType weights) {
  return accum == GradAccumDtype::fp32 ? DType::f32 : weights;
}

}  // namespace llmft
