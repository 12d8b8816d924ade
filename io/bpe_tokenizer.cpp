#include "io/bpe_tokenizer.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "core/error.h"
#include "io/json.h"
#include "io/unicode_classes.h"

namespace llmft::io {
namespace {

namespace fs = std::filesystem;

constexpr const char* kEndOfText = "<|endoftext|>";

// GPT-2's byte-level alphabet.

// GPT-2's bytes_to_unicode: the printable bytes '!'..'~', 0xA1..0xAC and 0xAE..0xFF stand
// for the characters of the same code point; the other 68 bytes, in byte order, for
// U+0100, U+0101, ... U+0143. Vocabulary strings are written in these characters.
struct ByteLevelAlphabet {
  static constexpr char32_t kSymbolEnd = 0x144;
  std::array<char32_t, 256> symbol_of_byte{};
  std::array<int16_t, kSymbolEnd> byte_of_symbol{};  // -1: not a symbol

  ByteLevelAlphabet() {
    byte_of_symbol.fill(-1);
    char32_t next_spare = 0x100;
    for (int byte = 0; byte < 256; ++byte) {
      const bool printable = (byte >= '!' && byte <= '~') || (byte >= 0xA1 && byte <= 0xAC) ||
                             (byte >= 0xAE && byte <= 0xFF);
      const char32_t symbol = printable ? static_cast<char32_t>(byte) : next_spare++;
      symbol_of_byte[byte] = symbol;
      byte_of_symbol[symbol] = static_cast<int16_t>(byte);
    }
  }

  // The UTF-8 text of the symbol of `byte`, as vocabularies spell it.
  std::string symbol_text(int byte) const {
    const char32_t c = symbol_of_byte[byte];
    if (c < 0x80) return std::string(1, static_cast<char>(c));
    return {static_cast<char>(0xC0 | (c >> 6)), static_cast<char>(0x80 | (c & 0x3F))};
  }

  // The bytes that the vocabulary string `text` stands for. A character outside the
  // alphabet (in a special token, say) stands for its own UTF-8 bytes, as in the
  // ByteLevel decoder of `tokenizers`.
  std::string bytes_of(std::string_view text) const {
    std::string bytes;
    for (size_t pos = 0; pos < text.size();) {
      const Utf8Char c = utf8_char_at(text, pos);
      if (c.code_point < kSymbolEnd && byte_of_symbol[c.code_point] >= 0) {
        bytes += static_cast<char>(byte_of_symbol[c.code_point]);
      } else {
        bytes.append(text.substr(pos, c.length));
      }
      pos += c.length;
    }
    return bytes;
  }
};

const ByteLevelAlphabet& byte_level_alphabet() {
  static const ByteLevelAlphabet alphabet;
  return alphabet;
}

// Reading the files.

// What either file format says, before it is checked against itself.
struct BpeFiles {
  struct MergeRule {
    std::string left, right;
    size_t where;  // line of merges.txt, or index in tokenizer.json's model.merges
  };
  std::vector<std::pair<std::string, int64_t>> vocab;
  std::string vocab_origin;  // "FILE" or "FILE: model.vocab", for messages
  std::vector<MergeRule> merges;
  std::string merges_file;
  bool merges_in_json = false;
  std::vector<std::pair<std::string, int64_t>> added_tokens;  // text, id
  bool add_prefix_space = false;

  std::string merge_origin(const MergeRule& rule) const {
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
};

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
    if (text == kEndOfText) files.added_tokens.emplace_back(text, id);
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
// GPT-2's byte-level BPE, which is all this class implements.
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

// GPT-2's pre-tokenizer.

// The length of the contraction 's 't 're 've 'm 'll or 'd at text[pos], or 0.
size_t contraction_length(std::string_view text, size_t pos) {
  if (text[pos] != '\'' || pos + 1 >= text.size()) return 0;
  const char first = text[pos + 1];
  if (first == 's' || first == 't' || first == 'm' || first == 'd') return 2;
  if (pos + 2 >= text.size()) return 0;
  const std::string_view two = text.substr(pos + 1, 2);
  return two == "re" || two == "ve" || two == "ll" ? 3 : 0;
}

// The end of the run of characters of class `run_class` that starts at text[pos].
size_t end_of_run(std::string_view text, size_t pos, CharClass run_class) {
  while (pos < text.size()) {
    const Utf8Char c = utf8_char_at(text, pos);
    if (char_class(c.code_point) != run_class) break;
    pos += c.length;
  }
  return pos;
}

}  // namespace

size_t gpt2_pretoken_end(std::string_view text, size_t begin) {
  if (const size_t length = contraction_length(text, begin)) return begin + length;
  // " ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+": an optional space, then a run of one class.
  const size_t head = text[begin] == ' ' && begin + 1 < text.size() ? begin + 1 : begin;
  const Utf8Char head_char = utf8_char_at(text, head);
  const CharClass head_class = char_class(head_char.code_point);
  if (head_class != CharClass::space) return end_of_run(text, head + head_char.length, head_class);
  // "\s+(?!\S)|\s+": white space up to the end of the text, or else up to its last
  // character, which then starts the next pre-token (" word", say), unless it is alone.
  size_t last = begin;
  size_t end = begin;
  while (end < text.size()) {
    const Utf8Char c = utf8_char_at(text, end);
    if (char_class(c.code_point) != CharClass::space) break;
    last = end;
    end += c.length;
  }
  return end == text.size() || last == begin ? end : last;
}

// BpeTokenizer.

// Buffers of one encode() call, reused from word to word.
struct BpeTokenizer::Workspace {
  struct Symbol {
    int32_t token;  // kMergedAway once merged into its left neighbour
    int32_t prev;   // -1 at the start of the word
    int32_t next;   // -1 at the end of the word
  };
  // A pair that may merge: the symbol at `pos` (token `left`) and the next one (`right`).
  struct Candidate {
    int32_t rank;
    int32_t pos;
    int32_t left, right, merged;
  };
  static constexpr int32_t kMergedAway = -1;

