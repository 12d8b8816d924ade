#include "io/tokenizer_config.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "core/error.h"

namespace llmft::io {
namespace {

namespace fs = std::filesystem;

// Names llmft looks for, in this order, when nothing says which token ends a document.
const std::vector<std::string>& end_of_text_names() {
  static const std::vector<std::string> names = {"<|endoftext|>", "</s>", "<|end_of_text|>"};
  return names;
}

// What the template's special tokens are: the id before "$A" and after it, if any.
struct TemplateTokens {
  std::optional<int32_t> before, after;
};

// The one id of the template's special token `name`, from its "special_tokens" map.
int32_t template_token_id(const Json& processor, const std::string& name,
                          const std::string& where) {
  const Json* entry = nullptr;
  if (const Json* tokens = processor.find("special_tokens")) entry = tokens->find(name);
  const Json* ids = entry != nullptr ? entry->find("ids") : nullptr;
  LLMFT_REQUIRE(ids != nullptr && ids->is_array() && ids->as_array().size() == 1,
                where << ": special token " << Json::quote(name) << " needs one id in "
                      << "special_tokens; llmft reads templates of single tokens");
  return static_cast<int32_t>(ids->as_array()[0].as_int());
}

// "[SPECIAL] $A [SPECIAL]" of TemplateProcessing's "single".
TemplateTokens read_template(const Json& processor, const std::string& path) {
  const std::string where = "tokenizer file " + path + ": post_processor TemplateProcessing";
  const Json* single = processor.find("single");
  LLMFT_REQUIRE(single != nullptr && single->is_array(), where << " has no \"single\" array");
  TemplateTokens tokens;
  bool seen_sequence = false;
  for (const Json& item : single->as_array()) {
    if (const Json* sequence = item.find("Sequence")) {
      const Json* id = sequence->find("id");
      LLMFT_REQUIRE(!seen_sequence && id != nullptr && id->is_string() && id->as_string() == "A",
                    where << ": \"single\" must hold $A once, got " << single->dump());
      seen_sequence = true;
      continue;
    }
    const Json* special = item.find("SpecialToken");
    const Json* name = special != nullptr ? special->find("id") : nullptr;
    LLMFT_REQUIRE(name != nullptr && name->is_string(),
                  where << ": \"single\" item " << item.dump() << " is not supported");
    std::optional<int32_t>& slot = seen_sequence ? tokens.after : tokens.before;
    LLMFT_REQUIRE(!slot.has_value(), where << ": \"single\" " << single->dump()
                                           << " is not supported; llmft reads at most one "
                                           << "special token before $A and one after");
    slot = template_token_id(processor, name->as_string(), where);
  }
  LLMFT_REQUIRE(seen_sequence, where << ": \"single\" has no $A");
  return tokens;
}

// A token of tokenizer_config.json: a string, or an object with its "content".
std::optional<std::string> config_token(const Json& config, const char* key) {
  const Json* value = config.find(key);
  if (value == nullptr || value->is_null()) return std::nullopt;
  if (value->is_string()) return value->as_string();
  const Json* content = value->find("content");
  if (content != nullptr && content->is_string()) return content->as_string();
  return std::nullopt;
}

std::optional<bool> config_flag(const Json& config, const char* key, const std::string& path) {
  const Json* value = config.find(key);
  if (value == nullptr || value->is_null()) return std::nullopt;
  LLMFT_REQUIRE(value->is_bool(), "tokenizer config " << path << ": " << key
                                                      << " must be true or false, not "
                                                      << value->dump());
  return value->as_bool();
}

Json read_config(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  LLMFT_REQUIRE(in, "cannot read tokenizer config " << path << ": check its permissions");
  std::stringstream text;
  text << in.rdbuf();
  try {
    return Json::parse(text.str());
  } catch (const Error& e) {
    LLMFT_FAIL("tokenizer config " << path << ": " << e.what());
  }
}

int32_t require_token(const TokenIdLookup& token_id, const std::string& text,
                      const std::string& origin, const char* role) {
  const std::optional<int32_t> id = token_id(text);
  LLMFT_REQUIRE(id.has_value(), origin << ": " << role << " " << Json::quote(text)
                                       << " is not a token of the tokenizer");
  return *id;
}

// The first of the usual end-of-text names the tokenizer has.
int32_t default_end_of_document(const std::string& origin, const TokenIdLookup& token_id) {
  for (const std::string& name : end_of_text_names()) {
    if (const std::optional<int32_t> id = token_id(name)) return *id;
  }
  LLMFT_FAIL(origin << ": the tokenizer has no end-of-text token (<|endoftext|>, </s> or "
                    << "<|end_of_text|>) and no tokenizer_config.json beside it names an "
                    << "eos_token; llmft ends each document with it");
}

// Applies tokenizer_config.json's add_*_token flag: true adds the config's token (or
// the template's), false adds none.
void apply_flag(std::optional<bool> add, const std::optional<std::string>& name,
                std::optional<int32_t>& slot, const TokenIdLookup& token_id,
                const std::string& config_path, const char* flag) {
  if (!add.has_value()) return;
  if (!*add) {
    slot.reset();
    return;
  }
  if (name.has_value()) {
    slot = require_token(token_id, *name, "tokenizer config " + config_path, flag);
  }
  LLMFT_REQUIRE(slot.has_value(), "tokenizer config " << config_path << " sets " << flag
                                                      << " but names no token for it");
}

}  // namespace

SpecialTokens read_special_tokens(const Json* post_processor_template, const std::string& path,
                                  const TokenIdLookup& token_id) {
  SpecialTokens special;
  if (post_processor_template != nullptr) {
    const TemplateTokens tokens = read_template(*post_processor_template, path);
    special.bos = tokens.before;
    special.eos = tokens.after;
  }
  const std::string config_path = (fs::path(path).parent_path() / "tokenizer_config.json").string();
  std::optional<std::string> eos_name;
  if (fs::exists(config_path)) {
    const Json config = read_config(config_path);
    eos_name = config_token(config, "eos_token");
    apply_flag(config_flag(config, "add_bos_token", config_path), config_token(config, "bos_token"),
               special.bos, token_id, config_path, "add_bos_token");
    apply_flag(config_flag(config, "add_eos_token", config_path), eos_name, special.eos, token_id,
               config_path, "add_eos_token");
    if (eos_name.has_value()) {
      special.end_of_document =
          require_token(token_id, *eos_name, "tokenizer config " + config_path, "eos_token");
      return special;
    }
  }
  special.end_of_document = special.eos.has_value()
                                ? *special.eos
                                : default_end_of_document("tokenizer file " + path, token_id);
  return special;
}

SpecialTokens gpt2_special_tokens(const std::string& origin, const TokenIdLookup& token_id) {
  SpecialTokens special;
  const std::optional<int32_t> id = token_id(end_of_text_names()[0]);
  LLMFT_REQUIRE(id.has_value(), origin << ": the tokenizer has no end-of-text token "
                                       << end_of_text_names()[0]
                                       << ", which llmft puts between documents");
  special.end_of_document = *id;
  return special;
}

}  // namespace llmft::io
