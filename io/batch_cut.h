// BatchCut: how a layout cuts a step's global batch into micro-batches and ranks. The
// global batch is micro_batch x grad_accum x dp windows in stream order (io/data_loader.h);
// micro-step m (0-based) of data-parallel rank d trains on windows
// [(m x dp + d) x micro_batch, + micro_batch). Tensor-parallel ranks of one data-parallel
// rank read the same windows. Every window of the global batch is read exactly once per
// step, so the windows a step trains on never depend on the layout.
#pragma once

namespace llmft::io {

struct BatchCut {
  int micro_batch = 1;
  int grad_accum = 1;
  int dp = 1;

  int global_windows() const { return micro_batch * grad_accum * dp; }
  // The first window of micro-step `micro_step` on data-parallel rank `dp_rank`.
  int first_window(int micro_step, int dp_rank) const {
    return (micro_step * dp + dp_rank) * micro_batch;
  }
};

}  // namespace llmft::io
