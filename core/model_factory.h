// Builds the Model for a config's family.
#pragma once

#include <memory>

#include "core/model.h"

namespace llmft {

std::unique_ptr<Model> make_model(const ModelConfig& config, Backend& backend,
                                  Allocator& allocator);

}  // namespace llmft
