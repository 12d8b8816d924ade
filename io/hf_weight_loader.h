// HfWeightLoader: reads one rank's part of each unit of a model from Hugging Face weights
// (io/hf_weight_files.h): for every parameter only the rows or columns of its
// tensor-parallel slice, with positioned reads, converted from F32, BF16 or F16 to f32 and
// from Hugging Face's layout to llmft's (GPT-2's Conv1D weights are stored transposed).
// Host memory while loading: the unit's slice as f32 plus one parameter's slice as read.
// Not thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/tp_slice.h"
#include "core/unit_layout.h"
#include "io/hf_weight_files.h"

namespace llmft::io {

class HfWeightLoader {
 public:
  // `path` as HfWeightFiles takes it.
  explicit HfWeightLoader(const std::string& path) : files_(path) {}

  // The unit's values laid out as `local` (the rank's slice of `whole`; padding rows zero).
  // Throws naming the file and the tensor when one is missing, has another shape or a
  // dtype that is not F32, BF16 or F16, or holds a value that is not finite.
  std::vector<float> read_unit(const UnitLayout& whole, const UnitLayout& local, TpSlice slice);

  uint64_t bytes_read() const { return files_.bytes_read(); }
  const HfWeightFiles& files() const { return files_; }

 private:
  HfWeightFiles files_;
};

}  // namespace llmft::io
