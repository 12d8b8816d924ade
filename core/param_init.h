// Deterministic initial parameter values. Element i of a parameter depends only on
// (seed, parameter name, i), never on the layout, so every rank can generate exactly its
// slice of the full model and a seed gives the same model for any parallel layout.
#pragma once

#include <cstdint>

#include "core/unit_layout.h"

namespace llmft {

// Writes elements [begin, begin + count) of parameter `p`'s initial value to `out`
// (host memory): normal(0, p.init_std), or the constant p.init_value when init_std == 0.
void initial_values(const ParamInfo& p, uint64_t seed, int64_t begin, int64_t count, float* out);

}  // namespace llmft
