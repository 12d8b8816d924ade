// BpeFiles: what the files of a GPT-2-style byte-level BPE tokenizer say (vocabulary,
// merges, literal tokens, options), read from a Hugging Face tokenizer.json or from GPT-2's
// vocab.json + merges.txt. Reading checks each file's format and refuses the tokenizer.json
// options BpeTokenizer does not implement; whether the parts agree with each other (ids,
// merges of known symbols) is left to BpeTokenizer, which builds its tables from them.
// Stateless; safe to call from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace llmft::io {

// The text of GPT-2's end-of-text token, which llmft puts between documents.
inline constexpr char kEndOfTextToken[] = "<|endoftext|>";

struct BpeFiles {
  struct MergeRule {
    std::string left, right;
    size_t where;  // line of merges.txt, or index in tokenizer.json's model.merges
  };
  std::vector<std::pair<std::string, int64_t>> vocab;  // vocabulary string, id
  std::string vocab_origin;       // "FILE" or "FILE: model.vocab", for messages
  std::vector<MergeRule> merges;  // lowest rank first
  std::string merges_file;
  bool merges_in_json = false;
  // Matched verbatim in the text, before pre-tokenization: tokenizer.json's added_tokens,
  // or a vocab.json's end-of-text token.
  std::vector<std::pair<std::string, int64_t>> added_tokens;  // text, id
  bool add_prefix_space = false;  // ByteLevel's option: " " before text not starting so

  // Where `rule` is written, for messages: 'FILE line N ("a b")' or
  // 'FILE: model.merges[N] ("a b")'.
  std::string merge_origin(const MergeRule& rule) const;
};

// Reads the tokenizer files at `path`, as BpeTokenizer's constructor documents them: a
// tokenizer.json, a vocab.json with its merges.txt, or a directory holding either.
// Throws llmft::Error naming the file and what is wrong with it.
BpeFiles read_bpe_files(const std::string& path);

}  // namespace llmft::io
