// config.json numbers enter in range or not at all: sizes are integers within ModelLimits
// (never wrapped into a 32-bit int), floats are finite and fit a float32, and the norm
// epsilon and rope_theta lie where a model can use them. Each message names the key.
#include <doctest/doctest.h>

#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "io/hf_config.h"
#include "io/json.h"

using namespace llmft;

namespace {

using Keys = std::vector<std::pair<std::string, std::string>>;

// `base` with `key` set to the JSON text `value` (replaced or added), as JSON text, so
// that numbers reach the parser exactly as written (1e999 included).
std::string with(Keys base, const std::string& key, const std::string& value) {
  bool replaced = false;
  for (auto& [k, v] : base) {
    if (k == key) v = value, replaced = true;
  }
  if (!replaced) base.emplace_back(key, value);
  std::string text = "{";
  for (const auto& [k, v] : base) text += (text.size() > 1 ? ", \"" : "\"") + k + "\": " + v;
  return text + "}";
}

std::string gpt2_with(const std::string& key, const std::string& value) {
  return with({{"architectures", R"(["GPT2LMHeadModel"])"},
               {"vocab_size", "257"},
               {"n_positions", "64"},
               {"n_embd", "128"},
               {"n_layer", "2"},
               {"n_head", "4"}},
              key, value);
}

std::string llama_with(const std::string& key, const std::string& value) {
  return with({{"architectures", R"(["LlamaForCausalLM"])"},
               {"vocab_size", "97"},
               {"hidden_size", "48"},
               {"intermediate_size", "72"},
               {"num_hidden_layers", "2"},
               {"num_attention_heads", "6"},
               {"num_key_value_heads", "2"},
               {"max_position_embeddings", "64"}},
              key, value);
}

std::string error_of(const std::string& text) {
  try {
    io::parse_hf_config(io::Json::parse(text), "config.json");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("a size that would wrap into a 32-bit int is refused, naming the key") {
  // 4294967424 = 2^32 + 128: a static_cast<int> made it 128.
  const std::string message = error_of(gpt2_with("n_embd", "4294967424"));
  CHECK(contains(message, "config.json: key \"n_embd\" is 4294967424"));
  CHECK(contains(message, "an integer in [1, 131072]"));
  CHECK(contains(error_of(gpt2_with("n_layer", "1000000000")), "\"n_layer\" is 1000000000"));
  CHECK(contains(error_of(gpt2_with("vocab_size", "-5")), "\"vocab_size\" is -5"));
  CHECK(contains(error_of(gpt2_with("n_head", "4.5")), "\"n_head\" is 4.5"));
  CHECK(contains(error_of(gpt2_with("n_positions", "1e999")), "\"n_positions\""));
  // A number beyond a double read as infinity, which the message printed as "null".
  CHECK(contains(error_of(gpt2_with("n_layer", "1e400")),
                 "the number 1e400 of key \"n_layer\" is out of range"));
  CHECK(contains(error_of(llama_with("num_key_value_heads", "0")), "\"num_key_value_heads\" is 0"));
  CHECK(contains(error_of(llama_with("intermediate_size", "2e9")), "\"intermediate_size\""));
  // The bounds themselves are accepted.
  CHECK(
      io::parse_hf_config(io::Json::parse(gpt2_with("n_positions", "16777216")), "c").max_seq_len ==
      16777216);
}

TEST_CASE("sizes inside the bounds whose model is too large are refused by parameter count") {
  // 4096 layers of hidden 131072 would be 8e14 parameters.
  const std::string message = error_of(with({{"architectures", R"(["GPT2LMHeadModel"])"},
                                             {"vocab_size", "257"},
                                             {"n_positions", "64"},
                                             {"n_embd", "131072"},
                                             {"n_layer", "4096"},
                                             {"n_head", "1024"}},
                                            "n_inner", "1024"));
  CHECK(contains(message, "parameters, more than 10000000000000"));
}

TEST_CASE("floats must be finite, fit a float32 and lie where the model can use them") {
  CHECK(
      contains(error_of(gpt2_with("layer_norm_epsilon", "1e300")),
               "\"layer_norm_epsilon\" is 1e+300; it must be a finite number that fits a float32"));
  CHECK(contains(error_of(gpt2_with("layer_norm_epsilon", "0.5e1")),
                 "the norm epsilon 5 must lie in (0, 1)"));
  CHECK(contains(error_of(gpt2_with("layer_norm_epsilon", "0")), "must lie in (0, 1)"));
  CHECK(contains(error_of(llama_with("rope_theta", "-1")), "rope_theta -1 must be a positive"));
  CHECK(contains(error_of(llama_with("rope_theta", "0")), "rope_theta 0 must be a positive"));
  CHECK(contains(error_of(llama_with("rms_norm_eps", "1e999")), "\"rms_norm_eps\""));
  CHECK(
      contains(error_of(llama_with("rope_scaling", R"({"rope_type": "linear", "factor": 1e999})")),
               "the number 1e999 of key \"factor\" is out of range"));
}
