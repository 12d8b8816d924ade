#include "io/hf_config.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "core/error.h"

namespace llmft::io {

namespace {

// A size: an integer in [1, limit] (ModelLimits), never wrapped into an int.
int size_key(const Json& j, const std::string& key, int64_t limit, const std::string& source) {
  const Json* v = j.find(key);
  LLMFT_REQUIRE(v != nullptr, source << ": missing key \"" << key << "\"");
  LLMFT_REQUIRE(v->is_number(), source << ": key \"" << key << "\" must be a number");
  const double value = v->as_number();
  LLMFT_REQUIRE(value == std::trunc(value) && value >= 1 && value <= static_cast<double>(limit),
                source << ": key \"" << key << "\" is " << v->dump()
                       << "; it must be an integer in [1, " << limit
                       << "] (the bounds of core/model_config.h's ModelLimits, far "
                       << "above every published model)");
  return static_cast<int>(value);
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
  const double value = v->as_number();
  LLMFT_REQUIRE(std::isfinite(value) && std::fabs(value) <= std::numeric_limits<float>::max(),
                source << ": key \"" << key << "\" is " << v->dump()
                       << "; it must be a finite number that fits a float32");
  return static_cast<float>(value);
}

bool bool_key(const Json& j, const std::string& key, bool fallback, const std::string& source) {
  const Json* v = j.find(key);
  if (v == nullptr || v->is_null()) return fallback;
  LLMFT_REQUIRE(v->is_bool(), source << ": key \"" << key << "\" must be true or false");
  return v->as_bool();
}

// bos_token_id (one id) and eos_token_id (one id or a list, as Llama 3.1's instruct
// models write), kept so that the exported config names them again.
void read_special_tokens(const Json& j, const std::string& source, ModelConfig& c) {
  if (const Json* bos = j.find("bos_token_id"); bos && !bos->is_null()) {
    LLMFT_REQUIRE(bos->is_number(), source << ": bos_token_id must be a token id or null");
    c.bos_token_id = bos->as_int();
  }
  const Json* eos = j.find("eos_token_id");
  if (eos == nullptr || eos->is_null()) return;
  if (eos->is_number()) {
    c.eos_token_ids = {eos->as_int()};
    return;
  }
  LLMFT_REQUIRE(eos->is_array(), source << ": eos_token_id must be a token id, a list or null");
  for (const Json& id : eos->as_array()) {
    LLMFT_REQUIRE(id.is_number(), source << ": eos_token_id lists token ids");
    c.eos_token_ids.push_back(id.as_int());
  }
}

// GPT2Config keys, each used, harmless or refused:
//   used: vocab_size, n_positions, n_embd, n_layer, n_head, n_inner, activation_function,
//         layer_norm_epsilon, tie_word_embeddings (must be true), bos/eos_token_id (kept)
//   harmless: n_ctx (legacy), initializer_range (random init only), summary_* (only the
//         classification and double-heads models read them), use_cache, pad_token_id (no
//         padding row in GPT-2's embedding), reorder_and_upcast_attn (computes the same
//         scores in float32, which llmft's attention always accumulates in),
//         resid_pdrop / embd_pdrop / attn_pdrop / summary_first_dropout (llmft has no
//         dropout: its forward is transformers' eval() forward)
//   refused: scale_attn_weights false, scale_attn_by_inverse_layer_idx true,
//         add_cross_attention true
ModelConfig parse_gpt2(const Json& j, const std::string& source) {
  ModelConfig c;
  c.name = source;
  c.family = ModelFamily::gpt2;
  c.vocab_size = size_key(j, "vocab_size", ModelLimits::vocab_size, source);
  c.max_seq_len = size_key(j, "n_positions", ModelLimits::positions, source);
  c.hidden = size_key(j, "n_embd", ModelLimits::hidden, source);
  c.n_layer = size_key(j, "n_layer", ModelLimits::layers, source);
  c.n_head = size_key(j, "n_head", ModelLimits::heads, source);
  c.n_kv_head = c.n_head;
  const Json* inner = j.find("n_inner");
  c.intermediate = inner && !inner->is_null()
                       ? size_key(j, "n_inner", ModelLimits::intermediate, source)
                       : 4 * c.hidden;
  c.norm_eps = float_key(j, "layer_norm_epsilon", 1e-5f, source);
  if (const Json* act = j.find("activation_function")) {
    LLMFT_REQUIRE(act->is_string() &&
                      (act->as_string() == "gelu_new" || act->as_string() == "gelu_pytorch_tanh"),
                  source << ": activation_function must be gelu_new (the tanh GELU)");
  }
  LLMFT_REQUIRE(bool_key(j, "tie_word_embeddings", true, source),
                source << ": GPT-2 models must tie their word embeddings");
  LLMFT_REQUIRE(bool_key(j, "scale_attn_weights", true, source),
                source << ": scale_attn_weights false (attention scores not divided by "
                          "sqrt(head size)) is not supported; llmft always scales them: "
                          "remove the key or set it to true");
  LLMFT_REQUIRE(!bool_key(j, "scale_attn_by_inverse_layer_idx", false, source),
                source << ": scale_attn_by_inverse_layer_idx true (scores of layer i divided "
                          "by i + 1) is not supported; remove the key or set it to false");
  LLMFT_REQUIRE(!bool_key(j, "add_cross_attention", false, source),
                source << ": add_cross_attention true (an encoder-decoder's cross-attention "
                          "layers) is not supported; llmft trains decoder-only models");
  bool_key(j, "reorder_and_upcast_attn", false, source);  // harmless, but must be a boolean
  read_special_tokens(j, source, c);
  return c;
}

double number_key(const Json& j, const std::string& key, const std::string& source) {
  const Json* v = j.find(key);
  LLMFT_REQUIRE(v != nullptr && v->is_number() && std::isfinite(v->as_number()),
                source << ": key \"" << key << "\" must be a finite number");
  return v->as_number();
}

// The rope scaling of rope_scaling (transformers 4) or rope_parameters (transformers 5,
// which also holds rope_theta): rope_type (or the older "type") default, linear or llama3.
void read_rope(const Json& j, const std::string& source, ModelConfig& c) {
  c.rope_theta = float_key(j, "rope_theta", 10000.0f, source);
  const Json* parameters = j.find("rope_parameters");
  const Json* scaling = j.find("rope_scaling");
  const bool has_parameters = parameters && !parameters->is_null();
  const bool has_scaling = scaling && !scaling->is_null();
  LLMFT_REQUIRE(!(has_parameters && has_scaling),
                source << ": both rope_parameters and rope_scaling are given; keep one");
  const std::string key = has_parameters ? "rope_parameters" : "rope_scaling";
  const Json empty = Json::object({});
  const Json& rope = has_parameters ? *parameters : has_scaling ? *scaling : empty;
  const std::string where = source + " " + key;
  LLMFT_REQUIRE(rope.is_object(), source << ": " << key << " must be an object or null");
  const float partial = float_key(rope, "partial_rotary_factor",
                                  float_key(j, "partial_rotary_factor", 1.0f, source), where);
  LLMFT_REQUIRE(partial == 1.0f, source << ": partial_rotary_factor " << partial
                                        << " is not supported; llmft rotates whole heads (1.0)");
  if (!has_parameters && !has_scaling) return;
  c.rope_theta = float_key(rope, "rope_theta", c.rope_theta, where);
  const Json* type = rope.find("rope_type");
  if (type == nullptr || type->is_null()) type = rope.find("type");
  std::string name = "default";
  if (type != nullptr && !type->is_null()) {
    LLMFT_REQUIRE(type->is_string(), where << ": rope_type must be a string");
    name = type->as_string();
  }
  RopeScaling& s = c.rope_scaling;
  if (name == "default") {
    s.type = RopeType::unscaled;
  } else if (name == "linear") {
    s.type = RopeType::linear;
    s.factor = number_key(rope, "factor", where);
  } else if (name == "llama3") {
    s.type = RopeType::llama3;
    s.factor = number_key(rope, "factor", where);
    s.low_freq_factor = number_key(rope, "low_freq_factor", where);
    s.high_freq_factor = number_key(rope, "high_freq_factor", where);
    // As transformers: the config's own original_max_position_embeddings first, then the
    // scaling's, then the context.
    const Json* outer = j.find("original_max_position_embeddings");
    const Json* inner = rope.find("original_max_position_embeddings");
    if (outer && !outer->is_null()) {
      s.original_max_positions =
          size_key(j, "original_max_position_embeddings", ModelLimits::positions, source);
    } else if (inner && !inner->is_null()) {
      s.original_max_positions =
          size_key(rope, "original_max_position_embeddings", ModelLimits::positions, where);
    } else {
      s.original_max_positions = c.max_seq_len;
    }
  } else {
    LLMFT_FAIL(where << ": rope type \"" << name
                     << "\" is not supported; supported: default, linear, llama3");
  }
}

// LlamaConfig keys, each used, harmless or refused:
//   used: vocab_size, hidden_size, intermediate_size, num_hidden_layers,
//         num_attention_heads, num_key_value_heads, max_position_embeddings, rms_norm_eps,
//         rope_theta, rope_scaling / rope_parameters (default, linear, llama3),
//         tie_word_embeddings, hidden_act (must be silu), head_dim (must equal
//         hidden_size / num_attention_heads), bos/eos_token_id (kept)
//   harmless: initializer_range (random init only), use_cache, pretraining_tp (splits
//         the same products in transformers 4; unused in 5), attention_dropout (llmft has
//         no dropout: its forward is transformers' eval() forward), torch_dtype / dtype
//         (the stored weights' type; --dtype picks the compute type)
//   refused: attention_bias / mlp_bias true, pad_token_id other than null (transformers
//         never updates that embedding row, llmft trains every row), rope types other
//         than the three, partial_rotary_factor other than 1
ModelConfig parse_llama(const Json& j, const std::string& source) {
  ModelConfig c;
  c.name = source;
  c.family = ModelFamily::llama;
  c.vocab_size = size_key(j, "vocab_size", ModelLimits::vocab_size, source);
  c.max_seq_len = size_key(j, "max_position_embeddings", ModelLimits::positions, source);
  c.hidden = size_key(j, "hidden_size", ModelLimits::hidden, source);
  c.n_layer = size_key(j, "num_hidden_layers", ModelLimits::layers, source);
  c.n_head = size_key(j, "num_attention_heads", ModelLimits::heads, source);
  const Json* kv = j.find("num_key_value_heads");
  c.n_kv_head = kv && !kv->is_null()
                    ? size_key(j, "num_key_value_heads", ModelLimits::heads, source)
                    : c.n_head;
  c.intermediate = size_key(j, "intermediate_size", ModelLimits::intermediate, source);
  c.norm_eps = float_key(j, "rms_norm_eps", 1e-6f, source);
  read_rope(j, source, c);
  c.tie_embeddings = bool_key(j, "tie_word_embeddings", false, source);
  if (const Json* act = j.find("hidden_act")) {
    LLMFT_REQUIRE(act->is_string() && act->as_string() == "silu",
                  source << ": hidden_act must be silu (SwiGLU)");
  }
  LLMFT_REQUIRE(
      !bool_key(j, "attention_bias", false, source) && !bool_key(j, "mlp_bias", false, source),
      source << ": attention_bias and mlp_bias are not supported (LLaMA has no biases)");
  if (const Json* head_dim = j.find("head_dim"); head_dim && !head_dim->is_null()) {
    LLMFT_REQUIRE(
        c.n_head > 0 && size_key(j, "head_dim", ModelLimits::hidden, source) * c.n_head == c.hidden,
        source << ": head_dim must equal hidden_size / num_attention_heads");
  }
  if (const Json* pad = j.find("pad_token_id"); pad && !pad->is_null()) {
    LLMFT_FAIL(source << ": pad_token_id " << pad->dump()
                      << " is not supported: transformers never updates that embedding row "
                         "(padding_idx) and llmft trains every row; set it to null");
  }
  read_special_tokens(j, source, c);
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

namespace {

void write_special_tokens(const ModelConfig& c, Json& j) {
  if (c.bos_token_id) j.set("bos_token_id", Json::number(static_cast<double>(*c.bos_token_id)));
  if (c.eos_token_ids.size() == 1) {
    j.set("eos_token_id", Json::number(static_cast<double>(c.eos_token_ids[0])));
  } else if (!c.eos_token_ids.empty()) {
    Json ids = Json::array({});
    for (int64_t id : c.eos_token_ids) ids.push_back(Json::number(static_cast<double>(id)));
    j.set("eos_token_id", ids);
  }
}

// transformers 4 and 5 both read rope_scaling with a rope_type.
Json rope_scaling_json(const RopeScaling& s) {
  Json rope = Json::object({});
  rope.set("rope_type", Json::string(rope_type_name(s.type)));
  rope.set("factor", Json::number(s.factor));
  if (s.type == RopeType::llama3) {
    rope.set("low_freq_factor", Json::number(s.low_freq_factor));
    rope.set("high_freq_factor", Json::number(s.high_freq_factor));
    rope.set("original_max_position_embeddings",
             Json::number(static_cast<double>(s.original_max_positions)));
  }
  return rope;
}

}  // namespace

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
    write_special_tokens(c, j);
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
  if (c.rope_scaling.type != RopeType::unscaled) {
    j.set("rope_scaling", rope_scaling_json(c.rope_scaling));
  }
  j.set("tie_word_embeddings", Json::boolean(c.tie_embeddings));
  j.set("attention_bias", Json::boolean(false));
  j.set("mlp_bias", Json::boolean(false));
  write_special_tokens(c, j);
  return j;
}

ModelConfig resolve_model(const std::string& spec) {
  namespace fs = std::filesystem;
  if (fs::is_directory(spec)) return read_hf_config((fs::path(spec) / "config.json").string());
  if (spec.size() > 5 && spec.substr(spec.size() - 5) == ".json") return read_hf_config(spec);
  return preset_config(spec);
}

}  // namespace llmft::io
