// AddedTokens: the literal tokens of a Hugging Face tokenizer (tokenizer.json's
// added_tokens, such as "<|endoftext|>" or "<s>"), which `tokenizers` cuts out of the
// text before normalizing and pre-tokenizing the pieces between them. A match is the
// leftmost occurrence of any of them, the longest of those starting there.
// Immutable once built; safe to share between threads.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace llmft::io {

class AddedTokens {
 public:
  struct Token {
    std::string text;
    int32_t id;
  };

  void add(std::string text, int32_t id) { tokens_.push_back({std::move(text), id}); }

  // Calls on_piece(piece, offset) for each stretch of `text` between added tokens (also
  // empty ones: before the first, between two adjacent, after the last; offset is where
  // the piece starts in `text`) and on_token(id) for each added token, in text order.
  void split(std::string_view text,
             const std::function<void(std::string_view piece, size_t offset)>& on_piece,
             const std::function<void(int32_t id)>& on_token) const;

 private:
  std::vector<Token> tokens_;
};

}  // namespace llmft::io
