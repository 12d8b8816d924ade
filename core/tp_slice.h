// Tensor-parallel slices: which elements of each whole parameter a rank of a
// tensor-parallel group holds, and moving values between a rank's units and the whole
// model's (initialisation, checkpoints). A slice's elements map to the whole tensor in
// runs of consecutive elements; padding rows (a vocabulary padded to a multiple of the
// group) belong to no run and stay zero.
#pragma once

#include <cstdint>
#include <vector>

#include "core/unit_layout.h"

namespace llmft {

struct TpSlice {
  int rank = 0;
  int size = 1;
};

// `count` consecutive elements at `local` in the slice are at `full` in the whole tensor.
struct TpRun {
  int64_t local = 0;
  int64_t full = 0;
  int64_t count = 0;
};

std::vector<TpRun> tp_runs(const ParamInfo& p, TpSlice slice);

// Rows of a dimension of `full` rows split over `size` ranks: ceil(full / size) (padded).
int64_t tp_rows(int64_t full, int size);

// Sets p's shape to `slice`'s part of its full_shape for the given split.
ParamInfo tp_split(ParamInfo p, TpSplit split, TpSlice slice, int sections = 1);

// A vocabulary-parallel parameter (V, C): split by rows, the slice's rows padded to a
// multiple of row_multiple (1: none, the whole model's Hugging Face shapes). Padding rows
// belong to no run and stay zero.
ParamInfo vocab_split(ParamInfo p, TpSlice slice, int64_t row_multiple);

// Whether this rank counts p in sums over the whole model (the gradient norm): split
// parameters on every rank, replicated ones on rank 0 only.
inline bool tp_counts(const ParamInfo& p, TpSlice slice) {
  return p.tp_split != TpSplit::replicated || slice.rank == 0;
}

// The slice's values of a unit, from the whole unit's (`whole` laid out as
// `whole_layout`, the slice as `local_layout`); padding is zero.
std::vector<float> slice_unit(const UnitLayout& whole_layout, const UnitLayout& local_layout,
                              TpSlice slice, const std::vector<float>& whole);
// The whole unit's values from those of a slice that holds all of it (TpSlice{}, one
// rank): slice_unit's inverse, the vocabulary padding dropped.
std::vector<float> whole_from_slice(const UnitLayout& whole_layout, const UnitLayout& local_layout,
                                    const std::vector<float>& local);
// Writes one rank's slice values into the whole unit's.
void place_slice(const UnitLayout& whole_layout, const UnitLayout& local_layout, TpSlice slice,
                 const float* local, std::vector<float>& whole);

}  // namespace llmft
