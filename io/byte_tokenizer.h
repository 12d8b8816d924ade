// ByteTokenizer: every byte of UTF-8 text is one token (bytes 0..255 are tokens
// 0..255), and token 256 is end-of-text, so vocab_size() is 257. Needs no vocabulary
// files and round-trips any text exactly. Immutable; safe to share between threads.
#pragma once

#include "io/tokenizer.h"

namespace llmft::io {

class ByteTokenizer final : public Tokenizer {
 public:
  static constexpr int32_t kEndOfText = 256;

  std::string name() const override { return "byte"; }
  int vocab_size() const override { return kEndOfText + 1; }
  int32_t eot_token() const override { return kEndOfText; }

  std::vector<int32_t> encode(std::string_view text) const override;
  std::vector<int32_t> encode_with_offsets(std::string_view text,
                                           std::vector<size_t>& starts) const override;
  // Renders end-of-text as "\n", so generated samples that run past the end of a
  // document read as a new paragraph rather than gluing two documents together.
  // REQUIRES: every token is in [0, 256].
  std::string decode(const std::vector<int32_t>& tokens) const override;
};

}  // namespace llmft::io
