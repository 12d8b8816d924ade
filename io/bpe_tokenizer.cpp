#include "io/bpe_tokenizer.h"

#include <algorithm>

#include "core/error.h"
#include "io/bpe_files.h"
#include "io/gpt2_pretokenizer.h"
#include "io/llama3_pretokenizer.h"
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
  BpeMerges::Workspace merge;
  std::vector<int32_t> symbols;     // the byte symbols of a word
  std::string word_symbols;         // a word in byte symbols, for ignore_merges
  std::string prefixed;             // a piece with add_prefix_space's " " in front
  std::vector<size_t> first_bytes;  // for offsets: each token's first byte in its word
};

BpeTokenizer::BpeTokenizer(const std::string& path) : BpeTokenizer(path, read_bpe_files(path)) {}

BpeTokenizer::BpeTokenizer(const std::string& path, const BpeFiles& files)
    : VocabularyTokenizer(path, files),
      pretoken_end_(files.split == BpeFiles::Split::llama3 ? llama3_pretoken_end
                                                           : gpt2_pretoken_end),
      ignore_merges_(files.ignore_merges),
      add_prefix_space_(files.add_prefix_space) {
  LLMFT_REQUIRE(files.kind == BpeFiles::Kind::byte_level,
                path << " is a SentencePiece-style tokenizer, not a byte-level one: build it "
                     << "with make_tokenizer(\"bpe:" << path << "\")");
  const ByteLevelAlphabet& alphabet = byte_level_alphabet();
  token_bytes_.resize(vocabulary_.texts.size());
  for (size_t id = 0; id < token_bytes_.size(); ++id) {
    if (!vocabulary_.texts[id].has_value()) continue;
    const std::string& text = *vocabulary_.texts[id];
    token_bytes_[id] = vocabulary_.added[id] ? text : alphabet.bytes_of(text);
  }
  for (int byte = 0; byte < 256; ++byte) {
    const std::optional<int32_t> symbol = vocabulary_.id_of(alphabet.symbol_text(byte));
    LLMFT_REQUIRE(symbol.has_value(), files.vocab_origin
                                          << ": the vocabulary lacks \""
                                          << alphabet.symbol_text(byte) << "\", the symbol of byte "
                                          << byte << "; a byte-level BPE vocabulary has all 256");
    byte_tokens_[byte] = *symbol;
  }
}

std::vector<int32_t> BpeTokenizer::encode_into(std::string_view text,
                                               std::vector<size_t>* starts) const {
  std::vector<int32_t> tokens;
  tokens.reserve(text.size() / 3);
  Workspace workspace;
  size_t piece_end = 0;  // where the added token after the last piece begins
  vocabulary_.added_tokens.split(
      text,
      [&](std::string_view piece, size_t offset) {
        piece_end = offset + piece.size();
        if (add_prefix_space_ && !piece.empty() && piece[0] != ' ') {
          workspace.prefixed = " ";
          workspace.prefixed += piece;
          encode_pretokens(workspace.prefixed, workspace, tokens, starts, offset, 1);
        } else {
          encode_pretokens(piece, workspace, tokens, starts, offset, 0);
        }
      },
      [&](int32_t id) {
        if (starts != nullptr) starts->push_back(piece_end);
        tokens.push_back(id);
      });
  return tokens;
}

void BpeTokenizer::encode_pretokens(std::string_view text, Workspace& workspace,
                                    std::vector<int32_t>& tokens, std::vector<size_t>* starts,
                                    size_t offset, size_t added_bytes) const {
  for (size_t begin = 0; begin < text.size();) {
    const size_t end = pretoken_end_(text, begin);
    const size_t first_token = tokens.size();
    workspace.first_bytes.clear();
    encode_word(text.substr(begin, end - begin), workspace, tokens,
                starts != nullptr ? &workspace.first_bytes : nullptr);
    for (size_t i = 0; starts != nullptr && first_token + i < tokens.size(); ++i) {
      const size_t at = begin + workspace.first_bytes[i];
      starts->push_back(offset + std::max(at, added_bytes) - added_bytes);
    }
    begin = end;
  }
}

void BpeTokenizer::encode_word(std::string_view word, Workspace& workspace,
                               std::vector<int32_t>& tokens,
                               std::vector<size_t>* first_bytes) const {
  if (ignore_merges_) {
    const ByteLevelAlphabet& alphabet = byte_level_alphabet();
    workspace.word_symbols.clear();
    for (char byte : word)
      workspace.word_symbols += alphabet.symbol_text(static_cast<unsigned char>(byte));
    if (const std::optional<int32_t> whole = vocabulary_.id_of(workspace.word_symbols)) {
      tokens.push_back(*whole);
      if (first_bytes != nullptr) first_bytes->push_back(0);
      return;
    }
  }
  workspace.symbols.clear();
  for (char byte : word)
    workspace.symbols.push_back(byte_tokens_[static_cast<unsigned char>(byte)]);
  // Each symbol is one byte of the word, so a token's first symbol is its first byte.
  vocabulary_.merges.merge_word(workspace.symbols, workspace.merge, tokens, first_bytes);
}

std::string BpeTokenizer::decode(const std::vector<int32_t>& tokens) const {
  std::string text;
  for (int32_t token : tokens) {
    LLMFT_REQUIRE(vocabulary_.has_token(token), "BPE tokenizer "
                                                    << path_ << " cannot decode token " << token
                                                    << ": it is not in the vocabulary");
    if (token == eot_token()) {
      text += '\n';
    } else {
      text += token_bytes_[token];
    }
  }
  return text;
}

}  // namespace llmft::io
