// BpeTokenizer: GPT-2-style byte-level BPE, read from the files a model ships with, so
// that text is tokenized exactly as Hugging Face `tokenizers` tokenizes it for that model.
//
// Encoding: text is first cut at the tokenizer's literal tokens (the end-of-text token
// "<|endoftext|>" and any other added_tokens of tokenizer.json), which become their ids,
// as `tokenizers` does; each piece between them is split into pre-tokens by GPT-2's regex
// (gpt2_pretoken_end, io/gpt2_pretokenizer.h), each pre-token's bytes become the symbols
// of GPT-2's bytes_to_unicode table, and merges are applied lowest rank first. Every byte
// has a symbol, so any text encodes, invalid UTF-8 included, and
// decode(encode(text)) == text.
//
// Immutable after construction; safe to share between threads.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "io/gpt2_pretokenizer.h"  // gpt2_pretoken_end, part of this API
#include "io/tokenizer.h"

namespace llmft::io {

class BpeTokenizer final : public Tokenizer {
 public:
  // `path` is one of:
  //  - a Hugging Face tokenizer.json whose model is BPE ("merges" as "a b" strings or
  //    ["a", "b"] pairs) with the ByteLevel pre-tokenizer, and no normalizer;
  //  - a GPT-2 vocab.json, with merges.txt beside it (for NAME-vocab.json, the file
  //    NAME-merges.txt), merges.txt optionally starting with a "#version" line;
  //  - a directory holding tokenizer.json, or else vocab.json and merges.txt.
  // Throws llmft::Error naming the file and what is wrong with it: missing files, bad
  // JSON, a merge of symbols the vocabulary lacks, a vocabulary without the 256 byte
  // symbols or without "<|endoftext|>", or tokenizer.json options this class does not
  // implement (and so could not match `tokenizers` on).
  explicit BpeTokenizer(const std::string& path);

  std::string name() const override { return "bpe:" + path_; }
  int vocab_size() const override { return static_cast<int>(token_bytes_.size()); }
  int32_t eot_token() const override { return eot_token_; }

  std::vector<int32_t> encode(std::string_view text) const override;
  // Renders end-of-text as "\n", as ByteTokenizer does, so samples that run past the end
  // of a document read as a new paragraph; other literal tokens as their text.
  // REQUIRES: every token is an id of the vocabulary.
  std::string decode(const std::vector<int32_t>& tokens) const override;

 private:
  struct Merge {
    int32_t rank;    // position in the merges list; lower merges first
    int32_t merged;  // the token the pair becomes
  };
  struct LiteralToken {
    std::string text;
    int32_t token;
  };
  struct Workspace;

  void encode_pretokens(std::string_view text, Workspace& workspace,
                        std::vector<int32_t>& tokens) const;
  void encode_word(std::string_view word, Workspace& workspace, std::vector<int32_t>& tokens) const;
  const Merge* find_merge(int32_t left, int32_t right) const;

  std::string path_;
  std::array<int32_t, 256> byte_tokens_{};               // the token of each byte's symbol
  std::unordered_map<uint64_t, Merge> merges_;           // key: left << 32 | right
  std::vector<std::optional<std::string>> token_bytes_;  // by id; nullopt: unused id
  std::vector<LiteralToken> literal_tokens_;
  int32_t eot_token_ = -1;
  bool add_prefix_space_ = false;  // ByteLevel's option: " " before text not starting so
};

}  // namespace llmft::io
