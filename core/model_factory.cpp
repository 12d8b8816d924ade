#include "core/model_factory.h"

#include "core/decoder/decoder_model.h"
#include "core/gpt2/gpt2_family.h"
#include "core/llama/llama_family.h"

namespace llmft {

std::unique_ptr<Family> make_family(ModelFamily family) {
  if (family == ModelFamily::gpt2) return std::make_unique<Gpt2Family>();
  return std::make_unique<LlamaFamily>();
}

std::vector<UnitLayout> unit_layouts(const ModelConfig& config, TpSlice tp,
                                     int64_t vocab_row_multiple) {
  return unit_layouts(*make_family(config.family), config, tp, vocab_row_multiple);
}

std::unique_ptr<Model> make_model(const ModelConfig& config, Backend& backend, Allocator& allocator,
                                  const ModelOptions& options) {
  return std::make_unique<DecoderModel>(config, make_family(config.family), backend, allocator,
                                        options);
}

}  // namespace llmft
