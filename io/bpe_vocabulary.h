// BpeVocabulary: the tables a BPE tokenizer builds from its BpeFiles, the same for the
// byte-level and the SentencePiece-style kind: the id of each vocabulary string, the
// string of each id, the merges between ids, the added tokens and the special tokens.
// Checks that the files agree with each other (ids number the tokens from 0, no id twice,
// merges join known strings into a known string), naming the file and the entry.
// Immutable after construction; safe to share between threads.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "io/added_tokens.h"
#include "io/bpe_files.h"
#include "io/bpe_merges.h"
#include "io/tokenizer_config.h"

namespace llmft::io {

struct BpeVocabulary {
  explicit BpeVocabulary(const BpeFiles& files);

  // The id of the vocabulary string `text` (model.vocab, not added tokens), or nullopt.
  std::optional<int32_t> id_of(const std::string& text) const;
  int vocab_size() const { return static_cast<int>(texts.size()); }
  // True if `token` is an id that names a token.
  bool has_token(int32_t token) const {
    return token >= 0 && token < vocab_size() && texts[token].has_value();
  }
  // `tokens` between the special tokens the tokenizer adds around a text.
  std::vector<int32_t> with_special_tokens(std::vector<int32_t> tokens) const;

  std::unordered_map<std::string, int32_t> ids;   // vocabulary string -> id
  std::vector<std::optional<std::string>> texts;  // by id: vocabulary string or added text
  std::vector<bool> added;                        // by id: an added token (matched verbatim)
  BpeMerges merges;
  AddedTokens added_tokens;
  SpecialTokens special;
};

}  // namespace llmft::io
