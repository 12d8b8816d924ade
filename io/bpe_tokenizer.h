// BpeTokenizer: byte-level BPE (GPT-2, Llama 3), read from the files a model ships with,
// so that text is tokenized exactly as Hugging Face `tokenizers` tokenizes it for that
// model.
//
// Encoding: text is first cut at the tokenizer's added tokens (the end-of-text token
// "<|endoftext|>", Llama 3's "<|begin_of_text|>", ... any added_tokens of tokenizer.json),
// which become their ids, as `tokenizers` does; each piece between them is split into
// pre-tokens by GPT-2's regex (io/gpt2_pretokenizer.h) or Llama 3's
// (io/llama3_pretokenizer.h), each pre-token's bytes become the symbols of GPT-2's
// bytes_to_unicode table, and merges are applied lowest rank first (io/bpe_merges.h); with
// ignore_merges (Llama 3), a pre-token that is itself in the vocabulary is that token.
// Every byte has a symbol, so any text encodes, invalid UTF-8 included, and
// decode(encode(text)) == text.
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

class BpeTokenizer final : public VocabularyTokenizer {
 public:
  // `path` is one of:
  //  - a Hugging Face tokenizer.json whose model is BPE ("merges" as "a b" strings or
  //    ["a", "b"] pairs) with the ByteLevel pre-tokenizer, or Sequence[Split(GPT-2's or
  //    Llama 3's regex), ByteLevel], and no normalizer; with tokenizer_config.json
  //    beside it, if any (io/tokenizer_config.h);
  //  - a GPT-2 vocab.json, with merges.txt beside it (for NAME-vocab.json, the file
  //    NAME-merges.txt), merges.txt optionally starting with a "#version" line;
  //  - a directory holding tokenizer.json, or else vocab.json and merges.txt.
  // Throws llmft::Error naming the file and what is wrong with it: missing files, bad
  // JSON, a merge of symbols the vocabulary lacks, a vocabulary without the 256 byte
  // symbols or without an end-of-text token, or tokenizer.json components this class
  // does not implement (and so could not match `tokenizers` on).
  explicit BpeTokenizer(const std::string& path);
  // The same from files already read. REQUIRES: files.kind == BpeFiles::Kind::byte_level
  BpeTokenizer(const std::string& path, const BpeFiles& files);

  // Renders end-of-text as "\n", as ByteTokenizer does, so samples that run past the end
  // of a document read as a new paragraph; other added tokens as their text, the others
  // as the bytes their symbols stand for.
  // REQUIRES: every token is an id of the vocabulary.
  std::string decode(const std::vector<int32_t>& tokens) const override;

 private:
  struct Workspace;
  using PretokenEnd = size_t (*)(std::string_view text, size_t begin);

  std::vector<int32_t> encode_into(std::string_view text,
                                   std::vector<size_t>* starts) const override;
  // Encodes the pretokens of `text`, a piece of the text at `offset` with `added_bytes`
  // (add_prefix_space's " ") in front that are not in the text; with `starts`, records
  // the byte of the text where each token begins.
  void encode_pretokens(std::string_view text, Workspace& workspace, std::vector<int32_t>& tokens,
                        std::vector<size_t>* starts, size_t offset, size_t added_bytes) const;
  void encode_word(std::string_view word, Workspace& workspace, std::vector<int32_t>& tokens,
                   std::vector<size_t>* first_bytes) const;

  std::array<int32_t, 256> byte_tokens_{};  // the token of each byte's symbol
  std::vector<std::string> token_bytes_;    // by id: the bytes it decodes to
  PretokenEnd pretoken_end_;
  bool ignore_merges_ = false;
  bool add_prefix_space_ = false;  // ByteLevel's option: " " before text not starting so
};

}  // namespace llmft::io
