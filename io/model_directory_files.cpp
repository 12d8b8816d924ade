// The tokenizer files and generation_config.json of a model directory
// (io/model_directory_files.h).
#include "io/model_directory_files.h"

#include <filesystem>
#include <optional>

#include "core/error.h"
#include "io/bpe_files.h"
#include "io/chat_template.h"
#include "io/end_of_turn.h"
#include "io/json.h"
#include "io/text_file.h"
#include "io/tokenizer.h"

namespace llmft::io {

namespace {

namespace fs = std::filesystem;

std::string without_bpe_prefix(const std::string& spec) {
  const std::string prefix = "bpe:";
  return spec.rfind(prefix, 0) == 0 ? spec.substr(prefix.size()) : spec;
}

// The text of token `id` (a special token: an added token, else a vocabulary entry).
std::optional<std::string> token_text(const BpeFiles& bpe, int64_t id) {
  for (const auto& [text, token] : bpe.added_tokens) {
    if (token == id) return text;
  }
  for (const auto& [text, token] : bpe.vocab) {
    if (token == id) return text;
  }
  return std::nullopt;
}

void set_missing_token(Json& tokenizer_config, const char* key, const BpeFiles& bpe,
                       std::optional<int32_t> id) {
  const Json* present = tokenizer_config.find(key);
  if (!id || (present != nullptr && !present->is_null())) return;
  if (const std::optional<std::string> text = token_text(bpe, *id)) {
    tokenizer_config.set(key, Json::string(*text));
  }
}

// tokenizer_config.json as the tokenizer's directory has it (or a minimal one that tells
// transformers to read tokenizer.json), with the chat template in use (ChatTemplate::find's)
// folded in and the bos and eos tokens named.
Json tokenizer_config_json(const std::string& dir, const std::optional<ChatTemplate>& chat_template,
                           const BpeFiles& bpe, const Tokenizer& tokenizer) {
  const fs::path source = fs::path(dir) / "tokenizer_config.json";
  Json config = Json::object({{"tokenizer_class", Json::string("PreTrainedTokenizerFast")}});
  if (fs::exists(source)) {
    try {
      config = Json::parse(read_text_file(source.string(), "tokenizer config"));
    } catch (const Error& e) {
      LLMFT_FAIL("tokenizer config " << source.string() << ": " << e.what());
    }
    LLMFT_REQUIRE(config.is_object(),
                  "tokenizer config " << source.string() << " must hold a JSON object");
  }
  if (chat_template) config.set("chat_template", Json::string(chat_template->text()));
  set_missing_token(config, "bos_token", bpe, tokenizer.bos_token());
  set_missing_token(config, "eos_token", bpe, tokenizer.eot_token());
  return config;
}

}  // namespace

std::string tokenizer_beside(const std::string& weights) {
  if (weights.empty()) return "";
  const std::string dir = tokenizer_directory("bpe:" + weights);
  for (const char* name : {"tokenizer.json", "vocab.json"}) {
    if (fs::exists(fs::path(dir) / name)) return dir;
  }
  return "";
}

GenerationConfig generation_settings(const ModelConfig& config, const std::string& tokenizer_dir,
                                     int64_t end_of_text, int64_t end_of_turn) {
  GenerationConfig settings;
  settings.bos_token_id = config.bos_token_id;
  for (int64_t id : config.eos_token_ids) settings.add_eos(id);
  if (!tokenizer_dir.empty()) {
    const GenerationConfig source = read_generation_config(tokenizer_dir);
    if (!settings.bos_token_id) settings.bos_token_id = source.bos_token_id;
    for (int64_t id : source.eos_token_ids) settings.add_eos(id);
    settings.pad_token_id = source.pad_token_id;
  }
  if (end_of_text >= 0) settings.add_eos(end_of_text);
  if (end_of_turn >= 0) settings.add_eos(end_of_turn);
  if (!settings.pad_token_id && !settings.eos_token_ids.empty()) {
    settings.pad_token_id = settings.eos_token_ids[0];
  }
  return settings;
}

ModelDirectoryFiles model_directory_files(const ModelConfig& config, const std::string& tokenizer,
                                          const std::string& chat_template_file) {
  ModelDirectoryFiles out;
  const auto add_generation_config = [&out](const GenerationConfig& settings) {
    out.files.emplace_back("generation_config.json",
                           generation_config_json(settings).dump() + "\n");
  };
  const std::string path = without_bpe_prefix(tokenizer);
  if (path.empty() || path == "byte") {
    LLMFT_REQUIRE(chat_template_file.empty(),
                  "--chat-template " << chat_template_file
                                     << " needs a tokenizer with files (--tokenizer PATH): its "
                                        "tokenizer_config.json carries the template");
    int64_t end_of_text = -1;
    if (path == "byte") {
      const std::unique_ptr<Tokenizer> byte = make_tokenizer("byte");
      LLMFT_REQUIRE(byte->vocab_size() == config.vocab_size,
                    "--tokenizer byte has a vocabulary of "
                        << byte->vocab_size() << " but the model has " << config.vocab_size
                        << "; pass the model's tokenizer");
      end_of_text = byte->eot_token();
    }
    add_generation_config(generation_settings(config, "", end_of_text, -1));
    return out;
  }
  const BpeFiles bpe = read_bpe_files(path);
  const std::unique_ptr<Tokenizer> tok = make_tokenizer("bpe:" + path);
  LLMFT_REQUIRE(tok->vocab_size() == config.vocab_size,
                "tokenizer " << path << " has a vocabulary of " << tok->vocab_size()
                             << " but the model has " << config.vocab_size
                             << "; pass the tokenizer the model was trained with");
  out.tokenizer_dir = tokenizer_directory("bpe:" + path);
  const fs::path dir(out.tokenizer_dir);
  const std::string vocabulary_file =
      fs::is_directory(path)
          ? (dir / (fs::exists(dir / "tokenizer.json") ? "tokenizer.json" : "vocab.json")).string()
          : path;
  const auto copy = [&out](const std::string& from, const char* name) {
    out.files.emplace_back(name, read_text_file(from, "tokenizer file"));
  };
  if (bpe.merges_in_json) {
    copy(vocabulary_file, "tokenizer.json");
  } else {
    copy(vocabulary_file, "vocab.json");
    copy(bpe.merges_file, "merges.txt");
  }
  if (fs::exists(dir / "special_tokens_map.json")) {
    copy((dir / "special_tokens_map.json").string(), "special_tokens_map.json");
  }
  const std::optional<ChatTemplate> chat_template =
      ChatTemplate::find(out.tokenizer_dir, chat_template_file);
  out.files.emplace_back(
      "tokenizer_config.json",
      tokenizer_config_json(out.tokenizer_dir, chat_template, bpe, *tok).dump() + "\n");
  const std::optional<int32_t> end_of_turn =
      chat_template ? end_of_turn_token(*chat_template, bpe.added_tokens) : std::nullopt;
  add_generation_config(
      generation_settings(config, out.tokenizer_dir, tok->eot_token(), end_of_turn.value_or(-1)));
  return out;
}

const std::vector<std::string>& tokenizer_file_names() {
  static const std::vector<std::string> names = {"tokenizer.json", "vocab.json", "merges.txt",
                                                 "special_tokens_map.json",
                                                 "tokenizer_config.json"};
  return names;
}

const std::vector<std::string>& weight_description_file_names() {
  static const std::vector<std::string> names = {"generation_config.json", "run_record.json"};
  return names;
}

}  // namespace llmft::io
