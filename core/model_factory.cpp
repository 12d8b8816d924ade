#include "core/model_factory.h"

#include "core/decoder/decoder_model.h"
#include "core/gpt2/gpt2_family.h"
#include "core/llama/llama_family.h"

namespace llmft {

std::unique_ptr<Model> make_model(const ModelConfig& config, Backend& backend, Allocator& allocator,
                                  const ModelOptions& options) {
  std::unique_ptr<Family> family;
  if (config.family == ModelFamily::gpt2) {
    family = std::make_unique<Gpt2Family>();
  } else {
    family = std::make_unique<LlamaFamily>();
  }
  return std::make_unique<DecoderModel>(config, std::move(family), backend, allocator,
                                        options.activation_checkpointing);
}

}  // namespace llmft
