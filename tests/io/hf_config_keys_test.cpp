// Every key of a config.json is used, ignored by name (transformers' keys that do not
// change the computation) or refused naming it; a key llmft does not know is refused with
// the nearest known key as a suggestion, while the configs transformers and the Hub write
// still load.
#include <doctest/doctest.h>

#include <string>

#include "core/error.h"
#include "io/hf_config.h"
#include "io/json.h"

using namespace llmft;

namespace {

ModelConfig parse(const std::string& text) {
  return io::parse_hf_config(io::Json::parse(text), "config.json");
}

std::string error_of(const std::string& text) {
  try {
    parse(text);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

const std::string kGpt2 = R"("architectures": ["GPT2LMHeadModel"], "vocab_size": 101,
  "n_positions": 16, "n_embd": 48, "n_layer": 2, "n_head": 3)";
const std::string kLlama = R"("architectures": ["LlamaForCausalLM"], "vocab_size": 97,
  "hidden_size": 48, "intermediate_size": 72, "num_hidden_layers": 2,
  "num_attention_heads": 6, "num_key_value_heads": 2, "max_position_embeddings": 64)";

std::string gpt2_with(const std::string& extra) {
  return "{" + kGpt2 + ", " + extra + "}";
}
std::string llama_with(const std::string& extra) {
  return "{" + kLlama + ", " + extra + "}";
}

}  // namespace

TEST_CASE("a key nobody knows is refused by name, with the nearest known key") {
  CHECK(error_of(gpt2_with(R"("frobnicate": 3)")) ==
        "config.json: unknown key \"frobnicate\": not a key that llmft reads for a "
        "GPT2LMHeadModel or knows transformers to ignore there; correct or remove it");
  CHECK(error_of(gpt2_with(R"("tie_word_embedding": true)")) ==
        "config.json: unknown key \"tie_word_embedding\" (did you mean "
        "\"tie_word_embeddings\"?): not a key that llmft reads for a GPT2LMHeadModel or knows "
        "transformers to ignore there; correct or remove it");
  CHECK(error_of(llama_with(R"("rope_scalling": {"rope_type": "linear", "factor": 2.0})"))
            .find("config.json: unknown key \"rope_scalling\" (did you mean \"rope_scaling\"?): "
                  "not a key that llmft reads for a LlamaForCausalLM") == 0);
  // Ignored keys are suggested too.
  CHECK(error_of(gpt2_with(R"("resid_pdrp": 0.1)")).find("(did you mean \"resid_pdrop\"?)") !=
        std::string::npos);
  // Keys of the other family, or of options llmft does not implement.
  CHECK(error_of(gpt2_with(R"("rope_theta": 10000)")).find("unknown key \"rope_theta\"") !=
        std::string::npos);
  CHECK(error_of(llama_with(R"("n_ctx": 64)")).find("unknown key \"n_ctx\"") != std::string::npos);
  CHECK(error_of(llama_with(R"("sliding_window": 32)")).find("unknown key \"sliding_window\"") !=
        std::string::npos);
  CHECK(error_of(llama_with(R"("quantization_config": {"quant_method": "bitsandbytes"})"))
            .find("unknown key \"quantization_config\"") != std::string::npos);
}

TEST_CASE("a rope scaling's keys are used or refused too") {
  // A misspelt original_max_position_embeddings fell back to the context silently.
  CHECK(error_of(llama_with(R"("rope_scaling": {"rope_type": "llama3", "factor": 8.0,
            "low_freq_factor": 1.0, "high_freq_factor": 4.0,
            "original_max_position_embedding": 32})")) ==
        "config.json rope_scaling: unknown key \"original_max_position_embedding\" (did you mean "
        "\"original_max_position_embeddings\"?): not a key that llmft reads for rope type llama3 "
        "or knows transformers to ignore there; correct or remove it");
  CHECK(error_of(llama_with(R"("rope_scaling": {"rope_type": "linear", "factr": 2.0})"))
            .find("\"factor\" must be a finite number") != std::string::npos);
  CHECK(error_of(llama_with(R"("rope_parameters": {"rope_type": "default", "factor": 2.0})"))
            .find("config.json rope_parameters: unknown key \"factor\"") == 0);
  CHECK(error_of(llama_with(R"("rope_scaling": {"rope_type": "linear", "type": "dynamic",
            "factor": 2.0})"))
            .find("rope_type \"linear\" and type \"dynamic\" disagree") != std::string::npos);
  // transformers 4 wrote "type" beside the rope_type it read it as.
  CHECK(parse(llama_with(R"("rope_scaling": {"rope_type": "linear", "type": "linear",
            "factor": 2.0})"))
            .rope_scaling.factor == 2.0);
}

