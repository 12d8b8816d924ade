// SentencePieceBpeTokenizer: the SentencePiece-style BPE of Llama 2, TinyLlama and
// Mistral, read from the model's Hugging Face tokenizer.json, so that text is tokenized
// exactly as `tokenizers` tokenizes it for that model.
//
// Encoding: text is first cut at the added tokens ("<s>", "</s>", ...), which become
// their ids; in each piece between them spaces become "\u2581" and a "\u2581" is put in
// front (normalizer Sequence[Prepend, Replace]: before every piece; pre_tokenizer
// Metaspace: unless the piece starts with one, and with prepend_scheme "first" only at the
// start of the text). The piece is one word: each character is the symbol of its
// vocabulary string; a character not in the vocabulary becomes its UTF-8 bytes' "<0xNN>"
// tokens with byte_fallback, else the unk token (adjacent ones fused into one with
// fuse_unk), else nothing; then merges are applied lowest rank first (io/bpe_merges.h).
// A byte that is not valid UTF-8 counts as a character of its own.
//
// Decoding runs the file's decoder: Sequence[Replace("\u2581" -> " "), ByteFallback, Fuse,
// Strip(" ", 1, 0)] (runs of "<0xNN>" tokens become their bytes when those are UTF-8, else
// one U+FFFD per byte; then one leading space is dropped) or Metaspace ("\u2581" -> " ",
// dropped in the first token; "<0xNN>" stays as written, as in `tokenizers`).
//
// Immutable after construction; safe to share between threads.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "io/bpe_files.h"
#include "io/vocabulary_tokenizer.h"

namespace llmft::io {

class SentencePieceBpeTokenizer final : public VocabularyTokenizer {
 public:
  // `files` read from the tokenizer.json at `path` (read_bpe_files).
  // REQUIRES: files.kind == BpeFiles::Kind::sentencepiece
  // Throws llmft::Error naming the file when the parts disagree (io/bpe_vocabulary.h) or
  // the unk_token is not in the vocabulary.
  SentencePieceBpeTokenizer(const std::string& path, const BpeFiles& files);

  // The file's decoder over the tokens' strings, end-of-text rendered as "\n" (as the
  // other tokenizers do) and other added tokens as their text.
  // REQUIRES: every token is an id of the vocabulary.
  std::string decode(const std::vector<int32_t>& tokens) const override;

 private:
  struct Workspace;

  std::vector<int32_t> encode_into(std::string_view text,
                                   std::vector<size_t>* starts) const override;
  // Encodes `piece`, found at byte `offset` of the text; with `starts`, records the byte of
  // the text where each token begins.
  void encode_piece(std::string_view piece, size_t offset, Workspace& workspace,
                    std::vector<int32_t>& tokens, std::vector<size_t>* starts) const;
  std::string decode_fused(const std::vector<std::string_view>& strings) const;
  std::string decode_metaspace(const std::vector<std::string_view>& strings) const;

  BpeFiles::SpacePrefix space_prefix_;
  BpeFiles::SpaceDecoder space_decoder_;
  bool ignore_merges_;
  bool fuse_unk_;
  std::optional<int32_t> unk_token_;
  std::array<std::optional<int32_t>, 256> byte_tokens_;  // "<0xNN>" with byte_fallback
};

}  // namespace llmft::io
