// Builds the Model for a config's family.
#pragma once

#include <memory>

#include "core/model.h"

namespace llmft {

struct ModelOptions {
  bool activation_checkpointing = false;
};

std::unique_ptr<Model> make_model(const ModelConfig& config, Backend& backend, Allocator& allocator,
                                  const ModelOptions& options = {});

}  // namespace llmft
