// What a model directory holds besides config.json and the weights, so that transformers'
// AutoTokenizer, AutoModelForCausalLM and pipeline("text-generation") use it as it is:
// the tokenizer's files (tokenizer.json, or vocab.json + merges.txt; special_tokens_map.json;
// tokenizer_config.json carrying the chat template) and generation_config.json (bos, eos
// and pad ids, the eos ids including the chat template's end-of-turn token).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/model_config.h"
#include "io/generation_config.h"

namespace llmft::io {

struct ModelDirectoryFiles {
  std::vector<std::pair<std::string, std::string>> files;  // file name, contents
  std::string tokenizer_dir;  // where the tokenizer files came from; "" when none
};

// The directory of the tokenizer files beside a model's weights (`weights`: a Hugging Face
// directory or a file in one), or "" when there are none there (or `weights` is "").
std::string tokenizer_beside(const std::string& weights);

// The generation settings of a model: config.json's bos/eos ids, then those of
// generation_config.json in `tokenizer_dir` (when not ""), the tokenizer's end-of-text
// token (`end_of_text`, when >= 0) and `end_of_turn` (when >= 0); pad from the
// generation_config.json there, else the first eos id.
GenerationConfig generation_settings(const ModelConfig& config, const std::string& tokenizer_dir,
                                     int64_t end_of_text, int64_t end_of_turn);

// The files for a model of `config` whose tokenizer is `tokenizer`: "" (none known: only
// generation_config.json), "byte" (llmft's byte tokenizer, which has no files), or the
// path of its tokenizer.json, vocab.json or directory (optionally "bpe:PATH").
// `chat_template_file` (--chat-template, may be "") or else a chat_template.jinja beside
// the tokenizer is folded into tokenizer_config.json as its "chat_template"; the
// template's end-of-turn token joins the eos ids. Throws llmft::Error naming the file
// when the tokenizer cannot be read, its vocabulary is not the model's, a template is
// given for a tokenizer without files, or the template cannot be rendered.
ModelDirectoryFiles model_directory_files(const ModelConfig& config, const std::string& tokenizer,
                                          const std::string& chat_template_file);

// The names of the files model_directory_files may write, so that a writer can remove what
// an earlier save left and this one did not write: the tokenizer's, and those describing
// the weights themselves (generation_config.json and the run record, launch/run_record.h).
const std::vector<std::string>& tokenizer_file_names();
const std::vector<std::string>& weight_description_file_names();

}  // namespace llmft::io
