// Builds the Model (and its Family) for a config's family.
#pragma once

#include <memory>

#include <vector>

#include "core/decoder/family.h"
#include "core/model.h"

namespace llmft {

std::unique_ptr<Family> make_family(ModelFamily family);

// The units of a config's model (embedding, blocks, head) as tensor-parallel slice `tp`
// holds them, without building it: by default in the whole model's Hugging Face shapes,
// with vocab_row_multiple as DecoderModel stores them (its kVocabRowMultiple).
std::vector<UnitLayout> unit_layouts(const ModelConfig& config, TpSlice tp = {},
                                     int64_t vocab_row_multiple = 1);

std::unique_ptr<Model> make_model(const ModelConfig& config, Backend& backend, Allocator& allocator,
                                  const ModelOptions& options = ModelOptions());

}  // namespace llmft