  std::vector<Symbol> symbols;
  std::vector<Candidate> heap;  // min-heap by (rank, pos), as `tokenizers` orders merges
  std::string prefixed;         // a piece with add_prefix_space's " " in front
};

BpeTokenizer::BpeTokenizer(const std::string& path) : path_(path) {
  const BpeFiles files = read_bpe_files(path);
  const ByteLevelAlphabet& alphabet = byte_level_alphabet();

  int64_t largest_id = -1;
  for (const auto& entry : files.vocab) largest_id = std::max(largest_id, entry.second);
  for (const auto& entry : files.added_tokens) largest_id = std::max(largest_id, entry.second);
  const size_t token_count = files.vocab.size() + files.added_tokens.size();
  LLMFT_REQUIRE(largest_id < static_cast<int64_t>(token_count),
                files.vocab_origin << ": id " << largest_id << " is beyond the " << token_count
                                   << " tokens it lists; ids must number the tokens from 0");
  token_bytes_.resize(static_cast<size_t>(largest_id + 1));
  std::unordered_map<std::string, int32_t> vocab;
  vocab.reserve(files.vocab.size());
  for (const auto& [text, id] : files.vocab) {
    LLMFT_REQUIRE(!token_bytes_[id].has_value(), files.vocab_origin << ": id " << id
                                                                    << " is given to more than "
                                                                    << "one token");
    token_bytes_[id] = alphabet.bytes_of(text);
    vocab.emplace(text, static_cast<int32_t>(id));
  }
  for (const auto& [text, id] : files.added_tokens) {
    token_bytes_[id] = text;
    literal_tokens_.push_back({text, static_cast<int32_t>(id)});
    if (text == kEndOfText) eot_token_ = static_cast<int32_t>(id);
  }
  const auto vocab_eot = vocab.find(kEndOfText);
  if (eot_token_ < 0 && vocab_eot != vocab.end()) eot_token_ = vocab_eot->second;
  LLMFT_REQUIRE(eot_token_ >= 0, files.vocab_origin << ": the tokenizer has no end-of-text token "
                                                    << kEndOfText << ", which llmft puts between "
                                                    << "documents");

  for (int byte = 0; byte < 256; ++byte) {
    const auto symbol = vocab.find(alphabet.symbol_text(byte));
    LLMFT_REQUIRE(symbol != vocab.end(),
                  files.vocab_origin << ": the vocabulary lacks \"" << alphabet.symbol_text(byte)
                                     << "\", the symbol of byte " << byte
                                     << "; a byte-level BPE vocabulary has all 256");
    byte_tokens_[byte] = symbol->second;
  }

  merges_.reserve(files.merges.size());
  for (size_t rank = 0; rank < files.merges.size(); ++rank) {
    const BpeFiles::MergeRule& rule = files.merges[rank];
    int32_t ids[3];
    const std::string parts[3] = {rule.left, rule.right, rule.left + rule.right};
    for (int k = 0; k < 3; ++k) {
      const auto found = vocab.find(parts[k]);
      LLMFT_REQUIRE(found != vocab.end(), files.merge_origin(rule)
                                              << ": " << (k == 2 ? "the merged symbol " : "")
                                              << Json::quote(parts[k])
                                              << " is not in the vocabulary");
      ids[k] = found->second;
    }
    // A pair listed twice keeps its last rank, as in `tokenizers`.
    const uint64_t key = static_cast<uint64_t>(ids[0]) << 32 | static_cast<uint32_t>(ids[1]);
    merges_[key] = Merge{static_cast<int32_t>(rank), ids[2]};
  }
  add_prefix_space_ = files.add_prefix_space;
}

const BpeTokenizer::Merge* BpeTokenizer::find_merge(int32_t left, int32_t right) const {
  const auto found = merges_.find(static_cast<uint64_t>(left) << 32 | static_cast<uint32_t>(right));
  return found == merges_.end() ? nullptr : &found->second;
}

std::vector<int32_t> BpeTokenizer::encode(std::string_view text) const {
  std::vector<int32_t> tokens;
  tokens.reserve(text.size() / 3);
  Workspace workspace;
  // Where each literal token occurs next, at or after `pos` (npos: nowhere).
  std::vector<size_t> next_literal(literal_tokens_.size());
  for (size_t i = 0; i < literal_tokens_.size(); ++i) {
    next_literal[i] = text.find(literal_tokens_[i].text);
  }
  for (size_t pos = 0;;) {
    // The leftmost literal, the longest of those starting there.
    const LiteralToken* literal = nullptr;
    size_t literal_at = std::string_view::npos;
    for (size_t i = 0; i < literal_tokens_.size(); ++i) {
      if (next_literal[i] < pos) next_literal[i] = text.find(literal_tokens_[i].text, pos);
      const bool longer =
          literal != nullptr && literal_tokens_[i].text.size() > literal->text.size();
      if (next_literal[i] < literal_at || (next_literal[i] == literal_at && longer)) {
        literal = &literal_tokens_[i];
        literal_at = next_literal[i];
      }
    }
    const std::string_view piece = text.substr(pos, literal_at - pos);
    if (add_prefix_space_ && !piece.empty() && piece[0] != ' ') {
      workspace.prefixed = " ";
      workspace.prefixed += piece;
      encode_pretokens(workspace.prefixed, workspace, tokens);
    } else {
      encode_pretokens(piece, workspace, tokens);
    }
    if (literal == nullptr) return tokens;
    tokens.push_back(literal->token);
    pos = literal_at + literal->text.size();
  }
}

void BpeTokenizer::encode_pretokens(std::string_view text, Workspace& workspace,
                                    std::vector<int32_t>& tokens) const {
  for (size_t begin = 0; begin < text.size();) {
    const size_t end = gpt2_pretoken_end(text, begin);
    encode_word(text.substr(begin, end - begin), workspace, tokens);
    begin = end;
  }
}

// Merges the word's byte symbols, the pair of lowest rank first (the leftmost among
// equals), as `tokenizers` does; a heap keeps this O(n log n) for a word of n bytes.
void BpeTokenizer::encode_word(std::string_view word, Workspace& workspace,
                               std::vector<int32_t>& tokens) const {
  using Candidate = Workspace::Candidate;
  if (word.size() == 1) {
    tokens.push_back(byte_tokens_[static_cast<unsigned char>(word[0])]);
    return;
  }
  std::vector<Workspace::Symbol>& symbols = workspace.symbols;
  std::vector<Candidate>& heap = workspace.heap;
  const auto n = static_cast<int32_t>(word.size());
  symbols.resize(n);
  for (int32_t i = 0; i < n; ++i) {
    symbols[i] = {byte_tokens_[static_cast<unsigned char>(word[i])], i - 1, i + 1 < n ? i + 1 : -1};
  }
  const auto later = [](const Candidate& a, const Candidate& b) {
    return a.rank != b.rank ? a.rank > b.rank : a.pos > b.pos;
  };
  // The pair that starts at `pos`, if it merges.
  const auto candidate_at = [&](int32_t pos, bool keep_heap) {
    const int32_t left = symbols[pos].token, right = symbols[symbols[pos].next].token;
    const Merge* merge = find_merge(left, right);
    if (merge == nullptr) return;
    heap.push_back({merge->rank, pos, left, right, merge->merged});
    if (keep_heap) std::push_heap(heap.begin(), heap.end(), later);
  };
  heap.clear();
  for (int32_t pos = 0; pos + 1 < n; ++pos) candidate_at(pos, false);
  std::make_heap(heap.begin(), heap.end(), later);
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), later);
    const Candidate top = heap.back();
    heap.pop_back();
    Workspace::Symbol& left = symbols[top.pos];
    // Skip pairs that earlier merges have changed.
    if (left.token != top.left || left.next < 0) continue;
    Workspace::Symbol& right = symbols[left.next];
    if (right.token != top.right) continue;
    left.token = top.merged;
    right.token = Workspace::kMergedAway;
    left.next = right.next;
    if (left.next >= 0) symbols[left.next].prev = top.pos;
    if (left.prev >= 0) candidate_at(left.prev, true);
    if (left.next >= 0) candidate_at(top.pos, true);
  }
  for (int32_t pos = 0; pos >= 0; pos = symbols[pos].next) tokens.push_back(symbols[pos].token);
}

std::string BpeTokenizer::decode(const std::vector<int32_t>& tokens) const {
  std::string text;
  for (int32_t token : tokens) {
    LLMFT_REQUIRE(token >= 0 && token < vocab_size() && token_bytes_[token].has_value(),
                  "BPE tokenizer " << path_ << " cannot decode token " << token
                                   << ": it is not in the vocabulary");
    if (token == eot_token_) {
      text += '\n';
    } else {
      text += *token_bytes_[token];
    }
  }
  return text;
}

}  // namespace llmft::io
