#include "io/bpe_files.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>
#include <string_view>

#include "core/error.h"
#include "core/text_affixes.h"
#include "io/gpt2_pretokenizer.h"
#include "io/json.h"
#include "io/llama3_pretokenizer.h"

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

// The id of the token `text` among the vocabulary and the added tokens, or nullopt.
TokenIdLookup lookup_in(const BpeFiles& files) {
  return [&files](const std::string& text) -> std::optional<int32_t> {
    for (const auto& [added, id] : files.added_tokens) {
      if (added == text) return static_cast<int32_t>(id);
    }
    for (const auto& [token, id] : files.vocab) {
      if (token == text) return static_cast<int32_t>(id);
    }
    return std::nullopt;
  };
}

BpeFiles read_vocab_and_merges(const Json& vocab, const std::string& vocab_path) {
  BpeFiles files;
  files.vocab_origin = vocab_path;
  files.vocab = parse_vocab(vocab, vocab_path);
  files.merges_file = merges_path_for(vocab_path);
  files.merges = parse_merges_txt(
      read_text_file(files.merges_file, "merges file (beside vocabulary " + vocab_path + ")"),
      files.merges_file);
  files.special = gpt2_special_tokens(vocab_path, lookup_in(files));
  for (const auto& [text, id] : files.vocab) {
    if (id == files.special.end_of_document) files.added_tokens.emplace_back(text, id);
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

// "▁", SentencePiece's mark for a space.
constexpr char kSpaceMark[] = "\u2581";
const std::string kSupported =
    "; llmft reads GPT-2 and Llama 3 byte-level BPE and Llama 2 / Mistral SentencePiece BPE "
    "tokenizers";

// One component of tokenizer.json ("normalizer", "pre_tokenizer.pretokenizers[1]", ...)
// with its "type", for checking its options and naming it in messages.
struct Component {
  const Json* json = nullptr;  // nullptr when absent or null
  std::string type;            // "" when absent
  std::string name;            // where it is, e.g. "pre_tokenizer"
  std::string path;            // the tokenizer file

  Component(const Json* value, std::string where, std::string file)
      : name(std::move(where)), path(std::move(file)) {
    if (value == nullptr || value->is_null()) return;
    json = value;
    const Json* type_json = value->find("type");
    LLMFT_REQUIRE(type_json != nullptr && type_json->is_string(),
                  "tokenizer file " << path << ": " << name << " has no \"type\" string");
    type = type_json->as_string();
  }

  [[noreturn]] void refuse(const std::string& why) const {
    LLMFT_FAIL("tokenizer file " << path << ": " << name << " " << (type.empty() ? "(none)" : type)
                                 << " " << why << kSupported);
  }
  [[noreturn]] void refuse_type() const { refuse("is not supported here"); }

  const Json* option(const char* key) const { return json->find(key); }
  bool option_is(const char* key, const std::string& value) const {
    const Json* found = option(key);
    return found != nullptr && found->is_string() && found->as_string() == value;
  }
  // The string of a {"String": ...} or {"Regex": ...} pattern option.
  std::string pattern(const char* key, const char* form) const {
    const Json* found = option(key);
    const Json* text = found != nullptr ? found->find(form) : nullptr;
    return text != nullptr && text->is_string() ? text->as_string() : std::string();
  }
  std::vector<Component> children(const char* key) const {
    const Json* list = option(key);
    if (list == nullptr || !list->is_array()) refuse(std::string("has no \"") + key + "\" list");
    std::vector<Component> parts;
    for (size_t i = 0; i < list->as_array().size(); ++i) {
      parts.emplace_back(&list->as_array()[i], name + "." + key + "[" + std::to_string(i) + "]",
                         path);
    }
    return parts;
  }
};

// The normalizer: none, or Llama 2's Sequence[Prepend("▁"), Replace(" " -> "▁")] (either
// order). True for Llama 2's.
bool read_normalizer(const Component& normalizer) {
  if (normalizer.type.empty()) return false;
  if (normalizer.type != "Sequence") normalizer.refuse_type();
  const std::vector<Component> parts = normalizer.children("normalizers");
  bool prepend = false, replace = false;
  for (const Component& part : parts) {
    if (part.type == "Prepend" && part.option_is("prepend", kSpaceMark) && !prepend) {
      prepend = true;
    } else if (part.type == "Replace" && part.pattern("pattern", "String") == " " &&
               part.option_is("content", kSpaceMark) && !replace) {
      replace = true;
    } else {
      part.refuse(
          "is not supported: llmft reads the normalizer Sequence[Prepend(\"\u2581\"), "
          "Replace(\" \" -> \"\u2581\")] only");
    }
  }
  if (!prepend || !replace) {
    normalizer.refuse("must be Sequence[Prepend(\"\u2581\"), Replace(\" \" -> \"\u2581\")]");
  }
  return true;
}

void read_byte_level(const Component& byte_level, bool use_regex, BpeFiles& files) {
  const Json* regex = byte_level.option("use_regex");
  const bool uses_regex = regex == nullptr || (regex->is_bool() && regex->as_bool());
  if (uses_regex != use_regex) {
    byte_level.refuse(std::string("must have use_regex ") + (use_regex ? "true" : "false"));
  }
  const Json* add_prefix_space = byte_level.option("add_prefix_space");
  files.add_prefix_space =
      add_prefix_space != nullptr && add_prefix_space->is_bool() && add_prefix_space->as_bool();
  if (files.add_prefix_space && !use_regex)
    byte_level.refuse("with add_prefix_space is not supported");
}

// Split(Regex PATTERN, behavior Isolated, invert false) with GPT-2's or Llama 3's regex.
void read_split(const Component& split, BpeFiles& files) {
  const std::string pattern = split.pattern("pattern", "Regex");
  if (pattern == kLlama3SplitPattern) {
    files.split = BpeFiles::Split::llama3;
  } else if (pattern == kGpt2SplitPattern) {
    files.split = BpeFiles::Split::gpt2;
  } else {
    const Json* raw = split.option("pattern");
    split.refuse("with pattern " + (raw != nullptr ? raw->dump() : std::string("(none)")) +
                 " is not supported: llmft implements GPT-2's and Llama 3's split regex only");
  }
  if (!split.option_is("behavior", "Isolated")) split.refuse("must have behavior Isolated");
  if (!is_unset(split.option("invert"))) split.refuse("must have invert false");
}

// Metaspace(replacement "▁", prepend_scheme, split false): SentencePiece's space marks.
BpeFiles::SpacePrefix read_metaspace_prefix(const Component& metaspace) {
  if (!metaspace.option_is("replacement", kSpaceMark)) {
    metaspace.refuse("must have replacement \"\u2581\"");
  }
  if (!is_unset(metaspace.option("split"))) metaspace.refuse("with split true is not supported");
  // Files from before prepend_scheme say add_prefix_space, which meant "always".
  const Json* scheme = metaspace.option("prepend_scheme");
  if (scheme == nullptr) {
    return is_unset(metaspace.option("add_prefix_space")) ? BpeFiles::SpacePrefix::never
                                                          : BpeFiles::SpacePrefix::unless_marked;
  }
  if (metaspace.option_is("prepend_scheme", "first")) {
    return BpeFiles::SpacePrefix::first_unless_marked;
  }
  if (metaspace.option_is("prepend_scheme", "always")) return BpeFiles::SpacePrefix::unless_marked;
  if (metaspace.option_is("prepend_scheme", "never")) return BpeFiles::SpacePrefix::never;
  metaspace.refuse("with prepend_scheme " + scheme->dump() + " is not supported");
}

void read_pre_tokenizer(const Component& pre_tokenizer, bool has_normalizer, BpeFiles& files) {
  if (pre_tokenizer.type.empty() && has_normalizer) {
    files.kind = BpeFiles::Kind::sentencepiece;
    files.space_prefix = BpeFiles::SpacePrefix::always;
    return;
  }
  if (has_normalizer) {
    pre_tokenizer.refuse("is not supported after the Prepend/Replace normalizer");
  }
  if (pre_tokenizer.type == "ByteLevel") {
    read_byte_level(pre_tokenizer, /*use_regex=*/true, files);
    return;
  }
  if (pre_tokenizer.type == "Metaspace") {
    files.kind = BpeFiles::Kind::sentencepiece;
    files.space_prefix = read_metaspace_prefix(pre_tokenizer);
    return;
  }
  if (pre_tokenizer.type != "Sequence") pre_tokenizer.refuse_type();
  const std::vector<Component> parts = pre_tokenizer.children("pretokenizers");
  if (parts.size() != 2 || parts[0].type != "Split" || parts[1].type != "ByteLevel") {
    pre_tokenizer.refuse("is not supported: llmft reads Sequence[Split(Regex), ByteLevel] only");
  }
  read_split(parts[0], files);
  read_byte_level(parts[1], /*use_regex=*/false, files);
}

// Llama 2's Sequence[Replace("▁" -> " "), ByteFallback, Fuse, Strip(" ", 1, 0)].
bool is_llama2_decoder(const Component& decoder) {
  if (decoder.type != "Sequence") return false;
  const std::vector<Component> parts = decoder.children("decoders");
  const auto strip_one_space = [](const Component& strip) {
    const Json* start = strip.option("start");
    const Json* stop = strip.option("stop");
    return strip.option_is("content", " ") && start != nullptr && start->is_number() &&
           start->as_number() == 1 && is_unset(stop);
  };
  return parts.size() == 4 && parts[0].type == "Replace" &&
         parts[0].pattern("pattern", "String") == kSpaceMark &&
         parts[0].option_is("content", " ") && parts[1].type == "ByteFallback" &&
         parts[2].type == "Fuse" && parts[3].type == "Strip" && strip_one_space(parts[3]);
}

void read_decoder(const Component& decoder, BpeFiles& files) {
  if (files.kind == BpeFiles::Kind::byte_level) {
    if (!decoder.type.empty() && decoder.type != "ByteLevel") decoder.refuse_type();
    return;
  }
  if (is_llama2_decoder(decoder)) {
    files.space_decoder = BpeFiles::SpaceDecoder::fuse_and_strip;
  } else if (decoder.type == "Metaspace") {
    files.space_decoder = read_metaspace_prefix(decoder) == BpeFiles::SpacePrefix::never
                              ? BpeFiles::SpaceDecoder::metaspace_keep
                              : BpeFiles::SpaceDecoder::metaspace;
  } else {
    decoder.refuse(
        "is not supported: llmft reads SentencePiece tokenizers with the decoder "
        "Sequence[Replace, ByteFallback, Fuse, Strip] or Metaspace");
  }
}

// The TemplateProcessing of the post_processor, or nullptr; refuses other processors.
const Json* read_post_processor(const Component& processor, const BpeFiles& files) {
  const bool byte_level = files.kind == BpeFiles::Kind::byte_level;
  if (processor.type.empty() || (byte_level && processor.type == "ByteLevel")) return nullptr;
  if (processor.type == "TemplateProcessing") return processor.json;
  if (processor.type != "Sequence") processor.refuse_type();
  const Json* template_processing = nullptr;
  for (const Component& part : processor.children("processors")) {
    if (byte_level && part.type == "ByteLevel") continue;
    if (part.type != "TemplateProcessing" || template_processing != nullptr) part.refuse_type();
    template_processing = part.json;
  }
  return template_processing;
}

// The model's type, checked before anything else reads the file: a Unigram or WordPiece
// model has its own pre-tokenizer, which would otherwise be the part refused.
void require_bpe_model(const Json& model, const std::string& path) {
  const Json* type = model.find("type");
  LLMFT_REQUIRE(
      type == nullptr || (type->is_string() && type->as_string() == "BPE"),
      "tokenizer file " << path << ": model.type is " << type->dump()
                        << ", not \"BPE\": llmft reads BPE models only (GPT-2 and "
                           "Llama 3 byte-level BPE, Llama 2 / Mistral SentencePiece BPE)");
}

// The model's options, with the options of the file's kind.
void read_model_options(const Json& model, const std::string& path, BpeFiles& files) {
  std::vector<const char*> unsupported = {"dropout", "continuing_subword_prefix",
                                          "end_of_word_suffix"};
  if (files.kind == BpeFiles::Kind::byte_level) unsupported.push_back("byte_fallback");
  for (const char* key : unsupported) {
    LLMFT_REQUIRE(is_unset(model.find(key)),
                  "tokenizer file " << path << ": model." << key << " is " << model.at(key).dump()
                                    << ", which is not supported" << kSupported);
  }
  files.ignore_merges = !is_unset(model.find("ignore_merges"));
  files.byte_fallback = !is_unset(model.find("byte_fallback"));
  files.fuse_unk = !is_unset(model.find("fuse_unk"));
  const Json* unk = model.find("unk_token");
  if (unk != nullptr && unk->is_string()) files.unk_token = unk->as_string();
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

// The added tokens; with a normalizer, they must be matched before it (normalized false).
std::vector<std::pair<std::string, int64_t>> parse_added_tokens(const Json& root,
                                                                const std::string& path,
                                                                bool has_normalizer) {
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
    LLMFT_REQUIRE(!has_normalizer || is_unset(token.find("normalized")),
                  where << " (" << Json::quote(content->as_string())
                        << ") sets normalized, which is not supported with a normalizer: llmft "
                        << "matches added tokens in the text before normalizing it");
    added.emplace_back(content->as_string(), parse_token_id(*id, where, content->as_string()));
  }
  return added;
}

BpeFiles read_tokenizer_json(const Json& root, const std::string& path) {
  const Json* model = root.find("model");
  LLMFT_REQUIRE(model != nullptr && model->is_object(),
                "tokenizer file " << path << " has no \"model\" object, which holds a "
                                  << "tokenizer.json's vocabulary and merges"
                                  << (model == nullptr ? std::string()
                                                       : std::string("; its \"model\" is a JSON ") +
                                                             Json::kind_name(model->kind())));
  require_bpe_model(*model, path);
  BpeFiles files;
  const bool has_normalizer =
      read_normalizer(Component(root.find("normalizer"), "normalizer", path));
  read_pre_tokenizer(Component(root.find("pre_tokenizer"), "pre_tokenizer", path), has_normalizer,
                     files);
  read_model_options(*model, path, files);
  read_decoder(Component(root.find("decoder"), "decoder", path), files);
  const Json* post_processor_template =
      read_post_processor(Component(root.find("post_processor"), "post_processor", path), files);
  files.vocab_origin = path + ": model.vocab";
  const Json* vocab = model->find("vocab");
  LLMFT_REQUIRE(vocab != nullptr, "tokenizer file " << path << ": model has no \"vocab\"");
  files.vocab = parse_vocab(*vocab, files.vocab_origin);
  const Json* merges = model->find("merges");
  LLMFT_REQUIRE(merges != nullptr, "tokenizer file " << path << ": model has no \"merges\"");
  files.merges = parse_json_merges(*merges, path);
  files.merges_file = path;
  files.merges_in_json = true;
  files.added_tokens = parse_added_tokens(root, path, has_normalizer);
  files.special = read_special_tokens(post_processor_template, path, lookup_in(files));
  return files;
}

// True for a tokenizer.json, even one without its "model": a vocab.json maps each token to
// a number, so one of tokenizer.json's keys holding anything else cannot be a vocab.json.
bool is_tokenizer_json(const Json& json) {
  for (const char* key : {"model", "version", "added_tokens", "normalizer", "pre_tokenizer",
                          "post_processor", "decoder", "truncation", "padding"}) {
    const Json* value = json.find(key);
    if (value != nullptr && !value->is_number()) return true;
  }
  return false;
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

// A tokenizer.json, a vocab.json (told apart by is_tokenizer_json), or a directory
// holding either.
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
  if (is_tokenizer_json(json)) return read_tokenizer_json(json, path);
  return read_vocab_and_merges(json, path);
}

}  // namespace llmft::io
