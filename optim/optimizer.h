// Optimizer: updates parameters from gradients, one unit (or its ZeRO shard) at a time,
// so the Engine decides when each unit is updated (after backward, or fused into it).
// State buffers live in the Allocator's optimizer_state category.
//
// Thread-safety: one Optimizer per rank, used from one thread.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/allocator.h"
#include "core/backend.h"
#include "core/reduce_group.h"
#include "core/unit_layout.h"
#include "core/unit_span.h"
#include "optim/grad_accumulation.h"

namespace llmft {

enum class OptimizerKind { sgd, adamw, lomo, adalomo };

struct OptimizerConfig {
  OptimizerKind kind = OptimizerKind::adamw;
  float beta1 = 0.9f;
  float beta2 = 0.95f;
  float eps = 1e-8f;
  float weight_decay = 0.0f;  // decoupled; applied to parameters marked weight_decay
  float momentum = 0.0f;      // sgd only
  // What sgd and adamw sum a step's gradients in (optim/grad_accumulation.h).
  GradAccumDtype grad_accum_dtype = GradAccumDtype::fp32;
};

// Parses "sgd", "adamw", "lomo", "adalomo"; other names are an Error listing them.
OptimizerKind parse_optimizer_kind(const std::string& name);
const char* optimizer_kind_name(OptimizerKind kind);
// LOMO and AdaLomo update during backward (see Optimizer::fused).
inline bool is_fused(OptimizerKind kind) {
  return kind == OptimizerKind::lomo || kind == OptimizerKind::adalomo;
}
// Throws an Error saying why when `kind` cannot accumulate `micro_batches` per step.
void check_accumulation(OptimizerKind kind, int micro_batches);

// One named state tensor of an optimizer for one unit (checkpoints store it by name).
struct OptimizerState {
  std::string name;  // e.g. "adamw_m"
  Tensor tensor;
};

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  // A fused optimizer (LOMO, AdaLomo) updates each unit during backward as soon as its
  // gradient is complete, in the weights' stored dtype, from a transient gradient. A
  // non-fused one updates f32 weights (or their f32 master copy) after backward.
  virtual bool fused() const { return false; }
  // Starts optimizer step `step` (1-based) before its update_unit calls.
  virtual void begin_step(int step) = 0;
  // params/grads: flat tensors of span.size() elements covering the unit's elements
  // [span.begin, span.end), the span it was constructed with. The gradient is
  // multiplied by grad_scale (gradient clipping, loss-scale removal) before use.
  virtual void update_unit(int unit, const UnitLayout& layout, UnitSpan span, Tensor params,
                           Tensor grads, float lr, float grad_scale) = 0;
  // The state kept for one unit: element-wise optimizers' f32 tensors cover the unit's
  // span element for element; AdaLomo's one tensor holds the statistics that
  // adalomo_statistics() (optim/adalomo.h) lays out. LOMO keeps none.
  virtual std::vector<OptimizerState> state(int unit) const {
    (void)unit;
    return {};
  }
};

// spans[u] is the part of unit u this rank updates (its state covers only that part).
// Units are tensor-parallel slices when `tensor_parallel` is given: element-wise
// optimizers need nothing from it; AdaLomo sums its per-tensor statistics over it.
std::unique_ptr<Optimizer> make_optimizer(const OptimizerConfig& config, Backend& backend,
                                          Allocator& allocator,
                                          const std::vector<UnitLayout>& units,
                                          const std::vector<UnitSpan>& spans,
                                          ReduceGroup* tensor_parallel = nullptr);

}  // namespace llmft
