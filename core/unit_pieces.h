// Where the elements a rank holds of a unit sit in the whole model's tensors: the mapping a
// checkpoint writes and reads by. A rank holds elements [range.begin, range.end) of its
// (tensor-parallel slice of a) unit — the whole unit, or a ZeRO shard; each parameter's part
// of them maps, run by run (core/tp_slice.h), to flat ranges of the whole parameter.
// Parameters replicated over the tensor-parallel group belong to its rank 0 alone, so
// that every element of the model has exactly one owner.
#pragma once

#include <cstdint>
#include <vector>

#include "core/tp_slice.h"
#include "core/unit_layout.h"
#include "core/unit_span.h"

namespace llmft {

// `count` elements of the whole parameter `param` from `full`, held at `local` (counted
// from the start of the held range).
struct TensorPiece {
  int param = 0;
  int64_t full = 0;
  int64_t local = 0;
  int64_t count = 0;
};

// The pieces of `range` of `layout` (this rank's slice), each parameter's in increasing
// order of `full`. With `owner_only`, replicated parameters only on tensor-parallel rank 0.
std::vector<TensorPiece> unit_pieces(const UnitLayout& layout, TpSlice slice, UnitSpan range,
                                     bool owner_only);

}  // namespace llmft
