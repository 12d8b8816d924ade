#include "io/hf_config.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "io/config_object.h"

namespace llmft::io {

namespace {

// Keys of transformers' PretrainedConfig (4.x and 5.x, with the legacy keys older
// releases wrote) that do not change the computation llmft does, for every model.
const std::vector<std::string_view> kIgnoredByEveryModel = {
    // who wrote the file and how it was named
    "_name_or_path", "name_or_path", "_commit_hash", "transformers_version",
    // the stored weights' type (--dtype picks the compute type)
    "dtype", "torch_dtype", "use_bfloat16",
    // what a forward returns and which attention kernel computes it (the same products)
    "output_attentions", "output_hidden_states", "return_dict", "output_past", "torchscript",
    "attn_implementation", "_attn_implementation", "_attn_implementation_internal",
    "_attn_implementation_autoset", "tf_legacy_loss", "xla_device",
    // the heads of other tasks (classification, summaries), not the LM head
    "id2label", "label2id", "num_labels", "_num_labels", "problem_type", "finetuning_task",
    "task_specific_params",
    // the tokenizer's business
    "tokenizer_class", "prefix", "sep_token_id", "decoder_start_token_id",
    // encoder-decoder flags that decoder-only causal LMs do not read
    "is_encoder_decoder", "is_decoder", "tie_encoder_decoder", "cross_attention_hidden_size",
    "chunk_size_feed_forward",
    // training-time switches of transformers' own trainer
    "gradient_checkpointing", "initializer_range",
    // generate()'s defaults (GenerationConfig): llmft generate takes its own options
    "use_cache", "max_length", "min_length", "do_sample", "early_stopping", "num_beams",
    "num_beam_groups", "diversity_penalty", "temperature", "top_k", "top_p", "typical_p",
    "epsilon_cutoff", "eta_cutoff", "repetition_penalty", "encoder_repetition_penalty",
    "length_penalty", "no_repeat_ngram_size", "encoder_no_repeat_ngram_size", "bad_words_ids",
    "num_return_sequences", "output_scores", "return_dict_in_generate", "forced_bos_token_id",
    "forced_eos_token_id", "remove_invalid_values", "exponential_decay_length_penalty",
    "suppress_tokens", "begin_suppress_tokens", "assistant_confidence_threshold",
    "assistant_lookbehind", "target_lookbehind", "num_assistant_tokens",
    "num_assistant_tokens_schedule"};

// GPT2Config keys that do not change the computation (each other key is read, and its
// value used or refused, by parse_gpt2):
const std::vector<std::string_view> kIgnoredByGpt2 = {
    // dropout rates: llmft has no dropout, its forward is transformers' eval() forward
    "resid_pdrop", "embd_pdrop", "attn_pdrop", "summary_first_dropout",
    // the double-heads and classification models' summary head
    "summary_type", "summary_use_proj", "summary_activation", "summary_proj_to_labels",
    // no padding row in GPT-2's embedding
    "pad_token_id",
    // n_positions' legacy twin, and OpenAI GPT's keys that GPT-2's published configs keep
    "n_ctx", "n_special", "predict_special_tokens"};

// LlamaConfig keys that do not change the computation (each other key is read, and its
// value used or refused, by parse_llama and read_rope):
const std::vector<std::string_view> kIgnoredByLlama = {
    // no dropout (eval() forward)
    "attention_dropout",
    // splits the same products in transformers 4; unused in 5
    "pretraining_tp",
    // read for rope type llama3 only; transformers ignores it for the others
    "original_max_position_embeddings",
    // nanotron's keys in SmolLM's configs, which transformers ignores
    "is_llama_config", "rope_interleaved"};

std::vector<std::string_view> ignored_keys(const std::vector<std::string_view>& family) {
  std::vector<std::string_view> keys = kIgnoredByEveryModel;
  keys.insert(keys.end(), family.begin(), family.end());
  return keys;
}

// A size: an integer in [1, limit] (ModelLimits), never wrapped into an int.
int size_key(ConfigObject& j, const std::string& key, int64_t limit) {
  const Json* v = j.find(key);
  LLMFT_REQUIRE(v != nullptr, j.source() << ": missing key \"" << key << "\"");
  LLMFT_REQUIRE(v->is_number(), j.source() << ": key \"" << key << "\" must be a number");
  const double value = v->as_number();
  LLMFT_REQUIRE(value == std::trunc(value) && value >= 1 && value <= static_cast<double>(limit),
                j.source() << ": key \"" << key << "\" is " << v->dump()
                           << "; it must be an integer in [1, " << limit
                           << "] (the bounds of core/model_config.h's ModelLimits, far "
                           << "above every published model)");
  return static_cast<int>(value);
}

// GPT2Config's attribute_map lets the generic names stand for its own (hidden_size for
// n_embd, ...), and transformers takes the generic one when both are given; so does
// llmft, but both must then say the same.
int gpt2_size_key(ConfigObject& j, const std::string& key, const std::string& generic,
                  int64_t limit) {
  const Json* alias = j.find(generic);
  if (alias == nullptr || alias->is_null()) return size_key(j, key, limit);
  const int value = size_key(j, generic, limit);
  const Json* own = j.find(key);
  LLMFT_REQUIRE(own == nullptr || own->is_null() || (own->is_number() && own->as_number() == value),
                j.source() << ": key \"" << key << "\" is " << own->dump() << " but \"" << generic
                           << "\", which GPT2Config reads as " << key << ", is " << value
                           << "; keep one of them");
  return value;
}

std::string architecture(ConfigObject& j) {
  const Json* archs = j.find("architectures");
  const Json* type = j.find("model_type");
  if (archs && archs->is_array() && !archs->as_array().empty() &&
      archs->as_array()[0].is_string()) {
    return archs->as_array()[0].as_string();
  }
  if (type && type->is_string()) return type->as_string();
  return "";
}

float float_key(ConfigObject& j, const std::string& key, float fallback) {
  const Json* v = j.find(key);
  if (v == nullptr || v->is_null()) return fallback;
  LLMFT_REQUIRE(v->is_number(), j.source() << ": key \"" << key << "\" must be a number");
  const double value = v->as_number();
  LLMFT_REQUIRE(std::isfinite(value) && std::fabs(value) <= std::numeric_limits<float>::max(),
                j.source() << ": key \"" << key << "\" is " << v->dump()
                           << "; it must be a finite number that fits a float32");
  return static_cast<float>(value);
}

bool bool_key(ConfigObject& j, const std::string& key, bool fallback) {
  const Json* v = j.find(key);
  if (v == nullptr || v->is_null()) return fallback;
  LLMFT_REQUIRE(v->is_bool(), j.source() << ": key \"" << key << "\" must be true or false");
  return v->as_bool();
}

// bos_token_id (one id) and eos_token_id (one id or a list, as Llama 3.1's instruct
// models write), kept so that the exported config names them again.
void read_special_tokens(ConfigObject& j, ModelConfig& c) {
  if (const Json* bos = j.find("bos_token_id"); bos && !bos->is_null()) {
    LLMFT_REQUIRE(bos->is_number(), j.source() << ": bos_token_id must be a token id or null");
    c.bos_token_id = bos->as_int();
  }
  const Json* eos = j.find("eos_token_id");
  if (eos == nullptr || eos->is_null()) return;
  if (eos->is_number()) {
    c.eos_token_ids = {eos->as_int()};
    return;
  }
  LLMFT_REQUIRE(eos->is_array(), j.source() << ": eos_token_id must be a token id, a list or null");
  for (const Json& id : eos->as_array()) {
    LLMFT_REQUIRE(id.is_number(), j.source() << ": eos_token_id lists token ids");
    c.eos_token_ids.push_back(id.as_int());
  }
}

// transformers 4 pruned a config's pruned_heads at load (GPT-2; LLaMA cannot prune).
void refuse_pruned_heads(ConfigObject& j) {
  const Json* pruned = j.find("pruned_heads");
  LLMFT_REQUIRE(pruned == nullptr || pruned->is_null() ||
                    (pruned->is_object() && pruned->as_object().empty()),
                j.source() << ": pruned_heads " << pruned->dump()
                           << " is not supported: llmft's attention keeps every head; remove "
                              "the key or set it to {}");
}

// GPT2Config keys used: vocab_size, n_positions, n_embd, n_layer, n_head (or their
// generic names), n_inner, activation_function, layer_norm_epsilon, tie_word_embeddings
// (must be true), reorder_and_upcast_attn (computes the same scores in float32, which
// llmft's attention always accumulates in), bos/eos_token_id (kept); refused:
// scale_attn_weights false, scale_attn_by_inverse_layer_idx true, add_cross_attention
// true, pruned_heads; ignored: kIgnoredByGpt2 and kIgnoredByEveryModel.
ModelConfig parse_gpt2(ConfigObject& j) {
  const std::string& source = j.source();
  ModelConfig c;
  c.name = source;
  c.family = ModelFamily::gpt2;
  c.vocab_size = size_key(j, "vocab_size", ModelLimits::vocab_size);
  c.max_seq_len =
      gpt2_size_key(j, "n_positions", "max_position_embeddings", ModelLimits::positions);
  c.hidden = gpt2_size_key(j, "n_embd", "hidden_size", ModelLimits::hidden);
  c.n_layer = gpt2_size_key(j, "n_layer", "num_hidden_layers", ModelLimits::layers);
  c.n_head = gpt2_size_key(j, "n_head", "num_attention_heads", ModelLimits::heads);
  c.n_kv_head = c.n_head;
  const Json* inner = j.find("n_inner");
  c.intermediate =
      inner && !inner->is_null() ? size_key(j, "n_inner", ModelLimits::intermediate) : 4 * c.hidden;
  c.norm_eps = float_key(j, "layer_norm_epsilon", 1e-5f);
  if (const Json* act = j.find("activation_function")) {
    LLMFT_REQUIRE(act->is_string() &&
                      (act->as_string() == "gelu_new" || act->as_string() == "gelu_pytorch_tanh"),
                  source << ": activation_function must be gelu_new (the tanh GELU)");
  }
  LLMFT_REQUIRE(bool_key(j, "tie_word_embeddings", true),
                source << ": GPT-2 models must tie their word embeddings");
  LLMFT_REQUIRE(bool_key(j, "scale_attn_weights", true),
                source << ": scale_attn_weights false (attention scores not divided by "
                          "sqrt(head size)) is not supported; llmft always scales them: "
                          "remove the key or set it to true");
  LLMFT_REQUIRE(!bool_key(j, "scale_attn_by_inverse_layer_idx", false),
                source << ": scale_attn_by_inverse_layer_idx true (scores of layer i divided "
                          "by i + 1) is not supported; remove the key or set it to false");
  LLMFT_REQUIRE(!bool_key(j, "add_cross_attention", false),
                source << ": add_cross_attention true (an encoder-decoder's cross-attention "
                          "layers) is not supported; llmft trains decoder-only models");
  bool_key(j, "reorder_and_upcast_attn", false);  // harmless, but must be a boolean
  refuse_pruned_heads(j);
  read_special_tokens(j, c);
  j.refuse_unknown_keys(ignored_keys(kIgnoredByGpt2), "a GPT2LMHeadModel");
  return c;
}

double number_key(ConfigObject& j, const std::string& key) {
  const Json* v = j.find(key);
  LLMFT_REQUIRE(v != nullptr && v->is_number() && std::isfinite(v->as_number()),
                j.source() << ": key \"" << key << "\" must be a finite number");
  return v->as_number();
}

// The rope type of a rope_scaling or rope_parameters object: rope_type, or the older
// "type" (transformers 4 wrote both when it read a "type"), "default" when neither.
std::string rope_type(ConfigObject& rope) {
  const Json* type = rope.find("rope_type");
  const Json* legacy = rope.find("type");
  const bool has_type = type != nullptr && !type->is_null();
  const bool has_legacy = legacy != nullptr && !legacy->is_null();
  if (!has_type && !has_legacy) return "default";
  LLMFT_REQUIRE(!has_type || !has_legacy || type->dump() == legacy->dump(),
                rope.source() << ": rope_type " << type->dump() << " and type " << legacy->dump()
                              << " disagree; keep rope_type");
  const Json& name = has_type ? *type : *legacy;
  LLMFT_REQUIRE(name.is_string(), rope.source() << ": rope_type must be a string");
  return name.as_string();
}

// The rope scaling of rope_scaling (transformers 4) or rope_parameters (transformers 5,
// which also holds rope_theta): rope_type (or the older "type") default, linear or llama3.
// Its keys are used or refused: a key the type does not read is an error, as a misspelt
// one would otherwise change the rotation silently.
void read_rope(ConfigObject& j, ModelConfig& c) {
  const std::string& source = j.source();
  c.rope_theta = float_key(j, "rope_theta", 10000.0f);
  const Json* parameters = j.find("rope_parameters");
  const Json* scaling = j.find("rope_scaling");
  const bool has_parameters = parameters && !parameters->is_null();
  const bool has_scaling = scaling && !scaling->is_null();
  LLMFT_REQUIRE(!(has_parameters && has_scaling),
                source << ": both rope_parameters and rope_scaling are given; keep one");
  const std::string key = has_parameters ? "rope_parameters" : "rope_scaling";
  const Json empty = Json::object({});
  const Json& rope_json = has_parameters ? *parameters : has_scaling ? *scaling : empty;
  LLMFT_REQUIRE(rope_json.is_object(), source << ": " << key << " must be an object or null");
  ConfigObject rope(rope_json, source + " " + key);
  const float partial =
      float_key(rope, "partial_rotary_factor", float_key(j, "partial_rotary_factor", 1.0f));
  LLMFT_REQUIRE(partial == 1.0f, source << ": partial_rotary_factor " << partial
                                        << " is not supported; llmft rotates whole heads (1.0)");
  if (!has_parameters && !has_scaling) return;
  c.rope_theta = float_key(rope, "rope_theta", c.rope_theta);
  const std::string name = rope_type(rope);
  RopeScaling& s = c.rope_scaling;
  if (name == "default") {
    s.type = RopeType::unscaled;
  } else if (name == "linear") {
    s.type = RopeType::linear;
    s.factor = number_key(rope, "factor");
  } else if (name == "llama3") {
    s.type = RopeType::llama3;
    s.factor = number_key(rope, "factor");
    s.low_freq_factor = number_key(rope, "low_freq_factor");
    s.high_freq_factor = number_key(rope, "high_freq_factor");
    // As transformers: the config's own original_max_position_embeddings first, then the
    // scaling's, then the context.
    const Json* outer = j.find("original_max_position_embeddings");
    const Json* inner = rope.find("original_max_position_embeddings");
    if (outer && !outer->is_null()) {
      s.original_max_positions =
          size_key(j, "original_max_position_embeddings", ModelLimits::positions);
    } else if (inner && !inner->is_null()) {
      s.original_max_positions =
          size_key(rope, "original_max_position_embeddings", ModelLimits::positions);
    } else {
      s.original_max_positions = c.max_seq_len;
    }
  } else {
    LLMFT_FAIL(rope.source() << ": rope type \"" << name
                             << "\" is not supported; supported: default, linear, llama3");
  }
  rope.refuse_unknown_keys({}, "rope type " + name);
}

// LlamaConfig keys used: vocab_size, hidden_size, intermediate_size, num_hidden_layers,
// num_attention_heads, num_key_value_heads, max_position_embeddings, rms_norm_eps,
// rope_theta, rope_scaling / rope_parameters (default, linear, llama3),
// partial_rotary_factor (must be 1), tie_word_embeddings, hidden_act (must be silu),
// head_dim (must equal hidden_size / num_attention_heads), bos/eos_token_id (kept);
// refused: attention_bias / mlp_bias true, pad_token_id other than null (transformers
// never updates that embedding row, llmft trains every row), pruned_heads; ignored:
// kIgnoredByLlama and kIgnoredByEveryModel.
ModelConfig parse_llama(ConfigObject& j) {
  const std::string& source = j.source();
  ModelConfig c;
  c.name = source;
  c.family = ModelFamily::llama;
  c.vocab_size = size_key(j, "vocab_size", ModelLimits::vocab_size);
  c.max_seq_len = size_key(j, "max_position_embeddings", ModelLimits::positions);
  c.hidden = size_key(j, "hidden_size", ModelLimits::hidden);
  c.n_layer = size_key(j, "num_hidden_layers", ModelLimits::layers);
  c.n_head = size_key(j, "num_attention_heads", ModelLimits::heads);
  const Json* kv = j.find("num_key_value_heads");
  c.n_kv_head =
      kv && !kv->is_null() ? size_key(j, "num_key_value_heads", ModelLimits::heads) : c.n_head;
  c.intermediate = size_key(j, "intermediate_size", ModelLimits::intermediate);
  c.norm_eps = float_key(j, "rms_norm_eps", 1e-6f);
  read_rope(j, c);
  c.tie_embeddings = bool_key(j, "tie_word_embeddings", false);
  if (const Json* act = j.find("hidden_act")) {
    LLMFT_REQUIRE(act->is_string() && act->as_string() == "silu",
                  source << ": hidden_act must be silu (SwiGLU)");
  }
  LLMFT_REQUIRE(!bool_key(j, "attention_bias", false) && !bool_key(j, "mlp_bias", false),
                source << ": attention_bias and mlp_bias are not supported (LLaMA has no biases)");
  if (const Json* head_dim = j.find("head_dim"); head_dim && !head_dim->is_null()) {
    LLMFT_REQUIRE(
        c.n_head > 0 && size_key(j, "head_dim", ModelLimits::hidden) * c.n_head == c.hidden,
        source << ": head_dim must equal hidden_size / num_attention_heads");
  }
  if (const Json* pad = j.find("pad_token_id"); pad && !pad->is_null()) {
    LLMFT_FAIL(source << ": pad_token_id " << pad->dump()
                      << " is not supported: transformers never updates that embedding row "
                         "(padding_idx) and llmft trains every row; set it to null");
  }
  refuse_pruned_heads(j);
  read_special_tokens(j, c);
  j.refuse_unknown_keys(ignored_keys(kIgnoredByLlama), "a LlamaForCausalLM");
  return c;
}

}  // namespace

ModelConfig parse_hf_config(const Json& j, const std::string& source) {
  LLMFT_REQUIRE(j.is_object(), source << ": a config must be a JSON object");
  ConfigObject keys(j, source);
  const std::string arch = architecture(keys);
  ModelConfig c;
  if (arch == "GPT2LMHeadModel" || arch == "gpt2") {
    c = parse_gpt2(keys);
  } else if (arch == "LlamaForCausalLM" || arch == "llama") {
    c = parse_llama(keys);
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