TEST_CASE("configs transformers and the Hub write load, their other keys ignored") {
  // openai-community/gpt2-medium as published, with OpenAI GPT's n_special and
  // predict_special_tokens and transformers 4.6's gradient_checkpointing.
  const ModelConfig medium = parse(R"({"activation_function": "gelu_new",
    "architectures": ["GPT2LMHeadModel"], "attn_pdrop": 0.1, "bos_token_id": 50256,
    "embd_pdrop": 0.1, "eos_token_id": 50256, "gradient_checkpointing": false,
    "initializer_range": 0.02, "layer_norm_epsilon": 1e-05, "model_type": "gpt2",
    "n_ctx": 1024, "n_embd": 1024, "n_head": 16, "n_inner": null, "n_layer": 24,
    "n_positions": 1024, "n_special": 0, "predict_special_tokens": true,
    "reorder_and_upcast_attn": false, "resid_pdrop": 0.1,
    "scale_attn_by_inverse_layer_idx": false, "scale_attn_weights": true,
    "summary_activation": null, "summary_first_dropout": 0.1, "summary_proj_to_labels": true,
    "summary_type": "cls_index", "summary_use_proj": true,
    "task_specific_params": {"text-generation": {"do_sample": true, "max_length": 50}},
    "transformers_version": "4.12.5", "use_cache": true, "vocab_size": 50257})");
  CHECK(parameter_count(medium) == parameter_count(preset_config("gpt2-medium")));
  // A config written whole by transformers 2-4 (to_dict, not the diff): every
  // PretrainedConfig key, output_past, pruned_heads {} and the generation defaults.
  CHECK_NOTHROW(parse(gpt2_with(R"("finetuning_task": null, "id2label": {"0": "LABEL_0"},
    "is_decoder": false, "label2id": {"LABEL_0": 0}, "num_labels": 1, "_num_labels": 1,
    "output_attentions": false, "output_hidden_states": false, "output_past": true,
    "pruned_heads": {}, "torchscript": false, "use_bfloat16": false, "is_encoder_decoder": false,
    "tie_encoder_decoder": false, "chunk_size_feed_forward": 0, "max_length": 20,
    "min_length": 0, "do_sample": false, "num_beams": 1, "temperature": 1.0, "top_k": 50,
    "top_p": 1.0, "repetition_penalty": 1.0, "length_penalty": 1.0, "bad_words_ids": null,
    "no_repeat_ngram_size": 0, "num_return_sequences": 1, "tokenizer_class": null,
    "prefix": null, "pad_token_id": null, "sep_token_id": null,
    "decoder_start_token_id": null, "xla_device": null, "_name_or_path": "gpt2",
    "torch_dtype": "float32", "return_dict": true, "tf_legacy_loss": false,
    "problem_type": null, "_commit_hash": null, "_attn_implementation_autoset": true)")));
  // transformers 5.24's save_pretrained of GPT2LMHeadModel and LlamaForCausalLM.
  CHECK_NOTHROW(parse(gpt2_with(R"("add_cross_attention": false, "attn_pdrop": 0.1,
    "dtype": "float32", "pad_token_id": null, "reorder_and_upcast_attn": false,
    "summary_proj_to_labels": true, "transformers_version": "5.24.0", "use_cache": true)")));
  CHECK_NOTHROW(parse(llama_with(R"("attention_bias": false, "attention_dropout": 0.0,
    "bos_token_id": 1, "dtype": "float32", "eos_token_id": 2, "head_dim": 8,
    "hidden_act": "silu", "initializer_range": 0.02, "mlp_bias": false, "model_type": "llama",
    "pad_token_id": null, "pretraining_tp": 1, "rms_norm_eps": 1e-06,
    "rope_parameters": {"factor": 8.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
      "original_max_position_embeddings": 32, "rope_theta": 10000.0, "rope_type": "llama3"},
    "tie_word_embeddings": false, "transformers_version": "5.24.0", "use_cache": true)")));
  // Llama 2 7B's config, and SmolLM2's with nanotron's keys that transformers ignores.
  CHECK_NOTHROW(parse(llama_with(R"("_name_or_path": "meta-llama/Llama-2-7b-hf",
    "hidden_act": "silu", "initializer_range": 0.02, "model_type": "llama",
    "pretraining_tp": 1, "rms_norm_eps": 1e-05, "rope_scaling": null,
    "tie_word_embeddings": false, "torch_dtype": "float16",
    "transformers_version": "4.31.0.dev0", "use_cache": true)")));
  CHECK_NOTHROW(parse(llama_with(R"("is_llama_config": true, "rope_interleaved": false,
    "rope_theta": 100000, "tie_word_embeddings": true)")));
  // original_max_position_embeddings beside a rope type that does not read it.
  CHECK_NOTHROW(parse(llama_with(R"("original_max_position_embeddings": 32,
    "rope_scaling": {"rope_type": "linear", "factor": 2.0})")));
}

TEST_CASE("GPT2Config's generic names stand for its own, as transformers reads them") {
  const ModelConfig generic = parse(R"({"architectures": ["GPT2LMHeadModel"], "vocab_size": 101,
    "max_position_embeddings": 16, "hidden_size": 48, "num_hidden_layers": 2,
    "num_attention_heads": 3})");
  CHECK(generic.hidden == 48);
  CHECK(generic.n_layer == 2);
  CHECK(generic.n_head == 3);
  CHECK(generic.max_seq_len == 16);
  CHECK(parse(gpt2_with(R"("hidden_size": 48)")).hidden == 48);
  CHECK(error_of(gpt2_with(R"("hidden_size": 64)")) ==
        "config.json: key \"n_embd\" is 48 but \"hidden_size\", which GPT2Config reads as n_embd, "
        "is 64; keep one of them");
}

TEST_CASE("pruned heads are refused: llmft's attention keeps every head") {
  CHECK(error_of(gpt2_with(R"("pruned_heads": {"0": [1]})"))
            .find("config.json: pruned_heads {\"0\":[1]} is not supported") == 0);
  CHECK_NOTHROW(parse(llama_with(R"("pruned_heads": {})")));
}
