#include "io/hf_config.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.h"

namespace llmft::io {

namespace {

int int_key(const Json& j, const std::string& key, const std::string& source) {
  const Json* v = j.find(key);
  LLMFT_REQUIRE(v != nullptr, source << ": missing key \"" << key << "\"");
  LLMFT_REQUIRE(v->is_number(), source << ": key \"" << key << "\" must be a number");
  return static_cast<int>(v->as_int());
}

std::string architecture(const Json& j) {
  if (const Json* archs = j.find("architectures"); archs && archs->is_array() &&
                                                   !archs->as_array().empty() &&
                                                   archs->as_array()[0].is_string()) {
    return archs->as_array()[0].as_string();
  }
  if (const Json* type = j.find("model_type"); type && type->is_string()) {
    return type->as_string();
  }
  return "";
}

}  // namespace

ModelConfig parse_hf_config(const Json& j, const std::string& source) {
  LLMFT_REQUIRE(j.is_object(), source << ": a config must be a JSON object");
  const std::string arch = architecture(j);
  LLMFT_REQUIRE(arch == "GPT2LMHeadModel" || arch == "gpt2",
                source << ": unsupported architecture \"" << arch
                       << "\"; this build supports GPT2LMHeadModel (model_type gpt2)");
  ModelConfig c;
  c.name = source;
  c.family = ModelFamily::gpt2;
  c.vocab_size = int_key(j, "vocab_size", source);
  c.max_seq_len = int_key(j, "n_positions", source);
  c.hidden = int_key(j, "n_embd", source);
  c.n_layer = int_key(j, "n_layer", source);
  c.n_head = int_key(j, "n_head", source);
  c.n_kv_head = c.n_head;
  const Json* inner = j.find("n_inner");
  c.intermediate = inner && !inner->is_null() ? int_key(j, "n_inner", source) : 4 * c.hidden;
  if (const Json* eps = j.find("layer_norm_epsilon"))
    c.norm_eps = static_cast<float>(eps->as_number());
  if (const Json* act = j.find("activation_function")) {
    LLMFT_REQUIRE(act->is_string() &&
                      (act->as_string() == "gelu_new" || act->as_string() == "gelu_pytorch_tanh"),
                  source << ": activation_function must be gelu_new (the tanh GELU)");
  }
  if (const Json* tie = j.find("tie_word_embeddings")) {
    LLMFT_REQUIRE(tie->is_bool() && tie->as_bool(),
                  source << ": GPT-2 models must tie their word embeddings");
  }
  validate(c);
  return c;
}

ModelConfig read_hf_config(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  LLMFT_REQUIRE(in, "cannot read model config " << path << ": check the path");
  std::stringstream text;
  text << in.rdbuf();
  try {
    return parse_hf_config(Json::parse(text.str()), path);
  } catch (const Error& e) {
    const std::string what = e.what();
    if (what.find(path) != std::string::npos) throw;
    LLMFT_FAIL(path << ": " << what);
  }
}

Json hf_config_json(const ModelConfig& c) {
  Json j = Json::object({});
  j.set("architectures", Json::array({Json::string("GPT2LMHeadModel")}));
  j.set("model_type", Json::string("gpt2"));
  j.set("vocab_size", Json::number(c.vocab_size));
  j.set("n_positions", Json::number(c.max_seq_len));
  j.set("n_ctx", Json::number(c.max_seq_len));
  j.set("n_embd", Json::number(c.hidden));
  j.set("n_layer", Json::number(c.n_layer));
  j.set("n_head", Json::number(c.n_head));
  j.set("n_inner", Json::number(c.intermediate));
  j.set("activation_function", Json::string("gelu_new"));
  j.set("layer_norm_epsilon", Json::number(c.norm_eps));
  j.set("resid_pdrop", Json::number(0));
  j.set("embd_pdrop", Json::number(0));
  j.set("attn_pdrop", Json::number(0));
  j.set("tie_word_embeddings", Json::boolean(true));
  return j;
}

ModelConfig resolve_model(const std::string& spec) {
  namespace fs = std::filesystem;
  if (fs::is_directory(spec)) return read_hf_config((fs::path(spec) / "config.json").string());
  if (spec.size() > 5 && spec.substr(spec.size() - 5) == ".json") return read_hf_config(spec);
  return preset_config(spec);
}

}  // namespace llmft::io
