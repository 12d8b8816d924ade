#include "io/bpe_tokenizer.h"

#include <algorithm>

#include "core/error.h"
#include "io/bpe_files.h"
#include "io/gpt2_pretokenizer.h"
#include "io/json.h"
#include "io/unicode_classes.h"

namespace llmft::io {
namespace {

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

}  // namespace

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
    if (text == kEndOfTextToken) eot_token_ = static_cast<int32_t>(id);
  }
  const auto vocab_eot = vocab.find(kEndOfTextToken);
  if (eot_token_ < 0 && vocab_eot != vocab.end()) eot_token_ = vocab_eot->second;
  LLMFT_REQUIRE(eot_token_ >= 0, files.vocab_origin << ": the tokenizer has no end-of-text token "
                                                    << kEndOfTextToken
                                                    << ", which llmft puts between documents");

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
