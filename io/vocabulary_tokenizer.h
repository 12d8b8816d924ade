// VocabularyTokenizer: what the two BPE tokenizers read from a model's files share (the
// byte-level one, io/bpe_tokenizer.h, and the SentencePiece-style one,
// io/sentencepiece_bpe.h): the file's path, its vocabulary with the special and added
// tokens (io/bpe_vocabulary.h), and encode with or without offsets through one
// encode_into of their own.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "io/bpe_files.h"
#include "io/bpe_vocabulary.h"
#include "io/tokenizer.h"

namespace llmft::io {

class VocabularyTokenizer : public Tokenizer {
 public:
  std::string name() const override { return "bpe:" + path_; }
  int vocab_size() const override { return vocabulary_.vocab_size(); }
  int32_t eot_token() const override { return vocabulary_.special.end_of_document; }
  std::optional<int32_t> bos_token() const override { return vocabulary_.special.bos; }
  bool is_added_token(int32_t token) const override {
    return vocabulary_.has_token(token) && vocabulary_.added[token];
  }

  std::vector<int32_t> encode(std::string_view text) const override {
    return encode_into(text, nullptr);
  }
  std::vector<int32_t> encode_with_offsets(std::string_view text,
                                           std::vector<size_t>& starts) const override {
    starts.clear();
    return encode_into(text, &starts);
  }
  std::vector<int32_t> encode_with_special_tokens(std::string_view text) const override {
    return vocabulary_.with_special_tokens(encode(text));
  }

 protected:
  VocabularyTokenizer(const std::string& path, const BpeFiles& files)
      : path_(path), vocabulary_(files) {}
  // encode() and encode_with_offsets(); `starts` is null for encode().
  virtual std::vector<int32_t> encode_into(std::string_view text,
                                           std::vector<size_t>* starts) const = 0;

  std::string path_;
  BpeVocabulary vocabulary_;
};

}  // namespace llmft::io
