// Generation ends (launch/text_generator.h): a tiny LLaMA whose weights make one token
// the argmax at every position (all-ones embeddings and norms, zero attention and MLP, so
// the stream stays all ones, and an LM head whose row for that token alone is ones) stops
// before it when it is a stop token and otherwise repeats it to the limit; and the stop
// set gathers config.json's, generation_config.json's (an id or a list) and the
// tokenizer's end tokens.
#include <doctest/doctest.h>

#include <random>
#include <string>
#include <vector>

#include "core/model_factory.h"
#include "io/byte_tokenizer.h"
#include "io/hf_checkpoint.h"
#include "launch/text_generator.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_models.h"

namespace llmft {
namespace {

constexpr int kArgmax = 42;

ModelConfig argmax_model(const std::string& dir) {
  ModelConfig config = testing::test_config(ModelFamily::llama, {257, 16, 8, 1, 2, 1, 16}, false);
  const std::vector<UnitLayout> units = unit_layouts(config);
  io::UnitValues values;
  for (const UnitLayout& unit : units) {
    std::vector<float> flat(static_cast<size_t>(unit.numel), 0.0f);
    for (const ParamInfo& p : unit.params) {
      const bool ones = p.name == "model.embed_tokens.weight" ||
                        p.name.find("norm.weight") != std::string::npos;
      if (ones) std::fill_n(flat.begin() + p.offset, p.numel(), 1.0f);
      if (p.name == "lm_head.weight") {
        std::fill_n(flat.begin() + p.offset + kArgmax * config.hidden, config.hidden, 1.0f);
      }
    }
    values.push_back(flat);
  }
  io::write_hf_model_dir(dir, config, units, values);
  return config;
}

std::vector<int32_t> run(const std::string& dir, const ModelConfig& config, int max_new,
                         const std::vector<int32_t>& stop, GenerationEnd& end) {
  TextGenerator generator(dir, config, "cpu", 1);
  std::mt19937_64 rng(1);
  std::vector<int32_t> out;
  end = generator.generate({1, 2, 3}, max_new, SamplingOptions{0.0f, 0, 1.0f}, stop, rng,
                           [&out](int32_t token) { out.push_back(token); });
  return out;
}

TEST_CASE("generation stops before a stop token and otherwise runs to the limit") {
  testing::TempDir dir;
  const ModelConfig config = argmax_model(dir.path().string());
  GenerationEnd end{};
  CHECK(run(dir.path().string(), config, 5, {7, kArgmax}, end).empty());
  CHECK(end == GenerationEnd::stop_token);
  CHECK(run(dir.path().string(), config, 5, {7}, end) == std::vector<int32_t>(5, kArgmax));
  CHECK(end == GenerationEnd::max_new_tokens);
  // A context of 16 after a prompt of 3 leaves 13 new tokens.
  CHECK(run(dir.path().string(), config, 50, {}, end).size() == 13);
  CHECK(end == GenerationEnd::context);
}

TEST_CASE("the stop tokens: config.json's, generation_config.json's, the tokenizer's, the turn's") {
  testing::TempDir model, tokenizer_dir;
  ModelConfig config = testing::test_config(ModelFamily::llama, {257, 16, 8, 1, 2, 1, 16}, false);
  config.eos_token_ids = {3};
  const io::ByteTokenizer bytes;
  CHECK(stop_tokens(config, model.path().string(), "", bytes, std::nullopt) ==
        std::vector<int32_t>{3, 256});
  model.write("generation_config.json", R"({"eos_token_id": [5, 3, 7], "pad_token_id": 0})");
  tokenizer_dir.write("generation_config.json", R"({"eos_token_id": 11})");
  CHECK(stop_tokens(config, model.path().string(), tokenizer_dir.path().string(), bytes, 9) ==
        std::vector<int32_t>{3, 5, 7, 256, 9, 11});
}

}  // namespace
}  // namespace llmft
