// Hugging Face model directories: config.json + model.safetensors with Hugging Face
// tensor names and layouts (GPT-2's Conv1D weights transposed to (in, out)), so that
// transformers loads what llmft writes and llmft fine-tunes what transformers wrote.
// Tensors move as host f32 arrays, one flat vector per unit.
#pragma once

#include <string>
#include <vector>

#include "core/model_config.h"
#include "core/unit_layout.h"

namespace llmft::io {

using UnitValues = std::vector<std::vector<float>>;  // per unit, flat, llmft layout

// Converts units to Hugging Face named tensors and writes them (atomically).
void write_hf_safetensors(const std::string& path, const std::vector<UnitLayout>& units,
                          const UnitValues& values);
// Creates `dir` (and its parents) if needed; an Error naming `option` when it cannot.
void ensure_directory(const std::string& dir, const std::string& option);
// Writes DIR/model.safetensors, then DIR/config.json (creating DIR), each atomically.
void write_hf_model_dir(const std::string& dir, const ModelConfig& config,
                        const std::vector<UnitLayout>& units, const UnitValues& values);
// Reads a safetensors file into units; every parameter must be present with its
// Hugging Face shape. Errors name the file and the tensor.
UnitValues read_hf_safetensors(const std::string& path, const std::vector<UnitLayout>& units);

}  // namespace llmft::io
