#include "optim/adalomo.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace llmft {

int64_t adalomo_state_floats(const UnitLayout& layout) {
  int64_t floats = 0;
  for (const ParamInfo& p : layout.params) {
    floats += p.shape.size() == 2 ? p.shape[0] + p.shape[1] : p.numel();
  }
  return floats;
}

std::vector<AdaLomoStatistic> adalomo_statistics(const UnitLayout& layout, TpSlice slice) {
  std::vector<AdaLomoStatistic> statistics;
  int64_t offset = 0;
  for (int i = 0; i < static_cast<int>(layout.params.size()); ++i) {
    const ParamInfo& p = layout.params[i];
    const bool matrix = p.shape.size() == 2;
    const int64_t width = matrix ? p.shape[1] : 1;  // elements per row
    // Rows: a row split maps rows as its element runs do; otherwise every rank holds all.
    AdaLomoStatistic rows{i, true, p.full_shape[0], offset, {}, p.tp_split != TpSplit::rows};
    if (rows.replicated) {
      rows.runs.push_back({0, 0, p.shape[0]});
    } else {
      for (const TpRun& run : tp_runs(p, slice)) {
        rows.runs.push_back({run.local / width, run.full / width, run.count / width});
      }
    }
    statistics.push_back(rows);
    if (!matrix) {
      offset += p.numel();
      continue;
    }
    // Columns: a column split holds one block of them; otherwise every rank holds all.
    const bool split = p.tp_split == TpSplit::columns;
    statistics.push_back({i,
                          false,
                          p.full_shape[1],
                          offset + p.shape[0],
                          {{0, split ? slice.rank * p.shape[1] : 0, p.shape[1]}},
                          !split});
    offset += p.shape[0] + p.shape[1];
  }
  return statistics;
}

int64_t adalomo_scratch_floats(const std::vector<UnitLayout>& units) {
  int64_t largest = 0;
  for (const UnitLayout& u : units) {
    for (const ParamInfo& p : u.params) {
      largest = std::max(largest, p.shape[0] + (p.shape.size() == 2 ? p.shape[1] : 0));
    }
  }
  return largest + 3;
}

AdaLomo::AdaLomo(const OptimizerConfig& config, Backend& backend, Allocator& allocator,
                 const std::vector<UnitLayout>& units, const std::vector<UnitSpan>& spans,
                 ReduceGroup* tensor_parallel)
    : config_(config), be_(backend), tensor_parallel_(tensor_parallel) {
  for (size_t i = 0; i < units.size(); ++i) {
    const UnitLayout& u = units[i];
    LLMFT_REQUIRE(spans[i].begin == 0 && spans[i].end == u.numel,
                  "internal: AdaLomo updates whole units");
    const int64_t floats = adalomo_state_floats(u);
    state_.push_back(allocator.allocate(static_cast<size_t>(floats) * sizeof(float),
                                        MemoryCategory::optimizer_state, "adalomo " + u.name));
    be_.fill(state_.back().as(DType::f32, {floats}), 0.0f);
  }
  scratch_ = allocator.allocate(static_cast<size_t>(adalomo_scratch_floats(units)) * sizeof(float),
                                MemoryCategory::optimizer_state, "adalomo scratch");
}

std::vector<OptimizerState> AdaLomo::state(int unit) const {
  const int64_t n = static_cast<int64_t>(state_[unit].bytes() / sizeof(float));
  return {{"adalomo", state_[unit].as(DType::f32, {n})}};
}

void AdaLomo::sum_slices(Tensor t, bool split) const {
  if (split && tensor_parallel_) {
    tensor_parallel_->all_reduce(t, ReduceOp::sum)->wait_on_device();
  }
}

void AdaLomo::update_unit(int unit, const UnitLayout& layout, UnitSpan, Tensor params, Tensor grads,
                          float lr, float grad_scale) {
  const float beta2 = 1.0f - std::pow(static_cast<float>(step_), -0.8f);
  Tensor state = state_[unit].as(DType::f32, {adalomo_state_floats(layout)});
  int64_t offset = 0;
  for (int i = 0; i < static_cast<int>(layout.params.size()); ++i) {
    const ParamInfo& p = layout.params[i];
    const bool matrix = p.shape.size() == 2;
    Tensor rows = state.view(offset, {matrix ? p.shape[0] : p.numel()});
    Tensor cols = matrix ? state.view(offset + p.shape[0], {p.shape[1]}) : Tensor();
    offset += matrix ? p.shape[0] + p.shape[1] : p.numel();
    const float wd = p.weight_decay ? config_.weight_decay : 0.0f;
    const Tensor param = layout.slice(params, i), grad = layout.slice(grads, i);
    const int64_t full_rows = p.full_shape[0], full_cols = matrix ? p.full_shape[1] : 1;
    const bool split_rows = p.tp_split == TpSplit::rows,
               split_cols = p.tp_split == TpSplit::columns;
    // Scratch: row sums, column sums, then the three statistics.
    const int64_t R = rows.numel(), C = matrix ? p.shape[1] : 0;
    const Tensor scratch = scratch_.as(DType::f32, {R + C + 3});
    const Tensor row_sums = scratch.view(0, {R});
    const Tensor col_sums = matrix ? scratch.view(R, {C}) : Tensor();
    const Tensor stats = scratch.view(R + C, {3});
    be_.adalomo_square_sums(row_sums, col_sums, grad, grad_scale);
    if (matrix) {
      sum_slices(col_sums, split_rows);
      sum_slices(row_sums, split_cols);
    }
    be_.adalomo_moments(rows, cols, stats, row_sums, col_sums, full_rows, full_cols, beta2);
    sum_slices(stats.view(0, {1}), matrix && split_rows);
    be_.adalomo_norms(stats, param, grad, rows, cols, full_rows, grad_scale);
    sum_slices(stats.view(1, {2}), p.tp_split != TpSplit::replicated);
    be_.adalomo_apply(param, grad, rows, cols, stats, full_rows, shape_numel(p.full_shape), lr, wd,
                      grad_scale);
  }
}

}  // namespace llmft
