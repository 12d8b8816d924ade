#include "io/bpe_files.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string_view>

#include "core/error.h"
#include "io/json.h"

namespace llmft::io {
namespace {

namespace fs = std::filesystem;

std::string read_text_file(const std::string& path, const std::string& what) {
  std::ifstream in(path, std::ios::binary);
  LLMFT_REQUIRE(in, "cannot read " << what << " " << path << ": check the path");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

Json parse_json_file(const std::string& path, const std::string& what) {
  const std::string text = read_text_file(path, what);
  try {
    return Json::parse(text);
  } catch (const Error& e) {
    LLMFT_FAIL(what << " " << path << ": " << e.what());
  }
}

bool ends_with(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

// "a b" -> {"a", "b"}; false unless there is exactly one space with text on both sides.
bool split_merge(std::string_view line, std::string& left, std::string& right) {
  const size_t space = line.find(' ');
  if (space == 0 || space == std::string_view::npos || space + 1 == line.size() ||
      line.find(' ', space + 1) != std::string_view::npos) {
    return false;
  }
  left = line.substr(0, space);
  right = line.substr(space + 1);
  return true;
}

// A token id: an integer from 0 to 2^31 - 2.
int64_t parse_token_id(const Json& id, const std::string& origin, const std::string& text) {
  const bool valid = id.is_number() && id.as_number() >= 0 &&
                     id.as_number() < std::numeric_limits<int32_t>::max() &&
                     id.as_number() == static_cast<double>(static_cast<int64_t>(id.as_number()));
  LLMFT_REQUIRE(valid, origin << ": token " << Json::quote(text) << " has id " << id.dump()
                              << "; ids must be integers from 0 to 2^31 - 2");
  return static_cast<int64_t>(id.as_number());
}

std::vector<std::pair<std::string, int64_t>> parse_vocab(const Json& json,
                                                         const std::string& origin) {
  LLMFT_REQUIRE(json.is_object(), origin << ": the vocabulary must be a JSON object of token -> "
                                         << "id, not " << Json::kind_name(json.kind()));
  std::vector<std::pair<std::string, int64_t>> vocab;
  vocab.reserve(json.as_object().size());
  for (const auto& [text, id] : json.as_object()) {
    vocab.emplace_back(text, parse_token_id(id, origin, text));
  }
  return vocab;
}

// GPT-2's merges.txt: one "LEFT RIGHT" pair per line, lowest rank first, after an optional
// "#version" line.
std::vector<BpeFiles::MergeRule> parse_merges_txt(const std::string& text,
                                                  const std::string& path) {
  std::vector<BpeFiles::MergeRule> merges;
  size_t line_number = 0;
  for (size_t begin = 0; begin < text.size();) {
    const size_t newline = std::min(text.find('\n', begin), text.size());
    std::string_view line(text.data() + begin, newline - begin);
    begin = newline + 1;
    ++line_number;
    if (ends_with(line, "\r")) line.remove_suffix(1);
    if (line_number == 1 && line.substr(0, 8) == "#version") continue;
    BpeFiles::MergeRule rule{"", "", line_number};
    LLMFT_REQUIRE(split_merge(line, rule.left, rule.right),
                  "merges file " << path << " line " << line_number << ": expected two symbols "
                                 << "separated by one space, got \"" << line << "\"");
    merges.push_back(std::move(rule));
  }
  return merges;
}

// NAME-merges.txt for NAME-vocab.json (Megatron's names), else merges.txt beside it.
std::string merges_path_for(const std::string& vocab_path) {
  const fs::path path(vocab_path);
  const std::string file = path.filename().string();
  if (ends_with(file, "-vocab.json")) {
    return (path.parent_path() / (file.substr(0, file.size() - 10) + "merges.txt")).string();
  }
  return (path.parent_path() / "merges.txt").string();
}

BpeFiles read_vocab_and_merges(const Json& vocab, const std::string& vocab_path) {
  BpeFiles files;
  files.vocab_origin = vocab_path;
  files.vocab = parse_vocab(vocab, vocab_path);
  files.merges_file = merges_path_for(vocab_path);
  files.merges = parse_merges_txt(
      read_text_file(files.merges_file, "merges file (beside vocabulary " + vocab_path + ")"),
      files.merges_file);
  for (const auto& [text, id] : files.vocab) {
    if (text == kEndOfTextToken) files.added_tokens.emplace_back(text, id);
  }
  return files;
}

// True for what leaves an option at its default: absent, null, false, 0 or "".
bool is_unset(const Json* value) {
  if (value == nullptr || value->is_null()) return true;
  if (value->is_bool()) return !value->as_bool();
  if (value->is_number()) return value->as_number() == 0;
  return value->is_string() && value->as_string().empty();
}

// The "type" of the tokenizer.json component `key` ("normalizer", "decoder", ...), or ""
// when it is absent or null.
std::string component_type(const Json& root, const char* key, const std::string& path) {
  const Json* component = root.find(key);
  if (component == nullptr || component->is_null()) return "";
  const Json* type = component->find("type");
  LLMFT_REQUIRE(type != nullptr && type->is_string(),
                "tokenizer file " << path << ": " << key << " has no \"type\" string");
  return type->as_string();
}

// Refuses the tokenizer.json options that would make `tokenizers` encode otherwise than
// GPT-2's byte-level BPE, which is all BpeTokenizer implements.
void check_gpt2_pipeline(const Json& root, const std::string& path) {
  const std::string unsupported = "; llmft reads GPT-2-style byte-level BPE tokenizers only";
  const std::string normalizer = component_type(root, "normalizer", path);
  LLMFT_REQUIRE(normalizer.empty(), "tokenizer file " << path << ": normalizer " << normalizer
                                                      << " is not supported" << unsupported);
  const std::string pre_tokenizer = component_type(root, "pre_tokenizer", path);
  LLMFT_REQUIRE(pre_tokenizer == "ByteLevel",
                "tokenizer file " << path << ": pre_tokenizer is "
                                  << (pre_tokenizer.empty() ? "missing" : pre_tokenizer)
                                  << ", expected ByteLevel" << unsupported);
  const Json* use_regex = root.at("pre_tokenizer").find("use_regex");
  LLMFT_REQUIRE(
      use_regex == nullptr || (use_regex->is_bool() && use_regex->as_bool()),
      "tokenizer file " << path << ": pre_tokenizer.use_regex must be true" << unsupported);
  for (const char* key : {"decoder", "post_processor"}) {
    const std::string type = component_type(root, key, path);
    LLMFT_REQUIRE(type.empty() || type == "ByteLevel", "tokenizer file "
                                                           << path << ": " << key << " " << type
                                                           << " is not supported, expected "
                                                           << "ByteLevel" << unsupported);
  }
  const Json& model = root.at("model");
  const Json* type = model.find("type");
  LLMFT_REQUIRE(type == nullptr || (type->is_string() && type->as_string() == "BPE"),
                "tokenizer file " << path << ": model.type is " << type->dump()
                                  << ", expected \"BPE\"" << unsupported);
  for (const char* key : {"dropout", "continuing_subword_prefix", "end_of_word_suffix",
                          "byte_fallback", "ignore_merges"}) {
    LLMFT_REQUIRE(is_unset(model.find(key)),
                  "tokenizer file " << path << ": model." << key << " is " << model.at(key).dump()
                                    << ", which is not supported" << unsupported);
  }
}

std::vector<BpeFiles::MergeRule> parse_json_merges(const Json& merges, const std::string& path) {
  LLMFT_REQUIRE(merges.is_array(), "tokenizer file " << path << ": model.merges must be an array");
  std::vector<BpeFiles::MergeRule> rules;
  rules.reserve(merges.as_array().size());
  for (size_t i = 0; i < merges.as_array().size(); ++i) {
    const Json& merge = merges.as_array()[i];
    BpeFiles::MergeRule rule{"", "", i};
    bool valid = merge.is_string() && split_merge(merge.as_string(), rule.left, rule.right);
    if (merge.is_array() && merge.as_array().size() == 2 && merge.as_array()[0].is_string() &&
        merge.as_array()[1].is_string()) {
      rule.left = merge.as_array()[0].as_string();
      rule.right = merge.as_array()[1].as_string();
      valid = !rule.left.empty() && !rule.right.empty();
    }
    LLMFT_REQUIRE(valid, "tokenizer file " << path << ": model.merges[" << i << "] is "
                                           << merge.dump()
                                           << "; expected \"LEFT RIGHT\" or [\"LEFT\", \"RIGHT\"]");
    rules.push_back(std::move(rule));
  }
  return rules;
}

std::vector<std::pair<std::string, int64_t>> parse_added_tokens(const Json& root,
                                                                const std::string& path) {
  std::vector<std::pair<std::string, int64_t>> added;
  const Json* tokens = root.find("added_tokens");
  if (tokens == nullptr || tokens->is_null()) return added;
  LLMFT_REQUIRE(tokens->is_array(), "tokenizer file " << path << ": added_tokens must be an array");
  for (size_t i = 0; i < tokens->as_array().size(); ++i) {
    const Json& token = tokens->as_array()[i];
    const std::string where =
        "tokenizer file " + path + ": added_tokens[" + std::to_string(i) + "]";
    const Json* content = token.find("content");
    const Json* id = token.find("id");
    LLMFT_REQUIRE(content != nullptr && content->is_string() && !content->as_string().empty() &&
                      id != nullptr,
                  where << " needs a non-empty \"content\" string and an \"id\"");
    for (const char* flag : {"lstrip", "rstrip", "single_word"}) {
      LLMFT_REQUIRE(is_unset(token.find(flag)),
                    where << " (" << Json::quote(content->as_string()) << ") sets " << flag
                          << ", which is not supported: llmft matches added tokens verbatim");
    }
    added.emplace_back(content->as_string(), parse_token_id(*id, where, content->as_string()));
  }
  return added;
}

BpeFiles read_tokenizer_json(const Json& root, const std::string& path) {
  const Json* model = root.find("model");
  LLMFT_REQUIRE(model != nullptr && model->is_object(),
                "tokenizer file " << path << ": expected a \"model\" object, as Hugging Face "
                                  << "tokenizer.json files have");
  check_gpt2_pipeline(root, path);
  BpeFiles files;
  files.vocab_origin = path + ": model.vocab";
  const Json* vocab = model->find("vocab");
  LLMFT_REQUIRE(vocab != nullptr, "tokenizer file " << path << ": model has no \"vocab\"");
  files.vocab = parse_vocab(*vocab, files.vocab_origin);
  const Json* merges = model->find("merges");
  LLMFT_REQUIRE(merges != nullptr, "tokenizer file " << path << ": model has no \"merges\"");
  files.merges = parse_json_merges(*merges, path);
  files.merges_file = path;
  files.merges_in_json = true;
  files.added_tokens = parse_added_tokens(root, path);
  const Json* add_prefix_space = root.at("pre_tokenizer").find("add_prefix_space");
  files.add_prefix_space =
      add_prefix_space != nullptr && add_prefix_space->is_bool() && add_prefix_space->as_bool();
  return files;
}

}  // namespace

std::string BpeFiles::merge_origin(const MergeRule& rule) const {
  std::ostringstream os;
  os << merges_file;
  if (merges_in_json) {
    os << ": model.merges[" << rule.where << "]";
  } else {
    os << " line " << rule.where;
  }
  os << " (\"" << rule.left << " " << rule.right << "\")";
  return os.str();
}

// A tokenizer.json, a vocab.json (told apart by tokenizer.json's "model", which in a
// vocab.json could only be a token with its id), or a directory holding either.
BpeFiles read_bpe_files(const std::string& path) {
  if (fs::is_directory(path)) {
    const fs::path dir(path);
    if (fs::exists(dir / "tokenizer.json")) {
      const std::string file = (dir / "tokenizer.json").string();
      return read_tokenizer_json(parse_json_file(file, "tokenizer file"), file);
    }
    LLMFT_REQUIRE(fs::exists(dir / "vocab.json"),
                  "tokenizer directory " << path << " holds neither tokenizer.json nor "
                                         << "vocab.json + merges.txt");
    const std::string file = (dir / "vocab.json").string();
    return read_vocab_and_merges(parse_json_file(file, "vocabulary file"), file);
  }
  const Json json = parse_json_file(path, "tokenizer file");
  const Json* model = json.find("model");
  if (model != nullptr && !model->is_number()) return read_tokenizer_json(json, path);
  return read_vocab_and_merges(json, path);
}

}  // namespace llmft::io
