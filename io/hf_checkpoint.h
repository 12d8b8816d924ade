// Hugging Face model directories, written: config.json + the weights as safetensors with
// Hugging Face tensor names and layouts (GPT-2's Conv1D weights transposed to (in, out)),
// so that transformers' from_pretrained loads what llmft writes. A model larger than the
// shard size is written as model-0000K-of-0000N.safetensors shards plus
// model.safetensors.index.json, as transformers' save_pretrained does, in f32, bf16 or fp16;
// beside them the tokenizer files and generation_config.json (io/model_directory_files.h).
// (Reading is io/hf_weight_loader.h.) Tensors move as host f32 arrays, one flat vector per
// unit, and are rounded (to nearest even) to the written dtype.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/model_config.h"
#include "core/unit_layout.h"
#include "io/model_directory_files.h"
#include "io/safetensors.h"

namespace llmft::io {

using UnitValues = std::vector<std::vector<float>>;  // per unit, flat, llmft layout

// transformers' default max_shard_size for save_pretrained ("50GB").
inline constexpr uint64_t kDefaultMaxShardBytes = 50'000'000'000ull;

// One parameter of a unit's values as a Hugging Face tensor of `dtype` (f32, bf16, fp16).
SafeTensor hf_tensor(const ParamInfo& p, const float* unit_values, DType dtype = DType::f32);
// Converts units to Hugging Face named tensors and writes them to one file (atomically).
void write_hf_safetensors(const std::string& path, const std::vector<UnitLayout>& units,
                          const UnitValues& values);

// Writes a model directory unit by unit, holding at most one shard's tensors in memory,
// in `dtype`. Shards are written as they fill, under the temporary names ".NAME.partial"
// (AtomicFile's); finish() renames them into place, writes the index (when there are
// several) and `files` (the tokenizer's and generation_config.json), removes the weight
// files, the weight_description_file_names() and, when `files` hold a tokenizer, the
// tokenizer_file_names() an earlier save left in `dir` that are not part of this one
// (without one, a directory's own tokenizer stays), and writes config.json (with the
// weights' "dtype") last. A writer
// destroyed unfinished (an error, non-finite weights) removes its partial files, so a failed save
// leaves `dir` as it was. Shards fill in parameter order; a shard closes before the tensor that
// would take it past `max_shard_bytes` (a larger tensor gets a shard of its own).
class HfModelWriter {
 public:
  // Removes partial files an interrupted earlier save left in `dir`.
  HfModelWriter(std::string dir, ModelConfig config, std::vector<UnitLayout> units,
                uint64_t max_shard_bytes = kDefaultMaxShardBytes, DType dtype = DType::f32,
                ModelDirectoryFiles files = {});
  HfModelWriter(const HfModelWriter&) = delete;
  HfModelWriter& operator=(const HfModelWriter&) = delete;

  // The next unit's values, in the order of `units`. Throws DivergedError naming the tensor
  // when a value is not finite (nothing of this save is kept).
  void add_unit(const std::vector<float>& values);
  void finish();

  int shard_count() const { return static_cast<int>(shard_names_.size()); }
  // What was written, for messages: "config.json, model.safetensors (bf16)" or
  // "config.json, 3 shards + model.safetensors.index.json (f32)", then the other files.
  std::string describe() const;

 private:
  std::string dir_;
  ModelConfig config_;
  std::vector<UnitLayout> units_;
  DType dtype_;
  ModelDirectoryFiles files_;
  std::vector<int> shard_of_tensor_;  // by tensor, in unit and parameter order
  std::vector<std::string> shard_names_;
  std::vector<SafeTensor> pending_;  // the current shard's tensors so far
  size_t next_unit_ = 0, next_tensor_ = 0;
  uint64_t total_bytes_ = 0;
  // The shards written so far, finished under their partial names (io/atomic_file.h);
  // those not published when the writer is destroyed remove themselves.
  std::vector<std::unique_ptr<AtomicFile>> staged_;
};

// The whole model at once: HfModelWriter over `values`.
void write_hf_model_dir(const std::string& dir, const ModelConfig& config,
                        const std::vector<UnitLayout>& units, const UnitValues& values,
                        uint64_t max_shard_bytes = kDefaultMaxShardBytes);

}  // namespace llmft::io
