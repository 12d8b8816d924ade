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

float float_key(const Json& j, const std::string& key, float fallback, const std::string& source) {
  const Json* v = j.find(key);
  if (v == nullptr || v->is_null()) return fallback;
  LLMFT_REQUIRE(v->is_number(), source << ": key \"" << key << "\" must be a number");
  return static_cast<float>(v->as_number());
}

bool bool_key(const Json& j, const std::string& key, bool fallback, const std::string& source) {
  const Json* v = j.find(key);
  if (v == nullptr || v->is_null()) return fallback;
  LLMFT_REQUIRE(v->is_bool(), source << ": key \"" << key << "\" must be true or false");
  return v->as_bool();
}

ModelConfig parse_gpt2(const Json& j, const std::string& source) {
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
  c.norm_eps = float_key(j, "layer_norm_epsilon", 1e-5f, source);
  if (const Json* act = j.find("activation_function")) {
    LLMFT_REQUIRE(act->is_string() &&
                      (act->as_string() == "gelu_new" || act->as_string() == "gelu_pytorch_tanh"),
                  source << ": activation_function must be gelu_new (the tanh GELU)");
  }
  LLMFT_REQUIRE(bool_key(j, "tie_word_embeddings", true, source),
                source << ": GPT-2 models must tie their word embeddings");
  return c;
}

ModelConfig parse_llama(const Json& j, const std::string& source) {
  ModelConfig c;
  c.name = source;
  c.family = ModelFamily::llama;
  c.vocab_size = int_key(j, "vocab_size", source);
  c.max_seq_len = int_key(j, "max_position_embeddings", source);
  c.hidden = int_key(j, "hidden_size", source);
  c.n_layer = int_key(j, "num_hidden_layers", source);
  c.n_head = int_key(j, "num_attention_heads", source);
  const Json* kv = j.find("num_key_value_heads");
  c.n_kv_head = kv && !kv->is_null() ? int_key(j, "num_key_value_heads", source) : c.n_head;
  c.intermediate = int_key(j, "intermediate_size", source);
  c.norm_eps = float_key(j, "rms_norm_eps", 1e-6f, source);
  c.rope_theta = float_key(j, "rope_theta", 10000.0f, source);
  // transformers 5 writes {"rope_parameters": {"rope_theta": ..., "rope_type": ...}}.
  if (const Json* rope = j.find("rope_parameters"); rope && !rope->is_null()) {
    LLMFT_REQUIRE(rope->is_object(), source << ": rope_parameters must be an object");
    const Json* type = rope->find("rope_type");
    LLMFT_REQUIRE(!type || (type->is_string() && type->as_string() == "default"),
                  source << ": rope_parameters.rope_type \""
                         << (type && type->is_string() ? type->as_string() : "?")
                         << "\" is not supported; only the default rotary embedding is");
    c.rope_theta = float_key(*rope, "rope_theta", c.rope_theta, source + " rope_parameters");
  }
  c.tie_embeddings = bool_key(j, "tie_word_embeddings", false, source);
  if (const Json* act = j.find("hidden_act")) {
    LLMFT_REQUIRE(act->is_string() && act->as_string() == "silu",
                  source << ": hidden_act must be silu (SwiGLU)");
  }
  LLMFT_REQUIRE(
      !bool_key(j, "attention_bias", false, source) && !bool_key(j, "mlp_bias", false, source),
      source << ": attention_bias and mlp_bias are not supported (LLaMA has no biases)");
  const Json* scaling = j.find("rope_scaling");
  LLMFT_REQUIRE(scaling == nullptr || scaling->is_null(),
                source << ": rope_scaling is not supported; remove it or set it to null");
  if (const Json* head_dim = j.find("head_dim"); head_dim && !head_dim->is_null()) {
    LLMFT_REQUIRE(c.n_head > 0 && int_key(j, "head_dim", source) * c.n_head == c.hidden,
                  source << ": head_dim must equal hidden_size / num_attention_heads");
  }
  return c;
}

}  // namespace

ModelConfig parse_hf_config(const Json& j, const std::string& source) {
  LLMFT_REQUIRE(j.is_object(), source << ": a config must be a JSON object");
  const std::string arch = architecture(j);
  ModelConfig c;
  if (arch == "GPT2LMHeadModel" || arch == "gpt2") {
    c = parse_gpt2(j, source);
  } else if (arch == "LlamaForCausalLM" || arch == "llama") {
    c = parse_llama(j, source);
  } else {
    LLMFT_FAIL(source << ": unsupported architecture \"" << arch
                      << "\"; supported: GPT2LMHeadModel (gpt2), LlamaForCausalLM (llama)");
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
  if (c.family == ModelFamily::gpt2) {
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
  j.set("architectures", Json::array({Json::string("LlamaForCausalLM")}));
  j.set("model_type", Json::string("llama"));
  j.set("vocab_size", Json::number(c.vocab_size));
  j.set("max_position_embeddings", Json::number(c.max_seq_len));
  j.set("hidden_size", Json::number(c.hidden));
  j.set("intermediate_size", Json::number(c.intermediate));
  j.set("num_hidden_layers", Json::number(c.n_layer));
  j.set("num_attention_heads", Json::number(c.n_head));
  j.set("num_key_value_heads", Json::number(c.n_kv_head));
  j.set("hidden_act", Json::string("silu"));
  j.set("rms_norm_eps", Json::number(c.norm_eps));
  j.set("rope_theta", Json::number(c.rope_theta));
  j.set("tie_word_embeddings", Json::boolean(c.tie_embeddings));
  j.set("attention_bias", Json::boolean(false));
  j.set("mlp_bias", Json::boolean(false));
  return j;
}

ModelConfig resolve_model(const std::string& spec) {
  namespace fs = std::filesystem;
  if (fs::is_directory(spec)) return read_hf_config((fs::path(spec) / "config.json").string());
  if (spec.size() > 5 && spec.substr(spec.size() - 5) == ".json") return read_hf_config(spec);
  return preset_config(spec);
}

}  // namespace llmft::io
