// UnitLayout: how the parameters of one unit (the embedding, one transformer block, or
// the final norm + head) sit in its single contiguous buffer. The same layout describes
// the unit's gradient buffer, its optimizer state and its checkpoint tensors.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace llmft {

// How tensor parallelism cuts a parameter (core/tp_slice.h maps slices to the whole):
//   replicated: every rank holds all of it (norms, position embeddings, the biases added
//               after a row-parallel reduction)
//   rows:       dim 0 split in equal blocks (column-parallel weights and their biases,
//               vocabulary-parallel embeddings, padded to a multiple of the group)
//   columns:    dim 1 split (row-parallel weights)
enum class TpSplit { replicated, rows, columns };

struct ParamInfo {
  std::string name;       // Hugging Face name, e.g. "transformer.h.3.attn.c_attn.weight"
  Shape shape;            // this rank's part, in llmft's layout (linear weights (out, in))
  Shape full_shape = {};  // the whole parameter (equal to shape without TP)
  TpSplit tp_split = TpSplit::replicated;
  int tp_sections = 1;         // rows: dim 0 is this many stacked parts, each split (q|k|v)
  int64_t offset = 0;          // elements from the start of the unit
  bool weight_decay = false;   // decoupled decay applies (matrices, embeddings)
  bool hf_transposed = false;  // stored as (in, out) in Hugging Face files (GPT-2 Conv1D)
  float init_std = 0.0f;       // normal(0, init_std); 0 means constant init_value
  float init_value = 0.0f;

  int64_t numel() const { return shape_numel(shape); }
};

struct UnitLayout {
  std::string name;  // "embedding", "block.3", "head"
  std::vector<ParamInfo> params;
  int64_t numel = 0;

  // Appends a parameter after the existing ones and returns its index.
  int add(ParamInfo p);
  // The parameter's view into a flat unit-sized tensor.
  Tensor slice(const Tensor& flat, int index) const;
};

// The elements of all of `units` together.
int64_t total_numel(const std::vector<UnitLayout>& units);

}  // namespace llmft
