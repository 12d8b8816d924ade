// A model loaded for generation and its decoding loop (launch/text_generator.h).
#include "launch/text_generator.h"

#include <algorithm>

#include "core/backend_registry.h"
#include "core/model_factory.h"
#include "io/generation_config.h"
#include "io/hf_weight_loader.h"
#include "io/model_directory_files.h"
#include "io/progress.h"

namespace llmft {

std::vector<int32_t> stop_tokens(const ModelConfig& config, const std::string& model_dir,
                                 const std::string& tokenizer_dir, const io::Tokenizer& tokenizer,
                                 std::optional<int32_t> end_of_turn) {
  io::GenerationConfig settings =
      io::generation_settings(config, model_dir, tokenizer.eot_token(), end_of_turn.value_or(-1));
  if (!tokenizer_dir.empty() && tokenizer_dir != model_dir) {
    for (int64_t id : io::read_generation_config(tokenizer_dir).eos_token_ids) settings.add_eos(id);
  }
  return std::vector<int32_t>(settings.eos_token_ids.begin(), settings.eos_token_ids.end());
}

TextGenerator::TextGenerator(const std::string& model_dir, const ModelConfig& config,
                             const std::string& device, int threads)
    : config_(config), backend_(make_backend(device)) {
  if (threads > 0) backend_->set_threads(threads);
  allocator_ = std::make_unique<Allocator>(backend_->memory(), 0);
  model_ = make_model(config_, *backend_, *allocator_);
  EngineOptions options;
  options.trainable = false;
  engine_ = std::make_unique<Engine>(*model_, *backend_, *allocator_, options);
  io::HfWeightLoader weights(model_dir);
  io::Progress progress("loading weights from " + weights.files().origin(),
                        static_cast<uint64_t>(total_numel(model_->units())),
                        io::ProgressCount::parameters());
  const std::vector<UnitLayout> whole = unit_layouts(config_);
  for (size_t u = 0; u < model_->units().size(); ++u) {
    const UnitLayout& unit = model_->units()[u];
    engine_->write_params(static_cast<int>(u), weights.read_unit(whole[u], unit, TpSlice{}));
    progress.advance(static_cast<uint64_t>(unit.numel));
  }
  progress.finish();
}

GenerationEnd TextGenerator::generate(const std::vector<int32_t>& prompt, int max_new_tokens,
                                      const SamplingOptions& sampling,
                                      const std::vector<int32_t>& stop, std::mt19937_64& rng,
                                      const std::function<void(int32_t)>& on_token) {
  std::vector<int32_t> tokens = prompt;
  const int prompt_tokens = static_cast<int>(prompt.size());
  const int max_len = static_cast<int>(
      std::min<int64_t>(config_.max_seq_len, static_cast<int64_t>(prompt_tokens) + max_new_tokens));
  GenerationEnd end = max_len < static_cast<int64_t>(prompt_tokens) + max_new_tokens
                          ? GenerationEnd::context
                          : GenerationEnd::max_new_tokens;
  model_->begin_decoding(1, max_len);
  // Only the last position's logits: the prompt's others would cost an LM head product
  // and (prompt x vocabulary) floats on the device and the host.
  std::vector<float> logits =
      engine_->logits(MicroBatch{1, prompt_tokens, tokens.data(), nullptr, 0}, LogitRows::last);
  while (static_cast<int>(tokens.size()) < max_len) {
    const int32_t token = sample_token(logits, sampling, rng);
    if (std::find(stop.begin(), stop.end(), token) != stop.end()) {
      end = GenerationEnd::stop_token;
      break;
    }
    tokens.push_back(token);
    on_token(token);
    if (static_cast<int>(tokens.size()) == max_len) break;
    const int position = static_cast<int>(tokens.size()) - 1;
    logits = engine_->logits(MicroBatch{1, 1, &tokens.back(), nullptr, position}, LogitRows::last);
  }
  model_->end_decoding();
  return end;
}

}  // namespace llmft
