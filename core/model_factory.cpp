#include "core/model_factory.h"

#include "core/error.h"
#include "core/gpt2/gpt2_model.h"

namespace llmft {

std::unique_ptr<Model> make_model(const ModelConfig& config, Backend& backend,
                                  Allocator& allocator) {
  if (config.family == ModelFamily::gpt2) {
    return std::make_unique<Gpt2Model>(config, backend, allocator);
  }
  LLMFT_FAIL("model " << config.name << ": the " << family_name(config.family)
                      << " family is not supported by this build");
}

}  // namespace llmft
