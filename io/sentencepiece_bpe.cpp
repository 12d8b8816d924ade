#include "io/sentencepiece_bpe.h"

#include <cstdio>

#include "core/error.h"
#include "io/json.h"
#include "io/unicode_classes.h"

namespace llmft::io {
namespace {

constexpr std::string_view kSpaceMark = "\u2581";
constexpr std::string_view kReplacementCharacter = "\uFFFD";

// "<0xNN>", the vocabulary string of a byte-fallback token, as `tokenizers` spells it.
std::string byte_token_text(int byte) {
  char text[8];
  std::snprintf(text, sizeof text, "<0x%02X>", byte);
  return text;
}

// The byte a "<0xNN>" string stands for (either case of hex digits), or -1.
int byte_of_token_text(std::string_view text) {
  if (text.size() != 6 || text.substr(0, 3) != "<0x" || text[5] != '>') return -1;
  int byte = 0;
  for (char c : text.substr(3, 2)) {
    const int digit = c >= '0' && c <= '9'   ? c - '0'
                      : c >= 'a' && c <= 'f' ? c - 'a' + 10
                      : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                             : -1;
    if (digit < 0) return -1;
    byte = byte * 16 + digit;
  }
  return byte;
}

bool is_utf8(std::string_view bytes) {
  for (size_t pos = 0; pos < bytes.size();) {
    const Utf8Char c = utf8_char_at(bytes, pos);
    if (c.code_point == kNotUtf8) return false;
    pos += c.length;
  }
  return true;
}

// `text` with every "▁" as `replacement`.
void append_replacing_marks(std::string& out, std::string_view text, std::string_view replacement) {
  for (size_t pos = 0; pos < text.size();) {
    const size_t mark = text.find(kSpaceMark, pos);
    out.append(text.substr(pos, mark - pos));
    if (mark == std::string_view::npos) return;
    out.append(replacement);
    pos = mark + kSpaceMark.size();
  }
}

}  // namespace

// Buffers of one encode() call, reused from piece to piece.
struct SentencePieceBpeTokenizer::Workspace {
  BpeMerges::Workspace merge;
  std::string word;              // the piece with its space marks
  std::vector<int32_t> symbols;  // the word's first symbols
  // For offsets: the byte of the piece each byte of the word stands for (a space mark
  // put in front: the piece's first), where each symbol begins in the piece, and each
  // token's first symbol.
  std::vector<size_t> piece_byte_of;
  std::vector<size_t> symbol_starts;
  std::vector<size_t> first_symbols;
};

SentencePieceBpeTokenizer::SentencePieceBpeTokenizer(const std::string& path, const BpeFiles& files)
    : VocabularyTokenizer(path, files),
      space_prefix_(files.space_prefix),
      space_decoder_(files.space_decoder),
      ignore_merges_(files.ignore_merges),
      fuse_unk_(files.fuse_unk) {
  LLMFT_REQUIRE(files.kind == BpeFiles::Kind::sentencepiece,
                path << " is a byte-level tokenizer, not a SentencePiece-style one");
  if (!files.unk_token.empty()) {
    unk_token_ = vocabulary_.id_of(files.unk_token);
    LLMFT_REQUIRE(unk_token_.has_value(), "tokenizer file " << path << ": model.unk_token "
                                                            << Json::quote(files.unk_token)
                                                            << " is not in model.vocab");
  }
  for (int byte = 0; byte < 256; ++byte) {
    if (files.byte_fallback) byte_tokens_[byte] = vocabulary_.id_of(byte_token_text(byte));
  }
}

std::vector<int32_t> SentencePieceBpeTokenizer::encode_into(std::string_view text,
                                                            std::vector<size_t>* starts) const {
  std::vector<int32_t> tokens;
  tokens.reserve(text.size() / 3);
  Workspace workspace;
  size_t piece_end = 0;  // where the added token after the last piece begins
  vocabulary_.added_tokens.split(
      text,
      [&](std::string_view piece, size_t offset) {
        piece_end = offset + piece.size();
        if (!piece.empty()) encode_piece(piece, offset, workspace, tokens, starts);
      },
      [&](int32_t id) {
        if (starts != nullptr) starts->push_back(piece_end);
        tokens.push_back(id);
      });
  return tokens;
}

void SentencePieceBpeTokenizer::encode_piece(std::string_view piece, size_t offset,
                                             Workspace& workspace, std::vector<int32_t>& tokens,
                                             std::vector<size_t>* starts) const {
  const bool starts_text = offset == 0;
  std::string& word = workspace.word;
  std::vector<size_t>& piece_byte_of = workspace.piece_byte_of;
  word.clear();
  piece_byte_of.clear();
  for (size_t i = 0; i < piece.size(); ++i) {
    if (piece[i] == ' ') {
      word.append(kSpaceMark);
    } else {
      word += piece[i];
    }
    piece_byte_of.resize(word.size(), i);
  }
  const bool marked = word.compare(0, kSpaceMark.size(), kSpaceMark) == 0;
  bool prepend = false;
  switch (space_prefix_) {
    case BpeFiles::SpacePrefix::always:
      prepend = true;
      break;
    case BpeFiles::SpacePrefix::unless_marked:
      prepend = !marked;
      break;
    case BpeFiles::SpacePrefix::first_unless_marked:
      prepend = !marked && starts_text;
      break;
    case BpeFiles::SpacePrefix::never:
      break;
  }
  if (prepend) {
    word.insert(0, kSpaceMark);
    piece_byte_of.insert(piece_byte_of.begin(), kSpaceMark.size(), 0);
  }

  if (ignore_merges_) {
    if (const std::optional<int32_t> whole = vocabulary_.id_of(word)) {
      tokens.push_back(*whole);
      if (starts != nullptr) starts->push_back(offset);
      return;
    }
  }
  std::vector<int32_t>& symbols = workspace.symbols;
  std::vector<size_t>& symbol_starts = workspace.symbol_starts;
  symbols.clear();
  symbol_starts.clear();
  const auto add_symbol = [&](int32_t symbol, size_t word_pos) {
    symbols.push_back(symbol);
    symbol_starts.push_back(piece_byte_of[word_pos]);
  };
  // An unknown character's unk token waits, to be fused with the next one's; as in
  // `tokenizers`, it is written when a known character or the end of the word comes.
  bool unk_pending = false;
  size_t pending_unk_pos = 0;  // where the pending unk's first character is in the word
  for (size_t pos = 0; pos < word.size();) {
    const size_t length = utf8_char_at(word, pos).length;
    const std::string_view character(word.data() + pos, length);
    const size_t char_pos = pos;
    pos += length;
    if (const std::optional<int32_t> id = vocabulary_.id_of(std::string(character))) {
      if (unk_pending) add_symbol(*unk_token_, pending_unk_pos);
      unk_pending = false;
      add_symbol(*id, char_pos);
      continue;
    }
    bool all_bytes = !character.empty();
    for (char byte : character)
      all_bytes = all_bytes && byte_tokens_[static_cast<unsigned char>(byte)];
    if (all_bytes) {
      for (size_t i = 0; i < character.size(); ++i)
        add_symbol(*byte_tokens_[static_cast<unsigned char>(character[i])], char_pos + i);
      continue;
    }
    if (!unk_token_.has_value()) continue;
    if (unk_pending && !fuse_unk_) add_symbol(*unk_token_, pending_unk_pos);
    if (!unk_pending || !fuse_unk_) pending_unk_pos = char_pos;
    unk_pending = true;
  }
  if (unk_pending) add_symbol(*unk_token_, pending_unk_pos);
  const size_t first_token = tokens.size();
  workspace.first_symbols.clear();
  vocabulary_.merges.merge_word(symbols, workspace.merge, tokens,
                                starts != nullptr ? &workspace.first_symbols : nullptr);
  for (size_t i = 0; starts != nullptr && first_token + i < tokens.size(); ++i) {
    starts->push_back(offset + symbol_starts[workspace.first_symbols[i]]);
  }
}

std::string SentencePieceBpeTokenizer::decode(const std::vector<int32_t>& tokens) const {
  std::vector<std::string_view> strings;
  strings.reserve(tokens.size());
  for (int32_t token : tokens) {
    LLMFT_REQUIRE(vocabulary_.has_token(token), "tokenizer " << path_ << " cannot decode token "
                                                             << token
                                                             << ": it is not in the vocabulary");
    strings.push_back(token == eot_token() ? std::string_view("\n")
                                           : std::string_view(*vocabulary_.texts[token]));
  }
  return space_decoder_ == BpeFiles::SpaceDecoder::fuse_and_strip ? decode_fused(strings)
                                                                  : decode_metaspace(strings);
}

// Replace("▁" -> " "), ByteFallback, Fuse, Strip(" ", 1, 0).
std::string SentencePieceBpeTokenizer::decode_fused(
    const std::vector<std::string_view>& strings) const {
  std::string text, bytes;
  const auto flush_bytes = [&] {
    if (is_utf8(bytes)) {
      text += bytes;
    } else {
      for (size_t i = 0; i < bytes.size(); ++i) text += kReplacementCharacter;
    }
    bytes.clear();
  };
  for (std::string_view string : strings) {
    const int byte = byte_of_token_text(string);
    if (byte >= 0) {
      bytes += static_cast<char>(byte);
      continue;
    }
    flush_bytes();
    append_replacing_marks(text, string, " ");
  }
  flush_bytes();
  if (!text.empty() && text[0] == ' ') text.erase(0, 1);
  return text;
}

// Metaspace: "▁" -> " ", except in the first token, where it is dropped (unless
// prepend_scheme is "never").
std::string SentencePieceBpeTokenizer::decode_metaspace(
    const std::vector<std::string_view>& strings) const {
  std::string text;
  for (size_t i = 0; i < strings.size(); ++i) {
    const bool drop = i == 0 && space_decoder_ == BpeFiles::SpaceDecoder::metaspace;
    append_replacing_marks(text, strings[i], drop ? "" : " ");
  }
  return text;
}

}  // namespace llmft::io
