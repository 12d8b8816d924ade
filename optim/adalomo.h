// AdaLomo (Lv et al. 2023b): LOMO's fused, stateless-gradient update with an
// Adafactor-style factored second moment (a row and a column vector per matrix, the full
// vector for 1-D tensors, all f32 in optimizer_state), grouped update normalisation and
// a learning rate scaled by max(1e-3, RMS(param)); see Backend::adalomo_update.
// The second moment decays with 1 - step^-0.8, as in the reference implementation.
// Under tensor parallelism each rank holds slices of the split tensors; their row and
// column sums, row-state totals and update/parameter norms are summed over the group,
// so every step equals the whole tensor's.
#pragma once

#include <vector>

#include "core/tp_slice.h"
#include "optim/optimizer.h"

namespace llmft {

// Floats of AdaLomo state for one unit: rows + cols per matrix, numel per vector.
int64_t adalomo_state_floats(const UnitLayout& layout);
// Floats of the scratch one update uses: the largest tensor's row and column sums, and
// three statistics.
int64_t adalomo_scratch_floats(const std::vector<UnitLayout>& units);

// One of AdaLomo's statistics vectors of a tensor as a checkpoint stores it: the row or
// column vector of parameter `param`, `full` entries for the whole tensor. This rank's
// entries start at `local` in the unit's state and map to the whole vector in `runs`
// (their `local` counted from `local`). `replicated`: every tensor-parallel rank holds
// the same whole vector (a split tensor's statistics are summed over its slices).
struct AdaLomoStatistic {
  int param = 0;
  bool rows = true;  // the row vector (a 1-D tensor has only it), else the column vector
  int64_t full = 0;
  int64_t local = 0;
  std::vector<TpRun> runs;
  bool replicated = false;
};
std::vector<AdaLomoStatistic> adalomo_statistics(const UnitLayout& layout, TpSlice slice);

class AdaLomo : public Optimizer {
 public:
  // AdaLomo's statistics need whole rows and columns: every span must be its whole unit.
  AdaLomo(const OptimizerConfig& config, Backend& backend, Allocator& allocator,
          const std::vector<UnitLayout>& units, const std::vector<UnitSpan>& spans,
          ReduceGroup* tensor_parallel);
  bool fused() const override { return true; }
  void begin_step(int step) override { step_ = step; }
  void update_unit(int unit, const UnitLayout& layout, UnitSpan span, Tensor params, Tensor grads,
                   float lr, float grad_scale) override;
  std::vector<OptimizerState> state(int unit) const override;

 private:
  // Sums t over the tensor-parallel group when `split` (a no-op without one).
  void sum_slices(Tensor t, bool split) const;

  OptimizerConfig config_;
  Backend& be_;
  ReduceGroup* tensor_parallel_;
  std::vector<Buffer> state_;  // per unit: each tensor's row (and column) statistics
  Buffer scratch_;             // row and column sums, then the statistics
  int step_ = 0;
};

}  // namespace llmft
