// A model directory loaded for generation (`llmft generate`), and the loop that extends a
// prompt with a KV cache: the prompt runs once, then one position per new token, until a
// stop token, --max-new-tokens or the model's context.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "core/allocator.h"
#include "core/backend.h"
#include "core/model.h"
#include "core/model_config.h"
#include "io/tokenizer.h"
#include "launch/sampling.h"
#include "parallel/engine.h"

namespace llmft {

// The tokens that end a generated text: the ids of config.json's eos_token_id, of
// generation_config.json's (an id or a list) in `model_dir` and in `tokenizer_dir` (when
// not "" and not the same), the tokenizer's end-of-text token (tokenizer_config.json's
// eos_token when it names one) and `end_of_turn` (the chat template's).
std::vector<int32_t> stop_tokens(const ModelConfig& config, const std::string& model_dir,
                                 const std::string& tokenizer_dir, const io::Tokenizer& tokenizer,
                                 std::optional<int32_t> end_of_turn);

// Why generation ended.
enum class GenerationEnd { stop_token, max_new_tokens, context };

class TextGenerator {
 public:
  // Loads the weights of `model_dir` (config.json + safetensors) whose config is `config`.
  TextGenerator(const std::string& model_dir, const ModelConfig& config, const std::string& device,
                int threads);

  // Samples up to `max_new_tokens` tokens after `prompt`, handing each to `on_token`, and
  // stops after a token of `stop` (which is not handed on) or at the model's context.
  // REQUIRES: 0 < prompt.size() < the model's context
  GenerationEnd generate(const std::vector<int32_t>& prompt, int max_new_tokens,
                         const SamplingOptions& sampling, const std::vector<int32_t>& stop,
                         std::mt19937_64& rng, const std::function<void(int32_t)>& on_token);

 private:
  ModelConfig config_;
  std::unique_ptr<Backend> backend_;
  std::unique_ptr<Allocator> allocator_;
  std::unique_ptr<Model> model_;
  std::unique_ptr<Engine> engine_;
};

}  // namespace llmft
