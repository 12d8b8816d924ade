// BpeFiles: what the files of a BPE tokenizer say (vocabulary, merges, literal tokens,
// pipeline, special tokens), read from a Hugging Face tokenizer.json (GPT-2 or Llama 3
// byte-level BPE, or Llama 2 / Mistral SentencePiece-style BPE) or from GPT-2's
// vocab.json + merges.txt. Reading checks each file's format and refuses, naming the file
// and the component, the tokenizer.json components llmft does not implement; whether the
// parts agree with each other (ids, merges of known symbols) is left to the tokenizers
// (BpeTokenizer, SentencePieceBpeTokenizer), which build their tables from them.
// Stateless; safe to call from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "io/tokenizer_config.h"

namespace llmft::io {

struct BpeFiles {
  // How text becomes the symbols that merges join, and tokens text again.
  enum class Kind {
    byte_level,     // GPT-2, Llama 3: bytes as GPT-2's byte symbols; ByteLevel decoder
    sentencepiece,  // Llama 2, Mistral: "\u2581" for spaces, characters as symbols
  };
  // byte_level: the regex that cuts text into pre-tokens.
  enum class Split { gpt2, llama3 };
  // sentencepiece: where a "\u2581" goes before each piece of text between added tokens.
  enum class SpacePrefix {
    always,               // normalizer Prepend: before every non-empty piece
    unless_marked,        // Metaspace "always": unless it starts with "\u2581"
    first_unless_marked,  // Metaspace "first": only the text's start, unless marked
    never,                // Metaspace "never"
  };
  // sentencepiece: the decoder.
  enum class SpaceDecoder {
    fuse_and_strip,  // Sequence[Replace "\u2581" -> " ", ByteFallback, Fuse, Strip 1 " "]
    metaspace,       // Metaspace: "\u2581" -> " ", dropped in the first token
    metaspace_keep,  // Metaspace with prepend_scheme "never": "\u2581" -> " " everywhere
  };

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

  Kind kind = Kind::byte_level;
  Split split = Split::gpt2;
  bool ignore_merges = false;  // a word that is a token is that token, unmerged
  SpacePrefix space_prefix = SpacePrefix::always;
  SpaceDecoder space_decoder = SpaceDecoder::fuse_and_strip;
  bool byte_fallback = false;  // a character not in the vocabulary: its bytes' <0xNN>
  bool fuse_unk = false;       // adjacent unknown characters: one unk token
  std::string unk_token;       // "" for none: unknown characters are dropped
  SpecialTokens special;

  // Where `rule` is written, for messages: 'FILE line N ("a b")' or
  // 'FILE: model.merges[N] ("a b")'.
  std::string merge_origin(const MergeRule& rule) const;
};

// Reads the tokenizer files at `path`: a tokenizer.json (with tokenizer_config.json beside
// it, if any), a vocab.json with its merges.txt, or a directory holding either.
// Throws llmft::Error naming the file and what is wrong with it.
BpeFiles read_bpe_files(const std::string& path);

}  // namespace llmft::io
